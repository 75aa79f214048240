//! `cwtext label DIR`: one line per file (path, label, probability), optionally routing each
//! file into DEST/<label>/ (or DEST/_unsure/ below --min-prob) — delivering it when DEST is a
//! Maildir or mbox store, recording each decision for `learn --from-store` — and archiving it
//! in a search index (`--index IDX`, read by `cwtext search`).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, ValueEnum};
use serde_json::json;

use super::archiving::Archiving;
use super::common::{report_skipped, FilterArgs, ModelArg, SamplingArgs, Ui, PRIOR_NOTE};
use super::Outcome;
use cwtext::jobs::batch::DocumentText;
use cwtext::jobs::decisions::model_identity;
use cwtext::jobs::deliver::DestLayout;
use cwtext::jobs::label::{label_dir, LabelSettings, LabelSink, Recording};
use cwtext::jobs::route::RouteMode;
use cwtext::model::{Model, Prediction};
use cwtext::text::source::Source;

const EXAMPLES: &str = "\
Examples:
  cwtext label inbox/ -m mail.cwm -o labels.tsv
  cwtext label downloads/ --copy-to sorted/ --min-prob 0.8
  cwtext label archive/ -o labels.jsonl --include '*.eml'
  cwtext label news/ -m 20ng.cwm --index news.idx && cwtext search news.idx orbit
  cwtext label ~/Maildir -m mail.cwm --move-to ~/Maildir --min-prob 0.8   # sort the inbox
  cwtext label ~/mbox -m mail.cwm --copy-to sorted/ --dest-layout mbox

Each line: path, label, probability (TSV), or a JSON object with `file`, `label`,
`probability` and `entropy` (JSON lines: -o *.jsonl or --format jsonl). Files are never
overwritten when routed: a taken name gets a -1, -2 … suffix. A document without a single word
(a mail of headers and attachments only, an empty file) is labelled by the model's prior (how
often each label was trained on) and flagged: `\"prior_only\": true` in JSON lines, a note on standard error
with TSV.

--index IDX also stores every labelled file in a full-text index (see `cwtext search --help`):
absolute path, subject or first line, the text as UTF-8, label, every label's probability,
entropy and the model's name and CRC-32. Labelling a file again replaces its entry. The index
is committed once at the end, so an interrupted run leaves the previous index as it was.

A DEST that is a Maildir (cur/ new/ tmp/, or Maildir++ .Folder dot folders) or holds mbox files
is delivered into as such, whatever --dest-layout says (it must agree when given): Maildir
messages are written through tmp/ into new/ (a moved message keeps its cur/ and :2,FLAGS),
Maildir++ folders .Label (.Parent.Child for Parent/Child) are created as needed; an mbox per
label is appended to under DEST/LABEL.lock and flock, mboxrd-quoted, never left half-written.
A new or empty DEST takes --dest-layout (default files). Messages of an mbox can be copied,
not moved. Into a Maildir or mbox DEST each decision (message identity: its Message-ID, else a
hash; label, probability, model) is recorded in DEST/.cwtext-decisions.jsonl (--record FILE
elsewhere, and for a folder per label; --no-record not at all), from which `cwtext learn -m
MODEL --from-store DEST` learns the messages you refiled.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Tsv,
    Jsonl,
}

/// `--dest-layout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DestLayoutArg {
    Files,
    Maildir,
    Mbox,
}

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct LabelArgs {
    /// Directory to label (recursively), or a single file; a mail store (Maildir, mbox, MH)
    /// or an mbox file is labelled message by message.
    pub dir: PathBuf,
    #[command(flatten)]
    pub model: ModelArg,
    /// Write the labels here (TSV, or JSON lines when the name ends in .jsonl) instead of stdout.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Output format (default: from the -o extension, else tsv).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Copy each file into DEST/<label>/.
    #[arg(long, value_name = "DEST", conflicts_with = "move_to")]
    pub copy_to: Option<PathBuf>,
    /// Move each file into DEST/<label>/.
    #[arg(long, value_name = "DEST")]
    pub move_to: Option<PathBuf>,
    /// Route files whose best probability is below P into DEST/_unsure/.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub min_prob: f64,
    /// How a new or empty DEST is written: a folder per label with plain files, a Maildir++
    /// store, or an mbox file per label. An existing Maildir or mbox store is written as it is.
    #[arg(long, value_enum, value_name = "LAYOUT")]
    pub dest_layout: Option<DestLayoutArg>,
    /// Seconds to wait for another program's lock on an mbox (DEST/LABEL.lock or flock) before
    /// giving up on the message (it stays where it was).
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub lock_timeout: f64,
    /// Record each decision in FILE (JSON lines, appended) instead of
    /// DEST/.cwtext-decisions.jsonl (where decisions go by default when DEST is a Maildir or
    /// mbox store); also with a folder-per-label DEST or without --copy-to/--move-to.
    #[arg(long, value_name = "FILE", conflicts_with = "no_record")]
    pub record: Option<PathBuf>,
    /// Do not record the decisions.
    #[arg(long)]
    pub no_record: bool,
    /// Also archive the labelled documents in a search index at IDX (a new or empty directory,
    /// or an index written before; see `cwtext search`).
    #[arg(long, value_name = "IDX")]
    pub index: Option<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub sampling: SamplingArgs,
}

/// Writes each file's line and archives it.
struct Lines<'a> {
    model: &'a Model,
    format: Format,
    out: Box<dyn Write + 'a>,
    out_name: String,
    archive: Option<Archiving>,
    /// Documents without a word, labelled by the model's prior (flagged, and counted).
    prior_only: usize,
    ui: &'a Ui,
}

impl LabelSink<anyhow::Error> for Lines<'_> {
    fn labelled(&mut self, source: &Source, p: &Prediction) -> anyhow::Result<()> {
        let label = self.model.labels()[p.label].as_str();
        let prob = p.distribution.probabilities[p.label];
        let out_name = &self.out_name;
        let cannot_write = || format!("{out_name}: cannot write");
        if p.prior_only {
            self.prior_only += 1;
        }
        match self.format {
            Format::Tsv => {
                if p.prior_only {
                    self.ui
                        .info(format!("cwtext: note: {source}: {PRIOR_NOTE}"));
                }
                writeln!(self.out, "{source}\t{label}\t{prob:.4}").with_context(cannot_write)?
            }
            Format::Jsonl => {
                let mut obj = json!({"file": source.to_string(), "label": label,
                       "probability": prob, "entropy": p.distribution.entropy});
                if p.prior_only {
                    obj["prior_only"] = json!(true);
                }
                writeln!(self.out, "{obj}").with_context(cannot_write)?
            }
        }
        Ok(())
    }

    fn placed(
        &mut self,
        source: &Source,
        p: &Prediction,
        text: Option<DocumentText>,
    ) -> anyhow::Result<()> {
        if let (Some(a), Some(text)) = (&mut self.archive, text) {
            a.add(self.model, source, p, text)?;
        }
        Ok(())
    }
}

pub fn run(args: LabelArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    let settings = LabelSettings {
        method: args.sampling.method(),
        route: match (&args.copy_to, &args.move_to) {
            (Some(d), _) => Some((d.clone(), RouteMode::Copy)),
            (_, Some(d)) => Some((d.clone(), RouteMode::Move)),
            _ => None,
        },
        min_prob: args.min_prob,
        keep_text: args.index.is_some(),
        layout: args.filter.layout(),
        dest_layout: args.dest_layout.map(|l| match l {
            DestLayoutArg::Files => DestLayout::Files,
            DestLayoutArg::Maildir => DestLayout::Maildir,
            DestLayoutArg::Mbox => DestLayout::Mbox,
        }),
        lock_timeout: std::time::Duration::try_from_secs_f64(args.lock_timeout).map_err(|_| {
            anyhow::anyhow!(
                "invalid setting: --lock-timeout must be a number of seconds, 0 or more, but is {}",
                args.lock_timeout
            )
        })?,
        record: None,
    };
    settings.validate()?; // before the model is read
    let (model, model_name) = args.model.load_named(ui)?;
    let routed = args.copy_to.is_some() || args.move_to.is_some();
    let settings = LabelSettings {
        record: (!args.no_record && (routed || args.record.is_some())).then(|| Recording {
            path: args.record.clone(),
            model: model_identity(&model, &model_name),
        }),
        ..settings
    };
    settings.validate()?;
    let filter = args.filter.build()?;
    // A missing DIR fails here, before the output is created.
    std::fs::metadata(&args.dir).map_err(|e| cwtext::error::Error::io(&args.dir, e))?;
    // Opened before any work, so that a bad index path fails fast.
    let archive = match &args.index {
        Some(path) => Some(Archiving::open(path, &model, &args.model)?),
        None => None,
    };
    let format = args
        .format
        .unwrap_or(match args.output.as_ref().and_then(|p| p.extension()) {
            Some(e) if e == "jsonl" => Format::Jsonl,
            _ => Format::Tsv,
        });
    let progress = ui.progress(0); // its length grows as the walk finds files
    progress.set_message("labelling");
    let out: Box<dyn Write> = match &args.output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("{}: cannot create", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let out_name = args.output.as_ref().map_or_else(
        || "standard output".to_string(),
        |p| p.display().to_string(),
    );
    let mut lines = Lines {
        model: &model,
        format,
        out,
        out_name,
        archive,
        prior_only: 0,
        ui,
    };
    let summary = label_dir(&model, &args.dir, &filter, &settings, &mut lines, &progress)?;
    summary.warnings.iter().for_each(|w| ui.warn(w));
    let out_name = lines.out_name.clone();
    lines
        .out
        .flush()
        .with_context(|| format!("{out_name}: cannot write"))?;
    let indexed = match lines.archive {
        Some(a) => {
            progress.set_message("indexing");
            Some(a.commit()?)
        }
        None => None,
    };
    progress.finish_and_clear();
    indexed.into_iter().for_each(|m| ui.info(m));
    let total: usize = summary.counts.values().sum();
    let counts: Vec<String> = summary
        .counts
        .iter()
        .map(|(l, n)| format!("{l} {n}"))
        .collect();
    ui.info(format!("labelled {total} files: {}", counts.join(", ")));
    if lines.prior_only > 0 {
        ui.info(format!(
            "{} of them without a word: labelled by the model's prior alone",
            lines.prior_only
        ));
    }
    Ok(report_skipped(ui, &summary.skipped))
}
