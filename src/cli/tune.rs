//! `cwtext tune DIR -o MODEL [--budget N]`: search the settings on a validation fifth of the
//! training files, then train the winner on all of them.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::Args;

use super::common::{FilterArgs, Ui};
use super::Outcome;
use cwtext::jobs::feature_cache::{CacheSettings, DEFAULT_MEMORY_BUDGET};
use cwtext::jobs::tune::{Search, TuneRequest, FOLDS, PATIENCE};
use cwtext::learn::learner::{ConstraintKind, RuleKind};
use cwtext::model::WeightEncoding;

const EXAMPLES: &str = "\
Examples:
  cwtext tune corpus/ -o tuned.cwm
  cwtext tune 20ng/ --include 'train-*' -o 20ng.cwm --budget 40 --seed 3

Searched: feature options (stop words, symbols, stemming in the corpus's language, bigrams
(trigrams for text written without spaces, as train takes them), value type; character n-grams
where train gives them: none, 3-5 or 2-5 at weight 0.5, 3-5 at 1), the update rule
(CW stdev / var, AROW, SCW-I) with η, r or C, and the constraint strategy (single,
sequential k = 3 or 5); epochs by early stopping. The first four trials are always what plain
`cwtext train` chooses among (stop words in the corpus's language (English where no language
with a built-in list is detected) or none × prior idf/flat, with the character n-grams train
would give). Only
the training files are read: a fixed fifth of them (by a hash of the path) validates. When
trials beat train's pick on that fifth, the two most accurate and the pick are compared on 5
folds (every training file validated once), and a challenger wins only if it is better there
by more than a standard error. The settings of every trial go to MODEL.tune.json; the model
itself holds the winner's. The last line is the `cwtext train` command that writes the same
model (every searched setting as a flag when a challenger won): give it another corpus to
train the tuned settings without a search.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct TuneArgs {
    /// Training corpus: DIR/<label>/**/<file> (the files of a sub-folder below a label are held
    /// out together, in one fold), a mail store whose folders are the labels, a
    /// folder of a file per label with a line per document, or one file of labelled rows
    /// (`__label__LABEL text` lines, TREC's `COARSE:fine text`, .tsv, .csv, .jsonl).
    pub dir: PathBuf,
    /// Where to write the best model (atomically); MODEL.tune.json gets the trials.
    #[arg(short, long, value_name = "MODEL")]
    pub output: PathBuf,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// How many settings to try.
    #[arg(long, default_value_t = 24, value_name = "TRIALS")]
    pub budget: usize,
    /// The most epochs a trial may train (it stops earlier when validation stops improving).
    #[arg(long, default_value_t = 10)]
    pub max_epochs: usize,
    /// Seed of the search and of the per-epoch shuffle.
    #[arg(long, default_value_t = TuneArgs::DEFAULT_SEED)]
    pub seed: u64,
    /// Hash features into 2^B buckets (16..=26). Default: chosen as `train` chooses them, 18,
    /// or up to 21 for a corpus of many words and few labels (not for mail).
    #[arg(long, value_name = "B")]
    pub hash_bits: Option<u8>,
    /// Weight precision in the model file.
    #[arg(long, value_enum, default_value_t = WeightEncoding::F32)]
    pub encoding: WeightEncoding,
    /// Keep each feature choice's cache files in DIR and use them again in later runs (and
    /// `train`'s, for the same pipeline) while they match the corpus.
    #[arg(long, value_name = "DIR", help_heading = "Memory")]
    pub cache: Option<PathBuf>,
    /// Hold each feature choice's featurised corpus in memory up to this many MB, then in a
    /// temporary cache file on disk; 0: always on disk. The search and the model are the same
    /// either way.
    #[arg(long, value_name = "MB", default_value_t = DEFAULT_MEMORY_BUDGET >> 20,
          help_heading = "Memory")]
    pub memory_budget: u64,
}

impl TuneArgs {
    /// `--seed`'s default, `train`'s too.
    const DEFAULT_SEED: u64 = 1;
}

/// Flags → plan → search → the winner trained → summary.
pub fn run(args: TuneArgs, ui: &Ui) -> anyhow::Result<Outcome> {
    let plan = TuneRequest {
        budget: args.budget,
        max_epochs: args.max_epochs,
        seed: args.seed,
        hash_bits: args.hash_bits,
        encoding: args.encoding,
    }
    .plan()?
    .with_cache(CacheSettings {
        memory_budget: args.memory_budget.saturating_mul(1 << 20),
        dir: args.cache.clone(),
        ..CacheSettings::default()
    });
    let start = Instant::now();
    let corpus = args.filter.scan(&args.dir, 2)?;
    corpus.notes.iter().for_each(|n| ui.info(n));
    if let Some(groups) = corpus.groups.describe() {
        ui.info(groups);
    }
    corpus.warnings.iter().for_each(|w| ui.warn(w));
    let progress = ui.progress(args.budget as u64);
    progress.set_message("tuning");
    ui.info(format!(
        "tuning on {} files, {} labels: {} trials, at most {} epochs each (early stop after {PATIENCE} without gain)",
        corpus.files.len(),
        corpus.labels.len(),
        args.budget,
        args.max_epochs
    ));
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut failed = None;
    let mut report = |t: &cwtext::jobs::tune::Trial| {
        let line = format!(
            "trial {:>3}  validation {:.4} at epoch {:>2}  {:>6.1}s  {}",
            t.index + 1,
            t.validation_accuracy,
            t.best_epoch,
            t.seconds,
            t.candidate.describe()
        );
        progress.suspend(|| {
            if let Err(e) = writeln!(out, "{line}") {
                failed.get_or_insert(e);
            }
        });
    };
    let threads = rayon::current_num_threads();
    let result = plan.search(&corpus, threads, &progress, &mut report)?;
    progress.finish_and_clear();
    if let Some(e) = failed {
        return Err(e.into());
    }
    if let Some(length) = &result.text_length {
        ui.info(format!(
            "{}: {}",
            length.describe(),
            if length.wants_char_ngrams() {
                format!(
                    "train's choices have character n-grams, and trials may ({})",
                    length.reason()
                )
            } else {
                format!("no trial has character n-grams ({})", length.reason())
            }
        ));
        if length.keeps_every_word() {
            ui.info(
                "train's choices keep every word (short texts: no stop-word list); the other trials may use a list",
            );
        }
        if length.is_unspaced() {
            ui.info(format!(
                "train's choices take n-grams up to {}, and so do the trials that take bigrams: {}",
                cwtext::text::length::UNSPACED_NGRAMS,
                length.unspaced_reason()
            ));
        }
        if length.is_mail() {
            ui.info(
                "train's choices read the header fields by the stable rule and again with every field whole (mail); the other trials may read them whole",
            );
        }
    }
    ui.info(cwtext::jobs::tune::describe_trial_stemmer(result.stem));
    ui.info(cwtext::jobs::tune::describe_trial_stop_words(result.stem));
    if let Some(line) = cwtext::jobs::tune::describe_trial_elisions(result.stem) {
        ui.info(line);
    }
    if let Some(why) = &result.hash_bits_reason {
        ui.info(format!("every trial: {why}"));
    }
    let best = &result.trials[result.best];
    writeln!(
        out,
        "best: trial {} (validation accuracy {:.4} on {} documents; trained for {} epoch{}): {}",
        best.index + 1,
        best.validation_accuracy,
        result.validation_documents,
        result.epochs,
        if result.epochs == 1 { "" } else { "s" },
        best.candidate.describe()
    )?;
    if let Some((pick, challengers)) = result.cross_validated.split_first() {
        let line = |c: &cwtext::jobs::tune::CrossValidated| {
            format!(
                "trial {} {:.4} at epoch {} (best epochs {})",
                c.trial + 1,
                c.accuracy,
                c.scored_epoch,
                c.best_epochs
                    .iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        };
        let against = |c: &cwtext::jobs::tune::CrossValidated| {
            let (b, c, z) = c.against(pick);
            format!(" against the pick: right on {b} it missed, wrong on {c} it got, {z:+.2} standard errors")
        };
        writeln!(
            out,
            "cross-validated on {FOLDS} folds ({} documents, each validated once): train's pick {}; {}",
            pick.documents,
            line(pick),
            challengers
                .iter()
                .map(|c| line(c) + &against(c))
                .collect::<Vec<_>>()
                .join("; ")
        )?;
        if result.best == pick.trial {
            writeln!(
                out,
                "kept train's pick: no trial more accurate on the held-out fifth was better across the folds by more than a standard error of the paired difference"
            )?;
        }
    }
    let cwtext::jobs::train::Trained {
        model,
        fit,
        skipped,
        warnings,
        ..
    } = plan.train_winner(&corpus, &result, &cwtext::progress::NoProgress)?;
    let outcome = super::common::report_skipped(ui, &skipped);
    warnings.iter().for_each(|w| ui.warn(w));
    model.save(&args.output)?;
    let settings = winners_train_flags(&result);
    let report_path = PathBuf::from(format!("{}.tune.json", args.output.display()));
    let mut report = serde_json::to_value(&result)?;
    report["train_flags"] = serde_json::json!(settings);
    std::fs::write(&report_path, serde_json::to_string_pretty(&report)?)
        .with_context(|| format!("{}: cannot write", report_path.display()))?;
    writeln!(
        out,
        "wrote {} (trained on all {} documents{}) and {}",
        args.output.display(),
        model.header.training.documents,
        fit.map_or(String::new(), |f| format!(
            ", probability scale {:.4}",
            f.scale
        )),
        report_path.display()
    )?;
    if let Some(shift) = &model.header.label_shift {
        writeln!(
            out,
            "rarer labels' scores raised by the label shift {}",
            shift.describe()
        )?;
    }
    // Train's pick kept is trained as plain `train` trains it, lighter bigrams tried too.
    if let Some(tried) = &model.header.ngram_weight {
        writeln!(out, "then, as train does, {}", tried.describe())?;
    }
    if let Some(tried) = &model.header.soft_rule {
        writeln!(out, "then, as train does, {}", tried.describe())?;
    }
    let command = train_command(&args, &settings);
    if result.kept_trains_pick() {
        writeln!(
            out,
            "kept train's pick, so plain train writes these weights: {command}"
        )?;
    } else {
        writeln!(
            out,
            "the same model from train: {command} (on another corpus, these settings without a search)"
        )?;
    }
    ui.info(format!("tuned in {:.1}s", start.elapsed().as_secs_f64()));
    Ok(outcome)
}

/// The `cwtext train` flags of the winner's settings; for train's pick (plain `train` chooses
/// it) none but the epochs when `--max-epochs` held them below train's. With the corpus options `tune` was given they train the model `tune`
/// wrote, byte for byte: the searched settings are written out whole (the learner, the
/// features, the epochs), so `train` chooses none of them, and chooses as `tune`'s retrain
/// does what `tune` leaves to it (the hash bits, the label shift).
fn winners_train_flags(result: &Search) -> Vec<String> {
    if result.kept_trains_pick() {
        // Train's epochs, unless --max-epochs cut them.
        let epochs = cwtext::jobs::plan::TrainRequest::default().epochs;
        return if result.epochs == epochs {
            Vec::new()
        } else {
            vec!["--epochs".into(), result.epochs.to_string()]
        };
    }
    let Some(trial) = result.trials.get(result.best) else {
        return Vec::new();
    };
    let (learner, features) = (&trial.candidate.learner, &trial.candidate.features);
    let mut flags: Vec<String> = Vec::new();
    let mut flag = |name: &str, value: String| flags.extend([name.to_string(), value]);
    match learner.rule {
        RuleKind::Arow => {
            flag("--algo", "arow".into());
            flag("--arow-r", learner.r.to_string());
        }
        RuleKind::Scw1 => {
            flag("--algo", "scw1".into());
            flag("--eta", learner.eta.to_string());
            flag("-C", learner.c.to_string());
        }
        // CW's two rules; the search draws no other (`Candidate::random`).
        rule => {
            flag("--algo", "cw".into());
            flag("--update", format!("{rule:?}").to_lowercase());
            flag("--eta", learner.eta.to_string());
        }
    }
    flag("--prior", learner.prior.name().into());
    flag("--constraints", value_name(&learner.constraints));
    if learner.constraints != ConstraintKind::Single {
        flag("-k", learner.k.to_string());
    }
    flag("--stopwords", features.stopwords.unwrap_or("none").into());
    if let Some(language) = features.stem {
        flag("--stem", language.name().into());
    }
    flag("--ngrams", features.ngrams.to_string());
    flag("--values", features.values.name().into());
    match features.chars {
        Some(c) => {
            flag("--char-ngrams", format!("{}-{}", c.min, c.max));
            flag("--char-weight", c.weight().to_string());
        }
        None => flag("--char-ngrams", "none".into()),
    }
    if result.text_length.is_some_and(|t| t.is_mail()) {
        flag("--field-rule", value_name(&features.fields));
    }
    flag("--epochs", result.epochs.to_string());
    if !features.symbols {
        flags.push("--no-symbols".into());
    }
    flags
}

/// A value as its flag takes it.
fn value_name(value: &impl clap::ValueEnum) -> String {
    value
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string())
}

/// `cwtext train` on the same corpus, to the same model file, with the options given to
/// `tune` that decide the model (the corpus filter, the seed, the hash bits, the encoding) and
/// the winner's `settings`, quoted for a POSIX shell.
fn train_command(args: &TuneArgs, settings: &[String]) -> String {
    let mut words: Vec<String> = ["cwtext", "train"].map(String::from).into();
    words.push(args.dir.display().to_string());
    words.push("-o".into());
    words.push(args.output.display().to_string());
    words.extend(args.filter.flags());
    if args.seed != TuneArgs::DEFAULT_SEED {
        words.extend(["--seed".into(), args.seed.to_string()]);
    }
    if let Some(bits) = args.hash_bits {
        words.extend(["--hash-bits".into(), bits.to_string()]);
    }
    if args.encoding != WeightEncoding::F32 {
        words.extend(["--encoding".into(), value_name(&args.encoding)]);
    }
    words.extend(settings.iter().cloned());
    shlex::try_join(words.iter().map(String::as_str)).unwrap_or_else(|_| words.join(" "))
}
