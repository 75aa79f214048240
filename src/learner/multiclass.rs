//! Multi-class confidence-weighted learning with a diagonal covariance (Crammer, Dredze,
//! Kulesza, EMNLP 2009).
//!
//! f(x, y) puts x into label y's block, so μ = (μ₁ … μ_K) and Σ = diag(σ₁ … σ_K). A constraint
//! "y beats r" uses g = f(x, y) − f(x, r): its mean margin is m = μ_y·x − μ_r·x and its
//! variance v = Σⱼ xⱼ²(σ_yj + σ_rj). The binary rule's step μ ← μ + αΣg becomes
//! μ_y += α σ_y ⊙ x, μ_r −= α σ_r ⊙ x, and the projection updates σ_y and σ_r (gⱼ² = xⱼ² in both).

use super::constraints::PairwiseModel;
use super::rule::UpdateRule;
use super::weights::WeightTable;
use super::{CwParams, Learner, ScoreGaussian};
use crate::features::FeatureVector;

/// The multi-class CW learner: its validated settings and the weight Gaussian.
#[derive(Debug, Clone, PartialEq)]
pub struct MulticlassCw {
    params: CwParams,
    weights: WeightTable,
}

impl MulticlassCw {
    /// A new learner at the prior N(0, a·I).
    pub fn new(params: CwParams, dimension: usize, labels: usize) -> Self {
        let a = params.config().initial_variance as f32;
        MulticlassCw {
            params,
            weights: WeightTable::new(dimension, labels, a),
        }
    }

    /// A learner from stored weights.
    pub fn from_weights(params: CwParams, weights: WeightTable) -> Self {
        MulticlassCw { params, weights }
    }

    pub fn params(&self) -> &CwParams {
        &self.params
    }

    pub fn weights(&self) -> &WeightTable {
        &self.weights
    }
}

impl PairwiseModel for MulticlassCw {
    fn pair_margin(&self, x: &FeatureVector, y: usize, r: usize) -> (f64, f64) {
        let (mut m, mut v) = (0.0, 0.0);
        for (&j, &xj) in x.indices().iter().zip(x.data()) {
            let row = self.weights.row(j as usize);
            let xj = f64::from(xj);
            m += (f64::from(row[2 * y]) - f64::from(row[2 * r])) * xj;
            v += (f64::from(row[2 * y + 1]) + f64::from(row[2 * r + 1])) * xj * xj;
        }
        (m, v)
    }

    fn update_pair(
        &mut self,
        x: &FeatureVector,
        y: usize,
        r: usize,
        rule: &dyn UpdateRule,
    ) -> bool {
        let (m, v) = self.pair_margin(x, y, r);
        let step = rule.step(m, v, self.params.phi());
        if !step.is_update() {
            return false;
        }
        let projection = self.params.config().projection;
        for (&j, &xj) in x.indices().iter().zip(x.data()) {
            let row = self.weights.row_mut(j as usize);
            let xj = f64::from(xj);
            for (label, sign) in [(y, 1.0), (r, -1.0)] {
                let sigma = f64::from(row[2 * label + 1]);
                row[2 * label] += (sign * step.alpha * sigma * xj) as f32;
                row[2 * label + 1] = projection.project(sigma, xj * xj, &step) as f32;
            }
        }
        true
    }
}

impl Learner for MulticlassCw {
    fn num_labels(&self) -> usize {
        self.weights.labels()
    }

    fn dimension(&self) -> usize {
        self.weights.features()
    }

    fn scores(&self, x: &FeatureVector) -> Vec<f64> {
        let mut scores = vec![0.0; self.num_labels()];
        for (&j, &xj) in x.indices().iter().zip(x.data()) {
            let xj = f64::from(xj);
            for (s, pair) in scores
                .iter_mut()
                .zip(self.weights.row(j as usize).chunks_exact(2))
            {
                *s += f64::from(pair[0]) * xj;
            }
        }
        scores
    }

    fn score_gaussians(&self, x: &FeatureVector) -> Vec<ScoreGaussian> {
        let mut out = vec![ScoreGaussian::default(); self.num_labels()];
        for (&j, &xj) in x.indices().iter().zip(x.data()) {
            let xj = f64::from(xj);
            for (g, pair) in out
                .iter_mut()
                .zip(self.weights.row(j as usize).chunks_exact(2))
            {
                g.mean += f64::from(pair[0]) * xj;
                g.variance += f64::from(pair[1]) * xj * xj;
            }
        }
        out
    }

    fn learn(&mut self, x: &FeatureVector, label: usize) -> bool {
        let scores = self.scores(x);
        let mistake = super::argmax(&scores) != label;
        let config = self.params.config();
        let (constraints, k, rule) = (config.constraints, config.k, config.rule.rule());
        constraints.apply(k, self, rule, x, label, &scores);
        mistake
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ConstraintKind, CwConfig, RuleKind};
    use super::*;

    fn params(constraints: ConstraintKind, k: usize) -> CwParams {
        CwConfig {
            rule: RuleKind::Stdev,
            constraints,
            k,
            // φ = 1.
            eta: 0.841_344_746_068_542_9,
            ..CwConfig::default()
        }
        .validate()
        .unwrap()
    }

    fn x(dim: usize, pairs: &[(u32, f32)]) -> FeatureVector {
        FeatureVector::new(
            dim,
            pairs.iter().map(|p| p.0).collect(),
            pairs.iter().map(|p| p.1).collect(),
        )
    }

    /// Hand-computed: one feature with value 1, three labels at the prior, y = 0, φ = 1.
    /// The competitor is label 1 (all scores tie, lower index first); m = 0, v = 1 + 1 = 2,
    /// α = √(vφ²ξ)/(vξ) = √4/4 = 0.5, √u = (−1 + √9)/2 = 1, λ = αφ/√u = 0.5.
    /// So μ₀ = 0.5, μ₁ = −0.5, σ₀ = σ₁ = 1/(1 + 0.5) = 2/3, label 2 untouched.
    #[test]
    fn single_constraint_step_by_hand() {
        let mut cw = MulticlassCw::new(params(ConstraintKind::Single, 1), 2, 3);
        let doc = x(2, &[(0, 1.0)]);
        // The tie goes to label 0, so no mistake; CW still updates because the margin is below φ√v.
        assert!(!cw.learn(&doc, 0));
        let row = cw.weights().row(0);
        let want = [0.5, 2.0 / 3.0, -0.5, 2.0 / 3.0, 0.0, 1.0];
        for (got, want) in row.iter().zip(want) {
            assert!((f64::from(*got) - want).abs() < 1e-6, "{row:?}");
        }
        assert_eq!(cw.weights().row(1), &[0.0, 1.0, 0.0, 1.0, 0.0, 1.0]);
    }

    /// Sequential k = 2 continues from the first step's result against label 2:
    /// m = 0.5, v = 2/3 + 1 = 5/3.
    #[test]
    fn sequential_continues_from_the_previous_step() {
        let mut cw = MulticlassCw::new(params(ConstraintKind::Sequential, 2), 1, 3);
        let doc = x(1, &[(0, 1.0)]);
        cw.learn(&doc, 0);
        let step = RuleKind::Stdev.rule().step(0.5, 5.0 / 3.0, 1.0);
        let row = cw.weights().row(0);
        assert!((f64::from(row[0]) - (0.5 + step.alpha * 2.0 / 3.0)).abs() < 1e-6);
        assert!(
            (f64::from(row[2]) + 0.5).abs() < 1e-6,
            "label 1 untouched by step 2"
        );
        assert!((f64::from(row[4]) + step.alpha).abs() < 1e-6);
    }

    #[test]
    fn learns_a_separable_problem() {
        let mut cw = MulticlassCw::new(params(ConstraintKind::Sequential, 2), 5, 3);
        let docs = [
            (x(5, &[(0, 1.0), (4, 1.0)]), 0),
            (x(5, &[(1, 1.0), (4, 1.0)]), 1),
            (x(5, &[(2, 1.0), (3, 0.5), (4, 1.0)]), 2),
            (x(5, &[(0, 0.5), (3, 1.0), (4, 1.0)]), 0),
        ];
        for _ in 0..5 {
            docs.iter().for_each(|(d, y)| {
                cw.learn(d, *y);
            });
        }
        for (d, y) in &docs {
            assert_eq!(super::super::argmax(&cw.scores(d)), *y);
        }
        assert!(!cw.learn(&docs[0].0, 0));
        let g = cw.score_gaussians(&docs[0].0);
        assert!(g.iter().all(|g| g.variance > 0.0 && g.variance < 2.0));
    }
}
