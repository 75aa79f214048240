//! Training across processes and machines on timely dataflow (`train --cluster`, cargo feature
//! `cluster`): the distributed form of `train --shards N --mix`.
//!
//! Process p of n (one timely worker each) reads the same corpus but featurises only its shard,
//! the files whose path hashes to p ([`crate::train::shard_of`], the split `--shards` uses), and
//! shuffles with seed + p. After every epoch each process broadcasts its weight table; every
//! process KL-mixes the n tables in process order ([`crate::merge::combine`]) and continues from
//! the mix. After the last epoch each process sends its shard model and process 0 merges them
//! with [`crate::merge::merge`] and writes the file. Every process applies the same f32
//! operations in the same order as the in-process code, so the result equals `train --shards n
//! --mix` bit for bit (a test runs two processes on 127.0.0.1 and compares the bytes).
//! Calibration would need a second distributed pass; `--cluster` trains without it.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use indicatif::ProgressBar;
use timely::dataflow::operators::vec::Broadcast;
use timely::dataflow::operators::{Input, Inspect, Probe};
use timely::dataflow::InputHandle;

use crate::corpus::{scan_labelled, FileFilter};
use crate::error::{Error, Result};
use crate::merge::{combine, merge, MergeMethod};
use crate::model::{Model, WeightEncoding};
use crate::train::{featurize_files, shard_of, Example, TrainSettings, Trainer};

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
/// holds, the others return `None`.
pub fn train(
    cluster: &ClusterConfig,
    dir: &Path,
    filter: &FileFilter,
    settings: &TrainSettings,
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
    let (dir, filter, settings, output) = (
        dir.to_path_buf(),
        filter.clone(),
        settings.clone(),
        output.to_path_buf(),
    );
    let guards = timely::execute_from_args(cluster.timely_args().into_iter(), move |worker| {
        run_worker(worker, &dir, &filter, &settings, &output)
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
    settings: &TrainSettings,
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
    let corpus = scan_labelled(dir, filter)?;
    let mine: Vec<(usize, &PathBuf, usize)> = corpus
        .files
        .iter()
        .enumerate()
        .filter(|(_, (path, _))| shard_of(&corpus.root, path, peers) == index)
        .map(|(i, (path, label))| (i, path, *label))
        .collect();
    let results = featurize_files(&mine, |m| m.1, &settings.pipeline, &ProgressBar::hidden())?;
    let mut part = Vec::with_capacity(mine.len());
    let mut skipped = 0usize;
    for (result, &(file, _, label)) in results.into_iter().zip(&mine) {
        match result {
            Ok(x) => part.push(Example { x, label, file }),
            Err(e) if e.is_skippable() => skipped += 1,
            Err(e) => return Err(e),
        }
    }
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
    let hidden = ProgressBar::hidden();
    for epoch in 0..settings.epochs {
        trainer.epoch(&part, &hidden);
        if epoch + 1 < settings.epochs {
            let table = trainer.learner().weights();
            let bytes: Vec<u8> = table.raw().iter().flat_map(|w| w.to_le_bytes()).collect();
            let all = exchange(epoch as u64, bytes, worker);
            let tables: Vec<_> = all
                .iter()
                .map(|(_, b)| {
                    let data = b
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                        .collect();
                    crate::learner::weights::WeightTable::from_raw(
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
        }
    }
    // The shard model, in f32 for the transfer, plus how many files this process skipped.
    let mut model = trainer.into_model(&part, corpus.labels.clone(), &shard_settings);
    model.header.encoding = WeightEncoding::F32;
    let mut bytes = (skipped as u64).to_le_bytes().to_vec();
    bytes.extend(model.to_bytes());
    let all = exchange(settings.epochs as u64, bytes, worker);
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
    let lock = crate::lock::ModelLock::acquire(output)?;
    merged.save(output)?;
    drop(lock);
    Ok(Some(ClusterOutcome {
        documents: merged.header.training.documents,
        skipped: skipped_total,
    }))
}
