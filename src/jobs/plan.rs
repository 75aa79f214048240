//! A training run's settings, checked once: [`TrainRequest`] holds them as a user gives them
//! (close to `cwtext train`'s flags, every choice optional), and [`TrainRequest::plan`] turns
//! them into a [`TrainPlan`], which holds only settings that go together. Every rule about
//! which settings combine lives here, so a library caller gets the same checks as the command
//! line, and each error names the bad value. Settings made in code rather than asked for
//! (`tune`'s winner, the experiments' models) become a plan through [`TrainPlan::from_settings`],
//! under the same rules. [`TrainPlan::train`] then runs the plan on a corpus: the subword
//! vocabulary, the training itself and the kept vocabulary; it is the library's only way to
//! train a model on a corpus.

use std::path::PathBuf;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::jobs::corpus::LabelledCorpus;
use crate::jobs::train::{
    check_epochs, sample_documents, train_corpus, train_vocabulary, CacheSettings, Choose,
    Sharding, TrainSettings, Trained, TRAIN_ETA,
};
use crate::learn::learner::{
    Algorithm, ConstraintKind, CwConfig, KBest, ProjectionKind, RuleKind, WeightPrior,
};
use crate::model::{LearnerConfig, Model, WeightEncoding};
use crate::progress::Progress;
use crate::text::language::Stemming;
use crate::text::length::TextLength;
use crate::text::pipeline::chargrams::CharNgrams;
use crate::text::pipeline::config::{FieldRule, FilterConfig, TokenizerConfig};
use crate::text::pipeline::stem::StemLanguage;
use crate::text::pipeline::subword::{SubwordKind, SubwordSpec, DEFAULT_VOCAB_SIZE};
use crate::text::pipeline::weighting::{ValueConfig, ValueKind};
use crate::text::pipeline::{elisions, stopwords, PipelineConfig};
use crate::text::vocabulary::{Vocabulary, DEFAULT_TEXTS_PER_BUCKET};

/// The most shards a run may ask for.
pub const MAX_SHARDS: usize = 1024;

/// The longest n-gram when none is asked for and the text is written with spaces: words and
/// bigrams.
pub const DEFAULT_NGRAMS: usize = 2;

/// The η an algorithm gets when `--eta` is not given: [`TRAIN_ETA`] for CW, 0.99 otherwise.
pub fn default_eta(algorithm: Algorithm) -> f64 {
    match algorithm {
        Algorithm::Cw => TRAIN_ETA,
        _ => CwConfig::default().eta,
    }
}

/// A training run as a user asks for it. [`Default`] gives `cwtext train`'s defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainRequest {
    /// The learning algorithm: CW and its relatives, or a first-order baseline.
    pub algorithm: Algorithm,
    /// CW's update rule (only CW takes one); `None`: stdev.
    pub update: Option<RuleKind>,
    /// The covariance projection (only second-order algorithms have one); `None`: KL.
    pub projection: Option<ProjectionKind>,
    pub constraints: ConstraintKind,
    /// Competing labels per example for the k-best strategies; `None`: 1.
    pub k: Option<KBest>,
    /// CW's confidence η; `None`: [`TRAIN_ETA`] for CW, 0.99 otherwise.
    pub eta: Option<f64>,
    /// Each weight's prior variance; `None`: chosen on the held-out fifth from idf (the base)
    /// and flat (CW), flat otherwise.
    pub prior: Option<WeightPrior>,
    /// AROW's regulariser r.
    pub arow_r: f64,
    /// Aggressiveness C of SCW and PA.
    pub c: f64,
    /// The binary formulation (one weight vector for two labels).
    pub binary: bool,
    pub initial_variance: f64,
    /// Features are hashed into 2^hash_bits buckets; `None`: chosen from the corpus's words and
    /// labels ([`Choose::hash_bits`]), from the base 2^18.
    pub hash_bits: Option<u8>,
    /// Longest n-gram; `None`: 2, or [`UNSPACED_NGRAMS`](crate::text::length::UNSPACED_NGRAMS)
    /// for text written without spaces between its words ([`Choose::unspaced_ngrams`]).
    pub ngrams: Option<usize>,
    pub values: ValueKind,
    /// Scale documents to unit length.
    pub normalize: bool,
    /// Subword pieces instead of words (`None`: words).
    pub subword: Option<SubwordKind>,
    /// Character n-grams of the words beside them: chosen by the texts' length (words only),
    /// always, or never.
    pub char_ngrams: CharNgramsRequest,
    /// The text's first word as a feature of its own too (`first:how`,
    /// [`PipelineConfig::first_word`]); off unless asked for.
    pub first_word: bool,
    /// The n-grams' weight beside the words, in thousandths
    /// ([`PipelineConfig::ngram_weight_per_mille`]); `None` (or 1000): they count as words.
    pub ngram_weight: Option<u16>,
    /// The most pieces of a subword vocabulary; `None`: [`DEFAULT_VOCAB_SIZE`].
    pub vocab_size: Option<usize>,
    /// A built-in list, a file, or "none"; `None`: chosen (words) or none (subword pieces).
    pub stopwords: Option<String>,
    pub stem: Option<StemLanguage>,
    /// The language whose elided articles are taken off words ([`crate::text::pipeline::elisions`]),
    /// or "none"; `None`: the sampled documents' language's, when it has a list
    /// ([`Choose::elisions`]), none with subword pieces.
    pub elisions: Option<String>,
    pub bias: bool,
    pub email_headers: bool,
    /// Every other header field of mail as features of its own (presence and words).
    pub header_fields: bool,
    /// Which of those fields and which of their parts; `None`: chosen for mail (the stable
    /// rule, unless every field whole is more accurate on the held-out fifth by three standard
    /// errors,
    /// [`Choose::every_field`]), the stable rule otherwise.
    pub field_rule: Option<FieldRule>,
    /// An HTML page, and a mail's HTML part, read as its text
    /// ([`PipelineConfig::html_text`]).
    pub html_text: bool,
    pub symbols: bool,
    pub max_document_bytes: usize,
    pub max_tokens: usize,
    pub max_mime_depth: usize,
    pub max_token_length: usize,
    /// Fit the probability scale on the held-out fifth.
    pub calibrate: bool,
    /// Choose the label-frequency correction on the held-out fifth
    /// ([`crate::learn::label_shift`]); `false`: none.
    pub label_shift: bool,
    pub epochs: usize,
    pub seed: u64,
    pub encoding: WeightEncoding,
    /// Shards trained in parallel threads and merged.
    pub shards: usize,
    /// Re-mix the shards after every epoch.
    pub mix: bool,
    /// Continue the model in this file: its pipeline, learner and encoding replace these
    /// ([`TrainPlan::continue_from`]).
    pub resume: Option<PathBuf>,
    /// Train across processes (`train --cluster`).
    pub cluster: Option<ClusterRequest>,
    /// Keep the texts behind each bucket, this many per bucket.
    pub keep_vocabulary: Option<usize>,
    /// Where the featurised corpus is kept while training: memory up to a budget, then a
    /// temporary cache file, or a cache directory kept across runs.
    pub cache: CacheSettings,
}

/// Whether a run has character n-grams beside its words ([`crate::text::pipeline::chargrams`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CharNgramsRequest {
    /// These when the corpus is of short texts ([`crate::text::length::TextLength::is_short`]),
    /// none otherwise: `train`'s default (for words; subword pieces, a continued model and a
    /// cluster take none).
    Chosen(CharNgrams),
    /// These, whatever the texts.
    Always(CharNgrams),
    /// None.
    Never,
}

impl CharNgramsRequest {
    /// The n-grams a pipeline has before any choice (none when they are chosen).
    fn fixed(&self) -> Option<CharNgrams> {
        match self {
            CharNgramsRequest::Always(c) => Some(*c),
            _ => None,
        }
    }
}

/// `train --cluster`: this process's place among the processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterRequest {
    pub processes: usize,
    /// This process's index, 0 to `processes` − 1.
    pub process: usize,
    /// "host:port" lines, one per process; needed with more than one process.
    pub hostfile: Option<PathBuf>,
}

impl Default for TrainRequest {
    fn default() -> Self {
        TrainRequest {
            algorithm: Algorithm::Cw,
            update: None,
            projection: None,
            constraints: ConstraintKind::Single,
            k: None,
            eta: None,
            prior: None,
            arow_r: 1.0,
            c: 1.0,
            binary: false,
            initial_variance: 1.0,
            hash_bits: None,
            ngrams: None,
            values: ValueKind::LogTf,
            normalize: true,
            subword: None,
            char_ngrams: CharNgramsRequest::Chosen(CharNgrams::default()),
            first_word: false,
            ngram_weight: None,
            vocab_size: None,
            stopwords: None,
            stem: None,
            elisions: None,
            bias: true,
            email_headers: true,
            header_fields: true,
            field_rule: None,
            html_text: true,
            symbols: true,
            max_document_bytes: crate::text::pipeline::DEFAULT_MAX_DOCUMENT_BYTES,
            max_tokens: crate::text::pipeline::DEFAULT_MAX_TOKENS,
            max_mime_depth: crate::text::pipeline::DEFAULT_MAX_MIME_DEPTH,
            max_token_length: 40,
            calibrate: true,
            label_shift: true,
            epochs: 5,
            seed: 1,
            encoding: WeightEncoding::F32,
            shards: 1,
            mix: false,
            resume: None,
            cluster: None,
            keep_vocabulary: None,
            cache: CacheSettings::default(),
        }
    }
}

/// A training run whose settings go together: only [`TrainRequest::plan`] and
/// [`TrainPlan::from_settings`] make one.
#[derive(Debug, Clone)]
pub struct TrainPlan {
    settings: TrainSettings,
    subword: Option<SubwordSpec>,
    cluster: Option<ClusterRequest>,
    keep_vocabulary: Option<usize>,
    resume: Option<PathBuf>,
    cache: CacheSettings,
}

fn invalid(message: String) -> Error {
    Error::InvalidSetting(message)
}

/// The shard count of a run, 1 to [`MAX_SHARDS`].
fn check_shards(shards: usize) -> Result<()> {
    if (1..=MAX_SHARDS).contains(&shards) {
        Ok(())
    } else {
        Err(invalid(format!(
            "shards must be in [1, {MAX_SHARDS}], but is {shards}"
        )))
    }
}

/// The rules about a run's pipeline, learner and choice that a request meets by construction
/// and settings made in code must be checked for: the values of each, subword pieces without
/// stop words or stems, and a choice only among what [`TrainSettings::candidates`] can try.
fn check_model_settings(settings: &TrainSettings) -> Result<()> {
    let TrainSettings {
        pipeline,
        learner,
        choose,
        ..
    } = settings;
    pipeline.validate()?;
    learner.clone().validate()?;
    if let Some(chars) = &choose.chars {
        chars.validate()?;
    }
    let list = pipeline.stop_words_name();
    if !matches!(pipeline.tokenizer, TokenizerConfig::UnicodeWords) {
        // Pieces are not words, as for a request (`TrainRequest::subword_spec`).
        let tokenizer = pipeline.tokenizer.name();
        if let Some(name) = list {
            return Err(invalid(format!(
                "stop words {name} do not combine with {tokenizer} pieces: stop-word lists hold words, and would also drop pieces inside words"
            )));
        }
        if let Some(language) = pipeline.filters.iter().find_map(|f| match f {
            FilterConfig::Stem { language } => Some(language),
            _ => None,
        }) {
            return Err(invalid(format!(
                "stemming ({}) does not combine with {tokenizer} pieces, which are not words to stem",
                format!("{language:?}").to_lowercase()
            )));
        }
        if choose.stopwords {
            return Err(invalid(format!(
                "choosing the stop words does not apply to {tokenizer} pieces, which take none"
            )));
        }
        if let Some(language) = pipeline.elisions_name() {
            return Err(invalid(format!(
                "elisions ({language}) do not combine with {tokenizer} pieces, which are not words to take an article off"
            )));
        }
        if choose.elisions {
            return Err(invalid(format!(
                "choosing the elisions does not apply to {tokenizer} pieces, which take none"
            )));
        }
    }
    if choose.stopwords {
        if let Some(name) = list.filter(|name| !stopwords::is_builtin(name)) {
            return Err(invalid(format!(
                "choosing the stop words tries a built-in list ({}) and none, but the pipeline's list is {name}",
                stopwords::builtin_names().join(", ")
            )));
        }
    }
    if choose.soft_rule && !matches!(learner.rule, RuleKind::Stdev | RuleKind::Var) {
        return Err(invalid(format!(
            "choosing a soft rule tries SCW-I beside CW's rules (stdev, var), but the rule is {}",
            format!("{:?}", learner.rule).to_lowercase()
        )));
    }
    if choose.every_field && !(pipeline.header_fields && pipeline.field_rule == FieldRule::Stable) {
        return Err(invalid(
            "choosing the header-field rule tries every field whole beside the stable rule, but the pipeline reads no header fields or not by the stable rule".into(),
        ));
    }
    if choose.ngram_weight && (pipeline.max_ngram < 2 || pipeline.ngram_weight_per_mille.is_some())
    {
        return Err(invalid(
            "choosing the n-grams' weight tries half weight beside full weight, but the pipeline has no n-grams or a weight of its own".into(),
        ));
    }
    // As a request chooses the prior for --algo cw alone.
    if choose.prior && !matches!(learner.rule, RuleKind::Stdev | RuleKind::Var) {
        return Err(invalid(format!(
            "choosing the prior tries flat and idf with CW's rules (stdev, var), but the rule is {}",
            format!("{:?}", learner.rule).to_lowercase()
        )));
    }
    Ok(())
}

impl TrainRequest {
    /// Checks every rule about which settings combine and turns the request into a plan.
    pub fn plan(&self) -> Result<TrainPlan> {
        let mut settings = self.settings()?;
        let subword = self.subword_spec()?;
        check_shards(self.shards)?;
        if let Some(cluster) = &self.cluster {
            if self.shards != 1 || self.resume.is_some() {
                return Err(invalid(
                    "--cluster trains one shard per process; it does not combine with --shards or --resume".into(),
                ));
            }
            if cluster.processes < 1 || (cluster.processes > 1 && cluster.hostfile.is_none()) {
                return Err(invalid(format!(
                    "--cluster with {} processes needs --hostfile (one host:port line per process)",
                    cluster.processes
                )));
            }
            if cluster.process >= cluster.processes {
                return Err(invalid(format!(
                    "process index must be below the process count {}, but is {}",
                    cluster.processes, cluster.process
                )));
            }
            if let Some(n) = self.keep_vocabulary {
                return Err(invalid(format!(
                    "keeping the vocabulary ({n} per bucket) does not combine with --cluster"
                )));
            }
            settings.sharding = Sharding {
                shards: cluster.processes,
                mix: true,
            };
        }
        if self.keep_vocabulary == Some(0) {
            return Err(invalid(
                "the vocabulary must keep at least 1 text per bucket, but is 0".into(),
            ));
        }
        check_epochs(self.epochs)?;
        // A continued model brings its own settings (checked by [`TrainPlan::continue_from`]).
        if self.resume.is_none() {
            check_model_settings(&settings)?;
        }
        Ok(TrainPlan {
            settings,
            subword,
            cluster: self.cluster.clone(),
            keep_vocabulary: self.keep_vocabulary,
            resume: self.resume.clone(),
            cache: self.cache.clone(),
        })
    }

    /// The learner settings from the algorithm, the update and the rest.
    pub fn learner(&self) -> Result<CwConfig> {
        let (rule, average) = self.algorithm.rule(self.update)?;
        if rule.is_first_order() {
            if let Some(p) = self.projection {
                return Err(invalid(format!(
                    "--projection {} changes the covariance, which --algo {} does not have",
                    format!("{p:?}").to_lowercase(),
                    self.algorithm.name()
                )));
            }
        }
        Ok(CwConfig {
            rule,
            projection: self.projection.unwrap_or(ProjectionKind::Kl),
            constraints: self.constraints,
            k: self.k.unwrap_or_default(),
            eta: self.eta.unwrap_or(default_eta(self.algorithm)),
            initial_variance: self.initial_variance,
            r: self.arow_r,
            c: self.c,
            average,
            binary: self.binary,
            // CW's base is the idf prior, which wins ties and is kept when the held-out fifth
            // is too small to choose on: on few documents the prior is most of the model, and
            // with it a few refiles teach a new folder (the fixtures' scenario of issue 16:
            // 1.0 of the new folder's posts against 0.1 with the flat prior).
            prior: self.prior.unwrap_or(match self.algorithm {
                Algorithm::Cw => WeightPrior::Idf,
                _ => WeightPrior::Flat,
            }),
        })
    }

    /// The subword vocabulary to train, checked; `None` for word features.
    fn subword_spec(&self) -> Result<Option<SubwordSpec>> {
        let Some(kind) = self.subword else {
            if let Some(n) = self.vocab_size {
                return Err(invalid(format!(
                    "--vocab-size {n} needs --tokenizer bpe or wordpiece (words have no vocabulary to train)"
                )));
            }
            return Ok(None);
        };
        let tokenizer = kind.display_name();
        // Pieces are not words: a stop-word list would drop "a", "in" or "the" from inside
        // words, and a stemmer would cut pieces that are already stems or endings.
        if let Some(list) = self.stopwords.as_deref().filter(|l| *l != "none") {
            return Err(invalid(format!(
                "--stopwords {list} does not combine with --tokenizer {}: stop-word lists hold words, and would also drop pieces inside words (\"a\", \"in\"); {tokenizer} pieces are used without one",
                kind.flag()
            )));
        }
        if self.stem.is_some() {
            return Err(invalid(format!(
                "--stem does not combine with --tokenizer {}: {tokenizer} pieces are not words to stem",
                kind.flag()
            )));
        }
        if let Some(language) = self.elisions.as_deref().filter(|l| *l != "none") {
            return Err(invalid(format!(
                "--elisions {language} does not combine with --tokenizer {}: {tokenizer} pieces are not words to take an article off",
                kind.flag()
            )));
        }
        if self.resume.is_some() {
            return Err(invalid(
                "--tokenizer does not combine with --resume: a continued model keeps its own tokeniser and vocabulary".into(),
            ));
        }
        Ok(Some(SubwordSpec::new(
            kind,
            self.vocab_size.unwrap_or(DEFAULT_VOCAB_SIZE),
        )?))
    }

    /// The settings before the checks of [`TrainRequest::plan`] (stop-word lists are loaded).
    fn settings(&self) -> Result<TrainSettings> {
        let mut filters = vec![
            FilterConfig::Lowercase,
            FilterConfig::MaxLength {
                chars: self.max_token_length,
            },
        ];
        let default_list = match self.subword {
            None => "english",
            Some(_) => "none",
        };
        // Before the stop words and the stemmer, as `PipelineConfig::set_elisions` puts them.
        if let Some(name) = self.elisions.as_deref().filter(|l| *l != "none") {
            filters.push(FilterConfig::Elisions {
                name: name.to_string(),
                articles: elisions::load(name)?,
            });
        }
        let list = self.stopwords.as_deref().unwrap_or(default_list);
        if list != "none" {
            filters.push(FilterConfig::StopWords {
                name: list.to_string(),
                words: stopwords::load(list)?,
            });
        }
        if let Some(language) = self.stem {
            filters.push(FilterConfig::Stem { language });
        }
        Ok(TrainSettings {
            pipeline: PipelineConfig {
                filters,
                max_ngram: self.ngrams.unwrap_or(DEFAULT_NGRAMS),
                hash_bits: self
                    .hash_bits
                    .unwrap_or(PipelineConfig::default().hash_bits),
                values: ValueConfig {
                    kind: self.values,
                    l2_normalize: self.normalize,
                },
                bias: self.bias,
                email_headers: self.email_headers,
                header_fields: self.email_headers && self.header_fields,
                field_rule: self.field_rule.unwrap_or(FieldRule::Stable),
                html_text: self.html_text,
                symbols: self.symbols,
                char_ngrams: self.char_ngrams.fixed(),
                first_word: self.first_word,
                ngram_weight_per_mille: self.ngram_weight.filter(|&w| w != 1000),
                max_document_bytes: self.max_document_bytes,
                max_tokens: self.max_tokens,
                max_mime_depth: self.max_mime_depth,
                ..PipelineConfig::default()
            },
            learner: self.learner()?,
            epochs: self.epochs,
            seed: self.seed,
            encoding: self.encoding,
            calibrate: self.calibrate,
            sharding: Sharding {
                shards: self.shards,
                mix: self.mix,
            },
            choose: self.choose(),
            text_length: None,
        })
    }

    /// What `train` chooses itself: the stop words and CW's prior, unless given (or fixed by
    /// a continued model, a cluster run or subword pieces, which take no stop words).
    fn choose(&self) -> Choose {
        let fixed = self.resume.is_some() || self.cluster.is_some();
        Choose {
            stopwords: !fixed && self.stopwords.is_none() && self.subword.is_none(),
            prior: !fixed && self.prior.is_none() && self.algorithm == Algorithm::Cw,
            label_shift: !fixed && self.label_shift,
            // CW as the defaults have it: no rule, η, constraints, projection, prior or
            // formulation asked for.
            soft_rule: !fixed
                && self.algorithm == Algorithm::Cw
                && self.update.is_none()
                && self.eta.is_none()
                && self.prior.is_none()
                && self.k.is_none()
                && self.projection.is_none()
                && self.constraints == ConstraintKind::Single
                && !self.binary,
            // Header fields read, their rule not asked for. Kept for mail only
            // (`choose_by_text_length`).
            every_field: !fixed
                && self.email_headers
                && self.header_fields
                && self.field_rule.is_none(),
            // The hash bits and the character n-grams are decided from a sample of the whole
            // corpus, so a cluster's processes decide them alike (counting the processes as
            // shards for the bits, so that the cluster hashes as `--shards N --mix`).
            hash_bits: self.resume.is_none() && self.hash_bits.is_none(),
            // Kept for long texts of small corpora that are not mail (`choose_by_text_length`).
            ngram_weight: !fixed
                && self.ngram_weight.is_none()
                && self.ngrams.unwrap_or(DEFAULT_NGRAMS) > 1
                && self.shards == 1
                && self.subword.is_none(),
            // Decided from a sample of the whole corpus, as the character n-grams are.
            elisions: self.resume.is_none() && self.elisions.is_none() && self.subword.is_none(),
            // Decided from a sample of the whole corpus, as the character n-grams are.
            unspaced_ngrams: self.resume.is_none()
                && self.ngrams.is_none()
                && self.subword.is_none(),
            chars: match self.char_ngrams {
                CharNgramsRequest::Chosen(c) if self.resume.is_none() && self.subword.is_none() => {
                    Some(c)
                }
                _ => None,
            },
        }
    }
}

/// Something [`TrainPlan::train`] did, for people, as it happens.
pub type Notes<'a> = &'a mut dyn FnMut(String);

/// What [`TrainPlan::train`] produced.
pub struct TrainOutcome {
    /// The model and how it was trained.
    pub trained: Trained,
    /// Texts kept per bucket, when the vocabulary was kept.
    pub vocabulary_buckets: Option<usize>,
}

impl TrainPlan {
    /// A plan from settings made in code rather than asked for (`tune`'s winner, a model of the
    /// experiments), checked by the rules that apply to them: the epochs and shards in range,
    /// every pipeline and learner value, subword pieces without stop words or stems, and a
    /// choice ([`TrainSettings::choose`]) only of English stop words or none and only of CW's
    /// η. Each error names the bad value. The plan trains from the prior, with no vocabulary
    /// kept.
    pub fn from_settings(settings: TrainSettings) -> Result<TrainPlan> {
        check_epochs(settings.epochs)?;
        check_shards(settings.sharding.shards)?;
        check_model_settings(&settings)?;
        Ok(TrainPlan {
            settings,
            subword: None,
            cluster: None,
            keep_vocabulary: None,
            resume: None,
            cache: CacheSettings::default(),
        })
    }

    /// The settings the run trains with.
    pub fn settings(&self) -> &TrainSettings {
        &self.settings
    }

    /// Where the run keeps the featurised corpus (by default: memory up to
    /// [`crate::jobs::feature_cache::DEFAULT_MEMORY_BUDGET`], then a temporary file); the same
    /// model either way.
    pub fn with_cache(mut self, cache: CacheSettings) -> Self {
        self.cache = cache;
        self
    }

    /// The subword vocabulary the run trains first, if any.
    pub fn subword(&self) -> Option<&SubwordSpec> {
        self.subword.as_ref()
    }

    /// The model file the run continues, if any.
    pub fn resume(&self) -> Option<&std::path::Path> {
        self.resume.as_deref()
    }

    /// The cluster run, if one was asked for.
    pub fn cluster(&self) -> Option<&ClusterRequest> {
        self.cluster.as_ref()
    }

    /// Takes a continued model's pipeline, learner settings and encoding (a request with
    /// `resume`), and checks them.
    pub fn continue_from(&mut self, model: &Model) -> Result<()> {
        if self.resume.is_none() {
            return Err(invalid(
                "continuing a model needs a request with resume".into(),
            ));
        }
        self.settings.pipeline = model.header.pipeline.clone();
        let LearnerConfig::Cw(config) = &model.header.learner;
        self.settings.learner = config.clone();
        self.settings.encoding = model.header.encoding;
        self.settings.pipeline.validate()?;
        self.settings.learner.clone().validate()?;
        Ok(())
    }

    /// Trains the subword vocabulary on `corpus`, if the plan has one, and puts it into the
    /// pipeline. [`TrainPlan::train`] calls it; a cluster run calls it alone.
    pub fn train_vocabulary(&mut self, corpus: &LabelledCorpus, notes: Notes) -> Result<()> {
        let Some(spec) = &self.subword else {
            return Ok(());
        };
        let start = Instant::now();
        notes(format!(
            "training a {} vocabulary of at most {} pieces on {} documents",
            spec.kind().display_name(),
            spec.vocab_size(),
            corpus.files.len()
        ));
        let trained = train_vocabulary(corpus, spec, self.settings.pipeline.input_limits())?;
        notes(format!(
            "trained a {} vocabulary of {} pieces on {} documents in {:.1}s",
            spec.kind().display_name(),
            trained.pieces,
            trained.documents,
            start.elapsed().as_secs_f64()
        ));
        self.settings.pipeline.tokenizer = trained.tokenizer;
        self.subword = None;
        Ok(())
    }

    /// What the plan decides from how long `corpus`'s documents are (the median of a sample of
    /// them, [`crate::text::length`]), and says so: character n-grams beside the words, when it
    /// chooses them, for short texts and small corpora; and no stop-word list, when it chooses
    /// the stop words, for short texts
    /// ([`crate::text::length::TextLength::keeps_every_word`]): no list is then among the
    /// candidates, and for long texts the list is the sampled documents' language's
    /// ([`Self::stop_words_of_the_language`]); that the soft rule is tried beside CW when it may be
    /// chosen ([`crate::jobs::train::soft_rule`]); for mail, every header field
    /// whole beside the stable rule when the rule may be chosen ([`Choose::every_field`]); n-grams
    /// up to three for text written without spaces, when the n-grams were not given
    /// ([`Choose::unspaced_ngrams`]); the elided articles of the sample's language taken off
    /// words, when they were not given ([`Self::elisions_of_the_language`]). The sample's length
    /// goes into the settings, for the model to record.
    fn choose_by_text_length(&mut self, corpus: &LabelledCorpus, notes: Notes) {
        let chars = self.settings.choose.chars;
        let soft_rule = self.settings.choose.soft_rule;
        let every_field = std::mem::take(&mut self.settings.choose.every_field);
        let ngram_weight = std::mem::take(&mut self.settings.choose.ngram_weight);
        let elisions = std::mem::take(&mut self.settings.choose.elisions);
        let uses_length = chars.is_some()
            || self.settings.choose.stopwords
            || soft_rule
            || every_field
            || ngram_weight
            || self.settings.choose.hash_bits
            || self.settings.choose.unspaced_ngrams;
        if !uses_length && !elisions {
            return;
        }
        let sample = sample_documents(corpus, self.settings.pipeline.input_limits());
        // The sample's language, for the elisions and for long texts' stop words: detected once,
        // and only when one of them is chosen.
        let language = (elisions || self.settings.choose.stopwords)
            .then(|| crate::text::language::stemming(&sample));
        if let (true, Some(language)) = (elisions, language) {
            self.elisions_of_the_language(language, notes);
        }
        // The length is recorded only when a choice by it was left to the plan: the elisions
        // alone leave the model as it was.
        if !uses_length {
            return;
        }
        let Some(length) = TextLength::of(&sample, corpus.files.len()) else {
            return;
        };
        self.settings.text_length = Some(length);
        if let Some(chars) = chars {
            if length.wants_char_ngrams() {
                self.settings.pipeline.char_ngrams = Some(chars);
                notes(format!(
                    "character n-grams beside the words ({}): {}; {}",
                    chars.describe(),
                    length.reason(),
                    length.describe()
                ));
            } else {
                notes(format!(
                    "words without character n-grams: {}; {}",
                    length.describe(),
                    length.reason()
                ));
            }
        }
        if std::mem::take(&mut self.settings.choose.unspaced_ngrams) && length.is_unspaced() {
            self.settings.pipeline.max_ngram = crate::text::length::UNSPACED_NGRAMS;
            notes(format!(
                "n-grams up to {}: {}",
                crate::text::length::UNSPACED_NGRAMS,
                length.unspaced_reason()
            ));
        }
        if self.settings.choose.stopwords && length.keeps_every_word() {
            self.settings.pipeline.drop_stop_words();
            self.settings.choose.stopwords = false;
            notes(format!(
                "stop words none: short texts (a median of at most {} words) keep every word, since a list would drop the question words and negations that often decide their labels; no list is tried",
                crate::text::length::SHORT_TEXT_WORDS
            ));
        }
        if let (true, Some(language)) = (self.settings.choose.stopwords, language) {
            self.stop_words_of_the_language(language, notes);
        }
        if soft_rule {
            notes(format!(
                "the soft rule beside CW: SCW-I (C {}, η {}, prior flat) with the chosen settings, compared after the run's epochs and taken only when clearly more accurate held out, since CW learns labels filed by mistake and labels that texts cannot tell",
                crate::jobs::train::SOFT_RULE_C,
                crate::jobs::train::SOFT_RULE_ETA
            ));
        }
        if let Some(why) = self.settings.choose_hash_bits(&length, corpus.labels.len()) {
            notes(why);
        }
        self.settings.choose.ngram_weight = ngram_weight && length.tries_lighter_ngrams();
        if self.settings.choose.ngram_weight {
            notes(format!(
                "bigrams at full weight and at {}, compared on the held-out fifth after the run's epochs: long documents (a median of at least {} words) of a corpus of at most {} words, where a document's many rare bigrams may carry what its words should",
                f32::from(crate::jobs::train::LIGHTER_NGRAMS) / 1000.0,
                crate::text::length::LIGHTER_NGRAMS_MIN_WORDS,
                crate::text::length::thousands(crate::text::length::LIGHTER_NGRAMS_MAX_WORDS)
            ));
        }
        self.settings.choose.every_field = every_field && length.is_mail();
        if self.settings.choose.every_field {
            notes(
                format!("header fields by the stable rule (the fields and parts that recur in later mail), and each setting also with every field whole (dates, queue ids and relays' addresses too), taken only when more accurate by three standard errors on a held-out fifth of at least {} documents (over {} cross-validation folds after the run's epochs when fewer are held out), since folders that are periods are told apart by what the stable rule leaves out", crate::jobs::train::MIN_SELECTION_DOCUMENTS, crate::jobs::train::SELECTION_FOLDS),
            );
        }
    }

    /// The list that the stop-word choice tries beside none, for long texts: the built-in list
    /// of the sampled documents' language ([`crate::text::language`]) in place of the English
    /// one, when a language with a Snowball list is detected
    /// ([`crate::jobs::train::list_to_try`]); the English list otherwise (English, or no
    /// language detected with confidence, or one without a list). On Debian's package
    /// descriptions in French, Italian and Spanish the language's own list was 0.9 to 1.3
    /// points more accurate on the test split than the English one, on two seeds each (German
    /// −0.4 and −0.6, Russian −0.2 and 0; `benches/results/`
    /// `stop-words-languages-2026-12-07.md`). Nothing changes for an English corpus.
    fn stop_words_of_the_language(&mut self, language: Stemming, notes: Notes) {
        // Only the default English list gives way.
        if self.settings.pipeline.stop_words_name() != Some("english") {
            return;
        }
        let list = crate::jobs::train::list_to_try(&self.settings.pipeline, language);
        if list == "english" {
            return;
        }
        let Ok(words) = stopwords::load(list) else {
            return;
        };
        // In the default list's place, before any stemming.
        let Some(filter) = (self.settings.pipeline.filters.iter_mut())
            .find(|f| matches!(f, FilterConfig::StopWords { .. }))
        else {
            return;
        };
        *filter = FilterConfig::StopWords {
            name: list.to_string(),
            words,
        };
        notes(format!(
            "stop words {list} or none: the sampled documents are in {list}, so its list is tried in place of the English one"
        ));
    }

    /// The elided articles of the sampled documents' language taken off words
    /// ([`crate::text::pipeline::elisions`]), when it has a list (French, Italian): a rule, not
    /// a trial on the held-out fifth. On Debian's French and Italian package descriptions and
    /// French book reviews it was more accurate on the test split on 13 of 15 random splits, by
    /// +0.75 points on the mean (`benches/results/elisions-2026-12-08.md`). A pipeline with
    /// elisions of its own keeps them.
    fn elisions_of_the_language(&mut self, language: Stemming, notes: Notes) {
        let added =
            crate::jobs::train::add_elisions_of_the_language(&mut self.settings.pipeline, language);
        if let Some((name, articles)) = added {
            notes(format!(
                "elided articles taken off words ({}, …): the sampled documents are in {name}, whose articles UAX #29 keeps inside the word (l'homme and homme would be two words)",
                articles.iter().take(3).map(|a| format!("{a}'")).collect::<Vec<_>>().join(", ")
            ));
        }
    }

    /// Runs the plan on `corpus`: the subword vocabulary, training (continuing `start` when
    /// the plan continues a model), and the kept vocabulary (also when `start` kept one).
    pub fn train(
        mut self,
        corpus: &LabelledCorpus,
        start: Option<&Model>,
        progress: &dyn Progress,
        notes: Notes,
    ) -> Result<TrainOutcome> {
        if self.cluster.is_some() {
            return Err(invalid(
                "a --cluster plan trains with TrainPlan::train_cluster".into(),
            ));
        }
        if start.is_some() != self.resume.is_some() {
            return Err(invalid(
                "a model to continue goes with a request with resume, and only with one".into(),
            ));
        }
        self.train_vocabulary(corpus, notes)?;
        self.choose_by_text_length(corpus, notes);
        let mut trained = train_corpus(
            corpus,
            &self.settings,
            start,
            &self.cache,
            progress,
            &mut *notes,
        )?;
        let kept = match (start, &self.resume) {
            (Some(m), Some(path)) => m.vocabulary().map_err(|kind| Error::Model {
                path: path.clone(),
                kind,
            })?,
            _ => None,
        };
        let mut vocabulary_buckets = None;
        if self.keep_vocabulary.is_some() || kept.is_some() {
            let started = Instant::now();
            let per_bucket = self.keep_vocabulary.unwrap_or_else(|| {
                kept.as_ref()
                    .map_or(DEFAULT_TEXTS_PER_BUCKET, |v| v.texts_per_bucket())
            });
            // The vocabulary keeps texts per bucket anyway: the file list is read into memory.
            let seen = Vocabulary::collect(
                &corpus.files.to_vec()?,
                |(s, _)| s,
                &self.settings.pipeline,
                per_bucket,
                progress,
            )?;
            let vocabulary = match kept {
                Some(old) => Vocabulary::union([&*old, &seen]),
                None => seen,
            };
            notes(format!(
                "kept the vocabulary: texts for {} buckets, collected in {:.1}s",
                vocabulary.len(),
                started.elapsed().as_secs_f64()
            ));
            vocabulary_buckets = Some(vocabulary.len());
            trained.model.set_vocabulary(Some(vocabulary));
        }
        Ok(TrainOutcome {
            trained,
            vocabulary_buckets,
        })
    }
}

#[cfg(feature = "cluster")]
impl TrainPlan {
    /// Runs a `--cluster` plan: this process trains its share of the corpus in `dir` and mixes
    /// with the others after every epoch; process 0 writes the model to `output` and gets its
    /// outcome. With a subword tokeniser every process first trains the same vocabulary on the
    /// whole corpus (training is deterministic), so no process has to send it to the others.
    pub fn train_cluster(
        mut self,
        dir: &std::path::Path,
        filter: &crate::jobs::corpus::FileFilter,
        options: &crate::jobs::corpus::CorpusOptions,
        output: &std::path::Path,
        notes: Notes,
    ) -> Result<Option<crate::jobs::cluster::ClusterOutcome>> {
        let Some(request) = self.cluster.clone() else {
            return Err(invalid(
                "train_cluster runs a plan made with a cluster request".into(),
            ));
        };
        if self.subword.is_some()
            || self.settings.choose.chars.is_some()
            || self.settings.choose.hash_bits
            || self.settings.choose.elisions
        {
            // Every process reads the whole corpus's list and decides the same: the vocabulary,
            // the character n-grams, the hash bits and the elisions are deterministic functions
            // of it.
            let corpus = crate::jobs::corpus::scan_corpus(dir, filter, options)?;
            self.train_vocabulary(&corpus, notes)?;
            self.choose_by_text_length(&corpus, notes);
        }
        let cluster = crate::jobs::cluster::ClusterConfig {
            processes: request.processes,
            process: request.process,
            hostfile: request.hostfile,
        };
        crate::jobs::cluster::train(
            &cluster,
            dir,
            filter,
            options,
            &self.settings,
            &self.cache,
            output,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The list the choice tries: the language's in place of the default English one, a list
    /// set in code as it is, English when the settings have none.
    #[test]
    fn the_list_to_try_is_the_languages_in_place_of_english() {
        use crate::jobs::train::list_to_try;
        use crate::text::language::Stemming;
        let with = |name: &str| {
            let mut p = PipelineConfig::default();
            p.drop_stop_words();
            p.filters.push(FilterConfig::StopWords {
                name: name.into(),
                words: stopwords::load(name).unwrap(),
            });
            p
        };
        let german = Stemming::In(StemLanguage::German);
        let greek = Stemming::In(StemLanguage::Greek);
        let english = Stemming::In(StemLanguage::English);
        assert_eq!(list_to_try(&with("english"), german), "german");
        assert_eq!(list_to_try(&with("english"), Stemming::Unknown), "english");
        assert_eq!(
            list_to_try(&with("english"), Stemming::NoStemmer),
            "english"
        );
        assert_eq!(list_to_try(&with("english"), greek), "english");
        assert_eq!(list_to_try(&with("english"), english), "english");
        assert_eq!(list_to_try(&with("french"), german), "french");
        let mut none = PipelineConfig::default();
        none.drop_stop_words();
        assert_eq!(list_to_try(&none, german), "english");
    }

    /// The request's plan must be refused with `message` in the error.
    fn refused(request: TrainRequest, message: &str) {
        let err = request.plan().expect_err("refused").to_string();
        assert!(err.starts_with("invalid setting: "), "{err}");
        assert!(err.contains(message), "{message:?} not in {err:?}");
    }

    #[test]
    fn the_defaults_make_a_plan() {
        let plan = TrainRequest::default().plan().unwrap();
        assert_eq!(
            plan.settings().choose,
            Choose {
                stopwords: true,
                prior: true,
                label_shift: true,
                chars: Some(CharNgrams::default()),
                soft_rule: true,
                every_field: true,
                hash_bits: true,
                ngram_weight: true,
                unspaced_ngrams: true,
                elisions: true,
            }
        );
        // CW's η when none is given: the one measured to serve most corpora.
        assert_eq!(plan.settings().learner.eta, TRAIN_ETA);
        assert!(plan.subword().is_none() && plan.cluster().is_none());
    }

    #[test]
    fn a_projection_needs_a_covariance() {
        refused(
            TrainRequest {
                algorithm: Algorithm::Pa1,
                projection: Some(ProjectionKind::L2),
                ..TrainRequest::default()
            },
            "--projection l2 changes the covariance, which --algo pa1 does not have",
        );
    }

    #[test]
    fn an_update_is_only_for_cw() {
        refused(
            TrainRequest {
                algorithm: Algorithm::Arow,
                update: Some(RuleKind::Var),
                ..TrainRequest::default()
            },
            "--update var picks the CW rule, but --algo arow has its own update",
        );
        refused(
            TrainRequest {
                update: Some(RuleKind::Pa),
                ..TrainRequest::default()
            },
            "--update takes var or stdev, but is pa",
        );
    }

    #[test]
    fn a_vocabulary_size_needs_a_subword_tokenizer() {
        refused(
            TrainRequest {
                vocab_size: Some(500),
                ..TrainRequest::default()
            },
            "--vocab-size 500 needs --tokenizer bpe or wordpiece",
        );
    }

    #[test]
    fn subword_pieces_take_no_stop_words_stems_or_resume() {
        let bpe = TrainRequest {
            subword: Some(SubwordKind::Bpe),
            ..TrainRequest::default()
        };
        refused(
            TrainRequest {
                stopwords: Some("english".into()),
                ..bpe.clone()
            },
            "--stopwords english does not combine with --tokenizer bpe",
        );
        refused(
            TrainRequest {
                subword: Some(SubwordKind::Wordpiece),
                stem: Some(StemLanguage::English),
                ..bpe.clone()
            },
            "--stem does not combine with --tokenizer wordpiece",
        );
        refused(
            TrainRequest {
                resume: Some("m.cwm".into()),
                ..bpe.clone()
            },
            "--tokenizer does not combine with --resume",
        );
        refused(
            TrainRequest {
                vocab_size: Some(50),
                ..bpe.clone()
            },
            "vocabulary size must be in [100, 1000000], but is 50",
        );
        let plan = TrainRequest {
            stopwords: Some("none".into()),
            ..bpe
        }
        .plan()
        .unwrap();
        assert_eq!(plan.subword().unwrap().vocab_size(), DEFAULT_VOCAB_SIZE);
        assert!(!plan.settings().choose.stopwords);
    }

    #[test]
    fn unknown_stop_words_are_named() {
        refused(
            TrainRequest {
                stopwords: Some("klingon".into()),
                ..TrainRequest::default()
            },
            "stop words \"klingon\" is neither a built-in list",
        );
    }

    #[test]
    fn shards_are_in_range() {
        for bad in [0, MAX_SHARDS + 1] {
            refused(
                TrainRequest {
                    shards: bad,
                    ..TrainRequest::default()
                },
                &format!("shards must be in [1, 1024], but is {bad}"),
            );
        }
    }

    #[test]
    fn a_cluster_run_is_one_shard_per_process() {
        let cluster = |processes, process, hostfile: Option<&str>| ClusterRequest {
            processes,
            process,
            hostfile: hostfile.map(PathBuf::from),
        };
        refused(
            TrainRequest {
                cluster: Some(cluster(1, 0, None)),
                shards: 2,
                ..TrainRequest::default()
            },
            "--cluster trains one shard per process",
        );
        refused(
            TrainRequest {
                cluster: Some(cluster(1, 0, None)),
                resume: Some("m.cwm".into()),
                ..TrainRequest::default()
            },
            "it does not combine with --shards or --resume",
        );
        refused(
            TrainRequest {
                cluster: Some(cluster(3, 0, None)),
                ..TrainRequest::default()
            },
            "--cluster with 3 processes needs --hostfile",
        );
        refused(
            TrainRequest {
                cluster: Some(cluster(0, 0, None)),
                ..TrainRequest::default()
            },
            "--cluster with 0 processes",
        );
        refused(
            TrainRequest {
                cluster: Some(cluster(2, 2, Some("hosts"))),
                ..TrainRequest::default()
            },
            "process index must be below the process count 2, but is 2",
        );
        refused(
            TrainRequest {
                cluster: Some(cluster(1, 0, None)),
                keep_vocabulary: Some(3),
                ..TrainRequest::default()
            },
            "keeping the vocabulary (3 per bucket) does not combine with --cluster",
        );
        let plan = TrainRequest {
            cluster: Some(cluster(2, 1, Some("hosts"))),
            ..TrainRequest::default()
        }
        .plan()
        .unwrap();
        assert_eq!(
            plan.settings().sharding,
            Sharding {
                shards: 2,
                mix: true
            }
        );
        // Nothing is chosen on a held-out fifth (each process holds only its share), but the
        // character n-grams, the hash bits and the elisions are decided from the whole corpus's
        // list, alike in every process.
        assert_eq!(
            plan.settings().choose,
            Choose {
                chars: Some(CharNgrams::default()),
                hash_bits: true,
                unspaced_ngrams: true,
                elisions: true,
                ..Choose::default()
            }
        );
    }

    /// Settings made in code must be refused with `message` in the error.
    fn settings_refused(settings: TrainSettings, message: &str) {
        let err = TrainPlan::from_settings(settings)
            .expect_err("refused")
            .to_string();
        assert!(err.starts_with("invalid setting: "), "{err}");
        assert!(err.contains(message), "{message:?} not in {err:?}");
    }

    #[test]
    fn settings_made_in_code_are_checked_as_a_request_is() {
        // What `cwtext train` asks for makes a plan either way.
        let asked = TrainRequest::default().plan().unwrap().settings().clone();
        let plan = TrainPlan::from_settings(asked.clone()).unwrap();
        assert_eq!(plan.settings().choose, asked.choose);
        assert!(plan.subword().is_none() && plan.resume().is_none() && plan.cluster().is_none());
        let base = TrainSettings::new(5, 1);
        TrainPlan::from_settings(base.clone()).unwrap();
        for epochs in [0, 1001] {
            settings_refused(
                TrainSettings::new(epochs, 1),
                &format!("epochs must be in [1, 1000], but is {epochs}"),
            );
        }
        settings_refused(
            TrainSettings {
                sharding: Sharding {
                    shards: 0,
                    mix: true,
                },
                ..base.clone()
            },
            "shards must be in [1, 1024], but is 0",
        );
        let mut bits = base.clone();
        bits.pipeline.hash_bits = 12;
        settings_refused(bits, "hash bits must be in [16, 26], but is 12");
        let mut eta = base.clone();
        eta.learner.eta = 1.5;
        settings_refused(eta, "eta must be in (0.5, 1), but is 1.5");
    }

    #[test]
    fn settings_made_in_code_choose_only_what_train_can_try() {
        let choose = |stopwords, prior| TrainSettings {
            choose: Choose {
                stopwords,
                prior,
                label_shift: false,
                chars: None,
                soft_rule: false,
                every_field: false,
                hash_bits: false,
                ngram_weight: false,
                unspaced_ngrams: false,
                elisions: false,
            },
            ..TrainSettings::new(5, 1)
        };
        TrainPlan::from_settings(choose(true, true)).unwrap();
        let mut arow = choose(false, true);
        arow.learner.rule = RuleKind::Arow;
        settings_refused(
            arow,
            "choosing the prior tries flat and idf with CW's rules (stdev, var), but the rule is arow",
        );
        let mut soft_arow = choose(false, false);
        soft_arow.choose.soft_rule = true;
        soft_arow.learner.rule = RuleKind::Arow;
        settings_refused(
            soft_arow,
            "choosing a soft rule tries SCW-I beside CW's rules (stdev, var), but the rule is arow",
        );
        let mut whole_without_fields = choose(false, false);
        whole_without_fields.choose.every_field = true;
        TrainPlan::from_settings(whole_without_fields.clone()).unwrap();
        whole_without_fields.pipeline.header_fields = false;
        settings_refused(
            whole_without_fields,
            "choosing the header-field rule tries every field whole beside the stable rule, but the pipeline reads no header fields or not by the stable rule",
        );
        let mut own_list = choose(true, false);
        for f in &mut own_list.pipeline.filters {
            if let FilterConfig::StopWords { name, .. } = f {
                *name = "mine.txt".into();
            }
        }
        settings_refused(
            own_list,
            "choosing the stop words tries a built-in list (danish, dutch, english, finnish, french, german, hungarian, italian, norwegian, portuguese, russian, spanish, swedish) and none, but the pipeline's list is mine.txt",
        );
        // A built-in list in another language is one the choice tries (the language's own).
        let mut german = choose(true, false);
        for f in &mut german.pipeline.filters {
            if let FilterConfig::StopWords { name, words } = f {
                *name = "german".into();
                *words = stopwords::load("german").unwrap();
            }
        }
        TrainPlan::from_settings(german).unwrap();
        // Without a list the choice tries english beside none.
        let mut none = choose(true, false);
        none.pipeline.drop_stop_words();
        TrainPlan::from_settings(none).unwrap();
        let mut lighter = choose(false, false);
        lighter.choose.ngram_weight = true;
        TrainPlan::from_settings(lighter.clone()).unwrap();
        let message = "choosing the n-grams' weight tries half weight beside full weight, but the pipeline has no n-grams or a weight of its own";
        let mut words_only = lighter.clone();
        words_only.pipeline.max_ngram = 1;
        settings_refused(words_only, message);
        lighter.pipeline.ngram_weight_per_mille = Some(250);
        settings_refused(lighter, message);
    }

    #[test]
    fn settings_made_in_code_keep_subword_pieces_apart_from_words() {
        use crate::text::pipeline::subword::Bpe;
        let mut bpe = TrainSettings::new(5, 1);
        bpe.pipeline.tokenizer = TokenizerConfig::Bpe(Bpe {
            pieces: Vec::new(),
            merges: Vec::new(),
        });
        settings_refused(
            bpe.clone(),
            "stop words english do not combine with bpe pieces",
        );
        bpe.pipeline.drop_stop_words();
        let mut stem = bpe.clone();
        stem.pipeline.filters.push(FilterConfig::Stem {
            language: StemLanguage::English,
        });
        settings_refused(stem, "stemming (english) does not combine with bpe pieces");
        let mut choose = bpe.clone();
        choose.choose.stopwords = true;
        settings_refused(
            choose,
            "choosing the stop words does not apply to bpe pieces",
        );
        TrainPlan::from_settings(bpe).unwrap();
    }

    #[test]
    fn epochs_are_in_range_in_a_request() {
        for bad in [0, 1001] {
            refused(
                TrainRequest {
                    epochs: bad,
                    ..TrainRequest::default()
                },
                &format!("epochs must be in [1, 1000], but is {bad}"),
            );
        }
    }

    #[test]
    fn kept_texts_per_bucket_are_at_least_one() {
        refused(
            TrainRequest {
                keep_vocabulary: Some(0),
                ..TrainRequest::default()
            },
            "the vocabulary must keep at least 1 text per bucket, but is 0",
        );
    }

    #[test]
    fn pipeline_and_learner_values_are_checked_in_the_plan() {
        refused(
            TrainRequest {
                hash_bits: Some(40),
                ..TrainRequest::default()
            },
            "40",
        );
        refused(
            TrainRequest {
                eta: Some(0.3),
                ..TrainRequest::default()
            },
            "0.3",
        );
        refused(
            TrainRequest {
                max_token_length: 0,
                ..TrainRequest::default()
            },
            "max token length must be at least 1, but is 0",
        );
        // A continued model brings its own pipeline: the request's is not checked.
        assert!(TrainRequest {
            hash_bits: Some(40),
            resume: Some("m.cwm".into()),
            ..TrainRequest::default()
        }
        .plan()
        .is_ok());
    }
}
