//! Learners: one trait ([`Learner`]) and the learners built from separate pieces: the update rule
//! ([`rule`]), the covariance projection ([`projection`], [`exact`]) and the constraint strategy
//! ([`constraints`]). [`DiagonalLearner`] composes any of them over sparse text features, in the
//! multi-class or the binary formulation; [`full::FullCw`] keeps a full covariance for dense,
//! low-dimensional input. Settings are validated once, into [`CwParams`], with messages that name
//! the bad value or say why a combination does not exist.

pub mod averaging;
pub mod constraints;
pub mod diagonal;
pub mod exact;
pub mod full;
pub mod projection;
pub mod rule;
pub mod weights;

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

pub use constraints::{ConstraintKind, KBest};
pub use diagonal::{DiagonalLearner, LabelStart};
pub use projection::ProjectionKind;
pub use rule::{RuleKind, RuleParams};

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
    /// Ends training: a learner that averages replaces its weights by their average here.
    fn finish(&mut self) {}
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

/// The algorithms a user picks by name (`--algo`); CW's own rule is picked by `--update`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Algorithm {
    /// Confidence-weighted learning, var or stdev update (the default).
    Cw,
    /// Adaptive regularisation of weights (NIPS 2009).
    Arow,
    /// Soft confidence-weighted, linear loss (ICML 2012).
    Scw1,
    /// Soft confidence-weighted, squared loss (ICML 2012).
    Scw2,
    /// The multi-class perceptron.
    Perceptron,
    /// The perceptron with lazily averaged weights.
    AveragedPerceptron,
    /// Passive-aggressive.
    Pa,
    /// Passive-aggressive with the step capped at C.
    Pa1,
    /// Passive-aggressive with a squared slack.
    Pa2,
}

impl Algorithm {
    /// The rule and whether to average, given CW's `--update` (only CW takes one).
    pub fn rule(self, update: Option<RuleKind>) -> Result<(RuleKind, bool)> {
        let fixed = |rule: RuleKind, average: bool| {
            match update {
            None => Ok((rule, average)),
            Some(u) => Err(Error::InvalidSetting(format!(
                "--update {} picks the CW rule, but --algo {} has its own update; drop --update or use --algo cw",
                format!("{u:?}").to_lowercase(),
                self.name()
            ))),
        }
        };
        match self {
            Algorithm::Cw => match update {
                None => Ok((RuleKind::Stdev, false)),
                Some(u @ (RuleKind::Var | RuleKind::Stdev)) => Ok((u, false)),
                Some(u) => Err(Error::InvalidSetting(format!(
                    "--update takes var or stdev, but is {}; pick other algorithms with --algo",
                    format!("{u:?}").to_lowercase()
                ))),
            },
            Algorithm::Arow => fixed(RuleKind::Arow, false),
            Algorithm::Scw1 => fixed(RuleKind::Scw1, false),
            Algorithm::Scw2 => fixed(RuleKind::Scw2, false),
            Algorithm::Perceptron => fixed(RuleKind::Perceptron, false),
            Algorithm::AveragedPerceptron => fixed(RuleKind::Perceptron, true),
            Algorithm::Pa => fixed(RuleKind::Pa, false),
            Algorithm::Pa1 => fixed(RuleKind::Pa1, false),
            Algorithm::Pa2 => fixed(RuleKind::Pa2, false),
        }
    }

    /// Every algorithm, in the order `--help` lists them.
    pub const ALL: [Algorithm; 9] = [
        Algorithm::Cw,
        Algorithm::Arow,
        Algorithm::Scw1,
        Algorithm::Scw2,
        Algorithm::Perceptron,
        Algorithm::AveragedPerceptron,
        Algorithm::Pa,
        Algorithm::Pa1,
        Algorithm::Pa2,
    ];

    /// The name as typed on the command line (`--algo`).
    pub fn name(self) -> String {
        match self {
            Algorithm::Cw => "cw",
            Algorithm::Arow => "arow",
            Algorithm::Scw1 => "scw1",
            Algorithm::Scw2 => "scw2",
            Algorithm::Perceptron => "perceptron",
            Algorithm::AveragedPerceptron => "averaged-perceptron",
            Algorithm::Pa => "pa",
            Algorithm::Pa1 => "pa1",
            Algorithm::Pa2 => "pa2",
        }
        .to_string()
    }
}

fn default_r() -> f64 {
    1.0
}

fn default_c() -> f64 {
    1.0
}

/// Learner settings as given (and as stored in the model). Fields added after format version 1
/// have serde defaults, so that version-1 models still load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CwConfig {
    pub rule: RuleKind,
    pub projection: ProjectionKind,
    pub constraints: ConstraintKind,
    /// How many competing labels the k-best strategies constrain against.
    pub k: KBest,
    /// Confidence η ∈ (0.5, 1): the probability with which each constraint must hold.
    pub eta: f64,
    /// The prior variance a of every weight (Σ₁ = a·I).
    pub initial_variance: f64,
    /// AROW's regulariser r > 0.
    #[serde(default = "default_r")]
    pub r: f64,
    /// The aggressiveness C > 0 of SCW-I/II and PA-I/II.
    #[serde(default = "default_c")]
    pub c: f64,
    /// Average the means over every example seen (the averaged perceptron; first-order rules).
    #[serde(default)]
    pub average: bool,
    /// Two labels, one weight vector: label 1 when μ·x > 0 (JMLR 2012's binary CW).
    #[serde(default)]
    pub binary: bool,
    /// The prior variance of each weight: a everywhere, or a scaled per feature by how rare
    /// the feature is in the training documents ([`WeightPrior`]). Not written when flat, so
    /// that models without it keep their bytes.
    #[serde(default, skip_serializing_if = "WeightPrior::is_flat")]
    pub prior: WeightPrior,
}

/// Where each weight's variance starts.
///
/// `Idf` starts feature j's weights at variance a·vⱼ with vⱼ = idfⱼ²/s, idfⱼ = ln((1 + N)/(1 +
/// dfⱼ)) + 1 over the N documents the learner is first trained on (dfⱼ of them contain j; the
/// smoothed idf of scikit-learn's `TfidfTransformer`), and s the documents' mean of Σⱼ idfⱼ²xⱼ²
/// / Σⱼ xⱼ², so that an average document's prior score variance stays a; the bias keeps a.
///
/// For every diagonal rule this *is* idf weighting of the features: training on x from Σ₁ =
/// a·diag(v) gives the same margins m = y(μ·x), margin variances v = Σⱼ σⱼxⱼ², steps α and
/// label choices as training on x' = D x (Dⱼⱼ = √vⱼ) from Σ₁ = a·I, with μⱼ = √vⱼ·μ'ⱼ and
/// σⱼ = vⱼ·σ'ⱼ after every update: the mean step μ ← μ + αyΣx (JMLR 2012 eq. 11) and the KL
/// projection 1/σⱼ ← 1/σⱼ + λxⱼ² (§6.1) carry the factor through, as does the L2 projection
/// σⱼ ← σⱼ − β(σⱼxⱼ)² (tested in `diagonal.rs`). So rare words are trusted less and move
/// further on their first evidence, classification needs no idf table (the weights hold it),
/// and corrections learned later see the same prior. The documents themselves keep their own
/// normalisation: a unit-length x is not a unit-length x', which CW's scale-invariant
/// constraint Pr[y(w·x) ≥ 0] ≥ η does not notice except through the bias feature.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum WeightPrior {
    /// Σ₁ = a·I: every weight equally unsure.
    #[default]
    Flat,
    /// Σ₁ = a·diag(idf²)/s: the rarer a feature in the training documents, the less sure its
    /// weights start (idf weighting, held in the weights).
    Idf,
}

impl WeightPrior {
    pub fn is_flat(&self) -> bool {
        *self == WeightPrior::Flat
    }

    /// The prior `train` tries beside this one.
    pub fn other(self) -> Self {
        match self {
            WeightPrior::Flat => WeightPrior::Idf,
            WeightPrior::Idf => WeightPrior::Flat,
        }
    }

    /// The name as typed on the command line (`--prior`).
    pub fn name(self) -> &'static str {
        match self {
            WeightPrior::Flat => "flat",
            WeightPrior::Idf => "idf",
        }
    }
}

impl Default for CwConfig {
    fn default() -> Self {
        CwConfig {
            rule: RuleKind::Stdev,
            projection: ProjectionKind::Kl,
            constraints: ConstraintKind::Single,
            k: KBest::N(1),
            eta: 0.99,
            initial_variance: 1.0,
            r: default_r(),
            c: default_c(),
            average: false,
            binary: false,
            prior: WeightPrior::Flat,
        }
    }
}

/// Validated learner settings, with φ = Φ⁻¹(η) computed once.
#[derive(Debug, Clone, PartialEq)]
pub struct CwParams {
    config: CwConfig,
    rule: RuleParams,
}

impl CwConfig {
    /// Checks every setting and combination, naming the bad value or saying why.
    pub fn validate(self) -> Result<CwParams> {
        let bad = |msg: String| Err(Error::InvalidSetting(msg));
        let rule = self.rule;
        let name = |r: RuleKind| format!("{r:?}").to_lowercase();
        if !(self.eta > 0.5 && self.eta < 1.0) {
            return bad(format!(
                "confidence eta must be in (0.5, 1), but is {}",
                self.eta
            ));
        }
        if self.k == KBest::N(0) {
            return bad("k must be at least 1, but is 0".into());
        }
        if self.constraints == ConstraintKind::Single && self.k != KBest::N(1) {
            return bad(format!(
                "the single constraint strategy uses k = 1, but k is {}; use --constraints sequential, parallel or exact for k-best",
                self.k
            ));
        }
        if !(self.initial_variance.is_finite() && self.initial_variance > 0.0) {
            return bad(format!(
                "initial variance must be positive and finite, but is {}",
                self.initial_variance
            ));
        }
        if !(self.r.is_finite() && self.r > 0.0) {
            return bad(format!("AROW's r must be positive, but is {}", self.r));
        }
        if !(self.c.is_finite() && self.c > 0.0) {
            return bad(format!("C must be positive, but is {}", self.c));
        }
        if rule.is_first_order() && self.initial_variance != 1.0 {
            return bad(format!(
                "the {} rule keeps the covariance at I, so the initial variance must be 1, but is {}",
                name(rule),
                self.initial_variance
            ));
        }
        if self.prior != WeightPrior::Flat && rule.is_first_order() {
            return bad(format!(
                "the {} rule has no variances, so it takes no prior but flat; --prior {} needs cw, arow or scw",
                name(rule),
                self.prior.name()
            ));
        }
        if self.average && !rule.is_first_order() {
            return bad(format!(
                "averaging applies to the first-order rules (perceptron, pa, pa1, pa2), not to {}: a CW mean is already a confidence-weighted average",
                name(rule)
            ));
        }
        if self.projection == ProjectionKind::Exact
            && !matches!(rule, RuleKind::Var | RuleKind::Stdev)
        {
            return bad(format!(
                "the exact diagonal update (JMLR §6.2) exists for the var and stdev rules only, not for {}",
                name(rule)
            ));
        }
        if self.constraints == ConstraintKind::Exact {
            if !rule.has_hard_constraint() {
                return bad(format!(
                    "exact k-best (Hildreth) needs a rule that solves its constraint with equality (var, stdev, pa), not {}",
                    name(rule)
                ));
            }
            if self.projection == ProjectionKind::Exact {
                return bad(
                    "exact k-best corrects each constraint in both directions, which the exact diagonal projection cannot; use --projection kl or l2".into(),
                );
            }
        }
        if self.binary && self.k != KBest::N(1) {
            return bad(format!(
                "the binary formulation has one competitor, so k must be 1, but is {}",
                self.k
            ));
        }
        let phi = Normal::new(0.0, 1.0)
            .expect("the standard normal is valid")
            .inverse_cdf(self.eta);
        let rule = RuleParams {
            phi,
            r: self.r,
            c: self.c,
        };
        Ok(CwParams { config: self, rule })
    }
}

impl CwParams {
    pub fn config(&self) -> &CwConfig {
        &self.config
    }

    /// φ = Φ⁻¹(η).
    pub fn phi(&self) -> f64 {
        self.rule.phi
    }

    /// What the update rule reads.
    pub fn rule_params(&self) -> &RuleParams {
        &self.rule
    }

    /// Checks the settings against the number of labels.
    pub fn check_labels(&self, labels: usize) -> Result<()> {
        if self.config.binary && labels != 2 {
            return Err(Error::InvalidSetting(format!(
                "the binary formulation needs exactly 2 labels, but the corpus has {labels}"
            )));
        }
        Ok(())
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
            k: KBest::N(3),
            ..CwConfig::default()
        })
        .contains("k is 3"));
        assert!(err(CwConfig {
            constraints: ConstraintKind::Sequential,
            k: KBest::N(0),
            ..CwConfig::default()
        })
        .contains("but is 0"));
        assert!(err(CwConfig {
            r: -1.0,
            ..CwConfig::default()
        })
        .contains("but is -1"));
    }

    /// Combinations that do not exist are refused with the reason.
    #[test]
    fn invalid_combinations_say_why() {
        let err = |c: CwConfig| c.validate().unwrap_err().to_string();
        let e = err(CwConfig {
            rule: RuleKind::Arow,
            projection: ProjectionKind::Exact,
            ..CwConfig::default()
        });
        assert!(e.contains("var and stdev rules only, not for arow"), "{e}");
        let e = err(CwConfig {
            rule: RuleKind::Scw1,
            constraints: ConstraintKind::Exact,
            k: KBest::All,
            ..CwConfig::default()
        });
        assert!(e.contains("not scw1"), "{e}");
        let e = err(CwConfig {
            rule: RuleKind::Stdev,
            average: true,
            ..CwConfig::default()
        });
        assert!(e.contains("not to stdev"), "{e}");
        let e = err(CwConfig {
            rule: RuleKind::Perceptron,
            initial_variance: 2.0,
            ..CwConfig::default()
        });
        assert!(e.contains("must be 1, but is 2"), "{e}");
        let e = err(CwConfig {
            constraints: ConstraintKind::Exact,
            projection: ProjectionKind::Exact,
            k: KBest::N(2),
            ..CwConfig::default()
        });
        assert!(e.contains("--projection kl or l2"), "{e}");
        let p = CwConfig {
            binary: true,
            ..CwConfig::default()
        }
        .validate()
        .unwrap();
        assert!(p.check_labels(3).unwrap_err().to_string().contains("has 3"));
    }

    #[test]
    fn version_1_settings_still_parse() {
        let v1 = r#"{"rule":"stdev","projection":"kl","constraints":"single","k":1,"eta":0.99,"initial_variance":1.0}"#;
        let c: CwConfig = serde_json::from_str(v1).unwrap();
        assert_eq!(c, CwConfig::default());
    }

    #[test]
    fn argmax_takes_the_first_of_ties() {
        assert_eq!(argmax(&[1.0, 3.0, 3.0]), 1);
        assert_eq!(argmax(&[0.0, 0.0]), 0);
    }

    /// The names the library prints are the names the command line takes.
    #[cfg(feature = "cli")]
    #[test]
    fn names_are_the_command_line_names() {
        use clap::ValueEnum;
        assert_eq!(Algorithm::ALL.as_slice(), Algorithm::value_variants());
        for a in Algorithm::ALL {
            assert_eq!(a.name(), a.to_possible_value().unwrap().get_name());
        }
        for v in crate::text::pipeline::weighting::ValueKind::value_variants() {
            assert_eq!(v.name(), v.to_possible_value().unwrap().get_name());
        }
    }
}
