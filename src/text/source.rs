//! Where a document's bytes are. Most documents are whole files; a message of an mbox is a byte
//! range of its file, and a Maildir message is a file whose name changes when its flags do.
//! Every command that reads a corpus or a mail store hands [`Source`]s around instead of paths,
//! so that an mbox of 10,000 messages is 10,000 documents, each named by its file and the byte
//! offset of its `From ` line (`inbox.mbox@5120`), and read only when it is featurised. A row
//! of a file of labelled rows ([`rows`]) is a byte range too, named by its line
//! (`train.csv:42`).

use std::fmt;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::text::input::{document_from_bytes, Document, InputLimits};
use crate::text::mailbox::maildir;
use crate::text::mailbox::mbox;
use crate::text::rows;

pub use crate::text::mailbox::mbox::MboxSpan;
pub use crate::text::rows::RowSpan;

/// What kind of place a [`Source`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    /// A whole file, read as it is.
    File,
    /// A file of a Maildir folder: its identity leaves out `cur/` or `new/` and the `:2,FLAGS`
    /// suffix, which change when the message is read or flagged.
    MaildirMessage,
    /// One message of an mbox file; its `>From ` quoting is undone when it is read.
    Mbox(MboxSpan),
    /// One message of a compressed mbox file (a list archive's `2024-January.txt.gz`): the span
    /// is in what the file holds once decompressed.
    PackedMbox(MboxSpan),
    /// One row of a file of labelled rows: its text is taken out of the span when it is read.
    Row(RowSpan),
}

/// One document's place: a file, a Maildir message or an mbox message.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Source {
    path: PathBuf,
    kind: Kind,
}

impl From<PathBuf> for Source {
    fn from(path: PathBuf) -> Self {
        Source::file(path)
    }
}

impl fmt::Display for Source {
    /// The path, and for an mbox message `@` and the byte offset of its `From ` line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Kind::Mbox(span) | Kind::PackedMbox(span) => {
                write!(f, "{}@{}", self.path.display(), span.offset)
            }
            Kind::Row(span) => write!(f, "{}:{}", self.path.display(), span.line),
            _ => write!(f, "{}", self.path.display()),
        }
    }
}

/// The file-name suffixes of the compressed files that are read as what they hold
/// ([`crate::text::input::compressed`]: gzip, bzip2, xz, zstd), which [`Source::key`] leaves out.
pub const COMPRESSION_SUFFIXES: [&str; 4] = [".gz", ".bz2", ".xz", ".zst"];

impl Source {
    /// A whole file.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Source {
            path: path.into(),
            kind: Kind::File,
        }
    }

    /// A message file of a Maildir folder (in its `cur/` or `new/`).
    pub fn maildir_message(path: impl Into<PathBuf>) -> Self {
        Source {
            path: path.into(),
            kind: Kind::MaildirMessage,
        }
    }

    /// One message of the mbox file at `path`.
    pub fn mbox_message(path: impl Into<PathBuf>, span: MboxSpan) -> Self {
        Source {
            path: path.into(),
            kind: Kind::Mbox(span),
        }
    }

    /// One message of the compressed mbox file at `path`, `span` being its place in what the
    /// file holds once decompressed.
    pub fn packed_mbox_message(path: impl Into<PathBuf>, span: MboxSpan) -> Self {
        Source {
            path: path.into(),
            kind: Kind::PackedMbox(span),
        }
    }

    /// One row of the file of labelled rows at `path`.
    pub fn row(path: impl Into<PathBuf>, span: RowSpan) -> Self {
        Source {
            path: path.into(),
            kind: Kind::Row(span),
        }
    }

    /// The row's place in its file, for a row of a file of labelled rows.
    pub fn row_span(&self) -> Option<RowSpan> {
        match self.kind {
            Kind::Row(span) => Some(span),
            _ => None,
        }
    }

    /// The documents a file of a folder-per-label corpus holds ([`mbox::probe_file`]): the
    /// messages of an mbox of two or more, compressed or not, else the file itself; the mbox
    /// scan's warnings go to `warn`.
    pub fn documents_of(path: &Path, warn: &mut dyn FnMut(&str)) -> Vec<Source> {
        let (scan, kind): (_, fn(MboxSpan) -> Kind) = match mbox::probe_file(path) {
            mbox::Probe::Document => return vec![Source::file(path)],
            mbox::Probe::Mbox(scan) => (scan, Kind::Mbox),
            mbox::Probe::PackedMbox(scan) => (scan, Kind::PackedMbox),
        };
        scan.warnings.iter().for_each(|w| warn(w));
        let message = |span| Source {
            path: path.to_path_buf(),
            kind: kind(span),
        };
        scan.spans.into_iter().map(message).collect()
    }

    /// Whether the document is a message of a compressed mbox.
    pub fn is_packed(&self) -> bool {
        matches!(self.kind, Kind::PackedMbox(_))
    }

    /// The file that holds the document.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The message's place in its mbox file, for an mbox message.
    pub fn mbox_span(&self) -> Option<MboxSpan> {
        match self.kind {
            Kind::Mbox(span) | Kind::PackedMbox(span) => Some(span),
            _ => None,
        }
    }

    /// Whether the document is a message file of a Maildir folder.
    pub fn is_maildir_message(&self) -> bool {
        matches!(self.kind, Kind::MaildirMessage)
    }

    /// Whether the document is a plain file (not a message of a mail store or a row).
    pub fn is_plain_file(&self) -> bool {
        matches!(self.kind, Kind::File)
    }

    /// Whether the document is a whole file (a plain file or a Maildir message), which can be
    /// copied or moved as it is.
    pub fn is_whole_file(&self) -> bool {
        !matches!(
            self.kind,
            Kind::Mbox(_) | Kind::PackedMbox(_) | Kind::Row(_)
        )
    }

    /// How errors and output name the document: the path, `PATH@OFFSET` for an mbox message,
    /// `PATH:LINE` for a row.
    pub fn name(&self) -> PathBuf {
        match self.kind {
            Kind::Mbox(_) | Kind::PackedMbox(_) | Kind::Row(_) => PathBuf::from(self.to_string()),
            _ => self.path.clone(),
        }
    }

    /// A stable key for the document relative to `root`, for the fixed hashes that choose the
    /// held-out fifth and the shards: the relative path for a file (exactly what those hashes
    /// took before mail stores were read, so models trained on folders do not change); for a
    /// Maildir message its folder and unique name without `cur/`, `new/` or the flags, so that
    /// reading or flagging a message does not move it to another fifth; for an mbox message
    /// the relative path, `@` and the byte offset; for a row the relative path (empty when the
    /// file is the corpus root), `:` and its line. A compression suffix
    /// ([`COMPRESSION_SUFFIXES`]) is left out, so that a corpus compressed file by file splits
    /// as its text does and trains the same model.
    pub fn key(&self, root: &Path) -> String {
        let relative = self.path.strip_prefix(root).unwrap_or(&self.path);
        let unpacked = || {
            let path = relative.to_string_lossy();
            COMPRESSION_SUFFIXES
                .iter()
                .find_map(|s| {
                    path.strip_suffix(s)
                        .filter(|p| !p.is_empty() && !p.ends_with(std::path::is_separator))
                })
                .map_or_else(|| path.to_string(), str::to_string)
        };
        match self.kind {
            Kind::File => unpacked(),
            Kind::MaildirMessage => {
                let name = relative
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let folder = relative.parent().and_then(Path::parent);
                let unique = maildir::unique_name(&name);
                match folder {
                    Some(f) if !f.as_os_str().is_empty() => {
                        format!("{}/{unique}", f.to_string_lossy())
                    }
                    _ => unique.to_string(),
                }
            }
            Kind::Mbox(span) | Kind::PackedMbox(span) => format!("{}@{}", unpacked(), span.offset),
            Kind::Row(span) => format!("{}:{}", unpacked(), span.line),
        }
    }

    /// The document's bytes, at most `max` of them plus one (so that a caller can tell that
    /// there were more): the file, the message with its mbox quoting undone, or the row's text.
    pub fn read_bytes(&self, max: usize) -> Result<Vec<u8>> {
        let io = |e| Error::io(self.name(), e);
        let mut file = std::fs::File::open(&self.path).map_err(io)?;
        let mut bytes = Vec::new();
        match self.kind {
            Kind::File | Kind::MaildirMessage => {
                file.take(max as u64 + 1)
                    .read_to_end(&mut bytes)
                    .map_err(io)?;
            }
            Kind::Mbox(span) => {
                let len = (span.end - span.start).min(max as u64 + 1);
                bytes = read_range(
                    &mut file,
                    span.start,
                    len,
                    "the mbox",
                    "inside this message",
                )
                .map_err(io)?;
                bytes = mbox::unquote(&bytes).into_owned();
            }
            Kind::Row(span) => {
                let len = span.end.saturating_sub(span.start);
                bytes = read_range(&mut file, span.start, len, "the file", "inside this row")
                    .map_err(io)?;
                bytes = rows::text_of(&span, &bytes).map_err(|message| {
                    io(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        message,
                    ))
                })?;
                bytes.truncate(max.saturating_add(1));
            }
            Kind::PackedMbox(span) => {
                let whole = unpacked(&self.path, file).map_err(|e| match e {
                    Error::Io { error, .. } => io(error),
                    other => other,
                })?;
                let (start, end) = (span.start as usize, span.end as usize);
                let Some(message) = whole.get(start..end) else {
                    return Err(io(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!(
                            "the mbox holds {} bytes once decompressed, ending inside this message (changed since it was scanned?)",
                            whole.len()
                        ),
                    )));
                };
                let message = &message[..message.len().min(max.saturating_add(1))];
                bytes = mbox::unquote(message).into_owned();
            }
        }
        Ok(bytes)
    }

    /// Reads and parses the document within `limits`, naming it in any error and warning.
    pub fn read(&self, limits: InputLimits) -> Result<Document> {
        let bytes = self.read_bytes(limits.max_bytes)?;
        document_from_bytes(&bytes, &self.name(), limits)
    }
}

/// `len` bytes of `file` from `start`; fewer is an error saying where `what` ended `inside`
/// (the file shrank since it was scanned: a mail program rewrote it, a row file was edited).
fn read_range(
    file: &mut std::fs::File,
    start: u64,
    len: u64,
    what: &str,
    inside: &str,
) -> std::io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(len).read_to_end(&mut bytes)?;
    if (bytes.len() as u64) < len {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!(
                "{what} ends at byte {} {inside} (changed since it was scanned?)",
                start + bytes.len() as u64
            ),
        ));
    }
    Ok(bytes)
}

/// What the compressed mbox at `path` holds, decompressed once per thread and kept for the
/// next message of the same file: a corpus lists an archive's messages one after another, and
/// decompressing the whole archive for each message would cost its size squared.
fn unpacked(path: &Path, mut file: std::fs::File) -> Result<std::rc::Rc<Vec<u8>>> {
    use std::cell::RefCell;
    use std::rc::Rc;
    /// The file, its modification time when read, and what it holds.
    type Unpacked = (PathBuf, std::time::SystemTime, Rc<Vec<u8>>);
    thread_local! {
        static LAST: RefCell<Option<Unpacked>> = const { RefCell::new(None) };
    }
    let modified = file
        .metadata()
        .and_then(|m| m.modified())
        .map_err(|e| Error::io(path, e))?;
    let cached = LAST.with(|last| {
        last.borrow()
            .as_ref()
            .filter(|(p, m, _)| p == path && *m == modified)
            .map(|(_, _, bytes)| Rc::clone(bytes))
    });
    if let Some(bytes) = cached {
        return Ok(bytes);
    }
    let mut packed = Vec::new();
    file.read_to_end(&mut packed)
        .map_err(|e| Error::io(path, e))?;
    let whole = match mbox::unpack_packed(&packed, path)? {
        Some((whole, _)) => Rc::new(whole),
        None => {
            return Err(Error::io(
                path,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "no longer a compressed mbox (changed since it was scanned?)",
                ),
            ))
        }
    };
    LAST.with(|last| *last.borrow_mut() = Some((path.to_path_buf(), modified, Rc::clone(&whole))));
    Ok(whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_across_flags_and_folders_and_name_mbox_offsets() {
        let root = Path::new("/m");
        assert_eq!(Source::file("/m/spam/1.eml").key(root), "spam/1.eml");
        let seen = Source::maildir_message("/m/.Spam/cur/123.M1P2.host:2,S");
        let new = Source::maildir_message("/m/.Spam/new/123.M1P2.host");
        assert_eq!(seen.key(root), ".Spam/123.M1P2.host");
        assert_eq!(seen.key(root), new.key(root));
        assert_eq!(
            Source::maildir_message("/m/cur/9.host:2,RS").key(root),
            "9.host"
        );
        let span = MboxSpan {
            offset: 40,
            start: 90,
            end: 200,
        };
        let m = Source::mbox_message("/m/Spam", span);
        assert_eq!(m.key(root), "Spam@40");
        assert_eq!(m.to_string(), "/m/Spam@40");
        assert_eq!(m.name(), PathBuf::from("/m/Spam@40"));
        assert!(!m.is_whole_file() && seen.is_whole_file());
    }

    /// A compressed file splits as its text: the held-out fifth, the folds and the shards are
    /// hashes of the key, and before the suffix was left out a news corpus compressed file by
    /// file cross-validated its probability scale on other folds and trained other bytes.
    #[test]
    fn a_compressed_file_has_its_texts_key() {
        let root = Path::new("/m");
        for suffix in COMPRESSION_SUFFIXES {
            let packed = format!("/m/spam/1.eml{suffix}");
            assert_eq!(Source::file(&packed).key(root), "spam/1.eml");
            let span = MboxSpan {
                offset: 40,
                start: 90,
                end: 200,
            };
            let message = Source::packed_mbox_message(format!("/m/Spam{suffix}"), span);
            assert_eq!(message.key(root), "Spam@40");
        }
        // Only a suffix: a file called `.gz` keeps its name, another extension stays.
        assert_eq!(Source::file("/m/spam/.gz").key(root), "spam/.gz");
        assert_eq!(Source::file("/m/spam/1.tgz").key(root), "spam/1.tgz");
    }

    /// A message of a gzipped mbox reads as the same message of the mbox: the span is in what
    /// the file holds, the quoting undone, at most `max + 1` bytes; a file rewritten shorter
    /// since it was listed is an error naming the message.
    #[test]
    fn a_message_of_a_compressed_mbox_reads_as_the_message() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let text = b"From a@b Sat Jan  3 01:05:34 1996\nSubject: x\n\n>From here\n\nFrom c@d Sat Jan  3 01:05:35 1996\nSubject: y\n\nsecond\n";
        let (plain, packed) = (dir.path().join("box"), dir.path().join("box.gz"));
        std::fs::write(&plain, text).unwrap();
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(text).unwrap();
        std::fs::write(&packed, e.finish().unwrap()).unwrap();
        let mut warnings = Vec::new();
        let messages = Source::documents_of(&packed, &mut |w| warnings.push(w.to_string()));
        assert!(warnings.is_empty(), "{warnings:?}");
        let spans: Vec<MboxSpan> = messages.iter().map(|m| m.mbox_span().unwrap()).collect();
        let same = Source::documents_of(&plain, &mut |_| {});
        assert_eq!(
            same.iter()
                .map(|m| m.mbox_span().unwrap())
                .collect::<Vec<_>>(),
            spans
        );
        assert_eq!(messages[1].to_string(), format!("{}@58", packed.display()));
        assert!(messages[0].is_packed() && !same[0].is_packed() && !messages[0].is_whole_file());
        for (m, s) in messages.iter().zip(&same) {
            assert_eq!(m.read_bytes(1000).unwrap(), s.read_bytes(1000).unwrap());
        }
        assert_eq!(
            messages[0].read_bytes(1000).unwrap(),
            b"Subject: x\n\nFrom here\n"
        );
        assert_eq!(messages[1].read_bytes(3).unwrap(), b"Subj");
        // A plain file and a compressed single message are one document each.
        std::fs::write(&plain, b"Subject: z\n\nno separator\n").unwrap();
        assert_eq!(
            Source::documents_of(&plain, &mut |_| {}),
            vec![Source::file(&plain)]
        );
        // Rewritten with less in it (a new modification time, so not the cached bytes).
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&text[..60]).unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(10);
        std::fs::write(&packed, e.finish().unwrap()).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&packed)
            .unwrap()
            .set_modified(later)
            .unwrap();
        let err = messages[1].read_bytes(1000).unwrap_err().to_string();
        assert!(
            err.contains("box.gz@58") && err.contains("changed since it was scanned"),
            "{err}"
        );
    }

    #[test]
    fn an_mbox_message_is_read_from_its_span_with_the_quoting_undone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("box");
        let text = b"From a@b Sat Jan  3 01:05:34 1996\nSubject: x\n\n>From here\n>>From there\n\nFrom c@d Sat Jan  3 01:05:35 1996\n";
        std::fs::write(&path, text).unwrap();
        let start = text.iter().position(|&b| b == b'\n').unwrap() as u64 + 1;
        let end = text.windows(7).position(|w| w == b"\n\nFrom ").unwrap() as u64 + 1;
        let span = MboxSpan {
            offset: 0,
            start,
            end,
        };
        let bytes = Source::mbox_message(&path, span).read_bytes(1000).unwrap();
        assert_eq!(bytes, b"Subject: x\n\nFrom here\n>From there\n");
        let cut = Source::mbox_message(&path, MboxSpan { end: 500, ..span });
        let err = cut.read_bytes(1000).unwrap_err().to_string();
        assert!(
            err.contains("box@0") && err.contains("ends at byte"),
            "{err}"
        );
    }
}
