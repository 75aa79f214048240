//! The write-ahead journal of a served model, `MODEL.journal`: every correction the server
//! acknowledges is in it, synced, before the answer goes out, so a crash loses none. A snapshot
//! (the model file rewritten) empties it.
//!
//! Layout (integers little-endian):
//!
//! | bytes | content |
//! |---|---|
//! | 0..8 | magic `CWTJRNL1` |
//! | 8..12 | the CRC-32 of the model file the records apply to (its last 4 bytes) |
//! | 12..16 | CRC-32 of bytes 0..12 |
//! | … | records: payload length (u32), CRC-32 of the payload (u32), payload |
//!
//! A payload is a kind byte, then for a correction (1) the label's length (u32), the label and
//! the document's raw bytes as they were sent (so replaying runs exactly `learn`'s code on the
//! same bytes), and for a snapshot mark (2) the CRC-32 of the model file a snapshot is about to
//! rename into place. A crash between that rename and the journal's reset leaves a journal whose
//! base is the old file and whose last mark is the new one: its corrections are already in the
//! model and are not applied twice. Any other model file under a journal with corrections is a
//! model replaced behind the server's back, refused rather than merged.
//!
//! A record cut short or damaged (a `kill -9` or power loss during a write) ends the journal:
//! it was never acknowledged, since acknowledgements wait for the sync.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::ServeError;

pub const MAGIC: &[u8; 8] = b"CWTJRNL1";
use crate::integrations::lock::JOURNAL_HEADER_LEN as HEADER_LEN;
const CORRECTION: u8 = 1;
const SNAPSHOT: u8 = 2;

/// One record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Correction { label: String, document: Vec<u8> },
    Snapshot { crc: u32 },
}

impl Entry {
    fn payload(&self) -> Vec<u8> {
        match self {
            Entry::Correction { label, document } => {
                let mut p = Vec::with_capacity(5 + label.len() + document.len());
                p.push(CORRECTION);
                p.extend_from_slice(&(label.len() as u32).to_le_bytes());
                p.extend_from_slice(label.as_bytes());
                p.extend_from_slice(document);
                p
            }
            Entry::Snapshot { crc } => {
                let mut p = vec![SNAPSHOT];
                p.extend_from_slice(&crc.to_le_bytes());
                p
            }
        }
    }

    fn parse(payload: &[u8]) -> Option<Entry> {
        match *payload.first()? {
            CORRECTION => {
                let len = u32::from_le_bytes(payload.get(1..5)?.try_into().ok()?) as usize;
                let label = std::str::from_utf8(payload.get(5..5 + len)?).ok()?;
                Some(Entry::Correction {
                    label: label.to_string(),
                    document: payload[5 + len..].to_vec(),
                })
            }
            SNAPSHOT => Some(Entry::Snapshot {
                crc: u32::from_le_bytes(payload.get(1..5)?.try_into().ok()?),
            }),
            _ => None,
        }
    }

    /// The record's bytes: length, CRC, payload.
    fn encode(&self, out: &mut Vec<u8>) {
        let payload = self.payload();
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        out.extend_from_slice(&payload);
    }
}

/// What a journal file held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contents {
    /// The CRC-32 of the model file the records apply to.
    pub base: u32,
    pub entries: Vec<Entry>,
    /// The length of the whole records.
    pub good_len: u64,
    /// Bytes after them that are no whole record (a torn write), dropped.
    pub torn: u64,
}

impl Contents {
    pub fn corrections(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| matches!(e, Entry::Correction { .. }))
            .count()
    }
}

fn header(base: u32) -> [u8; HEADER_LEN as usize] {
    let mut h = [0u8; HEADER_LEN as usize];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&base.to_le_bytes());
    let crc = crc32fast::hash(&h[..12]);
    h[12..16].copy_from_slice(&crc.to_le_bytes());
    h
}

pub use crate::integrations::lock::journal_path as path_for;

fn damaged(path: &Path, message: impl Into<String>) -> ServeError {
    ServeError::Journal {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// Reads a journal; `None` when there is none.
pub fn read(path: &Path) -> Result<Option<Contents>, ServeError> {
    let mut bytes = Vec::new();
    match File::open(path) {
        Ok(mut f) => f
            .read_to_end(&mut bytes)
            .map_err(|e| ServeError::io(path, e))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ServeError::io(path, e)),
    };
    if bytes.len() < HEADER_LEN as usize || &bytes[..8] != MAGIC {
        return Err(damaged(
            path,
            "not a cwtext journal (bad magic bytes or cut short)",
        ));
    }
    let crc = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes"));
    if crc != crc32fast::hash(&bytes[..12]) {
        return Err(damaged(path, "damaged journal header (checksum mismatch)"));
    }
    let base = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    let mut at = HEADER_LEN as usize;
    let mut entries = Vec::new();
    while bytes.len() - at >= 8 {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
        let crc = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().expect("4 bytes"));
        let Some(payload) = bytes.get(at + 8..at + 8 + len) else {
            break;
        };
        if crc32fast::hash(payload) != crc {
            break;
        }
        let Some(entry) = Entry::parse(payload) else {
            break;
        };
        entries.push(entry);
        at += 8 + len;
    }
    Ok(Some(Contents {
        base,
        entries,
        good_len: at as u64,
        torn: (bytes.len() - at) as u64,
    }))
}

/// Syncs the directory holding `path`, so that a rename or a new file in it survives a crash.
pub fn sync_dir(path: &Path) -> Result<(), ServeError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| ServeError::io(dir, e))
}

/// An open journal, appended to by one writer.
#[derive(Debug)]
pub struct Journal {
    file: File,
    path: PathBuf,
    len: u64,
    corrections: usize,
}

impl Journal {
    /// An empty journal for the model file whose CRC is `base`, replacing any old one
    /// atomically (a temporary file, synced, renamed, the directory synced).
    pub fn create(path: &Path, base: u32) -> Result<Journal, ServeError> {
        let tmp = crate::integrations::lock::sidecar(path, ".tmp");
        let io = |e| ServeError::io(&tmp, e);
        let mut f = File::create(&tmp).map_err(io)?;
        f.write_all(&header(base)).map_err(io)?;
        f.sync_all().map_err(io)?;
        drop(f);
        std::fs::rename(&tmp, path).map_err(|e| ServeError::io(path, e))?;
        sync_dir(path)?;
        Journal::open_end(path, HEADER_LEN, 0)
    }

    /// Opens a journal read with [`read`] to append after its whole records (a torn tail is
    /// cut off first).
    pub fn reopen(path: &Path, contents: &Contents) -> Result<Journal, ServeError> {
        Journal::open_end(path, contents.good_len, contents.corrections())
    }

    fn open_end(path: &Path, len: u64, corrections: usize) -> Result<Journal, ServeError> {
        let io = |e| ServeError::io(path, e);
        let file = OpenOptions::new().write(true).open(path).map_err(io)?;
        if file.metadata().map_err(io)?.len() != len {
            file.set_len(len).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        Ok(Journal {
            file,
            path: path.to_path_buf(),
            len,
            corrections,
        })
    }

    /// Appends `entries` with one write and one sync (the group commit). On any error the file
    /// is cut back to where it was, so nothing unacknowledged stays behind to be replayed.
    pub fn append(&mut self, entries: &[Entry]) -> Result<(), ServeError> {
        use std::os::unix::fs::FileExt;
        let mut bytes = Vec::new();
        entries.iter().for_each(|e| e.encode(&mut bytes));
        let result = self
            .file
            .write_all_at(&bytes, self.len)
            .and_then(|()| self.file.sync_data());
        match result {
            Ok(()) => {
                self.len += bytes.len() as u64;
                self.corrections += entries
                    .iter()
                    .filter(|e| matches!(e, Entry::Correction { .. }))
                    .count();
                Ok(())
            }
            Err(e) => {
                let _ = self.file.set_len(self.len);
                let _ = self.file.sync_data();
                Err(ServeError::io(&self.path, e))
            }
        }
    }

    /// Corrections in the journal (not yet in the model file).
    pub fn corrections(&self) -> usize {
        self.corrections
    }

    pub fn bytes(&self) -> u64 {
        self.len
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn correction(label: &str, doc: &[u8]) -> Entry {
        Entry::Correction {
            label: label.into(),
            document: doc.to_vec(),
        }
    }

    #[test]
    fn records_round_trip_and_a_torn_tail_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.cwm.journal");
        let mut j = Journal::create(&path, 0xdead_beef).unwrap();
        let entries = vec![
            correction("spam", b"buy now\r\n\x00\xff"),
            correction("h\u{e4}m", b""),
            Entry::Snapshot { crc: 7 },
        ];
        j.append(&entries[..2]).unwrap();
        j.append(&entries[2..]).unwrap();
        assert_eq!(j.corrections(), 2);
        let good = std::fs::metadata(&path).unwrap().len();
        let back = read(&path).unwrap().unwrap();
        assert_eq!(back.base, 0xdead_beef);
        assert_eq!(back.entries, entries);
        assert_eq!((back.good_len, back.torn), (good, 0));

        // Half a record after the whole ones (kill -9 during a write): dropped, and the journal
        // reopened for appending is cut back to the whole records.
        let mut torn = Vec::new();
        correction("spam", b"never acknowledged").encode(&mut torn);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&torn[..torn.len() - 3]).unwrap();
        drop(f);
        let back = read(&path).unwrap().unwrap();
        assert_eq!(back.entries, entries);
        assert_eq!(back.torn, torn.len() as u64 - 3);
        let mut j = Journal::reopen(&path, &back).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), good);
        j.append(&[correction("ham", b"x")]).unwrap();
        assert_eq!(read(&path).unwrap().unwrap().entries.len(), 4);

        // A flipped byte inside a record ends the journal there.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[HEADER_LEN as usize + 10] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read(&path).unwrap().unwrap().entries.len(), 0);
    }

    #[test]
    fn a_file_that_is_no_journal_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        std::fs::write(&path, b"hello world, not a journal").unwrap();
        assert!(read(&path)
            .unwrap_err()
            .to_string()
            .contains("not a cwtext journal"));
        assert!(read(&dir.path().join("none")).unwrap().is_none());
    }
}
