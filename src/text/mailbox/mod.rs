//! Mail stores as corpora: a Maildir or Maildir++ store, a directory of mbox files, or MH
//! folders, each read as folders of messages whose names become labels, so that a user's
//! sorted mail trains a router as it is, and an unsorted mailbox is labelled message by
//! message.
//!
//! [`maildir`], [`mbox`] and [`mh`] read one format each; [`detect`] tells which one a
//! directory is; [`read_store`] lists a store's folders and their messages as
//! [`Source`]s, read only when they are featurised. Label names use
//! `/` between levels whatever the store writes (`.Work.Projects`, `Work.sbd/Projects`,
//! `Work/Projects` are all `Work/Projects`); the inbox (a Maildir++ root, or a top-level folder
//! called `inbox` in any case) has no label of its own: the caller decides whether it is one.
//! An mbox of Gmail's export ([`gmail`]) is read as the folders its messages' labels name.

pub mod gmail;
pub mod maildir;
pub mod mbox;
pub mod mh;
mod walk;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::text::line_files;
use crate::text::source::Source;

/// How a corpus directory is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `ROOT/<label>/**/<file>`: a folder per label, a file per document.
    Files,
    /// A Maildir++ store (`ROOT/{cur,new}` the inbox, `ROOT/.Folder.Sub/{cur,new}`) or one
    /// Maildir per folder (`ROOT/Folder/Sub/{cur,new}`).
    Maildir,
    /// One mbox file per label (`ROOT/Folder`, Thunderbird's `ROOT/Folder.sbd/Sub`).
    Mbox,
    /// MH folders: `ROOT/folder/sub/` with numbered message files.
    Mh,
    /// One file of labelled rows (fastText lines, TSV, CSV; [`crate::text::rows`]), each row a
    /// document.
    Rows,
    /// A file per label with a line per document ([`crate::text::line_files`]:
    /// `rt-polarity.pos`, `rt-polarity.neg`).
    Lines,
}

impl Layout {
    /// What a root of this layout looks like, for messages that say what was expected.
    pub fn expected(self) -> &'static str {
        match self {
            Layout::Files => "a folder per label with a file per document, ROOT/<label>/<file>",
            Layout::Maildir => {
                "Maildir folders, ROOT/.<Folder>/{cur,new}/ (Maildir++, the root being the inbox) or ROOT/<Folder>/{cur,new}/"
            }
            Layout::Mbox => {
                "an mbox file per label, ROOT/<label> (Thunderbird: ROOT/<Parent>.sbd/<label>)"
            }
            Layout::Mh => "MH folders with numbered message files, ROOT/<folder>/1, 2, …",
            Layout::Rows => {
                "one file of labelled rows: `__label__LABEL text` lines (fastText), LABEL<tab>TEXT, or CSV with a label column"
            }
            Layout::Lines => {
                "a file per label with a line per document, ROOT/<label>.txt (rt-polarity.pos, rt-polarity.neg)"
            }
        }
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layout::Files => "files",
            Layout::Maildir => "maildir",
            Layout::Mbox => "mbox",
            Layout::Mh => "mh",
            Layout::Rows => "rows",
            Layout::Lines => "lines",
        })
    }
}

/// Which layout `root` has, judged from its top level:
/// * **maildir** when the root or a directory right below it has `cur/` and `new/`;
/// * **mbox** when the root is an mbox file, or holds mbox files (first line a `From `
///   separator) and nothing else (no other files, no directories but Thunderbird's `*.sbd` and
///   Apple Mail's `*.mbox`, and Google Takeout's `User Settings` beside Gmail's export), or
///   holds mbox files and Thunderbird's marks (a `*.msf` summary or
///   a `*.sbd` directory) beside other files. A folder-per-label corpus of mails that start
///   with `From ` lines has label directories, so it stays **files**, and a folder of mail
///   files of which some have no `From ` line stays **files** too (read as mbox, those would
///   be left out). Nested mutt folders need `--layout mbox`;
/// * **mh** when a directory right below the root has a `.mh_sequences` file (MH folders
///   without one read the same as files, except for nesting);
/// * **lines** when it holds only files, two or more (notices such as a README aside), at
///   most [`line_files::MAX_LABEL_FILES`], named like labels
///   ([`line_files::names_look_like_labels`]), each a label's documents a line each
///   ([`line_files::is_document_lines`]: text, not mail, not labelled rows);
/// * **files** otherwise.
pub fn detect(root: &Path) -> Layout {
    if root.is_file() {
        // A file is an mbox, or else rows (which says what it expected when it is neither).
        return if mbox::looks_like_mbox(root) {
            Layout::Mbox
        } else {
            Layout::Rows
        };
    }
    if maildir::is_maildir(root) {
        return Layout::Maildir;
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return Layout::Files;
    };
    // Names and types first (cheap); file contents only when they can decide.
    let (mut files, mut other_dirs) = (Vec::new(), 0);
    let (mut thunderbird, mut mh) = (false, false);
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let left_out = crate::text::left_out::is_left_out(&entry.file_name());
        if path.is_dir() {
            if maildir::is_maildir(&path) {
                return Layout::Maildir;
            }
            mh |= mh::is_mh_folder(&path);
            thunderbird |= name.ends_with(".sbd");
            if !left_out
                && !name.ends_with(".sbd")
                && !name.ends_with(".mbox")
                && name != gmail::SETTINGS_FOLDER
            {
                other_dirs += 1;
            }
        } else if !left_out && path.is_file() {
            if name.ends_with(".msf") {
                thunderbird = true;
            } else {
                files.push(path);
            }
        }
    }
    if mh {
        return Layout::Mh;
    }
    if thunderbird {
        // Thunderbird's folder: its other files (popstate.dat, filter rules) do not count.
        return if files.iter().any(|f| mbox::looks_like_mbox(f)) {
            Layout::Mbox
        } else {
            Layout::Files
        };
    }
    if other_dirs > 0 || files.is_empty() {
        return Layout::Files;
    }
    // Only files: mbox files when every one is (an empty file is an empty mbox); the first that
    // is not ends the look.
    let mut any = false;
    for f in &files {
        if mbox::looks_like_mbox(f) {
            any = true;
        } else if std::fs::metadata(f).is_ok_and(|m| m.len() > 0) {
            return if is_line_files(&files) {
                Layout::Lines
            } else {
                Layout::Files
            };
        }
    }
    if any {
        Layout::Mbox
    } else {
        Layout::Files
    }
}

/// Whether the files at a folder's top are a file per label with a line per document.
fn is_line_files(files: &[PathBuf]) -> bool {
    // An empty file is an empty label (the scan says so), not a sign of another layout.
    let labelled: Vec<PathBuf> = files
        .iter()
        .filter(|f| !line_files::is_notice(f))
        .filter(|f| std::fs::metadata(f).is_ok_and(|m| m.len() > 0))
        .cloned()
        .collect();
    (2..=line_files::MAX_LABEL_FILES).contains(&labelled.len())
        && line_files::names_look_like_labels(&line_files::label_names(&labelled))
        && labelled.iter().all(|f| line_files::is_document_lines(f))
}

/// One folder of a store.
#[derive(Debug, Clone)]
pub struct Folder {
    /// Its label (`Work/Projects`); `None` for the inbox.
    pub label: Option<String>,
    /// The folder (Maildir, MH) or file (mbox).
    pub path: PathBuf,
    pub messages: Vec<Source>,
}

/// A store's folders and what could not be read.
#[derive(Debug, Clone, Default)]
pub struct Store {
    /// The folders with messages.
    pub folders: Vec<Folder>,
    /// What could not be read.
    pub warnings: Vec<String>,
    /// The folders without messages (left out of `folders`).
    pub empty: Vec<Folder>,
}

impl Store {
    /// Every warning, one for each empty folder last: what `train`, `eval` and `label` show.
    /// (`learn --from-store` shows only [`Store::warnings`]: an emptied folder is a sorted one.)
    pub fn all_warnings(&self) -> Vec<String> {
        let empty = self.empty.iter().map(|folder| {
            format!(
                "{}: no messages, folder {} ignored",
                folder.path.display(),
                folder
                    .label
                    .as_deref()
                    .map_or("(the inbox)".to_string(), |l| format!("{l:?}"))
            )
        });
        self.warnings.iter().cloned().chain(empty).collect()
    }
}

/// Lists the folders and messages of the store at `root` read as `layout` (not
/// [`Layout::Files`], which the corpus scanner walks itself). Folders without messages are left
/// out ([`Store::empty`]); an unreadable folder or message is a warning, not an error.
pub fn read_store(root: &Path, layout: Layout) -> Result<Store> {
    std::fs::metadata(root).map_err(|e| Error::io(root, e))?;
    let mut store = Store::default();
    let folders = match layout {
        Layout::Files | Layout::Rows | Layout::Lines => {
            return Err(Error::InvalidSetting(format!(
                "{}: read as {layout}, which is no mail store (give a Maildir, mbox or MH store)",
                root.display()
            )))
        }
        Layout::Maildir => {
            let (folders, warnings) = maildir::folders(root);
            store.warnings.extend(warnings);
            folders
                .into_iter()
                .map(|(label, path)| {
                    let (files, w) = maildir::messages(&path);
                    store.warnings.extend(w);
                    let messages = files.into_iter().map(Source::maildir_message).collect();
                    Folder {
                        label,
                        path,
                        messages,
                    }
                })
                .collect::<Vec<_>>()
        }
        Layout::Mh => {
            let (folders, warnings) = mh::folders(root);
            store.warnings.extend(warnings);
            folders
                .into_iter()
                .map(|(label, path)| {
                    let (files, w) = mh::messages(&path);
                    store.warnings.extend(w);
                    let messages = files.into_iter().map(Source::file).collect();
                    Folder {
                        label,
                        path,
                        messages,
                    }
                })
                .collect()
        }
        Layout::Mbox => {
            use rayon::prelude::*;
            let mut folders = Vec::new();
            // The files are scanned in parallel (each is one sequential read), in order.
            let files = mbox_files(root, &mut store.warnings);
            let scans: Vec<_> = files.par_iter().map(|(_, p)| mbox::scan_file(p)).collect();
            for ((label, path), scan) in files.into_iter().zip(scans) {
                match scan {
                    Ok(scan) => {
                        store.warnings.extend(scan.warnings);
                        // Gmail's export: one mbox, each message under its own labels.
                        match gmail::split(&path, &scan.spans) {
                            Ok(Some(split)) => {
                                store.warnings.push(split.describe(&path));
                                folders.extend(split.folders.into_iter().map(|(label, spans)| {
                                    Folder {
                                        label,
                                        path: path.clone(),
                                        messages: spans
                                            .into_iter()
                                            .map(|s| Source::mbox_message(&path, s))
                                            .collect(),
                                    }
                                }));
                                continue;
                            }
                            Ok(None) => {}
                            Err(e) => {
                                store.warnings.push(format!("{e}; skipped"));
                                continue;
                            }
                        }
                        // A file of one message is that file, read whole as any mail file
                        // is: its identity stays the file, as in a folder-per-label corpus.
                        let messages = if scan.spans.len() == 1 {
                            vec![Source::file(&path)]
                        } else {
                            scan.spans
                                .into_iter()
                                .map(|s| Source::mbox_message(&path, s))
                                .collect()
                        };
                        folders.push(Folder {
                            label,
                            path,
                            messages,
                        });
                    }
                    Err(e) => store.warnings.push(format!("{e}; skipped")),
                }
            }
            folders
        }
    };
    for folder in folders {
        if folder.messages.is_empty() {
            store.empty.push(folder);
        } else {
            store.folders.push(folder);
        }
    }
    Ok(store)
}

/// The mbox files below `root` with their labels, sorted: directories are levels of the label,
/// Thunderbird's `Name.sbd` is the level `Name`, a `.mbox` extension is dropped, and Apple
/// Mail's `Name.mbox/mbox` is `Name`. Thunderbird's `.msf` summaries are skipped silently,
/// other files that are not mbox files with a warning; an empty file is an empty folder.
fn mbox_files(root: &Path, warnings: &mut Vec<String>) -> Vec<(Option<String>, PathBuf)> {
    let mut out = Vec::new();
    if root.is_file() {
        let name = root.file_stem().map(|n| n.to_string_lossy().into_owned());
        return vec![(name, root.to_path_buf())];
    }
    let walker = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !(crate::text::left_out::is_left_out(e.file_name())
                    || (e.depth() == 1
                        && e.file_type().is_dir()
                        && e.file_name() == gmail::SETTINGS_FOLDER))
        });
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                warnings.push(format!("{e}"));
                continue;
            }
        };
        let path = entry.path();
        if !entry.file_type().is_file() || path.extension().is_some_and(|e| e == "msf") {
            continue;
        }
        let Ok(relative) = path.strip_prefix(root) else {
            continue;
        };
        let empty = entry.metadata().is_ok_and(|m| m.len() == 0);
        if !empty && !mbox::looks_like_mbox(path) {
            warnings.push(format!(
                "{}: not an mbox (its first line is not a `From ` line), ignored",
                path.display()
            ));
            continue;
        }
        let mut parts: Vec<String> = relative
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let file = parts.pop().unwrap_or_default();
        let mut parts: Vec<String> = parts
            .into_iter()
            .map(|p| {
                p.strip_suffix(".sbd")
                    .or_else(|| p.strip_suffix(".mbox"))
                    .unwrap_or(&p)
                    .to_string()
            })
            .collect();
        let apple = file == "mbox"
            && relative
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|d| d.to_string_lossy().ends_with(".mbox"));
        if !apple {
            parts.push(file.strip_suffix(".mbox").unwrap_or(&file).to_string());
        }
        let inbox = parts.len() == 1 && parts[0].eq_ignore_ascii_case("inbox");
        out.push(((!inbox).then(|| parts.join("/")), path.to_path_buf()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEP: &str = "From a@b Sat Jan  3 01:05:34 1996\n";

    fn touch(root: &Path, path: &str, text: &str) {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn layouts_are_told_apart_by_their_top_level() {
        let dir = tempfile::tempdir().unwrap();
        let d = |name: &str| dir.path().join(name);
        touch(
            &d("files"),
            "spam/1.eml",
            &format!("{SEP}Subject: x\n\nx\n"),
        );
        touch(&d("files"), "ham/1.eml", "Subject: x\n\nx\n");
        touch(&d("flat"), "1.eml", &format!("{SEP}Subject: x\n\nx\n"));
        touch(&d("flat"), "2.eml", "Subject: no From line\n\nx\n");
        touch(&d("tb"), "Spam", &format!("{SEP}Subject: x\n\nx\n"));
        touch(&d("tb"), "Spam.msf", "// index");
        touch(&d("tb"), "popstate.dat", "# POP3 State File");
        touch(&d("mbox"), "Spam", &format!("{SEP}Subject: x\n\nx\n"));
        touch(&d("mbox"), "Spam.msf", "// index");
        touch(
            &d("mbox"),
            "Work.sbd/Projects",
            &format!("{SEP}Subject: x\n\nx\n"),
        );
        touch(&d("mh"), "inbox/.mh_sequences", "unseen: 1\n");
        touch(&d("mh"), "inbox/1", "Subject: x\n\nx\n");
        std::fs::create_dir_all(d("maildir/.Spam/cur")).unwrap();
        std::fs::create_dir_all(d("maildir/.Spam/new")).unwrap();
        std::fs::create_dir_all(d("empty")).unwrap();
        assert_eq!(detect(&d("files")), Layout::Files);
        assert_eq!(detect(&d("mbox")), Layout::Mbox);
        assert_eq!(detect(&d("mbox/Spam")), Layout::Mbox);
        assert_eq!(detect(&d("mh")), Layout::Mh);
        assert_eq!(detect(&d("maildir")), Layout::Maildir);
        assert_eq!(detect(&d("empty")), Layout::Files);
        assert_eq!(
            detect(&d("flat")),
            Layout::Files,
            "not every file is an mbox"
        );
        assert_eq!(
            detect(&d("tb")),
            Layout::Mbox,
            "Thunderbird's files beside its mboxes"
        );
        // Files of sentences, a label each (a README beside them is no label).
        touch(
            &d("lines"),
            "rt-polarity.neg",
            "too slow .\nsimplistic , silly and tedious .\n",
        );
        touch(
            &d("lines"),
            "rt-polarity.pos",
            "a gem .\nfunny , warm and wise .\n",
        );
        touch(
            &d("lines"),
            "README.txt",
            "Sentence polarity dataset v1.0\n\nLines: 2\n",
        );
        assert_eq!(detect(&d("lines")), Layout::Lines);
        touch(&d("lines"), "rt-polarity.neu", "");
        assert_eq!(detect(&d("lines")), Layout::Lines, "an empty label file");
        std::fs::remove_file(d("lines/rt-polarity.neu")).unwrap();
        // One file of lines is no choice of labels; files of labelled rows are rows.
        std::fs::remove_file(d("lines/rt-polarity.pos")).unwrap();
        assert_eq!(detect(&d("lines")), Layout::Files);
        touch(
            &d("lines"),
            "test.txt",
            "__label__pos a gem .\n__label__neg bad .\n",
        );
        assert_eq!(detect(&d("lines")), Layout::Files);
        // Numbered files of lines are documents (fortunes, notes), not labels.
        touch(&d("notes"), "00000.txt", "A fortune\nin two lines.\n");
        touch(&d("notes"), "00001.txt", "Another one\nalso in two.\n");
        assert_eq!(detect(&d("notes")), Layout::Files);
        // A file that is no mbox is rows, which say what they expected when it is not.
        assert_eq!(detect(&d("files/ham/1.eml")), Layout::Rows);
    }

    #[test]
    fn mbox_stores_name_folders_like_thunderbird_and_apple_mail() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let two = format!("{SEP}Subject: a\n\na\n\n{SEP}Subject: b\n\nb\n");
        touch(root, "Inbox", &two);
        touch(root, "Work", "");
        touch(root, "Work.sbd/Projects", &two);
        touch(root, "Export.mbox/mbox", &two);
        touch(root, "Export.mbox/Info.plist", "<plist/>");
        touch(
            root,
            "lists/rust.mbox",
            &format!("{SEP}Subject: one\n\none\n"),
        );
        touch(root, "Inbox.msf", "// summary");
        let store = read_store(root, Layout::Mbox).unwrap();
        let labels: Vec<Option<&str>> = store.folders.iter().map(|f| f.label.as_deref()).collect();
        assert_eq!(
            labels,
            [
                Some("Export"),
                None,
                Some("Work/Projects"),
                Some("lists/rust")
            ]
        );
        assert_eq!(store.folders[0].messages.len(), 2);
        assert!(store.folders[0].messages[1].mbox_span().is_some());
        assert!(
            store.folders[3].messages[0].is_whole_file(),
            "one message: the file"
        );
        let w = store.all_warnings().join("\n");
        assert!(w.contains("Info.plist: not an mbox"), "{w}");
        assert!(w.contains("folder \"Work\" ignored"), "{w}");
    }
}
