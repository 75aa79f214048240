//! `cwtext explain [-m MODEL] [FILE]`: the features that decided between the best label and the
//! runner-up, named by the document's own words.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::json;

use super::common::{read_stdin, vocabulary_of, ModelArg, SamplingArgs, TextOrJson, Ui};
use super::Outcome;
use cwtext::jobs::explain::{explain, Contribution, Explanation, Side};
use cwtext::model::Model;
use cwtext::text::pipeline::Pipeline;

const EXAMPLES: &str = "\
Examples:
  cwtext explain post.txt
  cwtext explain -m spam --top 5 < message.eml
  cwtext explain -m mail.cwm message.eml --format json

The margin of the best label over the runner-up is a sum over the document's features,
value × (μ of the label − μ of the runner-up); the features with the largest parts on each side
are listed, each with its mean weight μ ± σ (σ: the standard deviation of the weight, the
model's uncertainty) for both labels. Features are named by the document's own words and
bigrams. A model trained with --keep-vocabulary also lists other words that training saw in the
same hash bucket; without it, those are unknown.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct ExplainArgs {
    /// The document to explain (standard input when absent).
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub model: ModelArg,
    /// Features listed on each side.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
    #[command(flatten)]
    pub sampling: SamplingArgs,
}

pub fn run(args: ExplainArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    let (model, name) = args.model.load_named(ui)?;
    let vocabulary = vocabulary_of(&model, &name)?;
    let mut pipeline = Pipeline::new(model.pipeline())?;
    let (bytes, path) = match &args.file {
        Some(path) => (
            std::fs::read(path).map_err(|e| cwtext::error::Error::io(path, e))?,
            path.clone(),
        ),
        None => (read_stdin(ui)?, PathBuf::from("<stdin>")),
    };
    let doc =
        cwtext::text::input::document_from_bytes(&bytes, &path, pipeline.config().input_limits())?;
    let x = cwtext::text::featurize::featurize_document(&mut pipeline, &doc, &path)?;
    let why = explain(&model, vocabulary.as_deref(), &mut pipeline, &doc, &x)?;
    let probabilities = model
        .predict(&x, args.sampling.method())
        .distribution
        .probabilities;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match args.format {
        TextOrJson::Text => write_text(
            &mut out,
            &model,
            &why,
            &probabilities,
            args.top,
            vocabulary.is_some(),
        )?,
        TextOrJson::Json => write_json(&mut out, &model, &path, &why, &probabilities, args.top)?,
    }
    out.flush()?;
    Ok(Outcome::Success)
}

fn weight((mean, variance): (f64, f64)) -> String {
    format!("{mean:+.3} ± {:.3}", variance.sqrt())
}

fn write_text(
    out: &mut impl Write,
    model: &Model,
    why: &Explanation,
    probabilities: &[f64],
    n: usize,
    has_vocabulary: bool,
) -> std::io::Result<()> {
    let (label, runner) = (&model.labels()[why.label], &model.labels()[why.runner_up]);
    writeln!(
        out,
        "{label} (probability {:.4}) over {runner} ({:.4})",
        probabilities[why.label], probabilities[why.runner_up]
    )?;
    writeln!(
        out,
        "margin {:.4} = score {:.4} − score {:.4}, the sum of {} features' parts",
        why.label_score - why.runner_up_score,
        why.label_score,
        why.runner_up_score,
        why.contributions.len()
    )?;
    let width = why
        .contributions
        .iter()
        .map(|c| c.name().chars().count())
        .max()
        .unwrap_or(0)
        .clamp(12, 40);
    for (Side { shown, rest, more }, side) in why.sides(n).into_iter().zip([label, runner]) {
        writeln!(out)?;
        writeln!(
            out,
            "for {side:<w$} {:>9}  {:>16}  {:>16}",
            "part",
            format!("μ±σ {}", short(label)),
            format!("μ±σ {}", short(runner)),
            w = width - 2
        )?;
        for c in shown {
            let mut line = format!(
                "  {:<width$} {:>+9.4}  {:>16}  {:>16}",
                truncate(&c.name(), width),
                c.contribution,
                weight(c.label_weight),
                weight(c.runner_up_weight),
            );
            if let Some(note) = c.shared_with() {
                line.push_str(&format!("  (bucket shared with {note})"));
            }
            writeln!(out, "{line}")?;
        }
        if more > 0 {
            writeln!(out, "  … {more} more features: {rest:+.4}")?;
        }
    }
    if !has_vocabulary {
        writeln!(out)?;
        writeln!(
            out,
            "Features are named by this document's words. The model keeps no vocabulary\n\
             (train --keep-vocabulary), so other words that share their hash buckets are unknown."
        )?;
    }
    Ok(())
}

/// A label cut to fit a column header.
fn short(label: &str) -> String {
    truncate(label, 11)
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

fn write_json(
    out: &mut impl Write,
    model: &Model,
    path: &Path,
    why: &Explanation,
    probabilities: &[f64],
    n: usize,
) -> std::io::Result<()> {
    let feature = |c: &&Contribution| {
        json!({
            "texts": c.texts,
            "feature": c.feature,
            "value": c.value,
            "contribution": c.contribution,
            "label_mean": c.label_weight.0,
            "label_sigma": c.label_weight.1.sqrt(),
            "runner_up_mean": c.runner_up_weight.0,
            "runner_up_sigma": c.runner_up_weight.1.sqrt(),
            "bucket_shared_with": c.also,
            "distinct_in_bucket": c.distinct,
        })
    };
    let [Side {
        shown: pro,
        rest: pro_rest,
        ..
    }, Side {
        shown: con,
        rest: con_rest,
        ..
    }] = why.sides(n);
    let value = json!({
        "file": path.display().to_string(),
        "label": model.labels()[why.label],
        "probability": probabilities[why.label],
        "runner_up": model.labels()[why.runner_up],
        "runner_up_probability": probabilities[why.runner_up],
        "label_score": why.label_score,
        "runner_up_score": why.runner_up_score,
        "features": why.contributions.len(),
        "for_label": pro.iter().map(feature).collect::<Vec<_>>(),
        "for_label_rest": pro_rest,
        "for_runner_up": con.iter().map(feature).collect::<Vec<_>>(),
        "for_runner_up_rest": con_rest,
        "vocabulary": why.contributions.iter().any(|c| c.distinct.is_some()),
    });
    writeln!(out, "{value}")
}
