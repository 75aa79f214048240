//! Training: read and featurise a labelled corpus once (in parallel, in a fixed order), choose
//! the settings on the held-out fifth, calibrate, and train the winner on everything
//! (`train_corpus`, which runs the checked settings of a [`crate::jobs::plan::TrainPlan`]: a
//! library caller trains through [`TrainPlan::train`](crate::jobs::plan::TrainPlan::train)).
//! Holding the sparse vectors instead of the texts keeps memory small and makes later epochs
//! cheap; past a memory budget they are held in a cache file on disk
//! ([`crate::jobs::feature_cache`]), which gives the same model. The epochs themselves are [`crate::jobs::trainer`]'s, the probability scale's fit
//! [`crate::jobs::calibrate`]'s (both re-exported here).

use std::sync::Mutex;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::features::FeatureVector;
use crate::jobs::corpus::{LabelledCorpus, SplitKeys};
use crate::jobs::examples::{for_each, for_each_while, ExampleSource, Subset};
pub use crate::jobs::feature_cache::{CacheReport, CacheSettings};
use crate::jobs::feature_cache::{CacheWriter, DiskCache, Featurised, Store};
use crate::learn::learner::{CwConfig, DiagonalLearner, Learner, RuleKind, WeightPrior};
use crate::learn::tally::Score;
use crate::model::format::EVERY_FIELD_WHOLE;
use crate::model::{Model, NgramWeightTrial, Selection, SelectionTrial, SoftRuleTrial};
use crate::progress::{NoProgress, Progress};
use crate::text::featurize::featurize_document;
use crate::text::input::InputLimits;
use crate::text::language::Stemming;
use crate::text::pipeline::config::{FieldRule, FilterConfig};
use crate::text::pipeline::subword::SubwordSpec;
use crate::text::pipeline::{Pipeline, PipelineConfig};
use crate::text::subword_trainer::TrainedVocabulary;

pub use crate::jobs::calibrate::{
    fit_probability_scale, CalibrationFit, MIN_CALIBRATION_DOCUMENTS, SHRINKAGE_SAMPLE,
};
pub use crate::jobs::trainer::{
    check_epochs, fill_rehearsal, Choose, Example, Sharding, TrainSettings, Trainer, MAX_EPOCHS,
};
use crate::jobs::trainer::{finish_model, start_trainer};
pub(crate) use crate::jobs::trainer::{train_examples, train_sharded};

/// CW's η in `train` when the user gives none: over the 15 corpora of the comparison and the
/// four combinations of stop words and prior, η 0.9 was more accurate than 0.99 on 37 of 60
/// test splits, as accurate on 7, less on 16, +0.44 points on average
/// (`benches/results/idf-prior-2026-11-24.md`).
pub const TRAIN_ETA: f64 = 0.9;

/// The fewest held-out documents the choice is made on; below, the base settings are kept.
pub const MIN_SELECTION_DOCUMENTS: usize = 50;

/// SCW-I's aggressiveness C in [`soft_rule`].
pub const SOFT_RULE_C: f64 = 0.3;
/// SCW-I's confidence η in [`soft_rule`] (the CLI's η for every rule but CW).
pub const SOFT_RULE_ETA: f64 = 0.99;

/// The soft rule that `train` also tries (`Choose::soft_rule`): SCW-I (Wang, Zhao, Hoi, ICML
/// 2012, Prop. 1: CW-Stdev's step α capped at C), C [`SOFT_RULE_C`], η [`SOFT_RULE_ETA`], the
/// flat prior, the chosen settings' constraints and projection. CW meets every example's margin
/// whatever the step, so where labels are noise it learns the noise: a text that cannot tell
/// its label (who of six friends said a seven-word line: online accuracy on the training lines
/// rose to 0.84 while the held-out fifth stayed at 0.26), or a document filed under the wrong
/// label (a tenth of SpamAssassin's training mail misfiled: 0.9632 on the test split with CW,
/// 0.9888 with the soft rule). The capped step does not. CW learns the noise in its later
/// epochs, so the two are compared after the run's epochs, the soft rule taken only when ahead
/// by [`SOFT_RULE_MARGIN`] standard errors (`benches/results/noisy-labels-2026-11-29.md`;
/// compared after 1 epoch among the candidates, until 2026-11-29, it was taken on Friends'
/// lines alone, `benches/results/soft-rule-2026-11-28.md`).
pub fn soft_rule(base: &CwConfig) -> CwConfig {
    CwConfig {
        rule: RuleKind::Scw1,
        c: SOFT_RULE_C,
        eta: SOFT_RULE_ETA,
        prior: WeightPrior::Flat,
        ..base.clone()
    }
}

/// One combination of settings that the choice tries.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// What differs from the base settings, for people ("stop words none, prior idf").
    pub name: String,
    pub pipeline: PipelineConfig,
    pub learner: CwConfig,
}

impl TrainSettings {
    /// The combinations to choose from, the base settings first (only those when nothing is
    /// free).
    pub fn candidates(&self) -> Result<Vec<Candidate>> {
        let mut pipelines = vec![self.pipeline.clone()];
        if self.choose.stopwords {
            let mut other = self.pipeline.clone();
            if self.pipeline.has_stop_words() {
                other.drop_stop_words();
            } else {
                // Before any stemmer, as a request orders them: the list holds words, not stems.
                let at = (other.filters.iter())
                    .position(|f| matches!(f, FilterConfig::Stem { .. }))
                    .unwrap_or(other.filters.len());
                other.filters.insert(
                    at,
                    FilterConfig::StopWords {
                        name: "english".into(),
                        words: crate::text::pipeline::stopwords::load("english")?,
                    },
                );
            }
            pipelines.push(other);
        }
        let mut priors = vec![self.learner.prior];
        if self.choose.prior {
            priors.push(self.learner.prior.other());
        }
        // The same again with every header field whole, after the stable ones (which the
        // earliest-on-ties rule then prefers).
        let rules: &[FieldRule] = if self.choose.every_field {
            &[FieldRule::Stable, FieldRule::EveryFieldWhole]
        } else {
            &[self.pipeline.field_rule]
        };
        let mut out = Vec::new();
        for &rule in rules {
            for prior in &priors {
                for pipeline in &pipelines {
                    let whole = rule != self.pipeline.field_rule;
                    out.push(Candidate {
                        name: format!(
                            "stop words {}, prior {}{}",
                            list_name(pipeline),
                            prior.name(),
                            if whole { EVERY_FIELD_WHOLE } else { "" }
                        ),
                        pipeline: PipelineConfig {
                            field_rule: rule,
                            ..pipeline.clone()
                        },
                        learner: CwConfig {
                            prior: *prior,
                            ..self.learner.clone()
                        },
                    });
                }
            }
        }
        Ok(out)
    }
}

/// The list that the stop-word choice tries beside none, given the language of the sampled
/// documents ([`crate::text::language`]): the built-in list of that language in place of the
/// default English one (`english` where no language with a list is detected); a built-in list
/// that the settings name otherwise (settings made in code); English when the settings have
/// none, as [`TrainSettings::candidates`] adds it. The plan and `tune`'s copy of train's choices
/// both ask here, so that they try the same list.
pub fn list_to_try(pipeline: &PipelineConfig, language: Stemming) -> &'static str {
    match pipeline.stop_words_name() {
        Some("english") => language.stop_words().unwrap_or("english"),
        Some(name) => crate::text::pipeline::stopwords::builtin_name(name).unwrap_or("english"),
        None => "english",
    }
}

/// Takes the elided articles of the sampled documents' language off words in `pipeline`
/// ([`crate::text::pipeline::elisions`]; French, Italian), unless it has elisions of its own:
/// the language and the articles it added, if any. The plan and `tune`'s trials both ask here,
/// so that they take the same ones.
pub fn add_elisions_of_the_language(
    pipeline: &mut PipelineConfig,
    language: Stemming,
) -> Option<(&'static str, Vec<String>)> {
    if pipeline.elisions_name().is_some() {
        return None;
    }
    let name = language.elisions()?;
    let articles = crate::text::pipeline::elisions::load(name).ok()?;
    pipeline.set_elisions(name, articles.clone());
    Some((name, articles))
}

/// A candidate's stop words, as its name gives them: the list's name (a built-in list, or the
/// file a user gave) or none.
fn list_name(pipeline: &PipelineConfig) -> &str {
    pipeline.stop_words_name().unwrap_or("none")
}

/// The documents whose median word count says how long `corpus`'s documents are
/// ([`crate::text::length::TextLength::of`]) and whose text says their language ([`crate::text::language`]):
/// [`SAMPLE_DOCUMENTS`] spread evenly over its file list (the same documents every run), those
/// that can be read (files that cannot be are reported when featurising).
///
/// [`SAMPLE_DOCUMENTS`]: crate::text::length::SAMPLE_DOCUMENTS
pub fn sample_documents(
    corpus: &LabelledCorpus,
    limits: InputLimits,
) -> Vec<crate::text::input::Document> {
    use crate::text::length::{spread, SAMPLE_DOCUMENTS};
    spread(corpus.files.len(), SAMPLE_DOCUMENTS)
        .filter_map(|i| corpus.files.get(i).ok())
        .filter_map(|(source, _)| source.read(limits).ok())
        .collect()
}

/// Featurises a labelled corpus; per-file problems are returned as skipped errors
/// ([`featurize_corpus_many`] with one pipeline).
pub fn featurize_corpus(
    corpus: &LabelledCorpus,
    config: &PipelineConfig,
    progress: &dyn Progress,
) -> Result<(Vec<Example>, Vec<Error>)> {
    let mut one = featurize_corpus_many(corpus, std::slice::from_ref(config), progress)?;
    Ok(one.pop().expect("one result per pipeline"))
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
    // An entry of the file list that cannot be read back stops nothing here: featurising
    // reads the list again and reports it.
    let texts = corpus
        .files
        .iter()
        .filter_map(Result::ok)
        .filter_map(move |(source, _)| source.read(limits).ok())
        .map(|doc| match doc.headers {
            Some(h) if !h.subject.is_empty() => format!("{}\n{}", h.subject, doc.body),
            _ => doc.body,
        });
    crate::text::subword_trainer::train(spec, texts)
}

/// Epochs the candidates of the choice are trained for on the four fifths before they are
/// scored on the held-out fifth (at most the run's epochs); the winner alone then goes on to the
/// run's epochs, so its model is the one a choice at that point would have produced. Measured
/// on the 15 comparison corpora (2026-11-24, choosing stop words × prior at η 0.9), the choice
/// after 1 epoch against after 2: the same on 7; of the 8 that changed, test accuracy rose on 5
/// (20 Newsgroups +0.59 points, election tweets +0.52, Reuters R8 +0.28, questions +0.09,
/// SpamAssassin +0.08), fell on 2 (fortune categories −0.95, Reuters R52 −0.08) and stayed on
/// the man pages: the candidates it separates are within a few held-out documents of each
/// other after either (`benches/results/selection-epochs-2026-11-24.md`).
/// One epoch instead of two cut plain `train`'s wall time on 20 Newsgroups by a fifth (2.71 s
/// → 2.01 s, medians of 5 alternating runs). (An earlier measurement, when η was among the
/// candidates, found the choice after 1 epoch worse on movie-review sentences; with the prior
/// in its place it is the same there.)
pub const SELECTION_EPOCHS: usize = 1;

/// Epochs over every document when the final model continues the four-fifths model of the
/// choice or of calibration (at most the run's epochs): the documents outside the held-out
/// fifth are then seen `epochs + FINISH_EPOCHS` times, those in it `FINISH_EPOCHS` times.
pub const FINISH_EPOCHS: usize = 2;

/// The n-grams' weight (thousandths, [`PipelineConfig::ngram_weight_per_mille`]) that `train`
/// tries beside full weight on long documents of small corpora
/// ([`crate::text::length::TextLength::tries_lighter_ngrams`]): the chosen settings trained
/// again with it for the run's epochs on the four fifths, taken when more accurate on the
/// held-out fifth. Scored after the run's epochs, not after [`SELECTION_EPOCHS`]: after one
/// epoch the two tie (CW's first pass moves the common words' weights alike), and the
/// difference appears once the words' variances have shrunk and a long document's rare
/// bigrams carry the updates. Over five random splits (`benches/results/ngram-weight-2026-11-28.md`):
/// whole movie reviews +0.64 points on the mean; half weight always would cost 20 Newsgroups
/// 0.6 and Amazon review sentences 0.7, which the held-out fifth refused on every split.
pub const LIGHTER_NGRAMS: u16 = 500;

/// Folds of the cross-validation that chooses the stop words of a corpus too small to hold out
/// [`MIN_SELECTION_DOCUMENTS`]: the held-out fifth and the rest split in four by a second hash
/// ([`SplitKeys::fold`](crate::jobs::corpus::SplitKeys::fold)), as `tune` cross-validates.
pub const SELECTION_FOLDS: usize = 5;

/// The corpus's labels (indices into `corpus.labels`) that no pipeline gave a document, among
/// those that are new (a label of the model `start` continues is kept: it has its documents).
fn labels_without_documents(
    featurised: &[Featurised],
    label_map: &[usize],
    labels: usize,
    start: Option<&Model>,
) -> Result<Vec<usize>> {
    let known = start.map_or(0, |m| m.labels().len());
    let mut unread: Vec<usize> = (0..label_map.len())
        .filter(|&i| label_map[i] >= known)
        .collect();
    for examples in featurised {
        if unread.is_empty() {
            break;
        }
        let mut counts = vec![0usize; labels];
        for_each(examples, |_, e| counts[e.label] += 1)?;
        unread.retain(|&i| counts[label_map[i]] == 0);
    }
    Ok(unread)
}

/// [`train_corpus`] on the corpus without the labels `unread` ([`labels_without_documents`]),
/// each named in a warning with the first reason its documents were skipped; those documents'
/// problems (from `skipped`, the first pipeline's) stay among the run's skipped files. Refused
/// when fewer than two labels would remain for a new model. The smaller corpus is featurised
/// without a kept cache: the cache files kept for the whole corpus (`reports`) stay as they
/// are, so that the next run on it reuses them instead of finding them stale.
#[allow(clippy::too_many_arguments)]
fn train_without_labels(
    corpus: &LabelledCorpus,
    unread: &[usize],
    skipped: &[Error],
    reports: &[CacheReport],
    settings: &TrainSettings,
    start: Option<&Model>,
    cache: &CacheSettings,
    progress: &dyn Progress,
    notes: &mut dyn FnMut(String),
) -> Result<Trained> {
    // The unread labels' documents, by name (as their problems name them), with their label.
    let mut label_of: std::collections::HashMap<std::path::PathBuf, usize> = Default::default();
    let mut per_label = vec![0usize; corpus.labels.len()];
    for entry in corpus.files.iter() {
        let (source, label) = entry?;
        if unread.contains(&label) {
            label_of.insert(source.name(), label);
            per_label[label] += 1;
        }
    }
    let label_of_error = |e: &Error| e.skipped_path().and_then(|p| label_of.get(p).copied());
    let theirs: Vec<&Error> = skipped
        .iter()
        .filter(|e| label_of_error(e).is_some())
        .collect();
    let reasons: Vec<String> = unread
        .iter()
        .map(|&i| {
            let example = theirs
                .iter()
                .find(|e| label_of_error(e) == Some(i))
                .map(|e| format!(" (e.g. {e})"))
                .unwrap_or_default();
            format!(
                "label {:?}: none of its {} document(s) could be read as one with words{example}",
                corpus.labels[i], per_label[i]
            )
        })
        .collect();
    let smaller = corpus.without_labels(unread)?;
    if start.is_none() && smaller.labels.len() < 2 {
        return Err(Error::Corpus {
            path: corpus.root.clone(),
            message: format!(
                "{} label(s) with documents that could be read ({}), but at least 2 are needed: {}",
                smaller.labels.len(),
                smaller
                    .labels
                    .iter()
                    .map(|l| format!("{l:?}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                reasons.join("; ")
            ),
        });
    }
    let warnings = reasons.into_iter().map(|r| format!("{r}; label ignored"));
    let uncached = CacheSettings {
        dir: None,
        ..cache.clone()
    };
    let mut trained = train_corpus(&smaller, settings, start, &uncached, progress, notes)?;
    if cache.dir.is_some() {
        trained.cache = reports.to_vec();
    }
    trained
        .skipped
        .extend(theirs.iter().filter_map(|e| e.duplicate()));
    trained.model.header.training.skipped += theirs.len();
    trained.warnings.extend(warnings);
    Ok(trained)
}

/// Whether the choice is made by cross-validation ([`cross_validated_choice`]): too few
/// documents held out to choose on, enough in all.
pub(crate) fn chooses_by_folds(held_out: usize, documents: usize) -> bool {
    held_out < MIN_SELECTION_DOCUMENTS && documents >= MIN_SELECTION_DOCUMENTS
}

/// The choice on a corpus too small to hold out a fifth of [`MIN_SELECTION_DOCUMENTS`]: each
/// candidate (its settings, the examples its pipeline gives and its name) trained for `epochs`
/// on every fold but one and scored on that one, for each of [`SELECTION_FOLDS`] folds, so every
/// document is validated once. Returns the trials (accuracy and macro-F1 over every validated
/// document), how many documents were validated, and per candidate whether each validated
/// document was right ([`FoldScores`]). A fold that leaves nothing to train on or to validate
/// is passed over.
pub(crate) fn cross_validated_choice<S: ExampleSource + Sync + ?Sized>(
    candidates: &[(TrainSettings, &S, String)],
    labels: usize,
    epochs: usize,
    start: Option<&Model>,
) -> Result<FoldScores> {
    let folds: Vec<Vec<Subset<'_, S>>> = candidates
        .iter()
        .map(|(_, examples, _)| {
            Subset::partition(*examples, SELECTION_FOLDS, &|e| {
                e.split.fold(SELECTION_FOLDS)
            })
        })
        .collect::<Result<_>>()?;
    let jobs: Vec<(usize, usize)> = (0..candidates.len())
        .flat_map(|c| (0..SELECTION_FOLDS).map(move |f| (c, f)))
        .collect();
    let hidden = NoProgress;
    // Per job, (predicted, truth) of each validated document.
    let answers: Vec<Vec<(usize, usize)>> = jobs
        .par_iter()
        .map(|&(c, f)| {
            let validation = &folds[c][f];
            let train = validation.complement();
            if train.is_empty() || validation.is_empty() {
                return Ok(Vec::new());
            }
            let mut trainer = start_trainer(&candidates[c].0, labels, start)?;
            for _ in 0..epochs {
                trainer.epoch_over(&train, &hidden)?;
            }
            let learner = trainer.predictor();
            let mut out = Vec::with_capacity(validation.len());
            for_each(validation, |_, e| {
                out.push((
                    crate::learn::learner::argmax(&learner.scores(&e.x)),
                    e.label,
                ));
            })?;
            Ok(out)
        })
        .collect::<Result<_>>()?;
    // The documents the first candidate (the base) validated: the candidates' counts differ by
    // the documents a stop-word list leaves without words, which that pipeline skips.
    let validated = answers[..SELECTION_FOLDS].iter().map(Vec::len).sum();
    let mut trials = Vec::with_capacity(candidates.len());
    let mut rights = Vec::with_capacity(candidates.len());
    for (c, (_, _, name)) in candidates.iter().enumerate() {
        let mut score = Score::new(labels);
        let mut right = Vec::new();
        for answers in &answers[c * SELECTION_FOLDS..(c + 1) * SELECTION_FOLDS] {
            answers.iter().for_each(|&(p, t)| {
                score.add(p, t);
                right.push(p == t);
            });
        }
        rights.push(right);
        let (accuracy, macro_f1) = score.accuracy_and_macro_f1();
        trials.push(SelectionTrial {
            setting: name.clone(),
            accuracy,
            macro_f1,
        });
    }
    Ok(FoldScores {
        trials,
        validated,
        right: rights,
    })
}

/// What [`cross_validated_choice`] found.
pub(crate) struct FoldScores {
    /// Each candidate's accuracy and macro-F1 over every validated document.
    pub trials: Vec<SelectionTrial>,
    /// The documents the first candidate validated.
    pub validated: usize,
    /// Per candidate, whether each document it validated was right (fold by fold, in the order
    /// of the candidate's examples).
    pub right: Vec<Vec<bool>>,
}

/// Accuracy and macro-F1 (over the labels present in the truth or the predictions) of
/// predictions (one label per example) on labelled examples.
pub fn accuracy_and_macro_f1(
    predictions: &[usize],
    examples: &[&Example],
    labels: usize,
) -> (f64, f64) {
    let mut score = Score::new(labels);
    for (e, &predicted) in examples.iter().zip(predictions) {
        score.add(predicted, e.label);
    }
    score.accuracy_and_macro_f1()
}

/// The bytes of a weight table: a mean and a variance (f32 each) per label and bucket.
fn table_bytes(labels: usize, dimension: usize) -> u64 {
    labels as u64 * dimension as u64 * 8
}

/// What training a corpus ([`TrainPlan::train`](crate::jobs::plan::TrainPlan::train))
/// produced, and how long its phases took.
#[derive(Debug)]
pub struct Trained {
    pub model: Model,
    /// The probability scale's fit, when calibrated.
    pub fit: Option<CalibrationFit>,
    /// What the automatic choice tried and chose, when it ran.
    pub selection: Option<Selection>,
    /// Why the choice did not run although settings were free (too few held-out documents).
    pub selection_skipped: Option<String>,
    /// The files that were skipped, with the reason (under the chosen settings).
    pub skipped: Vec<Error>,
    /// Reading, parsing and featurising the corpus (once, for every pipeline tried).
    pub featurize_time: std::time::Duration,
    /// Every epoch over the featurised examples (the candidates' and calibration's included).
    pub learn_time: std::time::Duration,
    /// Passes over (a part of) the examples, all models together.
    pub passes: usize,
    /// When the final model continued the four-fifths model: its epochs on the four fifths and
    /// then on every document.
    pub continued: Option<(usize, usize)>,
    /// What the user should know of the run that is not an error: a label left out because
    /// none of its files could be read.
    pub warnings: Vec<String>,
    /// The feature cache files the examples were read from, one per pipeline kept on disk
    /// (empty when the corpus stayed in memory).
    pub cache: Vec<CacheReport>,
    /// The label-frequency correction's choice, when one was made (γ 0: none chosen).
    pub label_shift: Option<crate::model::LabelShift>,
    /// The lighter n-grams tried after the choice, when they were
    /// ([`crate::model::ModelHeader::ngram_weight`]).
    pub ngram_weight: Option<NgramWeightTrial>,
    /// The soft rule tried after the choice, when it was
    /// ([`crate::model::ModelHeader::soft_rule`]).
    pub soft_rule: Option<SoftRuleTrial>,
    /// The bytes of a weight table, when the choice trained its candidates one at a time
    /// ([`CacheSettings::tables_side_by_side`]).
    pub tables_one_at_a_time: Option<u64>,
}

/// Featurises a corpus and trains on it.
///
/// 1. The corpus is read once and featurised by every distinct pipeline among the candidates
///    ([`TrainSettings::candidates`]), into memory or a cache file on disk ([`CacheSettings`]:
///    both give the same model).
/// 2. With more than one candidate, each is trained on the four fifths outside the held-out
///    fifth ([`held_out`]), in parallel (one at a time when their weight tables together
///    pass [`CacheSettings::tables_side_by_side`]), and scored on the held-out fifth; the most
///    accurate wins (the first on ties).
/// 3. With `settings.calibrate`, the probability scale is fitted on the held-out fifth with the
///    winner's four-fifths model (trained for the choice anyway, or beside the final model
///    when there was no choice), so calibration costs no extra pass in sequence. With fewer
///    than [`MIN_CALIBRATION_DOCUMENTS`] held out (and as many in all, not sharded), it is
///    fitted by cross-validation instead ([`crate::jobs::calibrate::fit_by_folds`]).
/// 4. The winner is trained on every document.
pub(crate) fn train_corpus(
    corpus: &LabelledCorpus,
    settings: &TrainSettings,
    start: Option<&Model>,
    cache: &CacheSettings,
    progress: &dyn Progress,
    notes: &mut dyn FnMut(String),
) -> Result<Trained> {
    let started = std::time::Instant::now();
    let mut candidates = settings.candidates()?;
    let mut pipelines: Vec<PipelineConfig> = Vec::new();
    for c in &candidates {
        if !pipelines.contains(&c.pipeline) {
            pipelines.push(c.pipeline.clone());
        }
    }
    // Continuing a model: its labels first, the corpus's new ones after; the examples carry
    // their label's number among these.
    let (labels, label_map) = match start {
        None => (
            corpus.labels.clone(),
            (0..corpus.labels.len()).collect::<Vec<usize>>(),
        ),
        Some(model) => {
            let mut labels = model.labels().to_vec();
            let map: Vec<usize> = corpus
                .labels
                .iter()
                .map(|l| crate::model::index_or_push(&mut labels, l))
                .collect();
            (labels, map)
        }
    };
    let featurised = featurize_cached(corpus, &pipelines, &label_map, cache, progress, notes)?;
    let featurize_time = started.elapsed();
    let (featurised, mut skipped_of): (Vec<Featurised>, Vec<Vec<Error>>) =
        featurised.into_iter().unzip();
    // A label folder whose every file was skipped (a folder of images, of empty files) would
    // be a label without a document: never learned, yet given a share of every probability,
    // and the label of any text whose words are all unknown. It is left out as an empty
    // folder is (`jobs::corpus`), and the rest trained again from the start. (A corpus with
    // no document at all is refused below.)
    // Only a run that skipped documents can have such a label (empty folders were left out
    // when the corpus was read), so the others pay no pass for it.
    let unread = if skipped_of[0].is_empty() {
        Vec::new()
    } else {
        labels_without_documents(&featurised, &label_map, labels.len(), start)?
    };
    if !unread.is_empty() && featurised.iter().any(|f| !f.is_empty()) {
        let skipped = std::mem::take(&mut skipped_of[0]);
        let reports: Vec<CacheReport> = featurised.iter().filter_map(|f| f.report()).collect();
        // This run's examples are given back before the smaller corpus is featurised.
        drop(featurised);
        crate::jobs::feature_cache::release_freed_memory();
        return train_without_labels(
            corpus, &unread, &skipped, &reports, settings, start, cache, progress, notes,
        );
    }
    let cache_reports: Vec<CacheReport> = featurised.iter().filter_map(|f| f.report()).collect();
    // A pipeline that leaves no document with words (a corpus of stop words under the list)
    // cannot be chosen.
    candidates.retain(|c| {
        let p = pipelines.iter().position(|p| *p == c.pipeline);
        p.is_some_and(|p| !featurised[p].is_empty())
    });
    if candidates.is_empty() {
        // Say why, with the first files skipped (a corpus of binaries or of some format that
        // is not read would otherwise give no clue).
        let skipped = skipped_of.first().map(Vec::as_slice).unwrap_or_default();
        let examples: Vec<String> = skipped.iter().take(3).map(|e| e.to_string()).collect();
        return Err(Error::Corpus {
            path: corpus.root.clone(),
            message: format!(
                "none of the {} files could be read as a document with words{}",
                corpus.files.len(),
                match skipped.len() {
                    0 => String::new(),
                    n => format!(
                        " ({n} could not be read, e.g. {}{})",
                        examples.join("; "),
                        if n < corpus.files.len() {
                            "; the others have no words"
                        } else {
                            ""
                        }
                    ),
                }
            ),
        });
    }
    let n = settings.sharding.shards;
    let shard = |e: &Example| e.split.shard(n);
    let is_held = |e: &Example| e.split.held_out;
    let pipeline_of = |c: &Candidate| {
        pipelines
            .iter()
            .position(|p| *p == c.pipeline)
            .expect("every candidate's pipeline was featurised")
    };
    let examples_of = |c: &Candidate| &featurised[pipeline_of(c)];
    let settings_of = |c: &Candidate| TrainSettings {
        pipeline: c.pipeline.clone(),
        learner: c.learner.clone(),
        ..settings.clone()
    };
    // Each pipeline's four fifths and held-out fifth, by index into its examples.
    type Part<'a> = Subset<'a, Featurised>;
    let parts: Vec<(Part, Part)> = featurised
        .iter()
        .map(|examples| Subset::split(examples, &is_held))
        .collect::<Result<_>>()?;
    let held_count = parts[0].1.len();
    let kept_count = parts[0].0.len();
    let choose = candidates.len() > 1 && held_count >= MIN_SELECTION_DOCUMENTS && kept_count > 0;
    // A continued model is fitted again only on held-out documents of two labels or more: the
    // new documents are often all of one new label, and a fit on them would say nothing of the
    // others (the model keeps its scale).
    let held_labels = || -> Result<usize> {
        let mut seen = std::collections::BTreeSet::new();
        for_each(&parts[0].1, |_, e| {
            seen.insert(e.label);
        })?;
        Ok(seen.len())
    };
    let calibrate = settings.calibrate
        && held_count >= MIN_CALIBRATION_DOCUMENTS
        && kept_count > 0
        && (start.is_none() || held_labels()? >= 2);
    let parts_of = |c: &Candidate| &parts[pipeline_of(c)];
    let hidden = NoProgress;
    let mut passes = 0;
    let sharded = settings.sharding.shards > 1;
    // Too few held out to choose on but enough documents in all: the stop words are chosen by
    // cross-validation instead, the prior kept at the base's (with few documents the prior is
    // most of the model). On small corpora cut from the comparison's (90 to 200 documents) the
    // base list cost questions by answer type 10 to 12 points and SMS spam 7, and no choice
    // this way lost anything (`benches/results/small-corpora-2026-11-27.md`). Mail
    // cross-validates its header fields' rules too ([`cross_validates_field_rules`]).
    let mail = cross_validates_field_rules(settings.text_length);
    let candidate_settings: Vec<TrainSettings> = candidates.iter().map(settings_of).collect();
    let stop_word_choices = small_corpus_candidates(&candidate_settings, mail);
    let cross_validate = !sharded
        && stop_word_choices.len() > 1
        && chooses_by_folds(held_count, held_count + kept_count);
    // A model on the four fifths outside the held-out fifth: a trainer to continue on
    // everything, or (sharded) a merged model.
    enum Partial {
        Trainer(Box<Trainer>),
        Model(Box<Model>),
    }
    // Sharded models cannot be continued: their candidates train every epoch.
    let select_epochs = if sharded {
        settings.epochs
    } else {
        SELECTION_EPOCHS.min(settings.epochs)
    };
    let train_kept = |c: &Candidate, kept: &Part, epochs: usize| -> Result<Partial> {
        let s = settings_of(c);
        if sharded {
            let model = train_examples(kept, labels.clone(), &s, start, &shard, &hidden)?;
            return Ok(Partial::Model(Box::new(model)));
        }
        check_epochs(s.epochs)?;
        let mut trainer = start_trainer(&s, labels.len(), start)?;
        for _ in 0..epochs {
            trainer.epoch_over(kept, &hidden)?;
        }
        Ok(Partial::Trainer(Box::new(trainer)))
    };
    fn predictor_of(p: &Partial) -> std::borrow::Cow<'_, DiagonalLearner> {
        match p {
            Partial::Trainer(t) => t.predictor(),
            Partial::Model(m) => std::borrow::Cow::Borrowed(&m.learner),
        }
    }
    // 2. The choice: every candidate on four fifths, scored on the held-out fifth.
    let (mut selection, mut selection_skipped) = (None, None);
    let mut tables_one_at_a_time = None;
    let mut chosen = 0;
    let mut partial: Option<Partial> = None;
    // The chosen settings with the soft rule, trained beside the winner's later epochs when
    // tried (2c).
    let (mut soft_candidate, mut soft_partial): (Option<Candidate>, Option<Partial>) = (None, None);
    let soft_for = |chosen: usize| {
        let c = &candidates[chosen];
        let table = table_bytes(labels.len(), c.pipeline.dimension());
        soft_rule_candidate(settings, c, held_count, table, cache.tables_side_by_side)
    };
    if candidates.len() > 1 {
        if choose {
            progress.set_message(&format!("choosing among {} settings", candidates.len()));
            // (the trained four fifths, the trial, whether each held-out document was right)
            type Trial = (Option<Partial>, SelectionTrial, Vec<bool>);
            let trial = |c: &Candidate| -> Result<Trial> {
                let (kept, held) = parts_of(c);
                let trained = train_kept(c, kept, select_epochs)?;
                let learner = predictor_of(&trained);
                let mut score = Score::new(labels.len());
                let mut right = Vec::with_capacity(held_count);
                for_each(held, |_, e| {
                    let predicted = crate::learn::learner::argmax(&learner.scores(&e.x));
                    right.push(predicted == e.label);
                    score.add(predicted, e.label);
                })?;
                drop(learner);
                let (accuracy, macro_f1) = score.accuracy_and_macro_f1();
                let trial = SelectionTrial {
                    setting: c.name.clone(),
                    accuracy,
                    macro_f1,
                };
                Ok((Some(trained), trial, right))
            };
            // Side by side, each candidate's table is kept until the winner is known; with
            // many labels those tables are most of the memory (500 labels at 2^18 buckets:
            // 1 GB each), and then the candidates train one at a time and the winner's is
            // trained again: the same model, with one table held instead of one per candidate.
            // A sharded candidate holds a table per shard.
            let tables: Vec<u64> = candidates
                .iter()
                .map(|c| {
                    table_bytes(labels.len(), c.pipeline.dimension())
                        * settings.sharding.shards as u64
                })
                .collect();
            let side_by_side = tables.iter().sum::<u64>() <= cache.tables_side_by_side;
            let mut trials: Vec<Trial> = if side_by_side {
                candidates.par_iter().map(trial).collect::<Result<_>>()?
            } else {
                let mut trials = Vec::with_capacity(candidates.len());
                for c in &candidates {
                    let (trained, result, right) = trial(c)?;
                    drop(trained);
                    crate::jobs::feature_cache::release_freed_memory();
                    trials.push((None, result, right));
                }
                tables_one_at_a_time = tables.iter().copied().max();
                trials
            };
            passes += candidates.len() * select_epochs;
            chosen = choose_as_train(
                &trials,
                |t| t.1.accuracy,
                |t| &t.2,
                |i| (&candidates[i].pipeline, &candidates[i].learner),
            );
            partial = match trials[chosen].0.take() {
                Some(kept) => Some(kept),
                None => {
                    let (kept, _) = parts_of(&candidates[chosen]);
                    passes += select_epochs;
                    Some(train_kept(&candidates[chosen], kept, select_epochs)?)
                }
            };
            selection = Some(Selection {
                folds: 0,
                groups: corpus.groups.len(),
                held_out: held_count,
                epochs: select_epochs,
                trials: trials.into_iter().map(|(_, t, _)| t).collect(),
                chosen,
            });
            // The losers are dropped (their weight tables given back to the system: glibc may
            // keep them otherwise, and the resident set then stays at the choice's four tables
            // to the end of the run); the winner goes on to the run's epochs on the four fifths.
            crate::jobs::feature_cache::release_freed_memory();
            if let Some(Partial::Trainer(trainer)) = &mut partial {
                let (kept, _) = parts_of(&candidates[chosen]);
                let go_on = |trainer: &mut Trainer| -> Result<()> {
                    for _ in select_epochs..settings.epochs {
                        trainer.epoch_over(kept, &hidden)?;
                    }
                    Ok(())
                };
                // The soft rule (2c below) trains beside the winner's later epochs.
                soft_candidate = soft_for(chosen);
                match &soft_candidate {
                    Some(c) => {
                        progress.set_message("trying the soft rule beside CW's epochs");
                        let (went_on, soft) =
                            rayon::join(|| go_on(trainer), || train_kept(c, kept, settings.epochs));
                        went_on?;
                        soft_partial = Some(soft?);
                        passes += settings.epochs;
                    }
                    None => go_on(trainer)?,
                }
                passes += settings.epochs - select_epochs;
            }
        } else if cross_validate {
            progress.set_message(&format!(
                "choosing among {} settings by cross-validation",
                stop_word_choices.len()
            ));
            let which: Vec<(TrainSettings, &Featurised, String)> = stop_word_choices
                .iter()
                .map(|&i| {
                    let c = &candidates[i];
                    (
                        candidate_settings[i].clone(),
                        examples_of(c),
                        c.name.clone(),
                    )
                })
                .collect();
            let (scores, best, cross_validation_epochs) =
                small_corpus_pick(&which, mail, labels.len(), settings.epochs, start)?;
            let FoldScores {
                trials, validated, ..
            } = scores;
            passes += stop_word_choices.len() * SELECTION_FOLDS * cross_validation_epochs;
            chosen = stop_word_choices[best];
            selection = Some(Selection {
                held_out: validated,
                epochs: cross_validation_epochs,
                trials,
                chosen: best,
                folds: SELECTION_FOLDS,
                groups: corpus.groups.len(),
            });
        } else {
            // Under MIN_SELECTION_DOCUMENTS in all, not even cross-validation can choose; above,
            // the held-out fifth is what is short (the candidates cross-validation does not try).
            let documents = held_count + kept_count;
            let short = if documents < MIN_SELECTION_DOCUMENTS {
                format!("{documents} documents")
            } else {
                format!("{held_count} held out")
            };
            selection_skipped = Some(format!(
                "kept {}: too few documents to choose settings on ({short}, at least {MIN_SELECTION_DOCUMENTS} needed)",
                candidates[0].name
            ));
        }
    }
    // Calibration needs a model that did not see the held-out fifth: the choice's, or one
    // trained for it now (so that the lighter n-grams below are compared with it too).
    if calibrate && partial.is_none() && !sharded {
        let (kept, _) = parts_of(&candidates[chosen]);
        // With nothing else to choose (`tune`'s winner) the soft rule may still be tried (2c).
        soft_candidate = soft_for(chosen);
        let chosen_model = || train_kept(&candidates[chosen], kept, settings.epochs);
        partial = Some(match &soft_candidate {
            Some(c) => {
                progress.set_message("trying the soft rule beside CW");
                let (trained, soft) =
                    rayon::join(chosen_model, || train_kept(c, kept, settings.epochs));
                soft_partial = Some(soft?);
                passes += settings.epochs;
                trained?
            }
            None => chosen_model()?,
        });
        passes += settings.epochs;
    }
    // 2b. The chosen settings again with lighter n-grams: both after the run's epochs on the
    // four fifths, scored on the held-out fifth; the lighter taken when more accurate.
    // (The plan has checked that the pipeline has n-grams and no weight of its own.) Two
    // weight tables are held at once, the chosen settings' and the lighter's: only where the
    // choice could hold its candidates' side by side.
    let try_lighter = settings.choose.ngram_weight
        && held_count >= MIN_SELECTION_DOCUMENTS
        && start.is_none()
        && matches!(partial, Some(Partial::Trainer(_)))
        && 2 * table_bytes(labels.len(), candidates[chosen].pipeline.dimension())
            <= cache.tables_side_by_side;
    let lighter_candidate = try_lighter.then(|| {
        let c = &candidates[chosen];
        Candidate {
            name: format!(
                "{}, bigrams at weight {}",
                c.name,
                f32::from(LIGHTER_NGRAMS) / 1000.0
            ),
            pipeline: PipelineConfig {
                ngram_weight_per_mille: Some(LIGHTER_NGRAMS),
                ..c.pipeline.clone()
            },
            learner: c.learner.clone(),
        }
    });
    let lighter_examples: Option<Featurised> = match &lighter_candidate {
        Some(c) => {
            progress.set_message("trying lighter bigrams");
            let (examples, _) = featurize_cached(
                corpus,
                std::slice::from_ref(&c.pipeline),
                &label_map,
                cache,
                &NoProgress,
                &mut |_| {},
            )?
            .pop()
            .expect("one pipeline");
            Some(examples)
        }
        None => None,
    };
    let lighter_parts: Option<(Part, Part)> = match &lighter_examples {
        Some(examples) => Some(Subset::split(examples, &is_held)?),
        None => None,
    };
    let (mut lighter_won, mut ngram_weight) = (false, None);
    if let (Some(c), Some((kept, held)), Some(Partial::Trainer(trainer))) =
        (&lighter_candidate, &lighter_parts, &partial)
    {
        let accuracy = |learner: &DiagonalLearner, held: &Part| -> Result<f64> {
            Ok(share_right(&held_out_right(learner, held)?))
        };
        let before = accuracy(&trainer.predictor(), &parts_of(&candidates[chosen]).1)?;
        let lighter = train_kept(c, kept, settings.epochs)?;
        passes += settings.epochs;
        let after = accuracy(&predictor_of(&lighter), held)?;
        lighter_won = after > before;
        ngram_weight = Some(NgramWeightTrial {
            weight_per_mille: LIGHTER_NGRAMS,
            epochs: settings.epochs,
            accuracy: after,
            accuracy_before: before,
            taken: lighter_won,
        });
        if lighter_won {
            partial = Some(lighter);
        }
    }
    let (winner, examples, winner_parts) =
        match (&lighter_candidate, &lighter_examples, &lighter_parts) {
            (Some(c), Some(examples), Some(parts)) if lighter_won => (c, examples, parts),
            _ => (
                &candidates[chosen],
                examples_of(&candidates[chosen]),
                parts_of(&candidates[chosen]),
            ),
        };
    // The soft rule is compared with the winner on the winner's features: when the lighter
    // n-grams won, it is trained again with them (the full-weight soft model is dropped
    // first), so that a soft model taken ships the n-gram weight its record says was taken.
    if lighter_won && soft_partial.is_some() {
        drop(soft_partial.take());
        soft_candidate = soft_candidate.map(|c| Candidate {
            name: format!("{}, soft rule {}", winner.name, soft_rule_name()),
            pipeline: winner.pipeline.clone(),
            ..c
        });
        if let Some(c) = &soft_candidate {
            progress.set_message("trying the soft rule with the lighter bigrams");
            soft_partial = Some(train_kept(c, &winner_parts.0, settings.epochs)?);
            passes += settings.epochs;
        }
    }
    // 2c. The chosen settings with the soft rule (SCW-I, its step capped), trained beside the
    // winner's later epochs: both after the run's epochs on the four fifths, scored on the
    // held-out fifth; the soft rule taken when ahead of the winner (with lighter n-grams, when
    // they won) by SOFT_RULE_MARGIN standard errors of the paired difference. Where labels are
    // noisy, CW's later epochs learn the noise, which the held-out fifth sees only then.
    let mut soft_trial = None;
    if let (Some(soft), Some(Partial::Trainer(trainer))) = (&soft_partial, &partial) {
        let (_, held) = winner_parts;
        let before = held_out_right(&trainer.predictor(), held)?;
        let after = held_out_right(&predictor_of(soft), held)?;
        soft_trial = Some(soft_rule_trial(
            &after,
            &before,
            settings.epochs,
            labels.len(),
        ));
    }
    let soft_won = soft_trial.as_ref().is_some_and(|t| t.taken);
    if soft_won {
        partial = soft_partial.take();
    }
    drop(soft_partial);
    let winner = match &soft_candidate {
        Some(c) if soft_won => c,
        _ => winner,
    };
    let winner_settings = settings_of(winner);
    // 3 (a corpus too small to hold out a fifth to fit on): the scale fitted by
    // cross-validation, each document scored by a model that did not see it.
    // Not when continuing a model: it keeps its scale, fitted on its own documents, where a
    // fit on the new ones alone (often of one new label) would say nothing.
    let fold_fit = if settings.calibrate
        && !calibrate
        && !sharded
        && start.is_none()
        && held_count + kept_count >= MIN_CALIBRATION_DOCUMENTS
    {
        progress.set_message("calibrating by cross-validation");
        passes += SELECTION_FOLDS * settings.epochs;
        crate::jobs::calibrate::fit_by_folds(
            &winner_settings,
            examples,
            SELECTION_FOLDS,
            &|e| e.split.fold(SELECTION_FOLDS),
            labels.len(),
            start,
        )?
    } else {
        None
    };
    // 3 and 4: the final model on everything.
    progress.set_message("training");
    let train_all = |progress: &dyn Progress| {
        train_examples(
            examples,
            labels.clone(),
            &winner_settings,
            start,
            &shard,
            progress,
        )
    };
    // The label-frequency correction, chosen on the held-out fifth with the winner's
    // four-fifths model (before calibration, which is fitted with it).
    let mut label_shift = None;
    let shift_counts = match &partial {
        Some(Partial::Trainer(_))
            if settings.choose.label_shift
                && winner.pipeline.bias
                && start.is_none()
                && held_count >= MIN_SELECTION_DOCUMENTS
                && labels.len() > 1 =>
        {
            let mut counts = vec![0usize; labels.len()];
            for_each(examples, |_, e| counts[e.label] += 1)?;
            Some(counts)
        }
        _ => None,
    };
    if let (Some(Partial::Trainer(trainer)), Some(counts)) = (&partial, &shift_counts) {
        let learner = trainer.predictor();
        let (_, held) = winner_parts;
        let mut chooser = crate::learn::label_shift::StrengthChooser::new(counts);
        for_each(held, |_, e| chooser.add(&learner.scores(&e.x), e.label))?;
        let choice = chooser.finish();
        label_shift = Some(crate::model::LabelShift {
            offsets: crate::learn::label_shift::offsets(counts, choice.gamma),
            choice,
        });
    }
    let offsets: Vec<f64> = label_shift
        .as_ref()
        .map(|s| s.offsets.clone())
        .unwrap_or_default();
    let mut continued = None;
    // The documents the variance shrinkage is measured on: the first outside the held-out fifth.
    let shrinkage_sample: Vec<FeatureVector> = if calibrate {
        let (kept, _) = winner_parts;
        let mut sample = Vec::new();
        for_each_while(kept, |_, e| {
            sample.push(e.x.clone());
            sample.len() < SHRINKAGE_SAMPLE
        })?;
        sample
    } else {
        Vec::new()
    };
    // The fit on the held-out fifth with a four-fifths learner, and that learner's summed score
    // variance on the shrinkage sample (compared with the final model's below).
    let early_fit = |learner: &DiagonalLearner| -> Result<_> {
        if !calibrate {
            return Ok(None);
        }
        let (_, held) = winner_parts;
        let fit = fit_probability_scale(learner, held, &offsets)?;
        let before = crate::learn::calibration::summed_variance(
            &|x| learner.score_gaussians(x),
            shrinkage_sample.iter(),
        );
        Ok(Some((fit, before)))
    };
    let (model, early) = match partial {
        // The four-fifths trainer goes on over every document: FINISH_EPOCHS more epochs instead
        // of a second training from the prior.
        Some(Partial::Trainer(mut trainer)) => {
            // Fitted before the trainer goes on, so that its weights need no copy.
            let early = early_fit(&trainer.predictor())?;
            let finish = FINISH_EPOCHS.min(settings.epochs);
            progress.set_length((examples.len() * finish) as u64);
            progress.set_position(0);
            for epoch in 0..finish {
                progress.set_message(&format!("epoch {}/{finish} on every document", epoch + 1));
                trainer.epoch_over(examples, progress)?;
            }
            passes += finish;
            continued = Some((settings.epochs, finish));
            let model = finish_model(*trainer, examples, labels.clone(), &winner_settings, start)?;
            (model, early)
        }
        Some(Partial::Model(partial)) => {
            passes += settings.epochs;
            (train_all(progress)?, early_fit(&partial.learner)?)
        }
        None if calibrate => {
            // Sharded: the four-fifths model beside the final one.
            let (kept, _) = winner_parts;
            passes += 2 * settings.epochs;
            let (model, partial) = rayon::join(
                || train_all(progress),
                || {
                    train_examples(
                        kept,
                        labels.clone(),
                        &winner_settings,
                        start,
                        &shard,
                        &hidden,
                    )
                },
            );
            (model?, early_fit(&partial?.learner)?)
        }
        None => {
            passes += settings.epochs;
            (train_all(progress)?, None)
        }
    };
    let mut model = model;
    // The shift goes into the bias weights' means (the bias feature is 1 in every document), so
    // that every prediction includes it and `learn`'s corrections act on the scores the model
    // predicts by.
    if let Some(shift) = label_shift.as_ref().filter(|s| s.choice.gamma > 0.0) {
        let bias = winner.pipeline.buckets();
        model.learner.add_to_means(bias, &shift.offsets);
    }
    let fit = early.map(|(mut fit, before)| {
        // The shipped model saw the held-out fifth too and is surer: keep the spread.
        let after = crate::learn::calibration::summed_variance(
            &|x| model.learner.score_gaussians(x),
            shrinkage_sample.iter(),
        );
        fit.variance_shrinkage = crate::learn::calibration::shrinkage_ratio(before, after);
        fit.scale /= fit.variance_shrinkage;
        fit
    });
    let fit = match (fit, fold_fit) {
        (Some(fit), _) => Some(fit),
        (None, Some(fold)) => Some(fold.finish(&model.learner)),
        (None, None) => None,
    };
    // The documents `learn` protects (crate::learn::rehearsal), with the final model's scores.
    fill_rehearsal(&mut model, examples, None)?;
    let skipped = std::mem::take(&mut skipped_of[pipeline_of(&candidates[chosen])]);
    model.header.training.skipped += skipped.len();
    model.header.selection = selection.clone();
    model.header.ngram_weight = ngram_weight.clone();
    model.header.soft_rule = soft_trial
        .clone()
        .or_else(|| continued_soft_rule(start, &model));
    // Recorded only when it corrects: a model without it is what it was before.
    model.header.label_shift = label_shift.clone().filter(|s| s.choice.gamma > 0.0);
    if let Some(fit) = fit {
        model.header.probability_scale = fit.scale;
        model.header.calibration = Some(fit.info(model.header.labels.len()));
    }
    Ok(Trained {
        model,
        fit,
        selection,
        selection_skipped,
        skipped,
        warnings: Vec::new(),
        featurize_time,
        learn_time: started.elapsed() - featurize_time,
        passes,
        continued,
        cache: cache_reports,
        label_shift,
        ngram_weight,
        soft_rule: soft_trial,
        tables_one_at_a_time,
    })
}

/// The chosen candidate with the soft rule ([`soft_rule`]), when `train` tries it after the
/// run's epochs ([`Choose::soft_rule`]): on a held-out fifth of [`MIN_SELECTION_DOCUMENTS`] or
/// more, a new model (not continued), and room for a third weight table beside the winner's
/// and the lighter n-grams'.
fn soft_rule_candidate(
    settings: &TrainSettings,
    chosen: &Candidate,
    held_out: usize,
    table: u64,
    side_by_side: u64,
) -> Option<Candidate> {
    let tables = 2 + u64::from(settings.choose.ngram_weight);
    (settings.choose.soft_rule
        && held_out >= MIN_SELECTION_DOCUMENTS
        && settings.sharding.shards == 1
        && tables * table <= side_by_side)
        .then(|| Candidate {
            name: format!("{}, soft rule {}", chosen.name, soft_rule_name()),
            pipeline: chosen.pipeline.clone(),
            learner: soft_rule(&chosen.learner),
        })
}

/// The soft rule as candidate names give it.
fn soft_rule_name() -> String {
    format!("SCW-I (C {SOFT_RULE_C}, η {SOFT_RULE_ETA}, prior flat)")
}

/// A continued model's record of the soft rule (`--resume` tries no new trial): the model it
/// continues took it for its training files' labels, and the files it is continued with are
/// training files too, so every label of the continued model was trained from files and
/// `learn` keeps the capped step for all of them (labels added by `learn` since get CW's).
fn continued_soft_rule(start: Option<&Model>, model: &Model) -> Option<SoftRuleTrial> {
    let trial = start?.header.soft_rule.clone()?;
    let labels = trial
        .trained_labels()
        .map_or(0, |_| model.header.labels.len());
    Some(SoftRuleTrial { labels, ..trial })
}

/// Step 2c's decision: the soft rule against the chosen settings, both after `epochs` on the
/// four fifths, from whether each held-out document was right under it (`after`) and under
/// them (`before`); taken when ahead by more than [`SOFT_RULE_MARGIN`] standard errors of the
/// paired difference.
pub fn soft_rule_trial(
    after: &[bool],
    before: &[bool],
    epochs: usize,
    labels: usize,
) -> SoftRuleTrial {
    let (wins, losses, standard_errors) = crate::learn::tally::paired_difference(after, before);
    SoftRuleTrial {
        c: SOFT_RULE_C,
        eta: SOFT_RULE_ETA,
        epochs,
        accuracy: share_right(after),
        accuracy_before: share_right(before),
        wins,
        losses,
        standard_errors,
        margin: SOFT_RULE_MARGIN,
        taken: standard_errors > SOFT_RULE_MARGIN,
        labels,
    }
}

/// The share of `right` that is true: an accuracy from [`held_out_right`]'s answers.
fn share_right(right: &[bool]) -> f64 {
    right.iter().filter(|&&r| r).count() as f64 / right.len().max(1) as f64
}

/// Whether each document of `held` is right under `learner`'s mean scores.
fn held_out_right<S: ExampleSource + ?Sized>(
    learner: &DiagonalLearner,
    held: &S,
) -> Result<Vec<bool>> {
    let mut right = Vec::with_capacity(held.len());
    for_each(held, |_, e| {
        right.push(crate::learn::learner::argmax(&learner.scores(&e.x)) == e.label)
    })?;
    Ok(right)
}

pub use crate::learn::tally::clearly_better;

/// The most accurate of `items`, the earliest on ties: `train`'s choice among its candidate
/// settings on the held-out fifth, but for ties between the stop-word list and none
/// ([`every_word_on_a_tie`]), and its cross-validated choice for small corpora. The candidates
/// are a small symmetric grid (the stop-word list or none, η 0.99 or 0.9) with no reason to
/// favour one before the data speak: keeping the base unless another was better by more than
/// a standard error ([`base_unless_clearly_better`], the rule before) kept the list on ties it
/// lost on the test split. Measured on 15 dev and extra corpora
/// (`benches/results/train-choice-2026-11-24.md`): New York Times opinion sentences 0.692 →
/// 0.738, fortunes 0.510 → 0.519, Debian sections 0.775 → 0.779, the other twelve unchanged.
pub fn most_accurate<T>(items: &[T], accuracy: impl Fn(&T) -> f64) -> usize {
    (0..items.len()).fold(0, |best, i| {
        if accuracy(&items[i]) > accuracy(&items[best]) {
            i
        } else {
            best
        }
    })
}

/// `train`'s choice on the held-out fifth: the most accurate candidate ([`most_accurate`]), and
/// on a tie between candidates with the stop-word list and without it, the one without. The two
/// mistakes do not cost the same: the list deletes the words that decide questions, sentiment
/// and genre (what, not, never, she, I), and taking it wrongly cost the test split 2 to 16
/// points (questions 16, amazon sentences 4.8, movie sentences 2.9, Brown paragraphs by genre
/// 2.1), while keeping every word wrongly cost at most 0.6 (20 Newsgroups) on the same corpora
/// (`benches/results/selection-probes-2026-11-27.md`,
/// `benches/results/brown-genres-2026-11-28.md`). Requiring more of the list than a tie (a
/// standard error) was measured and not taken: it also dropped the list where it helps.
pub fn every_word_on_a_tie<T>(
    items: &[T],
    accuracy: impl Fn(&T) -> f64,
    has_list: impl Fn(usize) -> bool,
) -> usize {
    let best = most_accurate(items, &accuracy);
    (0..items.len())
        .find(|&i| !has_list(i) && accuracy(&items[i]) == accuracy(&items[best]))
        .unwrap_or(best)
}

/// A departure from `train`'s base settings among its candidates, taken only when ahead of
/// the best of the others on the held-out fifth by `margin` standard errors of the paired
/// difference ([`only_if_clearly_better`]).
pub struct Departure<'a> {
    /// Whether candidate i departs.
    pub is: &'a dyn Fn(usize) -> bool,
    /// Standard errors it must be ahead by.
    pub margin: f64,
}

/// The soft rule ([`soft_rule`]) must be ahead of the chosen settings by one standard error of
/// the paired difference after the run's epochs. On 24 corpora filed as their authors filed
/// them it was taken on two (Friends' lines by speaker, +3.0 points on the test split; Russian
/// fortunes, +0.45) and kept out of the others, where it trails CW by up to 6 standard errors;
/// with a tenth to a quarter of the training documents misfiled it led by 1.6 to 7.3
/// (`benches/results/noisy-labels-2026-11-29.md`).
pub const SOFT_RULE_MARGIN: f64 = 1.0;

/// Every header field whole ([`Choose::every_field`]) must be ahead by three standard errors.
/// It reads the moment of a message (its dates, queue ids and relays' addresses), which a
/// random held-out fifth cannot tell from a lasting sign. A ham/spam filter that took it lost 1
/// to 4 points on mail of a later period (`benches/results/field-rule-choice-2026-11-28.md`).
/// Over 30 draws of the fifth of SpamAssassin's ham and spam split by time, and on the
/// comparison's split, whole fields won by 1.1 to 2.0 standard errors, often on a handful of
/// messages (4 against 0). Where the labels are periods (SpamAssassin's five collections,
/// folders by year), they won by 4.1 to 7.8
/// (`benches/results/field-rule-margin-2026-11-28.md`).
pub const EVERY_FIELD_MARGIN: f64 = 3.0;

/// `chosen` unless it is a departure (`departure.is`) and not ahead of the best of the others
/// (chosen among them as `train` chooses, [`every_word_on_a_tie`]) by `departure.margin`
/// standard errors of the paired difference; then that best.
pub fn only_if_clearly_better<T>(
    chosen: usize,
    items: &[T],
    departure: &Departure<'_>,
    accuracy: impl Fn(&T) -> f64,
    has_list: impl Fn(usize) -> bool,
    right: impl Fn(&T) -> &[bool],
) -> usize {
    let is_bold = departure.is;
    if !is_bold(chosen) {
        return chosen;
    }
    let others: Vec<usize> = (0..items.len()).filter(|&i| !is_bold(i)).collect();
    if others.is_empty() {
        return chosen;
    }
    let best =
        others[every_word_on_a_tie(&others, |&i| accuracy(&items[i]), |j| has_list(others[j]))];
    let (_, _, ahead) =
        crate::learn::tally::paired_difference(right(&items[chosen]), right(&items[best]));
    if ahead > departure.margin {
        chosen
    } else {
        best
    }
}

/// `train`'s choice among its candidates on the held-out fifth, for `train` and for `tune`'s
/// copy of it (two copies drifted: `tune`'s lacked the tie rule until 4680d84): the most
/// accurate, every word on a tie ([`every_word_on_a_tie`]), then each departure from the base
/// in `bolder` (the soft rule, every header field whole) only if ahead by its margin
/// ([`only_if_clearly_better`]). `has_list(i)`: whether candidate i has the stop-word list;
/// `right(item)`: per held-out document, whether it was right.
pub fn trains_choice<T>(
    items: &[T],
    accuracy: impl Fn(&T) -> f64,
    right: impl Fn(&T) -> &[bool],
    has_list: impl Fn(usize) -> bool,
    bolder: &[Departure<'_>],
) -> usize {
    let mut chosen = every_word_on_a_tie(items, &accuracy, &has_list);
    for departure in bolder {
        chosen = only_if_clearly_better(chosen, items, departure, &accuracy, &has_list, &right);
    }
    chosen
}

/// [`with_trains_departures`] among settings of `train`'s own kind: `items[i]` is the result
/// of the settings whose pipeline and learner `at(i)` gives, the base first. For the held-out
/// fifth's choice and for the small corpus's cross-validated one.
fn choose_as_train<'a, T>(
    items: &[T],
    accuracy: impl Fn(&T) -> f64,
    right: impl Fn(&T) -> &[bool],
    at: impl Fn(usize) -> (&'a PipelineConfig, &'a CwConfig),
) -> usize {
    let (base_pipeline, _) = at(0);
    with_trains_departures(items, accuracy, right, |i| at(i).0.has_stop_words(), &|i| {
        at(i).0.field_rule != base_pipeline.field_rule
    })
}

/// The candidates (indices, the base first) that a corpus too small to hold out
/// [`MIN_SELECTION_DOCUMENTS`] cross-validates: those at the base's prior and rule, and for
/// mail ([`cross_validates_field_rules`]) with either header-field rule, otherwise at the
/// base's. For `train` and for `tune`'s copy of its pick.
pub(crate) fn small_corpus_candidates(settings: &[TrainSettings], mail: bool) -> Vec<usize> {
    let base = &settings[0];
    (0..settings.len())
        .filter(|&i| {
            let s = &settings[i];
            s.learner.prior == base.learner.prior
                && s.learner.rule == base.learner.rule
                && (mail || s.pipeline.field_rule == base.pipeline.field_rule)
        })
        .collect()
}

/// `train`'s pick among `which` ([`small_corpus_candidates`], the base first) on a corpus too
/// small to hold out [`MIN_SELECTION_DOCUMENTS`], by [`cross_validated_choice`]: for mail
/// each trained for `run_epochs` and chosen by train's rule (every field whole by its margin,
/// [`with_trains_departures`]), otherwise after [`SELECTION_EPOCHS`], the most accurate.
/// Returns the scores, the index into `which` and the epochs. For `train` and for `tune`'s
/// copy of its pick.
pub(crate) fn small_corpus_pick<S: ExampleSource + Sync + ?Sized>(
    which: &[(TrainSettings, &S, String)],
    mail: bool,
    labels: usize,
    run_epochs: usize,
    start: Option<&Model>,
) -> Result<(FoldScores, usize, usize)> {
    let epochs = if mail {
        run_epochs
    } else {
        SELECTION_EPOCHS.min(run_epochs)
    };
    let scores = cross_validated_choice(which, labels, epochs, start)?;
    let chosen = if mail {
        let items: Vec<(f64, &[bool])> = (scores.trials.iter().map(|t| t.accuracy))
            .zip(scores.right.iter().map(Vec::as_slice))
            .collect();
        choose_as_train(
            &items,
            |t| t.0,
            |t| t.1,
            |i| (&which[i].0.pipeline, &which[i].0.learner),
        )
    } else {
        most_accurate(&scores.trials, |t| t.accuracy)
    };
    Ok((scores, chosen, epochs))
}

/// [`trains_choice`] with `train`'s departure from its base among its candidates: every header
/// field whole by [`EVERY_FIELD_MARGIN`] (the soft rule is tried after the choice,
/// [`soft_rule_trial`]); for `train` and for `tune`'s copy of its pick, each describing its own
/// candidates.
pub(crate) fn with_trains_departures<T>(
    items: &[T],
    accuracy: impl Fn(&T) -> f64,
    right: impl Fn(&T) -> &[bool],
    has_list: impl Fn(usize) -> bool,
    whole_fields: &dyn Fn(usize) -> bool,
) -> usize {
    trains_choice(
        items,
        accuracy,
        right,
        has_list,
        &[Departure {
            is: whole_fields,
            margin: EVERY_FIELD_MARGIN,
        }],
    )
}

/// Whether a corpus too small to hold out [`MIN_SELECTION_DOCUMENTS`] cross-validates its
/// header fields' rules (the stable rule, every field whole) beside its stop words, each
/// candidate trained for the run's epochs and chosen as the held-out fifth chooses
/// ([`trains_choice`]: every field whole only by three standard errors): mail. Other corpora
/// cross-validate the stop words alone after [`SELECTION_EPOCHS`] and take the most accurate;
/// both keep the base prior. On 39 corpora of 45 to 200 SpamAssassin messages (ham and spam;
/// its five collections, which are periods; three kinds: easy ham, hard ham, spam), with the
/// stop words alone a few dozen messages a collection stayed 7 to 22 points behind
/// PassiveAggressive on the same files, and after 1 epoch every field whole was taken on none
/// (its lead appears once the models have converged). After the run's epochs: +1.7 points on
/// the mean (the collections +3.8, up to 15; the largest loss 2.3). The prior chosen as well
/// gained 1.3 more, but took the flat one, under which a few refiles no longer teach a new
/// folder (`a_new_folder_learned_from_few_refiles_does_not_take_the_old_labels_documents`:
/// 0.25 of its posts instead of 0.7 or more), and on 13 corpora of other texts it cost up to 3
/// points: with few documents the prior is most of the model
/// (`benches/results/small-mail-2026-11-28.md`).
pub(crate) fn cross_validates_field_rules(
    text_length: Option<crate::text::length::TextLength>,
) -> bool {
    text_length.is_some_and(|t| t.is_mail())
}

/// The choice among settings that `tune`'s cross-validation makes: of `items`, the first (the base)
/// unless the most accurate (the earliest on ties) is [`clearly_better`] than it; 0 for none.
pub fn base_unless_clearly_better<T>(
    items: &[T],
    accuracy: impl Fn(&T) -> f64,
    right: impl Fn(&T) -> &[bool],
) -> usize {
    let best = most_accurate(items, &accuracy);
    if best > 0 && clearly_better(right(&items[best]), right(&items[0])) {
        best
    } else {
        0
    }
}

/// Featurises a labelled corpus once per pipeline, reading each file once; per-file problems
/// are returned as skipped errors, per pipeline (a document of stop words only has words
/// without the list and none with it). The examples are held in memory; `train` keeps them
/// on disk past a budget ([`CacheSettings`]).
pub fn featurize_corpus_many(
    corpus: &LabelledCorpus,
    configs: &[PipelineConfig],
    progress: &dyn Progress,
) -> Result<Vec<(Vec<Example>, Vec<Error>)>> {
    let labels: Vec<usize> = (0..corpus.labels.len()).collect();
    let stores = configs
        .iter()
        .map(|_| Store::Memory(Vec::new(), 0))
        .collect();
    let done = featurize_into(corpus, configs, &labels, stores, &mut |_| false, progress)?;
    Ok(done
        .into_iter()
        .map(|(examples, skipped)| (examples.into_memory().expect("in memory"), skipped))
        .collect())
}

/// Documents featurised at a time: the results of one chunk are held before they are stored in
/// corpus order (4,096 mail-sized documents: about 13 MB per pipeline).
const FEATURIZE_CHUNK: usize = 4096;

/// Featurises every document of `corpus` with each pipeline into its store, in corpus order,
/// each file read once; after every chunk, `spill` is asked whether the examples held in memory
/// (their estimated bytes) should go to disk, and the stores held in memory are then moved into
/// temporary cache files in the system's temporary directory.
fn featurize_into(
    corpus: &LabelledCorpus,
    configs: &[PipelineConfig],
    labels: &[usize],
    mut stores: Vec<Store>,
    spill: &mut dyn FnMut(u64) -> bool,
    progress: &dyn Progress,
) -> Result<Vec<(Featurised, Vec<Error>)>> {
    for config in configs {
        Pipeline::new(config)?;
    }
    progress.set_length(corpus.files.len() as u64);
    progress.set_position(0);
    progress.set_message("reading");
    // Built pipelines kept from chunk to chunk (each keeps a token cache).
    let pool: Mutex<Vec<Vec<Pipeline>>> = Mutex::new(Vec::new());
    struct Pooled<'a> {
        pool: &'a Mutex<Vec<Vec<Pipeline>>>,
        pipelines: Vec<Pipeline>,
    }
    impl Drop for Pooled<'_> {
        fn drop(&mut self) {
            let pipelines = std::mem::take(&mut self.pipelines);
            self.pool.lock().expect("not poisoned").push(pipelines);
        }
    }
    let mut skipped: Vec<Vec<Error>> = configs.iter().map(|_| Vec::new()).collect();
    for (c, chunk) in corpus.files.chunks(FEATURIZE_CHUNK).enumerate() {
        let chunk = chunk?;
        let results: Vec<(Vec<Result<FeatureVector>>, SplitKeys)> = chunk
            .par_iter()
            .map_init(
                || {
                    let pooled = pool.lock().expect("not poisoned").pop();
                    Pooled {
                        pool: &pool,
                        pipelines: pooled.unwrap_or_else(|| {
                            configs
                                .iter()
                                .map(|c| Pipeline::new(c).expect("validated above"))
                                .collect()
                        }),
                    }
                },
                |pooled, (source, _)| {
                    let split = corpus.split_keys(source);
                    let pipelines = &mut pooled.pipelines;
                    let out = match source.read(configs[0].input_limits()) {
                        Ok(doc) => pipelines
                            .iter_mut()
                            .map(|p| featurize_document(p, &doc, &source.name()))
                            .collect(),
                        // The same problem for every pipeline; one that stops the run stops it
                        // once.
                        Err(e) => {
                            let copies: Vec<Result<FeatureVector>> = (1..pipelines.len())
                                .filter_map(|_| e.duplicate().map(Err))
                                .collect();
                            std::iter::once(Err(e)).chain(copies).collect()
                        }
                    };
                    progress.inc(1);
                    (out, split)
                },
            )
            .collect();
        for (k, ((per_pipeline, split), (_, label))) in results.into_iter().zip(&chunk).enumerate()
        {
            let file = c * FEATURIZE_CHUNK + k;
            for ((result, store), skipped) in per_pipeline
                .into_iter()
                .zip(stores.iter_mut())
                .zip(skipped.iter_mut())
            {
                match result {
                    Ok(x) => store.push(Example {
                        x,
                        label: labels[*label],
                        file,
                        split,
                    })?,
                    Err(e) if e.is_skippable() => skipped.push(e),
                    Err(e) => return Err(e),
                }
            }
        }
        if spill(stores.iter().map(Store::memory).sum()) {
            let dir = std::env::temp_dir();
            for (store, config) in stores.iter_mut().zip(configs) {
                if store.memory() > 0 {
                    store.spill(CacheWriter::temporary(&dir, "", config.dimension())?)?;
                }
            }
        }
    }
    stores
        .into_iter()
        .zip(skipped)
        .map(|(store, skipped)| Ok((store.finish(&skipped)?, skipped)))
        .collect()
}

/// Featurises a corpus for training where `cache` says: a kept cache file when one matches, in
/// memory until the budget is passed, on disk from then on (or from the start).
pub(crate) fn featurize_cached(
    corpus: &LabelledCorpus,
    configs: &[PipelineConfig],
    labels: &[usize],
    cache: &CacheSettings,
    progress: &dyn Progress,
    notes: &mut dyn FnMut(String),
) -> Result<Vec<(Featurised, Vec<Error>)>> {
    let mut done: Vec<Option<(Featurised, Vec<Error>)>> = configs.iter().map(|_| None).collect();
    let mut stores = Vec::new();
    let mut todo = Vec::new();
    for (p, config) in configs.iter().enumerate() {
        let store = match &cache.dir {
            Some(dir) => {
                let key = crate::jobs::feature_cache::cache_key(corpus, labels, config)?;
                let path = dir.join(crate::jobs::feature_cache::file_name(config));
                let found = if path.is_file() {
                    DiskCache::open(&path, &key)
                } else {
                    Ok(None)
                };
                match found {
                    Ok(Some((cache, skipped))) => {
                        notes(format!(
                            "using the feature cache {} ({} documents, made by an earlier run)",
                            path.display(),
                            cache.len()
                        ));
                        done[p] = Some((Featurised::Disk(cache), skipped));
                        continue;
                    }
                    Ok(None) if !path.exists() => {}
                    Ok(None) => notes(format!(
                        "{}: the feature cache does not match the corpus or the pipeline (stale): featurising again",
                        path.display()
                    )),
                    Err(e) => notes(format!("{e}: featurising again")),
                }
                Store::Disk(Box::new(CacheWriter::kept(
                    &path,
                    &key,
                    config.dimension(),
                )?))
            }
            None if cache.memory_budget == 0 => Store::Disk(Box::new(CacheWriter::temporary(
                &std::env::temp_dir(),
                "",
                config.dimension(),
            )?)),
            None => Store::Memory(Vec::new(), 0),
        };
        stores.push(store);
        todo.push(p);
    }
    if !todo.is_empty() {
        let configs_todo: Vec<PipelineConfig> = todo.iter().map(|&p| configs[p].clone()).collect();
        let budget = cache.memory_budget;
        let mut spill = |bytes: u64| {
            let over = bytes > budget;
            if over {
                notes(format!(
                    "the featurised corpus passed the memory budget of {} MB: it goes on in a temporary cache file in {} (removed at the end)",
                    budget >> 20,
                    std::env::temp_dir().display()
                ));
            }
            over
        };
        let featurised =
            featurize_into(corpus, &configs_todo, labels, stores, &mut spill, progress)?;
        for (p, f) in todo.into_iter().zip(featurised) {
            done[p] = Some(f);
        }
    }
    Ok(done
        .into_iter()
        .map(|d| d.expect("every pipeline featurised"))
        .collect())
}
