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

/// The pipeline's files as a graph of `super::X` and `crate::text::pipeline::X` uses, without
/// cycles (tests included: a test may use the stages it compares).
#[test]
fn the_pipeline_stages_have_no_circles() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/text/pipeline");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let names: BTreeSet<String> = files
        .iter()
        .map(|p| p.file_stem().unwrap().to_str().unwrap().to_string())
        .filter(|n| n != "mod")
        .collect();
    for path in &files {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        if name == "mod" {
            continue; // the pipeline itself, above its stages
        }
        let text = code(path);
        let uses = names
            .iter()
            .filter(|other| **other != name)
            .filter(|other| {
                text.contains(&format!("super::{other}::"))
                    || text.contains(&format!("super::{{{other}"))
                    || text.contains(&format!("pipeline::{other}::"))
                    || text.contains(&format!("super::super::{other}::"))
            })
            .cloned()
            .collect();
        graph.insert(name, uses);
    }
    // Depth-first search for a back edge.
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
    assert!(graph["filter"].is_empty() || graph["filter"] == BTreeSet::from(["ascii".into()]));
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
