//! Finding documents on disk: a folder-organised corpus `ROOT/<label>/**/<file>` for training
//! and evaluation, or every file below a directory for labelling. Symbolic links to files and
//! folders are followed (a link loop is reported, not followed forever); hidden files are
//! skipped; `--include` / `--exclude` globs match the file name; the order is sorted, so every
//! run sees the same documents in the same order.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use walkdir::WalkDir;

use crate::error::{Error, Result};

/// File-name globs that choose which files a command reads.
#[derive(Debug, Clone, Default)]
pub struct FileFilter {
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
}

impl FileFilter {
    /// Builds the filter; a malformed glob is an error that names it.
    pub fn new(include: &[String], exclude: &[String]) -> Result<Self> {
        let build =
            |globs: &[String]| -> Result<Option<GlobSet>> {
                if globs.is_empty() {
                    return Ok(None);
                }
                let mut set = GlobSetBuilder::new();
                for g in globs {
                    set.add(Glob::new(g).map_err(|e| {
                        Error::InvalidSetting(format!("glob {g:?} is malformed: {e}"))
                    })?);
                }
                set.build()
                    .map(Some)
                    .map_err(|e| Error::InvalidSetting(e.to_string()))
            };
        Ok(FileFilter {
            include: build(include)?,
            exclude: build(exclude)?,
        })
    }

    /// Whether a file with this name is read.
    pub fn accepts(&self, path: &Path) -> bool {
        let Some(name) = path.file_name() else {
            return false;
        };
        self.include.as_ref().is_none_or(|g| g.is_match(name))
            && !self.exclude.as_ref().is_some_and(|g| g.is_match(name))
    }
}

/// The files below a directory, with warnings for what could not be walked.
#[derive(Debug, Default)]
pub struct FileList {
    pub files: Vec<PathBuf>,
    pub warnings: Vec<String>,
}

/// A labelled corpus: label names (sorted) and (file, label index) pairs.
#[derive(Debug, Default)]
pub struct LabelledCorpus {
    /// The corpus root the files were found under.
    pub root: PathBuf,
    pub labels: Vec<String>,
    pub files: Vec<(PathBuf, usize)>,
    pub warnings: Vec<String>,
}

fn is_hidden(name: &std::ffi::OsStr) -> bool {
    name.to_string_lossy().starts_with('.')
}

/// Every accepted file below `root` (or `root` itself when it is a file), sorted.
pub fn list_files(root: &Path, filter: &FileFilter) -> Result<FileList> {
    let mut files = Vec::new();
    let warnings = walk_files(root, filter, usize::MAX, |batch| {
        files.extend(batch);
        true
    })?;
    Ok(FileList { files, warnings })
}

/// The files of [`list_files`] in the same order, handed to `batch` in runs of at most `size`
/// as the walk finds them, so that a caller can start on the first files while the rest are
/// still being listed; `batch` returns false to stop the walk. Returns the warnings for what
/// could not be walked.
pub fn walk_files(
    root: &Path,
    filter: &FileFilter,
    size: usize,
    mut batch: impl FnMut(Vec<PathBuf>) -> bool,
) -> Result<Vec<String>> {
    let meta = std::fs::metadata(root).map_err(|e| Error::io(root, e))?;
    let mut warnings = Vec::new();
    if meta.is_file() {
        batch(vec![root.to_path_buf()]);
        return Ok(warnings);
    }
    let walker = WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !is_hidden(e.file_name()));
    let mut files = Vec::new();
    for entry in walker {
        match entry {
            Ok(e) if e.file_type().is_file() && filter.accepts(e.path()) => {
                files.push(e.into_path());
                if files.len() >= size && !batch(std::mem::take(&mut files)) {
                    return Ok(warnings);
                }
            }
            Ok(_) => {}
            Err(e) => {
                let path = e
                    .path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                let why = if e.loop_ancestor().is_some() {
                    "symbolic link loop, not followed".to_string()
                } else {
                    e.io_error()
                        .map(|io| io.to_string())
                        .unwrap_or_else(|| e.to_string())
                };
                warnings.push(format!("{path}: {why}"));
            }
        }
    }
    if !files.is_empty() {
        batch(files);
    }
    Ok(warnings)
}

/// Reads `root/<label>/**/<file>`: every sub-folder is a label.
pub fn scan_labelled(root: &Path, filter: &FileFilter) -> Result<LabelledCorpus> {
    let entries = std::fs::read_dir(root).map_err(|e| Error::io(root, e))?;
    let mut label_dirs = Vec::new();
    let mut corpus = LabelledCorpus {
        root: root.to_path_buf(),
        ..LabelledCorpus::default()
    };
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(root, e))?;
        let path = entry.path();
        if is_hidden(&entry.file_name()) {
            continue;
        }
        if path.is_dir() {
            label_dirs.push((entry.file_name().to_string_lossy().into_owned(), path));
        } else if path.is_file() {
            corpus.warnings.push(format!(
                "{}: not in a label folder, ignored",
                path.display()
            ));
        }
    }
    label_dirs.sort();
    for (name, dir) in label_dirs {
        let list = list_files(&dir, filter)?;
        corpus.warnings.extend(list.warnings);
        if list.files.is_empty() {
            corpus.warnings.push(format!(
                "{}: no documents, label {name:?} ignored",
                dir.display()
            ));
            continue;
        }
        let index = corpus.labels.len();
        corpus.labels.push(name);
        corpus
            .files
            .extend(list.files.into_iter().map(|f| (f, index)));
    }
    if corpus.files.is_empty() {
        return Err(Error::Corpus {
            path: root.to_path_buf(),
            message: "no documents found: expected ROOT/<label>/<file> (check --include/--exclude)"
                .into(),
        });
    }
    Ok(corpus)
}

/// The fixed splits of a corpus, by a hash of each file's path relative to the corpus root (the
/// frozen hash of `text::pipeline::hash`), so that they never depend on the order, the machine
/// or the run: the held-out fifth (choice and calibration in `train`, validation in `tune`) and
/// the shards (`train --shards`, `--cluster`). `tests/integration/splits.rs` pins both.
/// Which of `n` shards a file belongs to: a fixed hash of its path relative to the corpus root
/// (salted so that it is independent of the held-out fifth), the same on every machine.
pub fn shard_of(root: &Path, path: &Path, n: usize) -> usize {
    use std::hash::Hasher;
    let relative = path.strip_prefix(root).unwrap_or(path);
    let mut h = crate::text::pipeline::hash::FrozenHasher::default();
    h.write(b"shard\0");
    h.write(relative.to_string_lossy().as_bytes());
    ((h.finish() >> 32) % n.max(1) as u64) as usize
}

/// Whether a file belongs to the held-out fifth: a fixed hash of its path relative to the corpus
/// root, so the split never depends on the order, the machine or the run.
pub fn held_out(root: &Path, path: &Path) -> bool {
    use std::hash::Hasher;
    let relative = path.strip_prefix(root).unwrap_or(path);
    let mut h = crate::text::pipeline::hash::FrozenHasher::default();
    h.write(relative.to_string_lossy().as_bytes());
    // The top bits, which FxHash mixes well (see pipeline::hash).
    (h.finish() >> 32) % 5 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_file_names() {
        let f = FileFilter::new(&["train-*".into()], &["*.bak".into()]).unwrap();
        assert!(f.accepts(Path::new("x/sci/train-001.txt")));
        assert!(!f.accepts(Path::new("x/sci/test-001.txt")));
        assert!(!f.accepts(Path::new("x/sci/train-001.bak")));
        let err = FileFilter::new(&["a[".into()], &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"a[\""), "{err}");
    }

    #[test]
    fn a_walk_in_batches_lists_the_same_files_in_the_same_order_and_can_stop() {
        let dir = tempfile::tempdir().unwrap();
        for p in [
            "b/2.txt",
            "b/sub/1.txt",
            "a/1.txt",
            "a/3.txt",
            "a/.hidden",
            "c.txt",
        ] {
            let p = dir.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        let all = list_files(dir.path(), &FileFilter::default())
            .unwrap()
            .files;
        let names: Vec<_> = all
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap())
            .collect();
        let want = ["a/1.txt", "a/3.txt", "b/2.txt", "b/sub/1.txt", "c.txt"];
        assert_eq!(names, want.map(Path::new));
        let mut batches = Vec::new();
        walk_files(dir.path(), &FileFilter::default(), 2, |b| {
            batches.push(b);
            true
        })
        .unwrap();
        assert_eq!(batches.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 1]);
        assert_eq!(batches.concat(), all);
        let mut seen = 0;
        walk_files(dir.path(), &FileFilter::default(), 2, |b| {
            seen += b.len();
            false
        })
        .unwrap();
        assert_eq!(seen, 2, "the walk stops when asked");
    }

    #[test]
    fn labelled_scan_is_sorted_and_skips_hidden_and_empty() {
        let dir = tempfile::tempdir().unwrap();
        for (p, body) in [
            ("b/2.txt", "x"),
            ("b/sub/1.txt", "x"),
            ("a/1.txt", "x"),
            ("a/.hidden", "x"),
            ("loose.txt", "x"),
        ] {
            let p = dir.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        std::fs::create_dir(dir.path().join("empty")).unwrap();
        let c = scan_labelled(dir.path(), &FileFilter::default()).unwrap();
        assert_eq!(c.labels, ["a", "b"]);
        let names: Vec<_> = c
            .files
            .iter()
            .map(|(p, l)| (p.strip_prefix(dir.path()).unwrap().to_path_buf(), *l))
            .collect();
        assert_eq!(
            names,
            [
                (PathBuf::from("a/1.txt"), 0),
                (PathBuf::from("b/2.txt"), 1),
                (PathBuf::from("b/sub/1.txt"), 1)
            ]
        );
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    }
}
