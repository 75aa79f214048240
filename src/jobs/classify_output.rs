//! What `cwtext classify` prints for one prediction (text, JSON or TSV), and how one input is
//! split into the documents it classifies. The command line and `cwtext serve` both print with
//! these, so the server's answers are byte for byte the command's output.

use std::borrow::Cow;
use std::io::Write;

use serde_json::json;

use crate::model::Prediction;
use crate::text::mailbox::mbox::Message;

/// How `classify` and `label` flag a prediction that rests on the model's prior alone (a
/// document without a word; `filter` says it in `X-Cwtext-Note`).
pub const PRIOR_NOTE: &str = "rests on the prior: no words (the labels' training base rates)";

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
    Tsv,
}

/// How one prediction is printed: `--format`, `--top`, `--min-prob`, `--unsure-label`.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputOptions {
    pub format: OutputFormat,
    /// List only the N most probable labels.
    pub top: Option<usize>,
    /// Below this probability of the best label the decision is `unsure_label`.
    pub min_prob: Option<f64>,
    pub unsure_label: String,
}

impl OutputOptions {
    /// The decision printed for `p`: its best label, or the unsure label below `min_prob`.
    pub fn decision<'a>(&'a self, labels: &'a [String], p: &Prediction) -> &'a str {
        if p.is_unsure(self.min_prob) {
            &self.unsure_label
        } else {
            &labels[p.label]
        }
    }
}

impl Default for OutputOptions {
    fn default() -> Self {
        OutputOptions {
            format: OutputFormat::Text,
            top: None,
            min_prob: None,
            unsure_label: crate::jobs::route::UNSURE.into(),
        }
    }
}

/// The documents of one input named `name`: its messages (`name@OFFSET`, quoting undone) when
/// it is an mbox of two or more, else the input itself, with the mbox scan's warnings. A single
/// message with a `From ` line (as procmail hands one over) stays one document under its own
/// name. A compressed mbox splits as what it holds, at most `max_unpacked` bytes of it (the
/// model's document limit, `--max-document-bytes`, for `classify` and the server alike).
pub fn documents<'b>(
    bytes: &'b [u8],
    name: &str,
    max_unpacked: usize,
) -> (Vec<Message<'b>>, Vec<String>) {
    match crate::text::mailbox::mbox::split_bytes(bytes, name, max_unpacked) {
        Some((messages, warnings)) => (messages, warnings),
        None => (vec![(name.to_string(), Cow::Borrowed(bytes))], Vec::new()),
    }
}

/// Labels and probabilities, most probable first (ties: model order).
pub fn ranked<'m>(labels: &'m [String], p: &Prediction, top: Option<usize>) -> Vec<(&'m str, f64)> {
    let probs = &p.distribution.probabilities;
    let mut order: Vec<usize> = (0..probs.len()).collect();
    order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]).then(a.cmp(&b)));
    order.truncate(top.unwrap_or(usize::MAX));
    order
        .into_iter()
        .map(|i| (labels[i].as_str(), probs[i]))
        .collect()
}

/// Writes one prediction of the document `name` as `classify` prints it; `several` starts a
/// text block with `==> name <==`. TSV has no room for the prior-only note: the caller says it
/// elsewhere (the command line on standard error).
pub fn write_prediction(
    out: &mut impl Write,
    labels: &[String],
    name: &str,
    p: &Prediction,
    options: &OutputOptions,
    several: bool,
) -> std::io::Result<()> {
    let best = &labels[p.label];
    let unsure = p.is_unsure(options.min_prob);
    let label = options.decision(labels, p);
    let ranked = ranked(labels, p, options.top);
    match options.format {
        OutputFormat::Text => {
            if several {
                writeln!(out, "==> {name} <==")?;
            }
            writeln!(out, "{label}")?;
            if let (true, Some(min)) = (unsure, options.min_prob) {
                writeln!(
                    out,
                    "  unsure: best {best} {:.4}, below --min-prob {min}",
                    p.probability()
                )?;
            }
            if p.prior_only {
                writeln!(out, "  {PRIOR_NOTE}")?;
            }
            for (l, prob) in &ranked {
                writeln!(out, "  {prob:.4}  {l}")?;
            }
            writeln!(out, "  entropy {:.4}", p.distribution.entropy)?;
        }
        OutputFormat::Json => {
            let probabilities: serde_json::Map<String, serde_json::Value> = ranked
                .iter()
                .map(|(l, prob)| (l.to_string(), json!(prob)))
                .collect();
            let mut obj = json!({
                "file": name,
                "label": label,
                "probability": p.probability(),
                "probabilities": probabilities,
                "entropy": p.distribution.entropy,
            });
            // Only when they apply, as filter adds X-Cwtext-Best and X-Cwtext-Note.
            if unsure {
                obj["best"] = json!(best);
            }
            if p.prior_only {
                obj["prior_only"] = json!(true);
            }
            writeln!(out, "{obj}")?;
        }
        OutputFormat::Tsv => {
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
