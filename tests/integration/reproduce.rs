//! The papers' experiments, run and checked against the orderings the papers report (the tables
//! in `benches/results/` are these runs' output; benches/results/README.md says what holds and
//! what differs). They take minutes and the last two need 20 Newsgroups, so they are ignored by
//! default; run them in release:
//!
//! ```sh
//! bash benches/compare/corpora/fetch.sh      # once: ~/.cache/cwtext-corpora (or $CWTEXT_CORPORA)
//! cargo test --release --test integration reproduce:: -- --ignored
//! ```
//!
//! `.ci/scheduled` does both. (A small version of the synthetic experiment runs by default in
//! tests/integration/learners.rs.)

use std::path::PathBuf;

use cwtext::experiment::{epochs, shards, synthetic, Split};
use cwtext::jobs::train::TrainSettings;
use cwtext::progress::NoProgress;

/// A corpus under $CWTEXT_CORPORA or ~/.cache/cwtext-corpora; a missing one fails the test with
/// the command that fetches it.
fn corpus(name: &str) -> PathBuf {
    let root = std::env::var_os("CWTEXT_CORPORA").map_or_else(
        || {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/cwtext-corpora")
        },
        PathBuf::from,
    );
    let dir = root.join(name);
    assert!(
        dir.is_dir(),
        "{} missing: run `bash benches/compare/corpora/fetch.sh {}`",
        dir.display(),
        root.display()
    );
    dir
}

/// 20 Newsgroups, by-date split, through the default pipeline.
fn newsgroups(settings: &TrainSettings) -> Split {
    let split = Split::read(
        &corpus("20ng"),
        "train-*",
        "test-*",
        &settings.pipeline,
        &NoProgress,
    )
    .unwrap();
    assert_eq!((split.labels.len(), split.train.len()), (20, 11_293));
    split
}

/// NIPS 2008 §5 as `cwtext experiment synthetic` runs it (100 runs, η tuned on 20 others):
/// every second-order method under 80 cumulative mistakes (the paper's figure: below 80), the
/// first-order ones above 110 (the paper: at least 129; our PA makes 119, see the README), and
/// CW-Var above CW-Stdev, diagonal and full.
#[test]
#[ignore = "5 s in release, minutes in debug: cargo test --release --test integration reproduce:: -- --ignored"]
fn reproduce_nips2008_synthetic() {
    let setup = synthetic::Setup {
        runs: 100,
        tuning_runs: 20,
        long_sd: synthetic::LONG_AXIS_SD,
        short_sd: synthetic::SHORT_AXIS_SD,
    };
    let rows = synthetic::table(&setup);
    let mistakes = |a: synthetic::Algorithm| {
        rows.iter()
            .find(|r| r.algorithm == a)
            .unwrap()
            .mistakes_mean
    };
    use cwtext::learn::learner::{ProjectionKind::Kl, RuleKind::Stdev, RuleKind::Var};
    use synthetic::Algorithm::{Diagonal, Full, Pa, Perceptron};
    for a in [
        Diagonal(Var, Kl),
        Full(Var),
        Diagonal(Stdev, Kl),
        Full(Stdev),
    ] {
        assert!(mistakes(a) < 80.0, "{}: {}", a.name(), mistakes(a));
    }
    for a in [Perceptron, Pa] {
        assert!(mistakes(a) > 110.0, "{}: {}", a.name(), mistakes(a));
    }
    assert!(mistakes(Diagonal(Var, Kl)) > mistakes(Diagonal(Stdev, Kl)));
    assert!(mistakes(Full(Var)) > mistakes(Full(Stdev)));
}

/// EMNLP 2009 §6 on 20 Newsgroups (by-date split), 10 epochs, as `cwtext experiment epochs`.
/// The paper's orderings that hold: CW above PA above the perceptron, at the first epoch and the
/// last; k = 5 ahead of k = 1 after one epoch; exact flat after the first epochs and below k = 1
/// and k = 5 from epoch 3 on. Where ours differ (benches/results/README.md says why): parallel
/// trails sequential by under 2.5 points instead of ≈ 0.75, and exact k = all ends above
/// sequential k = all instead of below it (not asserted).
#[test]
#[ignore = "4 minutes in release on 20 Newsgroups: cargo test --release --test integration reproduce:: -- --ignored"]
fn reproduce_emnlp2009_epochs() {
    let base = TrainSettings::new(10, 1);
    let split = newsgroups(&base);
    let curves = epochs::run(
        &epochs::emnlp_configs(),
        &base,
        split.labels.len(),
        &split.train,
        &split.test,
        10,
        &NoProgress,
    )
    .unwrap();
    let epochs = |name: &str| -> Vec<f64> {
        let c = curves.iter().find(|c| c.config.name == name).unwrap();
        c.accuracy.iter().map(|a| 100.0 * a).collect()
    };
    let last = |name: &str| *epochs(name).last().unwrap();
    let (cw, pa, perceptron) = (epochs("CW-Var k=1"), epochs("PA k=1"), epochs("Perceptron"));
    assert!(last("CW-Var k=1") > last("PA k=1") && last("PA k=1") > last("Perceptron"));
    assert!(cw[0] > pa[0] && pa[0] > perceptron[0]);
    assert!(epochs("CW-Var k=5 sequential")[0] > cw[0]);
    let (sequential, parallel) = (
        last("CW-Var k=all sequential"),
        last("CW-Var k=all parallel"),
    );
    assert!(
        parallel < sequential && sequential - parallel < 2.5,
        "{parallel} {sequential}"
    );
    let exact = epochs("CW-Var k=all exact");
    let k5 = epochs("CW-Var k=5 sequential");
    for e in 2..10 {
        assert!(exact[e] < cw[e] && exact[e] < k5[e], "epoch {}", e + 1);
        assert!(exact[e] - exact[1] < 0.2, "exact is flat after epoch 2");
    }
    assert!(last("CW-Var k=1") > 80.0, "the floor of issue 2");
    let capped: usize = curves.iter().map(|c| c.exact_cap_hits).sum();
    assert_eq!(capped, 0, "exact k-best converged everywhere");
}

/// JMLR 2012 §7.10 Fig. 6 on 20 Newsgroups, 10 shards, 5 epochs, as `cwtext experiment shards`:
/// KL combination ≥ uniform average ≥ mean single shard, and mixing after every epoch closes most
/// of the gap to one model (above the KL combination, at most one model).
#[test]
#[ignore = "15 s in release on 20 Newsgroups: cargo test --release --test integration reproduce:: -- --ignored"]
fn reproduce_jmlr2012_fig6_shards() {
    let base = TrainSettings::new(5, 1);
    let split = newsgroups(&base);
    let shard = |e: &cwtext::jobs::train::Example| e.split.shard(10);
    let lines = shards::run(&base, &split.labels, &split.train, &split.test, 10, &shard).unwrap();
    let get = |i: usize| lines[i].accuracy;
    let (single, mean, average, kl, mixed) = (get(0), get(1), get(2), get(3), get(4));
    assert!(
        kl >= average && average >= mean,
        "{kl} {average} {mean}: {lines:#?}"
    );
    assert!(mixed > kl && mixed <= single, "{mixed} {kl} {single}");
}
