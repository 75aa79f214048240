//! Constraint strategies for multi-class CW (Crammer, Dredze, Kulesza, EMNLP 2009 §5.2): which
//! "label y must beat label r with confidence η" constraints one example imposes, and how they
//! are solved. Each strategy only chooses and orders pairs; the update rule and the projection
//! are applied by the model through [`PairwiseModel`], so every strategy composes with every rule.

use serde::{Deserialize, Serialize};

use super::rule::UpdateRule;
use crate::features::FeatureVector;

/// What a strategy needs from a model: the margin statistics of a pair, and applying a rule's
/// step to it.
pub trait PairwiseModel {
    /// (m, v) of the constraint "y beats r": m = μ_y·x − μ_r·x, v = Σⱼ xⱼ²(σ_yj + σ_rj).
    fn pair_margin(&self, x: &FeatureVector, y: usize, r: usize) -> (f64, f64);
    /// Solves the constraint with `rule`; returns whether anything changed.
    fn update_pair(&mut self, x: &FeatureVector, y: usize, r: usize, rule: &dyn UpdateRule)
        -> bool;
}

/// The configured strategy, as stored in the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ConstraintKind {
    /// k = 1: one constraint against the best-scoring wrong label (EMNLP's best after several
    /// epochs).
    Single,
    /// k-best, solved one after the other, each from the previous one's result (EMNLP §5.2;
    /// the best in a single pass, usually with k = 5).
    Sequential,
}

impl ConstraintKind {
    /// Imposes the constraints of example (x, y) given the mean scores before the update.
    /// Returns how many constraints changed the model.
    pub fn apply(
        self,
        k: usize,
        model: &mut impl PairwiseModel,
        rule: &dyn UpdateRule,
        x: &FeatureVector,
        y: usize,
        scores: &[f64],
    ) -> usize {
        let k = match self {
            ConstraintKind::Single => 1,
            ConstraintKind::Sequential => k,
        };
        top_competitors(scores, y, k)
            .into_iter()
            .filter(|&r| model.update_pair(x, y, r, rule))
            .count()
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
}
