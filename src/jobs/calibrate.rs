//! Fitting the probability scale of a trained learner on held-out examples (the step of
//! `train` that calibrates; the fit itself is [`crate::learn::calibration`]).

use rayon::prelude::*;

use crate::error::Result;
use crate::jobs::examples::{for_each_while, Example, ExampleSource, Subset};
use crate::jobs::trainer::{start_trainer, TrainSettings};
use crate::learn::learner::{DiagonalLearner, Learner, ScoreGaussian};
use crate::model::{CalibrationInfo, Model};
use crate::progress::NoProgress;

/// What fitting the probability scale found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CalibrationFit {
    /// The scale the shipped model uses: the fit divided by the variance shrinkage.
    pub scale: f64,
    /// The ratio of the shipped model's score variances to the fitted model's
    /// ([`crate::learn::calibration::variance_shrinkage`]).
    pub variance_shrinkage: f64,
    pub held_out: usize,
    /// The folds of a cross-validated fit ([`fit_by_folds`]); 0 for the held-out fifth.
    pub folds: usize,
    pub brier_before: f64,
    pub brier_after: f64,
}

impl CalibrationFit {
    /// What the model stores about the fit.
    pub fn info(&self) -> CalibrationInfo {
        CalibrationInfo {
            fitted_by: "train".into(),
            held_out: self.held_out,
            folds: self.folds,
            brier_before: self.brier_before,
            brier_after: self.brier_after,
            variance_shrinkage: self.variance_shrinkage,
            corrections_since: 0,
        }
    }
}

/// The training documents the variance shrinkage is measured on (the first outside the
/// held-out fifth): a ratio of two sums, stable on a few hundred documents (20 Newsgroups: 0.983
/// on 2,000, 0.984 on 500), and each document costs two passes through the weight table.
pub const SHRINKAGE_SAMPLE: usize = 500;

/// The fewest held-out documents the probability scale is fitted on.
pub const MIN_CALIBRATION_DOCUMENTS: usize = 20;

/// Fits the probability scale of `learner` on held-out examples (in memory or a cache file).
/// `offsets` are the label shift's ([`crate::learn::label_shift`]; empty for none), added to the
/// means as the shipped model will.
pub fn fit_probability_scale<S: ExampleSource + ?Sized>(
    learner: &DiagonalLearner,
    held_out: &S,
    offsets: &[f64],
) -> Result<CalibrationFit> {
    // The sample the fit would take anyway, before the score Gaussians (a random access into
    // the weight table per feature and label: the costliest part of calibrating).
    // Read in order: a cache file then reads ahead.
    let mut sample = crate::learn::calibration::fit_sample_indices(held_out.len()).peekable();
    let mut documents = Vec::new();
    crate::jobs::examples::for_each_while(held_out, |i, e| {
        if sample.peek() == Some(&i) {
            let mut gaussians = learner.score_gaussians(&e.x);
            gaussians
                .iter_mut()
                .zip(offsets)
                .for_each(|(g, b)| g.mean += b);
            documents.push((gaussians, e.label));
            sample.next();
        }
        sample.peek().is_some()
    })?;
    let fit = crate::learn::calibration::fit_scale(
        &documents,
        crate::learn::calibration::Objective::Brier,
    );
    Ok(CalibrationFit {
        scale: fit.scale,
        variance_shrinkage: 1.0,
        held_out: fit.documents,
        folds: 0,
        brier_before: fit.before,
        brier_after: fit.after,
    })
}

/// The probability scale of a corpus too small to hold out [`MIN_CALIBRATION_DOCUMENTS`], fitted
/// by cross-validation: the settings trained for `epochs` on every fold but one of `folds`
/// (`fold(e)` gives an example's), each document scored by the model that did not see it, and
/// the scale fitted on every document so scored. Also returns the fold models' mean summed
/// score variance over the documents among the first [`SHRINKAGE_SAMPLE`] that they trained on, the
/// `before` of the shipped model's variance shrinkage ([`mean_summed_variance`] its `after`). `None`
/// when fewer than [`MIN_CALIBRATION_DOCUMENTS`] could be scored: fitted on 10 to 18 documents,
/// the scale was worse than none on 5 of 7 small slices by the Brier score.
///
/// Without it a model of 60 messages kept the scale 1: its probabilities were over-sure (the
/// fixture mail's ECE 0.31), and `learn` demanded η on the raw score variance
/// ([`crate::jobs::online::correction_scale`]), whose steps are the largest: 12 refiles of a new
/// folder cost such a router 5 to 11 points of its ham and spam, where a router of 200 messages,
/// calibrated on its held-out fifth, lost 0.4 to 1.0 (`benches/results/small-mail-later-2026-11-29.md`).
pub fn fit_by_folds<S: ExampleSource + Sync + ?Sized>(
    settings: &TrainSettings,
    examples: &S,
    folds: usize,
    fold: &(dyn Fn(&Example) -> usize + Sync),
    labels: usize,
    start: Option<&Model>,
) -> Result<Option<(CalibrationFit, f64)>> {
    let parts = Subset::partition(examples, folds, fold)?;
    let hidden = NoProgress;
    // Per fold: the validated documents' score Gaussians and labels, and the fold model's
    // summed variance and count of the training documents it was measured on.
    type FoldResult = (Vec<(Vec<ScoreGaussian>, usize)>, f64, usize);
    let per_fold: Vec<FoldResult> = parts
        .par_iter()
        .enumerate()
        .map(|(f, validation)| -> Result<FoldResult> {
            let train = validation.complement();
            if train.is_empty() || validation.is_empty() {
                return Ok((Vec::new(), 0.0, 0));
            }
            let mut trainer = start_trainer(settings, labels, start)?;
            for _ in 0..settings.epochs {
                trainer.epoch_over(&train, &hidden)?;
            }
            let learner = trainer.predictor();
            let mut scored = Vec::with_capacity(validation.len());
            crate::jobs::examples::for_each(validation, |_, e| {
                scored.push((learner.score_gaussians(&e.x), e.label));
            })?;
            // On the documents among the first SHRINKAGE_SAMPLE that this model trained on: the
            // shipped model is measured on the same first documents.
            let (mut variance, mut measured) = (0.0, 0usize);
            for_each_while(examples, |i, e| {
                if fold(e) != f {
                    variance += summed_variance(&learner, e);
                    measured += 1;
                }
                i + 1 < SHRINKAGE_SAMPLE
            })?;
            Ok((scored, variance, measured))
        })
        .collect::<Result<_>>()?;
    let (mut documents, mut variance, mut measured) = (Vec::new(), 0.0, 0);
    for (scored, v, m) in per_fold {
        documents.extend(scored);
        variance += v;
        measured += m;
    }
    if documents.len() < MIN_CALIBRATION_DOCUMENTS || measured == 0 {
        return Ok(None);
    }
    let fit = crate::learn::calibration::fit_scale(
        &documents,
        crate::learn::calibration::Objective::Brier,
    );
    Ok(Some((
        CalibrationFit {
            scale: fit.scale,
            variance_shrinkage: 1.0,
            held_out: fit.documents,
            folds,
            brier_before: fit.before,
            brier_after: fit.after,
        },
        variance / measured as f64,
    )))
}

/// The shipped model's mean summed score variance over the first [`SHRINKAGE_SAMPLE`] examples:
/// the `after` of [`fit_by_folds`]'s variance shrinkage.
pub fn mean_summed_variance<S: ExampleSource + ?Sized>(
    learner: &DiagonalLearner,
    examples: &S,
) -> Result<f64> {
    let (mut variance, mut measured) = (0.0, 0usize);
    for_each_while(examples, |_, e| {
        variance += summed_variance(learner, e);
        measured += 1;
        measured < SHRINKAGE_SAMPLE
    })?;
    Ok(if measured == 0 {
        0.0
    } else {
        variance / measured as f64
    })
}

/// The score variances of `learner` on one example, summed over labels.
fn summed_variance(learner: &DiagonalLearner, e: &Example) -> f64 {
    learner
        .score_gaussians(&e.x)
        .iter()
        .map(|g| g.variance)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::FeatureVector;
    use crate::jobs::corpus::SplitKeys;
    use crate::jobs::examples::Example;

    /// 60 documents of two labels, each with a word of its label and a word of its own, split
    /// by their keys as a corpus's files are.
    fn examples() -> Vec<Example> {
        (0..60)
            .map(|i| {
                let label = i % 2;
                let mut indices = vec![label as u32, 2 + i as u32];
                indices.sort_unstable();
                Example {
                    x: FeatureVector::new(
                        1 << 16,
                        indices,
                        vec![std::f32::consts::FRAC_1_SQRT_2; 2],
                    ),
                    label,
                    file: i,
                    split: SplitKeys::of_key(&format!("label{label}/{i}.txt")),
                }
            })
            .collect()
    }

    /// Every document is scored once, by a model that did not see it; the fit is the one those
    /// scores give, and the fold models' variance is measured on what they trained on. On
    /// documents this easy the models are right with wide margins, so the scale comes out
    /// below 1 and the Brier score falls.
    #[test]
    fn every_document_is_scored_once_by_the_folds_that_did_not_see_it() {
        let examples = examples();
        let settings = TrainSettings::new(5, 1);
        let (fit, before) = fit_by_folds(&settings, &examples, 5, &|e| e.split.fold(5), 2, None)
            .unwrap()
            .expect("60 documents are enough");
        assert_eq!(fit.held_out, 60);
        assert_eq!(fit.folds, 5);
        assert!(fit.scale < 1.0, "{fit:?}");
        assert!(fit.brier_after < fit.brier_before, "{fit:?}");
        // Measured on documents each trained on, the fold models and a model of every document
        // are about as sure (0.735 against 0.756 here: CW updates a document's own words less
        // once the label's word has learned it), so the shrinkage stays near 1.
        let mut trainer = start_trainer(&settings, 2, None).unwrap();
        for _ in 0..settings.epochs {
            trainer.epoch_over(&examples, &NoProgress).unwrap();
        }
        let after = mean_summed_variance(&trainer.predictor(), &examples).unwrap();
        assert!(
            (after / before - 1.0).abs() < 0.1,
            "{after} against {before}"
        );
        // The same run gives the same fit.
        let again = fit_by_folds(&settings, &examples, 5, &|e| e.split.fold(5), 2, None)
            .unwrap()
            .unwrap();
        assert_eq!(fit, again.0);
        assert_eq!(before, again.1);
        // Under MIN_CALIBRATION_DOCUMENTS in all: no fit.
        let few = &examples[..MIN_CALIBRATION_DOCUMENTS - 1];
        assert!(
            fit_by_folds(&settings, few, 5, &|e| e.split.fold(5), 2, None)
                .unwrap()
                .is_none()
        );
    }
}
