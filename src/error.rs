//! Typed errors of the library. Every variant names the file (and where it applies the byte or
//! the bad value) so that the CLI can print it as it is; only the CLI layer adds `anyhow` context.

use std::path::PathBuf;

/// The library's error type.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a file failed. The cause is part of the message (and so not also
    /// exposed as `source()`, which would print it twice in an error chain).
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The input is not text (an image, an executable, random bytes).
    #[error("{}: binary file ({reason}), not text", path.display())]
    Binary { path: PathBuf, reason: String },
    /// The input holds no word at all, so there is nothing to classify or learn from.
    #[error("{}: empty document: no words found", path.display())]
    EmptyDocument { path: PathBuf },
    /// A model file that cannot be used.
    #[error("{}: {kind}", path.display())]
    Model { path: PathBuf, kind: ModelError },
    /// A model that `cwtext serve` holds in memory: a correction written to its file would be
    /// overwritten by the server's next snapshot, so it must go through the server.
    #[error("model {} is held by cwtext serve at {server} (pid {pid}); use `cwtext learn --server {server} …`, or stop the server first", path.display())]
    Served {
        path: PathBuf,
        server: String,
        pid: String,
    },
    /// A model whose journal holds corrections a `cwtext serve` acknowledged and had not yet
    /// written into the file (it was killed before its snapshot): changing the file now would
    /// strand them, since a server refuses a journal written for another file.
    #[error("{}: {} holds corrections a cwtext serve acknowledged but had not yet written into the model (the server stopped before its snapshot); start `cwtext serve -m {}` once to apply them (stopping it writes them into the file), or move the journal away to drop them", path.display(), journal.display(), path.display())]
    Journaled { path: PathBuf, journal: PathBuf },
    /// A setting outside its valid range; the message names the value.
    #[error("invalid setting: {0}")]
    InvalidSetting(String),
    /// Something this cwtext was built without (a cargo feature turned off).
    #[error("{what} needs the `{feature}` feature, which this cwtext was built without: rebuild with `cargo build --release --features {feature}`")]
    MissingFeature { feature: &'static str, what: String },
    /// A corpus directory that cannot be trained or evaluated on.
    #[error("{}: {message}", path.display())]
    Corpus { path: PathBuf, message: String },
    /// The feature cache of `train` could not be written or read (a full disk, an unwritable
    /// directory, a damaged file).
    #[error("{}: feature cache: {message}", path.display())]
    FeatureCache { path: PathBuf, message: String },
    /// A search archive (`label --index`, `search`) that cannot be used.
    #[error("{}: {kind}", path.display())]
    Archive { path: PathBuf, kind: ArchiveError },
    /// A message that could not be delivered into a mail store (`label --copy-to/--move-to`):
    /// names the mailbox (a Maildir folder or an mbox file) and the message, which is still
    /// where it was.
    #[error("{}: {kind}; {} was not delivered and is still where it was", mailbox.display(), message.display())]
    Delivery {
        mailbox: PathBuf,
        message: PathBuf,
        kind: DeliveryError,
    },
}

/// Why a message could not be delivered into a mail store.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum DeliveryError {
    /// Another program holds the mailbox's lock (`MAILBOX.lock` or `flock` on the file).
    #[error("locked by another program ({how}) for {seconds} s (--lock-timeout); try again when it is done")]
    Locked { how: String, seconds: f64 },
    /// Writing failed; an mbox was cut back to its length before the message.
    #[error("cannot write: {0}")]
    Write(String),
    /// A label that cannot name a folder of the store.
    #[error("label {label:?} cannot name a folder: {why}")]
    BadFolder { label: String, why: String },
}

/// Why a search archive could not be opened, written or searched.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ArchiveError {
    #[error(
        "not a cwtext archive (no search index here; `cwtext label DIR --index IDX` makes one)"
    )]
    NotAnArchive,
    #[error("not empty and not a cwtext archive: refusing to write an index into it")]
    NotEmpty,
    #[error("an index with another schema (not written by this version of cwtext)")]
    OtherSchema,
    #[error("another cwtext is writing to this archive")]
    Locked,
    #[error("bad query {query:?}: {reason}")]
    Query { query: String, reason: String },
    #[error("damaged archive: {0}")]
    Damaged(String),
    /// A failure inside the index library, with its own message.
    #[error("{0}")]
    Index(String),
}

/// Why a model file was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ModelError {
    #[error("not a cwtext model (bad magic bytes)")]
    NotAModel,
    #[error("model format version {found} is newer than this cwtext supports ({supported}); upgrade cwtext")]
    NewerVersion { found: u32, supported: u32 },
    #[error("model format version {found} is no longer supported (this cwtext reads {supported})")]
    OlderVersion { found: u32, supported: u32 },
    #[error("truncated model file: expected {expected} bytes, found {found}")]
    Truncated { expected: u64, found: u64 },
    #[error("corrupted model file: {0}")]
    Corrupted(String),
}

impl Error {
    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            error: source,
        }
    }

    /// A copy of a per-file problem ([`Error::is_skippable`]), for reporting one file's failure
    /// in several places; `None` for the other kinds.
    pub fn duplicate(&self) -> Option<Error> {
        match self {
            Error::Io { path, error } => Some(Error::Io {
                path: path.clone(),
                error: std::io::Error::new(error.kind(), error.to_string()),
            }),
            Error::Binary { path, reason } => Some(Error::Binary {
                path: path.clone(),
                reason: reason.clone(),
            }),
            Error::EmptyDocument { path } => Some(Error::EmptyDocument { path: path.clone() }),
            Error::Delivery {
                mailbox,
                message,
                kind,
            } => Some(Error::Delivery {
                mailbox: mailbox.clone(),
                message: message.clone(),
                kind: kind.clone(),
            }),
            _ => None,
        }
    }

    /// True for the per-file problems that batch commands skip with a warning instead of stopping.
    /// The document a per-file problem ([`Error::is_skippable`]) is about: the file, or the
    /// message or row as [`crate::text::source::Source::name`] names it.
    pub fn skipped_path(&self) -> Option<&std::path::Path> {
        match self {
            Error::Io { path, .. } | Error::Binary { path, .. } | Error::EmptyDocument { path } => {
                Some(path)
            }
            Error::Delivery { message, .. } => Some(message),
            _ => None,
        }
    }

    pub fn is_skippable(&self) -> bool {
        matches!(
            self,
            Error::Io { .. }
                | Error::Binary { .. }
                | Error::EmptyDocument { .. }
                | Error::Delivery { .. }
        )
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
