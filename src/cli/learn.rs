//! `cwtext learn -m MODEL --label L [FILE…]`, `cwtext learn -m MODEL DIR` and `cwtext learn -m
//! MODEL --from-store ROOT`: corrections applied to a model in place, under an exclusive lock,
//! written atomically.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use super::common::{report_skipped, FilterArgs, ServerArgs, Ui};
use super::Outcome;
use cwtext::error::Error;
use cwtext::integrations::lock::ModelLock;
use cwtext::jobs::corpus::list_files;
use cwtext::jobs::online::Corrections;
use cwtext::jobs::refile::{learn_from_store, RefileSettings};
use cwtext::model::Model;
use cwtext::text::featurize::featurize_source;

use cwtext::text::pipeline::Pipeline;
use cwtext::text::source::Source;

const EXAMPLES: &str = "\
Examples:
  cwtext learn -m mail.cwm --label spam < message.eml
  cwtext learn -m mail.cwm --label receipts inbox/1.eml inbox/2.eml
  cwtext learn -m mail.cwm refiled/            # refiled/<label>/<file>, or a mail store
  cwtext learn -m mail.cwm --label spam spam.mbox   # every message of an mbox
  cwtext learn -m mail.cwm --from-store ~/Maildir    # what you refiled since `label`

One CW update per document, in the order given (a folder: shuffled by --seed). A label the model has never
seen is added, starting like an average label. After each update, the documents the model kept from
training get their scores back where the update moved them (README, \"Corrections\"). Concurrent learners of one model wait for each other (MODEL.lock); readers
always see a whole model, old or new.

--from-store ROOT reads the decisions `cwtext label … --move-to ROOT` (or --copy-to) recorded in
ROOT/.cwtext-decisions.jsonl (--record FILE: another log), finds each message in the store by
its Message-ID (else a hash of its bytes) and learns, once, every message you moved into
another folder than the one it was put in: a new folder becomes a new label. Messages in the
inbox or the unsure folder, deleted or in a trash folder are not learned from. What was
learned is recorded in the log, so running it again learns only what you refiled since.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct LearnArgs {
    /// The model to update in place (with --server: the server's model NAME, or the file it
    /// serves).
    #[arg(short, long, value_name = "MODEL", required_unless_present = "server")]
    pub model: Option<PathBuf>,
    /// The label of every input; without it, the single input is a folder DIR/<label>/<file>
    /// or a file of labelled rows (`__label__LABEL text` lines, .tsv, .csv).
    #[arg(short, long, value_name = "L")]
    pub label: Option<String>,
    /// Documents (standard input when none), or one labelled folder.
    pub inputs: Vec<PathBuf>,
    /// Learn the messages moved to another folder since `label` delivered them into the mail
    /// store ROOT (or a folder per label) and recorded its decisions.
    #[arg(long, value_name = "ROOT", conflicts_with_all = ["label", "inputs"])]
    pub from_store: Option<PathBuf>,
    /// The decision log --from-store reads (default: ROOT/.cwtext-decisions.jsonl).
    #[arg(long, value_name = "FILE", requires = "from_store")]
    pub record: Option<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub server: ServerArgs,
    /// With --server: the file holding the server's token (`cwtext serve --token-file`).
    #[arg(long, value_name = "FILE", requires = "server")]
    pub token_file: Option<PathBuf>,
    /// Seed of the order in which a folder's documents are learned (a folder is a set, and a
    /// label-sorted stream would teach one label at a time).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run(args: LearnArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    let start = Instant::now();
    if let Some(root) = &args.from_store {
        anyhow::ensure!(
            args.server.server.is_none(),
            "learn --from-store does not go through a server yet: stop the server, or learn the refiled messages with --label through it"
        );
        return from_store(&args, model_path(&args)?, root, ui);
    }
    // What to learn, before taking the lock (reading can be slow; the lock is held briefly).
    let mut sources: Vec<(Input, String)> = Vec::new();
    match (&args.label, args.inputs.as_slice()) {
        (Some(label), []) => {
            // An mbox on standard input is learned message by message.
            let bytes = super::common::read_stdin(ui)?;
            // Split before the model is read (it may be a server's): a compressed mbox is
            // decompressed up to the default document limit.
            let max = cwtext::text::pipeline::DEFAULT_MAX_DOCUMENT_BYTES;
            let (documents, warnings) = cwtext::jobs::online::correction_documents(&bytes, max);
            warnings.iter().for_each(|w| ui.warn(w));
            for (name, document) in documents {
                let input = Input::Bytes(name, document.into_owned());
                sources.push((input, label.clone()));
            }
        }
        (Some(label), files) => {
            for f in files {
                if f.is_dir() {
                    for file in list_files(f, &args.filter.build()?)?.files {
                        sources.push((Input::Document(file.into()), label.clone()));
                    }
                } else {
                    // An mbox file (sa-learn --mbox), compressed or not, is learned message by
                    // message.
                    for source in Source::documents_of(f, &mut |w| ui.warn(w)) {
                        sources.push((Input::Document(source), label.clone()));
                    }
                }
            }
        }
        (None, [dir]) if dir.is_dir() || cwtext::text::rows::looks_like_rows(dir) => {
            // One folder of corrections is enough, or one file of labelled rows.
            let corpus = args.filter.scan(dir, 1)?;
            corpus.notes.iter().for_each(|n| ui.info(n));
    corpus.warnings.iter().for_each(|w| ui.warn(w));
            // Corrections are few: the folder's list is read into memory to be shuffled.
            let mut files = corpus.files.to_vec()?;
            {
                use rand::seq::SliceRandom;
                use rand::SeedableRng;
                files.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(args.seed));
            }
            for (file, label) in files {
                sources.push((Input::Document(file), corpus.labels[label].clone()));
            }
        }
        (None, _) => anyhow::bail!(
            "invalid setting: give --label L with the documents, a single folder DIR/<label>/<file>, or a single file of labelled rows (`__label__LABEL text` lines, .tsv or .csv)"
        ),
    }
    // Documents the server skipped (not text, no word), as local learn skips them.
    let mut remote_skipped = 0;
    if args.server.server.is_some() {
        #[cfg(feature = "serve")]
        {
            let (done, failure, skipped) = remote(&args, &sources, ui)?;
            remote_skipped = skipped;
            match failure {
                None if remote_skipped == 0 => return Ok(Outcome::Success),
                None => {
                    ui.warn(format!("{remote_skipped} file(s) skipped"));
                    return Ok(Outcome::Partial);
                }
                Some(why) if args.server.server_fallback == super::common::Fallback::Local => {
                    super::remote::falling_back(ui, &why);
                    sources.drain(..done);
                }
                Some(why) => return Err(super::remote::unreachable(why)),
            }
        }
        #[cfg(not(feature = "serve"))]
        anyhow::bail!("--server needs the `serve` feature, which this cwtext was built without");
    }
    let model_path = model_path(&args)?;
    let lock = ModelLock::acquire_to_learn(model_path)?;
    let mut model = Model::load(model_path)?;
    let mut pipeline = Pipeline::new(model.pipeline())?;
    let mut documents = Vec::with_capacity(sources.len());
    let mut skipped = Vec::new();
    for (source, label) in sources {
        match source.features(&mut pipeline) {
            Ok(x) => documents.push((x, label)),
            Err(e) if e.is_skippable() => skipped.push(e),
            Err(e) => return Err(e.into()),
        }
    }
    if documents.is_empty() {
        return match skipped.pop() {
            // Unlike classify, which falls back on the prior, there is nothing to learn from a
            // document without a word: refused, and the model is left as it was.
            Some(e @ Error::EmptyDocument { .. }) => Err(anyhow::anyhow!(
                "{e}: nothing to learn from it, the model was not changed"
            )),
            Some(e) => Err(e.into()),
            None => Err(anyhow::anyhow!("nothing to learn: no documents")),
        };
    }
    let report = cwtext::jobs::online::learn(&mut model, &documents)?;
    model.save(model_path)?;
    drop(lock);
    ui.info(format!(
        "learned {} document(s) into {} ({}{}){} in {:.0} ms",
        report.documents,
        model_path.display(),
        mistakes_said(report.mistakes, report.raw_variance),
        if model.rehearsal.is_some() {
            format!("; {} score(s) of kept documents restored", report.replayed)
        } else {
            "; no kept documents to protect (a model from before format version 3, or merged from such models)".to_string()
        },
        if report.new_labels.is_empty() {
            String::new()
        } else {
            format!("; new label(s): {}", report.new_labels.join(", "))
        },
        start.elapsed().as_secs_f64() * 1000.0
    ));
    warn_if_like(&report.new_labels, model.labels(), ui);
    warn_if_outgrown(&report, model_path, ui);
    match report_skipped(ui, &skipped) {
        Outcome::Success if remote_skipped > 0 => Ok(Outcome::Partial),
        outcome => Ok(outcome),
    }
}

/// Says of each new label that looks like one the model had ([`cwtext::model::label_like`]:
/// `Sci.Space` beside `sci.space`): a refile typed so is more often a slip than a new folder,
/// and the new label takes documents from the old one from now on.
/// How many corrections the model got wrong before their update, and how many of those it
/// learned on the raw variance (a new folder's, [`cwtext::jobs::online::learned_on_raw_variance`]).
fn mistakes_said(mistakes: usize, raw_variance: usize) -> String {
    format!(
        "{mistakes} mispredicted before the update{}",
        match raw_variance {
            0 => String::new(),
            n => format!(
                ", {n} of them of a label added since the probability scale was fitted, learned on the raw variance as training learns its mistakes"
            ),
        }
    )
}

fn warn_if_like(new_labels: &[String], labels: &[String], ui: &Ui) {
    let old: Vec<String> = labels
        .iter()
        .filter(|l| !new_labels.contains(l))
        .cloned()
        .collect();
    for new in new_labels {
        if let Some(like) = cwtext::model::label_like(&old, new) {
            ui.warn(format!(
                "new label {new:?} looks like {like:?}, which the model has: if that was meant, learn the document again with --label {like:?}; {new:?} stays a label of its own"
            ));
        }
    }
}

/// Says when the model keeps far fewer documents for its corrections than `train` now keeps for
/// a model like it ([`Corrections::outgrown`]): retraining protects the other labels from
/// one-sided refiles.
fn warn_if_outgrown(report: &Corrections, path: &std::path::Path, ui: &Ui) {
    if let Some((kept, chosen)) = report.outgrown {
        warn_outgrown(path.display(), kept, chosen, ui);
    }
}

/// The warning of [`warn_if_outgrown`], for a model named `model` (a path, or a server's model).
fn warn_outgrown(model: impl std::fmt::Display, kept: usize, chosen: usize, ui: &Ui) {
    ui.warn(format!(
        "{model} keeps {kept} documents a label for learn to protect, and `cwtext train` would now keep up to {chosen} for it: retrain it, or refiles of one label can take the other labels' documents (README, \"Corrections\")"
    ));
}

/// The model file -m names (needed without --server, and for its local fallback), which must
/// exist: checked before its lock is taken, so that a mistyped path or a built-in model's name
/// leaves no `.lock` file behind. A built-in model cannot change; the error says how to get a
/// copy that can.
fn model_path(args: &LearnArgs) -> anyhow::Result<&std::path::Path> {
    let path = args.model.as_deref().ok_or_else(|| {
        anyhow::anyhow!("invalid setting: learn needs -m MODEL, the model file to update")
    })?;
    if !path.exists() {
        if let Some((m, _)) = cwtext::integrations::shelf::named(path) {
            anyhow::bail!(
                "invalid setting: {0} is a built-in model, which learn cannot change (it is part of the binary): save a copy with `cwtext models --save {0} -o {0}.cwm`, then teach that with `cwtext learn -m {0}.cwm …` (and classify with it)",
                m.name
            );
        }
        anyhow::bail!(
            "{}: no such model file (learn updates a model that `cwtext train` wrote)",
            path.display()
        );
    }
    Ok(path)
}

/// `learn --server URL`: each document sent to the server in order, acknowledged once it is in
/// the server's journal. Returns how many were answered, if the server could not take the
/// rest, why (the caller falls back on the local model for the rest, or fails), and how many
/// were skipped: a document the server finds not to be text or without a word (415, 422) is
/// skipped with a warning, as local `learn` skips it; refused when none is learned.
#[cfg(feature = "serve")]
fn remote(
    args: &LearnArgs,
    sources: &[(Input, String)],
    ui: &Ui,
) -> anyhow::Result<(usize, Option<String>, usize)> {
    use super::remote::{model_param, Client, Remote};
    let client = Client::new(&args.server, args.token_file.as_deref())?;
    let mut learned = 0;
    let mut mistakes = 0;
    let mut raw_variance = 0;
    let mut new_labels: Vec<String> = Vec::new();
    let mut model_name = String::new();
    let mut skipped = Vec::new();
    // The server's last word on whether the model is outgrown ([`warn_if_outgrown`]).
    let mut outgrown = None;
    for (i, (input, label)) in sources.iter().enumerate() {
        let bytes = match input {
            Input::Bytes(_, b) => b.clone(),
            Input::Document(source) => {
                source.read_bytes(cwtext::text::pipeline::DEFAULT_MAX_DOCUMENT_BYTES)?
            }
        };
        let mut pairs = vec![("label", label.clone())];
        pairs.extend(model_param(args.model.as_deref()));
        match client.post("/learn", &pairs, bytes) {
            Remote::Done(a) if a.status == 200 => {
                let v: serde_json::Value = serde_json::from_slice(&a.body)?;
                learned += v["documents"].as_u64().unwrap_or(0);
                mistakes += v["mistakes"].as_u64().unwrap_or(0);
                raw_variance += v["raw_variance"].as_u64().unwrap_or(0);
                model_name = v["model"].as_str().unwrap_or("").to_string();
                for l in v["new_labels"].as_array().into_iter().flatten() {
                    new_labels.extend(l.as_str().map(str::to_string));
                }
                for m in v["skipped"].as_array().into_iter().flatten() {
                    skipped.extend(m.as_str().map(str::to_string));
                }
                let o = &v["outgrown"];
                outgrown = o["kept_per_label"]
                    .as_u64()
                    .zip(o["train_would_keep"].as_u64());
            }
            Remote::Done(a) if a.status == 415 || a.status == 422 => {
                skipped.push(format!("{}: {}", input.name(), a.error_message()));
            }
            Remote::Done(a) => anyhow::bail!(
                "cwtext serve at {} refused a correction ({} learned before it): {}",
                client.url(),
                i,
                a.error_message()
            ),
            Remote::Unreachable(why) => {
                skipped.iter().for_each(|m| ui.warn(format!("skipped {m}")));
                return Ok((i, Some(why), skipped.len()));
            }
        }
    }
    skipped.iter().for_each(|m| ui.warn(format!("skipped {m}")));
    if learned == 0 && !skipped.is_empty() {
        anyhow::bail!(
            "nothing learned: cwtext serve at {} skipped every document, the model was not changed",
            client.url()
        );
    }
    ui.info(format!(
        "learned {learned} document(s) into {model_name} at {} ({}{}); in the server's journal, in its model file at its next snapshot",
        client.url(),
        mistakes_said(mistakes as usize, raw_variance as usize),
        if new_labels.is_empty() {
            String::new()
        } else {
            format!("; new label(s): {}", new_labels.join(", "))
        }
    ));
    if let Some((kept, chosen)) = outgrown {
        let model = format!("{model_name} at {}", client.url());
        warn_outgrown(model, kept as usize, chosen as usize, ui);
    }
    Ok((sources.len(), None, skipped.len()))
}

enum Input {
    /// Standard input, or one message of an mbox on it, read before the lock was taken.
    Bytes(PathBuf, Vec<u8>),
    Document(Source),
}

impl Input {
    /// The document's name in messages: its file, or standard input's name.
    #[cfg(feature = "serve")]
    fn name(&self) -> std::path::Display<'_> {
        match self {
            Input::Document(source) => source.path().display(),
            Input::Bytes(name, _) => name.display(),
        }
    }

    fn features(&self, pipeline: &mut Pipeline) -> Result<cwtext::features::FeatureVector, Error> {
        match self {
            Input::Document(source) => featurize_source(pipeline, source),
            Input::Bytes(name, bytes) => {
                cwtext::jobs::online::featurize_bytes(pipeline, bytes, name)
            }
        }
    }
}

/// `learn --from-store ROOT`: the library finds and learns the refiled messages; this prints
/// what it did.
fn from_store(
    args: &LearnArgs,
    model: &std::path::Path,
    root: &std::path::Path,
    ui: &Ui,
) -> anyhow::Result<Outcome> {
    let settings = RefileSettings {
        log: args.record.clone(),
        layout: args.filter.layout(),
        filter: args.filter.build()?,
    };
    let name = model.display().to_string();
    let report = learn_from_store(model, &name, root, &settings)?;
    report.warnings.iter().for_each(|w| ui.warn(w));
    let others = format!(
        "{} recorded in {}: {} where they were put, {} in the inbox or unsure folder, {} deleted",
        report.recorded,
        report.log.display(),
        report.unchanged,
        report.unsorted,
        report.gone
    );
    if report.total() == 0 {
        ui.info(format!(
            "nothing new to learn: no message was refiled ({others})"
        ));
    } else {
        let moves: Vec<String> = report
            .learned
            .iter()
            .map(|((from, to), n)| format!("{from} → {to} {n}"))
            .collect();
        let new_labels = report
            .corrections
            .as_ref()
            .filter(|c| !c.new_labels.is_empty())
            .map_or(String::new(), |c| {
                format!("; new label(s): {}", c.new_labels.join(", "))
            });
        let mistakes = report.corrections.as_ref().map_or(String::new(), |c| {
            format!(" ({})", mistakes_said(c.mistakes, c.raw_variance))
        });
        ui.info(format!(
            "learned {} refiled message(s) into {}{mistakes}: {}{new_labels} ({others})",
            report.total(),
            model.display(),
            moves.join(", ")
        ));
        if let Some(corrections) = &report.corrections {
            warn_if_outgrown(corrections, model, ui);
        }
    }
    Ok(report_skipped(ui, &report.skipped))
}
