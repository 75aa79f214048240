//! `cwtext classify [-m MODEL] [FILE…]`: the best label, then every label with its probability.
//! An input that is an mbox of two or more messages (standard input or a FILE) is classified
//! message by message, each named `NAME@OFFSET` by the byte offset of its `From ` line: two
//! messages concatenated used to be classified as one document (issue 19).

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::common::{probability, ModelArg, SamplingArgs, Ui, PRIOR_NOTE};
use super::Outcome;
use cwtext::error::Error;
use cwtext::jobs::batch::predict_document;
use cwtext::jobs::classify_output::{self, OutputFormat, OutputOptions};
use cwtext::model::{Model, Prediction};
use cwtext::text::pipeline::Pipeline;

const EXAMPLES: &str = "\
Examples:
  cwtext classify < message.eml
  cwtext classify -m mail.cwm inbox/1.eml inbox/2.eml --top 3
  cwtext classify --format json < review.txt

Output (text): the best label on the first line, then `probability  label` lines, best first,
and the normalised entropy (0 = certain, 1 = uniform). With several files each block starts
with `==> FILE <==`. json: one object per line with `file`, `label`, `probabilities` (label →
probability, best first) and `entropy`. tsv: file, label, probability, entropy, then label and
probability pairs.

--min-prob P: below P the decision is --unsure-label (default _unsure, as filter and label
use), and the best label is still shown (text: an `unsure:` line; json: `best`; tsv: the
label and probability pairs). A document without a single word (a mail of headers and
attachments only, an empty file) is classified by the model's prior (how often each label was trained on) and
flagged: text `rests on the prior: no words`, json `\"prior_only\": true`, tsv a note on
standard error.

An mbox (mutt, Thunderbird, formail) of two or more messages gives one result per message,
named FILE@OFFSET (-@OFFSET on standard input), OFFSET being the byte offset of the message's
`From ` line; a message that cannot be read is skipped with a warning (exit 1).";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Tsv,
}

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct ClassifyArgs {
    /// Documents to classify (standard input when none).
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub model: ModelArg,
    /// List only the N most probable labels.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Below this probability of the best label the decision is --unsure-label (the best
    /// label and its probability are still shown).
    #[arg(long, value_name = "P", value_parser = probability)]
    pub min_prob: Option<f64>,
    /// The decision printed below --min-prob (the folder name `label --min-prob` uses).
    #[arg(long, value_name = "LABEL", default_value = "_unsure")]
    pub unsure_label: String,
    #[command(flatten)]
    pub sampling: SamplingArgs,
}

pub fn run(args: ClassifyArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    let model = args.model.load(ui)?;
    let mut pipeline = Pipeline::new(model.pipeline())?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.files.is_empty() {
        let bytes = super::common::read_stdin(ui)?;
        let documents = documents(&bytes, "-", ui);
        if let [(_, one)] = documents.as_slice() {
            let prediction =
                predict_bytes(&model, &mut pipeline, one, Path::new("<stdin>"), &args)?;
            write(&mut out, &model, "-", &prediction, &args, false, ui)?;
            out.flush()?;
            return Ok(Outcome::Success);
        }
        let mut skipped = Vec::new();
        for (name, bytes) in &documents {
            match predict_bytes(&model, &mut pipeline, bytes, Path::new(name), &args) {
                Ok(p) => write(&mut out, &model, name, &p, &args, true, ui)?,
                Err(e) if e.is_skippable() => skipped.push(e),
                Err(e) => return Err(e.into()),
            }
        }
        out.flush()?;
        return Ok(super::common::report_skipped(ui, &skipped));
    }
    let mut several = args.files.len() > 1;
    let mut skipped = Vec::new();
    for path in &args.files {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                skipped.push(Error::io(path, e));
                continue;
            }
        };
        let documents = documents(&bytes, &path.display().to_string(), ui);
        several |= documents.len() > 1;
        for (name, bytes) in &documents {
            // A whole file is named by its path in errors, a message by FILE@OFFSET.
            let error_name = if documents.len() > 1 {
                Path::new(name)
            } else {
                path.as_path()
            };
            match predict_bytes(&model, &mut pipeline, bytes, error_name, &args) {
                Ok(p) => write(&mut out, &model, name, &p, &args, several, ui)?,
                Err(e) if e.is_skippable() => skipped.push(e),
                Err(e) => return Err(e.into()),
            }
        }
    }
    out.flush()?;
    if !several {
        if let Some(e) = skipped.pop() {
            return Err(e.into());
        }
    }
    Ok(super::common::report_skipped(ui, &skipped))
}

/// The documents of one input named `name` ([`classify_output::documents`]), its warnings
/// printed.
fn documents<'b>(bytes: &'b [u8], name: &str, ui: &Ui) -> Vec<(String, Cow<'b, [u8]>)> {
    let (documents, warnings) = classify_output::documents(bytes, name);
    warnings.iter().for_each(|w| ui.warn(w));
    documents
}

fn predict_bytes(
    model: &Model,
    pipeline: &mut Pipeline,
    bytes: &[u8],
    path: &Path,
    args: &ClassifyArgs,
) -> Result<Prediction, Error> {
    let doc =
        cwtext::text::input::document_from_bytes(bytes, path, pipeline.config().input_limits())?;
    Ok(predict_document(
        model,
        pipeline,
        &doc,
        path,
        args.sampling.method(),
    ))
}

impl ClassifyArgs {
    fn output(&self) -> OutputOptions {
        OutputOptions {
            format: match self.format {
                Format::Text => OutputFormat::Text,
                Format::Json => OutputFormat::Json,
                Format::Tsv => OutputFormat::Tsv,
            },
            top: self.top,
            min_prob: self.min_prob,
            unsure_label: self.unsure_label.clone(),
        }
    }
}

fn write(
    out: &mut impl Write,
    model: &Model,
    name: &str,
    p: &Prediction,
    args: &ClassifyArgs,
    several: bool,
    ui: &Ui,
) -> std::io::Result<()> {
    if args.format == Format::Tsv && p.prior_only {
        ui.info(format!("cwtext: note: {name}: {PRIOR_NOTE}"));
    }
    classify_output::write_prediction(out, model.labels(), name, p, &args.output(), several)
}
