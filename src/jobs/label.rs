//! Labelling a folder: walk it, classify every file (in parallel, in chunks), and optionally
//! route each file into `DEST/<label>/` (or `DEST/_unsure/` below a probability). What becomes of
//! each prediction (a line of output, an entry in a search index) is the caller's: the engine
//! hands every file to a [`LabelSink`] in walk order. A mail store (detected, or as
//! [`LabelSettings::layout`] says) is labelled message by message, every folder and the inbox
//! included. Routing into a Maildir or mbox store is delivery ([`crate::jobs::deliver`]); an
//! mbox's messages can be copied, not moved (taking them out would rewrite the mbox). Each
//! decision can be recorded in a decision log ([`crate::jobs::decisions`]), from which
//! `learn --from-store` later learns where the user refiled messages ([`crate::jobs::refile`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::jobs::batch::{classify_files, classify_files_keeping_text, DocumentText};
use crate::jobs::corpus::{walk_files, FileFilter};
use crate::jobs::decisions::{self, DecisionLog, Entry};
use crate::jobs::deliver::{DestLayout, Destination, Message, LOCK_TIMEOUT};
use crate::jobs::route::{RouteMode, UNSURE};
use crate::learn::probability::Method;
use crate::model::{Model, Prediction};
use crate::progress::Progress;
use crate::text::mailbox::{self, Layout};
use crate::text::source::Source;

/// Files classified (in parallel) before they are handed on.
pub const LABEL_CHUNK: usize = 4096;

/// How a folder is labelled.
#[derive(Debug, Clone)]
pub struct LabelSettings {
    /// How probabilities are computed.
    pub method: Method,
    /// Copy or move each file into `DEST/<label>/`.
    pub route: Option<(PathBuf, RouteMode)>,
    /// Files whose best probability is below this go to DEST/_unsure/ (and count there).
    pub min_prob: f64,
    /// Keep each document's text for [`LabelSink::placed`] (to archive it).
    pub keep_text: bool,
    /// How the directory is laid out; `None` detects it ([`mailbox::detect`]).
    pub layout: Option<Layout>,
    /// How the destination is written when it is not an existing store (which is written as
    /// it is); `None`: files.
    pub dest_layout: Option<DestLayout>,
    /// How long to wait for another program's lock on an mbox.
    pub lock_timeout: std::time::Duration,
    /// Record each decision in a decision log.
    pub record: Option<Recording>,
}

/// Where decisions are recorded, and the model's name in them.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The log; `None`: [`decisions::DEFAULT_NAME`] in the destination when it is a mail store
    /// (Maildir or mbox), no log when it is a folder per label.
    pub path: Option<PathBuf>,
    /// The model that decides, as the log names it ([`decisions::model_identity`]).
    pub model: String,
}

impl Default for LabelSettings {
    fn default() -> Self {
        LabelSettings {
            method: Method::Exact,
            route: None,
            min_prob: 0.0,
            keep_text: false,
            layout: None,
            dest_layout: None,
            lock_timeout: LOCK_TIMEOUT,
            record: None,
        }
    }
}

impl LabelSettings {
    /// Checks the settings; the error names the bad value.
    pub fn validate(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.min_prob) {
            return Err(Error::InvalidSetting(format!(
                "--min-prob must be in [0, 1], but is {}",
                self.min_prob
            )));
        }
        if self.record.as_ref().is_some_and(|r| r.path.is_none()) && self.route.is_none() {
            return Err(Error::InvalidSetting(
                "a decision log needs a file (--record FILE) when nothing is routed into a store"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// What the caller does with each labelled file, in walk order. The error type is the
/// caller's, so that it can carry its own context (a write to a closed pipe, say).
pub trait LabelSink<E> {
    /// A file's prediction, before it is routed.
    fn labelled(&mut self, source: &Source, prediction: &Prediction) -> std::result::Result<(), E>;

    /// The file after routing (where it now is, when it was moved), with its text when the
    /// settings keep it. Not called for a file that could not be routed (it is skipped).
    fn placed(
        &mut self,
        _source: &Source,
        _prediction: &Prediction,
        _text: Option<DocumentText>,
    ) -> std::result::Result<(), E> {
        Ok(())
    }
}

/// What a labelling run did.
#[derive(Debug, Default)]
pub struct LabelSummary {
    /// Files per folder (label, or [`UNSURE`]).
    pub counts: BTreeMap<String, usize>,
    /// Files that could not be read, classified or routed, with the reason.
    pub skipped: Vec<Error>,
    /// Problems of the walk (unreadable folders), for people.
    pub warnings: Vec<String>,
}

/// Labels every file below `dir` (or `dir` itself, a file) that `filter` lets through.
///
/// In chunks: each is classified in parallel and handed on in input order before the next
/// starts, so output flows during a long run, memory stays bounded on millions of files, and
/// the order never depends on the number of threads. With more than one worker thread the
/// directory walk runs in a thread of its own and hands over each chunk as soon as it has
/// listed it: labelling starts at once instead of after the whole walk, which on 20,000 files
/// was 4–5% of a two-thread run spent on one core.
pub fn label_dir<E: From<Error>>(
    model: &Model,
    dir: &Path,
    filter: &FileFilter,
    settings: &LabelSettings,
    sink: &mut dyn LabelSink<E>,
    progress: &dyn Progress,
) -> std::result::Result<LabelSummary, E> {
    settings.validate()?;
    // The walk itself runs beside the labelling (below); a missing DIR fails here.
    std::fs::metadata(dir).map_err(|e| Error::io(dir, e))?;
    // A file that is no mbox is one document to label, as it always was (rows are read as
    // documents by the commands that take a labelled corpus).
    let layout = match settings.layout.unwrap_or_else(|| mailbox::detect(dir)) {
        Layout::Rows | Layout::Lines => Layout::Files,
        layout => layout,
    };
    if layout == Layout::Mbox && matches!(settings.route, Some((_, RouteMode::Move))) {
        return Err(Error::InvalidSetting(format!(
            "{} is read as mbox: --move-to would have to rewrite the mbox to take messages out of it, which cwtext does not do (a mail program may be reading it); use --copy-to, then delete the messages in the mail program",
            dir.display()
        ))
        .into());
    }
    let mut dest = match &settings.route {
        Some((root, mode)) => Some((
            Destination::open(root, settings.dest_layout, settings.lock_timeout)?,
            *mode,
        )),
        None => None,
    };
    let mut log = match &settings.record {
        Some(r) => {
            let path = match (&r.path, &dest) {
                (Some(p), _) => Some(p.clone()),
                // A folder per label is no mail store: nothing is written there unasked.
                (None, Some((d, _))) if d.layout() == DestLayout::Files => None,
                (None, Some((d, _))) => Some(d.root().join(decisions::DEFAULT_NAME)),
                (None, None) => unreachable!("validated"),
            };
            match path {
                Some(path) => Some((DecisionLog::open(&path)?, r.model.as_str())),
                None => None,
            }
        }
        None => None,
    };
    let mut summary = LabelSummary::default();
    let mut label_chunk = |chunk: &[Source]| -> std::result::Result<(), E> {
        progress.inc_length(chunk.len() as u64);
        let results = classify_chunk(model, chunk, settings, progress)?;
        let mut decided = Vec::new();
        for (source, result) in chunk.iter().zip(results) {
            let (p, text) = match result {
                Ok(r) => r,
                Err(e) => {
                    summary.skipped.push(e);
                    continue;
                }
            };
            sink.labelled(source, &p)?;
            let label = model.labels()[p.label].as_str();
            let prob = p.distribution.probabilities[p.label];
            let folder = if prob < settings.min_prob {
                UNSURE
            } else {
                label
            };
            let needs_bytes =
                log.is_some() || dest.as_ref().is_some_and(|(d, _)| d.needs_bytes(source));
            let message = if needs_bytes {
                match Message::read(source, layout == Layout::Mbox) {
                    Ok(m) => Some(m),
                    Err(e) => {
                        summary.skipped.push(e);
                        continue;
                    }
                }
            } else {
                None
            };
            // Where the message (or its copy) now is.
            let mut placed = source.clone();
            if let Some((dest, mode)) = &mut dest {
                match dest.deliver(source, message.as_ref(), folder, *mode) {
                    Ok(to) => placed = to,
                    Err(e) => {
                        summary.skipped.push(e);
                        continue;
                    }
                }
            }
            if let (Some((_, name)), Some(m)) = (&log, &message) {
                decided.push(Entry::Decided {
                    id: decisions::identity(&m.bytes),
                    label: label.to_string(),
                    folder: folder.to_string(),
                    probability: prob,
                    model: name.to_string(),
                    time: decisions::now(),
                    file: placed.to_string(),
                });
            }
            // A moved file is archived where it now is, a copied one where it was.
            let archived = match &dest {
                Some((_, RouteMode::Copy)) => source,
                _ => &placed,
            };
            sink.placed(archived, &p, text)?;
            *summary.counts.entry(folder.to_string()).or_default() += 1;
        }
        // Recorded a chunk at a time: one synced append, not one per message.
        if let Some((log, _)) = &mut log {
            log.append(&decided)?;
        }
        Ok(())
    };
    summary.warnings = if layout != Layout::Files {
        // A store's folders are listed (and its mbox files scanned) first: the messages of
        // an mbox are only known once its file has been read through.
        let store = mailbox::read_store(dir, layout)?;
        let warnings = store.all_warnings();
        let messages: Vec<Source> = store
            .folders
            .into_iter()
            .filter(|f| f.label.as_deref().is_none_or(|l| filter.accepts_folder(l)))
            .flat_map(|f| f.messages)
            .filter(|s| filter.accepts(s.path()))
            .collect();
        for chunk in messages.chunks(LABEL_CHUNK) {
            label_chunk(chunk)?;
        }
        warnings
    } else if rayon::current_num_threads() == 1 {
        // One thread asked for: list and label in turn.
        let mut failed = None;
        let warnings = walk_files(dir, filter, LABEL_CHUNK, |chunk| {
            let chunk: Vec<Source> = chunk.into_iter().map(Source::file).collect();
            label_chunk(&chunk).map_err(|e| failed = Some(e)).is_ok()
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        warnings
    } else {
        let (send, chunks) = std::sync::mpsc::sync_channel::<Vec<PathBuf>>(1);
        std::thread::scope(|scope| -> std::result::Result<Vec<String>, E> {
            let walk = scope.spawn(move || {
                walk_files(dir, filter, LABEL_CHUNK, |chunk| send.send(chunk).is_ok())
            });
            for chunk in chunks {
                let chunk: Vec<Source> = chunk.into_iter().map(Source::file).collect();
                label_chunk(&chunk)?;
            }
            Ok(walk.join().expect("the directory walk does not panic")?)
        })?
    };
    Ok(summary)
}

/// A file's prediction, and its text when it is to be archived.
type Labelled = (Prediction, Option<DocumentText>);

/// Classifies one chunk, keeping each document's text only when it is to be archived.
fn classify_chunk(
    model: &Model,
    chunk: &[Source],
    settings: &LabelSettings,
    progress: &dyn Progress,
) -> Result<Vec<Result<Labelled>>> {
    Ok(if settings.keep_text {
        classify_files_keeping_text(model, chunk, settings.method, progress)?
            .into_iter()
            .map(|r| r.map(|(p, t)| (p, Some(t))))
            .collect()
    } else {
        classify_files(model, chunk, settings.method, progress)?
            .into_iter()
            .map(|r| r.map(|p| (p, None)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_prob_is_a_probability() {
        for bad in [-0.5, 1.5] {
            let settings = LabelSettings {
                min_prob: bad,
                ..LabelSettings::default()
            };
            let err = settings.validate().unwrap_err().to_string();
            assert!(
                err.contains(&format!("--min-prob must be in [0, 1], but is {bad}")),
                "{err}"
            );
        }
    }
}
