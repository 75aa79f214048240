//! Learners: one trait ([`Learner`]) and the multi-class confidence-weighted learner built from
//! three separate pieces: the update rule ([`rule`]), the covariance projection ([`projection`])
//! and the constraint strategy ([`constraints`]). Settings are validated once, into
//! [`CwParams`], with messages that name the bad value.

pub mod constraints;
pub mod multiclass;
pub mod projection;
pub mod rule;
pub mod weights;

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

pub use constraints::ConstraintKind;
pub use multiclass::MulticlassCw;
pub use projection::ProjectionKind;
pub use rule::RuleKind;

use crate::error::{Error, Result};
use crate::features::FeatureVector;

/// The Gaussian of one label's score under the weight Gaussian: N(μ_z·x, Σⱼ σ_zj xⱼ²).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ScoreGaussian {
    pub mean: f64,
    pub variance: f64,
}

/// An online multi-class learner.
pub trait Learner: Send + Sync {
    fn num_labels(&self) -> usize;
    /// The dimension of the feature space it was built for.
    fn dimension(&self) -> usize;
    /// The mean score of every label; the prediction is the argmax.
    fn scores(&self, x: &FeatureVector) -> Vec<f64>;
    /// The score Gaussian of every label (independent because Σ is diagonal and the label
    /// blocks are disjoint).
    fn score_gaussians(&self, x: &FeatureVector) -> Vec<ScoreGaussian>;
    /// One online step on example (x, label); returns whether the prediction before the step
    /// was wrong.
    fn learn(&mut self, x: &FeatureVector, label: usize) -> bool;
}

/// The index of the largest score, the lowest index on ties.
pub fn argmax(scores: &[f64]) -> usize {
    scores
        .iter()
        .enumerate()
        .fold((0, f64::NEG_INFINITY), |best, (i, &s)| {
            if s > best.1 {
                (i, s)
            } else {
                best
            }
        })
        .0
}

/// Multi-class CW settings as given (and as stored in the model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CwConfig {
    pub rule: RuleKind,
    pub projection: ProjectionKind,
    pub constraints: ConstraintKind,
    /// How many competing labels the sequential strategy constrains against.
    pub k: usize,
    /// Confidence η ∈ (0.5, 1): the probability with which each constraint must hold.
    pub eta: f64,
    /// The prior variance a of every weight (Σ₁ = a·I).
    pub initial_variance: f64,
}

impl Default for CwConfig {
    fn default() -> Self {
        CwConfig {
            rule: RuleKind::Stdev,
            projection: ProjectionKind::Kl,
            constraints: ConstraintKind::Single,
            k: 1,
            eta: 0.99,
            initial_variance: 1.0,
        }
    }
}

/// Validated multi-class CW settings, with φ = Φ⁻¹(η) computed once.
#[derive(Debug, Clone, PartialEq)]
pub struct CwParams {
    config: CwConfig,
    phi: f64,
}

impl CwConfig {
    /// Checks every setting, naming the bad value.
    pub fn validate(self) -> Result<CwParams> {
        let bad = |msg: String| Err(Error::InvalidSetting(msg));
        if !(self.eta > 0.5 && self.eta < 1.0) {
            return bad(format!(
                "confidence eta must be in (0.5, 1), but is {}",
                self.eta
            ));
        }
        if self.k == 0 {
            return bad("k must be at least 1, but is 0".into());
        }
        if self.constraints == ConstraintKind::Single && self.k != 1 {
            return bad(format!(
                "the single constraint strategy uses k = 1, but k is {}; use --constraints sequential for k-best",
                self.k
            ));
        }
        if !(self.initial_variance.is_finite() && self.initial_variance > 0.0) {
            return bad(format!(
                "initial variance must be positive and finite, but is {}",
                self.initial_variance
            ));
        }
        let phi = Normal::new(0.0, 1.0)
            .expect("the standard normal is valid")
            .inverse_cdf(self.eta);
        Ok(CwParams { config: self, phi })
    }
}

impl CwParams {
    pub fn config(&self) -> &CwConfig {
        &self.config
    }

    /// φ = Φ⁻¹(η).
    pub fn phi(&self) -> f64 {
        self.phi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phi_is_the_normal_quantile() {
        let p = CwConfig {
            eta: 0.95,
            ..CwConfig::default()
        }
        .validate()
        .unwrap();
        assert!((p.phi() - 1.644_853_626_951_472_2).abs() < 1e-9);
    }

    #[test]
    fn bad_settings_name_the_value() {
        let err = |c: CwConfig| c.validate().unwrap_err().to_string();
        let e = err(CwConfig {
            eta: 1.2,
            ..CwConfig::default()
        });
        assert!(e.contains("(0.5, 1), but is 1.2"), "{e}");
        assert!(err(CwConfig {
            eta: 0.5,
            ..CwConfig::default()
        })
        .contains("but is 0.5"));
        assert!(err(CwConfig {
            k: 3,
            ..CwConfig::default()
        })
        .contains("k is 3"));
        assert!(err(CwConfig {
            constraints: ConstraintKind::Sequential,
            k: 0,
            ..CwConfig::default()
        })
        .contains("but is 0"));
    }

    #[test]
    fn argmax_takes_the_first_of_ties() {
        assert_eq!(argmax(&[1.0, 3.0, 3.0]), 1);
        assert_eq!(argmax(&[0.0, 0.0]), 0);
    }
}
