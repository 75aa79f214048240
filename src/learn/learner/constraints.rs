//! Constraint strategies for multi-class CW (Crammer, Dredze, Kulesza, EMNLP 2009 §5): which
//! "label y must beat label r" constraints one example imposes, and how they are solved together.
//! A strategy only chooses, orders and combines constraints; the model computes each
//! constraint's step with its rule and projection ([`ConstraintModel`]), so every strategy
//! composes with every rule and projection.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::rule::Step;
use crate::features::FeatureVector;

/// What a strategy needs from a model.
pub trait ConstraintModel {
    /// (m, v) of the constraint "y beats r": m = μ_y·x − μ_r·x, v = Σⱼ xⱼ²(σ_yj + σ_rj).
    fn margin(&self, x: &FeatureVector, y: usize, r: usize) -> (f64, f64);
    /// The step that solves "y beats r" from the current state (`Step::NONE` when it holds).
    fn solve(&self, x: &FeatureVector, y: usize, r: usize) -> Step;
    /// Hildreth's correction of "y beats r" whose dual variable is `dual` ≥ 0 so far: the
    /// signed step that makes it hold with equality, but never below −dual, so that the dual
    /// stays non-negative. Also returns (m, v), to measure the change in margin.
    fn correction(&self, x: &FeatureVector, y: usize, r: usize, dual: f64) -> (Step, f64, f64);
    /// Applies a step to "y beats r". Returns false, changing nothing, when the step would make
    /// a variance non-positive (only a negative correction can).
    fn apply(&mut self, x: &FeatureVector, y: usize, r: usize, step: &Step) -> bool;
    /// Applies steps solved from the same state, combined with equal weights λ = 1/k: means
    /// averaged, precisions averaged (Iusem–De Pierro).
    fn apply_parallel(&mut self, x: &FeatureVector, y: usize, steps: &[(usize, Step)]);
}

/// How many competing labels to constrain against: a number, or every other label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KBest {
    N(usize),
    All,
}

impl KBest {
    /// The number of competitors among `labels` labels.
    pub fn count(self, labels: usize) -> usize {
        let others = labels.saturating_sub(1);
        match self {
            KBest::N(k) => k.min(others),
            KBest::All => others,
        }
    }
}

impl Default for KBest {
    fn default() -> Self {
        KBest::N(1)
    }
}

impl fmt::Display for KBest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KBest::N(k) => write!(f, "{k}"),
            KBest::All => f.write_str("all"),
        }
    }
}

impl FromStr for KBest {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s.eq_ignore_ascii_case("all") {
            return Ok(KBest::All);
        }
        s.parse()
            .map(KBest::N)
            .map_err(|_| format!("k must be a whole number or 'all', but is {s:?}"))
    }
}

impl Serialize for KBest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            KBest::N(k) => s.serialize_u64(*k as u64),
            KBest::All => s.serialize_str("all"),
        }
    }
}

impl<'de> Deserialize<'de> for KBest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(usize),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(k) => Ok(KBest::N(k)),
            Raw::S(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// The configured strategy, as stored in the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum ConstraintKind {
    /// k = 1: one constraint against the best-scoring wrong label (§5.1; EMNLP's best after
    /// several epochs).
    Single,
    /// k-best, one after the other, each from the previous one's result: one pass of Hildreth's
    /// iteration (§5.2; the best in a single pass, usually with k = 5).
    Sequential,
    /// k-best, each solved from the same state, then combined with λ = 1/k: means averaged and
    /// precisions averaged (§5.2, one iteration of Iusem–De Pierro).
    Parallel,
    /// k-best solved jointly: Hildreth's iteration with non-negative dual variables until every
    /// correction is below a tolerance or the iteration cap is hit (§5.2 "Exact"; over-fits).
    Exact,
}

/// Hildreth's iteration stops when no correction moves a margin m by more than this times
/// (1 + |m|). The weights are f32 (about 7 significant digits) and a margin sums hundreds of
/// products, so a tighter tolerance would chase rounding noise.
pub const EXACT_TOLERANCE: f64 = 1e-5;
/// And after at most this many passes over the constraints (reported when hit).
pub const EXACT_MAX_PASSES: usize = 1000;

/// What one example's constraints did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Applied {
    /// Constraints that changed the model (corrections counted once per constraint).
    pub updated: usize,
    /// The exact strategy stopped at its iteration cap before converging.
    pub capped: bool,
}

impl ConstraintKind {
    /// Imposes the constraints of example (x, y) given the mean scores before the update.
    pub fn apply(
        self,
        k: KBest,
        model: &mut impl ConstraintModel,
        x: &FeatureVector,
        y: usize,
        scores: &[f64],
    ) -> Applied {
        let k = match self {
            ConstraintKind::Single => 1,
            _ => k.count(scores.len()),
        };
        let competitors = top_competitors(scores, y, k);
        match self {
            ConstraintKind::Single | ConstraintKind::Sequential => Applied {
                updated: competitors
                    .into_iter()
                    .filter(|&r| {
                        let step = model.solve(x, y, r);
                        step.is_update() && model.apply(x, y, r, &step)
                    })
                    .count(),
                capped: false,
            },
            ConstraintKind::Parallel => {
                let steps: Vec<(usize, Step)> = competitors
                    .iter()
                    .map(|&r| (r, model.solve(x, y, r)))
                    .collect();
                let updated = steps.iter().filter(|(_, s)| s.is_update()).count();
                if updated > 0 {
                    model.apply_parallel(x, y, &steps);
                }
                Applied {
                    updated,
                    capped: false,
                }
            }
            ConstraintKind::Exact => hildreth(model, x, y, &competitors),
        }
    }
}

/// Hildreth's method (Censor & Zenios 1997, Alg. 6.5.2) for the constraints against
/// `competitors`: cyclic corrections c = max(−λᵣ, θᵣ), λᵣ ← λᵣ + c, until every correction
/// moves its margin by less than [`EXACT_TOLERANCE`] (relative).
fn hildreth(
    model: &mut impl ConstraintModel,
    x: &FeatureVector,
    y: usize,
    competitors: &[usize],
) -> Applied {
    let mut duals = vec![0.0f64; competitors.len()];
    for _ in 0..EXACT_MAX_PASSES {
        let mut largest = 0.0f64;
        for (dual, &r) in duals.iter_mut().zip(competitors) {
            let (step, m, v) = model.correction(x, y, r, *dual);
            if step.is_update() && model.apply(x, y, r, &step) {
                *dual += step.alpha;
                largest = largest.max((step.alpha * v).abs() / (1.0 + m.abs()));
            }
        }
        if largest <= EXACT_TOLERANCE {
            return Applied {
                updated: duals.iter().filter(|&&d| d > 0.0).count(),
                capped: false,
            };
        }
    }
    Applied {
        updated: duals.iter().filter(|&&d| d > 0.0).count(),
        capped: true,
    }
}

/// The k highest-scoring labels other than `y`, best first; ties go to the lower index so that
/// training is deterministic.
pub fn top_competitors(scores: &[f64], y: usize, k: usize) -> Vec<usize> {
    let mut others: Vec<usize> = (0..scores.len()).filter(|&z| z != y).collect();
    others.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    others.truncate(k);
    others
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn competitors_are_ranked_by_score_then_index() {
        let scores = [0.5, 2.0, 0.5, -1.0, 3.0];
        assert_eq!(top_competitors(&scores, 4, 3), vec![1, 0, 2]);
        assert_eq!(top_competitors(&scores, 1, 10), vec![4, 0, 2, 3]);
        assert_eq!(top_competitors(&scores, 0, 1), vec![4]);
    }

    #[test]
    fn k_parses_serialises_and_counts() {
        assert_eq!("all".parse::<KBest>().unwrap(), KBest::All);
        assert_eq!("5".parse::<KBest>().unwrap(), KBest::N(5));
        assert!("five".parse::<KBest>().unwrap_err().contains("\"five\""));
        assert_eq!(serde_json::to_string(&KBest::All).unwrap(), "\"all\"");
        assert_eq!(serde_json::from_str::<KBest>("3").unwrap(), KBest::N(3));
        assert_eq!(
            serde_json::from_str::<KBest>("\"all\"").unwrap(),
            KBest::All
        );
        assert_eq!(KBest::All.count(20), 19);
        assert_eq!(KBest::N(5).count(3), 2);
    }
}
