//! How honest the probabilities are: expected calibration error, the Brier score and the EMNLP
//! 2009 §7 table (per prediction-probability bin: examples, errors, error rate).
//!
//! The confidence of a prediction is the probability of the predicted label. Ten equal-width
//! bins [0, 0.1), [0.1, 0.2) … [0.9, 1.0] (1.0 in the last). ECE = Σ_b (n_b/N)·|acc_b − conf_b|;
//! the multi-class Brier score is the mean over documents of Σ_z (P_z − [y = z])².

use serde::Serialize;

use crate::learner::ScoreGaussian;
use crate::probability::gibbs_probabilities;

/// The number of equal-width confidence bins.
pub const BINS: usize = 10;

/// One confidence bin of the calibration table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationBin {
    pub lower: f64,
    pub upper: f64,
    pub examples: usize,
    pub errors: usize,
    /// errors / examples (0 for an empty bin).
    pub error_rate: f64,
    /// The mean confidence of the bin's predictions (0 for an empty bin).
    pub mean_confidence: f64,
}

/// The calibration figures of an evaluation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationReport {
    pub ece: f64,
    pub brier: f64,
    pub bins: Vec<CalibrationBin>,
}

/// Accumulates predictions.
#[derive(Debug, Clone, Default)]
pub struct Calibration {
    examples: [usize; BINS],
    errors: [usize; BINS],
    confidence: [f64; BINS],
    brier: f64,
    documents: usize,
}

impl Calibration {
    /// Adds one prediction: the distribution over the model's labels, the predicted label and
    /// the true label (`None` when the model does not know it, so every probability is wrong).
    pub fn add(&mut self, probabilities: &[f64], predicted: usize, truth: Option<usize>) {
        let confidence = probabilities.get(predicted).copied().unwrap_or(0.0);
        let bin = ((confidence * BINS as f64) as usize).min(BINS - 1);
        self.examples[bin] += 1;
        self.errors[bin] += usize::from(truth != Some(predicted));
        self.confidence[bin] += confidence;
        let squares: f64 = probabilities
            .iter()
            .enumerate()
            .map(|(z, p)| (p - f64::from(u8::from(truth == Some(z)))).powi(2))
            .sum();
        self.brier += squares + if truth.is_none() { 1.0 } else { 0.0 };
        self.documents += 1;
    }

    pub fn finish(&self) -> CalibrationReport {
        let n = self.documents.max(1) as f64;
        let bins: Vec<CalibrationBin> = (0..BINS)
            .map(|b| {
                let examples = self.examples[b];
                let per = |x: f64| {
                    if examples == 0 {
                        0.0
                    } else {
                        x / examples as f64
                    }
                };
                CalibrationBin {
                    lower: b as f64 / BINS as f64,
                    upper: (b + 1) as f64 / BINS as f64,
                    examples,
                    errors: self.errors[b],
                    error_rate: per(self.errors[b] as f64),
                    mean_confidence: per(self.confidence[b]),
                }
            })
            .collect();
        let ece = bins
            .iter()
            .map(|b| {
                let accuracy = 1.0 - b.error_rate;
                b.examples as f64 / n * (accuracy - b.mean_confidence).abs()
            })
            .sum();
        CalibrationReport {
            ece,
            brier: self.brier / n,
            bins,
        }
    }
}

/// The label distribution's variance scale c: probabilities are computed from N(m_z, c·v_z).
/// The weight Gaussian's spread follows η, a training setting, not a calibrated posterior; one
/// scale fitted on held-out documents (like temperature scaling) makes the probabilities honest
/// without changing any prediction.
pub fn scaled(gaussians: &[ScoreGaussian], scale: f64) -> Vec<ScoreGaussian> {
    gaussians
        .iter()
        .map(|g| ScoreGaussian {
            mean: g.mean,
            variance: g.variance * scale,
        })
        .collect()
}

/// Gibbs samples per document while fitting (the same seeds at every scale, so the objective is
/// smooth in c).
const FIT_SAMPLES: usize = 400;
/// The search range of log₁₀ c.
const FIT_RANGE: (f64, f64) = (-5.0, 1.0);

/// The Brier score of held-out documents (score Gaussians, true label) at scale `c`.
pub fn brier_at(documents: &[(Vec<ScoreGaussian>, usize)], scale: f64) -> f64 {
    use rayon::prelude::*;
    // In parallel, but summed in document order: the fitted scale (and so the model's bytes)
    // must not depend on the number of threads.
    let terms: Vec<f64> = documents
        .par_iter()
        .enumerate()
        .map(|(i, (g, truth))| {
            let p = gibbs_probabilities(&scaled(g, scale), FIT_SAMPLES, i as u64);
            p.iter()
                .enumerate()
                .map(|(z, q)| (q - f64::from(u8::from(z == *truth))).powi(2))
                .sum::<f64>()
        })
        .collect();
    terms.iter().sum::<f64>() / documents.len().max(1) as f64
}

/// The variance scale that minimises the Brier score on held-out documents: golden-section
/// search over log₁₀ c in [−5, 1]. Returns (c, Brier at c = 1, Brier at c).
pub fn fit_scale(documents: &[(Vec<ScoreGaussian>, usize)]) -> (f64, f64, f64) {
    let f = |log_c: f64| brier_at(documents, 10f64.powf(log_c));
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = FIT_RANGE;
    let mut c = b - ratio * (b - a);
    let mut d = a + ratio * (b - a);
    let (mut fc, mut fd) = (f(c), f(d));
    while b - a > 0.01 {
        if fc < fd {
            (b, d, fd) = (d, c, fc);
            c = b - ratio * (b - a);
            fc = f(c);
        } else {
            (a, c, fc) = (c, d, fd);
            d = a + ratio * (b - a);
            fd = f(d);
        }
    }
    let best = (a + b) / 2.0;
    let at_one = f(0.0);
    let at_best = f(best);
    if at_best < at_one {
        (10f64.powf(best), at_one, at_best)
    } else {
        (1.0, at_one, at_one)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed: four predictions.
    /// 0.95 right, 0.95 wrong → bin 9: acc 0.5, conf 0.95, |gap| 0.45, weight 2/4;
    /// 0.55 right → bin 5: gap 0.45, weight 1/4; 0.35 wrong → bin 3: gap 0.35, weight 1/4.
    /// ECE = 0.225 + 0.1125 + 0.0875 = 0.425.
    /// Brier: (0.05² + 0.05²) + (0.95² + 0.95²) + (0.45² + 0.45²) + (0.35² + 0.35² … ) below.
    #[test]
    fn ece_brier_and_bins_by_hand() {
        let mut c = Calibration::default();
        c.add(&[0.95, 0.05], 0, Some(0));
        c.add(&[0.95, 0.05], 0, Some(1));
        c.add(&[0.45, 0.55], 1, Some(1));
        c.add(&[0.35, 0.30, 0.35], 0, Some(1));
        let r = c.finish();
        assert!((r.ece - 0.425).abs() < 1e-12, "{}", r.ece);
        let brier =
            (0.0025 + 0.0025) + (0.9025 + 0.9025) + (0.2025 + 0.2025) + (0.1225 + 0.49 + 0.1225);
        assert!((r.brier - brier / 4.0).abs() < 1e-12);
        assert_eq!(r.bins[9].examples, 2);
        assert_eq!(r.bins[9].errors, 1);
        assert_eq!(r.bins[3].error_rate, 1.0);
        assert_eq!(r.bins[0].examples, 0);
        assert_eq!(r.bins.iter().map(|b| b.examples).sum::<usize>(), 4);
    }

    /// Scores drawn from a known model whose variances are 100 times too wide: the fit finds a
    /// scale near 1/100 and improves the Brier score.
    #[test]
    fn fit_scale_recovers_a_known_spread() {
        use rand::distributions::Distribution;
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let normal = statrs::distribution::Normal::new(0.0, 1.0).unwrap();
        let documents: Vec<(Vec<ScoreGaussian>, usize)> = (0..600)
            .map(|_| {
                let means: Vec<f64> = (0..4).map(|_| normal.sample(&mut rng)).collect();
                // The truth is the argmax of the means plus unit noise: true variance 1.
                let noisy: Vec<f64> = means.iter().map(|m| m + normal.sample(&mut rng)).collect();
                let truth = crate::learner::argmax(&noisy);
                let g = means
                    .iter()
                    .map(|&mean| ScoreGaussian {
                        mean,
                        variance: 100.0,
                    })
                    .collect();
                (g, truth)
            })
            .collect();
        let (c, before, after) = fit_scale(&documents);
        assert!((0.004..0.025).contains(&c), "scale {c}");
        assert!(after < before - 0.05, "{before} → {after}");
    }

    #[test]
    fn a_certain_right_answer_is_perfectly_calibrated_and_unknown_labels_cost_one() {
        let mut c = Calibration::default();
        c.add(&[1.0, 0.0], 0, Some(0));
        assert_eq!(c.finish().ece, 0.0);
        assert_eq!(c.finish().brier, 0.0);
        let mut c = Calibration::default();
        c.add(&[1.0, 0.0], 0, None);
        assert_eq!(c.finish().brier, 2.0);
        assert_eq!(c.finish().ece, 1.0);
    }
}
