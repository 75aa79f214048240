//! Short texts keep every word: `train` does not try the English stop-word list on them (the
//! list's words, *not* and *no* among them, are much of what a sentence has), says so, shows it
//! in `inspect`, and `--stopwords` still decides instead. `--first-word` makes a text's first
//! word a feature of its own too (`first:how`).

use std::path::Path;

use crate::common::{cwtext, label_of, stderr, stdout, train_seed3, write_label};

const THINGS: &[&str] = &[
    "food", "service", "room", "staff", "view", "coffee", "bed", "music", "price", "menu",
];
const GOOD: &[&str] = &["good", "great", "clean", "friendly", "fresh"];

/// Review sentences that only a negation tells apart: "the food was good" is pos, "the food
/// was not good" neg, over the same things and the same words of praise.
fn negation_corpus(root: &Path) {
    for (label, negated) in [("pos", false), ("neg", true)] {
        let not = if negated { "not " } else { "" };
        let text = |i: usize| {
            let thing = THINGS[i % THINGS.len()];
            let good = GOOD[(i / THINGS.len()) % GOOD.len()];
            format!("the {thing} was {not}{good}")
        };
        write_label(root, label, (0..150).map(text));
    }
}

#[test]
fn short_texts_keep_every_word_unless_a_list_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("reviews");
    negation_corpus(&corpus);
    let corpus = corpus.to_str().unwrap();

    // Plain train: no list, and the list is not among the candidates (only the two priors are).
    let model = dir.path().join("m.cwm");
    let out = train_seed3(corpus, &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("stop words none: short texts (a median of at most 40 words) keep every word")
            && err.contains("the English list is not tried"),
        "{err}"
    );
    let chose = err
        .lines()
        .find(|l| l.starts_with("chose "))
        .unwrap_or_else(|| panic!("no choice printed: {err}"));
    assert!(!chose.contains("stop words english"), "{chose}");
    assert!(chose.contains("stop words none, prior flat"), "{chose}");
    assert_eq!(label_of(&model, "the bed was not fresh"), "neg");
    assert_eq!(label_of(&model, "the bed was fresh"), "pos");
    let out = cwtext().arg("inspect").arg(&model).output().unwrap();
    assert!(
        stdout(&out).contains("; every word kept, no stop-word list; short texts"),
        "{}",
        stdout(&out)
    );
    assert!(!stdout(&out).contains("stop_words"), "{}", stdout(&out));

    // Told to, train uses the list: inspect shows it in the pipeline and no kept words. With
    // words alone, the list leaves "the bed was not fresh" and "the bed was fresh" the same
    // words, which is what the rule spares short texts.
    let listed = dir.path().join("listed.cwm");
    let out = train_seed3(
        corpus,
        &listed,
        &["--stopwords", "english", "--char-ngrams", "none"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("keep every word"),
        "{}",
        stderr(&out)
    );
    let out = cwtext().arg("inspect").arg(&listed).output().unwrap();
    assert!(stdout(&out).contains("stop_words"), "{}", stdout(&out));
    assert!(
        !stdout(&out).contains("every word kept"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        label_of(&listed, "the bed was not fresh"),
        label_of(&listed, "the bed was fresh")
    );
}

const FILLERS: &[&str] = &[
    "river", "candle", "marble", "pepper", "ladder", "violin", "garden", "harbor", "pillow",
    "copper", "meadow", "tunnel", "basket", "lantern", "saddle", "anchor", "feather", "kettle",
    "orchard", "quarry",
];
const UNSEEN: &[&str] = &[
    "glacier", "trumpet", "walnut", "blanket", "compass", "thimble", "beacon", "pebble",
];

/// Questions whose label only their first word gives: "why A how B" asks for a reason, "how A
/// why B" for a manner, over the same pairs of filler words, so that both labels have the same
/// words (why and how once each) and the same bigrams of why or how with the fillers but for
/// the one before the second question word.
fn first_word_corpus(root: &Path) {
    for (label, first, second) in [("reason", "why", "how"), ("manner", "how", "why")] {
        let text = |i: usize| {
            let (a, b) = (FILLERS[i % 20], FILLERS[(i * 7 + 3) % 20]);
            format!("{first} {a} {second} {b}")
        };
        write_label(root, label, (0..120).map(text));
    }
}

#[test]
fn the_first_word_is_a_feature_of_its_own_when_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("questions");
    first_word_corpus(&corpus);
    let corpus = corpus.to_str().unwrap();
    let pairs: Vec<(String, String)> = (0..UNSEEN.len())
        .map(|i| {
            let (t, u) = (UNSEEN[i], UNSEEN[(i + 3) % UNSEEN.len()]);
            (format!("why {t} how {u}"), format!("how {t} why {u}"))
        })
        .collect();

    // By default the two questions of a pair of unseen fillers have the same known features
    // (why, how, their letters; every bigram is new), so they get the same label: one of the
    // two is wrong.
    let plain = dir.path().join("plain.cwm");
    let out = train_seed3(corpus, &plain, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    for (reason, manner) in &pairs {
        assert_eq!(label_of(&plain, reason), label_of(&plain, manner));
    }
    let out = cwtext().arg("inspect").arg(&plain).output().unwrap();
    assert!(!stdout(&out).contains("first_word"), "{}", stdout(&out));

    // Asked for, the first word tells them apart, inspect shows it and explain names it.
    let model = dir.path().join("m.cwm");
    let out = train_seed3(corpus, &model, &["--first-word"]);
    assert!(out.status.success(), "{}", stderr(&out));
    for (reason, manner) in &pairs {
        assert_eq!(label_of(&model, reason), "reason", "{reason}");
        assert_eq!(label_of(&model, manner), "manner", "{manner}");
    }
    let out = cwtext().arg("inspect").arg(&model).output().unwrap();
    assert!(
        stdout(&out).contains(r#""first_word":true"#),
        "{}",
        stdout(&out)
    );
    let out = cwtext()
        .args(["explain", "-m"])
        .arg(&model)
        .write_stdin("Why glacier how walnut")
        .output()
        .unwrap();
    assert!(stdout(&out).contains("first:why"), "{}", stdout(&out));
    // A model with it is a format version 5 file.
    assert_eq!(std::fs::read(&model).unwrap()[8], 5);
}
