//! Training: read and featurise a labelled corpus once (in parallel, in a fixed order), then run
//! the online learner over it for several epochs, reshuffled each epoch from the seed. Holding the
//! sparse vectors instead of the texts keeps memory small and makes later epochs cheap.

use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::corpus::LabelledCorpus;
use crate::error::{Error, Result};
use crate::features::FeatureVector;
use crate::input::{read_document, InputLimits};
use crate::learner::{CwConfig, DiagonalLearner, Learner};
use crate::model::{LearnerConfig, Model, ModelHeader, TrainingStats, WeightEncoding};
use crate::pipeline::subword::{SubwordSpec, TrainedVocabulary};
use crate::pipeline::{Pipeline, PipelineConfig};

/// The most epochs a run may ask for.
pub const MAX_EPOCHS: usize = 1000;

/// Everything a training run needs besides the data.
#[derive(Debug, Clone)]
pub struct TrainSettings {
    pub pipeline: PipelineConfig,
    pub learner: CwConfig,
    pub epochs: usize,
    pub seed: u64,
    pub encoding: WeightEncoding,
    /// Fit the probability scale on a held-out fifth before the final run on all documents.
    pub calibrate: bool,
    /// Train in shards and merge them (JMLR 2012 §7.10).
    pub sharding: Sharding,
}

impl TrainSettings {
    /// cwtext's default pipeline and learner, f32 weights, no calibration, one shard.
    pub fn new(epochs: usize, seed: u64) -> Self {
        TrainSettings {
            pipeline: PipelineConfig::default(),
            learner: CwConfig::default(),
            epochs,
            seed,
            encoding: WeightEncoding::F32,
            calibrate: false,
            sharding: Sharding::default(),
        }
    }
}

/// Training in shards: `shards` learners on disjoint parts of the data, in parallel threads,
/// merged by KL combination at the end; with `mix`, also after every epoch, each shard then
/// continuing from the merge (iterative parameter mixing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sharding {
    pub shards: usize,
    pub mix: bool,
}

impl Default for Sharding {
    fn default() -> Self {
        Sharding {
            shards: 1,
            mix: false,
        }
    }
}

/// One featurised training document.
#[derive(Debug, Clone)]
pub struct Example {
    pub x: FeatureVector,
    pub label: usize,
    /// The index of its file in the corpus.
    pub file: usize,
}

/// Reads one file and runs the pipeline on it. A document without any word is an error, since
/// nothing can be learned from or said about it.
pub fn featurize_file(pipeline: &mut Pipeline, path: &Path) -> Result<FeatureVector> {
    let doc = read_document(path, pipeline.config().input_limits())?;
    featurize_document(pipeline, &doc, path)
}

/// Runs the pipeline on a parsed document from `path`: an error when it has no word, a warning
/// when it had more tokens than the limit.
pub fn featurize_document(
    pipeline: &mut Pipeline,
    doc: &crate::input::Document,
    path: &Path,
) -> Result<FeatureVector> {
    let x = pipeline.features(doc).ok_or_else(|| Error::EmptyDocument {
        path: path.to_path_buf(),
    })?;
    if pipeline.truncated() {
        log::warn!(
            "{}: more than {} tokens, only the first were used (--max-tokens)",
            path.display(),
            pipeline.config().max_tokens
        );
    }
    Ok(x)
}

/// Featurises files in parallel; results come back in the input order, so the outcome does not
/// depend on the number of threads.
pub fn featurize_files<T: Sync>(
    items: &[T],
    path_of: impl Fn(&T) -> &PathBuf + Sync,
    config: &PipelineConfig,
    progress: &ProgressBar,
) -> Result<Vec<Result<FeatureVector>>> {
    // Validate once up front so that worker threads cannot fail on the configuration.
    Pipeline::new(config)?;
    Ok(items
        .par_iter()
        .map_init(
            || Pipeline::new(config).expect("validated above"),
            |pipeline, item| {
                let result = featurize_file(pipeline, path_of(item));
                progress.inc(1);
                result
            },
        )
        .collect())
}

/// Featurises a labelled corpus; per-file problems are returned as skipped errors.
pub fn featurize_corpus(
    corpus: &LabelledCorpus,
    config: &PipelineConfig,
    progress: &ProgressBar,
) -> Result<(Vec<Example>, Vec<Error>)> {
    progress.set_length(corpus.files.len() as u64);
    progress.set_message("reading");
    let results = featurize_files(&corpus.files, |(p, _)| p, config, progress)?;
    let mut examples = Vec::with_capacity(results.len());
    let mut skipped = Vec::new();
    for (file, (result, (_, label))) in results.into_iter().zip(&corpus.files).enumerate() {
        match result {
            Ok(x) => examples.push(Example {
                x,
                label: *label,
                file,
            }),
            Err(e) if e.is_skippable() => skipped.push(e),
            Err(e) => return Err(e),
        }
    }
    Ok((examples, skipped))
}

/// The online learner over featurised examples, one epoch at a time, reshuffled each epoch from
/// the seed. Experiments evaluate between epochs; [`train_examples`] runs them all.
pub struct Trainer {
    learner: DiagonalLearner,
    rng: ChaCha8Rng,
    order: Vec<usize>,
    epoch_accuracy: Vec<f64>,
}

impl Trainer {
    /// A learner at the prior for `labels` labels, validated against them.
    pub fn new(settings: &TrainSettings, labels: usize) -> Result<Self> {
        settings.pipeline.validate()?;
        let params = settings.learner.clone().validate()?;
        params.check_labels(labels)?;
        Ok(Trainer {
            learner: DiagonalLearner::new(params, settings.pipeline.dimension(), labels),
            rng: ChaCha8Rng::seed_from_u64(settings.seed),
            order: Vec::new(),
            epoch_accuracy: Vec::new(),
        })
    }

    /// One pass over `examples` in a fresh random order; returns the online (progressive)
    /// accuracy: predictions made before each update.
    pub fn epoch(&mut self, examples: &[Example], progress: &ProgressBar) -> f64 {
        if self.order.len() != examples.len() {
            self.order = (0..examples.len()).collect();
        }
        self.order.shuffle(&mut self.rng);
        let mut mistakes = 0usize;
        for &i in &self.order {
            mistakes += usize::from(self.learner.learn(&examples[i].x, examples[i].label));
            progress.inc(1);
        }
        let accuracy = 1.0 - mistakes as f64 / examples.len().max(1) as f64;
        self.epoch_accuracy.push(accuracy);
        accuracy
    }

    /// Continues training `learner` (e.g. a loaded model's), which must already know `labels`
    /// labels.
    pub fn resume(learner: DiagonalLearner, settings: &TrainSettings) -> Self {
        Trainer {
            learner,
            rng: ChaCha8Rng::seed_from_u64(settings.seed),
            order: Vec::new(),
            epoch_accuracy: Vec::new(),
        }
    }

    /// The learner as it is now (averaging, if any, not yet applied).
    pub fn learner(&self) -> &DiagonalLearner {
        &self.learner
    }

    pub fn learner_mut(&mut self) -> &mut DiagonalLearner {
        &mut self.learner
    }

    /// The learner that predictions should use now: averaged when averaging.
    pub fn finished_learner(&self) -> DiagonalLearner {
        let mut learner = self.learner.clone();
        learner.finish();
        learner
    }

    /// Ends training and wraps the learner in a model with its statistics.
    pub fn into_model(
        mut self,
        examples: &[Example],
        labels: Vec<String>,
        settings: &TrainSettings,
    ) -> Model {
        self.learner.finish();
        let dimension = settings.pipeline.dimension();
        let mut label_documents = vec![0; labels.len()];
        let mut used = vec![false; dimension];
        for e in examples {
            label_documents[e.label] += 1;
            e.x.indices().iter().for_each(|&j| used[j as usize] = true);
        }
        let bias = usize::from(settings.pipeline.bias && !examples.is_empty());
        Model {
            header: ModelHeader {
                cwtext_version: env!("CARGO_PKG_VERSION").to_string(),
                pipeline: settings.pipeline.clone(),
                labels,
                learner: LearnerConfig::Cw(settings.learner.clone()),
                training: TrainingStats {
                    documents: examples.len(),
                    label_documents,
                    distinct_features: used.iter().filter(|&&u| u).count() - bias,
                    epochs: self.epoch_accuracy.len(),
                    epoch_accuracy: self.epoch_accuracy,
                    seed: settings.seed,
                    skipped: 0,
                    exact_cap_hits: self.learner.stats().exact_cap_hits,
                },
                encoding: settings.encoding,
                features: dimension,
                probability_scale: 1.0,
                vocabulary_bytes: 0,
            },
            learner: self.learner,
            vocabulary: None,
            file_crc: None,
        }
    }
}

/// Trains a subword vocabulary on the text of a corpus's documents (Subject and body of mail),
/// read one at a time as the trainer asks for them, so that memory holds word counts, not the
/// corpus. A file that cannot be read is left out here and reported when featurising. Every
/// document counts, the held-out fifth of calibration included: the vocabulary sees no label.
pub fn train_vocabulary(
    corpus: &LabelledCorpus,
    spec: &SubwordSpec,
    limits: InputLimits,
) -> Result<TrainedVocabulary> {
    let texts = corpus
        .files
        .iter()
        .filter_map(move |(path, _)| read_document(path, limits).ok())
        .map(|doc| match doc.headers {
            Some(h) if !h.subject.is_empty() => format!("{}\n{}", h.subject, doc.body),
            _ => doc.body,
        });
    crate::pipeline::subword::train(spec, texts)
}

/// Checks the number of epochs.
pub fn check_epochs(epochs: usize) -> Result<()> {
    if (1..=MAX_EPOCHS).contains(&epochs) {
        Ok(())
    } else {
        Err(Error::InvalidSetting(format!(
            "epochs must be in [1, {MAX_EPOCHS}], but is {epochs}"
        )))
    }
}

/// Trains a model on featurised examples, from `start` (a model to continue, whose labels come
/// first in `labels`) or from the prior; in shards when the settings say so (`shard` gives each
/// example's shard).
pub fn train_examples(
    examples: &[Example],
    labels: Vec<String>,
    settings: &TrainSettings,
    start: Option<&Model>,
    shard: &dyn Fn(&Example) -> usize,
    progress: &ProgressBar,
) -> Result<Model> {
    check_epochs(settings.epochs)?;
    if settings.sharding.shards > 1 {
        let shards = train_sharded(examples, &labels, settings, start, shard, progress)?;
        let names: Vec<String> = (1..=shards.len()).map(|i| format!("shard {i}")).collect();
        let mut model = crate::merge::merge(&shards, &names, crate::merge::MergeMethod::Kl)?;
        model.header.training.epoch_accuracy = Vec::new();
        return Ok(model);
    }
    let mut trainer = start_trainer(settings, labels.len(), start)?;
    progress.set_length((examples.len() * settings.epochs) as u64);
    progress.set_position(0);
    for epoch in 0..settings.epochs {
        progress.set_message(format!("epoch {}/{}", epoch + 1, settings.epochs));
        trainer.epoch(examples, progress);
    }
    Ok(finish_model(trainer, examples, labels, settings, start))
}

/// A trainer from the prior or from a model to continue, with every label of `labels`.
fn start_trainer(
    settings: &TrainSettings,
    labels: usize,
    start: Option<&Model>,
) -> Result<Trainer> {
    match start {
        None => Trainer::new(settings, labels),
        Some(model) => {
            let mut learner = model.learner.clone();
            while learner.num_labels() < labels {
                learner.add_label()?;
            }
            Ok(Trainer::resume(learner, settings))
        }
    }
}

/// The model of a finished trainer; a continued model keeps counting its documents.
fn finish_model(
    trainer: Trainer,
    examples: &[Example],
    labels: Vec<String>,
    settings: &TrainSettings,
    start: Option<&Model>,
) -> Model {
    let mut model = trainer.into_model(examples, labels, settings);
    if let Some(previous) = start {
        let t = &mut model.header.training;
        let p = &previous.header.training;
        t.documents += p.documents;
        t.skipped += p.skipped;
        t.label_documents
            .iter_mut()
            .zip(&p.label_documents)
            .for_each(|(n, m)| *n += m);
        model.header.learner = previous.header.learner.clone();
        model.header.probability_scale = previous.header.probability_scale;
    }
    model
}

/// Trains one learner per shard, in parallel threads; returns the shard models. With mixing,
/// after every epoch all shards continue from the KL merge of all of them.
pub fn train_sharded(
    examples: &[Example],
    labels: &[String],
    settings: &TrainSettings,
    start: Option<&Model>,
    shard: &dyn Fn(&Example) -> usize,
    progress: &ProgressBar,
) -> Result<Vec<Model>> {
    let n = settings.sharding.shards;
    let mut parts: Vec<Vec<Example>> = vec![Vec::new(); n];
    for e in examples {
        parts[shard(e) % n].push(e.clone());
    }
    if let Some(empty) = parts.iter().position(|p| p.is_empty()) {
        return Err(Error::InvalidSetting(format!(
            "shard {} of {n} has no documents: use fewer shards",
            empty + 1
        )));
    }
    let mut trainers: Vec<Trainer> = (0..n)
        .map(|s| {
            let shard_settings = TrainSettings {
                seed: settings.seed.wrapping_add(s as u64),
                ..settings.clone()
            };
            start_trainer(&shard_settings, labels.len(), start)
        })
        .collect::<Result<_>>()?;
    progress.set_length((examples.len() * settings.epochs) as u64);
    progress.set_position(0);
    for epoch in 0..settings.epochs {
        progress.set_message(format!("epoch {}/{}", epoch + 1, settings.epochs));
        trainers.par_iter_mut().zip(&parts).for_each(|(t, part)| {
            t.epoch(part, progress);
        });
        if settings.sharding.mix && epoch + 1 < settings.epochs {
            let inputs: Vec<_> = trainers
                .iter()
                .map(|t| {
                    (
                        t.learner().weights(),
                        (0..t.learner().weights().labels()).collect(),
                    )
                })
                .collect();
            let blocks = trainers[0].learner().weights().labels();
            let mixed = crate::merge::combine(&inputs, blocks, crate::merge::MergeMethod::Kl);
            trainers
                .iter_mut()
                .for_each(|t| t.learner_mut().set_weights(mixed.clone()));
        }
    }
    Ok(trainers
        .into_iter()
        .zip(&parts)
        .map(|(t, part)| finish_model(t, part, labels.to_vec(), settings, start))
        .collect())
}

/// Which of `n` shards a file belongs to: a fixed hash of its path relative to the corpus root
/// (salted so that it is independent of the held-out fifth), the same on every machine.
pub fn shard_of(root: &Path, path: &Path, n: usize) -> usize {
    use std::hash::Hasher;
    let relative = path.strip_prefix(root).unwrap_or(path);
    let mut h = fxhash::FxHasher64::default();
    h.write(b"shard\0");
    h.write(relative.to_string_lossy().as_bytes());
    ((h.finish() >> 32) % n.max(1) as u64) as usize
}

/// Whether a file belongs to the held-out fifth: a fixed hash of its path relative to the corpus
/// root, so the split never depends on the order, the machine or the run.
pub fn held_out(root: &Path, path: &Path) -> bool {
    use std::hash::Hasher;
    let relative = path.strip_prefix(root).unwrap_or(path);
    let mut h = fxhash::FxHasher64::default();
    h.write(relative.to_string_lossy().as_bytes());
    // The top bits, which FxHash mixes well (see pipeline::hash).
    (h.finish() >> 32) % 5 == 0
}

/// What fitting the probability scale found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CalibrationFit {
    pub scale: f64,
    pub held_out: usize,
    pub brier_before: f64,
    pub brier_after: f64,
}

/// The fewest held-out documents the probability scale is fitted on.
pub const MIN_CALIBRATION_DOCUMENTS: usize = 20;

/// Fits the probability scale of `learner` on held-out examples.
pub fn fit_probability_scale(learner: &DiagonalLearner, held_out: &[&Example]) -> CalibrationFit {
    let documents: Vec<_> = held_out
        .iter()
        .map(|e| (learner.score_gaussians(&e.x), e.label))
        .collect();
    let (scale, brier_before, brier_after) = crate::calibration::fit_scale(&documents);
    CalibrationFit {
        scale,
        held_out: held_out.len(),
        brier_before,
        brier_after,
    }
}

/// What [`train_corpus`] produced, and how long its two phases took.
#[derive(Debug)]
pub struct Trained {
    pub model: Model,
    /// The probability scale's fit, when calibrated.
    pub fit: Option<CalibrationFit>,
    /// The files that were skipped, with the reason.
    pub skipped: Vec<Error>,
    /// Reading, parsing and featurising the corpus (once).
    pub featurize_time: std::time::Duration,
    /// Every epoch over the featurised examples (the calibration run's included).
    pub learn_time: std::time::Duration,
    /// Passes over (a part of) the examples: epochs, twice when calibrating.
    pub passes: usize,
}

/// Featurises a corpus and trains on it. With `settings.calibrate`, first trains on four fifths
/// and fits the probability scale on the held-out fifth, then trains on everything and keeps
/// that scale.
pub fn train_corpus(
    corpus: &LabelledCorpus,
    settings: &TrainSettings,
    start: Option<&Model>,
    progress: &ProgressBar,
) -> Result<Trained> {
    let started = std::time::Instant::now();
    let (mut examples, skipped) = featurize_corpus(corpus, &settings.pipeline, progress)?;
    let featurize_time = started.elapsed();
    let mut passes = settings.epochs;
    if examples.is_empty() {
        return Err(Error::InvalidSetting(format!(
            "none of the {} files could be read as a document with words",
            corpus.files.len()
        )));
    }
    // Continuing a model: its labels first, the corpus's new ones after.
    let labels = match start {
        None => corpus.labels.clone(),
        Some(model) => {
            let mut labels = model.labels().to_vec();
            let map: Vec<usize> = corpus
                .labels
                .iter()
                .map(|l| crate::model::index_or_push(&mut labels, l))
                .collect();
            examples.iter_mut().for_each(|e| e.label = map[e.label]);
            labels
        }
    };
    let n = settings.sharding.shards;
    let shard = |e: &Example| shard_of(&corpus.root, &corpus.files[e.file].0, n);
    let fit = if settings.calibrate {
        let (held, kept): (Vec<&Example>, Vec<&Example>) = examples
            .iter()
            .partition(|e| held_out(&corpus.root, &corpus.files[e.file].0));
        if held.len() >= MIN_CALIBRATION_DOCUMENTS && !kept.is_empty() {
            let kept: Vec<Example> = kept.into_iter().cloned().collect();
            let partial = train_examples(&kept, labels.clone(), settings, start, &shard, progress)?;
            passes += settings.epochs;
            Some(fit_probability_scale(&partial.learner, &held))
        } else {
            None
        }
    } else {
        None
    };
    let mut model = train_examples(&examples, labels, settings, start, &shard, progress)?;
    model.header.training.skipped += skipped.len();
    if let Some(fit) = fit {
        model.header.probability_scale = fit.scale;
    }
    Ok(Trained {
        model,
        fit,
        skipped,
        featurize_time,
        learn_time: started.elapsed() - featurize_time,
        passes,
    })
}
