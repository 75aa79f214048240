//! The linear learner with a diagonal Gaussian over its weights, for every rule, projection and
//! constraint strategy (Crammer, Dredze, Kulesza, EMNLP 2009; JMLR 2012 for the binary form).
//!
//! **Multi-class.** f(x, y) puts x into label y's block, so μ = (μ₁ … μ_K) and
//! Σ = diag(σ₁ … σ_K). A constraint "y beats r" uses g = f(x, y) − f(x, r): its mean margin is
//! m = μ_y·x − μ_r·x and its variance v = Σⱼ xⱼ²(σ_yj + σ_rj). The binary rule's step
//! μ ← μ + αΣg becomes μ_y += α σ_y ⊙ x, μ_r −= α σ_r ⊙ x, and the projection updates σ_y and
//! σ_r (gⱼ² = xⱼ² in both).
//!
//! **Binary** (two labels, when asked): one block w; label 1 wins when w·x > 0. The constraint
//! "y beats r" is s·w·x with s = +1 for y = 1 and −1 for y = 0, so g = s·x.
//!
//! Both are the same loops over a constraint's *terms*, (block, sign) pairs: [(y, +1), (r, −1)]
//! or [(0, s)].

use super::averaging::Averager;
use super::constraints::{ConstraintModel, KBest};
use super::rule::Step;
use super::weights::WeightTable;
use super::{CwParams, Learner, ProjectionKind, ScoreGaussian};
use crate::features::FeatureVector;

/// Rows requested from memory this many features before they are read.
const PREFETCH_AHEAD: usize = 8;

/// A variance never drops below this, so that f32 rounding cannot make it zero.
const MIN_VARIANCE: f64 = 1e-30;

/// The (block, sign) terms of one constraint.
#[derive(Debug, Clone, Copy)]
struct Terms {
    items: [(usize, f64); 2],
    len: usize,
}

impl Terms {
    fn as_slice(&self) -> &[(usize, f64)] {
        &self.items[..self.len]
    }
}

/// Where the weights of a label added to a trained model start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum LabelStart {
    /// The prior, as every label starts in training: N(0, a·I), or with a per-feature prior
    /// ([`super::WeightPrior`]) per feature the largest variance of the existing labels, which
    /// is that prior wherever a label has not learned the feature.
    Prior,
    /// Per feature, the Gaussian that moment-matches the existing labels' weights
    /// ([`WeightTable::with_label_like_the_others`]): the new label scores like an average
    /// label, and is as sure as the labels are where they agree (the bias, common words).
    Labels,
}

/// Training counters that the model reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LearnerStats {
    /// Examples on which the exact strategy stopped at its iteration cap.
    pub exact_cap_hits: usize,
}

/// The learner: validated settings, the weight Gaussian, and the averaging state.
#[derive(Debug, Clone, PartialEq)]
pub struct DiagonalLearner {
    params: CwParams,
    labels: usize,
    weights: WeightTable,
    average: Option<Averager>,
    stats: LearnerStats,
}

impl DiagonalLearner {
    /// A new learner at the prior N(0, a·I).
    pub fn new(params: CwParams, dimension: usize, labels: usize) -> Self {
        let a = params.config().initial_variance as f32;
        let blocks = Self::blocks_for(&params, labels);
        let average = params
            .config()
            .average
            .then(|| Averager::new(dimension * blocks));
        DiagonalLearner {
            weights: WeightTable::new(dimension, blocks, a),
            params,
            labels,
            average,
            stats: LearnerStats::default(),
        }
    }

    /// The number of weight blocks: one per label, or one for the binary formulation.
    pub fn blocks_for(params: &CwParams, labels: usize) -> usize {
        if params.config().binary {
            1
        } else {
            labels
        }
    }

    /// A learner from stored weights (`None` when the table does not fit the labels).
    pub fn from_weights(params: CwParams, labels: usize, weights: WeightTable) -> Option<Self> {
        (weights.labels() == Self::blocks_for(&params, labels)).then_some(DiagonalLearner {
            params,
            labels,
            weights,
            average: None,
            stats: LearnerStats::default(),
        })
    }

    pub fn params(&self) -> &CwParams {
        &self.params
    }

    /// Scales each feature's prior variances by `factors` (a per-feature prior,
    /// [`super::WeightPrior`]): for a learner still at its prior, before its first update.
    pub fn scale_prior(&mut self, factors: &[f32]) {
        self.weights.scale_variances(factors);
    }

    /// Adds `offsets[l]` to label l's mean weight for `feature` (labels past the end of
    /// `offsets` unchanged). On the bias feature, whose value is 1 in every document, this adds
    /// the offsets to every document's scores: the label shift ([`crate::learn::label_shift`]).
    /// In the binary formulation label 0 scores a constant 0, so the one weight takes the
    /// difference `offsets[1] − offsets[0]`.
    pub fn add_to_means(&mut self, feature: usize, offsets: &[f64]) {
        let binary = self.binary();
        let labels = self.labels;
        let row = self.weights.row_mut(feature);
        if binary {
            let get = |l: usize| offsets.get(l).copied().unwrap_or(0.0);
            row[0] += (get(1) - get(0)) as f32;
        } else {
            for (l, b) in offsets.iter().enumerate().take(labels) {
                row[2 * l] += *b as f32;
            }
        }
    }

    /// Every label's weight for one feature, as (mean, variance): what a label's score gains
    /// per unit of the feature, and how sure the model is of it. In the binary formulation
    /// label 0 scores a constant 0, so its weight is (0, 0).
    pub fn label_weights(&self, feature: usize) -> Vec<(f64, f64)> {
        let mut out = Vec::with_capacity(self.labels);
        if self.binary() {
            out.push((0.0, 0.0));
        }
        self.weights.with_row(feature, |row| {
            out.extend(
                row.chunks_exact(2)
                    .map(|pair| (f64::from(pair[0]), f64::from(pair[1]))),
            )
        });
        out
    }

    pub fn weights(&self) -> &WeightTable {
        &self.weights
    }

    pub fn stats(&self) -> LearnerStats {
        self.stats
    }

    /// Adds a label whose weights start at the prior (training from scratch, `train --resume`
    /// with new labels).
    pub fn add_label(&mut self) -> crate::Result<usize> {
        self.add_label_starting(LabelStart::Prior)
    }

    /// Adds a label (an online correction with a label the model has never seen), its weights
    /// starting as `start` says. Not possible in the binary formulation, which has exactly two.
    pub fn add_label_starting(&mut self, start: LabelStart) -> crate::Result<usize> {
        if self.binary() {
            return Err(crate::Error::InvalidSetting(
                "a model in the binary formulation has exactly two labels; it cannot learn a third"
                    .into(),
            ));
        }
        let config = self.params.config();
        let a = config.initial_variance as f32;
        self.weights = match start {
            LabelStart::Labels if self.labels > 0 => self.weights.with_label_like_the_others(),
            // A per-feature prior a·vⱼ is not stored: recovered from the labels' variances.
            LabelStart::Prior if !config.prior.is_flat() && self.labels > 0 => {
                self.weights.with_label_at_the_widest()
            }
            _ => self.weights.with_more_labels(1, a),
        };
        self.labels += 1;
        Ok(self.labels - 1)
    }

    /// The mean score of one label (multi-class formulation).
    pub fn label_score(&self, x: &FeatureVector, label: usize) -> f64 {
        let mut s = 0.0;
        for (&j, &xj) in x.indices().iter().zip(x.data()) {
            s += f64::from(self.weights.row(j as usize)[2 * label]) * f64::from(xj);
        }
        s
    }

    /// Moves the means of one label so that its score on `x` changes by exactly `delta`, by the
    /// smallest move in the Mahalanobis norm of its Gaussian: Δμ_j = δ·σ_j xⱼ / Σ_j σ_j xⱼ² (the
    /// direction of every CW mean update, μ ← μ + α·y·Σx: Crammer, Dredze & Pereira, NIPS 2008,
    /// §3). The variances stay: this is no new evidence.
    pub fn shift_score(&mut self, x: &FeatureVector, label: usize, delta: f64) {
        let v: f64 = x
            .indices()
            .iter()
            .zip(x.data())
            .map(|(&j, &xj)| {
                f64::from(self.weights.row(j as usize)[2 * label + 1]) * f64::from(xj).powi(2)
            })
            .sum();
        if !(v > 0.0 && delta.is_finite()) {
            return;
        }
        let step = delta / v;
        for (&j, &xj) in x.indices().iter().zip(x.data()) {
            let row = self.weights.row_mut(j as usize);
            let sigma = f64::from(row[2 * label + 1]);
            row[2 * label] += (step * sigma * f64::from(xj)) as f32;
        }
    }

    /// Replaces the settings (e.g. another confidence η for corrections); the weights stay.
    pub fn set_params(&mut self, params: CwParams) {
        self.params = params;
    }

    /// Replaces the weights (same shape), e.g. with a merged model's.
    pub fn set_weights(&mut self, weights: WeightTable) {
        debug_assert_eq!(weights.labels(), self.weights.labels());
        self.weights = weights;
    }

    fn binary(&self) -> bool {
        self.params.config().binary
    }

    fn terms(&self, y: usize, r: usize) -> Terms {
        if self.binary() {
            let sign = if y == 1 { 1.0 } else { -1.0 };
            Terms {
                items: [(0, sign), (0, 0.0)],
                len: 1,
            }
        } else {
            Terms {
                items: [(y, 1.0), (r, -1.0)],
                len: 2,
            }
        }
    }

    /// sₚ = σₚgₚ² for every coordinate the constraint touches (the exact diagonal update's terms).
    fn variance_terms(&self, x: &FeatureVector, terms: &Terms) -> Vec<f64> {
        let mut out = Vec::with_capacity(x.nnz() * terms.len);
        for (&j, &xj) in x.indices().iter().zip(x.data()) {
            let row = self.weights.row(j as usize);
            let x2 = f64::from(xj) * f64::from(xj);
            for &(b, _) in terms.as_slice() {
                out.push(f64::from(row[2 * b + 1]) * x2);
            }
        }
        out
    }

    /// The step for (m, v) under the configured rule and projection.
    fn step_for(&self, x: &FeatureVector, terms: &Terms, m: f64, v: f64) -> Step {
        let config = self.params.config();
        if config.projection == ProjectionKind::Exact {
            let s = self.variance_terms(x, terms);
            super::exact::step(config.rule, m, v, self.params.phi(), &s)
        } else {
            config.rule.rule().step(m, v, self.params.rule_params())
        }
    }

    fn margin_of(&self, x: &FeatureVector, terms: &Terms) -> (f64, f64) {
        let (mut m, mut v) = (0.0, 0.0);
        for (&j, &xj) in x.indices().iter().zip(x.data()) {
            let row = self.weights.row(j as usize);
            let xj = f64::from(xj);
            for &(b, sign) in terms.as_slice() {
                m += sign * f64::from(row[2 * b]) * xj;
                v += f64::from(row[2 * b + 1]) * xj * xj;
            }
        }
        (m, v)
    }

    /// Whether a (negative) step keeps every touched variance positive and finite.
    fn keeps_variances_positive(&self, x: &FeatureVector, terms: &Terms, step: &Step) -> bool {
        let projection = self.params.config().projection;
        x.indices().iter().zip(x.data()).all(|(&j, &xj)| {
            let row = self.weights.row(j as usize);
            let x2 = f64::from(xj) * f64::from(xj);
            terms.as_slice().iter().all(|&(b, _)| {
                let s = projection.project(f64::from(row[2 * b + 1]), x2, step);
                s.is_finite() && s > 0.0
            })
        })
    }

    /// Whether the means are averaged over updates (then [`Learner::finish`] changes them).
    pub fn is_averaging(&self) -> bool {
        self.average.is_some()
    }

    /// The mean weights a prediction uses: the averages when averaging.
    fn finish_average(&mut self) {
        if let Some(avg) = self.average.take() {
            let blocks = self.weights.labels();
            for j in 0..self.weights.features() {
                let row = self.weights.row_mut(j);
                for b in 0..blocks {
                    row[2 * b] = avg.average(j * blocks + b, f64::from(row[2 * b])) as f32;
                }
            }
        }
    }
}

impl ConstraintModel for DiagonalLearner {
    fn margin(&self, x: &FeatureVector, y: usize, r: usize) -> (f64, f64) {
        self.margin_of(x, &self.terms(y, r))
    }

    fn solve(&self, x: &FeatureVector, y: usize, r: usize) -> Step {
        let terms = self.terms(y, r);
        let (m, v) = self.margin_of(x, &terms);
        self.step_for(x, &terms, m, v)
    }

    fn correction(&self, x: &FeatureVector, y: usize, r: usize, dual: f64) -> (Step, f64, f64) {
        let (m, v) = self.margin(x, y, r);
        if !(m.is_finite() && v.is_finite()) || v <= 0.0 {
            return (Step::NONE, m, v);
        }
        let rule = self.params.config().rule.rule();
        let p = self.params.rule_params();
        let step = match rule.signed_alpha(m, v, p).map(|theta| theta.max(-dual)) {
            Some(alpha) if alpha != 0.0 => rule.step_of(alpha, v, p),
            _ => Step::NONE,
        };
        (step, m, v)
    }

    fn apply(&mut self, x: &FeatureVector, y: usize, r: usize, step: &Step) -> bool {
        let terms = self.terms(y, r);
        if step.alpha < 0.0 && !self.keeps_variances_positive(x, &terms, step) {
            return false;
        }
        let projection = self.params.config().projection;
        let blocks = self.weights.labels();
        for (&j, &xj) in x.indices().iter().zip(x.data()) {
            let row = self.weights.row_mut(j as usize);
            let xj = f64::from(xj);
            for &(b, sign) in terms.as_slice() {
                let sigma = f64::from(row[2 * b + 1]);
                let delta = sign * step.alpha * sigma * xj;
                row[2 * b] += delta as f32;
                row[2 * b + 1] = projection.project(sigma, xj * xj, step).max(MIN_VARIANCE) as f32;
                if let Some(avg) = &mut self.average {
                    avg.record(j as usize * blocks + b, delta);
                }
            }
        }
        true
    }

    fn apply_parallel(&mut self, x: &FeatureVector, y: usize, steps: &[(usize, Step)]) {
        let k = steps.len() as f64;
        let projection = self.params.config().projection;
        let blocks = self.weights.labels();
        let all_terms: Vec<Terms> = steps.iter().map(|&(r, _)| self.terms(y, r)).collect();
        // Per touched block: (block, mean change, summed precision of the solutions touching it,
        // how many solutions touch it).
        let mut acc: Vec<(usize, f64, f64, usize)> = Vec::with_capacity(steps.len() + 1);
        for (&j, &xj) in x.indices().iter().zip(x.data()) {
            let row = self.weights.row_mut(j as usize);
            let xj = f64::from(xj);
            acc.clear();
            for (terms, (_, step)) in all_terms.iter().zip(steps) {
                for &(b, sign) in terms.as_slice() {
                    let sigma = f64::from(row[2 * b + 1]);
                    let dmu = sign * step.alpha * sigma * xj / k;
                    let precision =
                        1.0 / projection.project(sigma, xj * xj, step).max(MIN_VARIANCE);
                    match acc.iter_mut().find(|a| a.0 == b) {
                        Some(a) => {
                            a.1 += dmu;
                            a.2 += precision;
                            a.3 += 1;
                        }
                        None => acc.push((b, dmu, precision, 1)),
                    }
                }
            }
            // Σ⁻¹ = Σᵢ (1/k)·Σᵢ⁻¹: solutions that do not touch a block leave its σ as it was.
            for &(b, dmu, precision, n) in &acc {
                let sigma = f64::from(row[2 * b + 1]);
                let mean_precision = (precision + (k - n as f64) / sigma) / k;
                row[2 * b] += dmu as f32;
                row[2 * b + 1] = (1.0 / mean_precision).max(MIN_VARIANCE) as f32;
                if let Some(avg) = &mut self.average {
                    avg.record(j as usize * blocks + b, dmu);
                }
            }
        }
    }
}

/// Adds one feature's part to each block's score Gaussian: μ·x and σ·x².
#[inline(always)]
fn add_row(out: &mut [ScoreGaussian], xj: f64, row: &[f32]) {
    for (g, pair) in out.iter_mut().zip(row.chunks_exact(2)) {
        g.mean += f64::from(pair[0]) * xj;
        g.variance += f64::from(pair[1]) * xj * xj;
    }
}

impl DiagonalLearner {
    /// The score Gaussians of a table of `K` blocks.
    fn block_gaussians<const K: usize>(&self, x: &FeatureVector) -> [ScoreGaussian; K] {
        let mut out = [ScoreGaussian::default(); K];
        self.for_each_row(x, |xj, row| add_row(&mut out, xj, row));
        out
    }

    /// Calls `f` with each feature's value and its weight row (mean and variance per label),
    /// in the vector's order, asking for the rows [`PREFETCH_AHEAD`] features ahead: the rows
    /// of a hashed table lie at random in memory, and scoring would otherwise wait for each.
    #[inline]
    fn for_each_row(&self, x: &FeatureVector, mut f: impl FnMut(f64, &[f32])) {
        let (indices, rows) = (x.indices(), self.weights.rows());
        for &j in indices.iter().take(PREFETCH_AHEAD) {
            rows.prefetch(j as usize);
        }
        for (i, (&j, &xj)) in indices.iter().zip(x.data()).enumerate() {
            if let Some(&ahead) = indices.get(i + PREFETCH_AHEAD) {
                rows.prefetch(ahead as usize);
            }
            rows.with_row(j as usize, |row| f(f64::from(xj), row));
        }
    }
}

impl Learner for DiagonalLearner {
    fn num_labels(&self) -> usize {
        self.labels
    }

    fn dimension(&self) -> usize {
        self.weights.features()
    }

    fn scores(&self, x: &FeatureVector) -> Vec<f64> {
        // The hot loop of training: means only, no variances.
        let mut out = vec![0.0; self.weights.labels()];
        self.for_each_row(x, |xj, row| {
            for (s, pair) in out.iter_mut().zip(row.chunks_exact(2)) {
                *s += f64::from(pair[0]) * xj;
            }
        });
        if self.binary() {
            out.insert(0, 0.0);
        }
        out
    }

    fn score_gaussians(&self, x: &FeatureVector) -> Vec<ScoreGaussian> {
        // One or two blocks (a binary formulation, two labels) sum into a local array that the
        // compiler keeps in registers: summing into a Vec went through memory for every
        // feature (the typical mail's scores: 30,600 → 16,600 instructions, callgrind). The
        // same sums in the same order either way.
        let mut out = match self.weights.labels() {
            1 => self.block_gaussians::<1>(x).to_vec(),
            2 => self.block_gaussians::<2>(x).to_vec(),
            blocks => {
                let mut out = vec![ScoreGaussian::default(); blocks];
                self.for_each_row(x, |xj, row| add_row(&mut out, xj, row));
                out
            }
        };
        if self.binary() {
            // Label 0 scores a constant 0, label 1 scores w·x: label 1 wins iff w·x > 0.
            out.insert(0, ScoreGaussian::default());
        }
        out
    }

    fn learn(&mut self, x: &FeatureVector, label: usize) -> bool {
        let scores = self.scores(x);
        let mistake = super::argmax(&scores) != label;
        if let Some(avg) = &mut self.average {
            avg.tick();
        }
        let config = self.params.config();
        let (constraints, k) = (config.constraints, config.k);
        let k = if self.binary() { KBest::N(1) } else { k };
        let applied = constraints.apply(k, self, x, label, &scores);
        self.stats.exact_cap_hits += usize::from(applied.capped);
        mistake
    }

    fn finish(&mut self) {
        self.finish_average();
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ConstraintKind, CwConfig, RuleKind, WeightPrior};
    use super::*;

    // φ = 1.
    const ETA_PHI_1: f64 = 0.841_344_746_068_542_9;

    fn params(constraints: ConstraintKind, k: KBest) -> CwParams {
        CwConfig {
            rule: RuleKind::Stdev,
            constraints,
            k,
            eta: ETA_PHI_1,
            ..CwConfig::default()
        }
        .validate()
        .unwrap()
    }

    /// CW's defaults at η = Φ(1), in the binary formulation or one block per label.
    fn formulation(binary: bool) -> CwParams {
        CwConfig {
            binary,
            eta: ETA_PHI_1,
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

    /// The claim of [`super::WeightPrior`]: training on x from Σ₁ = a·diag(v) is training on
    /// x' = D x (Dⱼⱼ = √vⱼ) from Σ₁ = a·I, with μ = D μ' and σ = D² σ' after every update, for
    /// each rule with variances and both diagonal projections, k-best constraints included.
    /// Random sparse documents, 4 labels, 3 passes; f32 tables, so a relative tolerance.
    #[test]
    fn a_per_feature_prior_is_feature_scaling() {
        use rand::{Rng, SeedableRng};
        let dim = 12;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let v: Vec<f32> = (0..dim).map(|_| rng.gen_range(0.2f32..5.0)).collect();
        let docs: Vec<(FeatureVector, usize)> = (0..60)
            .map(|_| {
                let mut idx: Vec<u32> = (0..dim as u32).filter(|_| rng.gen_bool(0.3)).collect();
                if idx.is_empty() {
                    idx.push(0);
                }
                let vals: Vec<f32> = idx.iter().map(|_| rng.gen_range(0.1f32..2.0)).collect();
                let label = rng.gen_range(0..4);
                (FeatureVector::new(dim, idx, vals), label)
            })
            .collect();
        let scaled = |x: &FeatureVector| {
            let vals = x
                .indices()
                .iter()
                .zip(x.data())
                .map(|(&j, &xj)| xj * v[j as usize].sqrt())
                .collect();
            FeatureVector::new(dim, x.indices().to_vec(), vals)
        };
        for rule in [
            RuleKind::Stdev,
            RuleKind::Var,
            RuleKind::Arow,
            RuleKind::Scw1,
        ] {
            for projection in [ProjectionKind::Kl, ProjectionKind::L2] {
                for (constraints, k) in [
                    (ConstraintKind::Single, KBest::N(1)),
                    (ConstraintKind::Sequential, KBest::N(3)),
                ] {
                    let p = CwConfig {
                        rule,
                        projection,
                        constraints,
                        k,
                        eta: 0.9,
                        ..CwConfig::default()
                    }
                    .validate()
                    .unwrap();
                    let mut prior = DiagonalLearner::new(p.clone(), dim, 4);
                    prior.scale_prior(&v);
                    let mut flat = DiagonalLearner::new(p, dim, 4);
                    for _ in 0..3 {
                        for (x, y) in &docs {
                            assert_eq!(prior.learn(x, *y), flat.learn(&scaled(x), *y));
                        }
                    }
                    let close =
                        |a: f64, b: f64| (a - b).abs() <= 1e-4 * (1.0 + a.abs().max(b.abs()));
                    for (j, &vj) in v.iter().enumerate() {
                        let d = f64::from(vj);
                        for (a, b) in prior.label_weights(j).iter().zip(flat.label_weights(j)) {
                            assert!(
                                close(a.0, d.sqrt() * b.0) && close(a.1, d * b.1),
                                "{rule:?} {projection:?} {constraints:?}: feature {j}: {a:?} against {b:?} scaled by {d}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// A label added to a trained learner (`train --resume` with a new label) starts at the
    /// learner's prior: with the idf prior, a·vⱼ wherever a label has not learned feature j, not
    /// the flat a; with the flat prior, a everywhere, learned features included.
    #[test]
    fn a_label_added_later_starts_at_the_learner_s_prior() {
        let v = [0.5f32, 2.0, 4.0];
        let doc = x(3, &[(0, 1.0)]);
        for prior in [WeightPrior::Flat, WeightPrior::Idf] {
            let p = CwConfig {
                prior,
                ..CwConfig::default()
            }
            .validate()
            .unwrap();
            let mut cw = DiagonalLearner::new(p, 3, 2);
            if !prior.is_flat() {
                cw.scale_prior(&v);
            }
            cw.learn(&doc, 0);
            // Feature 0 is learned by both labels (the label and its competitor).
            let learned = cw.label_weights(0);
            assert!(learned
                .iter()
                .all(|w| w.1 < if prior.is_flat() { 1.0 } else { 0.5 }));
            assert_eq!(cw.add_label().unwrap(), 2);
            let start: Vec<(f64, f64)> = (0..3).map(|j| cw.label_weights(j)[2]).collect();
            if prior.is_flat() {
                assert_eq!(start, vec![(0.0, 1.0); 3]);
            } else {
                let widest = learned.iter().map(|w| w.1).fold(0.0, f64::max);
                assert_eq!(start, vec![(0.0, widest), (0.0, 2.0), (0.0, 4.0)]);
            }
        }
    }

    /// Hand-computed: one feature with value 1, three labels at the prior, y = 0, φ = 1.
    /// The competitor is label 1 (all scores tie, lower index first); m = 0, v = 1 + 1 = 2,
    /// α = √(vφ²ξ)/(vξ) = √4/4 = 0.5, √u = (−1 + √9)/2 = 1, λ = αφ/√u = 0.5.
    /// So μ₀ = 0.5, μ₁ = −0.5, σ₀ = σ₁ = 1/(1 + 0.5) = 2/3, label 2 untouched.
    #[test]
    fn single_constraint_step_by_hand() {
        let mut cw = DiagonalLearner::new(params(ConstraintKind::Single, KBest::N(1)), 2, 3);
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
        let mut cw = DiagonalLearner::new(params(ConstraintKind::Sequential, KBest::N(2)), 1, 3);
        let doc = x(1, &[(0, 1.0)]);
        cw.learn(&doc, 0);
        let p = RuleParams {
            phi: 1.0,
            r: 1.0,
            c: 1.0,
        };
        let step = RuleKind::Stdev.rule().step(0.5, 5.0 / 3.0, &p);
        let row = cw.weights().row(0);
        assert!((f64::from(row[0]) - (0.5 + step.alpha * 2.0 / 3.0)).abs() < 1e-6);
        assert!(
            (f64::from(row[2]) + 0.5).abs() < 1e-6,
            "label 1 untouched by step 2"
        );
        assert!((f64::from(row[4]) + step.alpha).abs() < 1e-6);
    }

    use super::super::RuleParams;

    /// Parallel k = 2 from the prior, by hand: both constraints see m = 0, v = 2, so both steps
    /// are the single step above (α = 0.5, λ = 0.5). Means: μ₀ = (0.5 + 0.5)/2 = 0.5,
    /// μ₁ = μ₂ = −0.5/2 = −0.25. Precisions: label 0 is in both solutions, 1/σ₀ = (1.5 + 1.5)/2
    /// = 1.5; labels 1 and 2 are in one each, 1/σ = (1.5 + 1)/2 = 1.25.
    #[test]
    fn parallel_averages_means_and_precisions() {
        let mut cw = DiagonalLearner::new(params(ConstraintKind::Parallel, KBest::N(2)), 1, 3);
        cw.learn(&x(1, &[(0, 1.0)]), 0);
        let row = cw.weights().row(0);
        let want = [0.5, 1.0 / 1.5, -0.25, 1.0 / 1.25, -0.25, 1.0 / 1.25];
        for (got, want) in row.iter().zip(want) {
            assert!((f64::from(*got) - want).abs() < 1e-6, "{row:?}");
        }
    }

    /// Exact k-best: after Hildreth converges every constraint holds (m ≥ φ√v, φv or 1), and the
    /// tightest holds with equality (some dual is positive, since the first was violated), within
    /// a few times Hildreth's stopping tolerance (the rules' own equality is checked in f64).
    #[test]
    fn exact_k_best_meets_the_kkt_conditions() {
        for rule in [RuleKind::Var, RuleKind::Stdev, RuleKind::Pa] {
            let p = CwConfig {
                rule,
                constraints: ConstraintKind::Exact,
                k: KBest::All,
                eta: ETA_PHI_1,
                ..CwConfig::default()
            }
            .validate()
            .unwrap();
            let mut cw = DiagonalLearner::new(p, 4, 4);
            let docs = [
                x(4, &[(0, 0.8), (3, 0.6)]),
                x(4, &[(1, 1.0), (3, 0.3)]),
                x(4, &[(0, 0.5), (2, 0.5), (3, 0.7)]),
            ];
            for (i, d) in docs.iter().enumerate() {
                cw.learn(d, i % 4);
                let slack: Vec<f64> = (0..4)
                    .filter(|&r| r != i % 4)
                    .map(|r| {
                        let (m, v) = cw.margin(d, i % 4, r);
                        let bound = match rule {
                            RuleKind::Var => v,
                            RuleKind::Stdev => v.sqrt(),
                            _ => 1.0,
                        };
                        m - bound
                    })
                    .collect();
                let tol = 10.0 * crate::learn::learner::constraints::EXACT_TOLERANCE;
                assert!(
                    slack.iter().all(|&s| s >= -tol),
                    "{rule:?} doc {i}: {slack:?}"
                );
                let tightest = slack.iter().copied().fold(f64::INFINITY, f64::min);
                assert!(tightest.abs() < tol, "{rule:?} doc {i}: {slack:?}");
            }
            assert_eq!(cw.stats().exact_cap_hits, 0);
        }
    }

    /// The exact diagonal projection makes the constraint hold with equality for the diagonal
    /// covariance itself: m' = φv' (var), m' = φ√v' (stdev), read back from the f32 weights
    /// (hence 10⁻⁵ relative). η = 0.6 is a value `tune` samples; with the paper's stdev bracket
    /// the first update from the prior left the constraint unmet. The second document repeats
    /// 60 features on a model that has already shrunk their variances (v ≪ 1).
    #[test]
    fn exact_projection_meets_its_constraint() {
        for eta in [0.6, 0.9, 0.99] {
            for rule in [RuleKind::Var, RuleKind::Stdev] {
                let p = CwConfig {
                    rule,
                    projection: ProjectionKind::Exact,
                    eta,
                    ..CwConfig::default()
                }
                .validate()
                .unwrap();
                let phi = p.phi();
                let mut cw = DiagonalLearner::new(p, 60, 2);
                let small = x(60, &[(0, 0.6), (1, 0.8)]);
                let many: Vec<(u32, f32)> = (0..60).map(|j| (j, 0.129)).collect();
                let many = x(60, &many);
                for (i, doc) in [&small, &many, &many, &many, &many].into_iter().enumerate() {
                    let y = 1 - i % 2;
                    cw.learn(doc, y);
                    let (m, v) = cw.margin(doc, y, 1 - y);
                    let want = if rule == RuleKind::Var {
                        phi * v
                    } else {
                        phi * v.sqrt()
                    };
                    assert!(
                        (m - want).abs() < 1e-5 * want,
                        "{rule:?} η {eta} doc {i}: m {m} vs {want} (v {v})"
                    );
                }
            }
        }
    }

    /// Offsets added to a feature's means move every document holding that feature at value 1
    /// by exactly the offsets (the label shift on the bias), and leave the variances: three
    /// labels, and the binary formulation, whose one weight takes offsets[1] − offsets[0].
    #[test]
    fn offsets_on_the_bias_shift_every_score_by_them() {
        for (binary, labels, offsets) in
            [(false, 3, vec![0.0, 0.25, 1.5]), (true, 2, vec![0.5, 1.25])]
        {
            let p = formulation(binary);
            let mut cw = DiagonalLearner::new(p, 3, labels);
            cw.learn(&x(3, &[(0, 0.6), (2, 1.0)]), 1);
            cw.learn(&x(3, &[(1, 0.8), (2, 1.0)]), 0);
            let doc = x(3, &[(0, 0.3), (1, 0.4), (2, 1.0)]);
            let (before, variances) = (cw.scores(&doc), cw.score_gaussians(&doc));
            cw.add_to_means(2, &offsets);
            let after = cw.scores(&doc);
            let want: Vec<f64> = if binary {
                vec![before[0], before[1] + offsets[1] - offsets[0]]
            } else {
                before.iter().zip(&offsets).map(|(s, b)| s + b).collect()
            };
            for (a, w) in after.iter().zip(&want) {
                assert!((a - w).abs() < 1e-6, "{after:?} against {want:?}");
            }
            let still: Vec<f64> = cw
                .score_gaussians(&doc)
                .iter()
                .map(|g| g.variance)
                .collect();
            let was: Vec<f64> = variances.iter().map(|g| g.variance).collect();
            assert_eq!(still, was);
        }
    }

    /// The binary formulation keeps one block; its probability of label 1 is Φ(μ·x/√v).
    #[test]
    fn binary_formulation_uses_one_weight_vector() {
        let p = formulation(true);
        let mut cw = DiagonalLearner::new(p, 2, 2);
        let doc = x(2, &[(0, 1.0)]);
        cw.learn(&doc, 1);
        assert_eq!(cw.weights().labels(), 1);
        // m = 0, v = 1: α = √2/2, so μ = +α; σ = 1/(1 + λ) with λ = 1.
        let row = cw.weights().row(0);
        assert!((f64::from(row[0]) - 0.5f64.sqrt()).abs() < 1e-6, "{row:?}");
        assert!((f64::from(row[1]) - 0.5).abs() < 1e-6);
        let g = cw.score_gaussians(&doc);
        assert_eq!(g[0], ScoreGaussian::default());
        assert_eq!(crate::learn::learner::argmax(&cw.scores(&doc)), 1);
        cw.learn(&x(2, &[(1, 1.0)]), 0);
        assert!(cw.weights().row(1)[0] < 0.0, "label 0 pushes w·x below 0");
    }

    /// The score Gaussians sum each feature's part, μ·x and σ·x², in the vector's order, for
    /// one block (the binary formulation), two and three (the first two summed in a local
    /// array): exactly, not approximately.
    #[test]
    fn score_gaussians_sum_the_features_parts_in_order() {
        for (binary, labels) in [(true, 2), (false, 2), (false, 3)] {
            let p = formulation(binary);
            let mut cw = DiagonalLearner::new(p, 6, labels);
            for (i, label) in [(0, 0), (1, 1), (2, labels - 1), (3, 0), (4, 1)] {
                cw.learn(&x(6, &[(i, 1.0), (5, 0.5)]), label);
            }
            let doc = x(6, &[(0, 0.3), (2, 1.5), (3, -2.0), (4, 0.7), (5, 0.25)]);
            let mut want = vec![ScoreGaussian::default(); labels];
            for (&j, &v) in doc.indices().iter().zip(doc.data()) {
                let xj = f64::from(v);
                for (g, (mean, variance)) in want.iter_mut().zip(cw.label_weights(j as usize)) {
                    g.mean += mean * xj;
                    g.variance += variance * xj * xj;
                }
            }
            assert_eq!(
                cw.score_gaussians(&doc),
                want,
                "binary {binary}, {labels} labels"
            );
        }
    }

    #[test]
    fn learns_a_separable_problem_with_every_strategy() {
        for (constraints, k) in [
            (ConstraintKind::Single, KBest::N(1)),
            (ConstraintKind::Sequential, KBest::N(2)),
            (ConstraintKind::Parallel, KBest::All),
            (ConstraintKind::Exact, KBest::All),
        ] {
            let mut cw = DiagonalLearner::new(params(constraints, k), 5, 3);
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
                assert_eq!(super::super::argmax(&cw.scores(d)), *y, "{constraints:?}");
            }
            let g = cw.score_gaussians(&docs[0].0);
            assert!(g.iter().all(|g| g.variance > 0.0 && g.variance < 2.0));
        }
    }
}
