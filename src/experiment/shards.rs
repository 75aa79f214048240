//! JMLR 2012 §7.10, Fig. 6: n models trained on disjoint parts of the training data, then
//! combined. Reported on the test data: a single model on all the data, the mean of the n shard
//! models, their uniform average ("L2"), their KL combination, and iterative parameter mixing
//! (KL-mixed after every epoch).

use super::epochs::accuracy;
use super::{mean_sd, Note, Notes, SplitSpec};
use crate::error::{Error, Result};
use crate::jobs::plan::MAX_SHARDS;
use crate::jobs::train::{
    check_epochs, train_examples, train_sharded, Example, Sharding, TrainSettings,
};
use crate::model::merge::{combine, MergeMethod};
use crate::model::Model;
use crate::progress::{NoProgress, Progress};

/// `cwtext experiment shards`: the corpus, the number of shards and the epochs of every model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Experiment {
    pub split: SplitSpec,
    /// Shards, 2 to [`MAX_SHARDS`].
    pub shards: usize,
    pub epochs: usize,
}

impl Experiment {
    /// Checks the settings, reads the corpus, runs the comparison ([`run`], shards by a hash of
    /// each file's path) and returns its table in Markdown.
    pub fn run(&self, progress: &dyn Progress, notes: Notes) -> Result<String> {
        check(self.epochs, self.shards)?;
        let base = TrainSettings::new(self.epochs, self.split.seed);
        let split = self.split.read(&base.pipeline, progress, notes)?;
        notes(Note::Info(format!(
            "shards: {} shards, {} epochs, {} training and {} test documents",
            self.shards,
            self.epochs,
            split.train.len(),
            split.test.len()
        )));
        let shard = |e: &Example| e.split.shard(self.shards);
        let lines = run(
            &base,
            &split.labels,
            &split.train,
            &split.test,
            self.shards,
            &shard,
        )?;
        let header = format!(
            "JMLR 2012 §7.10 (Fig. 6) on {}: {} shards by a hash of each file's path, {} epochs, seed {}; {} training / {} test documents ({} / {}), cwtext's default pipeline and learner (CW-Stdev, KL projection).",
            self.split.name(),
            self.shards,
            self.epochs,
            self.split.seed,
            split.train.len(),
            split.test.len(),
            self.split.train_include,
            self.split.test_include
        );
        Ok(markdown(&lines, &header))
    }
}

/// The epochs in range and at least two shards (one is the single model the shards are
/// compared with).
fn check(epochs: usize, shards: usize) -> Result<()> {
    check_epochs(epochs)?;
    if !(2..=MAX_SHARDS).contains(&shards) {
        return Err(Error::InvalidSetting(format!(
            "shards must be in [2, {MAX_SHARDS}], but is {shards}"
        )));
    }
    Ok(())
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub name: String,
    pub accuracy: f64,
    /// The spread over shards (for the mean of single shards).
    pub sd: Option<f64>,
}

fn merged(shards: &[Model], method: MergeMethod) -> crate::learn::learner::DiagonalLearner {
    let inputs: Vec<_> = shards
        .iter()
        .map(|m| {
            let t = m.learner.weights();
            (t, (0..t.labels()).collect())
        })
        .collect();
    let mut learner = shards[0].learner.clone();
    learner.set_weights(combine(
        &inputs,
        shards[0].learner.weights().labels(),
        method,
    ));
    learner
}

/// Runs the comparison; `shard` assigns each training example to a shard.
pub fn run(
    base: &TrainSettings,
    labels: &[String],
    train: &[Example],
    test: &[Example],
    shards: usize,
    shard: &dyn Fn(&Example) -> usize,
) -> crate::Result<Vec<Line>> {
    check(base.epochs, shards)?;
    let hidden = NoProgress;
    let single = train_examples(train, labels.to_vec(), base, None, shard, &hidden)?;
    let separate = TrainSettings {
        sharding: Sharding { shards, mix: false },
        ..base.clone()
    };
    let models = train_sharded(train, labels, &separate, None, shard, &hidden)?;
    let each: Vec<f64> = models.iter().map(|m| accuracy(&m.learner, test)).collect();
    let (mean, sd) = mean_sd(&each);
    let mixing = TrainSettings {
        sharding: Sharding { shards, mix: true },
        ..base.clone()
    };
    let mixed = train_sharded(train, labels, &mixing, None, shard, &hidden)?;
    Ok(vec![
        Line {
            name: "one model on all the training data".into(),
            accuracy: accuracy(&single.learner, test),
            sd: None,
        },
        Line {
            name: format!("mean of the {shards} shard models"),
            accuracy: mean,
            sd: Some(sd),
        },
        Line {
            name: "uniform average (L2)".into(),
            accuracy: accuracy(&merged(&models, MergeMethod::Average), test),
            sd: None,
        },
        Line {
            name: "KL combination".into(),
            accuracy: accuracy(&merged(&models, MergeMethod::Kl), test),
            sd: None,
        },
        Line {
            name: "KL, mixed after every epoch (iterative parameter mixing)".into(),
            accuracy: accuracy(&merged(&mixed, MergeMethod::Kl), test),
            sd: None,
        },
    ])
}

/// The lines as a Markdown table (accuracy in %).
pub fn markdown(lines: &[Line], header: &str) -> String {
    let mut out = format!("{header}\n\n| model | test accuracy % | sd |\n|---|---|---|\n");
    for l in lines {
        out.push_str(&format!(
            "| {} | {:.2} | {} |\n",
            l.name,
            100.0 * l.accuracy,
            l.sd.map_or("–".into(), |s| format!("{:.2}", 100.0 * s))
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_and_epochs_are_checked_before_the_corpus_is_read() {
        let refused = |shards, epochs, message: &str| {
            let experiment = Experiment {
                split: SplitSpec::new("no-such-corpus"),
                shards,
                epochs,
            };
            let err = experiment
                .run(&NoProgress, &mut |_| {})
                .expect_err("refused")
                .to_string();
            assert!(err.contains(message), "{message:?} not in {err:?}");
        };
        refused(1, 5, "shards must be in [2, 1024], but is 1");
        refused(1025, 5, "shards must be in [2, 1024], but is 1025");
        refused(10, 0, "epochs must be in [1, 1000], but is 0");
        let err = run(&TrainSettings::new(5, 1), &[], &[], &[], 0, &|_| 0)
            .expect_err("no shards")
            .to_string();
        assert!(
            err.contains("shards must be in [2, 1024], but is 0"),
            "{err}"
        );
    }
}
