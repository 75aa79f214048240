//! Evaluation metrics: accuracy, per-label precision / recall / F1, macro-F1, the confusion
//! matrix and mean normalised entropy. Labels are the model's, plus any label of the evaluation
//! data the model does not know (every document of such a label counts as an error).

use serde::Serialize;

use crate::learn::calibration::{Calibration, CalibrationBin};
use crate::learn::probability::LabelDistribution;

/// A label of the evaluation data that the model does not have: every one of its documents
/// counts as an error, which a user who named a test folder otherwise than the training one
/// (`Spam` for `spam`, `hockey` for `rec.sport.hockey`) should be told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnknownLabel {
    pub label: String,
    /// The evaluation documents of the label.
    pub documents: usize,
    /// The model's label it looks like ([`crate::model::label_like`]).
    pub like: Option<String>,
}

/// The labels of `data` (with `documents[i]` documents of `data[i]`) that `model` does not
/// have, in `data`'s order.
pub fn unknown_labels(model: &[String], data: &[String], documents: &[usize]) -> Vec<UnknownLabel> {
    data.iter()
        .zip(documents)
        .filter(|(label, _)| !model.contains(label))
        .map(|(label, &documents)| UnknownLabel {
            label: label.clone(),
            documents,
            like: crate::model::label_like(model, label).cloned(),
        })
        .collect()
}

/// Precision, recall and F1 of one label.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelScores {
    pub label: String,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    /// Documents whose true label this is.
    pub support: usize,
}

/// The evaluation report (the `eval --format json` object).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evaluation {
    pub documents: usize,
    pub accuracy: f64,
    pub macro_f1: f64,
    pub mean_entropy: f64,
    /// Expected calibration error over 10 confidence bins.
    pub ece: f64,
    /// Multi-class Brier score.
    pub brier: f64,
    /// The EMNLP 2009 §7 table: examples and errors per confidence bin.
    pub calibration: Vec<CalibrationBin>,
    pub per_label: Vec<LabelScores>,
    /// The label order of the confusion matrix.
    pub labels: Vec<String>,
    /// `confusion[true][predicted]` document counts.
    pub confusion: Vec<Vec<usize>>,
    /// The accuracy–coverage trade-off of an unsure band: at each `--min-prob` threshold, the
    /// share of documents whose predicted label has at least that probability and the accuracy
    /// on them (the others would go to the unsure label).
    pub coverage: Vec<CoveragePoint>,
}

/// One threshold of the accuracy–coverage table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoveragePoint {
    /// Documents whose predicted label's probability is below this are unsure.
    pub min_prob: f64,
    /// Documents kept (not unsure).
    pub kept: usize,
    /// kept / documents.
    pub share: f64,
    /// Accuracy on the kept documents (`None` when none is kept).
    pub accuracy: Option<f64>,
}

/// The thresholds of [`Evaluation::coverage`].
pub const COVERAGE_THRESHOLDS: [f64; 9] = [0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999];

/// The accuracy–coverage table of (probability of the predicted label, right) pairs.
pub fn coverage(documents: &[(f64, bool)], thresholds: &[f64]) -> Vec<CoveragePoint> {
    thresholds
        .iter()
        .map(|&min_prob| {
            let kept: Vec<bool> = documents
                .iter()
                .filter(|(p, _)| *p >= min_prob)
                .map(|&(_, right)| right)
                .collect();
            CoveragePoint {
                min_prob,
                kept: kept.len(),
                share: if documents.is_empty() {
                    0.0
                } else {
                    kept.len() as f64 / documents.len() as f64
                },
                accuracy: (!kept.is_empty())
                    .then(|| kept.iter().filter(|&&r| r).count() as f64 / kept.len() as f64),
            }
        })
        .collect()
}

/// Accumulates predictions.
#[derive(Debug, Clone)]
pub struct Evaluator {
    labels: Vec<String>,
    confusion: Vec<Vec<usize>>,
    entropy_sum: f64,
    documents: usize,
    /// The number of labels the model knows (evaluation labels beyond it are unknown to it).
    known: usize,
    calibration: Calibration,
    /// Per document: the predicted label's probability and whether it was right.
    confidence: Vec<(f64, bool)>,
}

impl Evaluator {
    pub fn new(labels: Vec<String>) -> Self {
        let k = labels.len();
        Evaluator {
            labels,
            confusion: vec![vec![0; k]; k],
            entropy_sum: 0.0,
            documents: 0,
            known: k,
            calibration: Calibration::default(),
            confidence: Vec::new(),
        }
    }

    /// The index of a label, adding it when the model does not know it.
    pub fn label_index(&mut self, label: &str) -> usize {
        if let Some(i) = self.labels.iter().position(|l| l == label) {
            return i;
        }
        self.labels.push(label.to_string());
        self.confusion.iter_mut().for_each(|row| row.push(0));
        self.confusion.push(vec![0; self.labels.len()]);
        self.labels.len() - 1
    }

    /// Adds one prediction: true label, predicted label, and the distribution over the model's
    /// labels.
    pub fn add(&mut self, truth: usize, predicted: usize, distribution: &LabelDistribution) {
        self.confusion[truth][predicted] += 1;
        self.entropy_sum += distribution.entropy;
        self.documents += 1;
        let p = distribution
            .probabilities
            .get(predicted)
            .copied()
            .unwrap_or(0.0);
        self.confidence.push((p, truth == predicted));
        let known = (truth < self.known).then_some(truth);
        self.calibration
            .add(&distribution.probabilities, predicted, known);
    }

    pub fn finish(self) -> Evaluation {
        let calibration = self.calibration.finish();
        let k = self.labels.len();
        let correct: usize = (0..k).map(|i| self.confusion[i][i]).sum();
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let per_label: Vec<LabelScores> = (0..k)
            .map(|i| {
                let tp = self.confusion[i][i];
                let predicted: usize = (0..k).map(|t| self.confusion[t][i]).sum();
                let support: usize = self.confusion[i].iter().sum();
                let precision = ratio(tp, predicted);
                let recall = ratio(tp, support);
                let f1 = if precision + recall > 0.0 {
                    2.0 * precision * recall / (precision + recall)
                } else {
                    0.0
                };
                LabelScores {
                    label: self.labels[i].clone(),
                    precision,
                    recall,
                    f1,
                    support,
                }
            })
            .collect();
        // Macro-F1 over the labels that occur in the data or in the predictions.
        let present: Vec<&LabelScores> = per_label
            .iter()
            .enumerate()
            .filter(|(i, s)| s.support > 0 || (0..k).any(|t| self.confusion[t][*i] > 0))
            .map(|(_, s)| s)
            .collect();
        let macro_f1 = if present.is_empty() {
            0.0
        } else {
            present.iter().map(|s| s.f1).sum::<f64>() / present.len() as f64
        };
        Evaluation {
            documents: self.documents,
            accuracy: ratio(correct, self.documents),
            macro_f1,
            mean_entropy: if self.documents == 0 {
                0.0
            } else {
                self.entropy_sum / self.documents as f64
            },
            ece: calibration.ece,
            brier: calibration.brier,
            calibration: calibration.bins,
            per_label,
            labels: self.labels,
            confusion: self.confusion,
            coverage: coverage(&self.confidence, &COVERAGE_THRESHOLDS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_the_model_lacks_are_named_with_the_one_they_look_like() {
        let model: Vec<String> = ["neg", "pos", "rec.sport.hockey", "sci.space"]
            .map(String::from)
            .to_vec();
        let data: Vec<String> = ["pos", "rt-polarity.neg", "hockey", "Sci.Space", "misc"]
            .map(String::from)
            .to_vec();
        let unknown = unknown_labels(&model, &data, &[5, 4, 3, 2, 1]);
        let said: Vec<(&str, usize, Option<&str>)> = unknown
            .iter()
            .map(|u| (u.label.as_str(), u.documents, u.like.as_deref()))
            .collect();
        assert_eq!(
            said,
            [
                ("rt-polarity.neg", 4, Some("neg")),
                ("hockey", 3, Some("rec.sport.hockey")),
                ("Sci.Space", 2, Some("sci.space")),
                ("misc", 1, None),
            ]
        );
        // Case beyond ASCII: a test folder `Été` for a model's `été`.
        let model = vec!["été".to_string()];
        assert_eq!(
            unknown_labels(&model, &["Été".into()], &[1])[0]
                .like
                .as_deref(),
            Some("été")
        );
        // A shared ending without a separator is no likeness: `space` is not in `aerospace`.
        let model = vec!["aerospace".to_string()];
        assert_eq!(
            unknown_labels(&model, &["space".into()], &[1])[0].like,
            None
        );
    }

    /// A distribution that puts 0.8 on `label` of two.
    fn dist(label: usize, entropy: f64) -> LabelDistribution {
        let mut probabilities = vec![0.2, 0.2];
        probabilities[label] = 0.8;
        probabilities.truncate(2);
        LabelDistribution {
            probabilities,
            entropy,
        }
    }

    /// Hand-computed: truths a,a,a,b,b; predictions a,a,b,b,a.
    /// a: P = 2/3, R = 2/3, F1 = 2/3; b: P = 1/2, R = 1/2, F1 = 1/2; macro-F1 = 7/12.
    #[test]
    fn metrics_by_hand() {
        let mut e = Evaluator::new(vec!["a".into(), "b".into()]);
        for (t, p) in [(0, 0), (0, 0), (0, 1), (1, 1), (1, 0)] {
            e.add(t, p, &dist(p, 0.5));
        }
        let r = e.finish();
        assert!((r.accuracy - 0.6).abs() < 1e-12);
        assert!((r.per_label[0].f1 - 2.0 / 3.0).abs() < 1e-12);
        assert!((r.per_label[1].precision - 0.5).abs() < 1e-12);
        assert!((r.macro_f1 - 7.0 / 12.0).abs() < 1e-12);
        assert_eq!(r.confusion, vec![vec![2, 1], vec![1, 1]]);
        assert!((r.mean_entropy - 0.5).abs() < 1e-12);
    }

    /// Hand-computed: probabilities 0.55 (right), 0.65 (wrong), 0.95 (right), 0.99 (right).
    #[test]
    fn coverage_by_hand() {
        let docs = [(0.55, true), (0.65, false), (0.95, true), (0.99, true)];
        let table = coverage(&docs, &[0.0, 0.6, 0.9, 0.99, 0.999]);
        let got: Vec<(usize, f64, Option<f64>)> = table
            .iter()
            .map(|c| (c.kept, c.share, c.accuracy))
            .collect();
        assert_eq!(
            got,
            vec![
                (4, 1.0, Some(0.75)),
                (3, 0.75, Some(2.0 / 3.0)),
                (2, 0.5, Some(1.0)),
                (1, 0.25, Some(1.0)),
                (0, 0.0, None),
            ]
        );
        let mut e = Evaluator::new(vec!["a".into(), "b".into()]);
        e.add(0, 0, &dist(0, 0.5));
        e.add(1, 0, &dist(0, 0.5));
        let r = e.finish();
        assert_eq!(r.coverage[0].accuracy, Some(0.5));
        assert_eq!(r.coverage[4].kept, 2, "0.8 is kept at 0.8");
        assert_eq!(r.coverage[5].kept, 0, "0.8 < 0.9: both unsure at 0.9");
    }

    #[test]
    fn unknown_labels_are_errors() {
        let mut e = Evaluator::new(vec!["a".into()]);
        let c = e.label_index("c");
        e.add(c, 0, &dist(0, 0.0));
        e.add(0, 0, &dist(0, 0.0));
        let r = e.finish();
        assert_eq!(r.labels, ["a", "c"]);
        assert!((r.accuracy - 0.5).abs() < 1e-12);
        assert_eq!(r.per_label[1].recall, 0.0);
    }
}
