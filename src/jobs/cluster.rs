//! Training across processes and machines on timely dataflow (`train --cluster`, cargo feature
//! `cluster`): the distributed form of `train --shards N --mix`.
//!
//! Process p of n (one timely worker each) reads the same corpus but featurises only its shard,
//! the files whose path hashes to p ([`crate::jobs::corpus::shard_of`], the split `--shards` uses), and
//! shuffles with seed + p. After every epoch each process broadcasts its weight table; every
//! process KL-mixes the n tables in process order ([`crate::model::merge::combine`]) and continues from
//! the mix. After the last epoch each process sends its shard model and process 0 merges them
//! with [`crate::model::merge::merge`] and writes the file. Every process applies the same f32
//! operations in the same order as the in-process code, so the result equals `train --shards n
//! --mix` bit for bit (a test runs two processes on 127.0.0.1 and compares the bytes).
//! With calibration (the default) the processes first train on the four fifths outside the
//! held-out fifth, mixing after every epoch, fit the probability scale on the held-out
//! documents of all processes under that mix, then go on for [`FINISH_EPOCHS`] epochs over all
//! their documents, as `train` does in one process (the bytes then differ from `--shards n
//! --mix`, which calibrates with a separate model; with `--no-calibrate` they are equal).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use timely::dataflow::operators::vec::Broadcast;
use timely::dataflow::operators::{Input, Inspect, Probe};
use timely::dataflow::InputHandle;

use crate::error::{Error, Result};
use crate::jobs::corpus::{scan_corpus, CorpusOptions, FileFilter, FileTable, LabelledCorpus};
use crate::jobs::examples::{for_each, for_each_while, ExampleSource, Subset};
use crate::jobs::feature_cache::CacheSettings;
use crate::jobs::train::{
    featurize_cached, TrainSettings, Trainer, FINISH_EPOCHS, MIN_CALIBRATION_DOCUMENTS,
    SHRINKAGE_SAMPLE,
};
use crate::learn::learner::{Learner, ScoreGaussian};
use crate::model::merge::{combine, merge, MergeMethod};
use crate::model::{Model, WeightEncoding};
use crate::progress::NoProgress;

/// Where this process stands in the cluster (timely's `-n`, `-p`, `-h`).
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    pub processes: usize,
    pub process: usize,
    /// Lines "host:port" in process order; none for a single process.
    pub hostfile: Option<PathBuf>,
}

impl ClusterConfig {
    fn timely_args(&self) -> Vec<String> {
        let mut args = vec![
            "cwtext".to_string(),
            "-w".into(),
            "1".into(),
            "-n".into(),
            self.processes.to_string(),
            "-p".into(),
            self.process.to_string(),
        ];
        if let Some(h) = &self.hostfile {
            args.push("-h".into());
            args.push(h.display().to_string());
        }
        args
    }
}

/// What process 0 wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterOutcome {
    pub documents: usize,
    pub skipped: usize,
}

type Message = (usize, Vec<u8>);

/// Runs this process's part; process 0 writes the merged model to `output` and returns what it
/// holds, the others return `None`. A library caller runs it through
/// [`TrainPlan::train_cluster`](crate::jobs::plan::TrainPlan::train_cluster), whose settings are
/// checked.
pub(crate) fn train(
    cluster: &ClusterConfig,
    dir: &Path,
    filter: &FileFilter,
    options: &CorpusOptions,
    settings: &TrainSettings,
    cache: &CacheSettings,
    output: &Path,
) -> Result<Option<ClusterOutcome>> {
    if cluster.process >= cluster.processes {
        return Err(Error::InvalidSetting(format!(
            "process index must be below the process count {}, but is {}",
            cluster.processes, cluster.process
        )));
    }
    settings.pipeline.validate()?;
    settings.learner.clone().validate()?;
    let (dir, filter, options, settings, cache, output) = (
        dir.to_path_buf(),
        filter.clone(),
        options.clone(),
        settings.clone(),
        cache.clone(),
        output.to_path_buf(),
    );
    let guards = timely::execute_from_args(cluster.timely_args().into_iter(), move |worker| {
        run_worker(worker, &dir, &filter, &options, &settings, &cache, &output)
    })
    .map_err(|e| Error::InvalidSetting(format!("cannot start the cluster: {e}")))?;
    let mut result = None;
    for r in guards.join() {
        let r = r.map_err(|e| Error::InvalidSetting(format!("a cluster worker failed: {e}")))?;
        if let Some(outcome) = r? {
            result = Some(outcome);
        }
    }
    Ok(result)
}

fn run_worker(
    worker: &mut timely::worker::Worker,
    dir: &Path,
    filter: &FileFilter,
    options: &CorpusOptions,
    settings: &TrainSettings,
    cache: &CacheSettings,
    output: &Path,
) -> Result<Option<ClusterOutcome>> {
    let (index, peers) = (worker.index(), worker.peers());
    let received: Rc<RefCell<Vec<Message>>> = Rc::new(RefCell::new(Vec::new()));
    let mut input = InputHandle::new();
    let sink = received.clone();
    let probe = worker.dataflow::<u64, _, _>(|scope| {
        scope
            .input_from(&mut input)
            .container::<Vec<Message>>()
            .broadcast()
            .inspect(move |m: &Message| sink.borrow_mut().push(m.clone()))
            .probe()
            .0
    });
    // Sends this worker's message for `round` and waits for every worker's.
    let mut exchange = |round: u64, bytes: Vec<u8>, worker: &mut timely::worker::Worker| {
        input.send((index, bytes));
        input.advance_to(round + 1);
        while probe.less_than(input.time()) {
            worker.step();
        }
        let mut all = std::mem::take(&mut *received.borrow_mut());
        all.sort_by_key(|m| m.0);
        all
    };

    // This process's shard, featurised in corpus order.
    let corpus = scan_corpus(dir, filter, options)?;
    // This process's shard as a corpus of its own (its part of the file list, on disk past
    // the list's limit), featurised as `train` does: into memory up to the budget, then a
    // cache file.
    let mut files = FileTable::new();
    for entry in corpus.files.iter() {
        let (source, label) = entry?;
        if corpus.split_keys(&source).shard(peers) == index {
            files.push(source, label)?;
        }
    }
    files.seal()?;
    let shard = LabelledCorpus {
        root: corpus.root.clone(),
        layout: corpus.layout,
        labels: corpus.labels.clone(),
        files,
        warnings: Vec::new(),
        notes: Vec::new(),
        groups: corpus.groups.clone(),
    };
    drop(corpus);
    let label_numbers: Vec<usize> = (0..shard.labels.len()).collect();
    let (part, skipped) = featurize_cached(
        &shard,
        std::slice::from_ref(&settings.pipeline),
        &label_numbers,
        cache,
        &NoProgress,
        &mut |_| {},
    )?
    .pop()
    .expect("one pipeline");
    let skipped = skipped.len();
    let corpus = shard;
    if part.is_empty() {
        return Err(Error::InvalidSetting(format!(
            "process {index} of {peers} has no documents in its shard: use fewer processes"
        )));
    }
    let shard_settings = TrainSettings {
        seed: settings.seed.wrapping_add(index as u64),
        ..settings.clone()
    };
    let mut trainer = Trainer::new(&shard_settings, corpus.labels.len())?;
    let hidden = NoProgress;
    let mut round = 0u64;
    // Every process continues from the KL mix of all processes' weight tables.
    type Exchange<'a> = dyn FnMut(u64, Vec<u8>, &mut timely::worker::Worker) -> Vec<Message> + 'a;
    let mix = |exchange: &mut Exchange,
               trainer: &mut Trainer,
               round: &mut u64,
               worker: &mut timely::worker::Worker| {
        let table = trainer.learner().weights();
        let bytes: Vec<u8> = table.raw().iter().flat_map(|w| w.to_le_bytes()).collect();
        let all = exchange(*round, bytes, worker);
        *round += 1;
        let tables: Vec<_> = all
            .iter()
            .map(|(_, b)| {
                let data = b
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                    .collect();
                crate::learn::learner::weights::WeightTable::from_raw(
                    table.features(),
                    table.labels(),
                    data,
                )
                .expect("every process has the same shape")
            })
            .collect();
        let inputs: Vec<_> = tables
            .iter()
            .map(|t| (t, (0..t.labels()).collect()))
            .collect();
        let mixed = combine(&inputs, table.labels(), MergeMethod::Kl);
        trainer.learner_mut().set_weights(mixed);
    };
    // Calibration, as in `train`: the processes first train on the four fifths outside the
    // held-out fifth and mix; the scale is fitted on every process's held-out documents under
    // that mix (process 0 fits, from the score Gaussians the others send); then every process
    // goes on for FINISH_EPOCHS epochs over all its documents.
    let (kept, held) = Subset::split(&part, &|e| e.split.held_out)?;
    let calibrate = settings.calibrate && !kept.is_empty();
    let mut fit = None;
    if calibrate {
        for _ in 0..settings.epochs {
            trainer.epoch_over(&kept, &hidden)?;
            mix(&mut exchange, &mut trainer, &mut round, worker);
        }
        let partial = trainer.learner().clone();
        let mut gaussians: Vec<f64> = Vec::new();
        for_each(&held, |_, e| {
            let g = partial.score_gaussians(&e.x);
            gaussians.push(e.label as f64);
            gaussians.extend(g.into_iter().flat_map(|g| [g.mean, g.variance]));
        })?;
        let bytes: Vec<u8> = gaussians.iter().flat_map(|v| v.to_le_bytes()).collect();
        let all = exchange(round, bytes, worker);
        round += 1;
        let k = corpus.labels.len();
        let documents: Vec<(Vec<ScoreGaussian>, usize)> = all
            .iter()
            .flat_map(|(_, b)| {
                let values: Vec<f64> = b
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect();
                values
                    .chunks_exact(1 + 2 * k)
                    .map(|d| {
                        let g = d[1..]
                            .chunks_exact(2)
                            .map(|p| ScoreGaussian {
                                mean: p[0],
                                variance: p[1],
                            })
                            .collect();
                        (g, d[0] as usize)
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        if documents.len() >= MIN_CALIBRATION_DOCUMENTS {
            let scale = crate::learn::calibration::fit_scale(
                &documents,
                crate::learn::calibration::Objective::Brier,
            );
            // The documents the variance shrinkage is measured on: the first kept ones.
            let mut sample = Vec::new();
            for_each_while(&kept, |_, e| {
                sample.push(e.x.clone());
                sample.len() < SHRINKAGE_SAMPLE
            })?;
            fit = Some((scale, scale.documents, partial, sample));
        }
        let finish = FINISH_EPOCHS.min(settings.epochs);
        for epoch in 0..finish {
            trainer.epoch_over(&part, &hidden)?;
            if epoch + 1 < finish {
                mix(&mut exchange, &mut trainer, &mut round, worker);
            }
        }
    } else {
        for epoch in 0..settings.epochs {
            trainer.epoch_over(&part, &hidden)?;
            if epoch + 1 < settings.epochs {
                mix(&mut exchange, &mut trainer, &mut round, worker);
            }
        }
    }
    // The shard model, in f32 for the transfer, plus how many files this process skipped.
    let mut model = trainer.into_model_over(&part, corpus.labels.clone(), &shard_settings)?;
    model.header.encoding = WeightEncoding::F32;
    let mut bytes = (skipped as u64).to_le_bytes().to_vec();
    bytes.extend(model.to_bytes());
    let all = exchange(round, bytes, worker);
    if index != 0 {
        return Ok(None);
    }
    let mut shards = Vec::with_capacity(all.len());
    let mut skipped_total = 0;
    for (i, b) in &all {
        skipped_total += u64::from_le_bytes(b[..8].try_into().expect("8 bytes")) as usize;
        let mut m = Model::from_bytes(&b[8..], Path::new(&format!("<model of process {i}>")))?;
        m.header.encoding = settings.encoding;
        shards.push(m);
    }
    let names: Vec<String> = (1..=shards.len()).map(|i| format!("shard {i}")).collect();
    let mut merged = merge(&shards, &names, MergeMethod::Kl)?;
    merged.header.training.epoch_accuracy = Vec::new();
    merged.header.training.skipped += skipped_total;
    if let Some((scale, held_out, partial, sample)) = fit {
        // Divided by how much surer the merged model is than the mix it was fitted with, on
        // this process's kept documents (as `train` does on its own).
        let sample = sample.iter();
        let shrinkage = crate::learn::calibration::variance_shrinkage(
            &|x| partial.score_gaussians(x),
            &|x| merged.learner.score_gaussians(x),
            sample,
        );
        merged.header.probability_scale = scale.scale / shrinkage;
        merged.header.calibration = Some(crate::model::CalibrationInfo {
            fitted_by: "train --cluster".into(),
            folds: 0,
            held_out,
            brier_before: scale.before,
            brier_after: scale.after,
            variance_shrinkage: shrinkage,
            corrections_since: 0,
            fitted_labels: merged.header.labels.len(),
        });
    }
    let lock = crate::integrations::lock::ModelLock::acquire(output)?;
    merged.save(output)?;
    drop(lock);
    Ok(Some(ClusterOutcome {
        documents: merged.header.training.documents,
        skipped: skipped_total,
    }))
}
