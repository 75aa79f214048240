//! Covariance projections: how a full-covariance CW update is brought back to a diagonal Σ
//! (JMLR 2012 §6). The mean update is the same for all; only σⱼ's update differs, and the exact
//! diagonal update also re-solves α (see [`super::exact`]).

use serde::{Deserialize, Serialize};

use super::rule::Step;

/// The configured projection, as stored in the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum ProjectionKind {
    /// Diagonalise the precision, the KL projection (JMLR 2012 §6.1):
    /// 1/σⱼ ← 1/σⱼ + λ·xⱼ². The most stable diagonal variant (JMLR Table 2).
    Kl,
    /// Diagonalise the covariance, the L2 projection (JMLR 2012 §6.1, after eq. 32):
    /// σⱼ ← σⱼ − β(σⱼxⱼ)².
    L2,
    /// The exact diagonal update (JMLR 2012 §6.2): α is the root of eq. 33 (var) or eq. 34
    /// (stdev) for the diagonal covariance itself, found by bisection; σⱼ then follows in the
    /// precision form with the λ that root implies.
    Exact,
}

impl ProjectionKind {
    /// The new variance of one coordinate with variance `sigma` and feature value squared `x2`.
    /// The exact update's step carries its λ in `precision_gain`, so it shares the KL form.
    #[inline]
    pub fn project(self, sigma: f64, x2: f64, step: &Step) -> f64 {
        match self {
            // σ/(1 + λσx²) is 1/(1/σ + λx²) without the two divisions.
            ProjectionKind::Kl | ProjectionKind::Exact => {
                sigma / (1.0 + step.precision_gain * sigma * x2)
            }
            ProjectionKind::L2 => sigma - step.shrink * sigma * sigma * x2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step() -> Step {
        Step {
            alpha: 1.0,
            precision_gain: 2.0,
            shrink: 0.5,
        }
    }

    #[test]
    fn kl_adds_precision() {
        // 1/σ' = 1/0.5 + 2·3² = 20.
        assert!((ProjectionKind::Kl.project(0.5, 9.0, &step()) - 0.05).abs() < 1e-12);
        // A coordinate with xⱼ = 0 keeps its variance.
        assert_eq!(ProjectionKind::Kl.project(0.5, 0.0, &step()), 0.5);
    }

    #[test]
    fn l2_keeps_the_diagonal_of_the_full_update() {
        // σ' = 0.5 − 0.5·0.25·0.4 = 0.45: the diagonal of Σ − βΣxxᵀΣ.
        assert!((ProjectionKind::L2.project(0.5, 0.4, &step()) - 0.45).abs() < 1e-12);
        assert_eq!(ProjectionKind::L2.project(0.5, 0.0, &step()), 0.5);
    }
}
