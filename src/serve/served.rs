//! One model as `cwtext serve` holds it: in memory behind a read-write lock (classification
//! reads, corrections write), a few pipelines to classify with, and for a model file a writer
//! thread that owns its journal. The writer takes every queued correction at once, appends them
//! all with one sync (group commit), applies them in order and only then answers; it rewrites
//! the model file (a snapshot) every N corrections or T seconds and on shutdown, and notices
//! when another program replaced the file (hot reload).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use super::journal::{self, Entry, Journal};
use super::ServeError;
use crate::integrations::lock::ModelLock;
use crate::integrations::shelf::ShelfModel;
use crate::jobs::online::{featurize_correction, learn_features, Corrections};
use crate::model::Model;
use crate::text::pipeline::Pipeline;

/// When snapshots are taken and how often the file is checked for a replacement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Durability {
    /// A snapshot after this many corrections (at least 1).
    pub snapshot_every: usize,
    /// A snapshot when corrections have waited this long.
    pub snapshot_interval: Duration,
    /// How often the model file is checked for a replacement.
    pub reload_check: Duration,
}

impl Default for Durability {
    fn default() -> Self {
        Durability {
            snapshot_every: 1_000,
            snapshot_interval: Duration::from_secs(10),
            reload_check: Duration::from_secs(1),
        }
    }
}

/// The loaded model and the pipelines made for it.
pub struct Loaded {
    pub model: Model,
    pipelines: Mutex<Vec<Pipeline>>,
}

impl Loaded {
    fn new(model: Model) -> Loaded {
        Loaded {
            model,
            pipelines: Mutex::new(Vec::new()),
        }
    }

    /// Runs `f` with the model and one of its pipelines (made when none is free).
    pub fn with_pipeline<R>(&self, f: impl FnOnce(&Model, &mut Pipeline) -> R) -> crate::Result<R> {
        let free = self
            .pipelines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let mut pipeline = match free {
            Some(p) => p,
            None => Pipeline::new(self.model.pipeline())?,
        };
        let r = f(&self.model, &mut pipeline);
        self.pipelines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(pipeline);
        Ok(r)
    }
}

/// Counters of one model, read by `/models` and `/metrics`.
#[derive(Debug, Default)]
pub struct Stats {
    pub corrections: AtomicU64,
    pub journal_corrections: AtomicU64,
    pub journal_bytes: AtomicU64,
    pub snapshots: AtomicU64,
    /// Unix time of the last snapshot (0: none yet).
    pub last_snapshot: AtomicU64,
    pub reloads: AtomicU64,
    /// The model file was replaced while corrections were pending: learning is suspended.
    pub conflict: AtomicBool,
    /// The CRC-32 of the model file as the server last loaded or wrote it.
    pub file_crc: AtomicU32,
}

/// What an acknowledged correction did.
#[derive(Debug, Clone)]
pub struct Learned {
    pub corrections: Corrections,
    /// Messages of an mbox skipped (as `learn` skips them), with why.
    pub skipped: Vec<String>,
    /// Corrections in the journal, waiting for the next snapshot.
    pub journal_corrections: usize,
    /// The model's count of documents trained and learned, this correction's included: it
    /// orders acknowledged corrections across restarts (it is saved in the model file).
    pub documents_trained: usize,
}

/// Why a correction was not acknowledged.
#[derive(Debug, Clone, PartialEq)]
pub enum LearnError {
    /// The document is not text (binary): nothing was changed.
    NotText(String),
    /// The document cannot be learned from (no word, an empty label): nothing was changed.
    Unlearnable(String),
    /// A built-in model: nowhere to keep corrections.
    ReadOnly(String),
    /// The model file was replaced while corrections were pending.
    Conflict(String),
    /// The journal could not be written: nothing was changed.
    Unavailable(String),
}

impl std::fmt::Display for LearnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LearnError::NotText(m)
            | LearnError::Unlearnable(m)
            | LearnError::ReadOnly(m)
            | LearnError::Conflict(m)
            | LearnError::Unavailable(m) => f.write_str(m),
        }
    }
}

/// What a reload check found.
#[derive(Debug, Clone, PartialEq)]
pub enum Reload {
    Unchanged,
    Reloaded {
        crc: u32,
    },
    /// Not reloaded, with why (logged).
    Refused(String),
}

type Reply<T> = tokio::sync::oneshot::Sender<T>;

/// A queued correction: label, document, where to answer.
type Queued = (String, Vec<u8>, Reply<Result<Learned, LearnError>>);

enum Command {
    Learn {
        label: String,
        document: Vec<u8>,
        reply: Reply<Result<Learned, LearnError>>,
    },
    Reload {
        reply: Reply<Reload>,
    },
    Shutdown {
        reply: std::sync::mpsc::Sender<Result<(), String>>,
    },
}

/// One served model.
pub struct ServedModel {
    pub name: String,
    /// The model file (None: a built-in model, read-only).
    pub file: Option<PathBuf>,
    /// The file's canonical path, found once at start: requests may name the model by it
    /// (what `cwtext classify -m FILE --server URL` sends).
    pub canonical: Option<PathBuf>,
    state: RwLock<Loaded>,
    writer: Mutex<Option<Sender<Command>>>,
    pub stats: Stats,
}

/// A file's identity: another program's `train -o` renames a new file over it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: i128,
}

impl Identity {
    fn of(path: &Path) -> std::io::Result<Identity> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path)?;
        Ok(Identity {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        })
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What opening a model file did (replayed corrections, a torn record dropped).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Opened {
    pub replayed: usize,
    pub torn_bytes: u64,
    /// Corrections a previous snapshot had already written (a crash before the journal reset).
    pub already_in_model: usize,
}

impl ServedModel {
    /// A built-in model: classification only.
    pub fn shelf(name: &str, shelf: &ShelfModel) -> Result<Arc<ServedModel>, ServeError> {
        let model = shelf.load(false)?;
        Ok(Arc::new(ServedModel {
            name: name.to_string(),
            file: None,
            canonical: None,
            state: RwLock::new(Loaded::new(model)),
            writer: Mutex::new(None),
            stats: Stats::default(),
        }))
    }

    /// Opens a model file to serve: loads it, replays a journal left behind (refusing one that
    /// belongs to another model file), snapshots what it replayed, and starts its writer.
    pub fn open(
        name: &str,
        path: &Path,
        durability: Durability,
    ) -> Result<(Arc<ServedModel>, Opened), ServeError> {
        let lock = ModelLock::acquire(path)?;
        let mut model = Model::read(path)?;
        let crc = model
            .fingerprint()
            .expect("a model read from a file has its checksum");
        let identity = Identity::of(path).map_err(|e| ServeError::io(path, e))?;
        let jpath = journal::path_for(path);
        let mut pipeline = Pipeline::new(model.pipeline())?;
        let mut opened = Opened::default();
        let journal = match journal::read(&jpath)? {
            None => Journal::create(&jpath, crc)?,
            Some(contents) => {
                opened.torn_bytes = contents.torn;
                let after_mark = contents
                    .entries
                    .iter()
                    .rposition(|e| *e == Entry::Snapshot { crc });
                let replay: &[Entry] = if contents.base == crc {
                    &contents.entries
                } else if let Some(i) = after_mark {
                    opened.already_in_model = contents.entries[..i]
                        .iter()
                        .filter(|e| matches!(e, Entry::Correction { .. }))
                        .count();
                    &contents.entries[i + 1..]
                } else if contents.corrections() == 0 {
                    &[]
                } else {
                    return Err(ServeError::Refused(format!(
                        "{}: holds {} acknowledged correction(s) for the model file with crc32:{:08x}, but {} is now crc32:{crc:08x} (replaced by another program, e.g. `cwtext train -o`, while the server was down); they are never merged into another model. To keep them, put back the model they belong to and start again; to drop them, move {} away",
                        jpath.display(),
                        contents.corrections(),
                        contents.base,
                        path.display(),
                        jpath.display()
                    )));
                };
                for entry in replay {
                    if let Entry::Correction { label, document } = entry {
                        // The same code path as the correction when it was acknowledged.
                        let docs = featurize_correction(&mut pipeline, document).map_err(|e| {
                            ServeError::Journal {
                                path: jpath.clone(),
                                message: format!("a journaled correction cannot be replayed: {e}"),
                            }
                        })?;
                        learn_features(&mut model, docs.features, label)?;
                        opened.replayed += 1;
                    }
                }
                if contents.base == crc && contents.torn == 0 {
                    Journal::reopen(&jpath, &contents)?
                } else if opened.replayed > 0 {
                    // The journal stays as it is until the snapshot below has renamed the
                    // model into place (its mark names the new file).
                    let mut j = Journal::reopen(&jpath, &contents)?;
                    if contents.base != crc {
                        // Only the corrections after the mark are in memory and not in the file.
                        j = rebase(
                            &jpath,
                            crc,
                            &contents.entries[after_mark.map_or(0, |i| i + 1)..],
                        )?;
                    }
                    j
                } else {
                    Journal::create(&jpath, crc)?
                }
            }
        };
        let served = Arc::new(ServedModel {
            name: name.to_string(),
            file: Some(path.to_path_buf()),
            canonical: std::fs::canonicalize(path).ok(),
            state: RwLock::new(Loaded::new(model)),
            writer: Mutex::new(None),
            stats: Stats::default(),
        });
        served.stats.file_crc.store(crc, Ordering::Relaxed);
        let mut writer = Writer {
            served: served.clone(),
            path: path.to_path_buf(),
            journal,
            pipeline,
            identity,
            conflict: None,
            failed: None,
            durability,
            last_snapshot: Instant::now(),
            last_check: Instant::now(),
        };
        writer.publish();
        drop(lock);
        if opened.replayed > 0 {
            writer.snapshot()?;
        }
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name(format!("cwtext-journal-{name}"))
            .spawn(move || writer.run(rx))
            .map_err(|e| ServeError::io(path, e))?;
        *served.writer.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
        Ok((served, opened))
    }

    /// Runs `f` with the current model and a pipeline for it.
    pub fn with_model<R>(&self, f: impl FnOnce(&Model, &mut Pipeline) -> R) -> crate::Result<R> {
        let state = self.state.read().unwrap_or_else(|e| e.into_inner());
        state.with_pipeline(f)
    }

    fn send(&self, command: Command) -> bool {
        match &*self.writer.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(tx) => tx.send(command).is_ok(),
            None => false,
        }
    }

    /// Learns `document` as `label`: acknowledged once it is in the journal, synced, and in
    /// the model.
    pub async fn learn(&self, label: String, document: Vec<u8>) -> Result<Learned, LearnError> {
        if self.file.is_none() {
            return Err(LearnError::ReadOnly(format!(
                "{} is a built-in model and read-only: serve a copy of it (`cwtext serve -m {}=FILE`) to learn",
                self.name, self.name
            )));
        }
        let (reply, answer) = tokio::sync::oneshot::channel();
        if !self.send(Command::Learn {
            label,
            document,
            reply,
        }) {
            return Err(LearnError::Unavailable(format!(
                "{}: the server is shutting down",
                self.name
            )));
        }
        answer.await.unwrap_or_else(|_| {
            Err(LearnError::Unavailable(format!(
                "{}: the journal writer stopped",
                self.name
            )))
        })
    }

    /// Checks now whether the model file was replaced, and reloads it if it may.
    pub async fn reload(&self) -> Reload {
        let (reply, answer) = tokio::sync::oneshot::channel();
        if !self.send(Command::Reload { reply }) {
            return Reload::Unchanged;
        }
        answer.await.unwrap_or(Reload::Unchanged)
    }

    /// Finishes the queued corrections, snapshots and stops the writer (blocking).
    pub fn shutdown(&self) -> Result<(), String> {
        let tx = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(tx) = tx else { return Ok(()) };
        let (reply, answer) = std::sync::mpsc::channel();
        if tx.send(Command::Shutdown { reply }).is_err() {
            return Err(format!("{}: the journal writer had stopped", self.name));
        }
        answer
            .recv()
            .unwrap_or_else(|_| Err(format!("{}: the journal writer stopped", self.name)))
    }
}

/// A new journal for the model file `base` holding `entries` (the corrections not in it).
fn rebase(path: &Path, base: u32, entries: &[Entry]) -> Result<Journal, ServeError> {
    let mut j = Journal::create(path, base)?;
    let corrections: Vec<Entry> = entries
        .iter()
        .filter(|e| matches!(e, Entry::Correction { .. }))
        .cloned()
        .collect();
    if !corrections.is_empty() {
        j.append(&corrections)?;
    }
    Ok(j)
}

/// The single writer of one model file and its journal.
struct Writer {
    served: Arc<ServedModel>,
    path: PathBuf,
    journal: Journal,
    pipeline: Pipeline,
    /// The file as the server last loaded or wrote it.
    identity: Identity,
    /// A replacement refused because corrections were pending.
    conflict: Option<Identity>,
    /// A replacement that did not load (logged once).
    failed: Option<Identity>,
    durability: Durability,
    last_snapshot: Instant,
    last_check: Instant,
}

/// Corrections taken from the queue at once, at most.
const MAX_GROUP: usize = 4096;

impl Writer {
    fn run(mut self, rx: Receiver<Command>) {
        let mut queued: Option<Command> = None;
        loop {
            let next = match queued.take() {
                Some(c) => Some(c),
                None => match rx.recv_timeout(self.wait()) {
                    Ok(c) => Some(c),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => {
                        let _ = self.snapshot();
                        return;
                    }
                },
            };
            match next {
                Some(Command::Learn {
                    label,
                    document,
                    reply,
                }) => {
                    let mut group = vec![(label, document, reply)];
                    while group.len() < MAX_GROUP {
                        match rx.try_recv() {
                            Ok(Command::Learn {
                                label,
                                document,
                                reply,
                            }) => group.push((label, document, reply)),
                            Ok(other) => {
                                queued = Some(other);
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                    self.commit(group);
                }
                Some(Command::Reload { reply }) => {
                    let _ = reply.send(self.check_reload());
                }
                Some(Command::Shutdown { reply }) => {
                    let result = self.snapshot().map_err(|e| e.to_string());
                    let _ = reply.send(result);
                    return;
                }
                None => {}
            }
            self.housekeeping();
        }
    }

    /// How long to wait for the next command before housekeeping.
    fn wait(&self) -> Duration {
        let check = self
            .durability
            .reload_check
            .saturating_sub(self.last_check.elapsed());
        let snapshot = if self.journal.corrections() > 0 {
            self.durability
                .snapshot_interval
                .saturating_sub(self.last_snapshot.elapsed())
        } else {
            Duration::MAX
        };
        check.min(snapshot).max(Duration::from_millis(1))
    }

    fn housekeeping(&mut self) {
        if self.last_check.elapsed() >= self.durability.reload_check {
            self.check_reload();
        }
        let pending = self.journal.corrections();
        if pending > 0
            && self.conflict.is_none()
            && (pending >= self.durability.snapshot_every
                || self.last_snapshot.elapsed() >= self.durability.snapshot_interval)
        {
            if let Err(e) = self.snapshot() {
                log::error!("{}: snapshot failed: {e}", self.served.name);
                // Try again at the next interval rather than at once.
                self.last_snapshot = Instant::now();
            }
        }
    }

    fn publish(&self) {
        let s = &self.served.stats;
        s.journal_corrections
            .store(self.journal.corrections() as u64, Ordering::Relaxed);
        s.journal_bytes
            .store(self.journal.bytes(), Ordering::Relaxed);
        s.conflict.store(self.conflict.is_some(), Ordering::Relaxed);
    }

    fn conflict_message(&self) -> String {
        format!(
            "{} was replaced by another program while {} correction(s) were waiting in {}: the new model is not loaded and the corrections are not merged into it; learning is suspended. Stop the server (the journal is kept) and either put back the old model to keep the corrections or move the journal away to drop them",
            self.path.display(),
            self.journal.corrections(),
            self.journal.path().display()
        )
    }

    /// Journals a group of corrections with one sync, applies them in order, answers each.
    fn commit(&mut self, group: Vec<Queued>) {
        let mut accepted = Vec::with_capacity(group.len());
        let mut entries = Vec::with_capacity(group.len());
        for (label, document, reply) in group {
            if self.conflict.is_some() {
                let _ = reply.send(Err(LearnError::Conflict(self.conflict_message())));
                continue;
            }
            // Checked before the journal: a correction journaled and then refused by learn
            // would be refused again at every replay, and the model would not open.
            let new_label = {
                let state = self.served.state.read().unwrap_or_else(|e| e.into_inner());
                state.model.labels().iter().all(|l| *l != label)
            };
            if let Some(refusal) = crate::model::label_refusal(&label).filter(|_| new_label) {
                let _ = reply.send(Err(LearnError::Unlearnable(format!(
                    "{refusal}; nothing was learned"
                ))));
                continue;
            }
            match featurize_correction(&mut self.pipeline, &document) {
                Ok(docs) => {
                    accepted.push((label.clone(), docs, reply));
                    entries.push(Entry::Correction { label, document });
                }
                Err(e) => {
                    let _ = reply.send(Err(match e {
                        crate::Error::Binary { .. } => {
                            LearnError::NotText(format!("{e}: the model was not changed"))
                        }
                        crate::Error::EmptyDocument { .. } => LearnError::Unlearnable(format!(
                            "{e}: nothing to learn from it, the model was not changed"
                        )),
                        e => LearnError::Unlearnable(format!("{e}: the model was not changed")),
                    }));
                }
            }
        }
        if accepted.is_empty() {
            return;
        }
        if let Err(e) = self.journal.append(&entries) {
            log::error!("{}: {e}", self.served.name);
            for (_, _, reply) in accepted {
                let _ = reply.send(Err(LearnError::Unavailable(format!(
                    "the correction could not be made durable ({e}); the model was not changed"
                ))));
            }
            return;
        }
        let pending = self.journal.corrections();
        let mut state = self.served.state.write().unwrap_or_else(|e| e.into_inner());
        let mut answers = Vec::with_capacity(accepted.len());
        for (label, docs, reply) in accepted {
            let skipped = docs.skipped.iter().map(|e| e.to_string()).collect();
            let result = learn_features(&mut state.model, docs.features, &label)
                .map(|corrections| Learned {
                    corrections,
                    skipped,
                    journal_corrections: pending,
                    documents_trained: state.model.header.training.documents,
                })
                .map_err(|e| LearnError::Unavailable(e.to_string()));
            answers.push((reply, result));
        }
        drop(state);
        self.served
            .stats
            .corrections
            .fetch_add(answers.len() as u64, Ordering::Relaxed);
        self.publish();
        for (reply, result) in answers {
            let _ = reply.send(result);
        }
    }

    /// Rewrites the model file from memory (atomically, with a mark in the journal first), then
    /// starts an empty journal. Nothing to do without pending corrections.
    fn snapshot(&mut self) -> Result<(), ServeError> {
        if self.journal.corrections() == 0 {
            return Ok(());
        }
        if self.conflict.is_some() {
            let message = self.conflict_message();
            log::error!("{}: no snapshot: {message}", self.served.name);
            return Err(ServeError::Refused(message));
        }
        let _lock = ModelLock::acquire(&self.path)?;
        // Under the lock no other cwtext renames a model over the file: it must still be the
        // one the journal applies to.
        let now = Identity::of(&self.path).ok();
        if now != Some(self.identity) {
            self.conflict = now;
            self.publish();
            let message = self.conflict_message();
            log::error!("{}: {message}", self.served.name);
            return Err(ServeError::Refused(message));
        }
        let state = self.served.state.read().unwrap_or_else(|e| e.into_inner());
        let journal = &mut self.journal;
        let path = &self.path;
        let crc = state.model.save_then(path, |crc| {
            journal
                .append(&[Entry::Snapshot { crc }])
                .map_err(|e| crate::Error::io(path, std::io::Error::other(e.to_string())))
        })?;
        drop(state);
        journal::sync_dir(&self.path)?;
        self.journal = Journal::create(&journal::path_for(&self.path), crc)?;
        self.identity = Identity::of(&self.path).map_err(|e| ServeError::io(&self.path, e))?;
        self.last_snapshot = Instant::now();
        let s = &self.served.stats;
        s.snapshots.fetch_add(1, Ordering::Relaxed);
        s.last_snapshot.store(unix_now(), Ordering::Relaxed);
        s.file_crc.store(crc, Ordering::Relaxed);
        self.publish();
        Ok(())
    }

    /// Reloads the model file when another program replaced it and no correction is pending.
    fn check_reload(&mut self) -> Reload {
        self.last_check = Instant::now();
        let Ok(now) = Identity::of(&self.path) else {
            return Reload::Unchanged;
        };
        if now == self.identity {
            return Reload::Unchanged;
        }
        if self.conflict == Some(now) {
            return Reload::Refused(self.conflict_message());
        }
        if self.journal.corrections() > 0 {
            self.conflict = Some(now);
            self.publish();
            let message = self.conflict_message();
            log::error!("{}: {message}", self.served.name);
            return Reload::Refused(message);
        }
        let lock = match ModelLock::acquire(&self.path) {
            Ok(l) => l,
            Err(e) => return Reload::Refused(e.to_string()),
        };
        // The file as it is before it is read: a program that ignores the lock (`cp` writes in
        // place) may change it while it is read, and then the next check sees a change again.
        let identity = Identity::of(&self.path).unwrap_or(now);
        let loaded = Model::read(&self.path).and_then(|m| {
            let p = Pipeline::new(m.pipeline())?;
            Ok((m, p))
        });
        let (model, pipeline) = match loaded {
            Ok(x) => x,
            Err(e) => {
                let message = format!(
                    "{}: the replaced model does not load, still serving the previous one: {e} (a file still being written is read again when it changes)",
                    self.path.display()
                );
                if self.failed != Some(now) {
                    log::error!("{}: {message}", self.served.name);
                    self.failed = Some(now);
                }
                return Reload::Refused(message);
            }
        };
        let crc = model
            .fingerprint()
            .expect("a model read from a file has its checksum");
        match Journal::create(self.journal.path(), crc) {
            Ok(j) => self.journal = j,
            Err(e) => return Reload::Refused(e.to_string()),
        }
        drop(lock);
        *self.served.state.write().unwrap_or_else(|e| e.into_inner()) = Loaded::new(model);
        self.pipeline = pipeline;
        self.identity = identity;
        self.conflict = None;
        self.failed = None;
        let s = &self.served.stats;
        s.reloads.fetch_add(1, Ordering::Relaxed);
        s.file_crc.store(crc, Ordering::Relaxed);
        self.publish();
        log::info!(
            "{}: reloaded {} (crc32:{crc:08x}), replaced by another program",
            self.served.name,
            self.path.display()
        );
        Reload::Reloaded { crc }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A library caller's correction whose label is not a name is refused before the journal:
    /// journaled, it would be refused by `learn` at every replay and the model would not open.
    #[test]
    fn a_label_that_is_not_a_name_never_reaches_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let news = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/news");
        let corpus =
            crate::jobs::corpus::scan_labelled(&news, &crate::jobs::corpus::FileFilter::default())
                .unwrap();
        let path = dir.path().join("news.cwm");
        crate::jobs::plan::TrainRequest::default()
            .plan()
            .unwrap()
            .train(&corpus, None, &crate::progress::NoProgress, &mut |_| {})
            .unwrap()
            .trained
            .model
            .save(&path)
            .unwrap();
        let post = std::fs::read(news.join("sci.space/test-05593.txt")).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (served, _) = ServedModel::open("news", &path, Durability::default()).unwrap();
        let refused = runtime
            .block_on(served.learn("space\nX-Label: ham".into(), post.clone()))
            .unwrap_err();
        assert!(matches!(refused, LearnError::Unlearnable(_)), "{refused}");
        assert!(
            refused.to_string().contains("control character (U+000A)"),
            "{refused}"
        );
        let journaled = journal::read(&journal::path_for(&path)).unwrap().unwrap();
        assert!(
            !journaled
                .entries
                .iter()
                .any(|e| matches!(e, Entry::Correction { .. })),
            "the refused correction was journaled"
        );
        // A good correction still goes through, then the server stops (snapshot).
        runtime
            .block_on(served.learn("sci.space".into(), post))
            .unwrap();
        served.shutdown().unwrap();
        // Opened again: nothing to replay, and the labels are the corpus's.
        let (again, opened) = ServedModel::open("news", &path, Durability::default()).unwrap();
        assert_eq!(opened.replayed, 0);
        let labels = again.state.read().unwrap().model.labels().to_vec();
        assert_eq!(labels, corpus.labels);
        again.shutdown().unwrap();
    }
}
