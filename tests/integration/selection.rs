//! `train` chooses its stop words and prior from the training data (library level): on a task whose
//! deciding words are stop words it must drop the list; it takes the most accurate candidate on
//! the held-out fifth, and on a tie the candidate that keeps every word.

use crate::in_process;
use cwtext::jobs::corpus::{scan_labelled, FileFilter, LabelledCorpus};
use cwtext::jobs::plan::TrainPlan;
use cwtext::jobs::train::{Choose, TrainSettings, Trained};
use cwtext::progress::NoProgress;
use cwtext::text::pipeline::PipelineConfig;

/// Questions that differ only in their question word (who / where / when / how many): the
/// subjects are drawn from one pool for every label, so the English stop-word list, which holds
/// who, where, when, how and many, leaves nothing that tells the labels apart. Short texts, on
/// which `train` keeps every word without trying the list ([`long_question_corpus`] is the same
/// task in documents long enough for the list to be tried).
fn question_corpus(dir: &std::path::Path, per_label: usize) {
    question_corpus_with_context(dir, per_label, 0)
}

/// [`question_corpus`] with each question followed by 45 words of context drawn from one pool
/// for every label (nothing in it tells the labels apart): a median of 50 or more words, past
/// the short-text bound, so `train` chooses between the stop-word list and none.
fn long_question_corpus(dir: &std::path::Path, per_label: usize) {
    question_corpus_with_context(dir, per_label, 45)
}

fn question_corpus_with_context(dir: &std::path::Path, per_label: usize, context: usize) {
    let pool = [
        "archive",
        "record",
        "ledger",
        "survey",
        "catalogue",
        "register",
        "inventory",
        "chronicle",
        "report",
        "census",
        "gazette",
        "almanac",
        "journal",
        "bulletin",
        "digest",
        "review",
    ];
    let subjects = [
        "the bridge",
        "the first telescope",
        "the novel",
        "the treaty",
        "the vaccine",
        "the opera",
        "the railway",
        "the cathedral",
        "the marathon",
        "the election",
        "the satellite",
        "the museum",
        "the festival",
        "the harbour",
        "the university",
        "the comet",
        "the dam",
        "the symphony",
        "the canal",
        "the expedition",
        "the printing press",
        "the lighthouse",
        "the stadium",
        "the observatory",
    ];
    let verbs = [
        "built", "opened", "designed", "finished", "found", "named", "moved",
    ];
    type Question<'a> = &'a dyn Fn(&str, &str) -> String;
    let labels: [(&str, Question); 4] = [
        ("person", &|s, v| format!("Who {v} {s}?")),
        ("place", &|s, v| format!("Where was {s} {v}?")),
        ("date", &|s, v| format!("When was {s} {v}?")),
        ("count", &|s, v| format!("How many people {v} {s}?")),
    ];
    for (label, make) in labels {
        let d = dir.join(label);
        std::fs::create_dir_all(&d).unwrap();
        for i in 0..per_label {
            let s = subjects[(i * 7 + label.len()) % subjects.len()];
            let v = verbs[(i / subjects.len() + i) % verbs.len()];
            let mut text = make(s, v);
            for j in 0..context {
                text.push(' ');
                text.push_str(pool[(i * 5 + j * 3 + j / pool.len()) % pool.len()]);
            }
            std::fs::write(d.join(format!("q{i:03}.txt")), text).unwrap();
        }
    }
}

/// Whether the model's pipeline holds a stop-word list.
/// The settings the choice tried, in order.
fn trial_names(selection: &cwtext::model::Selection) -> Vec<&str> {
    selection
        .trials
        .iter()
        .map(|t| t.setting.as_str())
        .collect()
}

fn has_stop_word_list(model: &cwtext::model::Model) -> bool {
    model.header.pipeline.has_stop_words()
}

fn settings(choose: Choose) -> TrainSettings {
    let mut settings = TrainSettings::new(5, 1);
    settings.pipeline = PipelineConfig {
        symbols: true,
        ..PipelineConfig::default()
    };
    settings.calibrate = true;
    settings.choose = choose;
    settings
}

/// Trains as `train` does, through a checked plan of `settings`.
fn train_corpus(corpus: &LabelledCorpus, settings: &TrainSettings) -> Trained {
    let plan = TrainPlan::from_settings(settings.clone()).unwrap();
    plan.train(corpus, None, &NoProgress, &mut |_| {})
        .unwrap()
        .trained
}

/// Train chooses its stop words and its prior, and nothing else (no label shift, the
/// pipeline's own character n-grams).
fn stop_words_and_prior() -> Choose {
    Choose {
        stopwords: true,
        prior: true,
        label_shift: false,
        chars: None,
        soft_rule: false,
        every_field: false,
        hash_bits: false,
        ngram_weight: false,
        unspaced_ngrams: false,
        elisions: false,
    }
}

/// Long texts of a small corpus (here a question and 120 words of context) try the chosen
/// settings again with their bigrams at half weight, both scored on the held-out fifth after
/// the run's epochs (not the choice's one), and take them only when more accurate there; the
/// model records the comparison and, when taken, the weight. Shorter texts (the question and
/// 45 words, as paragraphs) do not try them.
#[test]
fn long_texts_try_lighter_bigrams_after_the_runs_epochs() {
    let dir = tempfile::tempdir().unwrap();
    question_corpus_with_context(dir.path(), 120, 120);
    let corpus = scan_labelled(dir.path(), &FileFilter::default()).unwrap();
    let lighter = Choose {
        ngram_weight: true,
        ..stop_words_and_prior()
    };
    let trained = train_corpus(&corpus, &settings(lighter));
    let tried = trained
        .ngram_weight
        .as_ref()
        .expect("long texts of a small corpus try lighter bigrams");
    assert_eq!(trained.model.header.ngram_weight.as_ref(), Some(tried));
    assert_eq!((tried.weight_per_mille, tried.epochs), (500, 5));
    assert_eq!(
        tried.taken,
        tried.accuracy > tried.accuracy_before,
        "{tried:?}"
    );
    assert_eq!(
        trained.model.header.pipeline.ngram_weight_per_mille,
        tried.taken.then_some(500)
    );
    assert!(
        tried
            .describe()
            .contains("bigrams at weight 0.5: held-out accuracy after 5 epochs"),
        "{}",
        tried.describe()
    );
    // The same data and seed: the same model, byte for byte.
    let again = train_corpus(&corpus, &settings(lighter));
    assert_eq!(trained.model.to_bytes(), again.model.to_bytes());
    // Not free to choose: not tried.
    let fixed = train_corpus(&corpus, &settings(stop_words_and_prior()));
    assert!(fixed.ngram_weight.is_none() && fixed.model.header.ngram_weight.is_none());
    // Free to choose nothing else (one candidate, no choice): still tried, and recorded.
    let alone = train_corpus(
        &corpus,
        &settings(Choose {
            ngram_weight: true,
            ..Choose::default()
        }),
    );
    assert!(alone.selection.is_none());
    assert!(alone.model.header.ngram_weight.is_some());
    // Shorter texts (a question and 45 words; a question and 2): not tried.
    for context in [45, 2] {
        let short = tempfile::tempdir().unwrap();
        question_corpus_with_context(short.path(), 120, context);
        let corpus = scan_labelled(short.path(), &FileFilter::default()).unwrap();
        let trained = train_corpus(&corpus, &settings(lighter));
        assert!(trained.ngram_weight.is_none(), "{context}");
        assert_eq!(trained.model.header.pipeline.ngram_weight_per_mille, None);
    }
}

#[test]
fn question_words_make_train_drop_the_stop_word_list() {
    let dir = tempfile::tempdir().unwrap();
    long_question_corpus(dir.path(), 120);
    let corpus = scan_labelled(dir.path(), &FileFilter::default()).unwrap();
    let all = stop_words_and_prior();
    let trained = train_corpus(&corpus, &settings(all));
    let selection = trained
        .selection
        .expect("four candidates and 96 held-out questions");
    assert_eq!(selection.trials.len(), 4);
    // What was chosen is the most accurate of the trials, the earliest of equals.
    let best = selection
        .trials
        .iter()
        .map(|t| t.accuracy)
        .fold(f64::MIN, f64::max);
    let first_best = selection.trials.iter().position(|t| t.accuracy == best);
    assert_eq!(
        Some(selection.chosen),
        first_best,
        "{}",
        selection.describe()
    );
    let chosen = &selection.trials[selection.chosen];
    assert!(
        chosen.setting.starts_with("stop words none"),
        "{}",
        selection.describe()
    );
    // With the list, "where was X built" and "when was X built" become the same words: place and
    // date cannot be told apart, so at most 3 of 4 labels' questions are right (0.75).
    let with_list = selection.trials[0].accuracy;
    assert!(with_list <= 0.76, "{}", selection.describe());
    assert!(chosen.accuracy > 0.95, "{}", selection.describe());
    // The model that ships has the chosen pipeline, and was calibrated on the held-out fifth.
    assert!(!has_stop_word_list(&trained.model));
    assert!(trained.fit.is_some());
    assert_eq!(trained.model.header.selection.as_ref(), Some(&selection));
}

/// Short texts keep every word: trained as `train` trains (through the plan), the short
/// questions go without the stop-word list, and the list is not among the candidates, only the
/// two priors (before, the held-out fifth chose among four, and on review sentences took the
/// list on some splits and lost 2–3 points there). The note says so and the model records the
/// sample the rule read. The same task in long documents still tries the list (above).
#[test]
fn short_texts_keep_every_word_without_trying_the_list() {
    let dir = tempfile::tempdir().unwrap();
    question_corpus(dir.path(), 120);
    let corpus = scan_labelled(dir.path(), &FileFilter::default()).unwrap();
    let all = stop_words_and_prior();
    let mut notes = Vec::new();
    let trained = TrainPlan::from_settings(settings(all))
        .unwrap()
        .train(&corpus, None, &NoProgress, &mut |n| notes.push(n))
        .unwrap()
        .trained;
    let selection = trained
        .selection
        .expect("two priors and 96 held-out questions");
    let names = trial_names(&selection);
    assert_eq!(
        names,
        ["stop words none, prior flat", "stop words none, prior idf"]
    );
    assert!(!has_stop_word_list(&trained.model));
    assert!(
        selection.trials[selection.chosen].accuracy > 0.95,
        "{}",
        selection.describe()
    );
    let length = trained
        .model
        .header
        .text_length
        .expect("the sample the rule read is recorded");
    assert!(length.median_words <= cwtext::text::length::SHORT_TEXT_WORDS);
    assert!(length.keeps_every_word());
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("stop words none: short texts")
                && n.ends_with("no list is tried")),
        "{notes:?}"
    );
}

/// A corpus too small to hold out 50 documents (25 questions a label: about 20 held out) kept the
/// base list, which deletes the question words: the stop words are now chosen by
/// cross-validation over five folds, every document validated once, the prior kept at the
/// base's; the same bytes each time. Fewer than 50 documents in all still keep the base.
#[test]
fn a_corpus_too_small_to_hold_out_a_fifth_chooses_its_stop_words_by_cross_validation() {
    let all = stop_words_and_prior();
    let dir = tempfile::tempdir().unwrap();
    long_question_corpus(dir.path(), 25);
    let corpus = scan_labelled(dir.path(), &FileFilter::default()).unwrap();
    let trained = train_corpus(&corpus, &settings(all));
    let selection = trained.selection.clone().unwrap_or_else(|| {
        panic!(
            "no choice: {}",
            trained.selection_skipped.as_deref().unwrap_or_default()
        )
    });
    assert_eq!(selection.folds, 5, "{}", selection.describe());
    assert_eq!(selection.held_out, 100, "every document validated once");
    // The stop words only, at the base prior (flat for these settings).
    let names = trial_names(&selection);
    assert_eq!(
        names,
        [
            "stop words english, prior flat",
            "stop words none, prior flat"
        ]
    );
    assert_eq!(selection.chosen, 1, "{}", selection.describe());
    assert!(
        selection.trials[0].accuracy <= 0.76,
        "{}",
        selection.describe()
    );
    assert!(
        selection.trials[1].accuracy > 0.9,
        "{}",
        selection.describe()
    );
    assert!(
        selection
            .describe()
            .contains("accuracy over 5 cross-validation folds"),
        "{}",
        selection.describe()
    );
    assert!(!has_stop_word_list(&trained.model));
    assert_eq!(trained.model.header.selection.as_ref(), Some(&selection));
    let again = train_corpus(&corpus, &settings(all));
    assert_eq!(trained.model.to_bytes(), again.model.to_bytes());

    let few = tempfile::tempdir().unwrap();
    long_question_corpus(few.path(), 12);
    let corpus = scan_labelled(few.path(), &FileFilter::default()).unwrap();
    let trained = train_corpus(&corpus, &settings(all));
    assert!(trained.selection.is_none());
    assert!(
        trained
            .selection_skipped
            .as_deref()
            .is_some_and(|s| s.contains(
                "too few documents to choose settings on (48 documents, at least 50 needed)"
            )),
        "{:?}",
        trained.selection_skipped
    );
}

#[test]
fn nothing_free_means_nothing_chosen_and_the_same_bytes_each_time() {
    let dir = tempfile::tempdir().unwrap();
    question_corpus(dir.path(), 40);
    let corpus = scan_labelled(dir.path(), &FileFilter::default()).unwrap();
    let run = || train_corpus(&corpus, &settings(Choose::default()));
    let (a, b) = (run(), run());
    assert!(a.selection.is_none());
    assert_eq!(a.model.to_bytes(), b.model.to_bytes());
}

/// `train` takes the most accurate candidate on the held-out fifth, however small its lead
/// (one document of 100 here, within any standard error); before, a lead within one standard
/// error kept the base.
#[test]
fn train_takes_the_most_accurate_candidate_and_the_base_on_a_tie() {
    use cwtext::jobs::train::most_accurate;
    assert_eq!(most_accurate(&[0.80, 0.81, 0.79, 0.81], |a| *a), 1);
    assert_eq!(most_accurate(&[0.81, 0.81, 0.80, 0.81], |a| *a), 0);
    assert_eq!(most_accurate(&[0.5], |a| *a), 0);
    // On a real choice (the question corpus), see the test above.
}

/// On a tie between a candidate with the stop-word list and one without, `train` keeps every
/// word (before: the base, which has the list): wrongly taking the list cost 2 to 16 points on
/// the test split, wrongly leaving it at most 0.6. A lead of the list, however small, still
/// takes it, and ties among candidates that agree on the list go to the earliest.
#[test]
fn a_tie_between_the_list_and_every_word_keeps_every_word() {
    use cwtext::jobs::train::every_word_on_a_tie;
    // (accuracy, has the list), in train's order (english idf, none idf, english flat, none
    // flat), and the pick: Brown's grouped split 1 (a tie), its split 0 (the list ahead by 1.9
    // points), a three-way tie, and only the prior free (every candidate with the list, or none
    // without): the earliest.
    #[rustfmt::skip]
    let cases: [(&[(f64, bool)], usize); 5] = [
        (&[(0.6579, true), (0.6579, false), (0.6249, true), (0.6020, false)], 1),
        (&[(0.6696, true), (0.6509, false), (0.6326, true), (0.5906, false)], 0),
        (&[(0.90, true), (0.89, false), (0.90, true), (0.90, false)], 3),
        (&[(0.80, false), (0.80, false)], 0),
        (&[(0.80, true), (0.80, true)], 0),
    ];
    for (trials, want) in cases {
        let got = every_word_on_a_tie(trials, |t| t.0, |i| trials[i].1);
        assert_eq!(got, want, "{trials:?}");
    }
}

/// Every header field whole must be ahead of the stable rule by three standard errors of the
/// paired difference. Over 30 draws of the held-out fifth of SpamAssassin's ham and spam split
/// by time, whole fields led by 1.1 to 2.0 standard errors (4 right that the stable rule got
/// wrong against 0: 2.0) and cost up to 4 points on the newest mail when taken; where the
/// labels are periods they led by 4.1 to 7.8. Before, a standard error took them.
#[test]
fn every_field_whole_must_lead_by_three_standard_errors() {
    use cwtext::jobs::train::{trains_choice, Departure, EVERY_FIELD_MARGIN};
    // 400 held-out documents; candidate 0 (stable) gets the first 380 right; candidate 1 (the
    // fields departing) gets `ahead` more of the rest right.
    let answers = |ahead: usize| -> Vec<bool> { (0..400).map(|d| d < 380 + ahead).collect() };
    let choose = |whole: usize| {
        let trials = [answers(0), answers(whole)];
        let accuracy = |t: &Vec<bool>| t.iter().filter(|&&r| r).count() as f64 / 400.0;
        trains_choice(
            &trials,
            accuracy,
            |t| t.as_slice(),
            |_| false,
            &[Departure {
                is: &|i| i == 1,
                margin: EVERY_FIELD_MARGIN,
            }],
        )
    };
    // Whole fields 4 ahead (2.00 standard errors): the stable rule is kept.
    assert_eq!(choose(4), 0);
    // 9 ahead (3.00): not more than three; 10 ahead (3.16): taken.
    assert_eq!(choose(9), 0);
    assert_eq!(choose(10), 1);
}

/// Long documents whose labels any setting separates (every word of a label from its own
/// pool): both lists get the whole held-out fifth right, and the model keeps every word.
#[test]
fn a_corpus_every_candidate_gets_right_keeps_every_word() {
    let dir = tempfile::tempdir().unwrap();
    let pools = [
        (
            "astronomy",
            ["comet", "orbit", "nebula", "quasar", "telescope", "galaxy"],
        ),
        (
            "cooking",
            ["saucepan", "simmer", "oregano", "dough", "braise", "whisk"],
        ),
    ];
    for (label, pool) in pools {
        let d = dir.path().join(label);
        std::fs::create_dir_all(&d).unwrap();
        for i in 0..200usize {
            // Stop words too, the same for both labels, and 60 words in all: a long text.
            let text: Vec<&str> = (0..60)
                .map(|j| {
                    if j % 3 == 0 {
                        ["the", "of", "and"][j % 2]
                    } else {
                        pool[(i + j * 5) % pool.len()]
                    }
                })
                .collect();
            std::fs::write(d.join(format!("d{i:03}.txt")), text.join(" ")).unwrap();
        }
    }
    let corpus = scan_labelled(dir.path(), &FileFilter::default()).unwrap();
    let trained = train_corpus(&corpus, &settings(stop_words_and_prior()));
    let selection = trained.selection.expect("four candidates, 80 held out");
    assert_eq!(selection.trials.len(), 4, "{}", selection.describe());
    assert!(
        selection.trials.iter().all(|t| t.accuracy == 1.0),
        "{}",
        selection.describe()
    );
    assert!(
        selection.trials[selection.chosen]
            .setting
            .starts_with("stop words none"),
        "{}",
        selection.describe()
    );
    assert!(!has_stop_word_list(&trained.model));
    // What `train` and `inspect` print says why.
    assert!(
        selection
            .describe()
            .starts_with("chose stop words none, prior flat (a tie with the stop-word list: every word is kept on a tie): "),
        "{}",
        selection.describe()
    );
}

/// The soft rule (SCW-I) is taken only when ahead of the chosen settings by more than a
/// standard error of the paired difference, both scored on the held-out fifth after the run's
/// epochs: 2 more right in 100 (2 against √2 ≈ 1.41 standard errors) is taken; 1 more (1
/// against 1) is not, nor 3 right and 1 wrong that CW got (2 against 2), nor being behind.
#[test]
fn the_soft_rule_needs_a_standard_error_over_the_chosen_settings() {
    use cwtext::jobs::train::soft_rule_trial;
    // 100 held-out documents; the chosen settings get the first 60 right.
    let cw: Vec<bool> = (0..100).map(|i| i < 60).collect();
    let soft =
        |from: usize, to: usize| -> Vec<bool> { (0..100).map(|i| i >= from && i < to).collect() };
    let cases = [
        (soft(0, 62), true, 2, 0, 2f64.sqrt()),
        (soft(0, 61), false, 1, 0, 1.0),
        (soft(1, 63), false, 3, 1, 1.0),
        (soft(0, 50), false, 0, 10, -10f64.sqrt()),
    ];
    for (after, taken, wins, losses, standard_errors) in cases {
        let t = soft_rule_trial(&after, &cw, 5, 3);
        assert_eq!((t.taken, t.wins, t.losses), (taken, wins, losses), "{t:?}");
        assert!((t.standard_errors - standard_errors).abs() < 1e-9, "{t:?}");
        assert_eq!(t.accuracy_before, 0.60);
        assert_eq!(t.epochs, 5);
    }
    assert!(soft_rule_trial(&soft(0, 62), &cw, 5, 3)
        .describe()
        .starts_with("took the soft rule SCW-I (C 0.3, η 0.99, prior flat): held-out accuracy after 5 epochs 0.6200 against 0.6000 with CW (right on 2 it missed, wrong on 0 it got, +1.41 standard errors"));
}

/// Long documents try the soft rule too, after the choice among the stop-word lists and
/// priors (not among them): where every candidate gets the labels right, CW is kept.
#[test]
fn long_texts_try_the_soft_rule_after_the_choice() {
    let dir = tempfile::tempdir().unwrap();
    long_question_corpus(dir.path(), 120);
    let corpus = scan_labelled(dir.path(), &FileFilter::default()).unwrap();
    let trained = train_corpus(
        &corpus,
        &settings(Choose {
            soft_rule: true,
            ..stop_words_and_prior()
        }),
    );
    let selection = trained.selection.expect("four candidates");
    let names = trial_names(&selection);
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(names.iter().all(|n| !n.contains("soft rule")), "{names:?}");
    let tried = trained.soft_rule.expect("the soft rule tried");
    assert!(!tried.taken, "{}", tried.describe());
    assert_eq!(trained.model.header.soft_rule, Some(tried));
    let cwtext::model::LearnerConfig::Cw(learner) = &trained.model.header.learner;
    assert_eq!(learner.rule, cwtext::learn::learner::RuleKind::Stdev);
}

/// Every header field whole is tried for mail alone: where it may be chosen, documents that
/// are not mail are still chosen among by the stop-word lists and priors, and read by the
/// stable rule.
#[test]
fn texts_that_are_not_mail_do_not_try_every_header_field_whole() {
    let dir = tempfile::tempdir().unwrap();
    long_question_corpus(dir.path(), 120);
    let corpus = scan_labelled(dir.path(), &FileFilter::default()).unwrap();
    let trained = train_corpus(
        &corpus,
        &settings(Choose {
            every_field: true,
            ..stop_words_and_prior()
        }),
    );
    let selection = trained.selection.clone().expect("four candidates");
    let names = trial_names(&selection);
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(
        names.iter().all(|n| !n.contains("header field")),
        "{names:?}"
    );
    assert_eq!(
        trained.model.header.pipeline.field_rule,
        cwtext::text::pipeline::config::FieldRule::Stable
    );
}

/// The rule `tune`'s cross-validation keeps: a challenger must be right more often than train's
/// pick by more than a standard error of the paired difference.
#[test]
fn a_small_gain_within_the_noise_keeps_the_base_settings() {
    use cwtext::jobs::train::clearly_better;
    // 100 documents; the candidate gets 6 right that the base misses and 2 the other way: a
    // gain of 4 against √8 ≈ 2.8, clearly better.
    let base: Vec<bool> = (0..100).map(|i| !(6..12).contains(&i)).collect();
    let mut candidate = vec![true; 100];
    candidate[0] = false;
    candidate[1] = false;
    assert!(clearly_better(&candidate, &base));
    // 3 against 1: a gain of 2 against √4 = 2, not more than one standard error.
    let base: Vec<bool> = (0..100).map(|i| !(6..9).contains(&i)).collect();
    let mut candidate = vec![true; 100];
    candidate[0] = false;
    assert!(!clearly_better(&candidate, &base));
    assert!(!clearly_better(&base, &base));
}

#[test]
fn candidates_are_compared_after_one_epoch_and_the_winner_is_what_its_settings_train_alone() {
    // The candidates train SELECTION_EPOCHS epochs before they are scored; the winner alone goes
    // on to the run's epochs, so the shipped model is the one the chosen settings give when set
    // by hand, weight for weight (only the header's record of the choice and of the sample of
    // document lengths it read differs).
    let dir = tempfile::tempdir().unwrap();
    long_question_corpus(dir.path(), 120);
    let corpus = scan_labelled(dir.path(), &FileFilter::default()).unwrap();
    let all = stop_words_and_prior();
    let chosen = train_corpus(&corpus, &settings(all));
    let selection = chosen.selection.clone().expect("a choice");
    assert_eq!(selection.epochs, cwtext::jobs::train::SELECTION_EPOCHS);
    assert_eq!(cwtext::jobs::train::SELECTION_EPOCHS, 1);
    assert!(
        selection.describe().contains("after 1 epoch "),
        "{}",
        selection.describe()
    );
    let mut fixed = settings(Choose::default());
    fixed.pipeline = chosen.model.header.pipeline.clone();
    let cwtext::model::LearnerConfig::Cw(config) = chosen.model.header.learner.clone();
    fixed.learner = config;
    let alone = train_corpus(&corpus, &fixed);
    assert!(alone.selection.is_none());
    let mut model = chosen.model;
    model.header.selection = None;
    // The sample of document lengths read to decide on the stop words, recorded by a run that
    // chooses them.
    model.header.text_length = None;
    assert_eq!(model.to_bytes(), alone.model.to_bytes());

    // A run of one epoch: the candidates train every epoch of it and the winner goes on to none,
    // still the model its settings train alone.
    let mut one = settings(all);
    one.epochs = 1;
    let trained = train_corpus(&corpus, &one);
    assert_eq!(trained.selection.as_ref().expect("a choice").epochs, 1);
    let mut fixed_one = settings(Choose::default());
    fixed_one.epochs = 1;
    fixed_one.pipeline = trained.model.header.pipeline.clone();
    let cwtext::model::LearnerConfig::Cw(config) = trained.model.header.learner.clone();
    fixed_one.learner = config;
    let mut model = trained.model;
    model.header.selection = None;
    model.header.text_length = None;
    assert_eq!(
        model.to_bytes(),
        train_corpus(&corpus, &fixed_one).model.to_bytes()
    );
}

#[test]
fn tune_that_keeps_trains_pick_writes_trains_model() {
    // With a budget of four trials, tune tries exactly train's four choices: nothing else can
    // challenge train's pick, so tune must pick what plain `train` picks (compared, as train
    // compares, after its selection epochs) and train it as plain `train` does: the same
    // weights, byte for byte. Before, it took the most accurate at each trial's best epoch and
    // retrained that for that epoch count, a different model of the same settings.
    // 120 questions a label choose on the held-out fifth, 25 by cross-validation (too few
    // held out): tune's pick is train's either way.
    // And 120 a label of 120 words of context: long documents, where train also tries lighter
    // bigrams after the choice; tune, keeping train's pick, must too.
    for (per_label, context) in [(120, 45), (25, 45), (120, 120)] {
        let dir = tempfile::tempdir().unwrap();
        question_corpus_with_context(dir.path(), per_label, context);
        let corpus = scan_labelled(dir.path(), &FileFilter::default()).unwrap();
        let plain = in_process::train_in_process(&corpus);
        let tune = in_process::tune_plan(4);
        let search = tune.search(&corpus, 2, &NoProgress, &mut |_| {}).unwrap();
        assert!(search.best < 4);
        assert_eq!(
            search.trials[search.best].candidate.learner,
            match plain.model.header.learner.clone() {
                cwtext::model::LearnerConfig::Cw(c) => c,
            }
        );
        assert_eq!(search.epochs, 5, "train's epochs");
        let tuned = tune.train_winner(&corpus, &search, &NoProgress).unwrap();
        assert_eq!(
            plain.model.header.selection.as_ref().map(|s| s.folds),
            Some(if per_label == 25 { 5 } else { 0 })
        );
        assert_eq!(tuned.model.header.pipeline, plain.model.header.pipeline);
        assert_eq!(tuned.model.learner, plain.model.learner);
        assert_eq!(
            tuned.model.header.ngram_weight.is_some(),
            context == 120,
            "{per_label} a label, {context} words"
        );
        assert_eq!(
            tuned.model.header.ngram_weight,
            plain.model.header.ngram_weight
        );
    }
}
