//! The layers of `src/` (see the crate docs), read from the imports: no module uses a module of a
//! higher layer, and the pipeline's stage files do not use each other in a circle. Comments are
//! skipped (a module doc may name what it must not use).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lowest first; the foundation (error, features, progress) may be used by every layer.
const LAYERS: &[(&str, usize)] = &[
    ("error", 0),
    ("features", 0),
    ("progress", 0),
    ("text", 1),
    ("learn", 2),
    ("model", 3),
    ("integrations", 4),
    ("jobs", 5),
    ("experiment", 6),
    ("serve", 6),
];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without its comments (line comments only: the crate has no block ones).
fn code(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::NAME` in `text`.
fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `with_crate::`
        }
        let names: Vec<String> = match rest.strip_prefix('{') {
            // `crate::{a::b, c}`
            Some(group) => group[..group.find('}').unwrap()]
                .split(',')
                .map(|p| p.trim().split("::").next().unwrap().to_string())
                .filter(|n| !n.is_empty())
                .collect(),
            None => vec![rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()],
        };
        for name in names {
            out.insert(match name.as_str() {
                "Error" | "Result" => "error".to_string(),
                _ => name,
            });
        }
    }
    out
}

#[test]
fn no_module_uses_a_higher_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    for path in &files {
        let relative = path.strip_prefix(&src).unwrap();
        let top = relative.components().next().unwrap().as_os_str();
        let top = top.to_str().unwrap().trim_end_matches(".rs");
        if ["lib", "main", "cli"].contains(&top) {
            continue;
        }
        let own = rank(top).unwrap_or_else(|| panic!("{top} is in no layer"));
        for used in crate_paths(&code(path)) {
            let theirs = rank(&used).unwrap_or_else(|| panic!("{used} is in no layer"));
            if theirs > own {
                wrong.push(format!("{}: {top} uses {used}", relative.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn the_library_has_no_command_line() {
    let lib = code(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"));
    assert!(
        !lib.contains("mod cli"),
        "src/lib.rs declares the cli module"
    );
}

/// The library's modules as a graph of their imports (`crate::…` and `super::…` paths, test
/// modules left out, and a folder's `mod.rs` not counted as using its own children, which it
/// declares), without cycles: the config-to-stage factories, for one, live above the stages.
#[test]
fn no_circles_between_modules() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // Module path ("text::pipeline::ascii") → its file's code without tests.
    let mut modules: BTreeMap<String, String> = BTreeMap::new();
    for path in &files {
        let relative = path.strip_prefix(&src).unwrap().with_extension("");
        let mut parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_str().unwrap().to_string())
            .collect();
        if ["lib", "main", "cli"].contains(&parts[0].as_str()) {
            continue;
        }
        if parts.last().unwrap() == "mod" {
            parts.pop();
        }
        let text = code(path);
        let text = match text.find("#[cfg(test)]\nmod tests") {
            Some(i) => text[..i].to_string(),
            None => text,
        };
        modules.insert(parts.join("::"), text);
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, text) in &modules {
        let own: Vec<&str> = name.split("::").collect();
        let mut uses = BTreeSet::new();
        // A path's longest prefix that is a module.
        let mut resolve = |parts: Vec<&str>| {
            for k in (1..=parts.len()).rev() {
                let candidate = parts[..k].join("::");
                if modules.contains_key(&candidate) {
                    uses.insert(candidate);
                    return;
                }
            }
        };
        let words = |rest: &str| -> Vec<String> {
            rest.split("::")
                .map(|w| {
                    w.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
                .take_while(|w| !w.is_empty())
                .collect()
        };
        for (i, _) in text.match_indices("crate::") {
            if text[..i]
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            {
                continue;
            }
            let path = words(&text[i + "crate::".len()..]);
            resolve(path.iter().map(String::as_str).collect());
        }
        for (i, _) in text.match_indices("super::") {
            if text[..i].ends_with("super::") {
                continue; // counted from the first `super::`
            }
            let mut rest = &text[i..];
            let mut up = 0;
            while let Some(r) = rest.strip_prefix("super::") {
                rest = r;
                up += 1;
            }
            // `super` is the module's parent, for a file and a folder's `mod.rs` alike.
            let keep = own.len().saturating_sub(up);
            let mut path: Vec<String> = own[..keep].iter().map(|s| s.to_string()).collect();
            path.extend(words(rest));
            resolve(path.iter().map(String::as_str).collect());
        }
        uses.remove(name);
        // A folder's module declares its children: not a use.
        uses.retain(|u| !u.starts_with(&format!("{name}::")));
        graph.insert(name.clone(), uses);
    }
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if done.contains(node) {
            return;
        }
        if let Some(i) = path.iter().position(|n| n == node) {
            panic!("a circle: {:?} -> {node}", &path[i..]);
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            visit(next, graph, path, done);
        }
        path.pop();
        done.insert(node.to_string());
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        visit(node, &graph, &mut Vec::new(), &mut done);
    }
    // The pipeline's stage files use no configuration: the factories are above them.
    for stage in [
        "filter",
        "stem",
        "stopwords",
        "tokenizer",
        "subword",
        "ascii",
    ] {
        let uses = &graph[&format!("text::pipeline::{stage}")];
        assert!(
            !uses.contains("text::pipeline::config"),
            "{stage} uses the stage factories"
        );
    }
}

/// The README's Rust example is the crate doc's first example (which `cargo test --doc` runs),
/// without the doctest's hidden lines.
#[test]
fn the_readme_example_is_the_doctest() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let doc: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    let start = doc.iter().position(|l| *l == "```").unwrap() + 1;
    let end = start + doc[start..].iter().position(|l| *l == "```").unwrap();
    let example: Vec<&str> = doc[start..end]
        .iter()
        .copied()
        .filter(|l| !l.starts_with("# "))
        .collect();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let block = readme
        .split("```rust\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .unwrap();
    assert_eq!(block.lines().collect::<Vec<_>>(), example);
}
