//! Character n-grams beside the words: `train` gives them to short texts and small corpora (not
//! mail), says so, stores them in the model, and a flag decides instead.

use std::path::Path;

use crate::common::{assert_refused, cwtext, label_of, stderr, stdout, train_seed3, write_label};

const WEATHER: &[&str] = &[
    "rain", "rainy", "raining", "snow", "snowy", "snowing", "storm", "stormy", "wind", "windy",
    "cloud", "cloudy", "sunny", "fog", "foggy", "hail",
];
const MONEY: &[&str] = &[
    "bank", "banks", "loan", "loans", "money", "cash", "price", "prices", "cost", "costs", "tax",
    "taxes", "debt", "fund", "funds", "credit",
];

/// Two labels of three-word texts: 40 about the weather, 60 about money (so that a text of
/// words never seen goes to money by the labels' priors alone).
fn short_corpus(root: &Path) {
    for (label, words, n) in [("weather", WEATHER, 40), ("money", MONEY, 60)] {
        let text = |i: usize| {
            let w = |k: usize| words[k % words.len()];
            format!("{} {} {}", w(i), w(i * 7 + 3), w(i * 5 + 1))
        };
        write_label(root, label, (0..n).map(text));
    }
}

/// Words never seen in training ("rainstorm", "snowdrifts") are unknown to a model of words,
/// which can only fall back on the labels' priors; their letters are not unknown. Before
/// character n-grams, `train` gave this model words alone and it answered money.
#[test]
fn short_texts_get_character_n_grams_which_carry_unseen_words() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("short");
    short_corpus(&corpus);
    let corpus = corpus.to_str().unwrap();
    let model = dir.path().join("m.cwm");
    let out = train_seed3(corpus, &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "character n-grams beside the words (3–5 characters, weight 0.5): short texts (a median of at most 40 words); the median of 100 sampled documents has 3 words; about 300 words in 100 documents"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(label_of(&model, "rainstorm snowdrifts"), "weather");
    assert_eq!(label_of(&model, "bankers refunds"), "money");

    // inspect shows the choice and why; explain names the n-grams.
    let out = cwtext().arg("inspect").arg(&model).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("text length        the median of 100 sampled documents has 3 words; about 300 words in 100 documents: character n-grams beside the words, 3–5 characters, weight 0.5; every word kept, no stop-word list; short texts (a median of at most 40 words)"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains(r#""char_ngrams":{"min":3,"max":5,"weight_per_mille":500}"#));
    let out = cwtext()
        .args(["explain", "-m"])
        .arg(&model)
        .write_stdin("rainstorm")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("chars:<ra"), "{}", stdout(&out));

    // Same data, same seed: the same bytes.
    let again = dir.path().join("again.cwm");
    assert!(train_seed3(corpus, &again, &[]).status.success());
    assert_eq!(
        std::fs::read(&model).unwrap(),
        std::fs::read(&again).unwrap()
    );

    // Without them, as before: the unseen words fall back on the priors.
    let words = dir.path().join("words.cwm");
    let out = train_seed3(corpus, &words, &["--char-ngrams", "none"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("character n-grams"),
        "{}",
        stderr(&out)
    );
    assert_eq!(label_of(&words, "rainstorm snowdrifts"), "money");
    let out = cwtext().arg("inspect").arg(&words).output().unwrap();
    assert!(!stdout(&out).contains("char_ngrams"), "{}", stdout(&out));
    // A model of words alone is a file of an older version (1 without kept documents, 3 with).
    assert_eq!(std::fs::read(&words).unwrap()[8], 3);
    assert_eq!(std::fs::read(&model).unwrap()[8], 4);
}

/// Mail gets none (its header fields route it), however small the corpus; a flag gives them
/// anyway, with its range and weight.
#[test]
fn mail_gets_none_unless_asked_and_the_flags_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.cwm");
    let out = train_seed3("mail", &model, &["--include", "train-*"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("words without character n-grams: the median of 60 sampled documents has"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("mail, which its header fields route as much as its words"),
        "{}",
        stderr(&out)
    );
    let out = train_seed3(
        "mail",
        &model,
        &[
            "--include",
            "train-*",
            "--char-ngrams",
            "2-4",
            "--char-weight",
            "0.25",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = cwtext().arg("inspect").arg(&model).output().unwrap();
    assert!(
        stdout(&out).contains(r#""char_ngrams":{"min":2,"max":4,"weight_per_mille":250}"#),
        "{}",
        stdout(&out)
    );

    for (args, message) in [
        (
            &["--char-ngrams", "5-3"][..],
            "character n-grams must run from n to m with 1 ≤ n ≤ m ≤ 8, but are 5 to 3",
        ),
        (
            &["--char-ngrams", "3"][..],
            "character n-grams are N-M (as 3-5) or none",
        ),
        (
            &["--char-weight", "0"][..],
            "the weight of character n-grams must be in (0, 10], but is 0",
        ),
        (
            &["--char-ngrams", "none", "--char-weight", "2"][..],
            "--char-weight weighs character n-grams, but --char-ngrams is none",
        ),
        (
            &["--tokenizer", "bpe", "--char-ngrams", "3-5"][..],
            "character n-grams are of words, but the tokeniser gives bpe pieces",
        ),
    ] {
        let out = train_seed3("news", &dir.path().join("bad.cwm"), args);
        assert_refused(&out, message);
        assert!(!dir.path().join("bad.cwm").exists(), "{args:?}");
    }
}
