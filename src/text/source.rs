//! Where a document's bytes are. Most documents are whole files; a message of an mbox is a byte
//! range of its file, and a Maildir message is a file whose name changes when its flags do.
//! Every command that reads a corpus or a mail store hands [`Source`]s around instead of paths,
//! so that an mbox of 10,000 messages is 10,000 documents, each named by its file and the byte
//! offset of its `From ` line (`inbox.mbox@5120`), and read only when it is featurised.

use std::fmt;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::text::input::{document_from_bytes, Document, InputLimits};
use crate::text::mailbox::maildir;
use crate::text::mailbox::mbox;

pub use crate::text::mailbox::mbox::MboxSpan;

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
            Kind::Mbox(span) => write!(f, "{}@{}", self.path.display(), span.offset),
            _ => write!(f, "{}", self.path.display()),
        }
    }
}

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

    /// The file that holds the document.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The message's place in its mbox file, for an mbox message.
    pub fn mbox_span(&self) -> Option<MboxSpan> {
        match self.kind {
            Kind::Mbox(span) => Some(span),
            _ => None,
        }
    }

    /// Whether the document is a message file of a Maildir folder.
    pub fn is_maildir_message(&self) -> bool {
        matches!(self.kind, Kind::MaildirMessage)
    }

    /// Whether the document is a whole file (a plain file or a Maildir message), which can be
    /// copied or moved as it is.
    pub fn is_whole_file(&self) -> bool {
        !matches!(self.kind, Kind::Mbox(_))
    }

    /// How errors and output name the document: the path, or `PATH@OFFSET` for an mbox message.
    pub fn name(&self) -> PathBuf {
        match self.kind {
            Kind::Mbox(_) => PathBuf::from(self.to_string()),
            _ => self.path.clone(),
        }
    }

    /// A stable key for the document relative to `root`, for the fixed hashes that choose the
    /// held-out fifth and the shards: the relative path for a file (exactly what those hashes
    /// took before mail stores were read, so models trained on folders do not change); for a
    /// Maildir message its folder and unique name without `cur/`, `new/` or the flags, so that
    /// reading or flagging a message does not move it to another fifth; for an mbox message
    /// the relative path, `@` and the byte offset.
    pub fn key(&self, root: &Path) -> String {
        let relative = self.path.strip_prefix(root).unwrap_or(&self.path);
        match self.kind {
            Kind::File => relative.to_string_lossy().into_owned(),
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
            Kind::Mbox(span) => format!("{}@{}", relative.to_string_lossy(), span.offset),
        }
    }

    /// The document's bytes, at most `max` of them plus one (so that a caller can tell that
    /// there were more): the file, or the message with its mbox quoting undone.
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
                file.seek(SeekFrom::Start(span.start)).map_err(io)?;
                let len = (span.end - span.start).min(max as u64 + 1);
                file.take(len).read_to_end(&mut bytes).map_err(io)?;
                if (bytes.len() as u64) < len {
                    // The file shrank since it was scanned (a mail program rewrote it).
                    return Err(io(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!(
                            "the mbox ends at byte {} inside this message (changed since it was scanned?)",
                            span.start + bytes.len() as u64
                        ),
                    )));
                }
                bytes = mbox::unquote(&bytes).into_owned();
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
