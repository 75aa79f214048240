//! The decision log: what `label` decided for each message, so that `learn --from-store` can
//! later tell which messages the user refiled (CRM114's mailreaver keeps such a cache, keyed by
//! a header ID, for the same reason). One JSON object per line, appended, never rewritten:
//!
//! ```text
//! {"event":"decided","id":"<1234@example.com>","label":"Spam","folder":"Spam","probability":0.97,"model":"mail.cwm crc32:1a2b3c4d","time":1732400000,"file":"Maildir/.Spam/new/…"}
//! {"event":"learned","id":"<1234@example.com>","from":"Spam","to":"Work/Projects","model":"mail.cwm crc32:1a2b3c4d","time":1732400100}
//! ```
//!
//! `folder` is where the message was put: its label, or the unsure folder below `--min-prob`.
//! A `learned` line says that the message was learned in the folder `to`: it is expected there
//! from then on, so learning from the same store twice learns nothing new, and a message the
//! user moves again is learned again. By default the log is `.cwtext-decisions.jsonl` in the
//! destination store (a dot file, which no mail program and no cwtext reader takes for a
//! folder or a message).
//!
//! A message's identity ([`identity`]) must survive what mail programs do to a message: a
//! Maildir rename when it is read or flagged, a move to another folder, a new offset in a
//! rewritten mbox. It is the `Message-ID` when the message has one, else a hash of its bytes.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::Model;
use crate::text::mailbox::mbox;

/// The log's name in a store, when no other is given.
pub const DEFAULT_NAME: &str = ".cwtext-decisions.jsonl";

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum Entry {
    /// `label` decided `label` for the message and put it in `folder`.
    Decided {
        id: String,
        label: String,
        folder: String,
        probability: f64,
        /// The model that decided: the name given to `-m` and its file's CRC-32.
        model: String,
        /// Seconds since the epoch.
        time: u64,
        /// Where the message was put (for people; the identity finds it wherever it is now).
        file: String,
    },
    /// `learn --from-store` learned the message as `to` (the user had moved it from `from`).
    Learned {
        id: String,
        from: String,
        to: String,
        model: String,
        time: u64,
    },
}

impl Entry {
    pub fn id(&self) -> &str {
        match self {
            Entry::Decided { id, .. } | Entry::Learned { id, .. } => id,
        }
    }
}

/// `NAME crc32:XXXXXXXX`: which model decided (its name, and the checksum that tells versions
/// of one file apart).
pub fn model_identity(model: &Model, name: &str) -> String {
    model_identity_of(model.fingerprint(), name)
}

/// [`model_identity`] from a checksum (as [`Model::save`] returns it).
pub fn model_identity_of(crc: Option<u32>, name: &str) -> String {
    match crc {
        Some(crc) => format!("{name} crc32:{crc:08x}"),
        None => name.to_string(),
    }
}

/// Seconds since the epoch, for the log's `time`.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A log open for appending.
#[derive(Debug)]
pub struct DecisionLog {
    path: PathBuf,
    file: File,
}

impl DecisionLog {
    /// Opens (creating) the log at `path` for appending.
    pub fn open(path: &Path) -> Result<DecisionLog> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        Ok(DecisionLog {
            path: path.to_path_buf(),
            file,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends entries, each a whole line, in one write (an append of one write is not
    /// interleaved with another writer's), and syncs them.
    pub fn append(&mut self, entries: &[Entry]) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut out = Vec::new();
        for entry in entries {
            serde_json::to_writer(&mut out, entry).expect("a log entry serialises");
            out.push(b'\n');
        }
        self.file
            .write_all(&out)
            .and_then(|_| self.file.sync_data())
            .map_err(|e| Error::io(&self.path, e))
    }

    /// Every entry of the log at `path`, in order. A line that is not an entry is an error
    /// naming the file and the line, except a last line cut short (a run killed while writing
    /// it), which is skipped with a warning.
    pub fn read(path: &Path) -> Result<(Vec<Entry>, Vec<String>)> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let mut entries = Vec::new();
        let mut warnings = Vec::new();
        let lines: Vec<String> = BufReader::new(file)
            .split(b'\n')
            .map(|l| l.map(|l| String::from_utf8_lossy(&l).into_owned()))
            .collect::<std::io::Result<_>>()
            .map_err(|e| Error::io(path, e))?;
        let last = lines.len();
        for (n, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Entry>(line) {
                Ok(e) => entries.push(e),
                Err(e) if n + 1 == last => warnings.push(format!(
                    "{}:{}: an incomplete last line, skipped ({e})",
                    path.display(),
                    n + 1
                )),
                Err(e) => {
                    return Err(Error::Corpus {
                        path: path.to_path_buf(),
                        message: format!("line {}: not a decision-log entry: {e}", n + 1),
                    })
                }
            }
        }
        Ok((entries, warnings))
    }
}

/// A message's identity: its `Message-ID` (`<…>`, whitespace and folding taken out) when it has
/// one, else `hash:` and 32 hex digits of [`content_hash`]. A leading mbox `From ` line is not
/// part of the message.
pub fn identity(message: &[u8]) -> String {
    let message = match message.iter().position(|&b| b == b'\n') {
        Some(i) if mbox::is_separator(&message[..i]) => &message[i + 1..],
        _ => message,
    };
    match message_id(message) {
        Some(id) => id,
        None => format!("hash:{:032x}", content_hash(message)),
    }
}

/// The `Message-ID` of a message's header, normalised: the identifier as mail-parser reads it
/// (the crate that reads mail for the pipeline: folded lines joined, `<>` and comments taken
/// off), without white space, inside `<>`. `None` when the header has no such field or it is
/// empty.
pub fn message_id(message: &[u8]) -> Option<String> {
    let id: String = crate::text::input::email::message_id(message)?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    (!id.is_empty()).then(|| format!("<{id}>"))
}

/// FNV-1a, 128 bits (Fowler, Noll and Vo; offset basis and prime from the authors' page), over
/// the message without trailing line ends (an mbox adds one to a message that has none). Part
/// of the decision log's format: never change it, or logged messages are no longer found.
pub fn content_hash(message: &[u8]) -> u128 {
    const BASIS: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let end = message.len()
        - message
            .iter()
            .rev()
            .take_while(|&&b| b == b'\n' || b == b'\r')
            .count();
    message[..end]
        .iter()
        .fold(BASIS, |h, &b| (h ^ u128::from(b)).wrapping_mul(PRIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_are_message_ids_or_hashes() {
        assert_eq!(
            identity(b"Subject: x\nMessage-ID: <abc@example.com>\n\nbody\n"),
            "<abc@example.com>"
        );
        assert_eq!(
            identity(b"message-id:\r\n <abc@ex\r\n ample.com> (comment)\r\n\r\nbody\r\n"),
            "<abc@example.com>",
            "folded, CRLF, any case"
        );
        assert_eq!(
            identity(b"From a@b Sat Jan  3 01:05:34 1996\nMessage-Id: abc@example.com\n\nx\n"),
            "<abc@example.com>"
        );
        let body = b"Subject: x\n\nMessage-ID: <not@header>\n";
        let h = identity(body);
        assert!(h.starts_with("hash:") && h.len() == 37, "{h}");
        assert_eq!(h, identity(b"Subject: x\n\nMessage-ID: <not@header>"));
        assert_ne!(h, identity(b"Subject: y\n\nMessage-ID: <not@header>\n"));
    }

    /// The hash is part of the log's format: golden values.
    #[test]
    fn the_content_hash_is_frozen() {
        assert_eq!(content_hash(b""), 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d);
        assert_eq!(
            content_hash(b"a"),
            0xd228_cb69_6f1a_8caf_7891_2b70_4e4a_8964
        );
        assert_eq!(content_hash(b"a\n\n"), content_hash(b"a"));
    }

    #[test]
    fn the_log_round_trips_and_skips_a_cut_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d/log.jsonl");
        let decided = Entry::Decided {
            id: "<a@b>".into(),
            label: "Spam".into(),
            folder: "_unsure".into(),
            probability: 0.5,
            model: "m.cwm crc32:00000001".into(),
            time: 7,
            file: "x".into(),
        };
        let learned = Entry::Learned {
            id: "<a@b>".into(),
            from: "_unsure".into(),
            to: "Work".into(),
            model: "m.cwm".into(),
            time: 8,
        };
        let mut log = DecisionLog::open(&path).unwrap();
        log.append(std::slice::from_ref(&decided)).unwrap();
        log.append(std::slice::from_ref(&learned)).unwrap();
        drop(log);
        let mut text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("{\"event\":\"decided\",\"id\":\"<a@b>\""),
            "{text}"
        );
        text.push_str("{\"event\":\"deci");
        std::fs::write(&path, &text).unwrap();
        let (entries, warnings) = DecisionLog::read(&path).unwrap();
        assert_eq!(entries, [decided, learned]);
        assert!(
            warnings[0].contains("log.jsonl:3: an incomplete last line"),
            "{warnings:?}"
        );
        std::fs::write(&path, format!("garbage\n{text}")).unwrap();
        let err = DecisionLog::read(&path).unwrap_err().to_string();
        assert!(
            err.contains("log.jsonl: line 1: not a decision-log entry"),
            "{err}"
        );
    }
}
