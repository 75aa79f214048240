//! A labelled corpus's list of documents, `(Source, label)` in corpus order, held in memory up
//! to [`SPOOL_AFTER`] documents and past that in an unnamed temporary file (issue 20): a path
//! and its label take about 170 bytes in memory, 1.7 GB for 10 million documents, which would
//! make training's memory grow with the corpus again. On disk each entry is a small record
//! (`varint label, kind byte, [3 varints: an mbox message's span | 3 varints, a format
//! byte and 2 varints: a row's line, span, format, label column and skipped columns], varint
//! length, the path's bytes`), read in order through a buffer ([`FileTable::iter`]) or by number through an index
//! of one u64 per entry kept in a second unnamed file ([`FileTable::get`], `pread`). Both files
//! are made by `tempfile` in `$TMPDIR` and vanish when the process ends, however it ends.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::jobs::disk::{get_varint, put_varint, read_at};
use crate::text::mailbox::mbox::MboxSpan;
use crate::text::rows::{RowFormat, RowSpan};
use crate::text::source::Source;

/// Documents held in memory before the list goes to disk (about 17 MB of paths); the
/// environment variable [`SPOOL_AFTER_VARIABLE`] sets another number.
pub const SPOOL_AFTER: usize = 100_000;

/// `CWTEXT_FILE_LIST_IN_MEMORY=N`: the file list goes to disk after N documents.
pub const SPOOL_AFTER_VARIABLE: &str = "CWTEXT_FILE_LIST_IN_MEMORY";

fn spool_after() -> usize {
    static AFTER: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *AFTER.get_or_init(|| {
        std::env::var(SPOOL_AFTER_VARIABLE)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(SPOOL_AFTER)
    })
}

/// Bytes buffered before a write, and read at once when reading in order.
const BUFFER: usize = 256 << 10;

/// The documents of a labelled corpus with their label numbers, in corpus order.
#[derive(Default)]
pub struct FileTable {
    memory: Vec<(Source, usize)>,
    spool: Option<Spool>,
    /// Documents after which the list goes to disk.
    spool_after: Option<usize>,
}

struct Spool {
    dir: PathBuf,
    records: File,
    index: File,
    /// Bytes of records written (pending ones included).
    end: u64,
    len: usize,
    pending: Vec<u8>,
    pending_index: Vec<u8>,
}

impl std::fmt::Debug for FileTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileTable")
            .field("len", &self.len())
            .field("on_disk", &self.spool.is_some())
            .finish()
    }
}

fn spool_error(dir: &Path, e: std::io::Error) -> Error {
    Error::FeatureCache {
        path: dir.to_path_buf(),
        message: format!("cannot keep the corpus's file list on disk: {e}"),
    }
}

#[cfg(unix)]
fn path_bytes(path: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes().to_vec()
}

#[cfg(not(unix))]
fn path_bytes(path: &Path) -> Vec<u8> {
    path.to_string_lossy().into_owned().into_bytes()
}

#[cfg(unix)]
fn path_of(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn path_of(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

fn encode(source: &Source, label: usize, out: &mut Vec<u8>) {
    put_varint(out, label as u64);
    if let Some(span) = source.row_span() {
        out.push(4);
        put_varint(out, span.line);
        put_varint(out, span.start);
        put_varint(out, span.end);
        out.push(span.format.code());
        put_varint(out, u64::from(span.label_column));
        put_varint(out, span.skip);
        let path = path_bytes(source.path());
        put_varint(out, path.len() as u64);
        out.extend_from_slice(&path);
        return;
    }
    match source.mbox_span() {
        Some(span) => {
            out.push(if source.is_packed() { 3 } else { 2 });
            put_varint(out, span.offset);
            put_varint(out, span.start);
            put_varint(out, span.end);
        }
        None if source.is_maildir_message() => out.push(1),
        None => out.push(0),
    }
    let path = path_bytes(source.path());
    put_varint(out, path.len() as u64);
    out.extend_from_slice(&path);
}

/// An entry and its length in bytes, or `None` when `bytes` holds no whole entry.
fn decode(bytes: &[u8]) -> Option<((Source, usize), usize)> {
    let mut at = 0;
    let label = usize::try_from(get_varint(bytes, &mut at)?).ok()?;
    let kind = *bytes.get(at)?;
    at += 1;
    let row = if kind == 4 {
        let line = get_varint(bytes, &mut at)?;
        let start = get_varint(bytes, &mut at)?;
        let end = get_varint(bytes, &mut at)?;
        let format = RowFormat::from_code(*bytes.get(at)?)?;
        at += 1;
        Some(RowSpan {
            line,
            start,
            end,
            format,
            label_column: u16::try_from(get_varint(bytes, &mut at)?).ok()?,
            skip: get_varint(bytes, &mut at)?,
        })
    } else {
        None
    };
    let span = if kind == 2 || kind == 3 {
        Some(MboxSpan {
            offset: get_varint(bytes, &mut at)?,
            start: get_varint(bytes, &mut at)?,
            end: get_varint(bytes, &mut at)?,
        })
    } else {
        None
    };
    let n = usize::try_from(get_varint(bytes, &mut at)?).ok()?;
    let path = path_of(bytes.get(at..at.checked_add(n)?)?);
    at += n;
    if let Some(row) = row {
        return Some(((Source::row(path, row), label), at));
    }
    let source = match (kind, span) {
        (3, Some(span)) => Source::packed_mbox_message(path, span),
        (_, Some(span)) => Source::mbox_message(path, span),
        (1, None) => Source::maildir_message(path),
        _ => Source::file(path),
    };
    Some(((source, label), at))
}

impl FileTable {
    /// An empty list that goes to disk after [`SPOOL_AFTER`] documents (or as
    /// [`SPOOL_AFTER_VARIABLE`] says).
    pub fn new() -> Self {
        FileTable::default()
    }

    /// An empty list that goes to disk after `n` documents (tests).
    pub fn spooling_after(n: usize) -> Self {
        FileTable {
            spool_after: Some(n),
            ..FileTable::default()
        }
    }

    pub fn len(&self) -> usize {
        self.memory.len() + self.spool.as_ref().map_or(0, |s| s.len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the list is on disk.
    pub fn on_disk(&self) -> bool {
        self.spool.is_some()
    }

    /// Appends a document; the list goes to disk when it passes its size.
    pub fn push(&mut self, source: Source, label: usize) -> Result<()> {
        if self.spool.is_none() {
            if self.memory.len() < self.spool_after.unwrap_or_else(spool_after) {
                self.memory.push((source, label));
                return Ok(());
            }
            let dir = std::env::temp_dir();
            let make = || tempfile::tempfile_in(&dir).map_err(|e| spool_error(&dir, e));
            let mut spool = Spool {
                records: make()?,
                index: make()?,
                dir: dir.clone(),
                end: 0,
                len: 0,
                pending: Vec::new(),
                pending_index: Vec::new(),
            };
            for (s, l) in std::mem::take(&mut self.memory) {
                spool.push(&s, l)?;
            }
            self.spool = Some(spool);
        }
        self.spool
            .as_mut()
            .expect("made above")
            .push(&source, label)
    }

    /// Writes what is buffered: call once the list is complete, before reading it.
    pub fn seal(&mut self) -> Result<()> {
        match &mut self.spool {
            Some(spool) => spool.flush(),
            None => Ok(()),
        }
    }

    /// Document `i`.
    pub fn get(&self, i: usize) -> Result<(Source, usize)> {
        match &self.spool {
            None => Ok(self.memory[i].clone()),
            Some(spool) => spool.get(i),
        }
    }

    /// Every document in order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = Result<(Source, usize)>> + Send + '_> {
        match &self.spool {
            None => Box::new(self.memory.iter().cloned().map(Ok)),
            Some(spool) => Box::new(SpoolIter {
                spool,
                buf: Vec::new(),
                buf_start: 0,
                at: 0,
                read: 0,
            }),
        }
    }

    /// The documents in runs of at most `n`, in order.
    pub fn chunks(&self, n: usize) -> impl Iterator<Item = Result<Vec<(Source, usize)>>> + '_ {
        let mut all = self.iter();
        std::iter::from_fn(move || {
            let mut chunk = Vec::with_capacity(n.min(self.len()));
            for item in all.by_ref() {
                match item {
                    Ok(entry) => chunk.push(entry),
                    Err(e) => return Some(Err(e)),
                }
                if chunk.len() == n {
                    break;
                }
            }
            (!chunk.is_empty()).then_some(Ok(chunk))
        })
    }

    /// A list held in memory, whatever its size (small corpora made by the experiments).
    pub fn from_vec(files: Vec<(Source, usize)>) -> Self {
        FileTable {
            memory: files,
            spool: None,
            spool_after: Some(usize::MAX),
        }
    }

    /// Every document, in memory (for commands that work on small corpora or need them all).
    pub fn to_vec(&self) -> Result<Vec<(Source, usize)>> {
        self.iter().collect()
    }

    /// How many documents each of `labels` labels has.
    pub fn label_counts(&self, labels: usize) -> Result<Vec<usize>> {
        let mut counts = vec![0usize; labels];
        for entry in self.iter() {
            counts[entry?.1] += 1;
        }
        Ok(counts)
    }
}

impl Spool {
    fn push(&mut self, source: &Source, label: usize) -> Result<()> {
        self.pending_index
            .extend_from_slice(&self.end.to_le_bytes());
        let before = self.pending.len();
        encode(source, label, &mut self.pending);
        self.end += (self.pending.len() - before) as u64;
        self.len += 1;
        if self.pending.len() >= BUFFER {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        let dir = self.dir.clone();
        self.records
            .write_all(&self.pending)
            .map_err(|e| spool_error(&dir, e))?;
        self.index
            .write_all(&self.pending_index)
            .map_err(|e| spool_error(&dir, e))?;
        self.pending.clear();
        self.pending_index.clear();
        Ok(())
    }

    fn check_sealed(&self) -> Result<()> {
        if self.pending.is_empty() {
            Ok(())
        } else {
            Err(Error::InvalidSetting(
                "the corpus's file list was read before it was sealed".into(),
            ))
        }
    }

    fn get(&self, i: usize) -> Result<(Source, usize)> {
        self.check_sealed()?;
        let io = |e| spool_error(&self.dir, e);
        if i >= self.len {
            return Err(spool_error(
                &self.dir,
                std::io::Error::other(format!("document {i} of {}", self.len)),
            ));
        }
        let count = if i + 1 < self.len { 2 } else { 1 };
        let mut raw = [0u8; 16];
        read_at(&self.index, &mut raw[..8 * count], 8 * i as u64).map_err(io)?;
        let start = u64::from_le_bytes(raw[..8].try_into().expect("8 bytes"));
        let end = if count == 2 {
            u64::from_le_bytes(raw[8..].try_into().expect("8 bytes"))
        } else {
            self.end
        };
        let mut record = vec![0u8; (end - start) as usize];
        read_at(&self.records, &mut record, start).map_err(io)?;
        decode(&record).map(|(entry, _)| entry).ok_or_else(|| {
            spool_error(
                &self.dir,
                std::io::Error::other(format!("damaged entry {i}")),
            )
        })
    }
}

struct SpoolIter<'a> {
    spool: &'a Spool,
    buf: Vec<u8>,
    /// Where `buf` starts in the records.
    buf_start: u64,
    /// Where the next entry starts.
    at: u64,
    /// Entries read.
    read: usize,
}

impl Iterator for SpoolIter<'_> {
    type Item = Result<(Source, usize)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.read == self.spool.len {
            return None;
        }
        if let Err(e) = self.spool.check_sealed() {
            self.read = self.spool.len;
            return Some(Err(e));
        }
        loop {
            let from = (self.at - self.buf_start) as usize;
            if let Some((entry, n)) = self.buf.get(from..).and_then(decode) {
                self.at += n as u64;
                self.read += 1;
                return Some(Ok(entry));
            }
            // Read on from the next entry: at least a buffer, more for a longer entry.
            let left = self.spool.end - self.at;
            let have = self.buf.len().saturating_sub(from);
            if have as u64 >= left {
                self.read = self.spool.len;
                return Some(Err(spool_error(
                    &self.spool.dir,
                    std::io::Error::other("damaged file list"),
                )));
            }
            let want = left.min(BUFFER.max(2 * have) as u64) as usize;
            self.buf.resize(want, 0);
            if let Err(e) = read_at(&self.spool.records, &mut self.buf, self.at) {
                self.read = self.spool.len;
                return Some(Err(spool_error(&self.spool.dir, e)));
            }
            self.buf_start = self.at;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources() -> Vec<(Source, usize)> {
        (0..1000)
            .map(|i: usize| {
                let path = format!("/corpus/label{}/sub/ƒile-{i:05}.txt", i % 7);
                let span = MboxSpan {
                    offset: i as u64 * 1000,
                    start: i as u64 * 1000 + 40,
                    end: i as u64 * 1000 + 900,
                };
                let source = match i % 4 {
                    0 => Source::file(path),
                    1 => Source::maildir_message(path),
                    2 => Source::mbox_message(path, span),
                    _ => Source::packed_mbox_message(path, span),
                };
                (source, i % 7 * 50)
            })
            .collect()
    }

    #[test]
    fn a_long_list_goes_to_disk_and_reads_back_the_same_in_order_and_by_number() {
        let dir = tempfile::tempdir().unwrap();
        let all = sources();
        let mut table = FileTable::spooling_after(100);
        // The spool's files are unnamed: nothing appears in $TMPDIR (set for the test's
        // process only through the table's directory, checked below by counting).
        for (s, l) in &all {
            table.push(s.clone(), *l).unwrap();
        }
        table.seal().unwrap();
        assert!(table.on_disk());
        assert!(table.memory.is_empty(), "no path is held in memory");
        assert_eq!(table.len(), 1000);
        assert_eq!(table.to_vec().unwrap(), all);
        for i in [999, 0, 500, 101, 99, 100, 998] {
            assert_eq!(table.get(i).unwrap(), all[i], "{i}");
        }
        let chunks: Vec<usize> = table.chunks(300).map(|c| c.unwrap().len()).collect();
        assert_eq!(chunks, [300, 300, 300, 100]);
        assert_eq!(
            table.label_counts(301).unwrap()[50],
            all.iter().filter(|e| e.1 == 50).count()
        );
        // A short list stays in memory.
        let mut short = FileTable::spooling_after(100);
        for (s, l) in all.iter().take(100) {
            short.push(s.clone(), *l).unwrap();
        }
        short.seal().unwrap();
        assert!(!short.on_disk());
        assert_eq!(short.to_vec().unwrap(), all[..100]);
        drop(dir);
    }
}
