//! `cwtext inspect [MODEL]`: what a model is (labels, training statistics, pipeline, learner)
//! and what it has learned (the features it is surest favour each label).

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use serde_json::{json, Value};

use super::common::{load_model, vocabulary_of, TextOrJson, Ui};
use super::Outcome;
use cwtext::jobs::explain::{strongest_features, LabelFeature};
use cwtext::model::{LearnerConfig, Model};
use cwtext::text::pipeline::PipelineConfig;
use cwtext::text::vocabulary::Vocabulary;

const EXAMPLES: &str = "\
Examples:
  cwtext inspect                      # the default model (topics)
  cwtext inspect spam --top 20
  cwtext inspect news.cwm --label sci.space --format json

Features are ranked per label by z = (μ of the label − μ of the next best label) / √(σ² + σ²):
how many standard deviations the model is sure the feature favours the label. They are named
by the words and bigrams training saw in their hash bucket when the model was trained with
--keep-vocabulary, and by bucket number (#12345) otherwise.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct InspectArgs {
    /// A model file or a built-in model's name (default: topics).
    pub model: Option<PathBuf>,
    /// Features listed per label.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Only this label's features.
    #[arg(long, value_name = "LABEL")]
    pub label: Option<String>,
    /// Verify the checksum of a model larger than 64 MiB too.
    #[arg(long)]
    pub verify: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
}

pub fn run(args: InspectArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    let (model, name) = load_model(args.model.as_deref(), args.verify, ui)?;
    let labels: Vec<usize> = match &args.label {
        None => (0..model.labels().len()).collect(),
        Some(l) => vec![model.labels().iter().position(|m| m == l).ok_or_else(|| {
            anyhow::anyhow!(
                "{name} has no label {l:?}; its labels are {}",
                model.labels().join(", ")
            )
        })?],
    };
    let vocabulary = vocabulary_of(&model, &name)?;
    let features = strongest_features(&model, vocabulary.as_deref(), args.top);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match args.format {
        TextOrJson::Text => write_text(
            &mut out,
            &model,
            &name,
            vocabulary.as_deref(),
            &labels,
            &features,
        )?,
        TextOrJson::Json => {
            let value = json!({
                "model": name,
                "cwtext_version": model.header.cwtext_version,
                "encoding": model.header.encoding,
                "labels": model.labels(),
                "training": model.header.training,
                "learner": model.header.learner,
                "pipeline": pipeline_value(model.pipeline())?,
                "probability_scale": model.header.probability_scale,
                "calibration": model.header.calibration,
                "label_shift": model.header.label_shift.as_ref().map(|s| {
                    // The choice's figures, with the offsets by label name.
                    let mut value = json!(s.choice);
                    value["offsets"] = model.labels().iter().zip(&s.offsets)
                        .map(|(l, b)| (l.clone(), json!(b)))
                        .collect::<serde_json::Map<String, Value>>()
                        .into();
                    value
                }),
                "text_length": model.header.text_length,
                "selection": model.header.selection,
                "ngram_weight": model.header.ngram_weight,
                "soft_rule": model.header.soft_rule,
                "vocabulary_buckets": vocabulary.as_ref().map(|v| v.len()),
                "features": labels.iter().map(|&l| json!({
                    "label": model.labels()[l],
                    "strongest": features[l].iter().map(|f| json!({
                        "feature": f.feature,
                        "texts": f.texts,
                        "mean": f.weight.0,
                        "sigma": f.weight.1.sqrt(),
                        "z": f.confidence,
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            });
            writeln!(out, "{value}")?;
        }
    }
    out.flush()?;
    Ok(Outcome::Success)
}

/// The pipeline for people: long lists (stop words) and long strings become their size.
/// The pipeline as the model stores it, summarised, with its header-field rule named even
/// where the file leaves it out (every field whole, the default of files written before the
/// rule existed), so that `inspect` shows which rule a mail model reads.
fn pipeline_value(pipeline: &PipelineConfig) -> anyhow::Result<Value> {
    let mut value = summarised(serde_json::to_value(pipeline)?);
    if pipeline.header_fields {
        value["field_rule"] = serde_json::to_value(pipeline.field_rule)?;
    }
    Ok(value)
}

fn summarised(value: Value) -> Value {
    match value {
        Value::Array(items) if items.len() > 12 => json!(format!("({} items)", items.len())),
        Value::String(s) if s.len() > 200 => json!(format!("({} bytes)", s.len())),
        Value::Array(items) => Value::Array(items.into_iter().map(summarised).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, summarised(v))).collect())
        }
        other => other,
    }
}

fn write_text(
    out: &mut impl Write,
    model: &Model,
    name: &str,
    vocabulary: Option<&Vocabulary>,
    labels: &[usize],
    features: &[Vec<LabelFeature>],
) -> anyhow::Result<()> {
    let h = &model.header;
    let t = &h.training;
    writeln!(out, "model              {name}")?;
    writeln!(
        out,
        "weights            {} buckets + bias, {:?} on disk, written by cwtext {}",
        h.pipeline.buckets(),
        h.encoding,
        h.cwtext_version
    )?;
    let accuracy: Vec<String> = t.epoch_accuracy.iter().map(|a| format!("{a:.4}")).collect();
    writeln!(
        out,
        "training           {} documents ({} skipped), {} epochs, seed {}, {} distinct features",
        t.documents, t.skipped, t.epochs, t.seed, t.distinct_features
    )?;
    writeln!(out, "online accuracy    {} (per epoch)", accuracy.join(" "))?;
    let LearnerConfig::Cw(learner) = &h.learner;
    writeln!(
        out,
        "learner            {}",
        serde_json::to_string(learner)?
    )?;
    writeln!(out, "pipeline           {}", pipeline_value(&h.pipeline)?)?;
    let how = match (&h.calibration, h.probability_scale == 1.0) {
        (Some(c), _) => c.describe(),
        (None, true) => "not calibrated".to_string(),
        (None, false) => "fitted on held-out documents".to_string(),
    };
    writeln!(out, "probability scale  {} ({how})", h.probability_scale)?;
    let fitted = h.calibration.as_ref().map_or(0, |c| c.fitted_labels);
    if fitted > 0 && fitted < h.labels.len() {
        let how = if fitted >= cwtext::jobs::online::RAW_VARIANCE_MIN_FITTED {
            format!("a misfiled refile of one is learned on the raw variance while it has been shown no more documents than the median of the {fitted} fitted labels")
        } else {
            "corrected at the fitted scale, as in any router of two labels".to_string()
        };
        writeln!(
            out,
            "added since fit    {} ({how})",
            h.labels[fitted..].join(", ")
        )?;
    }
    if let Some(selection) = &h.selection {
        writeln!(out, "settings           {}", selection.describe())?;
    }
    if let Some(shift) = &h.label_shift {
        writeln!(out, "label shift        {}", shift.describe())?;
    }
    if let Some(tried) = &h.ngram_weight {
        writeln!(out, "bigram weight      {}", tried.describe())?;
    }
    if let Some(tried) = &h.soft_rule {
        writeln!(out, "update rule        {}", tried.describe())?;
        let trained = tried.trained_labels().filter(|_| tried.taken);
        let added = trained.map_or(0, |n| h.labels.len().saturating_sub(n));
        if let (Some(trained), true) = (trained, added > 0) {
            writeln!(
                out,
                "                   {added} label{} added since training learn{} with CW's uncapped step: {}",
                if added == 1 { "" } else { "s" },
                if added == 1 { "s" } else { "" },
                h.labels[trained..].join(", ")
            )?;
        }
    }
    if let Some(length) = &h.text_length {
        writeln!(
            out,
            "text length        {}: {}{}; {}",
            length.describe(),
            match &h.pipeline.char_ngrams {
                Some(chars) => format!("character n-grams beside the words, {}", chars.describe()),
                None => "words without character n-grams".to_string(),
            },
            if length.keeps_every_word() && !h.pipeline.has_stop_words() {
                "; every word kept, no stop-word list"
            } else {
                ""
            },
            length.reason()
        )?;
        if length.is_unspaced() && h.pipeline.max_ngram == cwtext::text::length::UNSPACED_NGRAMS {
            writeln!(
                out,
                "                   n-grams up to {}: {}",
                h.pipeline.max_ngram,
                length.unspaced_reason()
            )?;
        }
    }
    match vocabulary {
        Some(v) => writeln!(out, "vocabulary         texts for {} buckets", v.len())?,
        None => writeln!(
            out,
            "vocabulary         none (train --keep-vocabulary names features; here they are bucket numbers)"
        )?,
    }
    match model.rehearsal()? {
        Some(r) => {
            let kept: usize = (0..r.labels()).map(|l| r.documents(l).len()).sum();
            writeln!(
                out,
                "rehearsal          {kept} documents kept (up to {} per label); learn protects their scores",
                r.capacity()
            )?
        }
        None => writeln!(
            out,
            "rehearsal          none (a file from before format version 3; learn cannot protect the other labels)"
        )?,
    }
    writeln!(out, "labels             {}", model.labels().len())?;
    for (label, n) in model.labels().iter().zip(&t.label_documents) {
        let s = if *n == 1 { "" } else { "s" };
        writeln!(out, "  {label:<30} {n:>7} training document{s}")?;
    }
    for &l in labels {
        writeln!(out)?;
        writeln!(
            out,
            "{}: strongest features      z      μ ± σ",
            model.labels()[l]
        )?;
        for f in &features[l] {
            let text = if f.texts.is_empty() {
                format!("#{}", f.feature)
            } else {
                f.texts.join(" | ")
            };
            writeln!(
                out,
                "  {:<26} {:>6.2}  {:+.3} ± {:.3}",
                text,
                f.confidence,
                f.weight.0,
                f.weight.1.sqrt()
            )?;
        }
    }
    Ok(())
}
