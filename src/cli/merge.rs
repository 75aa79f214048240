//! `cwtext merge A B … -o OUT [--method kl|average]`: one model from models trained on different
//! data (JMLR 2012 §7.10; the mathematics is in `cwtext::model::merge`).

use std::path::PathBuf;

use clap::Args;

use super::common::Ui;
use super::Outcome;
use cwtext::integrations::lock::ModelLock;
use cwtext::model::merge::{learner_difference, merge, MergeMethod};
use cwtext::model::Model;

const EXAMPLES: &str = "\
Examples:
  cwtext merge shard-1.cwm shard-2.cwm shard-3.cwm -o merged.cwm
  cwtext merge a.cwm b.cwm -o merged.cwm --method average

kl: the Gaussian closest to the inputs in summed KL divergence, weight by weight: the
precision-weighted mean, with the precisions averaged. average: the uniform average. The inputs
must share the pipeline (tokeniser, filters, n-grams, hash space); their label sets are united.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct MergeArgs {
    /// The models to merge.
    #[arg(required = true, num_args = 2..)]
    pub models: Vec<PathBuf>,
    /// Where to write the merged model (atomically, under MODEL.lock).
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// How to combine.
    #[arg(long, value_enum, default_value_t = MergeMethod::Kl)]
    pub method: MergeMethod,
}

pub fn run(args: MergeArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    let models: Vec<Model> = args
        .models
        .iter()
        .map(|p| Model::load(p))
        .collect::<Result<_, _>>()?;
    let names: Vec<String> = args
        .models
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let merged = merge(&models, &names, args.method)?;
    if let Some(d) = learner_difference(&models, &names) {
        ui.warn(format!(
            "the models learned with different settings ({d}); the merged model learns on with {}'s",
            names[0]
        ));
    }
    let lock = ModelLock::acquire(&args.output)?;
    merged.save(&args.output)?;
    drop(lock);
    ui.info(format!(
        "merged {} models into {}: {} labels, {} documents",
        models.len(),
        args.output.display(),
        merged.labels().len(),
        merged.header.training.documents
    ));
    Ok(Outcome::Success)
}
