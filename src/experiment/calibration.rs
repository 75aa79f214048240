//! How honest are the shipped model's probabilities? The probability scale is fitted on a
//! held-out fifth with a model trained on the other four fifths (model A), but the model that
//! ships is trained on all five (model B), whose variances are smaller. This experiment trains
//! both on a corpus's training split and reports test-set calibration of model B under each way
//! of choosing its scale, beside the scale fitted on the test set itself (the oracle).

use super::{Notes, SplitSpec};
use crate::error::Result;
use crate::jobs::train::{check_epochs, train_examples, Example, TrainSettings};
use crate::learn::calibration::{
    fit_scale, fit_scale_gibbs, probabilities_at, Calibration, Objective,
};
use crate::learn::learner::{argmax, DiagonalLearner, Learner, ScoreGaussian};
use crate::progress::{NoProgress, Progress};

/// `cwtext experiment calibration`: the corpus, and the settings of both models.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    pub split: SplitSpec,
    /// Epochs per model.
    pub epochs: usize,
    /// Confidence η of the learner.
    pub eta: f64,
    /// Keep the English stop-word list (otherwise none).
    pub stopwords: bool,
}

impl Experiment {
    /// The settings of both models, checked: cwtext's default pipeline with symbols, and the
    /// stop words and η asked for.
    pub fn settings(&self) -> Result<TrainSettings> {
        check_epochs(self.epochs)?;
        let mut base = TrainSettings::new(self.epochs, self.split.seed);
        base.learner.eta = self.eta;
        base.pipeline.symbols = true;
        if !self.stopwords {
            base.pipeline.drop_stop_words();
        }
        base.learner.clone().validate()?;
        Ok(base)
    }

    /// Checks the settings, reads the corpus, trains both models ([`run`], the held-out fifth
    /// of `train`) and returns the table in Markdown.
    pub fn run(&self, progress: &dyn Progress, notes: Notes) -> Result<String> {
        let base = self.settings()?;
        let split = self.split.read(&base.pipeline, progress, notes)?;
        let held = |e: &Example| e.split.held_out;
        let rows = run(&base, &split.labels, &split.train, &held, &split.test)?;
        let header = format!(
            "Calibration on {}: {} training / {} test documents, {} labels, {} epochs, eta {}, stop words {}, seed {}.",
            self.split.name(),
            split.train.len(),
            split.test.len(),
            split.labels.len(),
            self.epochs,
            self.eta,
            if self.stopwords { "english" } else { "none" },
            self.split.seed
        );
        Ok(markdown(&rows, &header))
    }
}

/// One way of choosing the scale, and what it gives on the test split.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub name: String,
    pub scale: f64,
    pub ece: f64,
    pub brier: f64,
    pub log_loss: f64,
}

fn gaussians(learner: &DiagonalLearner, examples: &[&Example]) -> Vec<(Vec<ScoreGaussian>, usize)> {
    examples
        .iter()
        .map(|e| (learner.score_gaussians(&e.x), e.label))
        .collect()
}

/// Test figures of score Gaussians at `scale`, the prediction being the argmax of the means.
fn figures(name: &str, documents: &[(Vec<ScoreGaussian>, usize)], scale: f64) -> Row {
    let mut c = Calibration::default();
    let mut log_loss = 0.0;
    for (g, truth) in documents {
        let p = probabilities_at(g, scale);
        let predicted = argmax(&g.iter().map(|s| s.mean).collect::<Vec<_>>());
        c.add(&p, predicted, Some(*truth));
        log_loss -= p[*truth].max(1e-12).ln();
    }
    let report = c.finish();
    Row {
        name: name.to_string(),
        scale,
        ece: report.ece,
        brier: report.brier,
        log_loss: log_loss / documents.len().max(1) as f64,
    }
}

/// The mean over `documents` of the summed score variance of every label.
fn mean_variance(learner: &DiagonalLearner, documents: &[&Example]) -> f64 {
    let total: f64 = documents
        .iter()
        .map(|e| {
            learner
                .score_gaussians(&e.x)
                .iter()
                .map(|g| g.variance)
                .sum::<f64>()
        })
        .sum();
    total / documents.len().max(1) as f64
}

/// Trains model A on the training documents outside the held-out fifth and model B on all of
/// them, and scores B's test probabilities under each choice of scale.
pub fn run(
    settings: &TrainSettings,
    labels: &[String],
    train: &[Example],
    held_out: &dyn Fn(&Example) -> bool,
    test: &[Example],
) -> Result<Vec<Row>> {
    let hidden = NoProgress;
    let (held, kept): (Vec<&Example>, Vec<&Example>) = train.iter().partition(|e| held_out(e));
    let kept_owned: Vec<Example> = kept.iter().map(|&e| e.clone()).collect();
    let none = |_: &Example| 0;
    let (a, b) = rayon::join(
        || train_examples(&kept_owned, labels.to_vec(), settings, None, &none, &hidden),
        || train_examples(train, labels.to_vec(), settings, None, &none, &hidden),
    );
    let (a, b) = (a?.learner, b?.learner);
    let test: Vec<&Example> = test.iter().collect();
    let a_held = gaussians(&a, &held);
    let b_test = gaussians(&b, &test);
    let a_test = gaussians(&a, &test);
    let gibbs = fit_scale_gibbs(&a_held).scale;
    let brier = fit_scale(&a_held, Objective::Brier).scale;
    let log_loss = fit_scale(&a_held, Objective::LogLoss).scale;
    // How much more certain B is than A about the same documents (both trained on them).
    let shrink = mean_variance(&b, &kept) / mean_variance(&a, &kept);
    let oracle = fit_scale(&b_test, Objective::Brier).scale;
    let oracle_a = fit_scale(&a_test, Objective::Brier).scale;
    Ok(vec![
        figures("B, uncalibrated (scale 1)", &b_test, 1.0),
        figures(
            "B, Gibbs Brier fit on A's held-out fifth (before)",
            &b_test,
            gibbs,
        ),
        figures("B, smooth Brier fit on A's held-out fifth", &b_test, brier),
        figures(
            "B, smooth log-loss fit on A's held-out fifth",
            &b_test,
            log_loss,
        ),
        figures(
            &format!("B, smooth Brier fit ÷ variance shrinkage {shrink:.3}"),
            &b_test,
            brier / shrink,
        ),
        figures(
            "B, smooth Brier fit ÷ √shrinkage",
            &b_test,
            brier / shrink.sqrt(),
        ),
        figures("B, oracle (Brier fit on the test split)", &b_test, oracle),
        figures("A, smooth Brier fit on its held-out fifth", &a_test, brier),
        figures("A, oracle", &a_test, oracle_a),
    ])
}

/// The rows as a Markdown table.
pub fn markdown(rows: &[Row], header: &str) -> String {
    let mut out = format!(
        "{header}\n\n| scale chosen by | scale | test ECE | test Brier | test log loss |\n|---|---:|---:|---:|---:|\n"
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {:.4} | {:.4} | {:.4} | {:.4} |\n",
            r.name, r.scale, r.ece, r.brier, r.log_loss
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_are_checked_before_the_corpus_is_read() {
        let experiment = |epochs, eta| Experiment {
            split: SplitSpec::new("no-such-corpus"),
            epochs,
            eta,
            stopwords: false,
        };
        let settings = experiment(5, 0.9).settings().unwrap();
        assert_eq!(settings.learner.eta, 0.9);
        assert!(!settings.pipeline.has_stop_words());
        for (e, message) in [
            (experiment(0, 0.9), "epochs must be in [1, 1000], but is 0"),
            (experiment(5, 1.5), "eta must be in (0.5, 1), but is 1.5"),
        ] {
            let err = e
                .run(&NoProgress, &mut |_| {})
                .expect_err("refused")
                .to_string();
            assert!(err.contains(message), "{message:?} not in {err:?}");
        }
    }
}
