//! Hyper-parameter search: `cwtext tune`.
//!
//! The training files are split by a fixed hash of their path (the same fifth that calibration
//! holds out, [`crate::jobs::corpus::held_out`]): four fifths train, one fifth validates. Nothing else is
//! looked at, so no test data can leak into the choice. A seeded random search tries `budget`
//! settings (the first are the four that `cwtext train` chooses among): feature options (stop
//! words, symbols, stemming, bigrams, value type), the update rule and its parameter (η, AROW's r, SCW's C), the constraint
//! strategy and k. Each trial trains epoch by epoch and stops early when the validation accuracy
//! has not improved for [`PATIENCE`] epochs; its score is the best validation accuracy and the
//! epoch it was reached at. The winner is retrained on all training files for that many epochs,
//! with its probability scale fitted on the same held-out fifth.
//!
//! A [`TuneRequest`] (`cwtext tune`'s flags) is checked once into a [`TunePlan`], which runs the
//! search ([`TunePlan::search`]) and trains the winner ([`TunePlan::train_winner`], through a
//! checked [`TrainPlan`]).

use std::collections::HashMap;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::jobs::corpus::LabelledCorpus;
use crate::jobs::examples::{for_each, ExampleSource, Subset};
use crate::jobs::feature_cache::{CacheSettings, Featurised};
use crate::jobs::plan::TrainPlan;
use crate::jobs::train::{check_epochs, featurize_cached, TrainSettings, Trained, Trainer};
use crate::learn::learner::Learner;
use crate::learn::learner::{ConstraintKind, CwConfig, KBest, RuleKind};
use crate::model::WeightEncoding;
use crate::progress::{NoProgress, Progress};
use crate::text::pipeline::config::FilterConfig;
use crate::text::pipeline::stem::StemLanguage;
use crate::text::pipeline::weighting::ValueKind;
use crate::text::pipeline::{stopwords, PipelineConfig};

/// Epochs without a better validation accuracy before a trial stops.
pub const PATIENCE: usize = 2;

/// A search as a user asks for it (`cwtext tune`'s flags). [`Default`] gives `tune`'s defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneRequest {
    /// How many settings to try.
    pub budget: usize,
    /// The most epochs a trial may train (it stops earlier when validation stops improving).
    pub max_epochs: usize,
    /// Seed of the search and of the per-epoch shuffle.
    pub seed: u64,
    /// Features are hashed into 2^hash_bits buckets.
    pub hash_bits: u8,
    /// Weight precision in the model file.
    pub encoding: WeightEncoding,
}

impl Default for TuneRequest {
    fn default() -> Self {
        TuneRequest {
            budget: 24,
            max_epochs: 10,
            seed: 1,
            hash_bits: PipelineConfig::default().hash_bits,
            encoding: WeightEncoding::F32,
        }
    }
}

/// A search whose settings are checked: only [`TuneRequest::plan`] makes one.
#[derive(Debug, Clone)]
pub struct TunePlan {
    /// What every trial starts from: cwtext's default pipeline and learner, calibrated.
    base: TrainSettings,
    budget: usize,
    /// Where each feature choice's examples are kept (memory up to a budget, then a cache file).
    cache: CacheSettings,
}

impl TuneRequest {
    /// Checks the epochs, the budget and the hash bits, naming the bad value.
    pub fn plan(&self) -> Result<TunePlan> {
        check_epochs(self.max_epochs)?;
        if self.budget == 0 {
            return Err(Error::InvalidSetting(
                "the budget must be at least 1 trial, but is 0".into(),
            ));
        }
        let base = TrainSettings {
            pipeline: PipelineConfig {
                hash_bits: self.hash_bits,
                ..PipelineConfig::default()
            },
            learner: CwConfig::default(),
            epochs: self.max_epochs,
            seed: self.seed,
            encoding: self.encoding,
            calibrate: true,
            sharding: Default::default(),
            choose: Default::default(),
        };
        base.pipeline.validate()?;
        Ok(TunePlan {
            base,
            budget: self.budget,
            cache: CacheSettings::default(),
        })
    }
}

impl TunePlan {
    /// The settings every trial starts from.
    pub fn base(&self) -> &TrainSettings {
        &self.base
    }

    /// How many settings the search tries.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Keeps each feature choice's examples (and the winner's training) where `cache` says:
    /// in memory up to its budget, then in a cache file. The search and the model are the same
    /// either way.
    pub fn with_cache(mut self, cache: CacheSettings) -> Self {
        self.cache = cache;
        self
    }

    /// Runs the search on `corpus`: the trials in parallel, in rounds of `parallel`, calling
    /// `report` after each round with its trials in order.
    pub fn search(
        &self,
        corpus: &LabelledCorpus,
        parallel: usize,
        progress: &dyn Progress,
        report: &mut dyn FnMut(&Trial),
    ) -> Result<Search> {
        search(
            corpus,
            &self.base,
            self.budget,
            &self.cache,
            parallel,
            progress,
            report,
        )
    }

    /// Trains the winner of `search` (a search of this plan on `corpus`) on every document of
    /// `corpus`, for its best epoch count, with its probability scale fitted on the held-out
    /// fifth: a [`TrainPlan`] from the winner's settings, checked as every plan is.
    pub fn train_winner(
        &self,
        corpus: &LabelledCorpus,
        search: &Search,
        progress: &dyn Progress,
    ) -> Result<Trained> {
        let plan = TrainPlan::from_settings(winning_settings(search, &self.base)?)?
            .with_cache(self.cache.clone());
        Ok(plan.train(corpus, None, progress, &mut |_| {})?.trained)
    }
}

/// The feature options a trial picks.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct FeatureChoice {
    pub stopwords: bool,
    /// Punctuation and symbols as tokens beside the words (`train`'s default).
    pub symbols: bool,
    pub stem: bool,
    pub ngrams: usize,
    pub values: ValueKind,
}

/// One point of the search space.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    pub features: FeatureChoice,
    pub learner: CwConfig,
}

/// What a trial found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trial {
    pub index: usize,
    pub candidate: Candidate,
    pub validation_accuracy: f64,
    pub best_epoch: usize,
    pub seconds: f64,
    /// Per validation document, whether the best epoch's model got it right.
    #[serde(skip)]
    pub right: Vec<bool>,
}

impl Candidate {
    /// What plain `cwtext train` chooses among: English stop words or none, its η or
    /// [`crate::jobs::train::ALTERNATIVE_ETA`], with symbols, bigrams and log-tf values.
    pub fn train_choices(base: &TrainSettings) -> Vec<Self> {
        let mut etas = vec![base.learner.eta];
        if base.learner.eta != crate::jobs::train::ALTERNATIVE_ETA {
            etas.push(crate::jobs::train::ALTERNATIVE_ETA);
        }
        etas.iter()
            .flat_map(|&eta| {
                [true, false].map(|stopwords| Candidate {
                    features: FeatureChoice {
                        stopwords,
                        symbols: true,
                        stem: false,
                        ngrams: 2,
                        values: ValueKind::LogTf,
                    },
                    learner: CwConfig {
                        eta,
                        ..base.learner.clone()
                    },
                })
            })
            .collect()
    }

    /// A random point of the search space.
    pub fn random(rng: &mut ChaCha8Rng, base: &TrainSettings) -> Self {
        let pick = |rng: &mut ChaCha8Rng, xs: &[f64]| *xs.choose(rng).expect("non-empty");
        let rule = *[
            RuleKind::Stdev,
            RuleKind::Var,
            RuleKind::Arow,
            RuleKind::Scw1,
        ]
        .choose(rng)
        .expect("non-empty");
        let (constraints, k) = match rng.gen_range(0..3) {
            0 => (ConstraintKind::Single, KBest::N(1)),
            1 => (ConstraintKind::Sequential, KBest::N(3)),
            _ => (ConstraintKind::Sequential, KBest::N(5)),
        };
        Candidate {
            features: FeatureChoice {
                stopwords: rng.gen_bool(0.5),
                symbols: rng.gen_bool(0.7),
                stem: rng.gen_bool(0.3),
                ngrams: if rng.gen_bool(0.75) { 2 } else { 1 },
                values: *[ValueKind::Binary, ValueKind::Tf, ValueKind::LogTf]
                    .choose(rng)
                    .expect("non-empty"),
            },
            learner: CwConfig {
                rule,
                constraints,
                k,
                eta: pick(rng, &[0.6, 0.7, 0.8, 0.9, 0.95, 0.99]),
                r: pick(rng, &[0.1, 0.3, 1.0, 3.0]),
                c: pick(rng, &[0.1, 0.3, 1.0]),
                ..base.learner.clone()
            },
        }
    }

    /// The pipeline of this candidate, from the base pipeline.
    pub fn pipeline(&self, base: &PipelineConfig) -> Result<PipelineConfig> {
        let mut filters: Vec<FilterConfig> = base
            .filters
            .iter()
            .filter(|f| {
                !matches!(
                    f,
                    FilterConfig::StopWords { .. } | FilterConfig::Stem { .. }
                )
            })
            .cloned()
            .collect();
        if self.features.stopwords {
            filters.push(FilterConfig::StopWords {
                name: "english".into(),
                words: stopwords::load("english")?,
            });
        }
        if self.features.stem {
            filters.push(FilterConfig::Stem {
                language: StemLanguage::English,
            });
        }
        let mut pipeline = base.clone();
        pipeline.filters = filters;
        pipeline.max_ngram = self.features.ngrams;
        pipeline.symbols = self.features.symbols;
        pipeline.values.kind = self.features.values;
        Ok(pipeline)
    }

    /// One line for people.
    pub fn describe(&self) -> String {
        let l = &self.learner;
        let rule = format!("{:?}", l.rule).to_lowercase();
        let parameter = match l.rule {
            RuleKind::Arow => format!("r={}", l.r),
            RuleKind::Scw1 => format!("eta={} C={}", l.eta, l.c),
            _ => format!("eta={}", l.eta),
        };
        let f = &self.features;
        format!(
            "{rule} {parameter} {}{} | stopwords={} symbols={} stem={} ngrams={} values={}",
            format!("{:?}", l.constraints).to_lowercase(),
            if l.constraints == ConstraintKind::Single {
                String::new()
            } else {
                format!(" k={}", l.k)
            },
            if f.stopwords { "english" } else { "none" },
            if f.symbols { "yes" } else { "no" },
            if f.stem { "english" } else { "none" },
            f.ngrams,
            f.values.name()
        )
    }
}

/// Trains one candidate on `train` with early stopping on `validation` (in memory or in a
/// cache file: the same trial either way).
fn run_trial<S: ExampleSource + ?Sized>(
    index: usize,
    candidate: &Candidate,
    settings: &TrainSettings,
    labels: usize,
    train: &S,
    validation: &S,
) -> Result<Trial> {
    let start = std::time::Instant::now();
    let mut trainer = Trainer::new(settings, labels)?;
    let hidden = NoProgress;
    let (mut best, mut best_epoch, mut best_right) = (-1.0, 0, Vec::new());
    for epoch in 1..=settings.epochs {
        trainer.epoch_over(train, &hidden)?;
        let learner = trainer.predictor();
        let mut right = Vec::with_capacity(validation.len());
        for_each(validation, |_, e| {
            right.push(crate::learn::learner::argmax(&learner.scores(&e.x)) == e.label)
        })?;
        drop(learner);
        let a = right.iter().filter(|&&r| r).count() as f64 / validation.len().max(1) as f64;
        if a > best {
            (best, best_epoch, best_right) = (a, epoch, right);
        } else if epoch - best_epoch >= PATIENCE {
            break;
        }
    }
    Ok(Trial {
        index,
        candidate: candidate.clone(),
        validation_accuracy: best,
        best_epoch,
        seconds: start.elapsed().as_secs_f64(),
        right: best_right,
    })
}

/// The outcome of a search.
#[derive(Debug, Clone, Serialize)]
pub struct Search {
    pub trials: Vec<Trial>,
    /// Index into `trials` of the winner (see `choose`: train's pick unless a trial is clearly
    /// more accurate).
    pub best: usize,
    pub training_documents: usize,
    pub validation_documents: usize,
}

/// Runs `budget` trials (in parallel, in rounds of `parallel`), calling `report` after each round
/// with its trials in order.
#[allow(clippy::too_many_arguments)]
fn search(
    corpus: &LabelledCorpus,
    base: &TrainSettings,
    budget: usize,
    cache_settings: &CacheSettings,
    parallel: usize,
    progress: &dyn Progress,
    report: &mut dyn FnMut(&Trial),
) -> Result<Search> {
    if budget == 0 {
        return Err(Error::InvalidSetting(
            "the budget must be at least 1 trial, but is 0".into(),
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(base.seed);
    let first = Candidate::train_choices(base);
    let first_count = first.len().min(budget);
    let random = budget.saturating_sub(first.len());
    let candidates: Vec<Candidate> = first
        .into_iter()
        .take(budget)
        .chain((0..random).map(|_| Candidate::random(&mut rng, base)))
        .collect();
    // Featurise once per distinct feature choice (each in memory up to the budget, then in a
    // cache file); each trial splits it by the examples' held-out bit.
    let mut cache: HashMap<FeatureChoice, Featurised> = HashMap::new();
    let labels: Vec<usize> = (0..corpus.labels.len()).collect();
    let mut sizes = (0, 0);
    let mut trials = Vec::with_capacity(budget);
    progress.set_length(budget as u64);
    for round in candidates.chunks(parallel.max(1)) {
        for c in round {
            if !cache.contains_key(&c.features) {
                let pipeline = c.pipeline(&base.pipeline)?;
                let (examples, _) = featurize_cached(
                    corpus,
                    std::slice::from_ref(&pipeline),
                    &labels,
                    cache_settings,
                    &NoProgress,
                    &mut |_| {},
                )?
                .pop()
                .expect("one pipeline");
                let (train, validation) = Subset::split(&examples, &|e| e.split.held_out)?;
                if train.is_empty() || validation.is_empty() {
                    return Err(Error::Corpus {
                        path: corpus.root.clone(),
                        message: format!(
                            "too few documents to tune: {} to train on and {} to validate on",
                            train.len(),
                            validation.len()
                        ),
                    });
                }
                sizes = (train.len(), validation.len());
                drop((train, validation));
                cache.insert(c.features.clone(), examples);
            }
        }
        let first = trials.len();
        let done: Vec<Result<Trial>> = round
            .par_iter()
            .enumerate()
            .map(|(i, c)| {
                let settings = TrainSettings {
                    pipeline: c.pipeline(&base.pipeline)?,
                    learner: c.learner.clone(),
                    ..base.clone()
                };
                let (train, validation) =
                    Subset::split(&cache[&c.features], &|e| e.split.held_out)?;
                let trial = run_trial(
                    first + i,
                    c,
                    &settings,
                    corpus.labels.len(),
                    &train,
                    &validation,
                );
                progress.inc(1);
                trial
            })
            .collect();
        for trial in done {
            let trial = trial?;
            report(&trial);
            trials.push(trial);
        }
        forget_unneeded_answers(&mut trials, first_count);
    }
    let best = choose(&trials, first_count);
    Ok(Search {
        trials,
        best,
        training_documents: sizes.0,
        validation_documents: sizes.1,
    })
}

/// Drops the per-document answers that [`choose`] will never read: it compares train's choices
/// (the first `choices` trials) with each other and the most accurate trial with the pick, so
/// only those and the most accurate so far are kept (the earliest on ties, as `choose` takes
/// it). Without this, tune held a byte per validation document for every trial: 48 MB for 24
/// trials at 10 million documents.
fn forget_unneeded_answers(trials: &mut [Trial], choices: usize) {
    let best = most_accurate(trials, 0..trials.len());
    for (i, t) in trials.iter_mut().enumerate() {
        if i >= choices && i != best {
            t.right = Vec::new();
        }
    }
}

/// The trial in `range` with the highest validation accuracy, the earliest on ties.
fn most_accurate(trials: &[Trial], range: std::ops::Range<usize>) -> usize {
    range.clone().fold(range.start, |b, i| {
        if trials[i].validation_accuracy > trials[b].validation_accuracy {
            i
        } else {
            b
        }
    })
}

/// The winning trial. The first `choices` trials are what plain `train` chooses among, and it
/// keeps the first (its base) unless another is better by more than a standard error of the
/// paired difference ([`crate::jobs::train::clearly_better`]); the search's most accurate trial then
/// replaces train's pick only on the same condition. Without it, `tune` ended below plain
/// `train` on two of seven dev corpora (movie sentences 0.781 against 0.787, questions 0.854
/// against 0.860): among 24 trials the most accurate on the validation fifth is often ahead by
/// noise.
fn choose(trials: &[Trial], choices: usize) -> usize {
    use crate::jobs::train::clearly_better;
    let mut pick = 0;
    if choices > 1 {
        let best = most_accurate(trials, 0..choices);
        if clearly_better(&trials[best].right, &trials[0].right) {
            pick = best;
        }
    }
    let best = most_accurate(trials, 0..trials.len());
    if clearly_better(&trials[best].right, &trials[pick].right) {
        best
    } else {
        pick
    }
}

/// The settings to retrain the winner with: its features and learner, its best epoch count.
fn winning_settings(search: &Search, base: &TrainSettings) -> Result<TrainSettings> {
    let trial = search.trials.get(search.best).ok_or_else(|| {
        Error::InvalidSetting(format!(
            "the search's best trial must be one of its {} trials, but is index {}",
            search.trials.len(),
            search.best
        ))
    })?;
    Ok(TrainSettings {
        pipeline: trial.candidate.pipeline(&base.pipeline)?,
        learner: trial.candidate.learner.clone(),
        epochs: trial.best_epoch.max(1),
        calibrate: true,
        ..base.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> TrainSettings {
        TrainSettings {
            calibrate: true,
            ..TrainSettings::new(10, 1)
        }
    }

    /// The request's plan must be refused with `message` in the error.
    fn refused(request: TuneRequest, message: &str) {
        let err = request.plan().expect_err("refused").to_string();
        assert!(err.starts_with("invalid setting: "), "{err}");
        assert!(err.contains(message), "{message:?} not in {err:?}");
    }

    #[test]
    fn a_tune_request_names_its_bad_values() {
        let plan = TuneRequest::default().plan().unwrap();
        assert_eq!(plan.budget(), 24);
        assert_eq!(plan.base().epochs, 10);
        assert!(plan.base().calibrate);
        refused(
            TuneRequest {
                budget: 0,
                ..TuneRequest::default()
            },
            "the budget must be at least 1 trial, but is 0",
        );
        refused(
            TuneRequest {
                max_epochs: 0,
                ..TuneRequest::default()
            },
            "epochs must be in [1, 1000], but is 0",
        );
        refused(
            TuneRequest {
                hash_bits: 12,
                ..TuneRequest::default()
            },
            "hash bits must be in [16, 26], but is 12",
        );
    }

    #[test]
    fn the_winner_must_be_one_of_the_trials() {
        let plan = TuneRequest::default().plan().unwrap();
        let corpus = LabelledCorpus::default();
        let search = Search {
            trials: Vec::new(),
            best: 3,
            training_documents: 0,
            validation_documents: 0,
        };
        let err = plan
            .train_winner(&corpus, &search, &NoProgress)
            .expect_err("no trial 3")
            .to_string();
        assert!(
            err.contains("the search's best trial must be one of its 0 trials, but is index 3"),
            "{err}"
        );
    }

    #[test]
    fn a_trial_must_be_clearly_better_to_replace_trains_pick() {
        let base = base();
        let trial = |index: usize, wrong: &[usize]| {
            let right: Vec<bool> = (0..100).map(|i| !wrong.contains(&i)).collect();
            Trial {
                index,
                candidate: Candidate::random(&mut ChaCha8Rng::seed_from_u64(1), &base),
                validation_accuracy: right.iter().filter(|&&r| r).count() as f64 / 100.0,
                best_epoch: 1,
                seconds: 0.0,
                right,
            }
        };
        // Train's four choices: the base misses 10; trial 1 fixes 6 of them (clearly better).
        let choices = [
            trial(0, &(0..10).collect::<Vec<_>>()),
            trial(1, &[6, 7, 8, 9]),
            trial(2, &(0..9).collect::<Vec<_>>()),
            trial(3, &(0..12).collect::<Vec<_>>()),
        ];
        // A random trial one document ahead of train's pick (2 gained, 1 lost; 1 < √3): train's
        // pick stays.
        let mut trials = choices.to_vec();
        trials.push(trial(4, &[8, 9, 20]));
        assert_eq!(choose(&trials, 4), 1);
        // One that gets all right, 4 more than the pick with no losses: replaces it (4 > √4).
        trials.push(trial(5, &[]));
        assert_eq!(choose(&trials, 4), 5);

        // Only the answers choose reads are kept between rounds, and it chooses the same.
        let mut kept = choices.to_vec();
        kept.extend([trial(4, &[8, 9, 20]), trial(5, &[]), trial(6, &[1, 2])]);
        forget_unneeded_answers(&mut kept, 4);
        let held: Vec<usize> = (0..kept.len())
            .filter(|&i| !kept[i].right.is_empty())
            .collect();
        assert_eq!(held, [0, 1, 2, 3, 5]);
        assert_eq!(choose(&kept, 4), 5);
    }

    #[test]
    fn every_random_candidate_is_valid_and_the_first_are_trains_choices() {
        let mut base = base();
        base.pipeline.symbols = true;
        base.choose = crate::jobs::train::Choose {
            stopwords: true,
            eta: true,
        };
        let train: Vec<(PipelineConfig, f64)> = base
            .candidates()
            .unwrap()
            .into_iter()
            .map(|c| (c.pipeline, c.learner.eta))
            .collect();
        let tune: Vec<(PipelineConfig, f64)> = Candidate::train_choices(&base)
            .iter()
            .map(|c| (c.pipeline(&base.pipeline).unwrap(), c.learner.eta))
            .collect();
        assert_eq!(train.len(), 4);
        assert_eq!(tune.len(), 4);
        for t in &train {
            assert!(
                tune.contains(t),
                "tune's first trials are what `cwtext train` chooses among"
            );
        }
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..200 {
            let c = Candidate::random(&mut rng, &base);
            c.learner.clone().validate().unwrap();
            c.pipeline(&base.pipeline).unwrap().validate().unwrap();
            assert!(!c.describe().is_empty());
        }
    }
}
