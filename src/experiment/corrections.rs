//! What corrections (`cwtext learn`) do to a trained router, measured on held-out test documents
//! (issue 16): the scenarios a user meets after deployment, each a stream of corrections applied
//! with [`crate::jobs::online::learn_with`], exactly what `learn` runs.
//!
//! * **New folders**: a model trained without some labels, then refiles of those labels only;
//!   accuracy on the old labels' documents must stay, and the new labels must be found.
//! * **One-sided**: corrections drawn from two existing labels only; the others must keep their
//!   accuracy.
//! * **One correction**: a single misclassified message learned; it must now be classified as
//!   corrected, and nothing else may move much.
//! * **Mixed**: a random sample of every label (half the training files trained, the other half
//!   learned), the case online learning is made for.
//!
//! Every figure is computed as `cwtext eval` computes it ([`Evaluator`], the same Gibbs
//! sampling), so a row can be checked with `train`, `learn` and `eval` on the same files.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::error::Result;
use crate::features::FeatureVector;
use crate::jobs::metrics::Evaluator;
use crate::jobs::online::{learn_with, LearnOptions};
use crate::learn::learner::argmax;
use crate::learn::probability::Method;
use crate::model::Model;

/// A featurised document and the name of its label.
#[derive(Debug, Clone)]
pub struct Doc {
    pub x: FeatureVector,
    pub label: String,
}

/// A model's figures on test documents.
#[derive(Debug, Clone, PartialEq)]
pub struct Scores {
    pub documents: usize,
    pub accuracy: f64,
    /// Accuracy on the documents of the `group` labels given to [`evaluate`].
    pub group_accuracy: f64,
    /// The mean recall of the `group` labels.
    pub group_mean_recall: f64,
    pub ece: f64,
    /// Recall of every label that has test documents, by name.
    pub recall: Vec<(String, f64)>,
    /// How often each label was predicted, and how many test documents it has, by name.
    pub predicted: Vec<(String, usize, usize)>,
}

impl Scores {
    pub fn recall_of(&self, label: &str) -> f64 {
        self.recall
            .iter()
            .find(|(l, _)| l == label)
            .map_or(0.0, |r| r.1)
    }

    /// (predicted, true) document counts of a label.
    pub fn predictions_of(&self, label: &str) -> (usize, usize) {
        self.predicted
            .iter()
            .find(|(l, ..)| l == label)
            .map_or((0, 0), |p| (p.1, p.2))
    }
}

/// Evaluates `model` on `test` as `cwtext eval` does; `group` names the labels whose documents
/// [`Scores::group_accuracy`] counts (the old labels, or those no correction came from).
pub fn evaluate(model: &Model, test: &[Doc], group: &[String], method: Method) -> Scores {
    let predictions: Vec<_> = test
        .par_iter()
        .map(|d| model.predict(&d.x, method))
        .collect();
    let mut evaluator = Evaluator::new(model.labels().to_vec());
    let (mut group_right, mut group_total) = (0, 0);
    for (d, p) in test.iter().zip(&predictions) {
        let truth = evaluator.label_index(&d.label);
        evaluator.add(truth, p.label, &p.distribution);
        if group.contains(&d.label) {
            group_right += usize::from(truth == p.label);
            group_total += 1;
        }
    }
    let report = evaluator.finish();
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let recall: Vec<(String, f64)> = report
        .per_label
        .iter()
        .filter(|s| s.support > 0)
        .map(|s| (s.label.clone(), s.recall))
        .collect();
    let group_recalls: Vec<f64> = recall
        .iter()
        .filter(|(l, _)| group.contains(l))
        .map(|r| r.1)
        .collect();
    let k = report.labels.len();
    let predicted = (0..k)
        .map(|i| {
            let column: usize = (0..k).map(|t| report.confusion[t][i]).sum();
            (
                report.labels[i].clone(),
                column,
                report.confusion[i].iter().sum(),
            )
        })
        .collect();
    Scores {
        documents: report.documents,
        accuracy: report.accuracy,
        group_accuracy: ratio(group_right, group_total),
        group_mean_recall: group_recalls.iter().sum::<f64>() / group_recalls.len().max(1) as f64,
        ece: report.ece,
        recall,
        predicted,
    }
}

/// Accuracy of the mean classifier (no probabilities: the argmax of the mean scores).
pub fn accuracy(model: &Model, test: &[Doc]) -> f64 {
    let right: usize = test
        .par_iter()
        .map(|d| {
            let predicted = argmax(&model.scores(&d.x));
            usize::from(model.labels().get(predicted) == Some(&d.label))
        })
        .sum();
    right as f64 / test.len().max(1) as f64
}

/// `base` after learning `docs` in order.
pub fn corrected(base: &Model, docs: &[&Doc], options: &LearnOptions) -> Result<Model> {
    let mut model = base.clone();
    let pairs: Vec<(FeatureVector, String)> = docs
        .iter()
        .map(|d| (d.x.clone(), d.label.clone()))
        .collect();
    learn_with(&mut model, &pairs, options)?;
    Ok(model)
}

/// `docs` in the order `cwtext learn DIR --seed SEED` learns a folder holding them (listed by
/// label, then shuffled).
pub fn learn_order<'a>(docs: &[&'a Doc], seed: u64) -> Vec<&'a Doc> {
    let mut order = docs.to_vec();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    order
}

/// One size of the new-folder scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct NewFolderRow {
    /// Refiles per new label (0: the model before any correction).
    pub per_label: usize,
    pub corrections: usize,
    pub scores: Scores,
}

/// New folders: `refiles[i]` are the documents of new label i in the order a user refiles
/// them; for every size n, the first n of each are learned (in `learn DIR`'s order) into `base`.
pub fn new_folders(
    base: &Model,
    refiles: &[Vec<Doc>],
    sizes: &[usize],
    test: &[Doc],
    seed: u64,
    method: Method,
    options: &LearnOptions,
) -> Result<Vec<NewFolderRow>> {
    let old = base.labels().to_vec();
    let mut rows = vec![NewFolderRow {
        per_label: 0,
        corrections: 0,
        scores: evaluate(base, test, &old, method),
    }];
    for &n in sizes {
        let docs: Vec<&Doc> = refiles.iter().flat_map(|r| r.iter().take(n)).collect();
        let model = corrected(base, &learn_order(&docs, seed), options)?;
        rows.push(NewFolderRow {
            per_label: n,
            corrections: docs.len(),
            scores: evaluate(&model, test, &old, method),
        });
    }
    Ok(rows)
}

/// A stream of corrections and the model's figures after it.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamRow {
    pub corrections: usize,
    pub scores: Scores,
}

/// The figures of `base` and of `base` after each prefix of `stream` whose length is in
/// `sizes` (one pass: the model after n corrections continues to the next size).
pub fn stream(
    base: &Model,
    stream: &[&Doc],
    sizes: &[usize],
    test: &[Doc],
    group: &[String],
    method: Method,
    options: &LearnOptions,
) -> Result<Vec<StreamRow>> {
    let mut model = base.clone();
    let mut rows = vec![StreamRow {
        corrections: 0,
        scores: evaluate(&model, test, group, method),
    }];
    let mut done = 0;
    for &n in sizes {
        let n = n.min(stream.len());
        if n <= done {
            continue;
        }
        let pairs: Vec<(FeatureVector, String)> = stream[done..n]
            .iter()
            .map(|d| (d.x.clone(), d.label.clone()))
            .collect();
        learn_with(&mut model, &pairs, options)?;
        done = n;
        rows.push(StreamRow {
            corrections: n,
            scores: evaluate(&model, test, group, method),
        });
    }
    Ok(rows)
}

/// One misclassified message learned on its own.
#[derive(Debug, Clone, PartialEq)]
pub struct SingleCorrection {
    pub label: String,
    /// What the model said before.
    pub before: String,
    /// Whether the model now says `label`.
    pub fixed: bool,
    /// The rank of the true label among the model's scores before (1 = best).
    pub rank_before: usize,
    /// Test accuracy after minus before (mean classifier).
    pub delta_accuracy: f64,
}

/// One correction at a time: each of `candidates` that `base` misclassifies (up to `trials`)
/// is learned alone into a copy of `base`.
pub fn single_corrections(
    base: &Model,
    candidates: &[Doc],
    trials: usize,
    test: &[Doc],
    options: &LearnOptions,
) -> Result<Vec<SingleCorrection>> {
    let before = accuracy(base, test);
    let mut out = Vec::new();
    for d in candidates {
        if out.len() == trials {
            break;
        }
        let scores = base.scores(&d.x);
        let predicted = argmax(&scores);
        let Some(truth) = base.labels().iter().position(|l| *l == d.label) else {
            continue;
        };
        if predicted == truth {
            continue;
        }
        let rank_before = 1 + scores.iter().filter(|&&s| s > scores[truth]).count();
        let model = corrected(base, &[d], options)?;
        out.push(SingleCorrection {
            label: d.label.clone(),
            before: base.labels()[predicted].clone(),
            fixed: argmax(&model.scores(&d.x)) == truth,
            rank_before,
            delta_accuracy: accuracy(&model, test) - before,
        });
    }
    Ok(out)
}

/// The report's tables, in Markdown.
pub struct Report<'a> {
    pub header: String,
    pub new_labels: &'a [String],
    /// Each scenario's rows; None when it was not run (its section is left out).
    pub new_folders: Option<&'a [NewFolderRow]>,
    pub one_sided_labels: &'a [String],
    pub one_sided: Option<&'a [StreamRow]>,
    pub singles: Option<&'a [SingleCorrection]>,
    pub mixed: Option<&'a [StreamRow]>,
}

fn pct(x: f64) -> String {
    format!("{:.1}", 100.0 * x)
}

impl Report<'_> {
    pub fn markdown(&self) -> String {
        let mut out = format!("{}\n", self.header);
        if let Some(rows) = self.new_folders {
            self.new_folders_section(&mut out, rows);
        }
        if let Some(rows) = self.one_sided {
            self.one_sided_section(&mut out, rows);
        }
        if let Some(singles) = self.singles {
            singles_section(&mut out, singles);
        }
        if let Some(rows) = self.mixed {
            mixed_section(&mut out, rows);
        }
        out
    }

    fn new_folders_section(&self, out: &mut String, rows: &[NewFolderRow]) {
        out.push_str(&format!(
            "\n**New folders** ({}): refiles of labels the model was not trained on.\n\n",
            self.new_labels.join(", ")
        ));
        out.push_str("| refiled per new label | accuracy | accuracy on old labels | mean recall of old labels |");
        for l in self.new_labels {
            out.push_str(&format!(" recall {l} |"));
        }
        for l in self.new_labels {
            out.push_str(&format!(" predicted {l} |"));
        }
        out.push_str(" ECE |\n|---|---|---|---|");
        out.push_str(&"---|".repeat(2 * self.new_labels.len() + 1));
        out.push('\n');
        for r in rows {
            let s = &r.scores;
            out.push_str(&format!(
                "| {} | {} | {} | {} |",
                r.per_label,
                pct(s.accuracy),
                pct(s.group_accuracy),
                pct(s.group_mean_recall)
            ));
            for l in self.new_labels {
                out.push_str(&format!(" {:.2} |", s.recall_of(l)));
            }
            for l in self.new_labels {
                let (p, t) = s.predictions_of(l);
                out.push_str(&format!(" {p} of {t} |"));
            }
            out.push_str(&format!(" {:.3} |\n", s.ece));
        }
    }

    fn one_sided_section(&self, out: &mut String, rows: &[StreamRow]) {
        out.push_str(&format!(
            "\n**One-sided corrections** from {} only, into a model trained on half of every label's files (the other half is the pool of corrections).\n\n",
            self.one_sided_labels.join(" and ")
        ));
        out.push_str("| corrections | accuracy | accuracy on the other labels |");
        for l in self.one_sided_labels {
            out.push_str(&format!(" recall {l} |"));
        }
        out.push_str(" ECE |\n|---|---|---|");
        out.push_str(&"---|".repeat(self.one_sided_labels.len() + 1));
        out.push('\n');
        for r in rows {
            let s = &r.scores;
            out.push_str(&format!(
                "| {} | {} | {} |",
                r.corrections,
                pct(s.accuracy),
                pct(s.group_accuracy)
            ));
            for l in self.one_sided_labels {
                out.push_str(&format!(" {:.3} |", s.recall_of(l)));
            }
            out.push_str(&format!(" {:.3} |\n", s.ece));
        }
    }
}

fn singles_section(out: &mut String, singles: &[SingleCorrection]) {
    let fixed = singles.iter().filter(|s| s.fixed).count();
    let deltas: Vec<f64> = singles.iter().map(|s| 100.0 * s.delta_accuracy).collect();
    let max = deltas.iter().fold(0.0f64, |m, d| m.max(d.abs()));
    let (mean, _) = super::mean_sd(&deltas);
    out.push_str(&format!(
            "\n**One correction**: {} misclassified messages of the pool, each learned alone into the half model: {fixed} now classified as corrected; test accuracy moved by {mean:+.3} points on average, at most {max:.3} points.\n\n",
            singles.len()
        ));
    out.push_str("| label | predicted before | rank of the label before | fixed | Δ test accuracy (points) |\n|---|---|---|---|---|\n");
    for s in singles {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {:+.3} |\n",
            s.label,
            s.before,
            s.rank_before,
            if s.fixed { "yes" } else { "no" },
            100.0 * s.delta_accuracy
        ));
    }
}

fn mixed_section(out: &mut String, rows: &[StreamRow]) {
    out.push_str("\n**Mixed corrections**: the pool (the other half of every label's files), learned in a random order.\n\n| corrections | accuracy | ECE |\n|---|---|---|\n");
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {:.3} |\n",
            r.corrections,
            pct(r.scores.accuracy),
            r.scores.ece
        ));
    }
}
