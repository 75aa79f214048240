//! `cwtext classify [-m MODEL] [FILE…]`: the best label, then every label with its probability.
//! An input that is an mbox of two or more messages (standard input or a FILE) is classified
//! message by message, each named `NAME@OFFSET` by the byte offset of its `From ` line: two
//! messages concatenated used to be classified as one document (issue 19).

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::common::{probability, ModelArg, SamplingArgs, ServerArgs, Ui, PRIOR_NOTE};
use super::Outcome;
use cwtext::error::Error;
use cwtext::jobs::batch::classify_bytes_with;
use cwtext::jobs::classify_output::{self, OutputFormat, OutputOptions};
use cwtext::model::{Model, Prediction};
use cwtext::text::pipeline::Pipeline;

const EXAMPLES: &str = "\
Examples:
  cwtext classify < message.eml
  cwtext classify -m mail.cwm inbox/1.eml inbox/2.eml --top 3
  cwtext classify --format json < review.txt
  cwtext classify --lines --format tsv -m questions.cwm test.txt

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
    /// Every line of the input is a document of its own, named FILE:LINE (-:LINE on standard
    /// input), as `fasttext predict` reads a file; blank lines are left out, and the
    /// `__label__` tokens a fastText test file starts its lines with are taken off.
    #[arg(long, conflicts_with = "server")]
    pub lines: bool,
    #[command(flatten)]
    pub sampling: SamplingArgs,
    #[command(flatten)]
    pub server: ServerArgs,
}

pub fn run(args: ClassifyArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    let stdin = match args.files.is_empty() {
        true => Some(super::common::read_stdin(ui)?),
        false => None,
    };
    if args.server.server.is_some() {
        #[cfg(feature = "serve")]
        match remote(&args, stdin.as_deref())? {
            super::remote::Remote::Done(outcome) => return Ok(outcome),
            super::remote::Remote::Unreachable(why) => match args.server.server_fallback {
                super::common::Fallback::Local => super::remote::falling_back(ui, &why),
                super::common::Fallback::Fail => return Err(super::remote::unreachable(why)),
            },
        }
        #[cfg(not(feature = "serve"))]
        anyhow::bail!("--server needs the `serve` feature, which this cwtext was built without");
    }
    let model = args.model.load(ui)?;
    let mut pipeline = Pipeline::new(model.pipeline())?;
    let method = args.sampling.method();
    let max_unpacked = model.pipeline().max_document_bytes;
    let output = args.output();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if let Some(bytes) = stdin {
        let documents = if args.lines {
            classify_output::lines(&bytes, "-")
        } else {
            documents(&bytes, "-", max_unpacked, ui)
        };
        if let ([(_, one)], false) = (documents.as_slice(), args.lines) {
            let prediction =
                classify_bytes_with(&model, &mut pipeline, one, Path::new("<stdin>"), method)?;
            write(&mut out, &model, "-", &prediction, &output, false, ui)?;
            out.flush()?;
            return Ok(Outcome::Success);
        }
        let mut skipped = Vec::new();
        for (name, bytes) in &documents {
            match classify_bytes_with(&model, &mut pipeline, bytes, Path::new(name), method) {
                Ok(p) => write(&mut out, &model, name, &p, &output, true, ui)?,
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
        let name = path.display().to_string();
        let documents = if args.lines {
            classify_output::lines(&bytes, &name)
        } else {
            documents(&bytes, &name, max_unpacked, ui)
        };
        several |= documents.len() > 1 || args.lines;
        for (name, bytes) in &documents {
            // A whole file is named by its path in errors, a message by FILE@OFFSET, a line by
            // FILE:LINE.
            let error_name = if documents.len() > 1 || args.lines {
                Path::new(name)
            } else {
                path.as_path()
            };
            match classify_bytes_with(&model, &mut pipeline, bytes, error_name, method) {
                Ok(p) => write(&mut out, &model, name, &p, &output, several, ui)?,
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

/// `classify --server URL`: the server's answer for standard input or each file, printed as
/// it came (the server prints with the same code). Unreachable at the first request: the
/// caller falls back or fails; later, an error.
#[cfg(feature = "serve")]
fn remote(
    args: &ClassifyArgs,
    stdin: Option<&[u8]>,
) -> anyhow::Result<super::remote::Remote<Outcome>> {
    use super::remote::{model_param, print, sampling_params, Client, Remote};
    let client = Client::new(&args.server, None)?;
    let format = match args.format {
        Format::Text => "text",
        Format::Json => "json",
        Format::Tsv => "tsv",
    };
    let mut pairs = vec![("format", format.to_string())];
    pairs.extend(model_param(args.model.model.as_deref()));
    if let Some(top) = args.top {
        pairs.push(("top", top.to_string()));
    }
    if let Some(p) = args.min_prob {
        pairs.push(("min_prob", p.to_string()));
    }
    pairs.push(("unsure_label", args.unsure_label.clone()));
    pairs.extend(sampling_params(&args.sampling));
    let skipped_in = |a: &cwtext::serve::client::Answer| {
        a.header("x-cwtext-skipped")
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(0)
    };
    if let Some(bytes) = stdin {
        let answer = match client.post("/classify", &pairs, bytes.to_vec()) {
            Remote::Done(a) => a,
            Remote::Unreachable(why) => return Ok(Remote::Unreachable(why)),
        };
        anyhow::ensure!(answer.status == 200, "{}", answer.error_message());
        print(&answer.body)?;
        return Ok(Remote::Done(if skipped_in(&answer) > 0 {
            Outcome::Partial
        } else {
            Outcome::Success
        }));
    }
    let several = args.files.len() > 1;
    let mut skipped = 0;
    for (i, path) in args.files.iter().enumerate() {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if several => {
                super::common::say(format_args!(
                    "cwtext: warning: skipped {}",
                    Error::io(path, e)
                ));
                skipped += 1;
                continue;
            }
            Err(e) => return Err(Error::io(path, e).into()),
        };
        let mut file_pairs = pairs.clone();
        file_pairs.push(("name", path.display().to_string()));
        file_pairs.push(("several", several.to_string()));
        let answer = match client.post("/classify", &file_pairs, bytes) {
            Remote::Done(a) => a,
            Remote::Unreachable(why) if i == 0 => return Ok(Remote::Unreachable(why)),
            Remote::Unreachable(why) => return Err(super::remote::unreachable(why)),
        };
        if answer.status != 200 {
            anyhow::ensure!(several, "{}", answer.error_message());
            super::common::say(format_args!(
                "cwtext: warning: skipped {}",
                answer.error_message()
            ));
            skipped += 1;
            continue;
        }
        skipped += skipped_in(&answer);
        print(&answer.body)?;
    }
    Ok(Remote::Done(if skipped > 0 {
        Outcome::Partial
    } else {
        Outcome::Success
    }))
}

/// The documents of one input named `name` ([`classify_output::documents`]), its warnings
/// printed.
fn documents<'b>(
    bytes: &'b [u8],
    name: &str,
    max_unpacked: usize,
    ui: &Ui,
) -> Vec<(String, Cow<'b, [u8]>)> {
    let (documents, warnings) = classify_output::documents(bytes, name, max_unpacked);
    warnings.iter().for_each(|w| ui.warn(w));
    documents
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
    output: &OutputOptions,
    several: bool,
    ui: &Ui,
) -> std::io::Result<()> {
    if output.format == OutputFormat::Tsv && p.prior_only {
        ui.info(format!("cwtext: note: {name}: {PRIOR_NOTE}"));
    }
    classify_output::write_prediction(out, model.labels(), name, p, output, several)
}
