//! JMLR 2012 §7.10, Fig. 6: n models trained on disjoint parts of the training data, then
//! combined. Reported on the test data: a single model on all the data, the mean of the n shard
//! models, their uniform average ("L2"), their KL combination, and iterative parameter mixing
//! (KL-mixed after every epoch).

use super::epochs::accuracy;
use super::mean_sd;
use crate::jobs::train::{train_examples, train_sharded, Example, Sharding, TrainSettings};
use crate::model::merge::{combine, MergeMethod};
use crate::model::Model;
use crate::progress::NoProgress;

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
