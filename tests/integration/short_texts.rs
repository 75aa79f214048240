//! Short texts keep every word: `train` does not try the English stop-word list on them (the
//! list's words, *not* and *no* among them, are much of what a sentence has), says so, shows it
//! in `inspect`, and `--stopwords` still decides instead. `--first-word` makes a text's first
//! word a feature of its own too (`first:how`).

use std::path::Path;

use crate::common::{cwtext, eval_json, label_of, stderr, stdout, train_seed3, write_label};

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
            && err.contains("no list is tried"),
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

const SPEAKERS: &[&str] = &["alpha", "beta", "gamma", "delta"];

/// Short texts whose labels are mostly noise, as in lines of dialogue by speaker: eight words
/// from a pool of 3,000 shared by every label, one of them (in 4 of 5 texts) one of five words
/// of the text's own label; then, with probability `noise`, the text is filed under a label
/// drawn at random. Texts are written as LABEL/NNNNN.txt.
fn noisy_corpus(root: &Path, per_label: usize, noise: f64, seed: u64) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut n = 0;
    for own in SPEAKERS {
        for _ in 0..per_label {
            let mut words: Vec<String> = (0..8)
                .map(|_| format!("w{:04}", rng.gen_range(0..3000)))
                .collect();
            if rng.gen_bool(0.8) {
                words[rng.gen_range(0..8)] = format!("{own}{}", rng.gen_range(0..5));
            }
            let filed = if rng.gen_bool(noise) {
                SPEAKERS[rng.gen_range(0..SPEAKERS.len())]
            } else {
                own
            };
            let dir = root.join(filed);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(format!("{n:05}.txt")), words.join(" ")).unwrap();
            n += 1;
        }
    }
}

/// `train` also tries the soft rule, SCW-I (C 0.3), with the chosen settings, and takes it
/// when it is clearly more accurate on the held-out fifth than CW after the run's epochs: CW
/// meets every text's margin, so where most labels are noise it learns the noise. Here (labels
/// 60% redrawn) plain `train` takes the soft rule, says so, `inspect` shows it, and on texts
/// filed under their own label it is more accurate than CW alone (`--eta 0.9`: asking for CW's
/// η keeps CW), and a correction moves a text by the capped step. The negation corpus above,
/// whose labels any rule learns, keeps CW.
#[test]
fn noisy_short_texts_take_the_soft_rule_and_clean_ones_keep_cw() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, clean) = (dir.path().join("noisy"), dir.path().join("clean"));
    noisy_corpus(&corpus, 800, 0.6, 1);
    noisy_corpus(&clean, 100, 0.0, 2);
    let corpus = corpus.to_str().unwrap();

    let soft = dir.path().join("soft.cwm");
    let out = train_seed3(corpus, &soft, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("the soft rule beside CW: SCW-I (C 0.3, η 0.99, prior flat) with the chosen settings, compared after the run's epochs and taken only when clearly more accurate held out"),
        "{err}"
    );
    assert!(
        err.lines().any(|l| {
            l.starts_with(
            "took the soft rule SCW-I (C 0.3, η 0.99, prior flat): held-out accuracy after 5 epochs"
        )
        }),
        "{err}"
    );
    let out = cwtext().arg("inspect").arg(&soft).output().unwrap();
    let shown = stdout(&out);
    assert!(
        shown.contains(r#""rule":"scw1""#) && shown.contains(r#""c":0.3"#),
        "{shown}"
    );
    assert!(
        shown.contains("update rule        took the soft rule SCW-I"),
        "{shown}"
    );

    let cw = dir.path().join("cw.cwm");
    let out = train_seed3(corpus, &cw, &["--eta", "0.9"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("soft rule"), "{}", stderr(&out));
    let accuracy = |model: &Path| eval_json(model, &clean, &[])["accuracy"].as_f64().unwrap();
    let (soft_accuracy, cw) = (accuracy(&soft), accuracy(&cw));
    // 400 clean texts: measured 0.7725 against 0.6575.
    assert!(
        soft_accuracy > cw + 0.05,
        "soft rule {soft_accuracy} against CW {cw}"
    );

    // A correction keeps the soft rule's capped step: where texts cannot tell their label,
    // forcing every refiled text to come out as corrected is learning the noise again (on
    // Friends, 200 refiles forced took a model from 0.2562 to 0.2305, capped to 0.2474). One
    // refile moves the text towards its label; refiled again, it takes.
    let text = "alpha1 w0007 w0042 w1999";
    let line = dir.path().join("line.txt");
    std::fs::write(&line, text).unwrap();
    let probability_of = |label: &str| -> f64 {
        let out = cwtext()
            .args([
                "classify",
                "--format",
                "json",
                "--probabilities",
                "exact",
                "-m",
            ])
            .arg(&soft)
            .write_stdin(text)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["probabilities"][label].as_f64().unwrap()
    };
    assert_eq!(label_of(&soft, text), "alpha");
    let mut before = probability_of("delta");
    let mut refiles = 0;
    while label_of(&soft, text) != "delta" {
        assert!(refiles < 5, "not taken after {refiles} refiles");
        let out = cwtext()
            .args(["learn", "-m"])
            .arg(&soft)
            .args(["--label", "delta"])
            .arg(&line)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        refiles += 1;
        let after = probability_of("delta");
        assert!(
            after > before,
            "refile {refiles}: P(delta) {before} -> {after}"
        );
        before = after;
    }
    assert!(
        refiles > 1,
        "one refile forced the text: the step was not capped"
    );

    // Labels any rule learns: CW is kept (the soft rule is tried, and not clearly better).
    let reviews = dir.path().join("reviews");
    negation_corpus(&reviews);
    let model = dir.path().join("reviews.cwm");
    let out = train_seed3(reviews.to_str().unwrap(), &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let chose = err.lines().find(|l| l.starts_with("chose ")).unwrap();
    assert!(chose.starts_with("chose stop words none, prior"), "{chose}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("kept CW, not the soft rule SCW-I")),
        "tried: {err}"
    );
}
