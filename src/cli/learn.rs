//! `cwtext learn -m MODEL --label L [FILE…]`, `cwtext learn -m MODEL DIR` and `cwtext learn -m
//! MODEL --from-store ROOT`: corrections applied to a model in place, under an exclusive lock,
//! written atomically.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use super::common::{report_skipped, FilterArgs, Ui};
use super::Outcome;
use cwtext::error::Error;
use cwtext::integrations::lock::ModelLock;
use cwtext::jobs::corpus::list_files;
use cwtext::jobs::refile::{learn_from_store, RefileSettings};
use cwtext::model::Model;
use cwtext::text::featurize::featurize_source;
use cwtext::text::mailbox::mbox;
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
    /// The model to update in place.
    #[arg(short, long, value_name = "MODEL")]
    pub model: PathBuf,
    /// The label of every input; without it, the single input is a folder DIR/<label>/<file>.
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
    /// Seed of the order in which a folder's documents are learned (a folder is a set, and a
    /// label-sorted stream would teach one label at a time).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run(args: LearnArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    let start = Instant::now();
    if let Some(root) = &args.from_store {
        return from_store(&args, root, ui);
    }
    // What to learn, before taking the lock (reading can be slow; the lock is held briefly).
    let mut sources: Vec<(Input, String)> = Vec::new();
    match (&args.label, args.inputs.as_slice()) {
        (Some(label), []) => {
            // An mbox on standard input is learned message by message.
            let bytes = super::common::read_stdin(ui)?;
            match mbox::split_bytes(&bytes, "-") {
                Some((messages, warnings)) => {
                    warnings.iter().for_each(|w| ui.warn(w));
                    for (name, message) in messages {
                        let input = Input::Bytes(PathBuf::from(name), message.into_owned());
                        sources.push((input, label.clone()));
                    }
                }
                None => sources.push((Input::Bytes("<stdin>".into(), bytes), label.clone())),
            }
        }
        (Some(label), files) => {
            for f in files {
                if f.is_dir() {
                    for file in list_files(f, &args.filter.build()?)?.files {
                        sources.push((Input::Document(file.into()), label.clone()));
                    }
                } else if mbox::looks_like_mbox(f) {
                    // An mbox file (sa-learn --mbox) is learned message by message.
                    let scan = mbox::scan_file(f)?;
                    scan.warnings.iter().for_each(|w| ui.warn(w));
                    let documents: Vec<Source> = if scan.spans.len() < 2 {
                        vec![Source::file(f)]
                    } else {
                        let spans = scan.spans.into_iter();
                        spans.map(|s| Source::mbox_message(f, s)).collect()
                    };
                    for source in documents {
                        sources.push((Input::Document(source), label.clone()));
                    }
                } else {
                    sources.push((Input::Document(f.clone().into()), label.clone()));
                }
            }
        }
        (None, [dir]) if dir.is_dir() => {
            // One folder of corrections is enough.
            let corpus = args.filter.scan(dir, 1)?;
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
            "invalid setting: give --label L with the documents, or a single folder DIR/<label>/<file>"
        ),
    }
    let lock = ModelLock::acquire(&args.model)?;
    let mut model = Model::load(&args.model)?;
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
    model.save(&args.model)?;
    drop(lock);
    ui.info(format!(
        "learned {} document(s) into {} ({} mispredicted before the update{}){} in {:.0} ms",
        report.documents,
        args.model.display(),
        report.mistakes,
        if model.rehearsal.is_some() {
            format!("; {} score(s) of kept documents restored", report.replayed)
        } else {
            "; no kept documents to protect (a model from before format version 3)".to_string()
        },
        if report.new_labels.is_empty() {
            String::new()
        } else {
            format!("; new label(s): {}", report.new_labels.join(", "))
        },
        start.elapsed().as_secs_f64() * 1000.0
    ));
    Ok(report_skipped(ui, &skipped))
}

enum Input {
    /// Standard input, or one message of an mbox on it, read before the lock was taken.
    Bytes(PathBuf, Vec<u8>),
    Document(Source),
}

impl Input {
    fn features(&self, pipeline: &mut Pipeline) -> Result<cwtext::features::FeatureVector, Error> {
        match self {
            Input::Document(source) => featurize_source(pipeline, source),
            Input::Bytes(name, bytes) => {
                let doc = cwtext::text::input::document_from_bytes(
                    bytes,
                    name,
                    pipeline.config().input_limits(),
                )?;
                cwtext::text::featurize::featurize_document(pipeline, &doc, name)
            }
        }
    }
}

/// `learn --from-store ROOT`: the library finds and learns the refiled messages; this prints
/// what it did.
fn from_store(args: &LearnArgs, root: &std::path::Path, ui: &Ui) -> anyhow::Result<Outcome> {
    let settings = RefileSettings {
        log: args.record.clone(),
        layout: args.filter.layout(),
        filter: args.filter.build()?,
    };
    let name = args.model.display().to_string();
    let report = learn_from_store(&args.model, &name, root, &settings)?;
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
        ui.info(format!(
            "learned {} refiled message(s) into {}: {}{new_labels} ({others})",
            report.total(),
            args.model.display(),
            moves.join(", ")
        ));
    }
    Ok(report_skipped(ui, &report.skipped))
}
