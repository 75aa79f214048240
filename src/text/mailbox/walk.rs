//! The folder walk Maildir and MH stores share: every directory below a store's root, depth
//! first, each listed as a folder or entered or both as the format says; a symbolic link back
//! to a directory already walked is warned about and not followed, an unreadable directory is
//! warned about and skipped. Labels join the levels with `/`; a top-level folder called `inbox`
//! (any case) is the inbox and has no label.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What the walk does with a directory below the root.
pub enum Visit {
    /// Neither listed nor entered.
    Skip,
    /// Listed as a folder with this label, not entered (Maildir++ dot folders).
    List(String),
    /// Entered, with this name as its level in the labels below it, and also listed when
    /// `list` (after the check for a link back up the tree).
    Enter { level: String, list: bool },
}

/// The `(label, folder)` pairs below `root` as `visit(path, name, levels above)` decides,
/// sorted by label then path, after `first` (the root itself, when it is a folder).
pub fn folders(
    root: &Path,
    first: Option<(Option<String>, PathBuf)>,
    mut visit: impl FnMut(&Path, &str, &[String]) -> Visit,
) -> (Vec<(Option<String>, PathBuf)>, Vec<String>) {
    let mut out: Vec<(Option<String>, PathBuf)> = first.into_iter().collect();
    let mut warnings = Vec::new();
    let mut walk = vec![(root.to_path_buf(), Vec::<String>::new())];
    // Directories already walked, by their real path: a link back up the tree is not followed.
    let mut seen = BTreeSet::new();
    let looped = |path: &Path, warnings: &mut Vec<String>| {
        warnings.push(format!(
            "{}: symbolic link loop, not followed",
            path.display()
        ));
    };
    while let Some((dir, names)) = walk.pop() {
        if !seen.insert(std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone())) {
            looped(&dir, &mut warnings);
            continue;
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                warnings.push(format!("{}: {e}; its folders were not read", dir.display()));
                continue;
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if !path.is_dir() {
                continue;
            }
            match visit(&path, &name, &names) {
                Visit::Skip => {}
                Visit::List(label) => out.push((Some(label), path)),
                Visit::Enter { level, list } => {
                    if std::fs::canonicalize(&path).is_ok_and(|real| seen.contains(&real)) {
                        looped(&path, &mut warnings);
                        continue;
                    }
                    let mut label = names.clone();
                    label.push(level);
                    if list {
                        let inbox = names.is_empty() && name.eq_ignore_ascii_case("inbox");
                        out.push(((!inbox).then(|| label.join("/")), path.clone()));
                    }
                    walk.push((path, label));
                }
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    (out, warnings)
}
