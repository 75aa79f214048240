//! Per-label probabilities from the weight Gaussian (EMNLP 2009 §7).
//!
//! Pr[y | x] is the probability that label y wins argmax_z w·f(x, z) when w ~ N(μ, Σ). Because
//! the label blocks are disjoint and Σ is diagonal, the K scores are independent Gaussians
//! s_z ~ N(μ_z·x, Σⱼ σ_zj xⱼ²) ([`ScoreGaussian`]); drawing K scalars per sample is exactly the
//! distribution of drawing the whole weight vector, at O(nnz·K + S·K) instead of O(S·nnz·K).

use rand::distributions::Distribution;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use statrs::distribution::Normal;

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
    let stdevs: Vec<f64> = gaussians
        .iter()
        .map(|g| {
            if g.variance > 0.0 && g.variance.is_finite() {
                g.variance.sqrt()
            } else {
                0.0
            }
        })
        .collect();
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
    use statrs::distribution::{ContinuousCDF, Normal};

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
