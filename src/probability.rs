//! Per-label probabilities from the weight Gaussian (EMNLP 2009 §7).
//!
//! Pr[y | x] is the probability that label y wins argmax_z w·f(x, z) when w ~ N(μ, Σ). Because
//! the label blocks are disjoint and Σ is diagonal, the K scores are independent Gaussians
//! s_z ~ N(μ_z·x, Σⱼ σ_zj xⱼ²) ([`ScoreGaussian`]); drawing K scalars per sample is exactly the
//! distribution of drawing the whole weight vector, at O(nnz·K + S·K) instead of O(S·nnz·K).
//!
//! The same independence gives the probabilities exactly, by one-dimensional quadrature
//! (ALGORITHMS.md): Pr[y] = ∫ N(s; m_y, v_y) Π_{z≠y} Φ((s − m_z)/√v_z) ds ([`quadrature`]).

use rand::distributions::Distribution;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use crate::learner::ScoreGaussian;

/// The default number of Gibbs samples: the standard error of a probability is at most
/// 0.5/√S ≈ 0.016.
pub const DEFAULT_SAMPLES: usize = 1000;

/// A label distribution with its normalised entropy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelDistribution {
    /// Pr[label | x], indexed like the model's labels; sums to 1.
    pub probabilities: Vec<f64>,
    /// −Σ P log P / log K, in [0, 1]: 0 is certain, 1 is uniform.
    pub entropy: f64,
}

/// How label probabilities are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Gibbs sampling (EMNLP §7): `samples` draws from a seeded generator.
    Gibbs { samples: usize, seed: u64 },
    /// One-dimensional quadrature: exact up to about 1e-6.
    Exact,
}

impl Method {
    /// The distribution of the label scores' Gaussians.
    pub fn distribution(self, gaussians: &[ScoreGaussian]) -> LabelDistribution {
        match self {
            Method::Gibbs { samples, seed } => sample_distribution(gaussians, samples, seed),
            Method::Exact => {
                let probabilities = quadrature(gaussians);
                let entropy = normalised_entropy(&probabilities);
                LabelDistribution {
                    probabilities,
                    entropy,
                }
            }
        }
    }
}

/// How far (in standard deviations) the quadrature reaches either side of a label's mean.
const QUADRATURE_REACH: f64 = 8.5;
/// The step of the quadrature grid, in the label's standard deviations, at most.
const QUADRATURE_STEP: f64 = 0.05;
/// The most grid points per label.
const QUADRATURE_MAX_POINTS: usize = 4000;

/// Pr[label z has the highest score] for independent Gaussian scores, by the trapezoidal rule in
/// the standardised variable t = (s − m_y)/σ_y over ±8.5σ_y (the integrand decays like a Gaussian,
/// for which the trapezoidal rule converges exponentially). The step follows the sharpest factor:
/// a competitor with a much smaller σ_z makes Φ((s − m_z)/σ_z) a near-step. Labels that cannot
/// win (their whole reach lies below another label's certain floor) get 0 without integrating. A
/// score with zero variance is a point mass; ties between point masses go to the lower index,
/// as in argmax. The result is normalised to sum to 1.
pub fn quadrature(gaussians: &[ScoreGaussian]) -> Vec<f64> {
    let k = gaussians.len();
    if k == 0 {
        return Vec::new();
    }
    let sd = standard_deviations(gaussians);
    // The highest score some label is all but sure to exceed.
    let floor = gaussians
        .iter()
        .zip(&sd)
        .map(|(g, s)| g.mean - QUADRATURE_REACH * s)
        .fold(f64::NEG_INFINITY, f64::max);
    let standard = Normal::new(0.0, 1.0).expect("the standard normal is valid");
    // Pr[score z < s], with point masses as steps (ties to the lower index are handled below).
    let below = |z: usize, s: f64, strict: bool| -> f64 {
        if sd[z] > 0.0 {
            standard.cdf((s - gaussians[z].mean) / sd[z])
        } else if gaussians[z].mean < s || (!strict && gaussians[z].mean == s) {
            1.0
        } else {
            0.0
        }
    };
    let mut p = vec![0.0; k];
    for y in 0..k {
        let (m, s) = (gaussians[y].mean, sd[y]);
        if m + QUADRATURE_REACH * s < floor {
            continue;
        }
        // Label y beats z: z's score must be below y's (at or below for z after y on ties).
        let wins = |score: f64| -> f64 {
            (0..k)
                .filter(|&z| z != y)
                .map(|z| below(z, score, z < y))
                .product()
        };
        if s == 0.0 {
            p[y] = wins(m);
            continue;
        }
        // Competitors with zero variance are steps: y must score above the highest of them,
        // so integrate from there on, over a smooth integrand (no step inside the grid).
        let start = (0..k)
            .filter(|&z| z != y && sd[z] == 0.0)
            .map(|z| (gaussians[z].mean - m) / s)
            .fold(-QUADRATURE_REACH, f64::max);
        if start >= QUADRATURE_REACH {
            continue;
        }
        let smooth = |score: f64| -> f64 {
            (0..k)
                .filter(|&z| z != y && sd[z] > 0.0)
                .map(|z| standard.cdf((score - gaussians[z].mean) / sd[z]))
                .product()
        };
        let sharpest = (0..k)
            .filter(|&z| z != y && sd[z] > 0.0)
            .map(|z| sd[z] / s)
            .fold(1.0f64, f64::min);
        let span = QUADRATURE_REACH - start;
        let points = ((span / (QUADRATURE_STEP * sharpest)).ceil() as usize)
            .clamp(64, QUADRATURE_MAX_POINTS);
        let h = span / points as f64;
        let total: f64 = (0..=points)
            .map(|i| {
                let t = start + i as f64 * h;
                let weight = if i == 0 || i == points { 0.5 } else { 1.0 };
                weight * (-0.5 * t * t).exp() * smooth(m + s * t)
            })
            .sum();
        p[y] = total * h / (2.0 * std::f64::consts::PI).sqrt();
    }
    let sum: f64 = p.iter().sum();
    if sum > 0.0 {
        p.iter_mut().for_each(|q| *q /= sum);
    } else {
        p[crate::learner::argmax(&gaussians.iter().map(|g| g.mean).collect::<Vec<_>>())] = 1.0;
    }
    p
}

/// Estimates the label distribution from `samples` draws, seeded so that the same input gives
/// the same answer.
pub fn sample_distribution(
    gaussians: &[ScoreGaussian],
    samples: usize,
    seed: u64,
) -> LabelDistribution {
    let probabilities = gibbs_probabilities(gaussians, samples, seed);
    let entropy = normalised_entropy(&probabilities);
    LabelDistribution {
        probabilities,
        entropy,
    }
}

/// Monte Carlo estimate of Pr[argmax = z] for independent Gaussian scores.
pub fn gibbs_probabilities(gaussians: &[ScoreGaussian], samples: usize, seed: u64) -> Vec<f64> {
    let k = gaussians.len();
    let mut wins = vec![0usize; k];
    if k == 0 {
        return Vec::new();
    }
    let samples = samples.max(1);
    let stdevs = standard_deviations(gaussians);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let standard = Normal::new(0.0, 1.0).expect("the standard normal is valid");
    for _ in 0..samples {
        let mut best = (0, f64::NEG_INFINITY);
        for (z, (g, sd)) in gaussians.iter().zip(&stdevs).enumerate() {
            let s = g.mean + sd * standard.sample(&mut rng);
            if s > best.1 {
                best = (z, s);
            }
        }
        wins[best.0] += 1;
    }
    wins.into_iter()
        .map(|w| w as f64 / samples as f64)
        .collect()
}

/// The standard deviation of each score; 0 for a zero or non-finite variance (a point mass).
fn standard_deviations(gaussians: &[ScoreGaussian]) -> Vec<f64> {
    gaussians
        .iter()
        .map(|g| {
            if g.variance > 0.0 && g.variance.is_finite() {
                g.variance.sqrt()
            } else {
                0.0
            }
        })
        .collect()
}

/// −Σ P log P / log K; 0 for a single label.
pub fn normalised_entropy(p: &[f64]) -> f64 {
    if p.len() < 2 {
        return 0.0;
    }
    let h: f64 = p.iter().filter(|&&q| q > 0.0).map(|&q| -q * q.ln()).sum();
    // A certain distribution sums to −0.0; report it as 0 (JSON would print "-0.0").
    (h / (p.len() as f64).ln()).clamp(0.0, 1.0) + 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(mean: f64, variance: f64) -> ScoreGaussian {
        ScoreGaussian { mean, variance }
    }

    /// Two labels: Pr[s₀ > s₁] = Φ((m₀ − m₁)/√(v₀ + v₁)). Within three standard errors.
    #[test]
    fn two_labels_match_the_normal_cdf() {
        let gs = [g(0.4, 0.3), g(0.0, 0.5)];
        let n = 20_000;
        let p = gibbs_probabilities(&gs, n, 7);
        let want = Normal::new(0.0, 1.0).unwrap().cdf(0.4 / 0.8f64.sqrt());
        let se = (want * (1.0 - want) / n as f64).sqrt();
        assert!((p[0] - want).abs() < 3.0 * se, "{} vs {want}", p[0]);
        assert!((p[0] + p[1] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn same_seed_same_answer_and_degenerate_variances() {
        let gs = [g(1.0, 0.0), g(0.0, 0.0), g(0.5, 0.0)];
        assert_eq!(gibbs_probabilities(&gs, 100, 1), vec![1.0, 0.0, 0.0]);
        let gs = [g(0.1, 1.0), g(0.0, 1.0), g(0.2, 1.0)];
        assert_eq!(
            gibbs_probabilities(&gs, 500, 3),
            gibbs_probabilities(&gs, 500, 3)
        );
    }

    /// Two labels: quadrature equals the closed form Φ((m₀ − m₁)/√(v₀ + v₁)) to 1e-6.
    #[test]
    fn quadrature_matches_the_two_label_closed_form() {
        for gs in [
            [g(0.4, 0.3), g(0.0, 0.5)],
            [g(-1.0, 0.01), g(0.2, 4.0)],
            [g(3.0, 1.0), g(0.0, 1.0)],
        ] {
            let d = gs[0].mean - gs[1].mean;
            let want = Normal::new(0.0, 1.0)
                .unwrap()
                .cdf(d / (gs[0].variance + gs[1].variance).sqrt());
            let p = quadrature(&gs);
            assert!((p[0] - want).abs() < 1e-6, "{gs:?}: {} vs {want}", p[0]);
        }
    }

    /// Many labels with unequal variances: quadrature and a large Gibbs sample agree within
    /// three standard errors for every label.
    #[test]
    fn quadrature_agrees_with_gibbs_within_sampling_error() {
        let gs = [
            g(0.3, 0.2),
            g(0.1, 0.05),
            g(0.5, 0.6),
            g(-0.2, 0.01),
            g(0.35, 0.0004),
            g(-3.0, 0.1),
        ];
        let exact = quadrature(&gs);
        let n = 40_000;
        let gibbs = gibbs_probabilities(&gs, n, 11);
        assert!((exact.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        for (z, (e, s)) in exact.iter().zip(&gibbs).enumerate() {
            let se = (e * (1.0 - e) / n as f64).sqrt().max(1.0 / n as f64);
            assert!(
                (e - s).abs() < 3.0 * se,
                "label {z}: exact {e} vs Gibbs {s}"
            );
        }
        assert_eq!(exact[5], 0.0, "a label that cannot win is skipped");
    }

    #[test]
    fn quadrature_handles_point_masses() {
        assert_eq!(quadrature(&[g(1.0, 0.0), g(0.0, 0.0)]), vec![1.0, 0.0]);
        assert_eq!(quadrature(&[g(0.0, 0.0), g(0.0, 0.0)]), vec![1.0, 0.0]);
        let p = quadrature(&[g(0.0, 0.0), g(0.0, 1.0)]);
        assert!((p[0] - 0.5).abs() < 1e-9, "{p:?}");
    }

    #[test]
    fn entropy_is_normalised() {
        assert_eq!(normalised_entropy(&[1.0, 0.0, 0.0]), 0.0);
        assert!(
            normalised_entropy(&[0.0, 1.0]).is_sign_positive(),
            "no negative zero"
        );
        assert!((normalised_entropy(&[0.25; 4]) - 1.0).abs() < 1e-12);
        // −(0.5 ln 0.5 + 0.5 ln 0.5)/ln 3 = ln 2/ln 3.
        assert!((normalised_entropy(&[0.5, 0.5, 0.0]) - 2f64.ln() / 3f64.ln()).abs() < 1e-12);
        assert_eq!(normalised_entropy(&[1.0]), 0.0);
    }
}
