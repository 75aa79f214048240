//! `cwtext classify [-m MODEL] [FILE…]`: the best label, then every label with its probability.
//! An input that is an mbox of two or more messages (standard input or a FILE) is classified
//! message by message, each named `NAME@OFFSET` by the byte offset of its `From ` line: two
//! messages concatenated used to be classified as one document (issue 19).

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde_json::json;

use super::common::{ModelArg, SamplingArgs, Ui};
use super::Outcome;
use cwtext::error::Error;
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
            write(&mut out, &model, "-", &prediction, &args, false)?;
            out.flush()?;
            return Ok(Outcome::Success);
        }
        let mut skipped = Vec::new();
        for (name, bytes) in &documents {
            match predict_bytes(&model, &mut pipeline, bytes, Path::new(name), &args) {
                Ok(p) => write(&mut out, &model, name, &p, &args, true)?,
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
                Ok(p) => write(&mut out, &model, name, &p, &args, several)?,
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

/// The documents of one input named `name`: its messages (`name@OFFSET`, quoting undone) when
/// it is an mbox of two or more, else the input itself. A single message with a `From ` line
/// (as procmail hands one over) stays one document under its own name.
fn documents<'b>(bytes: &'b [u8], name: &str, ui: &Ui) -> Vec<(String, Cow<'b, [u8]>)> {
    match cwtext::text::mailbox::mbox::split_bytes(bytes, name) {
        Some((messages, warnings)) => {
            warnings.iter().for_each(|w| ui.warn(w));
            messages
        }
        None => vec![(name.to_string(), Cow::Borrowed(bytes))],
    }
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
    let x = cwtext::text::featurize::featurize_document(pipeline, &doc, path)?;
    Ok(model.predict(&x, args.sampling.method()))
}

/// Labels and probabilities, most probable first (ties: model order).
fn ranked<'m>(model: &'m Model, p: &Prediction, top: Option<usize>) -> Vec<(&'m str, f64)> {
    let probs = &p.distribution.probabilities;
    let mut order: Vec<usize> = (0..probs.len()).collect();
    order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]).then(a.cmp(&b)));
    order.truncate(top.unwrap_or(usize::MAX));
    order
        .into_iter()
        .map(|i| (model.labels()[i].as_str(), probs[i]))
        .collect()
}

fn write(
    out: &mut impl Write,
    model: &Model,
    name: &str,
    p: &Prediction,
    args: &ClassifyArgs,
    several: bool,
) -> std::io::Result<()> {
    let label = &model.labels()[p.label];
    let ranked = ranked(model, p, args.top);
    match args.format {
        Format::Text => {
            if several {
                writeln!(out, "==> {name} <==")?;
            }
            writeln!(out, "{label}")?;
            for (l, prob) in &ranked {
                writeln!(out, "  {prob:.4}  {l}")?;
            }
            writeln!(out, "  entropy {:.4}", p.distribution.entropy)?;
        }
        Format::Json => {
            let probabilities: serde_json::Map<String, serde_json::Value> = ranked
                .iter()
                .map(|(l, prob)| (l.to_string(), json!(prob)))
                .collect();
            let obj = json!({
                "file": name,
                "label": label,
                "probability": p.distribution.probabilities[p.label],
                "probabilities": probabilities,
                "entropy": p.distribution.entropy,
            });
            writeln!(out, "{obj}")?;
        }
        Format::Tsv => {
            write!(
                out,
                "{name}\t{label}\t{:.4}\t{:.4}",
                p.distribution.probabilities[p.label], p.distribution.entropy
            )?;
            for (l, prob) in &ranked {
                write!(out, "\t{l}\t{prob:.4}")?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}
