//! Labelling a folder: walk it, classify every file (in parallel, in chunks), and optionally
//! route each file into `DEST/<label>/` (or `DEST/_unsure/` below a probability). What becomes of
//! each prediction (a line of output, an entry in a search index) is the caller's: the engine
//! hands every file to a [`LabelSink`] in walk order. A mail store (detected, or as
//! [`LabelSettings::layout`] says) is labelled message by message, every folder and the inbox
//! included; an mbox's messages cannot be copied or moved (they are not files of their own).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::jobs::batch::{classify_files, classify_files_keeping_text, DocumentText};
use crate::jobs::corpus::{walk_files, FileFilter};
use crate::jobs::route::{route_file, RouteMode, UNSURE};
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
    let layout = settings.layout.unwrap_or_else(|| mailbox::detect(dir));
    if layout == Layout::Mbox && settings.route.is_some() {
        return Err(Error::InvalidSetting(format!(
            "{} is read as mbox: its messages are not files of their own, so --copy-to and --move-to cannot route them (delivery into mail stores is not written yet); label it without them, or use --layout files to route the mbox files whole",
            dir.display()
        ))
        .into());
    }
    let mut summary = LabelSummary::default();
    let mut label_chunk = |chunk: &[Source]| -> std::result::Result<(), E> {
        progress.inc_length(chunk.len() as u64);
        let results = classify_chunk(model, chunk, settings, progress)?;
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
            // A moved file is archived where it now is.
            let mut placed = source.clone();
            if let Some((dest, mode)) = &settings.route {
                match route_file(source.path(), &dest.join(folder), *mode) {
                    Ok(to) if *mode == RouteMode::Move => placed = Source::file(to),
                    Ok(_) => {}
                    Err(e) => {
                        summary.skipped.push(e);
                        continue;
                    }
                }
            }
            sink.placed(&placed, &p, text)?;
            *summary.counts.entry(folder.to_string()).or_default() += 1;
        }
        Ok(())
    };
    summary.warnings = if layout != Layout::Files {
        // A store's folders are listed (and its mbox files scanned) first: the messages of
        // an mbox are only known once its file has been read through.
        let store = mailbox::read_store(dir, layout)?;
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
        store.warnings
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
                method: Method::Exact,
                route: None,
                min_prob: bad,
                keep_text: false,
                layout: None,
            };
            let err = settings.validate().unwrap_err().to_string();
            assert!(
                err.contains(&format!("--min-prob must be in [0, 1], but is {bad}")),
                "{err}"
            );
        }
    }
}
