//! Learning from where the user refiles (`cwtext learn --from-store ROOT`), as POPFile does when
//! a message is moved between IMAP folders and CRM114 trains on error: `label` recorded where it
//! put each message ([`crate::jobs::decisions`]); the store is walked, each recorded message is
//! found by its identity wherever it now is, and a message that the user moved into another
//! folder is learned as that folder's label — once: the learning is recorded in the same log,
//! after which the message is expected in its new folder, so a second run learns nothing new.
//!
//! What is not learned from: a message still where it was put; one in the inbox or the unsure
//! folder (not sorted yet); one deleted, or in a trash folder (`Trash`, `Deleted Items`, …,
//! unless the model has such a label); one found in two folders or more that are not where it
//! was put (ambiguous, with a warning). A folder the model has no label for becomes a new label
//! ([`crate::jobs::online`] adds it).
//!
//! The model is rewritten under its lock (`MODEL.lock`) before the learning is recorded: a run
//! killed in between learns those messages again next time, which repeats an update rather than
//! losing one.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::integrations::lock::ModelLock;
use crate::jobs::corpus::{list_files, FileFilter};
use crate::jobs::decisions::{self, DecisionLog, Entry};
use crate::jobs::deliver::{DestLayout, Destination, Message};
use crate::jobs::online::{self, Corrections};
use crate::jobs::route::UNSURE;
use crate::model::Model;
use crate::text::featurize::featurize_source;
use crate::text::mailbox::{self, Layout};
use crate::text::pipeline::Pipeline;
use crate::text::source::Source;

/// Folders where mail programs put deleted mail: a message moved there was deleted, not
/// refiled (unless the model has the label).
const TRASH: &[&str] = &[
    "Trash",
    "Deleted",
    "Deleted Items",
    "Deleted Messages",
    "Bin",
];

/// How a store is learned from.
#[derive(Debug, Clone, Default)]
pub struct RefileSettings {
    /// The decision log; `None`: [`decisions::DEFAULT_NAME`] in the store.
    pub log: Option<PathBuf>,
    /// How the store is laid out; `None` detects it.
    pub layout: Option<Layout>,
    /// Folders and files to leave out (`--skip-folder`, `--include`, `--exclude`).
    pub filter: FileFilter,
}

/// One message the user refiled.
#[derive(Debug, Clone)]
pub struct Refiled {
    pub id: String,
    /// Where it is now.
    pub source: Source,
    /// The folder it was put in (or last learned in).
    pub from: String,
    /// The label of the folder it is in now.
    pub to: String,
}

/// What a run found and learned.
#[derive(Debug, Default)]
pub struct RefileReport {
    /// The log read.
    pub log: PathBuf,
    /// Messages the log knows.
    pub recorded: usize,
    /// Messages learned, per (from, to).
    pub learned: BTreeMap<(String, String), usize>,
    /// What the learning did (`None` when nothing was learned).
    pub corrections: Option<Corrections>,
    /// Messages still in the folder they were put (or last learned) in.
    pub unchanged: usize,
    /// Messages in the inbox or the unsure folder.
    pub unsorted: usize,
    /// Messages not found in the store (deleted), or in a trash folder.
    pub gone: usize,
    /// Refiled messages that could not be read or had no words.
    pub skipped: Vec<Error>,
    /// For people: ambiguous messages, unreadable folders, a cut log line.
    pub warnings: Vec<String>,
}

impl RefileReport {
    /// How many messages were learned.
    pub fn total(&self) -> usize {
        self.learned.values().sum()
    }
}

/// Where each message of a folder is, by label (`None`: the inbox).
type Found = (Option<String>, Source);

/// The recorded messages found in a store, by identity, each in every folder it is in.
type FoundById = HashMap<String, Vec<Found>>;

/// Learns, into the model at `model_path` (named `model_name` in the log), every recorded
/// message of the store at `root` that the user moved since it was labelled or last learned.
pub fn learn_from_store(
    model_path: &Path,
    model_name: &str,
    root: &Path,
    settings: &RefileSettings,
) -> Result<RefileReport> {
    let log_path = settings
        .log
        .clone()
        .unwrap_or_else(|| root.join(decisions::DEFAULT_NAME));
    if !log_path.exists() {
        return Err(Error::Corpus {
            path: log_path,
            message: "no decision log here: `cwtext label … --move-to STORE` (or `--copy-to`) records one in the store, `--record FILE` elsewhere".into(),
        });
    }
    let (entries, mut warnings) = DecisionLog::read(&log_path)?;
    // Where each message is expected now, in the order the log first names them.
    let mut expected: HashMap<String, String> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for entry in &entries {
        let folder = match entry {
            Entry::Decided { folder, .. } => folder,
            Entry::Learned { to, .. } => to,
        };
        if expected
            .insert(entry.id().to_string(), folder.clone())
            .is_none()
        {
            order.push(entry.id().to_string());
        }
    }
    let mut report = RefileReport {
        log: log_path.clone(),
        recorded: order.len(),
        ..RefileReport::default()
    };

    let lock = ModelLock::acquire_to_learn(model_path)?;
    let mut model = Model::load(model_path)?;
    let (found, store_warnings) = find_messages(root, settings, &model, &expected)?;
    warnings.extend(store_warnings);

    let mut refiled = Vec::new();
    for id in &order {
        let from = &expected[id];
        let places = found.get(id).map(Vec::as_slice).unwrap_or_default();
        if places
            .iter()
            .any(|(l, _)| l.as_deref() == Some(from.as_str()))
        {
            report.unchanged += 1;
            continue;
        }
        let unsorted = |l: &Option<String>| l.as_deref().is_none_or(|l| l == UNSURE);
        let trash = |l: &str| {
            !model.labels().iter().any(|m| m == l)
                && l.rsplit('/')
                    .next()
                    .is_some_and(|last| TRASH.iter().any(|t| t.eq_ignore_ascii_case(last)))
        };
        let mut targets: Vec<&Found> = places
            .iter()
            .filter(|(l, _)| !unsorted(l) && !l.as_deref().is_some_and(trash))
            .collect();
        targets.dedup_by(|a, b| a.0 == b.0);
        match targets.as_slice() {
            [] if places.iter().any(|(l, _)| unsorted(l)) => report.unsorted += 1,
            [] => report.gone += 1,
            [(Some(to), source)] => refiled.push(Refiled {
                id: id.clone(),
                source: source.clone(),
                from: from.clone(),
                to: to.clone(),
            }),
            many => {
                let names: Vec<String> = many
                    .iter()
                    .map(|(l, s)| format!("{} ({s})", l.as_deref().unwrap_or("the inbox")))
                    .collect();
                warnings.push(format!(
                    "{id}: put in {from}, now in {} folders: {}; not learned",
                    many.len(),
                    names.join(", ")
                ));
            }
        }
    }
    report.warnings = warnings;
    if refiled.is_empty() {
        drop(lock);
        return Ok(report);
    }

    let mut pipeline = Pipeline::new(model.pipeline())?;
    let mut documents = Vec::new();
    let mut learned = Vec::new();
    for r in refiled {
        match featurize_source(&mut pipeline, &r.source) {
            Ok(x) => {
                documents.push((x, r.to.clone()));
                learned.push(r);
            }
            Err(e) if e.is_skippable() => report.skipped.push(e),
            Err(e) => return Err(e),
        }
    }
    if documents.is_empty() {
        drop(lock);
        return Ok(report);
    }
    report.corrections = Some(online::learn(&mut model, &documents)?);
    let crc = model.save(model_path)?;
    drop(lock);
    // The learning is recorded once the model holds it (see the module doc).
    let model_id = decisions::model_identity_of(Some(crc), model_name);
    let time = decisions::now();
    let entries: Vec<Entry> = learned
        .iter()
        .map(|r| Entry::Learned {
            id: r.id.clone(),
            from: r.from.clone(),
            to: r.to.clone(),
            model: model_id.clone(),
            time,
        })
        .collect();
    DecisionLog::open(&log_path)?.append(&entries)?;
    for r in learned {
        *report.learned.entry((r.from, r.to)).or_default() += 1;
    }
    Ok(report)
}

/// The recorded messages found in the store, by identity, each with every folder it is in.
/// Folder labels are the model's labels where a label is delivered into that folder (a label
/// `comp.graphics` is the Maildir++ folder `.comp.graphics`, which reads back as
/// `comp/graphics`), else the store's own names.
fn find_messages(
    root: &Path,
    settings: &RefileSettings,
    model: &Model,
    expected: &HashMap<String, String>,
) -> Result<(FoundById, Vec<String>)> {
    std::fs::metadata(root).map_err(|e| Error::io(root, e))?;
    // A file that is no mbox is a file, not rows: refiling looks for messages.
    let layout = match settings.layout.unwrap_or_else(|| mailbox::detect(root)) {
        Layout::Rows | Layout::Lines => Layout::Files,
        layout => layout,
    };
    let from_mbox = layout == Layout::Mbox;
    let mut warnings = Vec::new();
    let folders: Vec<(Option<String>, PathBuf, Vec<Source>)> = if layout == Layout::Files {
        let list = list_files(root, &settings.filter)?;
        warnings.extend(list.warnings);
        let mut by_folder: BTreeMap<String, Vec<Source>> = BTreeMap::new();
        for file in list.files {
            let relative = file.strip_prefix(root).unwrap_or(&file);
            let mut parts = relative.iter();
            let (Some(top), Some(_)) = (parts.next(), parts.next()) else {
                continue; // a file at the top has no folder
            };
            let top = top.to_string_lossy().into_owned();
            by_folder.entry(top).or_default().push(Source::file(file));
        }
        by_folder
            .into_iter()
            .map(|(l, files)| (Some(l.clone()), root.join(l), files))
            .collect()
    } else {
        let store = mailbox::read_store(root, layout)?;
        // An empty folder (an inbox sorted out, say) is nothing to warn about here.
        warnings.extend(store.warnings);
        store
            .folders
            .into_iter()
            .map(|f| (f.label, f.path, f.messages))
            .collect()
    };
    // The folder each known folder name is delivered into.
    let dest_layout = match layout {
        Layout::Files => Some(DestLayout::Files),
        Layout::Maildir => Some(DestLayout::Maildir),
        Layout::Mbox => Some(DestLayout::Mbox),
        Layout::Mh | Layout::Rows | Layout::Lines => None,
    };
    let mut by_path: HashMap<PathBuf, String> = HashMap::new();
    if let Some(Ok((dest, _))) = dest_layout.map(|l| Destination::inspect(root, Some(l))) {
        let names = model
            .labels()
            .iter()
            .chain(expected.values())
            .chain(std::iter::once(&UNSURE.to_string()))
            .cloned()
            .collect::<Vec<_>>();
        for name in names {
            if let Ok(path) = dest.folder_path(&name) {
                by_path.entry(path).or_insert(name);
            }
        }
    }
    let messages: Vec<(Option<String>, Source)> = folders
        .into_iter()
        .filter(|(l, _, _)| {
            l.as_deref()
                .is_none_or(|l| settings.filter.accepts_folder(l))
        })
        .flat_map(|(label, path, messages)| {
            let label = by_path.get(&path).cloned().or(label);
            messages.into_iter().map(move |m| (label.clone(), m))
        })
        .filter(|(_, s)| settings.filter.accepts(s.path()))
        .collect();
    let identities: Vec<Result<String>> = messages
        .par_iter()
        .map(|(_, s)| Message::read(s, from_mbox).map(|m| decisions::identity(&m.bytes)))
        .collect();
    let mut found = FoundById::new();
    for ((label, source), id) in messages.into_iter().zip(identities) {
        match id {
            Ok(id) if expected.contains_key(&id) => {
                found.entry(id).or_default().push((label, source));
            }
            Ok(_) => {}
            Err(e) => warnings.push(format!("{e}; not looked at")),
        }
    }
    Ok((found, warnings))
}
