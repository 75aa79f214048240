//! NIPS 2008 §5 (Crammer, Dredze, Pereira, *Exact Convex Confidence-Weighted Learning*), the
//! synthetic experiment of Fig. 2(a, b).
//!
//! 1,000 points in R²⁰: the first two coordinates from a Gaussian rotated by 45°, the other 18
//! from independent N(0, 2) (variance 2); the label is the side of a separator through the
//! origin parallel to the long axis, so the set is linearly separable and only the short axis is
//! informative. The paper says only "a 45° rotated Gaussian distribution with standard deviation
//! 1": we read that as the informative axis ([`SHORT_AXIS_SD`] = 1) and give the long axis
//! [`LONG_AXIS_SD`] = 2 (both are options of `cwtext experiment synthetic`; with these the
//! paper's orderings and its 8% diagonal gap come out). Each algorithm sees the points once,
//! online; we count cumulative mistakes and then test on 10,000 fresh points, over many seeds.
//! "All algorithm parameters were tuned": η for the CW family (and r for AROW) is chosen from a
//! grid on separate tuning seeds, never on the reported ones.

use rand::distributions::Distribution;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use statrs::distribution::Normal;

use super::{mean_sd, Note, Notes};
use crate::error::{Error, Result};
use crate::features::FeatureVector;
use crate::learn::learner::full::FullCw;
use crate::learn::learner::{
    ConstraintKind, CwConfig, DiagonalLearner, KBest, Learner, ProjectionKind, RuleKind,
};

/// Dimensions of the synthetic points.
pub const DIMENSION: usize = 20;
/// The default standard deviation of the informative (short) axis of the rotated Gaussian.
pub const SHORT_AXIS_SD: f64 = 1.0;
/// The default standard deviation of the long axis (see the module comment).
pub const LONG_AXIS_SD: f64 = 2.0;
/// Points per online run (the paper's 1,000).
pub const TRAIN_POINTS: usize = 1000;
/// Fresh points for the test error (the paper's 10,000).
pub const TEST_POINTS: usize = 10_000;
/// The η grid tuned over.
pub const ETA_GRID: &[f64] = &[0.55, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99];
/// AROW's r grid tuned over.
pub const R_GRID: &[f64] = &[0.01, 0.1, 1.0, 10.0];

/// One synthetic data set: dense points and labels ±1.
pub struct Points {
    pub x: Vec<[f64; DIMENSION]>,
    pub y: Vec<f64>,
}

/// Draws `n` points from seed `seed`.
pub fn points(n: usize, seed: u64, long_sd: f64, short_sd: f64) -> Points {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let standard = Normal::new(0.0, 1.0).expect("valid");
    let noise_sd = 2f64.sqrt();
    let (mut x, mut y) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let r = std::f64::consts::FRAC_1_SQRT_2;
    for _ in 0..n {
        let long = long_sd * standard.sample(&mut rng);
        let short = short_sd * standard.sample(&mut rng);
        let mut p = [0.0; DIMENSION];
        // Rotate (long, short) by 45°.
        p[0] = r * (long - short);
        p[1] = r * (long + short);
        for v in &mut p[2..] {
            *v = noise_sd * standard.sample(&mut rng);
        }
        // Long axis (1, 1)/√2; the separator through the origin along it: the sign of short.
        x.push(p);
        y.push(if short > 0.0 { 1.0 } else { -1.0 });
    }
    Points { x, y }
}

/// The algorithms of Fig. 2, plus the other diagonal projections and AROW.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Algorithm {
    Perceptron,
    Pa,
    /// A diagonal learner with a rule and projection.
    Diagonal(RuleKind, ProjectionKind),
    /// The full-covariance learner with a rule.
    Full(RuleKind),
}

impl Algorithm {
    /// The rows of the table, in order.
    pub const ALL: &'static [Algorithm] = &[
        Algorithm::Perceptron,
        Algorithm::Pa,
        Algorithm::Diagonal(RuleKind::Var, ProjectionKind::Kl),
        Algorithm::Full(RuleKind::Var),
        Algorithm::Diagonal(RuleKind::Stdev, ProjectionKind::Kl),
        Algorithm::Full(RuleKind::Stdev),
        Algorithm::Diagonal(RuleKind::Var, ProjectionKind::L2),
        Algorithm::Diagonal(RuleKind::Stdev, ProjectionKind::L2),
        Algorithm::Diagonal(RuleKind::Var, ProjectionKind::Exact),
        Algorithm::Diagonal(RuleKind::Stdev, ProjectionKind::Exact),
        Algorithm::Diagonal(RuleKind::Arow, ProjectionKind::Kl),
        Algorithm::Full(RuleKind::Arow),
    ];

    pub fn name(self) -> String {
        let rule = |r: RuleKind| match r {
            RuleKind::Var => "CW-Var",
            RuleKind::Stdev => "CW-Stdev",
            RuleKind::Arow => "AROW",
            _ => "?",
        };
        match self {
            Algorithm::Perceptron => "Perceptron".into(),
            Algorithm::Pa => "PA".into(),
            Algorithm::Diagonal(r, ProjectionKind::Kl) => format!("{}-diag (KL)", rule(r)),
            Algorithm::Diagonal(r, ProjectionKind::L2) => format!("{}-diag (L2)", rule(r)),
            Algorithm::Diagonal(r, ProjectionKind::Exact) => format!("{}-diag (exact)", rule(r)),
            Algorithm::Full(r) => format!("{}-full", rule(r)),
        }
    }

    pub fn is_second_order(self) -> bool {
        !matches!(self, Algorithm::Perceptron | Algorithm::Pa)
    }

    /// The grid of (η, r) this algorithm is tuned over.
    fn grid(self) -> Vec<(f64, f64)> {
        match self {
            Algorithm::Perceptron | Algorithm::Pa => vec![(0.9, 1.0)],
            Algorithm::Diagonal(RuleKind::Arow, _) | Algorithm::Full(RuleKind::Arow) => {
                R_GRID.iter().map(|&r| (0.9, r)).collect()
            }
            _ => ETA_GRID.iter().map(|&eta| (eta, 1.0)).collect(),
        }
    }

    fn learner(self, eta: f64, r: f64) -> Box<dyn Learner> {
        let diagonal = |rule, projection| {
            let params = CwConfig {
                rule,
                projection,
                constraints: ConstraintKind::Single,
                k: KBest::N(1),
                eta,
                r,
                binary: true,
                ..CwConfig::default()
            }
            .validate()
            .expect("valid settings");
            Box::new(DiagonalLearner::new(params, DIMENSION, 2)) as Box<dyn Learner>
        };
        match self {
            Algorithm::Perceptron => diagonal(RuleKind::Perceptron, ProjectionKind::Kl),
            Algorithm::Pa => diagonal(RuleKind::Pa, ProjectionKind::Kl),
            Algorithm::Diagonal(rule, projection) => diagonal(rule, projection),
            Algorithm::Full(rule) => {
                let params = CwConfig {
                    eta,
                    r,
                    ..CwConfig::default()
                }
                .validate()
                .expect("valid settings");
                Box::new(FullCw::new(rule, *params.rule_params(), DIMENSION, 1.0))
            }
        }
    }
}

fn sparse(p: &[f64; DIMENSION]) -> FeatureVector {
    FeatureVector::new(
        DIMENSION,
        (0..DIMENSION as u32).collect(),
        p.iter().map(|&v| v as f32).collect(),
    )
}

/// How the experiment is run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setup {
    /// Reported runs (seeds).
    pub runs: usize,
    /// Runs on other seeds for tuning.
    pub tuning_runs: usize,
    /// The standard deviation of the long (uninformative) axis.
    pub long_sd: f64,
    /// The standard deviation of the informative axis.
    pub short_sd: f64,
}

impl Setup {
    /// Checks the setup: at least one run of each kind, and positive, finite axis standard
    /// deviations, naming the bad value.
    pub fn check(&self) -> Result<()> {
        for (what, n) in [("runs", self.runs), ("tuning runs", self.tuning_runs)] {
            if n == 0 {
                return Err(Error::InvalidSetting(format!(
                    "{what} must be at least 1, but is 0"
                )));
            }
        }
        for (name, sd) in [("long", self.long_sd), ("short", self.short_sd)] {
            if !(sd.is_finite() && sd > 0.0) {
                return Err(Error::InvalidSetting(format!(
                    "--{name}-axis-sd must be positive, but is {sd}"
                )));
            }
        }
        Ok(())
    }

    /// Runs the experiment ([`table`]) after [`Setup::check`] and returns the table in
    /// Markdown.
    pub fn run(&self, notes: Notes) -> Result<String> {
        notes(Note::Info(format!(
            "synthetic: {} algorithms × {} runs (tuned on {})",
            Algorithm::ALL.len(),
            self.runs,
            self.tuning_runs
        )));
        self.check()?;
        Ok(markdown(&table(self), self))
    }
}

/// (cumulative mistakes, test error) of one run.
pub fn run(
    algorithm: Algorithm,
    eta: f64,
    r: f64,
    seed: u64,
    setup: &Setup,
    test: Option<&Points>,
) -> (f64, f64) {
    let train = points(TRAIN_POINTS, seed, setup.long_sd, setup.short_sd);
    let mut learner = algorithm.learner(eta, r);
    let mut mistakes = 0usize;
    for (p, &y) in train.x.iter().zip(&train.y) {
        mistakes += usize::from(learner.learn(&sparse(p), usize::from(y > 0.0)));
    }
    let error = test.map_or(0.0, |test| {
        let wrong = test
            .x
            .iter()
            .zip(&test.y)
            .filter(|(p, &y)| {
                crate::learn::learner::argmax(&learner.scores(&sparse(p))) != usize::from(y > 0.0)
            })
            .count();
        wrong as f64 / test.x.len() as f64
    });
    (mistakes as f64, error)
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub algorithm: Algorithm,
    pub eta: f64,
    pub r: f64,
    pub mistakes_mean: f64,
    pub mistakes_sd: f64,
    pub test_error_mean: f64,
    pub test_error_sd: f64,
}

/// Seeds of the reported runs start here; tuning seeds start at [`TUNING_SEED`].
pub const FIRST_SEED: u64 = 1;
pub const TUNING_SEED: u64 = 1_000_000;

/// Tunes each algorithm on `tuning_runs` seeds, then reports `runs` seeds.
pub fn table(setup: &Setup) -> Vec<Row> {
    let (runs, tuning_runs) = (setup.runs, setup.tuning_runs);
    let tests: Vec<Points> = (0..runs as u64)
        .map(|s| {
            let seed = FIRST_SEED + s + 500_000;
            points(TEST_POINTS, seed, setup.long_sd, setup.short_sd)
        })
        .collect();
    Algorithm::ALL
        .iter()
        .map(|&algorithm| {
            let (eta, r) = algorithm
                .grid()
                .into_iter()
                .map(|(eta, r)| {
                    let total: f64 = (0..tuning_runs as u64)
                        .map(|s| run(algorithm, eta, r, TUNING_SEED + s, setup, None).0)
                        .sum();
                    ((eta, r), total)
                })
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .expect("non-empty grid")
                .0;
            let results: Vec<(f64, f64)> = (0..runs)
                .map(|s| {
                    let seed = FIRST_SEED + s as u64;
                    run(algorithm, eta, r, seed, setup, Some(&tests[s]))
                })
                .collect();
            let (mistakes_mean, mistakes_sd) =
                mean_sd(&results.iter().map(|r| r.0).collect::<Vec<_>>());
            let (test_error_mean, test_error_sd) =
                mean_sd(&results.iter().map(|r| 100.0 * r.1).collect::<Vec<_>>());
            Row {
                algorithm,
                eta,
                r,
                mistakes_mean,
                mistakes_sd,
                test_error_mean,
                test_error_sd,
            }
        })
        .collect()
}

/// The paper's figure for a row, in words.
fn paper(algorithm: Algorithm) -> &'static str {
    match algorithm {
        Algorithm::Perceptron | Algorithm::Pa => "≥ 129",
        Algorithm::Diagonal(RuleKind::Var, ProjectionKind::Kl) => "< 80; 8% above Stdev-diag",
        Algorithm::Full(RuleKind::Var) => "< 80; 17% above Stdev-full",
        Algorithm::Diagonal(RuleKind::Stdev, ProjectionKind::Kl)
        | Algorithm::Full(RuleKind::Stdev) => "< 80",
        _ => "not in the paper",
    }
}

/// The table as Markdown.
pub fn markdown(rows: &[Row], setup: &Setup) -> String {
    let Setup {
        runs,
        tuning_runs,
        long_sd,
        short_sd,
    } = *setup;
    let mut out = format!(
        "NIPS 2008 §5 synthetic data: {TRAIN_POINTS} points in R^{DIMENSION}, one online pass, \
         {runs} seeds (parameters tuned on {tuning_runs} other seeds); test error on \
         {TEST_POINTS} fresh points. Axis standard deviations: long {long_sd}, short (informative) {short_sd}.\n\n\
         | algorithm | η | r | cumulative mistakes | sd | test error % | sd | paper (mistakes) |\n\
         |---|---|---|---|---|---|---|---|\n"
    );
    for row in rows {
        let eta = if row.algorithm.is_second_order()
            && !matches!(
                row.algorithm,
                Algorithm::Diagonal(RuleKind::Arow, _) | Algorithm::Full(RuleKind::Arow)
            ) {
            format!("{}", row.eta)
        } else {
            "–".into()
        };
        let r = if matches!(
            row.algorithm,
            Algorithm::Diagonal(RuleKind::Arow, _) | Algorithm::Full(RuleKind::Arow)
        ) {
            format!("{}", row.r)
        } else {
            "–".into()
        };
        out.push_str(&format!(
            "| {} | {eta} | {r} | {:.1} | {:.1} | {:.2} | {:.2} | {} |\n",
            row.algorithm.name(),
            row.mistakes_mean,
            row.mistakes_sd,
            row.test_error_mean,
            row.test_error_sd,
            paper(row.algorithm)
        ));
    }
    let find = |a: Algorithm| {
        rows.iter()
            .find(|r| r.algorithm == a)
            .map(|r| r.mistakes_mean)
    };
    if let (Some(vd), Some(sd), Some(vf), Some(sf)) = (
        find(Algorithm::Diagonal(RuleKind::Var, ProjectionKind::Kl)),
        find(Algorithm::Diagonal(RuleKind::Stdev, ProjectionKind::Kl)),
        find(Algorithm::Full(RuleKind::Var)),
        find(Algorithm::Full(RuleKind::Stdev)),
    ) {
        out.push_str(&format!(
            "\nCW-Var over CW-Stdev: diag {:+.0}% (paper +8%), full {:+.0}% (paper +17%).\n",
            100.0 * (vd / sd - 1.0),
            100.0 * (vf / sf - 1.0)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setup_names_its_bad_values() {
        let setup = Setup {
            runs: 2,
            tuning_runs: 1,
            long_sd: LONG_AXIS_SD,
            short_sd: SHORT_AXIS_SD,
        };
        setup.check().unwrap();
        for (bad, message) in [
            (
                Setup { runs: 0, ..setup },
                "runs must be at least 1, but is 0",
            ),
            (
                Setup {
                    tuning_runs: 0,
                    ..setup
                },
                "tuning runs must be at least 1, but is 0",
            ),
            (
                Setup {
                    long_sd: -1.0,
                    ..setup
                },
                "--long-axis-sd must be positive, but is -1",
            ),
            (
                Setup {
                    short_sd: f64::NAN,
                    ..setup
                },
                "--short-axis-sd must be positive, but is NaN",
            ),
        ] {
            let err = bad.run(&mut |_| {}).expect_err("refused").to_string();
            assert!(err.contains(message), "{message:?} not in {err:?}");
        }
    }

    #[test]
    fn points_are_labelled_by_the_short_axis() {
        let p = points(2000, 3, LONG_AXIS_SD, SHORT_AXIS_SD);
        for (x, &y) in p.x.iter().zip(&p.y) {
            // short = (x₁ − x₀)/√2.
            assert_eq!(y > 0.0, x[1] - x[0] > 0.0);
        }
        let noise: f64 = p.x.iter().map(|x| x[7] * x[7]).sum::<f64>() / 2000.0;
        assert!((noise - 2.0).abs() < 0.2, "noise variance {noise}");
    }
}
