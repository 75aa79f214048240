//! Maildir folders: one file per message in `cur/` (seen by a mail program) or `new/` (not yet);
//! `tmp/` holds deliveries in progress and is never read. A file name is a unique name plus,
//! in `cur/`, `:2,FLAGS` (`!2,FLAGS` where `:` cannot be in a file name); the flags change when
//! the message is read or flagged, so a message's identity is its folder and unique name.
//!
//! A store is read in both layouts mail servers write:
//! * **Maildir++** (Dovecot's default, Courier): the root is the inbox, folders are dot
//!   directories below it, `.Work.Projects` for `Work/Projects`;
//! * **one directory per folder** (Dovecot `LAYOUT=fs`, mbsync, offlineimap): `Work/Projects/`
//!   with its own `cur/ new/ tmp/`; a top-level `INBOX` (any case) is the inbox.
//!
//! Folder names with letters outside ASCII are stored in IMAP's modified UTF-7 by Dovecot and
//! Courier (`.Entw&APw-rfe` for `Entwürfe`); [`folder_name`] decodes them, so labels read as the
//! mail program shows them.
//!
//! Hand-written rather than the `maildir` crate (0BSD, passively maintained): it would bring a
//! second MIME parser (mailparse) and gethostname for what is here a directory listing, and it
//! stops silently when `cur/` cannot be read, refuses a `cur/` file without `:2,`, and does not
//! sort; a corpus needs the listing sorted and every unreadable folder reported. Its Maildir++
//! relatives `maildirs` and `maildirpp` (MIT) drop unreadable entries the same way
//! (`filter_map(|e| e.ok())`), take either Maildir++ or one-directory-per-folder but not a
//! store that has both, and do not decode modified UTF-7 names.

use std::path::{Path, PathBuf};

use super::walk::Visit;

/// The sub-folders every Maildir folder has; none of them is a mail folder of its own.
pub const SUBFOLDERS: [&str; 3] = ["cur", "new", "tmp"];

/// Whether `dir` is a Maildir folder: it has `cur/` and `new/` (`tmp/` may be missing in a
/// copy, and is not read anyway).
pub fn is_maildir(dir: &Path) -> bool {
    dir.join("cur").is_dir() && dir.join("new").is_dir()
}

/// A message file's unique name: its name without the `:2,FLAGS` (or `!2,FLAGS`) suffix.
pub fn unique_name(file_name: &str) -> &str {
    [":2,", "!2,", ":1,", "!1,"]
        .iter()
        .filter_map(|sep| file_name.rfind(sep))
        .min()
        .map_or(file_name, |i| &file_name[..i])
}

/// The message files of the Maildir folder `dir` (its `cur/` and `new/`), sorted by path; what
/// could not be listed is a warning that names it. Dot files (editor and tool leftovers) are
/// skipped.
pub fn messages(dir: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    for sub in ["cur", "new"] {
        let sub = dir.join(sub);
        let entries = match std::fs::read_dir(&sub) {
            Ok(e) => e,
            Err(e) => {
                warnings.push(format!(
                    "{}: {e}; its messages were not read",
                    sub.display()
                ));
                continue;
            }
        };
        for entry in entries {
            match entry {
                Ok(e) => {
                    let path = e.path();
                    if crate::text::left_out::is_left_out(&e.file_name()) {
                        continue;
                    }
                    // Through links, as the rest of cwtext reads folders.
                    if path.is_file() {
                        files.push(path);
                    } else if !path.is_dir() {
                        warnings.push(format!("{}: not a readable file, skipped", path.display()));
                    }
                }
                Err(e) => warnings.push(format!("{}: {e}", sub.display())),
            }
        }
    }
    files.sort();
    (files, warnings)
}

/// The folders of a Maildir store at `root`: `(label, folder)` pairs, the inbox with no label,
/// sorted by label. Maildir++ dot folders and one-directory-per-folder stores are both read
/// (see the module doc); folder names become labels with `/` between levels.
pub fn folders(root: &Path) -> (Vec<(Option<String>, PathBuf)>, Vec<String>) {
    let inbox = is_maildir(root).then(|| (None, root.to_path_buf()));
    super::walk::folders(root, inbox, |path, name, levels| {
        if SUBFOLDERS.contains(&name) {
            return Visit::Skip;
        }
        if let Some(dotted) = name.strip_prefix('.') {
            // Maildir++ folders live only at the root, flat.
            if !levels.is_empty() || !is_maildir(path) {
                return Visit::Skip;
            }
            let label: Vec<String> = dotted
                .split('.')
                .filter(|p| !p.is_empty())
                .map(folder_name)
                .collect();
            return if label.is_empty() {
                Visit::Skip
            } else {
                Visit::List(label.join("/"))
            };
        }
        Visit::Enter {
            level: folder_name(name),
            list: is_maildir(path),
        }
    })
}

/// A folder name as the mail program shows it: IMAP's modified UTF-7 (RFC 3501 §5.1.3: `&`,
/// base64 of UTF-16 with `,` for `/`, `-`; `&-` for `&`) decoded. A name that is not valid
/// modified UTF-7 (`R&D`, or a name already in UTF-8) is kept as it is.
pub fn folder_name(name: &str) -> String {
    decode_modified_utf7(name).unwrap_or_else(|| name.to_string())
}

fn decode_modified_utf7(name: &str) -> Option<String> {
    if !name.contains('&') {
        return None;
    }
    let mut out = String::new();
    let mut rest = name;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let end = after.find('-')?;
        let encoded = &after[..end];
        rest = &after[end + 1..];
        if encoded.is_empty() {
            out.push('&');
            continue;
        }
        let mut bits = 0u32;
        let mut nbits = 0;
        let mut units = Vec::new();
        for c in encoded.bytes() {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'+' => 62,
                b',' => 63,
                _ => return None,
            };
            bits = (bits << 6) | u32::from(v);
            nbits += 6;
            if nbits >= 16 {
                nbits -= 16;
                units.push((bits >> nbits) as u16);
                bits &= (1 << nbits) - 1;
            }
        }
        out.push_str(&String::from_utf16(&units).ok()?);
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_in_modified_utf7_are_decoded() {
        assert_eq!(folder_name("Entw&APw-rfe"), "Entwürfe");
        assert_eq!(folder_name("&ZeVnLIqe-"), "日本語");
        assert_eq!(folder_name("Tom &- Jerry"), "Tom & Jerry");
        assert_eq!(folder_name("R&D"), "R&D", "not modified UTF-7: kept");
        assert_eq!(folder_name("Entwürfe"), "Entwürfe");
        assert_eq!(folder_name("Spam"), "Spam");
    }

    #[test]
    fn unique_names_drop_the_flags() {
        assert_eq!(
            unique_name("1234.M5P6.host,S=100:2,RS"),
            "1234.M5P6.host,S=100"
        );
        assert_eq!(unique_name("1234.host!2,S"), "1234.host");
        assert_eq!(unique_name("1234.host"), "1234.host");
    }

    #[test]
    fn both_layouts_name_folders_with_slashes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in [
            "cur",
            "new",
            "tmp",
            ".Spam/cur",
            ".Spam/new",
            ".Work.Projects/cur",
            ".Work.Projects/new",
            ".notafolder",
            "Lists/cur",
            "Lists/new",
            "Lists/Rust/cur",
            "Lists/Rust/new",
            "INBOX/cur",
            "INBOX/new",
            "plain",
            ".Entw&APw-rfe/cur",
            ".Entw&APw-rfe/new",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("cur/1:2,S"), "x").unwrap();
        std::fs::write(root.join("new/2"), "x").unwrap();
        std::fs::write(root.join("cur/.hidden"), "x").unwrap();
        std::fs::write(root.join("tmp/3"), "x").unwrap();
        let (found, warnings) = folders(root);
        let labels: Vec<Option<&str>> = found.iter().map(|(l, _)| l.as_deref()).collect();
        assert_eq!(
            labels,
            [
                None,
                None,
                Some("Entwürfe"),
                Some("Lists"),
                Some("Lists/Rust"),
                Some("Spam"),
                Some("Work/Projects")
            ]
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        let (msgs, _) = messages(root);
        let names: Vec<String> = msgs
            .iter()
            .map(|s| s.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["cur/1:2,S", "new/2"]);
    }
}
