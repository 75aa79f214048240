//! MH folders (nmh, mh-e, Sylpheed, Claws Mail): a directory per folder, one file per message
//! named by its number (`1`, `2`, …); sub-folders are sub-directories. Files whose names are
//! not numbers are not messages: `.mh_sequences`, and `,12` or `#12`, which is how MH keeps a
//! deleted message until it is purged. Hand-written: no crate reads MH, and it is a listing.

use std::path::{Path, PathBuf};

use super::walk::Visit;

/// The file that marks an MH folder (nmh writes it once a sequence exists).
pub const SEQUENCES: &str = ".mh_sequences";

/// Whether `dir` is marked as an MH folder.
pub fn is_mh_folder(dir: &Path) -> bool {
    dir.join(SEQUENCES).is_file()
}

/// The message files of the MH folder `dir`, in message-number order, and warnings for what
/// could not be listed.
pub fn messages(dir: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let mut numbered: Vec<(u64, PathBuf)> = Vec::new();
    let mut warnings = Vec::new();
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            for entry in entries {
                match entry {
                    Ok(e) => {
                        let name = e.file_name().to_string_lossy().into_owned();
                        let Ok(n) = name.parse::<u64>() else { continue };
                        if name.bytes().all(|b| b.is_ascii_digit()) && e.path().is_file() {
                            numbered.push((n, e.path()));
                        }
                    }
                    Err(e) => warnings.push(format!("{}: {e}", dir.display())),
                }
            }
        }
        Err(e) => warnings.push(format!(
            "{}: {e}; its messages were not read",
            dir.display()
        )),
    }
    numbered.sort();
    (numbered.into_iter().map(|(_, p)| p).collect(), warnings)
}

/// The folders of an MH store at `root` (every non-hidden directory below it, at any depth):
/// `(label, folder)` pairs sorted by label, `inbox` (any case, at the top) with no label.
pub fn folders(root: &Path) -> (Vec<(Option<String>, PathBuf)>, Vec<String>) {
    super::walk::folders(root, None, |_, name, _| {
        if crate::text::left_out::is_left_out(std::ffi::OsStr::new(name)) {
            Visit::Skip
        } else {
            Visit::Enter {
                level: name.to_string(),
                list: true,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_files_in_number_order_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "inbox/1",
            "lists/10",
            "lists/9",
            "lists/,3",
            "lists/#4",
            "lists/.mh_sequences",
            "lists/rust/1",
            "lists/notes.txt",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        let (found, _) = folders(root);
        let labels: Vec<Option<&str>> = found.iter().map(|(l, _)| l.as_deref()).collect();
        assert_eq!(labels, [None, Some("lists"), Some("lists/rust")]);
        std::os::unix::fs::symlink(root, root.join("lists/loop")).unwrap();
        let (again, warnings) = folders(root);
        assert_eq!(again.len(), 3, "the link back up is not a folder");
        assert!(warnings[0].contains("symbolic link loop"), "{warnings:?}");
        let (msgs, _) = messages(&root.join("lists"));
        let names: Vec<_> = msgs
            .iter()
            .map(|s| s.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["9", "10"]);
    }
}
