//! CW with a full covariance matrix, for dense, low-dimensional input (Crammer, Dredze, Pereira,
//! NIPS 2008, Fig. 1; JMLR 2012 eqs. 14–15 and 25–27). Binary: label 1 when μ·x > 0.
//!
//! The update is the rank-one (Woodbury / Sherman–Morrison) form of the precision update
//! Σ⁻¹ ← Σ⁻¹ + λxxᵀ: with z = Σx, μ ← μ + αy·z and Σ ← Σ − β·zzᵀ, β from the rule (var: eq. 15;
//! stdev: eq. 27; AROW: 1/(v + r)). It costs O(d²) per example and memory, so it is for the
//! synthetic experiments and small dense problems, not for hashed text.

use super::rule::{RuleKind, RuleParams};
use super::{Learner, ScoreGaussian};
use crate::features::FeatureVector;

/// The full-covariance binary learner.
#[derive(Debug, Clone, PartialEq)]
pub struct FullCw {
    rule: RuleKind,
    params: RuleParams,
    dimension: usize,
    mean: Vec<f64>,
    /// Row-major d×d.
    cov: Vec<f64>,
}

impl FullCw {
    /// A learner at the prior N(0, a·I).
    pub fn new(rule: RuleKind, params: RuleParams, dimension: usize, a: f64) -> Self {
        let mut cov = vec![0.0; dimension * dimension];
        (0..dimension).for_each(|i| cov[i * dimension + i] = a);
        FullCw {
            rule,
            params,
            dimension,
            mean: vec![0.0; dimension],
            cov,
        }
    }

    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    pub fn covariance(&self) -> &[f64] {
        &self.cov
    }

    /// z = Σx.
    fn sigma_times(&self, x: &[f64]) -> Vec<f64> {
        self.cov
            .chunks_exact(self.dimension)
            .map(|row| row.iter().zip(x).map(|(a, b)| a * b).sum())
            .collect()
    }

    /// μ·x and xᵀΣx.
    pub fn margin_stats(&self, x: &[f64]) -> (f64, f64) {
        let z = self.sigma_times(x);
        (dot(&self.mean, x), dot(&z, x))
    }

    /// One step on a dense example with y = ±1; returns whether the prediction (sign of μ·x,
    /// 0 counted as −1) was wrong.
    pub fn learn_dense(&mut self, x: &[f64], y: f64) -> bool {
        let score = dot(&self.mean, x);
        let mistake = (score > 0.0) != (y > 0.0);
        let z = self.sigma_times(x);
        let (m, v) = (y * score, dot(&z, x));
        let step = self.rule.rule().step(m, v, &self.params);
        if step.is_update() {
            for (mu, zi) in self.mean.iter_mut().zip(&z) {
                *mu += step.alpha * y * zi;
            }
            let d = self.dimension;
            for (i, zi) in z.iter().enumerate() {
                for (c, zj) in self.cov[i * d..(i + 1) * d].iter_mut().zip(&z) {
                    *c -= step.shrink * zi * zj;
                }
            }
        }
        mistake
    }

    fn dense(&self, x: &FeatureVector) -> Vec<f64> {
        let mut out = vec![0.0; self.dimension];
        for (&j, &v) in x.indices().iter().zip(x.data()) {
            if let Some(slot) = out.get_mut(j as usize) {
                *slot = f64::from(v);
            }
        }
        out
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl Learner for FullCw {
    fn num_labels(&self) -> usize {
        2
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn scores(&self, x: &FeatureVector) -> Vec<f64> {
        vec![0.0, dot(&self.mean, &self.dense(x))]
    }

    fn score_gaussians(&self, x: &FeatureVector) -> Vec<ScoreGaussian> {
        let (mean, variance) = self.margin_stats(&self.dense(x));
        vec![ScoreGaussian::default(), ScoreGaussian { mean, variance }]
    }

    fn learn(&mut self, x: &FeatureVector, label: usize) -> bool {
        let x = self.dense(x);
        self.learn_dense(&x, if label == 1 { 1.0 } else { -1.0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(phi: f64) -> RuleParams {
        RuleParams {
            phi,
            r: 1.0,
            c: 1.0,
        }
    }

    /// After an update the constraint holds with equality for the full covariance:
    /// var m' = φv', stdev m' = φ√v' (JMLR eqs. 15 and 27), within 1e-9.
    #[test]
    fn full_update_meets_the_constraint() {
        for rule in [RuleKind::Var, RuleKind::Stdev] {
            let mut cw = FullCw::new(rule, params(1.3), 3, 1.0);
            cw.learn_dense(&[1.0, 0.5, -0.2], 1.0);
            let x = [0.3, -1.0, 0.8];
            cw.learn_dense(&x, -1.0);
            let (score, v) = cw.margin_stats(&x);
            let m = -score;
            let want = if rule == RuleKind::Var {
                1.3 * v
            } else {
                1.3 * v.sqrt()
            };
            assert!((m - want).abs() < 1e-9, "{rule:?}: {m} vs {want}");
        }
    }

    /// The covariance stays symmetric and positive definite, and the update equals the precision
    /// form Σ⁻¹ + λxxᵀ: along x, 1/(xᵀΣ'x)… checked through v' = v/(1 + λv) for the stdev rule.
    #[test]
    fn covariance_follows_the_precision_update() {
        let mut cw = FullCw::new(RuleKind::Stdev, params(1.0), 2, 1.0);
        let x = [1.0, 1.0];
        let (_, v) = cw.margin_stats(&x);
        let step = RuleKind::Stdev.rule().step(0.0, v, &params(1.0));
        cw.learn_dense(&x, 1.0);
        let (_, v2) = cw.margin_stats(&x);
        assert!((v2 - v / (1.0 + step.precision_gain * v)).abs() < 1e-12);
        let c = cw.covariance();
        assert!((c[1] - c[2]).abs() < 1e-15 && c[0] > 0.0 && c[0] * c[3] - c[1] * c[2] > 0.0);
    }
}
