//! `cwtext train DIR -o MODEL`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use super::common::{FilterArgs, Ui};
use super::Outcome;
use cwtext::jobs::feature_cache::{CacheSettings, DEFAULT_MEMORY_BUDGET};
use cwtext::jobs::plan::{
    CharNgramsRequest, ClusterRequest, TrainOutcome, TrainPlan, TrainRequest,
};
use cwtext::learn::learner::{
    Algorithm, ConstraintKind, KBest, ProjectionKind, RuleKind, WeightPrior,
};
use cwtext::model::WeightEncoding;
use cwtext::text::pipeline::chargrams::CharNgrams;
use cwtext::text::pipeline::config::FieldRule;
use cwtext::text::pipeline::stem::StemLanguage;
use cwtext::text::pipeline::subword::SubwordKind;
use cwtext::text::pipeline::weighting::ValueKind;

const EXAMPLES: &str = "\
Examples:
  cwtext train corpus/ -o news.cwm
  cwtext train 20ng/ --include 'train-*' -o 20ng.cwm --epochs 10 --seed 7
  cwtext train mail/ -o mail.cwm --stopwords english --stem english --hash-bits 18
  cwtext train 20ng/ -o 20ng.cwm --constraints sequential -k 5 --update var
  cwtext train 20ng/ -o arow.cwm --algo arow --arow-r 0.5
  cwtext train mail/ -o pa.cwm --algo pa1 -C 0.1
  cwtext train mail/ -o bin.cwm --binary
  cwtext train sms/ -o sms.cwm --tokenizer bpe --vocab-size 8000";

/// What `--tokenizer` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TokenizerArg {
    /// UAX #29 words.
    Words,
    /// Byte-pair-encoding pieces of the words, from a vocabulary trained on DIR.
    Bpe,
    /// WordPiece pieces of the words (`##` inside a word), from a vocabulary trained on DIR.
    Wordpiece,
}

impl TokenizerArg {
    fn subword(self) -> Option<SubwordKind> {
        match self {
            TokenizerArg::Words => None,
            TokenizerArg::Bpe => Some(SubwordKind::Bpe),
            TokenizerArg::Wordpiece => Some(SubwordKind::Wordpiece),
        }
    }
}

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct TrainArgs {
    /// Corpus root: DIR/<label>/**/<file>, one folder per label (the files of a sub-folder
    /// below a label, such as a text's paragraphs, are held out together), or a mail store (Maildir,
    /// Maildir++, a directory of mbox files, MH) whose folders are the labels (see --layout);
    /// a folder of a file per label with a line per document (rt-polarity.pos,
    /// rt-polarity.neg); or one file of labelled rows: `__label__LABEL text` lines as fastText
    /// reads them, TREC's `COARSE:fine text`, LABEL<tab>TEXT, CSV with a label column, JSON
    /// lines.
    pub dir: PathBuf,
    /// Where to write the model (atomically: an existing file is replaced only when done).
    #[arg(short, long, value_name = "MODEL")]
    pub output: PathBuf,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Seed of the per-epoch shuffle: the same data, options and seed give the same model bytes.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Passes over the training data.
    #[arg(long, default_value_t = 5)]
    pub epochs: usize,
    /// Learning algorithm: CW and its relatives, or a first-order baseline. Unless this or
    /// another learner option is given, `train` also trains the chosen settings with SCW-I (C
    /// 0.3, η 0.99, flat prior) and takes it when clearly more accurate than CW on the held-out
    /// fifth after the run's epochs (labels filed by mistake, labels texts cannot tell).
    #[arg(long, value_enum, default_value_t = Algorithm::Cw, help_heading = "Learner")]
    pub algo: Algorithm,
    /// CW's update rule: stdev (JMLR Lemma 2, the default) or var (Lemma 1).
    #[arg(long, alias = "rule", value_name = "var|stdev", value_parser = parse_update,
          help_heading = "Learner")]
    pub update: Option<RuleKind>,
    /// Covariance projection to a diagonal: kl (default), l2, or exact (JMLR §6.2).
    #[arg(long, value_enum, help_heading = "Learner")]
    pub projection: Option<ProjectionKind>,
    /// Constraint strategy: single (k = 1), sequential, parallel or exact k-best.
    #[arg(long, value_enum, default_value_t = ConstraintKind::Single, help_heading = "Learner")]
    pub constraints: ConstraintKind,
    /// Competing labels per example for the k-best strategies: a number or 'all' (default 1; 5
    /// is EMNLP 2009's).
    #[arg(short, long, value_name = "K|all", help_heading = "Learner")]
    pub k: Option<KBest>,
    /// Confidence η in (0.5, 1): each constraint must hold with this probability (CW, SCW)
    /// [default: 0.9 for CW, 0.99 otherwise].
    #[arg(long, help_heading = "Learner")]
    pub eta: Option<f64>,
    /// Where each weight's variance starts: flat (a for every weight) or idf (a scaled by the
    /// squared idf of its feature in the training documents: rare words start less sure and
    /// move further on their first evidence, which is idf weighting held in the weights)
    /// [default: CW chooses on the held-out fifth, idf on a tie or when too few documents are
    /// held out; flat otherwise].
    #[arg(long, value_enum, help_heading = "Learner")]
    pub prior: Option<WeightPrior>,
    /// AROW's regulariser r > 0.
    #[arg(
        long = "arow-r",
        value_name = "R",
        default_value_t = 1.0,
        help_heading = "Learner"
    )]
    pub arow_r: f64,
    /// Aggressiveness C > 0 of SCW-I/II and PA-I/II.
    #[arg(
        short = 'C',
        long = "aggressiveness",
        value_name = "C",
        default_value_t = 1.0,
        help_heading = "Learner"
    )]
    pub c: f64,
    /// Two labels with one weight vector (the binary formulation) instead of one per label.
    #[arg(long, help_heading = "Learner")]
    pub binary: bool,
    /// Prior variance a of every weight (Σ₁ = a·I).
    #[arg(
        long,
        default_value_t = 1.0,
        value_name = "A",
        help_heading = "Learner"
    )]
    pub initial_variance: f64,
    /// Hash features into 2^B buckets (16..=26). Default: chosen, 18, or up to 21 for a
    /// corpus of many words and few labels (the shards' weight tables within 32 MiB together;
    /// not for mail).
    #[arg(long, value_name = "B")]
    pub hash_bits: Option<u8>,
    /// Longest n-gram: 1 = words only, 2 = words and bigrams, 3 = up to trigrams [default: 2,
    /// or 3 for text written without spaces between words (Chinese, Japanese, Thai), chosen
    /// from a sample of the documents]
    #[arg(long, value_name = "N")]
    pub ngrams: Option<usize>,
    /// Feature values.
    #[arg(long, value_enum, default_value_t = ValueKind::LogTf)]
    pub values: ValueKind,
    /// Do not scale documents to unit length.
    #[arg(long)]
    pub no_normalize: bool,
    /// Features from words, or from subword pieces: bpe and wordpiece first train a vocabulary
    /// on DIR (stored in the model) and split every word into its pieces.
    #[arg(long, value_enum, default_value_t = TokenizerArg::Words)]
    pub tokenizer: TokenizerArg,
    /// With --tokenizer bpe|wordpiece: the most pieces in the vocabulary, 100..=1000000
    /// [default: 8000].
    #[arg(long, value_name = "N")]
    pub vocab_size: Option<usize>,
    /// Stop words to drop: a built-in list (the Snowball project's: danish, dutch, english,
    /// finnish, french, german, hungarian, italian, norwegian, portuguese, russian, spanish,
    /// swedish), a file (one word a line), or none [default: with words, a list or none, chosen
    /// on the held-out fifth (none on a tie): the list of the language detected in 200 sampled
    /// documents, english where none with a list is detected; none for short texts (a median
    /// of at most 40 words, not mail), which keep every word; none with subword pieces].
    #[arg(long, value_name = "LIST|FILE|none")]
    pub stopwords: Option<String>,
    /// Snowball stemming language, or none [default: none].
    #[arg(long, value_name = "LANGUAGE|none", value_parser = stem_parser())]
    pub stem: Option<StemArg>,
    /// Elided articles to take off words (l'homme → homme, dell'anno → anno): french, italian,
    /// or none [default: with words, the language detected in 200 sampled documents when it is
    /// French or Italian, none otherwise and with subword pieces].
    #[arg(long, value_name = "LANGUAGE|none", value_parser = ["french", "italian", "none"])]
    pub elisions: Option<String>,
    /// No bias feature (per-label prior).
    #[arg(long)]
    pub no_bias: bool,
    /// No separate features for email Subject, From and To.
    #[arg(long)]
    pub no_email_headers: bool,
    /// No features from mail header fields other than Subject, From and To (List-Id, X-Mailer,
    /// Content-Type, the Received hosts, ...: by default each field's presence and its words,
    /// prefixed by its name; fields that name the message's moment or the owner's delivery, such
    /// as Date and Delivered-To, are never features).
    #[arg(long)]
    pub no_header_fields: bool,
    /// Which parts of those fields: stable (the fields and parts that recur in later mail:
    /// Received's host names, not its dates, queue ids or addresses; no Date) or whole (every
    /// field, its whole value) [default: chosen for mail: stable, unless every field whole is
    /// more accurate on the held-out fifth by more than three standard errors; stable
    /// otherwise].
    #[arg(
        long,
        value_enum,
        value_name = "RULE",
        conflicts_with = "no_header_fields"
    )]
    pub field_rule: Option<FieldRule>,
    /// Only words are features: no punctuation, symbols or emoji between them (by default they
    /// are features too).
    #[arg(long)]
    pub no_symbols: bool,
    /// Character n-grams of every word beside the words: their lengths N-M (as 3-5, the
    /// brackets around the word counting as characters), or none [default: 3-5 for short texts
    /// (the median of 200 of the documents has at most 40 words: questions, sentences,
    /// messages) and small corpora (at most 250,000 words), unless most documents are mail;
    /// none otherwise, and with subword pieces or --resume].
    #[arg(long, value_name = "N-M|none", value_parser = parse_char_ngrams)]
    pub char_ngrams: Option<CharNgramsArg>,
    /// The character n-grams' weight beside the words: each view is scaled to unit length,
    /// the characters' then multiplied by W, in (0, 10] [default: 0.5].
    #[arg(long, value_name = "W", value_parser = parse_char_weight)]
    pub char_weight: Option<u16>,
    /// The text's first word as a feature of its own too, marked as first (`first:how`): for
    /// short texts whose opening tells their label (a collection's formula, a question's
    /// type). Off by default: over five random splits of 11 short-text corpora it gained
    /// fortune categories 1.2 points and cost New York Times sentences 0.6.
    #[arg(long)]
    pub first_word: bool,
    /// The n-grams' (bigrams') weight beside the words: each n-gram's value is multiplied by W
    /// before the document is scaled to unit length, in (0, 10] [default: 1, n-grams count as
    /// words do; on documents of 100 words and more (the median) in corpora up to 1.5 million
    /// words, 0.5 when the held-out fifth finds it more accurate]. Below 1 the many rare bigrams of long documents carry less: on
    /// whole movie reviews 0.5 gained 1.4 points over five random splits; on 20 Newsgroups it
    /// cost 0.6.
    #[arg(long, value_name = "W", value_parser = parse_ngram_weight)]
    pub ngram_weight: Option<u16>,
    /// Read HTML as it is: a page's markup, style sheets and scripts become features, and a
    /// mail's HTML part is read by mail-parser's conversion, which joins the words on both
    /// sides of a tag. By default a file that is an HTML page (and a mail's HTML part) is read
    /// as its text: its title, then its words, kept apart at block-level tags.
    #[arg(long)]
    pub raw_html: bool,
    /// Read at most this many bytes of a document (the rest is cut off with a warning).
    #[arg(long, default_value_t = cwtext::text::pipeline::DEFAULT_MAX_DOCUMENT_BYTES, value_name = "BYTES")]
    pub max_document_bytes: usize,
    /// Use at most this many tokens of a document (the rest are dropped with a warning).
    #[arg(long, default_value_t = cwtext::text::pipeline::DEFAULT_MAX_TOKENS, value_name = "N")]
    pub max_tokens: usize,
    /// Read mail text parts at most this many multipart levels deep (deeper ones are skipped
    /// with a warning).
    #[arg(long, default_value_t = cwtext::text::pipeline::DEFAULT_MAX_MIME_DEPTH, value_name = "LEVELS")]
    pub max_mime_depth: usize,
    /// Drop tokens longer than this many characters.
    #[arg(long, default_value_t = 40, value_name = "CHARS")]
    pub max_token_length: usize,
    /// Do not fit the probability scale on a held-out fifth (probabilities then follow η alone;
    /// with settings fixed, training then runs once from the prior instead of on four fifths and
    /// then on everything).
    #[arg(long)]
    pub no_calibrate: bool,
    /// Do not raise rarer labels' scores (the label shift that `train` otherwise chooses on the
    /// held-out fifth, kept at none unless it is more accurate there by more than a standard
    /// error).
    #[arg(long)]
    pub no_label_shift: bool,
    /// Train N shards in parallel threads on disjoint parts of the corpus (by a hash of each
    /// file's path) and merge them by KL combination (JMLR 2012 §7.10).
    #[arg(
        long,
        default_value_t = 1,
        value_name = "N",
        help_heading = "Distributed"
    )]
    pub shards: usize,
    /// With --shards: re-mix the shards after every epoch (iterative parameter mixing).
    #[arg(long, requires = "shards", help_heading = "Distributed")]
    pub mix: bool,
    /// Train across processes (and machines) on timely dataflow: this process trains its share
    /// of DIR and KL-mixes with the others after every epoch; process 0 writes the model.
    #[arg(long, help_heading = "Distributed")]
    pub cluster: bool,
    /// With --cluster: the number of processes.
    #[arg(
        long,
        default_value_t = 1,
        value_name = "N",
        requires = "cluster",
        help_heading = "Distributed"
    )]
    pub processes: usize,
    /// With --cluster: this process's index, 0 to N−1.
    #[arg(
        long,
        default_value_t = 0,
        value_name = "I",
        requires = "cluster",
        help_heading = "Distributed"
    )]
    pub process: usize,
    /// With --cluster: a file of "host:port" lines, one per process, in index order.
    #[arg(
        long,
        value_name = "FILE",
        requires = "cluster",
        help_heading = "Distributed"
    )]
    pub hostfile: Option<PathBuf>,
    /// Continue training this model on DIR (its pipeline and learner settings are used; new
    /// labels are added). -o may name the same file.
    #[arg(long, value_name = "MODEL")]
    pub resume: Option<PathBuf>,
    /// Weight precision in the model file (f16 halves the size).
    #[arg(long, value_enum, default_value_t = WeightEncoding::F32)]
    pub encoding: WeightEncoding,
    /// Keep the words and n-grams behind the hash buckets in the model (the N most frequent per
    /// bucket, default 3), so that `inspect` names features and `explain` shows what shares a
    /// bucket. Reads the corpus a second time; the file grows (20 Newsgroups, 2^18 buckets: about
    /// 14 MB with N = 3, 7 MB with N = 1). Kept when --resume continues a model that has one.
    #[arg(long, value_name = "N", num_args = 0..=1,
          default_missing_value = "3", conflicts_with = "cluster")]
    pub keep_vocabulary: Option<usize>,
    /// Keep the featurised corpus in cache files in DIR (one per pipeline tried) and use them
    /// again in later runs on the same corpus and pipeline; a cache that no longer matches (a
    /// file added, changed or removed, another pipeline) is made again.
    #[arg(long, value_name = "DIR", help_heading = "Memory")]
    pub cache: Option<PathBuf>,
    /// Hold the featurised corpus in memory up to this many MB, then in a temporary cache file
    /// on disk (in TMPDIR, removed when cwtext ends however it ends); 0: always on disk. The
    /// model is the same either way.
    #[arg(long, value_name = "MB", default_value_t = DEFAULT_MEMORY_BUDGET >> 20,
          help_heading = "Memory")]
    pub memory_budget: u64,
}

#[cfg(feature = "cluster")]
fn run_cluster(args: &TrainArgs, plan: TrainPlan, ui: &Ui) -> anyhow::Result<Outcome> {
    let request = plan.cluster().expect("a cluster plan").clone();
    let start = Instant::now();
    let filter = args.filter.build()?;
    let options = args.filter.options(2);
    let outcome = plan.train_cluster(&args.dir, &filter, &options, &args.output, &mut |note| {
        ui.info(note)
    })?;
    match outcome {
        Some(o) => ui.info(format!(
            "process 0 of {}: wrote {} ({} documents, {} skipped) in {:.1}s",
            request.processes,
            args.output.display(),
            o.documents,
            o.skipped,
            start.elapsed().as_secs_f64()
        )),
        None => ui.info(format!(
            "process {} of {}: done in {:.1}s (process 0 writes the model)",
            request.process,
            request.processes,
            start.elapsed().as_secs_f64()
        )),
    }
    Ok(Outcome::Success)
}

#[cfg(not(feature = "cluster"))]
fn run_cluster(_: &TrainArgs, _: TrainPlan, _: &Ui) -> anyhow::Result<Outcome> {
    anyhow::bail!("this cwtext was built without the `cluster` feature: rebuild with `cargo build --release --features cluster`")
}

/// `--update` names only CW's rules.
fn parse_update(s: &str) -> Result<RuleKind, String> {
    match s {
        "var" => Ok(RuleKind::Var),
        "stdev" => Ok(RuleKind::Stdev),
        _ => Err(format!("the CW update is var or stdev, not {s:?}")),
    }
}

/// `--char-ngrams`'s value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CharNgramsArg {
    None,
    /// N-M (the range is checked with the pipeline).
    Range(u8, u8),
}

/// `--char-weight`: in (0, 10], as the model stores it (thousandths, at least one).
fn parse_char_weight(s: &str) -> Result<u16, String> {
    match s.trim().parse::<f64>() {
        Ok(w) if w > 0.0 && w <= 10.0 => Ok(((w * 1000.0).round() as u16).max(1)),
        _ => Err(format!(
            "the weight of character n-grams must be in (0, 10], but is {s}"
        )),
    }
}

/// `--ngram-weight`: in (0, 10], as the model stores it (thousandths, at least one).
fn parse_ngram_weight(s: &str) -> Result<u16, String> {
    match s.trim().parse::<f64>() {
        Ok(w) if w > 0.0 && w <= 10.0 => Ok(((w * 1000.0).round() as u16).max(1)),
        _ => Err(format!(
            "the weight of n-grams must be in (0, 10], but is {s}"
        )),
    }
}

/// `--stem`: a Snowball language, or none (no stemming, as without the flag; `tune` prints
/// `stem=none`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StemArg(pub Option<StemLanguage>);

/// `--stem`'s values: none, then the languages, listed in `--help` and in the error for
/// another value.
fn stem_parser() -> impl clap::builder::TypedValueParser<Value = StemArg> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    use clap::ValueEnum;
    let languages = StemLanguage::value_variants()
        .iter()
        .filter_map(ValueEnum::to_possible_value);
    PossibleValuesParser::new(std::iter::once(PossibleValue::new("none")).chain(languages))
        .map(|name| StemArg(StemLanguage::from_str(&name, false).ok()))
}

fn parse_char_ngrams(s: &str) -> Result<CharNgramsArg, String> {
    if s == "none" {
        return Ok(CharNgramsArg::None);
    }
    let bad = || format!("character n-grams are N-M (as 3-5) or none, not {s:?}");
    let (a, b) = s.split_once('-').ok_or_else(bad)?;
    Ok(CharNgramsArg::Range(
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    ))
}

impl TrainArgs {
    /// `--char-ngrams` and `--char-weight` as a request (a weight with `none` is refused
    /// where the flags are checked).
    fn char_ngrams_request(&self) -> CharNgramsRequest {
        let weight = |c: CharNgrams| CharNgrams {
            weight_per_mille: self.char_weight.unwrap_or(c.weight_per_mille),
            ..c
        };
        match self.char_ngrams {
            None => CharNgramsRequest::Chosen(weight(CharNgrams::default())),
            Some(CharNgramsArg::None) => CharNgramsRequest::Never,
            Some(CharNgramsArg::Range(min, max)) => CharNgramsRequest::Always(weight(CharNgrams {
                min,
                max,
                ..CharNgrams::default()
            })),
        }
    }

    /// The flags as a library request (checked by [`TrainRequest::plan`]).
    pub fn request(&self) -> TrainRequest {
        TrainRequest {
            algorithm: self.algo,
            update: self.update,
            projection: self.projection,
            constraints: self.constraints,
            k: self.k,
            eta: self.eta,
            prior: self.prior,
            arow_r: self.arow_r,
            c: self.c,
            binary: self.binary,
            initial_variance: self.initial_variance,
            hash_bits: self.hash_bits,
            ngrams: self.ngrams,
            values: self.values,
            normalize: !self.no_normalize,
            subword: self.tokenizer.subword(),
            vocab_size: self.vocab_size,
            stopwords: self.stopwords.clone(),
            stem: self.stem.and_then(|s| s.0),
            elisions: self.elisions.clone(),
            bias: !self.no_bias,
            email_headers: !self.no_email_headers,
            header_fields: !self.no_header_fields,
            field_rule: self.field_rule,
            html_text: !self.raw_html,
            symbols: !self.no_symbols,
            char_ngrams: self.char_ngrams_request(),
            first_word: self.first_word,
            ngram_weight: self.ngram_weight,
            max_document_bytes: self.max_document_bytes,
            max_tokens: self.max_tokens,
            max_mime_depth: self.max_mime_depth,
            max_token_length: self.max_token_length,
            calibrate: !self.no_calibrate,
            label_shift: !self.no_label_shift,
            epochs: self.epochs,
            seed: self.seed,
            encoding: self.encoding,
            shards: self.shards,
            mix: self.mix,
            resume: self.resume.clone(),
            cluster: self.cluster.then(|| ClusterRequest {
                processes: self.processes,
                process: self.process,
                hostfile: self.hostfile.clone(),
            }),
            keep_vocabulary: self.keep_vocabulary,
            cache: CacheSettings {
                memory_budget: self.memory_budget.saturating_mul(1 << 20),
                dir: self.cache.clone(),
                ..CacheSettings::default()
            },
        }
    }
}

/// Flags → plan → run → summary.
pub fn run(args: TrainArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    if args.char_ngrams == Some(CharNgramsArg::None) && args.char_weight.is_some() {
        anyhow::bail!("--char-weight weighs character n-grams, but --char-ngrams is none");
    }
    if args.ngrams == Some(1) && args.ngram_weight.is_some() {
        anyhow::bail!("--ngram-weight weighs bigrams and longer n-grams, but --ngrams is 1");
    }
    let mut plan = args.request().plan()?;
    if plan.cluster().is_some() {
        return run_cluster(&args, plan, ui);
    }
    let start_model = match plan.resume().map(Path::to_path_buf) {
        Some(path) => {
            let model = cwtext::model::Model::load(&path)?;
            ui.info(format!(
                "continuing {} ({} documents, {} labels) with its own pipeline and learner settings",
                path.display(),
                model.header.training.documents,
                model.labels().len()
            ));
            let kept = model.header.pipeline.hash_bits;
            if let Some(asked) = args.hash_bits.filter(|&b| b != kept) {
                ui.warn(format!(
                    "--hash-bits {asked} is not used: {} keeps its own 2^{kept} buckets (retrain without --resume to change them)",
                    path.display()
                ));
            }
            let kept = model.header.pipeline.elisions_name().unwrap_or("none");
            if let Some(asked) = args.elisions.as_deref().filter(|&e| e != kept) {
                ui.warn(format!(
                    "--elisions {asked} is not used: {} keeps its own ({kept}; retrain without --resume to change them)",
                    path.display()
                ));
            }
            plan.continue_from(&model)?;
            Some(model)
        }
        None => None,
    };
    let calibrate = plan.settings().calibrate;
    let sharded = plan.settings().sharding.shards > 1;
    let start = Instant::now();
    // A classifier needs two labels to tell apart; continuing a model (--resume) may add
    // documents of one.
    let min_labels = if start_model.is_some() { 1 } else { 2 };
    let corpus = args.filter.scan(&args.dir, min_labels)?;
    corpus.notes.iter().for_each(|n| ui.info(n));
    if let Some(groups) = corpus.groups.describe() {
        ui.info(groups);
    }
    corpus.warnings.iter().for_each(|w| ui.warn(w));
    let progress = ui.progress(corpus.files.len() as u64);
    let TrainOutcome { trained, .. } =
        plan.train(&corpus, start_model.as_ref(), &progress, &mut |note| {
            ui.info(note)
        })?;
    progress.finish_and_clear();
    let cwtext::jobs::train::Trained {
        model,
        fit,
        selection,
        selection_skipped,
        skipped,
        warnings,
        featurize_time,
        learn_time,
        passes,
        continued,
        cache,
        label_shift,
        ngram_weight,
        soft_rule,
        tables_one_at_a_time,
    } = trained;
    let outcome = super::common::report_skipped(ui, &skipped);
    warnings.iter().for_each(|w| ui.warn(w));
    let lock = cwtext::integrations::lock::ModelLock::acquire(&args.output)?;
    model.save(&args.output)?;
    drop(lock);
    let t = &model.header.training;
    let size = std::fs::metadata(&args.output)
        .map(|m| m.len())
        .unwrap_or(0);
    ui.info(format!(
        "trained {} on {} documents, {} labels, {} distinct features in {:.1}s",
        args.output.display(),
        t.documents,
        model.labels().len(),
        t.distinct_features,
        start.elapsed().as_secs_f64()
    ));
    let how = match tables_one_at_a_time {
        None => "models side by side".to_string(),
        Some(bytes) => format!(
            "the choice's models one at a time, a weight table being {:.1} MB",
            bytes as f64 / 1e6
        ),
    };
    ui.info(format!(
        "read and featurised the corpus once in {:.2}s; {passes} epoch(s) over the cached features took {:.2}s ({:.3}s each, {how})",
        featurize_time.as_secs_f64(),
        learn_time.as_secs_f64(),
        learn_time.as_secs_f64() / passes.max(1) as f64
    ));
    if let Some(selection) = &selection {
        ui.info(selection.describe());
    }
    if let Some(why) = &selection_skipped {
        ui.info(why);
    }
    if let Some(tried) = &ngram_weight {
        ui.info(tried.describe());
    }
    if let Some(tried) = &soft_rule {
        ui.info(tried.describe());
    }
    match &label_shift {
        Some(shift) if shift.choice.gamma > 0.0 => ui.info(format!(
            "rarer labels' scores raised by the label shift {}",
            shift.describe()
        )),
        Some(shift) => ui.info(format!(
            "no label shift: none was better on the {} held-out documents by more than a standard error (accuracy {:.4}; the best was right on {} more, {} fewer)",
            shift.choice.held_out, shift.choice.accuracy_before, shift.choice.gained, shift.choice.lost
        )),
        None => {}
    }
    let accuracy: Vec<String> = t
        .epoch_accuracy
        .iter()
        .map(|a| format!("{:.4}", a))
        .collect();
    let how = match continued {
        Some((kept, all)) => format!(
            " ({kept} on the four fifths outside the held-out fifth, then {all} on every document)"
        ),
        None => String::new(),
    };
    ui.info(format!(
        "online training accuracy per epoch{how}: {}",
        accuracy.join(" ")
    ));
    if t.exact_cap_hits > 0 {
        ui.warn(format!(
            "exact k-best stopped at its cap of {} passes on {} example(s) before converging",
            cwtext::learn::learner::constraints::EXACT_MAX_PASSES,
            t.exact_cap_hits
        ));
    }
    match fit {
        Some(fit) => ui.info(format!(
            "probabilities calibrated on {}: variance scale {:.4} (Brier {:.4} → {:.4}; fitted {:.4} ÷ variance shrinkage {:.3} of the final model)",
            match fit.folds {
                0 => format!("{} held-out documents", fit.held_out),
                k => format!("{} documents, each held out once by {k}-fold cross-validation (too few for a held-out fifth)", fit.held_out),
            },
            fit.scale, fit.brier_before, fit.brier_after, fit.scale * fit.variance_shrinkage, fit.variance_shrinkage
        )),
        None if calibrate && start_model.is_some() => ui.info(format!(
            "probabilities: the continued model's variance scale {:.4} is kept (too few held-out documents, or all of one label, to fit it again)",
            model.header.probability_scale
        )),
        None if calibrate => ui.info(format!(
            "probabilities not calibrated: fewer than {} documents to fit the scale on{}",
            cwtext::jobs::train::MIN_CALIBRATION_DOCUMENTS,
            if sharded { " in the held-out fifth (a sharded run does not cross-validate)" } else { "" }
        )),
        None => {}
    }
    for c in &cache {
        let how = match (c.kept, c.reused) {
            (true, true) => "made by an earlier run, kept",
            (true, false) => "kept for later runs",
            (false, _) => "a temporary file, removed",
        };
        ui.info(format!(
            "feature cache: {:.1} MB for {} documents in {} ({how})",
            c.bytes as f64 / 1e6,
            c.documents,
            c.path.display()
        ));
    }
    ui.info(format!("model size {:.1} MB", size as f64 / 1e6));
    // (A continued model keeps its buckets: it was told when it was first trained.)
    let advice = cwtext::jobs::buckets::large_table_advice(
        model.labels().len(),
        model.header.pipeline.hash_bits,
        args.encoding.width() as u64,
    );
    if let Some(advice) = advice.filter(|_| start_model.is_none()) {
        ui.warn(advice);
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::super::{Cli, Command};
    use cwtext::jobs::plan::TrainRequest;

    /// The flags' defaults are the library's: a plain `train` asks for what a library caller
    /// gets from `TrainRequest::default()`.
    #[test]
    fn the_flags_defaults_are_the_library_defaults() {
        let cli = Cli::parse_from(["cwtext", "train", "corpus", "-o", "m.cwm"]);
        let Command::Train(args) = cli.command else {
            panic!("not train");
        };
        assert_eq!(args.request(), TrainRequest::default());
    }
}
