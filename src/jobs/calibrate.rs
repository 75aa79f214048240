//! Fitting the probability scale of a trained learner on held-out examples (the step of
//! `train` that calibrates; the fit itself is [`crate::learn::calibration`]).

use rayon::prelude::*;

use crate::error::Result;
use crate::features::FeatureVector;
use crate::jobs::examples::{for_each_while, Example, ExampleSource, Subset};
use crate::jobs::trainer::{start_trainer, TrainSettings};
use crate::learn::calibration::{shrinkage_ratio, summed_variance};
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
    /// What the model stores about the fit, which was made on the model's `labels` labels.
    pub fn info(&self, labels: usize) -> CalibrationInfo {
        CalibrationInfo {
            fitted_by: "train".into(),
            held_out: self.held_out,
            folds: self.folds,
            brier_before: self.brier_before,
            brier_after: self.brier_after,
            variance_shrinkage: self.variance_shrinkage,
            corrections_since: 0,
            fitted_labels: labels,
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
/// the scale fitted on every document so scored ([`FoldFit`], which the shipped model finishes
/// with its variance shrinkage). `None` when fewer than [`MIN_CALIBRATION_DOCUMENTS`] could be
/// scored: fitted on 10 to 18 documents, the scale was worse than none on 5 of 7 small slices
/// by the Brier score.
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
) -> Result<Option<FoldFit>> {
    let parts = Subset::partition(examples, folds, fold)?;
    // The first documents, read once, with their folds: each fold model's variance is measured
    // on those it trained on, the shipped model's on all of them.
    let mut sample = Vec::new();
    for_each_while(examples, |_, e| {
        sample.push((e.x.clone(), fold(e)));
        sample.len() < SHRINKAGE_SAMPLE
    })?;
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
            let trained_on = sample.iter().filter(|(_, g)| *g != f).map(|(x, _)| x);
            let variance = summed_variance(&|x| learner.score_gaussians(x), trained_on.clone());
            Ok((scored, variance, trained_on.count()))
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
    Ok(Some(FoldFit {
        fit: CalibrationFit {
            scale: fit.scale,
            variance_shrinkage: 1.0,
            held_out: fit.documents,
            folds,
            brier_before: fit.before,
            brier_after: fit.after,
        },
        fold_variance: variance / measured as f64,
        sample: sample.into_iter().map(|(x, _)| x).collect(),
    }))
}

/// What [`fit_by_folds`] found, before the shipped model divides the scale by its variance
/// shrinkage ([`FoldFit::finish`]).
#[derive(Debug)]
pub struct FoldFit {
    /// The fit on the fold models' scores (its shrinkage still 1).
    pub fit: CalibrationFit,
    /// The fold models' mean summed score variance over the sample's documents each trained on.
    pub fold_variance: f64,
    /// The first [`SHRINKAGE_SAMPLE`] documents.
    sample: Vec<FeatureVector>,
}

impl FoldFit {
    /// The fit for the shipped model: its scale divided by the ratio of the shipped model's
    /// mean summed score variance over the sample to the fold models'.
    pub fn finish(self, shipped: &DiagonalLearner) -> CalibrationFit {
        let after = summed_variance(&|x| shipped.score_gaussians(x), self.sample.iter())
            / self.sample.len().max(1) as f64;
        let mut fit = self.fit;
        fit.variance_shrinkage = shrinkage_ratio(self.fold_variance, after);
        fit.scale /= fit.variance_shrinkage;
        fit
    }
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
        let fold = fit_by_folds(&settings, &examples, 5, &|e| e.split.fold(5), 2, None)
            .unwrap()
            .expect("60 documents are enough");
        let (fit, before) = (fold.fit, fold.fold_variance);
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
        let shrinkage = fold.finish(&trainer.predictor()).variance_shrinkage;
        assert!((shrinkage - 1.0).abs() < 0.1, "{shrinkage} on {before}");
        // The same run gives the same fit.
        let again = fit_by_folds(&settings, &examples, 5, &|e| e.split.fold(5), 2, None)
            .unwrap()
            .unwrap();
        assert_eq!(fit, again.fit);
        assert_eq!(before, again.fold_variance);
        // Under MIN_CALIBRATION_DOCUMENTS in all: no fit.
        let few = &examples[..MIN_CALIBRATION_DOCUMENTS - 1];
        assert!(
            fit_by_folds(&settings, few, 5, &|e| e.split.fold(5), 2, None)
                .unwrap()
                .is_none()
        );
    }
}
