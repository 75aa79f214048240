//! The learners against their papers, through the public library API: scale invariance (NIPS
//! 2008 Lemma 3), the binary probability Φ(m/√v) against Gibbs sampling, the synthetic
//! experiment's orderings, invariants on random sparse streams (property tests). The full
//! reproductions, which take minutes, are in tests/integration/reproduce.rs.

use cwtext::experiment::synthetic;
use cwtext::features::FeatureVector;
use cwtext::learn::learner::full::FullCw;
use cwtext::learn::learner::{
    ConstraintKind, CwConfig, DiagonalLearner, KBest, Learner, ProjectionKind, RuleKind,
};
use proptest::prelude::*;
use statrs::distribution::{ContinuousCDF, Normal};

fn sparse(dim: usize, pairs: &[(u32, f32)]) -> FeatureVector {
    let mut pairs = pairs.to_vec();
    pairs.sort_by_key(|p| p.0);
    pairs.dedup_by_key(|p| p.0);
    FeatureVector::new(
        dim,
        pairs.iter().map(|p| p.0).collect(),
        pairs.iter().map(|p| p.1).collect(),
    )
}

fn learner(config: CwConfig, dim: usize, labels: usize) -> DiagonalLearner {
    DiagonalLearner::new(config.validate().unwrap(), dim, labels)
}

/// NIPS 2008 Lemma 3: CW-Stdev started from Σ₁ = a·I makes the same predictions (so the same
/// mistakes) as from Σ₁ = I, and its means are √a times larger. Checked for the full learner
/// (exact arithmetic) and the diagonal KL learner (the same algebra per coordinate; f32 weights,
/// so means agree to 1e-4 relative).
#[test]
fn stdev_is_invariant_to_the_initial_variance() {
    let a = 7.3f64;
    let points = synthetic::points(500, 11, 2.0, 1.0);
    let mut one = FullCw::new(
        RuleKind::Stdev,
        *CwConfig::default().validate().unwrap().rule_params(),
        synthetic::DIMENSION,
        1.0,
    );
    let mut scaled = FullCw::new(
        RuleKind::Stdev,
        *CwConfig::default().validate().unwrap().rule_params(),
        synthetic::DIMENSION,
        a,
    );
    let (mut m1, mut ma) = (Vec::new(), Vec::new());
    for (x, &y) in points.x.iter().zip(&points.y) {
        m1.push(one.learn_dense(x, y));
        ma.push(scaled.learn_dense(x, y));
    }
    assert_eq!(m1, ma, "the same mistakes");
    assert!(m1.iter().any(|&m| m), "the stream has mistakes to compare");
    for (u, v) in one.mean().iter().zip(scaled.mean()) {
        assert!((v - a.sqrt() * u).abs() < 1e-9 * (1.0 + v.abs()), "{u} {v}");
    }

    let dim = 64;
    let config = |initial_variance| CwConfig {
        constraints: ConstraintKind::Sequential,
        k: KBest::N(2),
        eta: 0.9,
        initial_variance,
        ..CwConfig::default()
    };
    let (mut d1, mut da) = (learner(config(1.0), dim, 4), learner(config(a), dim, 4));
    let docs: Vec<(FeatureVector, usize)> = (0..300u32)
        .map(|i| {
            let label = (i % 4) as usize;
            let x = sparse(
                dim,
                &[
                    (label as u32 * 8 + i % 5, 1.0),
                    ((i * 7) % 64, 0.5),
                    ((i * 13) % 64, 0.25),
                    (63, 1.0),
                ],
            );
            (x, label)
        })
        .collect();
    for (x, y) in &docs {
        assert_eq!(d1.learn(x, *y), da.learn(x, *y));
    }
    for (u, v) in d1
        .weights()
        .raw()
        .chunks(2)
        .zip(da.weights().raw().chunks(2))
    {
        let (u, v) = (f64::from(u[0]), f64::from(v[0]));
        assert!(
            (v - a.sqrt() * u).abs() <= 1e-4 * (1e-3 + v.abs()),
            "{u} {v}"
        );
    }
}

/// Binary Pr[label 1] = Φ(m/√v) agrees with the Gibbs estimate within three standard errors.
#[test]
fn binary_probability_matches_the_normal_cdf() {
    let mut cw = learner(
        CwConfig {
            binary: true,
            eta: 0.8,
            ..CwConfig::default()
        },
        8,
        2,
    );
    for i in 0..40u32 {
        let y = (i % 3 == 0) as usize;
        cw.learn(&sparse(8, &[(i % 8, 1.0), (7, 0.5)]), y);
    }
    let x = sparse(8, &[(0, 0.7), (3, 0.7), (7, 0.5)]);
    let g = cw.score_gaussians(&x)[1];
    let exact = Normal::new(0.0, 1.0)
        .unwrap()
        .cdf(g.mean / g.variance.sqrt());
    assert!(exact > 0.02 && exact < 0.98, "an informative case: {exact}");
    let n = 20_000;
    let gibbs = cwtext::learn::probability::gibbs_probabilities(&cw.score_gaussians(&x), n, 5)[1];
    let se = (exact * (1.0 - exact) / n as f64).sqrt();
    assert!((gibbs - exact).abs() < 3.0 * se, "{gibbs} vs {exact}");
}

/// The synthetic experiment's orderings on a few seeds: every second-order method makes fewer
/// mistakes than every first-order one, and the full covariance beats its diagonal.
#[test]
fn synthetic_orderings_hold() {
    let setup = synthetic::Setup {
        runs: 10,
        tuning_runs: 4,
        long_sd: synthetic::LONG_AXIS_SD,
        short_sd: synthetic::SHORT_AXIS_SD,
    };
    let rows = synthetic::table(&setup);
    let worst_second = rows
        .iter()
        .filter(|r| r.algorithm.is_second_order())
        .map(|r| r.mistakes_mean)
        .fold(0.0, f64::max);
    let best_first = rows
        .iter()
        .filter(|r| !r.algorithm.is_second_order())
        .map(|r| r.mistakes_mean)
        .fold(f64::INFINITY, f64::min);
    assert!(worst_second < best_first, "{rows:#?}");
    let get = |a| {
        rows.iter()
            .find(|r| r.algorithm == a)
            .unwrap()
            .mistakes_mean
    };
    for rule in [RuleKind::Var, RuleKind::Stdev] {
        assert!(
            get(synthetic::Algorithm::Full(rule))
                < get(synthetic::Algorithm::Diagonal(rule, ProjectionKind::Kl))
        );
    }
}

/// Every valid combination of rule, projection and strategy.
fn combinations() -> Vec<CwConfig> {
    let mut out = Vec::new();
    for rule in RuleKind::ALL {
        for projection in [
            ProjectionKind::Kl,
            ProjectionKind::L2,
            ProjectionKind::Exact,
        ] {
            for (constraints, k) in [
                (ConstraintKind::Single, KBest::N(1)),
                (ConstraintKind::Sequential, KBest::N(3)),
                (ConstraintKind::Parallel, KBest::All),
                (ConstraintKind::Exact, KBest::All),
            ] {
                for average in [false, true] {
                    let config = CwConfig {
                        rule,
                        projection,
                        constraints,
                        k,
                        average,
                        eta: 0.9,
                        c: 0.5,
                        r: 0.3,
                        ..CwConfig::default()
                    };
                    if config.clone().validate().is_ok() {
                        out.push(config);
                    }
                }
            }
        }
    }
    out
}

/// Every valid combination composes and learns a small separable 4-label problem; the invalid
/// ones are refused (about a fifth of the grid).
#[test]
fn every_rule_projection_and_strategy_composes() {
    let all = combinations();
    assert!(all.len() > 80 && all.len() < 9 * 3 * 4 * 2, "{}", all.len());
    let docs: Vec<(FeatureVector, usize)> = (0..4u32)
        .flat_map(|y| {
            (0..3u32).map(move |i| {
                (
                    sparse(20, &[(y * 4 + i, 1.0), (16 + i, 0.3), (19, 1.0)]),
                    y as usize,
                )
            })
        })
        .collect();
    for config in all {
        let mut cw = learner(config.clone(), 20, 4);
        for _ in 0..10 {
            docs.iter().for_each(|(x, y)| {
                cw.learn(x, *y);
            });
        }
        cw.finish();
        for (x, y) in &docs {
            assert_eq!(
                cwtext::learn::learner::argmax(&cw.scores(x)),
                *y,
                "{config:?}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// σ stays positive and finite and μ finite on random sparse streams, for every valid
    /// combination, with values from tiny to large.
    #[test]
    fn weights_stay_finite_and_variances_positive(
        stream in prop::collection::vec(
            (prop::collection::vec((0u32..40, -50.0f32..50.0), 1..12), 0usize..5),
            1..40,
        ),
        pick in 0usize..10_000,
    ) {
        let all = combinations();
        let config = all[pick % all.len()].clone();
        let mut cw = learner(config.clone(), 41, 5);
        for (pairs, y) in &stream {
            let mut pairs = pairs.clone();
            pairs.push((40, 1.0));
            cw.learn(&sparse(41, &pairs), *y);
        }
        cw.finish();
        for pair in cw.weights().raw().chunks(2) {
            prop_assert!(pair[0].is_finite(), "{config:?}: μ = {}", pair[0]);
            prop_assert!(pair[1].is_finite() && pair[1] > 0.0, "{config:?}: σ = {}", pair[1]);
        }
    }
}
