//! The online learner over featurised examples: the settings of a training run, the
//! [`Trainer`] that runs epochs (each reshuffled from the seed), training in shards, and the
//! model a finished trainer makes. [`crate::jobs::train`] builds on it (the choice of settings,
//! calibration, the corpus); [`crate::jobs::calibrate`] fits the probability scale.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::error::{Error, Result};
pub use crate::jobs::examples::Example;
use crate::jobs::examples::{for_each, visit, ExampleSource, Subset};
use crate::jobs::permutation::Permutation;
use crate::learn::learner::{CwConfig, DiagonalLearner, Learner, WeightPrior};
use crate::learn::prior::DocumentFrequencies;
use crate::model::{LearnerConfig, Model, ModelHeader, TrainingStats, WeightEncoding};
use crate::progress::Progress;
use crate::text::pipeline::PipelineConfig;

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
    /// Which settings `train` chooses itself on the held-out fifth ([`Choose`]).
    pub choose: Choose,
    /// How long the corpus's documents are, when the rule for character n-grams looked
    /// ([`crate::text::length`]); recorded in the model.
    pub text_length: Option<crate::text::length::TextLength>,
}

/// The settings `train` chooses from the training data when the user did not set them: each
/// free setting has a few values, and every combination is trained on four fifths of the
/// documents and scored on the held-out fifth (see [`crate::jobs::plan::TrainPlan::train`]). The first combination is
/// the base settings, which win ties.
///
/// Why these two: on held-out corpora of other task types (questions by answer type, tweets,
/// product and movie reviews, fortunes, mail folders, news) the stop-word list decides up to 17
/// points (it deletes *what*, *who*, *not*, the words that decide those tasks, but helps topic
/// classification of long posts by 1 point), and the idf prior moves short reviews, tweets
/// and fortunes up by 0.5–2 points and mail and some tweets down by 0.2–1.5
/// (`benches/results/idf-prior-2026-11-24.md`). η was the second choice before (0.99 or 0.9);
/// 0.9 ([`crate::jobs::train::TRAIN_ETA`]) was at least as accurate on 44 of 60 corpus and
/// setting pairs, so it is fixed and the prior chosen instead, at the same cost. Other settings
/// moved accuracy by less than the noise of a held-out fifth.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Choose {
    /// A stop-word list, or none: the settings' list (English by default, the corpus
    /// language's for long texts, [`crate::jobs::train::list_to_try`]) against none.
    pub stopwords: bool,
    /// Each weight's prior variance: flat, or scaled by its feature's rarity
    /// ([`crate::learn::learner::WeightPrior`]).
    pub prior: bool,
    /// The label-frequency correction of the scores, γ ([`crate::learn::label_shift`]), chosen
    /// on the held-out fifth after the other settings.
    pub label_shift: bool,
    /// Character n-grams beside the words, these, when the corpus is of short texts
    /// ([`crate::text::length`]: a rule on a sample of the documents, not a trial on the
    /// held-out fifth); `None`: the pipeline's as it is.
    pub chars: Option<crate::text::pipeline::chargrams::CharNgrams>,
    /// The soft rule beside CW: the chosen settings with SCW-I
    /// ([`crate::jobs::train::soft_rule`]), trained beside the winner's later epochs on the four
    /// fifths and taken only when clearly more accurate than it on the held-out fifth after the
    /// run's epochs ([`crate::jobs::train::soft_rule_trial`]).
    pub soft_rule: bool,
    /// Every header field whole beside the stable rule: the same candidates again with
    /// [`FieldRule::EveryFieldWhole`](crate::text::pipeline::config::FieldRule), taken only
    /// when more accurate than the best stable one on the held-out fifth by three standard
    /// errors ([`crate::jobs::train::EVERY_FIELD_MARGIN`]). Set for mail
    /// only ([`crate::text::length::TextLength::is_mail`]).
    pub every_field: bool,
    /// The hash bits, by a rule on the corpus's words and labels
    /// ([`crate::jobs::buckets::chosen_hash_bits`]: more buckets where labels are few and words
    /// many, not for mail), not a trial on the held-out fifth; `false`: the pipeline's.
    pub hash_bits: bool,
    /// The chosen settings again with lighter n-grams
    /// ([`crate::jobs::train::LIGHTER_NGRAMS`]), compared on the held-out fifth after the run's
    /// epochs and taken when more accurate. Set for long texts of small corpora that are not
    /// mail only ([`crate::text::length::TextLength::tries_lighter_ngrams`]).
    pub ngram_weight: bool,
    /// The longest n-gram, by a rule on a sample of the documents: n-grams up to
    /// [`UNSPACED_NGRAMS`](crate::text::length::UNSPACED_NGRAMS) for text written without spaces
    /// between its words ([`crate::text::length::TextLength::is_unspaced`]); `false`: the
    /// pipeline's.
    pub unspaced_ngrams: bool,
    /// The elided articles of the sampled documents' language taken off words
    /// ([`crate::text::pipeline::elisions`]: French *l'*, *qu'*, Italian *dell'*), by a rule on
    /// a sample of the documents, not a trial on the held-out fifth; `false`: the pipeline's.
    pub elisions: bool,
}

impl TrainSettings {
    /// cwtext's default pipeline and [`CwConfig::default`] (η 0.99, flat prior: not what plain
    /// `train` uses, see [`crate::jobs::plan::TrainRequest`]), f32 weights, no calibration, one
    /// shard, nothing chosen.
    pub fn new(epochs: usize, seed: u64) -> Self {
        TrainSettings {
            pipeline: PipelineConfig::default(),
            learner: CwConfig::default(),
            epochs,
            seed,
            encoding: WeightEncoding::F32,
            calibrate: false,
            sharding: Sharding::default(),
            choose: Choose::default(),
            text_length: None,
        }
    }

    /// When the hash bits are to be chosen ([`Choose::hash_bits`]), sets them by the rule
    /// ([`crate::jobs::buckets::chosen_hash_bits`]) for a corpus of `length` and `labels`,
    /// counting these settings' shards, and returns why, for people; `None` when they are not
    /// chosen. `train` and `tune` both choose through this.
    pub fn choose_hash_bits(
        &mut self,
        length: &crate::text::length::TextLength,
        labels: usize,
    ) -> Option<String> {
        if !self.choose.hash_bits {
            return None;
        }
        let (bits, why) =
            crate::jobs::buckets::chosen_hash_bits(length, labels, self.sharding.shards);
        self.pipeline.hash_bits = bits;
        Some(why)
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

/// Training examples [`fill_rehearsal`] averages the feature entries of, at most.
const MEAN_SAMPLE: usize = 4096;

/// Gives a freshly trained `model` its rehearsal memory: up to `capacity` of each label's
/// training `examples` (None: as many as [`crate::learn::rehearsal::chosen_capacity`] gives for
/// the mean number of feature entries of up to [`MEAN_SAMPLE`] evenly spaced examples), offered in the given order, which the corpus
/// fixes, with the model's scores on them as references ([`crate::learn::rehearsal`]). `train`
/// calls it on the final model.
pub fn fill_rehearsal<S: ExampleSource + ?Sized>(
    model: &mut Model,
    examples: &S,
    capacity: Option<usize>,
) -> Result<()> {
    model.rehearsal = None;
    let capacity = match capacity {
        Some(n) => n,
        None => {
            // The mean entries of up to MEAN_SAMPLE evenly spaced examples: a corpus read from
            // a feature cache is not read once more for it.
            let sample = crate::text::length::spread(examples.len(), MEAN_SAMPLE);
            let (mut entries, mut seen) = (0usize, 0usize);
            crate::jobs::examples::visit(examples, sample, |_, e| {
                entries += e.x.nnz();
                seen += 1;
                true
            })?;
            crate::learn::rehearsal::chosen_capacity(
                model.learner.num_labels(),
                entries as f64 / seen.max(1) as f64,
            )
        }
    };
    if capacity > 0 {
        let mut memory =
            crate::learn::rehearsal::Rehearsal::new(capacity, model.learner.num_labels());
        for_each(examples, |_, e| memory.offer(e.label, &e.x, &model.learner))?;
        model.rehearsal = Some(crate::model::KeptDocuments::Parsed(memory));
    }
    Ok(())
}

/// The online learner over featurised examples, one epoch at a time, reshuffled each epoch from
/// the seed. Experiments evaluate between epochs; `train_examples` runs them all.
pub struct Trainer {
    learner: DiagonalLearner,
    /// Draws each epoch's permutation key.
    rng: ChaCha8Rng,
    epoch_accuracy: Vec<f64>,
    /// With the idf prior, from the prior: counts to make before the first update.
    pending_prior: Option<DocumentFrequencies>,
}

impl Trainer {
    /// A learner at the prior for `labels` labels, validated against them.
    pub fn new(settings: &TrainSettings, labels: usize) -> Result<Self> {
        settings.pipeline.validate()?;
        let params = settings.learner.clone().validate()?;
        params.check_labels(labels)?;
        let dimension = settings.pipeline.dimension();
        // The idf prior needs the documents, which the first epoch brings.
        let pending_prior = (params.config().prior == WeightPrior::Idf).then(|| {
            DocumentFrequencies::new(dimension, settings.pipeline.bias.then(|| dimension - 1))
        });
        Ok(Trainer {
            learner: DiagonalLearner::new(params, dimension, labels),
            rng: ChaCha8Rng::seed_from_u64(settings.seed),
            epoch_accuracy: Vec::new(),
            pending_prior,
        })
    }

    /// One pass over `examples` in a fresh random order; returns the online (progressive)
    /// accuracy: predictions made before each update.
    pub fn epoch(&mut self, examples: &[Example], progress: &dyn Progress) -> f64 {
        self.epoch_over(examples, progress)
            .expect("examples in memory are always read")
    }

    /// [`Trainer::epoch`] over any source of examples (in memory or a cache file, the same
    /// order either way); fails only when the source cannot be read. The order is a
    /// pseudorandom permutation of the examples ([`Permutation`], keyed by a number drawn from
    /// the seeded generator each epoch), computed as it goes: no list of indices.
    pub fn epoch_over<S: ExampleSource + ?Sized>(
        &mut self,
        examples: &S,
        progress: &dyn Progress,
    ) -> Result<f64> {
        if let Some(mut counts) = self.pending_prior.take() {
            // A learner from the prior with the idf prior: the documents it is first trained
            // on give the document frequencies (no label is read).
            for_each(examples, |_, e| counts.add(&e.x))?;
            self.learner.scale_prior(&counts.variance_factors());
        }
        let n = examples.len();
        let order = Permutation::new(n, self.rng.next_u64());
        let mut mistakes = 0usize;
        visit(examples, (0..n).map(move |i| order.get(i)), |_, e| {
            mistakes += usize::from(self.learner.learn(&e.x, e.label));
            progress.inc(1);
            true
        })?;
        let accuracy = 1.0 - mistakes as f64 / n.max(1) as f64;
        self.epoch_accuracy.push(accuracy);
        Ok(accuracy)
    }

    /// Continues training `learner` (e.g. a loaded model's), which must already know `labels`
    /// labels.
    pub fn resume(learner: DiagonalLearner, settings: &TrainSettings) -> Self {
        Trainer {
            learner,
            rng: ChaCha8Rng::seed_from_u64(settings.seed),
            epoch_accuracy: Vec::new(),
            pending_prior: None,
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

    /// The learner predictions should use now, borrowed when finishing changes nothing (no
    /// averaging): scoring a candidate then copies no weight table.
    pub fn predictor(&self) -> std::borrow::Cow<'_, DiagonalLearner> {
        if self.learner.is_averaging() {
            std::borrow::Cow::Owned(self.finished_learner())
        } else {
            std::borrow::Cow::Borrowed(&self.learner)
        }
    }

    /// Ends training and wraps the learner in a model with its statistics.
    pub fn into_model(
        self,
        examples: &[Example],
        labels: Vec<String>,
        settings: &TrainSettings,
    ) -> Model {
        self.into_model_over(examples, labels, settings)
            .expect("examples in memory are always read")
    }

    /// [`Trainer::into_model`] over any source of examples (one pass to count labels and
    /// features).
    pub fn into_model_over<S: ExampleSource + ?Sized>(
        mut self,
        examples: &S,
        labels: Vec<String>,
        settings: &TrainSettings,
    ) -> Result<Model> {
        self.learner.finish();
        let dimension = settings.pipeline.dimension();
        let mut label_documents = vec![0; labels.len()];
        let mut used = vec![false; dimension];
        for_each(examples, |_, e| {
            label_documents[e.label] += 1;
            e.x.indices().iter().for_each(|&j| used[j as usize] = true);
        })?;
        let bias = usize::from(settings.pipeline.bias && !examples.is_empty());
        Ok(Model {
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
                calibration: None,
                selection: None,
                label_shift: None,
                text_length: settings.text_length,
                ngram_weight: None,
                soft_rule: None,
                vocabulary_bytes: 0,
                rehearsal_bytes: 0,
            },
            learner: self.learner,
            vocabulary: None,
            file_crc: None,
            rehearsal: None,
        })
    }
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
pub(crate) fn train_examples<S: ExampleSource + ?Sized>(
    examples: &S,
    labels: Vec<String>,
    settings: &TrainSettings,
    start: Option<&Model>,
    shard: &dyn Fn(&Example) -> usize,
    progress: &dyn Progress,
) -> Result<Model> {
    check_epochs(settings.epochs)?;
    if settings.sharding.shards > 1 {
        let shards = train_sharded(examples, &labels, settings, start, shard, progress)?;
        let names: Vec<String> = (1..=shards.len()).map(|i| format!("shard {i}")).collect();
        let mut model =
            crate::model::merge::merge(&shards, &names, crate::model::merge::MergeMethod::Kl)?;
        model.header.training.epoch_accuracy = Vec::new();
        return Ok(model);
    }
    let mut trainer = start_trainer(settings, labels.len(), start)?;
    progress.set_length((examples.len() * settings.epochs) as u64);
    progress.set_position(0);
    for epoch in 0..settings.epochs {
        progress.set_message(&format!("epoch {}/{}", epoch + 1, settings.epochs));
        trainer.epoch_over(examples, progress)?;
    }
    finish_model(trainer, examples, labels, settings, start)
}

/// A trainer from the prior or from a model to continue, with every label of `labels`.
pub(crate) fn start_trainer(
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
pub(crate) fn finish_model<S: ExampleSource + ?Sized>(
    trainer: Trainer,
    examples: &S,
    labels: Vec<String>,
    settings: &TrainSettings,
    start: Option<&Model>,
) -> Result<Model> {
    let mut model = trainer.into_model_over(examples, labels, settings)?;
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
    Ok(model)
}

/// Trains one learner per shard, in parallel threads; returns the shard models. With mixing,
/// after every epoch all shards continue from the KL merge of all of them.
pub(crate) fn train_sharded<S: ExampleSource + ?Sized>(
    examples: &S,
    labels: &[String],
    settings: &TrainSettings,
    start: Option<&Model>,
    shard: &dyn Fn(&Example) -> usize,
    progress: &dyn Progress,
) -> Result<Vec<Model>> {
    let n = settings.sharding.shards;
    // Each shard's examples by a bit per document, not copies.
    let parts = Subset::partition(examples, n, &|e| shard(e) % n)?;
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
        progress.set_message(&format!("epoch {}/{}", epoch + 1, settings.epochs));
        trainers
            .par_iter_mut()
            .zip(&parts)
            .map(|(t, part)| t.epoch_over(part, progress).map(|_| ()))
            .collect::<Result<()>>()?;
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
            let mixed =
                crate::model::merge::combine(&inputs, blocks, crate::model::merge::MergeMethod::Kl);
            trainers
                .iter_mut()
                .for_each(|t| t.learner_mut().set_weights(mixed.clone()));
        }
    }
    trainers
        .into_iter()
        .zip(&parts)
        .map(|(t, part)| finish_model(t, part, labels.to_vec(), settings, start))
        .collect()
}
