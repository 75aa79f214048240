//! The feature cache on disk: a corpus featurised once is written to a compact file and read
//! back by position, so that training holds the model and a few bytes per document, not the
//! corpus (issue 20). Vowpal Wabbit streams its cache for the same reason.
//!
//! **Format** (one file per pipeline): a header (magic, the key of what was featurised), then
//! one record per document, in corpus order —
//! `varint label, varint file, varint n, n × varint bucket (delta to the previous one, the
//! first as it is), n × f32 LE value` — then a JSON trailer (documents, dimension, the skipped
//! files with their reasons), its length (u64 LE) and an end magic. Values are stored exactly
//! (f32), so a model trained from the cache is byte for byte the one trained in memory; the
//! buckets, sorted, cost one or two bytes each. A 20 Newsgroups post takes about 1.3 KB.
//!
//! **Reading** is by `pread` into a buffer each reader reuses, never by a memory map (mapped
//! pages count in the resident set): random reads for the shuffled epochs, a read-ahead of
//! [`READ_AHEAD`] bytes when the reads go in order. The operating system's page cache keeps
//! the file in otherwise free memory when there is some; the process itself holds
//! [`Offsets`]: 4 bytes per document, plus 8 per [`OFFSET_BLOCK`] documents.
//!
//! **Where it lives**: [`CacheSettings`]. By default the examples stay in memory until their
//! estimated size passes a budget, then everything goes into an unnamed temporary file (made
//! by `tempfile`: on Linux with `O_TMPFILE` or unlinked as soon as it is made), which the
//! system removes when the process ends however it ends, Ctrl-C and `kill -9` included. With a
//! cache directory, each pipeline's file is kept there under a name from the pipeline, and used
//! again only when its key matches: the cwtext version, the pipeline, the labels, and every
//! document's key, size and modification time, so that a changed corpus is featurised again.

use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::features::FeatureVector;
use crate::jobs::corpus::LabelledCorpus;
use crate::jobs::examples::{Example, ExampleReader, ExampleSource};
use crate::text::pipeline::PipelineConfig;

/// The default memory budget of featurised examples before they go to disk.
pub const DEFAULT_MEMORY_BUDGET: u64 = 256 << 20;

/// Bytes read at once when a reader goes through the file in order.
pub const READ_AHEAD: usize = 256 << 10;

/// Documents per absolute offset in [`Offsets`] (the others are 4-byte offsets from it): a
/// block of this many records must stay under 4 GiB, 32 MiB a record.
pub const OFFSET_BLOCK: usize = 128;

const MAGIC: &[u8; 8] = b"CWTXFC\x00\x01";
const END_MAGIC: &[u8; 8] = b"CWTXFCok";

/// Where featurised examples are kept while training.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheSettings {
    /// Examples are kept in memory until their estimated size passes this many bytes, then
    /// written to a temporary cache file (0: always on disk).
    pub memory_budget: u64,
    /// Keep the cache files in this directory and use them again when they match the corpus and
    /// the pipeline (always on disk).
    pub dir: Option<PathBuf>,
}

impl Default for CacheSettings {
    fn default() -> Self {
        CacheSettings {
            memory_budget: DEFAULT_MEMORY_BUDGET,
            dir: None,
        }
    }
}

/// Where one pipeline's examples were kept, for the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheReport {
    /// The cache file (kept) or the directory its unnamed file lived in (temporary).
    pub path: PathBuf,
    pub bytes: u64,
    pub documents: usize,
    /// Kept after the run (in a cache directory).
    pub kept: bool,
    /// Used again from an earlier run.
    pub reused: bool,
}

fn cache_error(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::FeatureCache {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

/// The estimated memory of an example held in memory (its vector's two arrays, the headers
/// and the allocator's rounding).
pub fn estimated_bytes(e: &Example) -> u64 {
    8 * e.x.nnz() as u64 + 96
}

/// Byte offsets of the records: one u64 per [`OFFSET_BLOCK`] documents and a u32 from it per
/// document.
#[derive(Debug, Default)]
pub struct Offsets {
    bases: Vec<u64>,
    relative: Vec<u32>,
    /// Where the last record ends.
    end: u64,
}

impl Offsets {
    fn push(&mut self, start: u64, path: &Path) -> Result<()> {
        if self.relative.len().is_multiple_of(OFFSET_BLOCK) {
            self.bases.push(start);
        }
        let base = *self.bases.last().expect("pushed above");
        let relative = u32::try_from(start - base).map_err(|_| {
            cache_error(
                path,
                format!("{OFFSET_BLOCK} documents take more than 4 GiB of features"),
            )
        })?;
        self.relative.push(relative);
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.relative.len()
    }

    pub fn is_empty(&self) -> bool {
        self.relative.is_empty()
    }

    /// Record `i`'s bytes.
    fn range(&self, i: usize) -> (u64, u64) {
        let start = |i: usize| self.bases[i / OFFSET_BLOCK] + u64::from(self.relative[i]);
        let end = if i + 1 < self.len() {
            start(i + 1)
        } else {
            self.end
        };
        (start(i), end)
    }

    /// The bytes the offsets take in memory.
    pub fn memory(&self) -> usize {
        self.bases.capacity() * 8 + self.relative.capacity() * 4
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

/// Appends the record of an example.
fn encode(e: &Example, out: &mut Vec<u8>) {
    put_varint(out, e.label as u64);
    put_varint(out, e.file as u64);
    put_varint(out, e.x.nnz() as u64);
    let mut previous = 0u32;
    for &j in e.x.indices() {
        put_varint(out, u64::from(j - previous));
        previous = j;
    }
    for &v in e.x.data() {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Reads a record into `e`, reusing its vector's arrays; its length in bytes.
fn decode(bytes: &[u8], dimension: usize, e: &mut Example) -> Option<usize> {
    let mut at = 0;
    e.label = usize::try_from(get_varint(bytes, &mut at)?).ok()?;
    e.file = usize::try_from(get_varint(bytes, &mut at)?).ok()?;
    let n = usize::try_from(get_varint(bytes, &mut at)?).ok()?;
    if n > dimension {
        return None;
    }
    let x = std::mem::replace(&mut e.x, FeatureVector::empty(dimension));
    let (mut indices, mut data) = x.into_raw_storage();
    indices.clear();
    data.clear();
    let mut j = 0u64;
    for _ in 0..n {
        j += get_varint(bytes, &mut at)?;
        indices.push(u32::try_from(j).ok()?);
    }
    let values = bytes.get(at..at + 4 * n)?;
    data.extend(
        values
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))),
    );
    at += 4 * n;
    e.x = FeatureVector::try_new(dimension, indices, data).ok()?;
    Some(at)
}

/// Reads `buf.len()` bytes at `offset`.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let (mut done, mut buf) = (0u64, buf);
        while !buf.is_empty() {
            let n = std::os::windows::fs::FileExt::seek_read(file, buf, offset + done)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            done += n as u64;
            buf = &mut buf[n..];
        }
        Ok(())
    }
}

/// A skipped file as the trailer keeps it.
#[derive(serde::Serialize, serde::Deserialize)]
struct SkippedFile {
    kind: String,
    path: PathBuf,
    message: String,
}

impl SkippedFile {
    fn of(e: &Error) -> Option<Self> {
        let (kind, path, message) = match e {
            Error::Io { path, error } => ("io", path, error.to_string()),
            Error::Binary { path, reason } => ("binary", path, reason.clone()),
            Error::EmptyDocument { path } => ("empty", path, String::new()),
            _ => return None,
        };
        Some(SkippedFile {
            kind: kind.into(),
            path: path.clone(),
            message,
        })
    }

    fn error(self) -> Error {
        match self.kind.as_str() {
            "binary" => Error::Binary {
                path: self.path,
                reason: self.message,
            },
            "empty" => Error::EmptyDocument { path: self.path },
            _ => Error::io(self.path, std::io::Error::other(self.message)),
        }
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Trailer {
    documents: usize,
    dimension: usize,
    skipped: Vec<SkippedFile>,
}

/// The key a cache file is checked against: what was featurised (the corpus's documents with
/// their sizes and modification times, the labels as they are numbered in the records) and how
/// (the pipeline, the cwtext version).
pub fn cache_key(
    corpus: &LabelledCorpus,
    labels: &[usize],
    pipeline: &PipelineConfig,
) -> Result<String> {
    // Two SipHash-1-3 with fixed keys: a changed corpus or pipeline gives another key with a
    // chance of 2^-128 of not doing so; a key that changes for no reason (another Rust's
    // hasher) only costs featurising again.
    let mut hashers = [
        std::hash::DefaultHasher::new(),
        std::hash::DefaultHasher::new(),
    ];
    hashers[1].write(b"second");
    let pipeline = serde_json::to_string(pipeline)
        .map_err(|e| Error::InvalidSetting(format!("pipeline: {e}")))?;
    let mut last: Option<(&Path, (u64, u128))> = None;
    for h in &mut hashers {
        env!("CARGO_PKG_VERSION").hash(h);
        pipeline.hash(h);
        corpus.root.hash(h);
        corpus.labels.hash(h);
        labels.hash(h);
        corpus.files.len().hash(h);
    }
    for (source, label) in &corpus.files {
        let path = source.path();
        let stat = match last {
            Some((p, stat)) if p == path => stat,
            _ => {
                // A file that cannot be read now is a skipped document when featurised.
                let stat = std::fs::metadata(path).map_or((u64::MAX, 0), |m| {
                    let time = m
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map_or(0, |d| d.as_nanos());
                    (m.len(), time)
                });
                last = Some((path, stat));
                stat
            }
        };
        let name = source.to_string();
        for h in &mut hashers {
            name.hash(h);
            label.hash(h);
            stat.hash(h);
        }
    }
    Ok(format!(
        "cwtext {} {:016x}{:016x}",
        env!("CARGO_PKG_VERSION"),
        hashers[0].finish(),
        hashers[1].finish()
    ))
}

/// The name of a pipeline's cache file in a cache directory.
pub fn file_name(pipeline: &PipelineConfig) -> String {
    let json = serde_json::to_string(pipeline).unwrap_or_default();
    let mut h = std::hash::DefaultHasher::new();
    json.hash(&mut h);
    format!("features-{:016x}.cwc", h.finish())
}

/// Where a writer puts its file.
enum Target {
    /// An unnamed file in this directory: gone when the process ends.
    Temporary(PathBuf),
    /// A named temporary file, renamed to this path when complete.
    Kept(tempfile::TempPath, PathBuf),
}

/// Writes a cache file, record by record.
pub struct CacheWriter {
    out: BufWriter<File>,
    target: Target,
    offsets: Offsets,
    position: u64,
    dimension: usize,
    scratch: Vec<u8>,
}

impl CacheWriter {
    /// A cache in an unnamed temporary file in `dir`.
    pub fn temporary(dir: &Path, key: &str, dimension: usize) -> Result<Self> {
        let file = tempfile::tempfile_in(dir)
            .map_err(|e| cache_error(dir, format!("cannot make the cache file: {e}")))?;
        CacheWriter::start(file, Target::Temporary(dir.to_path_buf()), key, dimension)
    }

    /// A cache file to keep at `path` (written under a temporary name beside it, then renamed).
    pub fn kept(path: &Path, key: &str, dimension: usize) -> Result<Self> {
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)
            .map_err(|e| cache_error(dir, format!("cannot make the cache directory: {e}")))?;
        let (file, temp) = tempfile::Builder::new()
            .prefix(".cwtext-cache-")
            .tempfile_in(dir)
            .map_err(|e| cache_error(dir, format!("cannot make the cache file: {e}")))?
            .into_parts();
        CacheWriter::start(file, Target::Kept(temp, path.to_path_buf()), key, dimension)
    }

    fn start(file: File, target: Target, key: &str, dimension: usize) -> Result<Self> {
        let mut writer = CacheWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            target,
            offsets: Offsets::default(),
            position: 0,
            dimension,
            scratch: Vec::new(),
        };
        let mut header = MAGIC.to_vec();
        header.extend_from_slice(&(key.len() as u32).to_le_bytes());
        header.extend_from_slice(key.as_bytes());
        writer.write(&header)?;
        Ok(writer)
    }

    /// The file (kept) or directory (temporary) the cache goes to.
    pub fn path(&self) -> &Path {
        match &self.target {
            Target::Temporary(dir) => dir,
            Target::Kept(_, path) => path,
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        if let Err(e) = self.out.write_all(bytes) {
            let path = match &self.target {
                Target::Temporary(dir) => dir.clone(),
                Target::Kept(temp, _) => temp.to_path_buf(),
            };
            return Err(cache_error(&path, format!("cannot write the cache: {e}")));
        }
        self.position += bytes.len() as u64;
        Ok(())
    }

    /// Appends an example.
    pub fn push(&mut self, e: &Example) -> Result<()> {
        let start = self.position;
        let path = self.path().to_path_buf();
        self.offsets.push(start, &path)?;
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        encode(e, &mut scratch);
        let written = self.write(&scratch);
        self.scratch = scratch;
        written
    }

    /// The bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.position
    }

    /// Writes the trailer and makes the cache readable (a kept one under its name).
    pub fn finish(mut self, skipped: &[Error]) -> Result<DiskCache> {
        self.offsets.end = self.position;
        let trailer = Trailer {
            documents: self.offsets.len(),
            dimension: self.dimension,
            skipped: skipped.iter().filter_map(SkippedFile::of).collect(),
        };
        let json = serde_json::to_vec(&trailer).expect("the trailer serialises");
        self.write(&json)?;
        self.write(&(json.len() as u64).to_le_bytes())?;
        self.write(END_MAGIC)?;
        let CacheWriter {
            out,
            target,
            offsets,
            position,
            dimension,
            ..
        } = self;
        let file = out.into_inner().map_err(|e| {
            let path = match &target {
                Target::Temporary(dir) => dir.clone(),
                Target::Kept(temp, _) => temp.to_path_buf(),
            };
            cache_error(&path, format!("cannot write the cache: {}", e.error()))
        })?;
        let (path, kept) = match target {
            Target::Temporary(dir) => (dir, false),
            Target::Kept(temp, path) => {
                file.sync_all()
                    .map_err(|e| cache_error(&temp, format!("cannot write the cache: {e}")))?;
                temp.persist(&path)
                    .map_err(|e| cache_error(&path, format!("cannot keep the cache: {e}")))?;
                (path, true)
            }
        };
        Ok(DiskCache {
            file,
            path,
            offsets,
            dimension,
            bytes: position,
            kept,
            reused: false,
        })
    }
}

/// A finished cache file, read by position.
pub struct DiskCache {
    file: File,
    path: PathBuf,
    offsets: Offsets,
    dimension: usize,
    bytes: u64,
    kept: bool,
    reused: bool,
}

impl DiskCache {
    /// Opens a kept cache file when it is complete and its key is `key`, with the skipped files
    /// its featurisation found; `Ok(None)` when there is none or it does not match (stale,
    /// another pipeline, or incomplete), which the caller replaces.
    pub fn open(path: &Path, key: &str) -> Result<Option<(DiskCache, Vec<Error>)>> {
        let file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(cache_error(path, format!("cannot open the cache: {e}"))),
        };
        let read = |file: &File, buf: &mut [u8], at: u64| {
            read_at(file, buf, at)
                .map_err(|e| cache_error(path, format!("cannot read the cache: {e}")))
        };
        let size = file
            .metadata()
            .map_err(|e| cache_error(path, format!("cannot read the cache: {e}")))?
            .len();
        let header = MAGIC.len() as u64 + 4 + key.len() as u64;
        if size < header + 16 {
            return Ok(None);
        }
        let mut head = vec![0u8; header as usize];
        read(&file, &mut head, 0)?;
        let mut expected = MAGIC.to_vec();
        expected.extend_from_slice(&(key.len() as u32).to_le_bytes());
        expected.extend_from_slice(key.as_bytes());
        if head != expected {
            return Ok(None);
        }
        let mut tail = [0u8; 16];
        read(&file, &mut tail, size - 16)?;
        if &tail[8..] != END_MAGIC {
            return Ok(None);
        }
        let json_len = u64::from_le_bytes(tail[..8].try_into().expect("8 bytes"));
        let Some(end) = (size - 16).checked_sub(json_len).filter(|&e| e >= header) else {
            return Ok(None);
        };
        let mut json = vec![0u8; json_len as usize];
        read(&file, &mut json, end)?;
        let Ok(trailer) = serde_json::from_slice::<Trailer>(&json) else {
            return Ok(None);
        };
        // The offsets, from the records themselves (one pass in order).
        let mut cache = DiskCache {
            file,
            path: path.to_path_buf(),
            offsets: Offsets::default(),
            dimension: trailer.dimension,
            bytes: size,
            kept: true,
            reused: true,
        };
        let damaged = |what: &str| cache_error(path, format!("damaged cache file: {what}"));
        let mut example = Example {
            x: FeatureVector::empty(trailer.dimension),
            label: 0,
            file: 0,
        };
        let (mut buf, mut buf_start) = (Vec::new(), header);
        let mut at = header;
        while at < end {
            cache.offsets.push(at, path)?;
            loop {
                let available = buf.get((at - buf_start) as usize..).unwrap_or(&[]);
                if let Some(n) = decode(available, cache.dimension, &mut example) {
                    at += n as u64;
                    break;
                }
                // The record runs past the buffer: read on from its start, unless the buffer
                // already reached the trailer.
                if buf_start + buf.len() as u64 >= end {
                    return Err(damaged("a record runs into the trailer"));
                }
                let want = (end - at).min(READ_AHEAD.max(2 * available.len()) as u64);
                buf.resize(want as usize, 0);
                read(&cache.file, &mut buf, at)?;
                buf_start = at;
            }
        }
        if at != end || cache.offsets.len() != trailer.documents {
            return Err(damaged("the records do not match the trailer"));
        }
        cache.offsets.end = end;
        let skipped = trailer
            .skipped
            .into_iter()
            .map(SkippedFile::error)
            .collect();
        Ok(Some((cache, skipped)))
    }

    /// What the summary says about it.
    pub fn report(&self) -> CacheReport {
        CacheReport {
            path: self.path.clone(),
            bytes: self.bytes,
            documents: self.offsets.len(),
            kept: self.kept,
            reused: self.reused,
        }
    }

    /// The bytes its offsets take in memory.
    pub fn memory(&self) -> usize {
        self.offsets.memory()
    }
}

impl ExampleSource for DiskCache {
    fn len(&self) -> usize {
        self.offsets.len()
    }

    fn reader(&self) -> Box<dyn ExampleReader + '_> {
        Box::new(DiskReader {
            cache: self,
            buf: Vec::new(),
            buf_start: 0,
            last: None,
            example: Example {
                x: FeatureVector::empty(self.dimension),
                label: 0,
                file: 0,
            },
        })
    }
}

struct DiskReader<'a> {
    cache: &'a DiskCache,
    buf: Vec<u8>,
    buf_start: u64,
    last: Option<usize>,
    example: Example,
}

impl ExampleReader for DiskReader<'_> {
    fn get(&mut self, index: usize) -> Result<&Example> {
        let cache = self.cache;
        let (start, end) = cache.offsets.range(index);
        let inside = start >= self.buf_start && end <= self.buf_start + self.buf.len() as u64;
        if !inside {
            // In order: read ahead; shuffled: the record alone.
            let sequential = index > 0 && self.last == Some(index - 1);
            let want = if sequential {
                (end - start)
                    .max(READ_AHEAD as u64)
                    .min(cache.offsets.end - start)
            } else {
                end - start
            };
            self.buf.resize(want as usize, 0);
            read_at(&cache.file, &mut self.buf, start)
                .map_err(|e| cache_error(&cache.path, format!("cannot read the cache: {e}")))?;
            self.buf_start = start;
        }
        self.last = Some(index);
        let from = (start - self.buf_start) as usize;
        let to = (end - self.buf_start) as usize;
        match decode(&self.buf[from..to], cache.dimension, &mut self.example) {
            Some(n) if n == to - from => Ok(&self.example),
            _ => Err(cache_error(
                &cache.path,
                format!("damaged cache file: record {index}"),
            )),
        }
    }
}

/// Featurised examples, in memory or in a cache file.
pub enum Featurised {
    Memory(Vec<Example>),
    Disk(DiskCache),
}

impl Featurised {
    /// The cache file's report, when on disk.
    pub fn report(&self) -> Option<CacheReport> {
        match self {
            Featurised::Memory(_) => None,
            Featurised::Disk(cache) => Some(cache.report()),
        }
    }

    /// The examples, when in memory.
    pub fn into_memory(self) -> Option<Vec<Example>> {
        match self {
            Featurised::Memory(examples) => Some(examples),
            Featurised::Disk(_) => None,
        }
    }
}

impl ExampleSource for Featurised {
    fn len(&self) -> usize {
        match self {
            Featurised::Memory(examples) => examples.len(),
            Featurised::Disk(cache) => cache.len(),
        }
    }

    fn reader(&self) -> Box<dyn ExampleReader + '_> {
        match self {
            Featurised::Memory(examples) => examples.reader(),
            Featurised::Disk(cache) => cache.reader(),
        }
    }
}

/// Where one pipeline's examples go while the corpus is featurised: memory, until the budget
/// says disk.
pub(crate) enum Store {
    Memory(Vec<Example>, u64),
    Disk(Box<CacheWriter>),
}

impl Store {
    pub(crate) fn push(&mut self, e: Example) -> Result<()> {
        match self {
            Store::Memory(examples, bytes) => {
                *bytes += estimated_bytes(&e);
                examples.push(e);
                Ok(())
            }
            Store::Disk(writer) => writer.push(&e),
        }
    }

    /// The estimated memory of the examples held.
    pub(crate) fn memory(&self) -> u64 {
        match self {
            Store::Memory(_, bytes) => *bytes,
            Store::Disk(_) => 0,
        }
    }

    /// Moves the examples held into `writer`, which takes every later one.
    pub(crate) fn spill(&mut self, mut writer: CacheWriter) -> Result<()> {
        if let Store::Memory(examples, _) = self {
            for e in examples.drain(..) {
                writer.push(&e)?;
            }
        }
        *self = Store::Disk(Box::new(writer));
        Ok(())
    }

    pub(crate) fn finish(self, skipped: &[Error]) -> Result<Featurised> {
        match self {
            Store::Memory(examples, _) => Ok(Featurised::Memory(examples)),
            Store::Disk(writer) => Ok(Featurised::Disk(writer.finish(skipped)?)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::examples::for_each;

    fn examples() -> Vec<Example> {
        // Buckets from 0 to the top of a 2^26 space, values that are not round in binary,
        // labels and files beyond one varint byte.
        (0..700)
            .map(|i: usize| {
                let n = 1 + i % 40;
                let indices: Vec<u32> = (0..n).map(|k| (k * k * 40_000 + i) as u32).collect();
                let data: Vec<f32> = (0..n)
                    .map(|k| (k as f32 + 0.1) / (i as f32 + 3.0))
                    .collect();
                Example {
                    x: FeatureVector::new((1 << 26) + 1, indices, data),
                    label: i % 300,
                    file: i * 1000,
                }
            })
            .collect()
    }

    fn same(a: &Example, b: &Example) -> bool {
        a.label == b.label
            && a.file == b.file
            && a.x.dim() == b.x.dim()
            && a.x.indices() == b.x.indices()
            && a.x
                .data()
                .iter()
                .map(|v| v.to_bits())
                .eq(b.x.data().iter().map(|v| v.to_bits()))
    }

    #[test]
    fn a_temporary_cache_reads_back_every_example_exactly_in_any_order() {
        let dir = tempfile::tempdir().unwrap();
        let examples = examples();
        let mut writer = CacheWriter::temporary(dir.path(), "key", (1 << 26) + 1).unwrap();
        for e in &examples {
            writer.push(e).unwrap();
        }
        let cache = writer.finish(&[]).unwrap();
        // Unnamed: nothing left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert_eq!(cache.len(), examples.len());
        for_each(&cache, |i, e| assert!(same(e, &examples[i]), "{i}")).unwrap();
        let mut reader = cache.reader();
        for i in [699, 0, 350, 351, 5, 698, 128, 127] {
            assert!(same(reader.get(i).unwrap(), &examples[i]), "{i}");
        }
    }

    #[test]
    fn a_kept_cache_opens_again_only_with_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("features.cwc");
        let examples = examples();
        let mut writer = CacheWriter::kept(&path, "key one", (1 << 26) + 1).unwrap();
        for e in &examples {
            writer.push(e).unwrap();
        }
        let skipped = [Error::EmptyDocument {
            path: "a/b.txt".into(),
        }];
        let written = writer.finish(&skipped).unwrap().report();
        assert!(written.kept && !written.reused);
        assert_eq!(written.bytes, std::fs::metadata(&path).unwrap().len());
        // Only the cache file is left.
        assert_eq!(
            std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1
        );
        assert!(DiskCache::open(&path, "key two").unwrap().is_none());
        let (cache, skipped) = DiskCache::open(&path, "key one").unwrap().unwrap();
        assert!(cache.report().reused);
        assert_eq!(skipped.len(), 1);
        assert_eq!(
            skipped[0].to_string(),
            "a/b.txt: empty document: no words found"
        );
        for_each(&cache, |i, e| assert!(same(e, &examples[i]), "{i}")).unwrap();
        // A truncated file is not used.
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(DiskCache::open(&path, "key one").unwrap().is_none());
    }

    #[test]
    fn an_unwritable_directory_is_an_error_naming_it() {
        let missing = Path::new("/nonexistent/cwtext-cache");
        let e = CacheWriter::temporary(missing, "k", 8)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.starts_with("/nonexistent/cwtext-cache: feature cache: "),
            "{e}"
        );
    }

    #[test]
    fn varints_round_trip() {
        let mut out = Vec::new();
        let values = [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX];
        values.iter().for_each(|&v| put_varint(&mut out, v));
        let mut at = 0;
        for &v in &values {
            assert_eq!(get_varint(&out, &mut at), Some(v));
        }
        assert_eq!(at, out.len());
        assert_eq!(get_varint(&[0x80], &mut 0), None);
    }
}
