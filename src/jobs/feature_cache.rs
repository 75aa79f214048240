//! The feature cache on disk: a corpus featurised once is written to a compact file and read
//! back by position, so that training holds the model and a few bytes per document, not the
//! corpus (issue 20). Vowpal Wabbit streams its cache for the same reason.
//!
//! **Format** (one file per pipeline): a header (magic, the key of what was featurised), then
//! one record per document, in corpus order —
//! `varint label, varint file, varint held-out (0 or 1), varint shard key, varint n, varint k,
//! k × f32 LE value, n × varint bucket (delta to the previous one, the first as it is), then
//! n × u8 (each feature's value as a place in the k values)` when the record has 1 to
//! [`MAX_TABLE`] distinct values, or with k = 0 `n × f32 LE value` after the buckets — then the
//! index (documents + 1 u64 LE: where each record starts, and where the last ends), then a JSON
//! trailer (documents, dimension, where the index starts, the skipped files with their
//! reasons), its length (u64 LE) and an end magic. Values are stored exactly (f32 bits), so a
//! model trained from the cache is byte for byte the one trained in memory. A document's values
//! are its counts' weights over one norm, so it has few distinct values (a 20 Newsgroups post
//! about 5 among 240 features): the table makes a feature's value one byte instead of four.
//! The buckets, sorted, cost one or two bytes each. A 20 Newsgroups post takes about 0.73 KB
//! (1.45 KB in format 3, with every value as f32): half the disk, and half the page cache the
//! shuffled epochs need to stay off the disk.
//!
//! **Reading** is by `pread` into a buffer each reader reuses, never by a memory map (mapped
//! pages count in the resident set): random reads for the shuffled epochs (the record's two
//! index entries, then the record), a read-ahead of [`READ_AHEAD`] bytes of records and
//! [`INDEX_READ_AHEAD`] index entries when the reads go in order. The operating system's page
//! cache keeps the file in otherwise free memory when there is some; the process holds no
//! memory per document: while the cache is written, the index goes to a second unnamed file
//! beside it and is copied behind the records at the end.
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
use crate::jobs::disk::{get_varint, put_varint, read_at};
use crate::jobs::examples::{Example, ExampleReader, ExampleSource};
use crate::text::pipeline::PipelineConfig;

/// The default memory budget of featurised examples before they go to disk.
pub const DEFAULT_MEMORY_BUDGET: u64 = 256 << 20;

/// Bytes read at once when a reader goes through the file in order.
pub const READ_AHEAD: usize = 256 << 10;

/// Index entries held in memory (32 MiB per cache file): a cache of at most this many documents
/// keeps its index in memory, a larger one reads it from the file. A bound, not a cost per
/// document: 8 bytes per document up to about 4 million documents, then nothing.
pub const INDEX_IN_MEMORY: usize = 4 << 20;

/// Index entries read at once when a reader goes through the file in order (32 KiB).
pub const INDEX_READ_AHEAD: usize = 4096;

/// Format 4: a record's values as places in a table of its distinct values (format 3 stored
/// every value as f32), the index in the file (format 1 had none: its offsets were held in
/// memory), and each record's split keys (format 2 had none: the parts were decided from the
/// file list). A file of another format does not match and is featurised again.
const MAGIC: &[u8; 8] = b"CWTXFC\x00\x04";

/// The most distinct values a record keeps in a table (a place takes one byte); a record with
/// more stores every value as f32.
pub const MAX_TABLE: usize = 256;
const END_MAGIC: &[u8; 8] = b"CWTXFCok";

/// The most bytes the choice of settings holds in weight tables at once: below it the
/// candidates train side by side (in parallel, each kept until the winner is known), above it
/// one at a time (512 MiB: 4 candidates of 64 labels at 2^18 buckets). Measured on 2 cores,
/// whole process: 20 Newsgroups (20 labels, 4 × 42 MB) trains 1.21× slower one at a time (in
/// 120 MiB instead of 240), a generated corpus of 100 labels (4 × 210 MB) as fast (0.996×, in
/// about 240 MiB instead of 832), one of 500 labels (4 × 1 GB) faster (7.8 s against 9.2 s,
/// in 1.0 GiB instead of 3.9).
pub const DEFAULT_TABLES_SIDE_BY_SIDE: u64 = 512 << 20;

/// How training holds its data: where featurised examples are kept, and how many weight tables
/// the choice of settings holds at once. Every setting gives the same model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheSettings {
    /// Examples are kept in memory until their estimated size passes this many bytes, then
    /// written to a temporary cache file (0: always on disk).
    pub memory_budget: u64,
    /// Keep the cache files in this directory and use them again when they match the corpus and
    /// the pipeline (always on disk).
    pub dir: Option<PathBuf>,
    /// The choice trains its candidates side by side while their weight tables (labels ×
    /// buckets × 8 bytes each) take at most this many bytes together; beyond, one at a time,
    /// keeping none and training the winner's again (one more epoch over four fifths), so that
    /// a corpus of many labels needs one table instead of one per candidate.
    pub tables_side_by_side: u64,
}

impl Default for CacheSettings {
    fn default() -> Self {
        CacheSettings {
            memory_budget: DEFAULT_MEMORY_BUDGET,
            dir: None,
            tables_side_by_side: DEFAULT_TABLES_SIDE_BY_SIDE,
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

/// Appends the record of an example. `table` and `places` are scratch space: its distinct
/// values' bits and each feature's place among them.
fn encode(e: &Example, out: &mut Vec<u8>, table: &mut Vec<u32>, places: &mut Vec<u8>) {
    put_varint(out, e.label as u64);
    put_varint(out, e.file as u64);
    put_varint(out, u64::from(e.split.held_out));
    put_varint(out, u64::from(e.split.shard_key));
    put_varint(out, e.x.nnz() as u64);
    // The distinct values in order of first appearance, compared by their bits (so -0.0 and
    // 0.0, or two NaNs, are never merged); none past MAX_TABLE of them.
    table.clear();
    places.clear();
    for v in e.x.data() {
        let bits = v.to_bits();
        let place = match table.iter().position(|&t| t == bits) {
            Some(place) => place,
            None if table.len() == MAX_TABLE => {
                table.clear();
                break;
            }
            None => {
                table.push(bits);
                table.len() - 1
            }
        };
        places.push(place as u8);
    }
    put_varint(out, table.len() as u64);
    for &bits in table.iter() {
        out.extend_from_slice(&bits.to_le_bytes());
    }
    let mut previous = 0u32;
    for &j in e.x.indices() {
        put_varint(out, u64::from(j - previous));
        previous = j;
    }
    if table.is_empty() {
        for &v in e.x.data() {
            out.extend_from_slice(&v.to_le_bytes());
        }
    } else {
        out.extend_from_slice(places);
    }
}

/// Reads a record into `e`, reusing its vector's arrays; its length in bytes.
fn decode(bytes: &[u8], dimension: usize, e: &mut Example) -> Option<usize> {
    let mut at = 0;
    e.label = usize::try_from(get_varint(bytes, &mut at)?).ok()?;
    e.file = usize::try_from(get_varint(bytes, &mut at)?).ok()?;
    e.split.held_out = match get_varint(bytes, &mut at)? {
        0 => false,
        1 => true,
        _ => return None,
    };
    e.split.shard_key = u32::try_from(get_varint(bytes, &mut at)?).ok()?;
    let n = usize::try_from(get_varint(bytes, &mut at)?).ok()?;
    if n > dimension {
        return None;
    }
    let k = usize::try_from(get_varint(bytes, &mut at)?).ok()?;
    if k > MAX_TABLE.min(n) {
        return None;
    }
    let table = bytes.get(at..at + 4 * k)?;
    at += 4 * k;
    let x = std::mem::replace(&mut e.x, FeatureVector::empty(dimension));
    let (mut indices, mut data) = x.into_raw_storage();
    indices.clear();
    data.clear();
    // Empty arrays (an example read ahead) get their exact size, not a doubling's spare room;
    // a damaged count is refused first (every feature takes at least a byte), not allocated.
    if n > bytes.len() - at {
        return None;
    }
    indices.reserve_exact(n);
    data.reserve_exact(n);
    let mut j = 0u64;
    for _ in 0..n {
        j += get_varint(bytes, &mut at)?;
        indices.push(u32::try_from(j).ok()?);
    }
    if k == 0 {
        let values = bytes.get(at..at + 4 * n)?;
        data.extend(
            values
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))),
        );
        at += 4 * n;
    } else {
        for &place in bytes.get(at..at + n)? {
            let b = table.get(4 * usize::from(place)..4 * usize::from(place) + 4)?;
            data.push(f32::from_le_bytes(b.try_into().expect("4 bytes")));
        }
        at += n;
    }
    e.x = FeatureVector::try_new(dimension, indices, data).ok()?;
    Some(at)
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
    /// Where the index starts (where the records end).
    index: u64,
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
    let mut last: Option<(PathBuf, (u64, u128))> = None;
    for h in &mut hashers {
        env!("CARGO_PKG_VERSION").hash(h);
        pipeline.hash(h);
        corpus.root.hash(h);
        corpus.labels.hash(h);
        corpus.groups.hash(h);
        labels.hash(h);
        corpus.files.len().hash(h);
    }
    for entry in corpus.files.iter() {
        let (source, label) = entry?;
        let path = source.path();
        let stat = match &last {
            Some((p, stat)) if p == path => *stat,
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
                last = Some((path.to_path_buf(), stat));
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
    /// A file to keep at `path`, given its name there when complete: until then unnamed
    /// (`O_TMPFILE`, Linux) or, where the file system cannot, named `.cwtext-cache-PID-…` in
    /// the same directory.
    Kept {
        named: Option<tempfile::TempPath>,
        path: PathBuf,
    },
}

/// Writes a cache file, record by record.
pub struct CacheWriter {
    out: BufWriter<File>,
    target: Target,
    /// Where each record starts, in an unnamed file beside the cache until the end.
    index: BufWriter<File>,
    documents: usize,
    position: u64,
    dimension: usize,
    scratch: Vec<u8>,
    /// The distinct values of the record being encoded, and its features' places among them.
    table: Vec<u32>,
    places: Vec<u8>,
}

impl CacheWriter {
    /// A cache in an unnamed temporary file in `dir`.
    pub fn temporary(dir: &Path, key: &str, dimension: usize) -> Result<Self> {
        let file = tempfile::tempfile_in(dir)
            .map_err(|e| cache_error(dir, format!("cannot make the cache file: {e}")))?;
        CacheWriter::start(
            file,
            dir,
            Target::Temporary(dir.to_path_buf()),
            key,
            dimension,
        )
    }

    /// A cache file to keep at `path`. It gets its name only when complete, so that a run that
    /// is interrupted (Ctrl-C, SIGTERM, `kill -9`, a crash) leaves nothing in the directory: on
    /// Linux it is written unnamed (`O_TMPFILE`) and linked in at the end; elsewhere, or on a
    /// file system without `O_TMPFILE`, it is written as `.cwtext-cache-PID-…` beside `path`,
    /// and such files of processes that no longer run are removed by the next run.
    pub fn kept(path: &Path, key: &str, dimension: usize) -> Result<Self> {
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)
            .map_err(|e| cache_error(dir, format!("cannot make the cache directory: {e}")))?;
        remove_dead_leftovers(dir);
        let (file, named) = match unnamed_in(dir) {
            Some(file) => (file, None),
            None => {
                let (file, temp) = tempfile::Builder::new()
                    .prefix(&format!("{LEFTOVER_PREFIX}{}-", std::process::id()))
                    .tempfile_in(dir)
                    .map_err(|e| cache_error(dir, format!("cannot make the cache file: {e}")))?
                    .into_parts();
                (file, Some(temp))
            }
        };
        CacheWriter::start(
            file,
            dir,
            Target::Kept {
                named,
                path: path.to_path_buf(),
            },
            key,
            dimension,
        )
    }

    fn start(file: File, dir: &Path, target: Target, key: &str, dimension: usize) -> Result<Self> {
        let index = tempfile::tempfile_in(dir)
            .map_err(|e| cache_error(dir, format!("cannot make the cache's index file: {e}")))?;
        let mut writer = CacheWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            target,
            index: BufWriter::with_capacity(64 << 10, index),
            documents: 0,
            position: 0,
            dimension,
            scratch: Vec::new(),
            table: Vec::new(),
            places: Vec::new(),
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
            Target::Kept { path, .. } => path,
        }
    }

    /// Where the bytes being written go, for errors.
    fn written_path(&self) -> PathBuf {
        match &self.target {
            Target::Temporary(dir) => dir.clone(),
            Target::Kept {
                named: Some(temp), ..
            } => temp.to_path_buf(),
            Target::Kept { path, .. } => path.clone(),
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        if let Err(e) = self.out.write_all(bytes) {
            return Err(cache_error(
                &self.written_path(),
                format!("cannot write the cache: {e}"),
            ));
        }
        self.position += bytes.len() as u64;
        Ok(())
    }

    /// Notes that a record starts at the current position.
    fn index_here(&mut self) -> Result<()> {
        if let Err(e) = self.index.write_all(&self.position.to_le_bytes()) {
            return Err(cache_error(
                &self.written_path(),
                format!("cannot write the cache's index: {e}"),
            ));
        }
        Ok(())
    }

    /// Appends an example.
    pub fn push(&mut self, e: &Example) -> Result<()> {
        self.index_here()?;
        self.documents += 1;
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        encode(e, &mut scratch, &mut self.table, &mut self.places);
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
        // The index behind the records, the end of the last record as its last entry.
        self.index_here()?;
        let index_start = self.position;
        let copied = self
            .index
            .flush()
            .and_then(|()| {
                let file = self.index.get_mut();
                std::io::Seek::rewind(file)?;
                file.try_clone()
            })
            .map_err(|e| {
                cache_error(
                    &self.written_path(),
                    format!("cannot read the cache's index back: {e}"),
                )
            })?;
        let mut reader = std::io::BufReader::with_capacity(64 << 10, copied);
        let copied = std::io::copy(&mut reader, &mut self.out).map_err(|e| {
            cache_error(&self.written_path(), format!("cannot write the cache: {e}"))
        })?;
        debug_assert_eq!(copied, 8 * (self.documents as u64 + 1));
        self.position += copied;
        let trailer = Trailer {
            documents: self.documents,
            dimension: self.dimension,
            index: index_start,
            skipped: skipped.iter().filter_map(SkippedFile::of).collect(),
        };
        let json = serde_json::to_vec(&trailer).expect("the trailer serialises");
        self.write(&json)?;
        self.write(&(json.len() as u64).to_le_bytes())?;
        self.write(END_MAGIC)?;
        let CacheWriter {
            out,
            target,
            documents,
            position,
            dimension,
            ..
        } = self;
        let written = |target: &Target| match target {
            Target::Temporary(dir) => dir.clone(),
            Target::Kept {
                named: Some(temp), ..
            } => temp.to_path_buf(),
            Target::Kept { path, .. } => path.clone(),
        };
        let file = out.into_inner().map_err(|e| {
            cache_error(
                &written(&target),
                format!("cannot write the cache: {}", e.error()),
            )
        })?;
        let (path, kept) = match target {
            Target::Temporary(dir) => (dir, false),
            Target::Kept { named, path } => {
                file.sync_all()
                    .map_err(|e| cache_error(&path, format!("cannot write the cache: {e}")))?;
                match named {
                    Some(temp) => temp
                        .persist(&path)
                        .map_err(|e| cache_error(&path, format!("cannot keep the cache: {e}")))?,
                    None => link_unnamed(&file, &path)
                        .map_err(|e| cache_error(&path, format!("cannot keep the cache: {e}")))?,
                }
                (path, true)
            }
        };
        let mut cache = DiskCache {
            file,
            path,
            documents,
            index: index_start,
            index_memory: None,
            dimension,
            bytes: position,
            kept,
            reused: false,
        };
        cache.hold_index()?;
        Ok(cache)
    }
}

/// The name a kept cache file has while it is written where it cannot be unnamed, followed by
/// the writer's process id.
pub const LEFTOVER_PREFIX: &str = ".cwtext-cache-";

/// An unnamed file in `dir` (Linux's `O_TMPFILE`), or `None` where there is none.
#[cfg(target_os = "linux")]
fn unnamed_in(dir: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o644)
        .custom_flags(libc::O_TMPFILE)
        .open(dir)
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn unnamed_in(_dir: &Path) -> Option<File> {
    None
}

/// Gives the unnamed `file` the name `path`, replacing what is there: linked under a
/// temporary name beside it (`linkat` of `/proc/self/fd/N`, which needs no privilege), then
/// renamed over it, so that `path` is always either the old file or the complete new one.
#[cfg(target_os = "linux")]
fn link_unnamed(file: &File, path: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::AsRawFd;
    let dir = path.parent().unwrap_or(Path::new("."));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let temp = dir.join(format!(
        "{LEFTOVER_PREFIX}{}-{nanos:08x}",
        std::process::id()
    ));
    let from = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    let to = CString::new(temp.as_os_str().as_bytes())?;
    // SAFETY: both are NUL-terminated paths that live across the call.
    let linked = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if linked != 0 {
        return Err(std::io::Error::last_os_error());
    }
    std::fs::rename(&temp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

#[cfg(not(target_os = "linux"))]
fn link_unnamed(_file: &File, _path: &Path) -> std::io::Result<()> {
    unreachable!("no unnamed files outside Linux")
}

/// Removes the `.cwtext-cache-PID-…` files in `dir` of processes that no longer run (a run
/// interrupted where the cache could not be unnamed); a file of a running process (another
/// run writing the same directory) is left alone.
fn remove_dead_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(LEFTOVER_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !process_runs(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether process `pid` runs (on other systems than Unix: assumed, so nothing is removed).
fn process_runs(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return true;
        };
        // SAFETY: signal 0 checks the process exists and sends nothing.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        alive || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// A finished cache file, read by position.
pub struct DiskCache {
    file: File,
    path: PathBuf,
    documents: usize,
    /// Where the index starts: `documents + 1` u64 LE.
    index: u64,
    /// The index, when it is at most [`INDEX_IN_MEMORY`] entries (a shuffled read then costs
    /// one `pread`, not two).
    index_memory: Option<Vec<u64>>,
    dimension: usize,
    bytes: u64,
    kept: bool,
    reused: bool,
}

impl DiskCache {
    /// Reads the index into memory when it is small enough.
    fn hold_index(&mut self) -> Result<()> {
        let entries = self.documents + 1;
        if entries > INDEX_IN_MEMORY {
            return Ok(());
        }
        let mut raw = vec![0u8; 8 * entries];
        read_at(&self.file, &mut raw, self.index)
            .map_err(|e| cache_error(&self.path, format!("cannot read the cache: {e}")))?;
        self.index_memory = Some(
            raw.chunks_exact(8)
                .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
                .collect(),
        );
        Ok(())
    }

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
        // The index must fit between the header and the trailer.
        let index_bytes = 8 * (trailer.documents as u64 + 1);
        if trailer.index < header || trailer.index.checked_add(index_bytes) != Some(end) {
            return Err(cache_error(
                path,
                "damaged cache file: the index does not match the trailer",
            ));
        }
        let mut cache = DiskCache {
            file,
            path: path.to_path_buf(),
            documents: trailer.documents,
            index: trailer.index,
            index_memory: None,
            dimension: trailer.dimension,
            bytes: size,
            kept: true,
            reused: true,
        };
        cache.hold_index()?;
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
            documents: self.documents,
            kept: self.kept,
            reused: self.reused,
        }
    }
}

impl ExampleSource for DiskCache {
    fn len(&self) -> usize {
        self.documents
    }

    fn reads_ahead(&self) -> bool {
        true
    }

    fn reader(&self) -> Box<dyn ExampleReader + '_> {
        Box::new(DiskReader {
            cache: self,
            buf: Vec::new(),
            buf_start: 0,
            entries: Vec::new(),
            entries_start: 0,
            last: None,
            example: Example {
                x: FeatureVector::empty(self.dimension),
                label: 0,
                file: 0,
                split: Default::default(),
            },
        })
    }
}

struct DiskReader<'a> {
    cache: &'a DiskCache,
    buf: Vec<u8>,
    buf_start: u64,
    /// Index entries read, from entry `entries_start` on.
    entries: Vec<u64>,
    entries_start: usize,
    last: Option<usize>,
    example: Example,
}

impl DiskReader<'_> {
    /// Reads record `index` into the buffer; where it is in the buffer.
    fn record(&mut self, index: usize) -> Result<std::ops::Range<usize>> {
        let cache = self.cache;
        let read_error =
            |e: std::io::Error| cache_error(&cache.path, format!("cannot read the cache: {e}"));
        if index >= cache.documents {
            return Err(cache_error(
                &cache.path,
                format!("record {index} of {}", cache.documents),
            ));
        }
        // In order: read ahead; shuffled: the record alone.
        let sequential = index > 0 && self.last == Some(index - 1);
        let (start, end) = match &cache.index_memory {
            Some(entries) => (entries[index], entries[index + 1]),
            None => {
                let have = index >= self.entries_start
                    && index + 1 < self.entries_start + self.entries.len();
                if !have {
                    let count = if sequential {
                        INDEX_READ_AHEAD.min(cache.documents + 1 - index).max(2)
                    } else {
                        2
                    };
                    let mut raw = vec![0u8; 8 * count];
                    read_at(&cache.file, &mut raw, cache.index + 8 * index as u64)
                        .map_err(read_error)?;
                    self.entries.clear();
                    self.entries.extend(
                        raw.chunks_exact(8)
                            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))),
                    );
                    self.entries_start = index;
                }
                (
                    self.entries[index - self.entries_start],
                    self.entries[index + 1 - self.entries_start],
                )
            }
        };
        if start > end || end > cache.index {
            return Err(cache_error(
                &cache.path,
                format!("damaged cache file: index entry {index}"),
            ));
        }
        let inside = start >= self.buf_start && end <= self.buf_start + self.buf.len() as u64;
        if !inside {
            let want = if sequential {
                (end - start)
                    .max(READ_AHEAD as u64)
                    .min(cache.index - start)
            } else {
                end - start
            };
            self.buf.resize(want as usize, 0);
            read_at(&cache.file, &mut self.buf, start).map_err(read_error)?;
            self.buf_start = start;
        }
        self.last = Some(index);
        let from = (start - self.buf_start) as usize;
        let to = (end - self.buf_start) as usize;
        Ok(from..to)
    }
}

/// Decodes record `index` of `cache` from `bytes` (exactly the record) into `out`.
fn decode_record(cache: &DiskCache, index: usize, bytes: &[u8], out: &mut Example) -> Result<()> {
    match decode(bytes, cache.dimension, out) {
        Some(n) if n == bytes.len() => Ok(()),
        _ => Err(cache_error(
            &cache.path,
            format!("damaged cache file: record {index}"),
        )),
    }
}

impl ExampleReader for DiskReader<'_> {
    fn get(&mut self, index: usize) -> Result<&Example> {
        let at = self.record(index)?;
        decode_record(self.cache, index, &self.buf[at], &mut self.example)?;
        Ok(&self.example)
    }

    fn read_into(&mut self, index: usize, out: &mut Example) -> Result<()> {
        let at = self.record(index)?;
        decode_record(self.cache, index, &self.buf[at], out)
    }
}

/// Gives the heap's free pages back to the system. The examples held in memory up to the
/// budget are two small allocations each; freed when they go to the cache file, glibc keeps
/// their pages (other allocations sit between them, so the heap cannot shrink from the top),
/// and the resident set stayed up to a whole memory budget above what the rest of the run
/// needs, measured from outside as `/usr/bin/time -v` does: 20 Newsgroups with a 64 MB budget
/// peaked at 287 MB against 212 MB straight to disk (208 MB with this). Also called when the
/// choice's losing candidates drop their weight tables. `malloc_trim` releases free pages
/// anywhere in the heap. Other allocators return such memory on their own or are not glibc:
/// nothing to do.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system; it is thread-safe and
    // touches no memory the program holds.
    unsafe {
        libc::malloc_trim(0);
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

    fn reads_ahead(&self) -> bool {
        matches!(self, Featurised::Disk(_))
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

    /// Moves the examples held into `writer`, which takes every later one, and gives the
    /// memory they held back to the system ([`release_freed_memory`]).
    pub(crate) fn spill(&mut self, mut writer: CacheWriter) -> Result<()> {
        if let Store::Memory(examples, _) = self {
            for e in examples.drain(..) {
                writer.push(&e)?;
            }
        }
        *self = Store::Disk(Box::new(writer));
        release_freed_memory();
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
                    split: crate::jobs::corpus::SplitKeys {
                        held_out: i % 5 == 2,
                        shard_key: (i as u32).wrapping_mul(0x9e37_79b9),
                    },
                }
            })
            .collect()
    }

    fn same(a: &Example, b: &Example) -> bool {
        a.label == b.label
            && a.file == b.file
            && a.split == b.split
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
        drop(reader);
        // The index read from the file, as a cache of more than INDEX_IN_MEMORY documents does.
        assert!(cache.index_memory.is_some());
        let mut cache = cache;
        cache.index_memory = None;
        for_each(&cache, |i, e| assert!(same(e, &examples[i]), "{i}")).unwrap();
        let mut reader = cache.reader();
        for i in [699, 0, 350, 351, 5, 698, 128, 127, 698, 699] {
            assert!(same(reader.get(i).unwrap(), &examples[i]), "{i}");
        }
    }

    #[test]
    fn a_damaged_record_stops_a_read_ahead_visit_with_the_file_and_record_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("features.cwc");
        let examples = examples();
        let mut writer = CacheWriter::kept(&path, "key", (1 << 26) + 1).unwrap();
        for e in &examples {
            writer.push(e).unwrap();
        }
        let cache = writer.finish(&[]).unwrap();
        let index = cache.index_memory.clone().unwrap();
        drop(cache);
        // Record 400's bytes all 0xff: its first varint never ends.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[index[400] as usize..index[401] as usize].fill(0xff);
        std::fs::write(&path, bytes).unwrap();
        let (cache, _) = DiskCache::open(&path, "key").unwrap().unwrap();
        assert!(cache.reads_ahead());
        let mut seen = Vec::new();
        let e = crate::jobs::examples::visit(&cache, (0..examples.len()).rev(), |i, e| {
            assert!(same(e, &examples[i]), "{i}");
            seen.push(i);
            true
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains(&path.display().to_string()), "{e}");
        assert!(e.contains("damaged cache file: record 400"), "{e}");
        let wanted: Vec<usize> = (401..examples.len()).rev().collect();
        assert_eq!(seen, wanted);
    }

    /// Encodes and decodes one record.
    fn round_trip(e: &Example) -> (usize, Example) {
        let (mut out, mut table, mut places) = (Vec::new(), Vec::new(), Vec::new());
        encode(e, &mut out, &mut table, &mut places);
        let mut back = Example::placeholder();
        assert_eq!(decode(&out, e.x.dim(), &mut back), Some(out.len()));
        // Read into an empty example (as read ahead, one new example per record), its arrays
        // take its features and no spare room.
        let mut fresh = Example::placeholder();
        decode(&out, e.x.dim(), &mut fresh).unwrap();
        let (indices, data) = fresh.x.into_raw_storage();
        assert_eq!(indices.capacity(), e.x.nnz());
        assert_eq!(data.capacity(), e.x.nnz());
        // Every shorter prefix is refused, never misread.
        for cut in 0..out.len() {
            let mut b = back.clone();
            assert!(
                decode(&out[..cut], e.x.dim(), &mut b).is_none(),
                "cut at {cut}"
            );
        }
        (out.len(), back)
    }

    #[test]
    fn a_record_keeps_every_values_bits_with_or_without_its_table() {
        let example = |data: Vec<f32>| {
            let indices = (0..data.len() as u32).map(|k| k * 1_000 + 7).collect();
            Example {
                x: FeatureVector::new(1 << 20, indices, data),
                label: 3,
                file: 9,
                split: Default::default(),
            }
        };
        let cases = [
            Vec::new(),
            vec![0.5],
            // Zeros of both signs and NaNs of two payloads are kept apart.
            vec![
                0.0,
                -0.0,
                f32::NAN,
                f32::from_bits(0x7fc0_0001),
                0.0,
                f32::INFINITY,
            ],
            // Exactly MAX_TABLE distinct values (the last place is 255), repeated.
            (0..2 * MAX_TABLE)
                .map(|k| (k % MAX_TABLE) as f32 / 7.0)
                .collect(),
            // One more: no table, every value as f32.
            (0..=MAX_TABLE).map(|k| k as f32 / 7.0).collect(),
        ];
        for data in cases {
            let e = example(data);
            let (bytes, back) = round_trip(&e);
            assert!(same(&back, &e), "{} values", e.x.nnz());
            let distinct = {
                let mut bits: Vec<u32> = e.x.data().iter().map(|v| v.to_bits()).collect();
                bits.sort_unstable();
                bits.dedup();
                bits.len()
            };
            // Four one-byte fields, the count n, the table's size k (0 without one) and its
            // values, the gaps (the first 1 byte, the others 1,000: 2 bytes), then a byte per
            // value with a table or four without.
            let varint = |v: usize| if v < 128 { 1 } else { 2 };
            let n = e.x.nnz();
            let k = if distinct <= MAX_TABLE { distinct } else { 0 };
            let gaps = if n == 0 { 0 } else { 1 + 2 * (n - 1) };
            let values = if k > 0 { n } else { 4 * n };
            assert_eq!(
                bytes,
                4 + varint(n) + varint(k) + 4 * k + gaps + values,
                "{n} values"
            );
        }
    }

    #[test]
    fn a_post_takes_about_three_bytes_a_feature() {
        // A 20 Newsgroups post as the default pipeline makes it: 240 buckets among 2^18 and
        // log-tf values over the document's norm (200 words once, 30 twice, 10 three times).
        let mut rng = 12345u64;
        let mut buckets: Vec<u32> = (0..240)
            .map(|_| {
                rng = rng
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (rng >> 46) as u32
            })
            .collect();
        buckets.sort_unstable();
        buckets.dedup();
        let counts = |k: usize| 1 + usize::from(k >= 200) + usize::from(k >= 230);
        let raw: Vec<f32> = (0..buckets.len())
            .map(|k| 1.0 + (counts(k) as f32).ln())
            .collect();
        let norm = raw.iter().map(|v| v * v).sum::<f32>().sqrt();
        let n = buckets.len();
        let e = Example {
            x: FeatureVector::new(1 << 18, buckets, raw.iter().map(|v| v / norm).collect()),
            label: 19,
            file: 150_000,
            split: Default::default(),
        };
        let (bytes, back) = round_trip(&e);
        assert!(same(&back, &e));
        // Format 3 took 6 bytes a feature (a 2-byte gap and an f32); now 3 and a table of 3.
        assert!(bytes <= 3 * n + 12 + 12, "{bytes} bytes for {n} features");
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
    fn a_kept_cache_has_no_name_until_it_is_complete_and_dead_runs_leftovers_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("features.cwc");
        let names = || {
            let mut n: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            n.sort();
            n
        };
        // What a run killed while writing left where files cannot be unnamed: a dead
        // process's file goes, a running one's (this test's) stays.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let dead_name = format!("{LEFTOVER_PREFIX}{dead}-abc123");
        let live_name = format!("{LEFTOVER_PREFIX}{}-def456", std::process::id());
        std::fs::write(dir.path().join(&dead_name), "x").unwrap();
        std::fs::write(dir.path().join(&live_name), "x").unwrap();
        let mut writer = CacheWriter::kept(&path, "key", 64).unwrap();
        for e in examples().iter().take(3) {
            let e = Example {
                x: FeatureVector::new(64, vec![e.file as u32 % 64], vec![1.0]),
                ..e.clone()
            };
            writer.push(&e).unwrap();
        }
        if cfg!(target_os = "linux") {
            // Being written: no name (O_TMPFILE).
            assert_eq!(names(), std::slice::from_ref(&live_name));
        }
        writer.finish(&[]).unwrap();
        assert_eq!(names(), [live_name, "features.cwc".to_string()]);
        assert!(DiskCache::open(&path, "key").unwrap().is_some());
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
}
