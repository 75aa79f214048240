//! What `cwtext classify` prints for one prediction (text, JSON or TSV), and how one input is
//! split into the documents it classifies. The command line and `cwtext serve` both print with
//! these, so the server's answers are byte for byte the command's output.

use std::borrow::Cow;
use std::io::Write;

use serde::ser::{Serialize, Serializer};

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

/// The lines of one input named `name` as documents, `name:LINE` each (from 1), for `classify
/// --lines` (a file of one text per line, as `fasttext predict` reads it): blank lines are
/// left out, and the `__label__` tokens a fastText test file starts its lines with are taken
/// off, so that the answer cannot come from them.
pub fn lines<'b>(bytes: &'b [u8], name: &str) -> Vec<Message<'b>> {
    crate::text::rows::unlabelled_lines(bytes)
        .map(|(line, text)| (format!("{name}:{line}"), Cow::Borrowed(text)))
        .collect()
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
            let record = JsonPrediction {
                file: name,
                label,
                probability: p.probability(),
                probabilities: Ranked(&ranked),
                entropy: p.distribution.entropy,
                // Only when they apply, as filter adds X-Cwtext-Best and X-Cwtext-Note.
                best: unsure.then_some(best.as_str()),
                prior_only: p.prior_only,
            };
            serde_json::to_writer(&mut *out, &record).map_err(std::io::Error::from)?;
            writeln!(out)?;
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

/// One prediction as `--format json` prints it, its fields in this order; `best` and
/// `prior_only` only when they apply. Written straight out: building a `serde_json::Value`
/// first took 3% of a served classify request.
#[derive(serde::Serialize)]
struct JsonPrediction<'a> {
    file: &'a str,
    label: &'a str,
    probability: f64,
    probabilities: Ranked<'a>,
    entropy: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    best: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    prior_only: bool,
}

/// The ranked labels as a JSON object, most probable first.
struct Ranked<'a>(&'a [(&'a str, f64)]);

impl Serialize for Ranked<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(label, p)| (label, p)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::probability::LabelDistribution;
    use serde_json::json;

    /// The JSON line as the first version built it, through a `serde_json::Value`.
    fn through_a_value(labels: &[String], name: &str, p: &Prediction, o: &OutputOptions) -> String {
        let ranked = ranked(labels, p, o.top);
        let probabilities: serde_json::Map<String, serde_json::Value> = ranked
            .iter()
            .map(|(l, prob)| (l.to_string(), json!(prob)))
            .collect();
        let mut obj = json!({
            "file": name,
            "label": o.decision(labels, p),
            "probability": p.probability(),
            "probabilities": probabilities,
            "entropy": p.distribution.entropy,
        });
        if p.is_unsure(o.min_prob) {
            obj["best"] = json!(labels[p.label]);
        }
        if p.prior_only {
            obj["prior_only"] = json!(true);
        }
        format!("{obj}\n")
    }

    /// Written straight out, a prediction's JSON line is byte for byte the one built through a
    /// `serde_json::Value`: names and labels that need escaping, unsure and sure, prior-only,
    /// `--top`, ties, probabilities of 0, 1, tiny and NaN.
    #[test]
    fn json_written_straight_out_is_the_line_built_through_a_value() {
        let labels: Vec<String> = ["ham", "spam \"quoted\"", "naïve\\tab\t", "\u{1F600}"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let distributions = [
            vec![1.0, 0.0, 0.0, 0.0],
            vec![0.25, 0.25, 0.25, 0.25],
            vec![0.4, 0.35, 0.2, 0.05],
            vec![1e-300, 0.5, 0.5 - 1e-300, 0.0],
            vec![f64::NAN, 0.5, 0.25, 0.25],
        ];
        let mut cases = 0;
        for probabilities in &distributions {
            for label in 0..labels.len() {
                for prior_only in [false, true] {
                    for (top, min_prob) in
                        [(None, None), (Some(2), Some(0.9)), (Some(0), Some(0.1))]
                    {
                        let p = Prediction {
                            label,
                            distribution: LabelDistribution {
                                probabilities: probabilities.clone(),
                                entropy: if label == 3 { f64::NAN } else { 0.123456789 },
                            },
                            prior_only,
                        };
                        let o = OutputOptions {
                            format: OutputFormat::Json,
                            top,
                            min_prob,
                            unsure_label: "_unsure".into(),
                        };
                        for name in ["-", "mail \"1\".eml", "dir/ü@12"] {
                            let mut got = Vec::new();
                            write_prediction(&mut got, &labels, name, &p, &o, false).unwrap();
                            let want = through_a_value(&labels, name, &p, &o);
                            assert_eq!(String::from_utf8(got).unwrap(), want);
                            cases += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(cases, 5 * 4 * 2 * 3 * 3);
    }
}
