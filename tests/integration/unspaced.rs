//! Text written without spaces between words (Chinese, Japanese, Thai): UAX #29 makes each Han
//! character a word, so `train` takes n-grams up to three there (a trigram of characters is
//! about a bigram of words), says so, stores it in the model, and `--ngrams` decides instead.

use std::path::Path;

use crate::common::{eval_json, inspect_json, stderr, stdout, train_seed3, write_label};

/// Two labels that only the order of three characters tells apart. Each text holds two
/// triples among filler characters: `orderly` texts hold 山水火 and 火水山, `mixed` texts
/// 山水山 and 火水火. Both labels have every character and every bigram (山水 水火 火水 水山,
/// and the same ones beside the filler) equally often; only their trigrams differ. So a model
/// of words and bigrams is left at chance, and one of trigrams is not.
fn triples(root: &Path, per_label: usize, offset: usize) {
    const FILLER: [char; 10] = ['日', '月', '木', '金', '土', '天', '地', '人', '口', '心'];
    let f = |k: usize| FILLER[k % FILLER.len()];
    for (label, a, b) in [
        ("orderly", "山水火", "火水山"),
        ("mixed", "山水山", "火水火"),
    ] {
        let texts = (offset..offset + per_label).map(|i| {
            // Which triple comes first, and the filler around them, vary by text alike in both
            // labels.
            let (first, second) = if i % 2 == 0 { (a, b) } else { (b, a) };
            format!(
                "{}{}{first}{}{}{second}{}{}。\n",
                f(i),
                f(i * 3 + 1),
                f(i * 7 + 2),
                f(i / 3 + 5),
                f(i * 11 + 4),
                f(i / 7 + 6)
            )
        });
        write_label(root, label, texts);
    }
}

#[test]
fn text_written_without_spaces_gets_trigrams_which_carry_what_its_words_are() {
    let dir = tempfile::tempdir().unwrap();
    let (train, test) = (dir.path().join("train"), dir.path().join("test"));
    triples(&train, 120, 0);
    triples(&test, 40, 1_000);
    let model = dir.path().join("m.cwm");
    let out = train_seed3(train.to_str().unwrap(), &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "n-grams up to 3: text written without spaces between words (200 of 200 sampled documents have mostly words of one character, as UAX #29 makes each Han character a word), so a trigram of characters is about what a bigram is to spaced words"
        ),
        "{}",
        stderr(&out)
    );
    // Before, the same command trained words and bigrams: at chance here (0.51).
    let trigrams = eval_json(&model, &test, &[])["accuracy"].as_f64().unwrap();
    assert!(trigrams >= 0.95, "{trigrams}");
    // The model keeps the choice, and inspect says why.
    assert_eq!(inspect_json(&model)["pipeline"]["max_ngram"], 3);
    assert_eq!(inspect_json(&model)["text_length"]["unspaced"], 200);
    let out = crate::common::cwtext()
        .arg("inspect")
        .arg(&model)
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("                   n-grams up to 3: text written without spaces between words (200 of 200"),
        "{}",
        stdout(&out)
    );

    // tune's trials take them as train does.
    let tuned = dir.path().join("tuned.cwm");
    let out = crate::common::cwtext()
        .args(["tune", "--budget", "4", "--seed", "3", "-o"])
        .arg(&tuned)
        .arg(&train)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("train's choices take n-grams up to 3, and so do the trials that take bigrams: text written without spaces"),
        "{}",
        stderr(&out)
    );
    assert_eq!(inspect_json(&tuned)["pipeline"]["max_ngram"], 3);
    assert!(eval_json(&tuned, &test, &[])["accuracy"].as_f64().unwrap() >= 0.95);

    // --ngrams decides instead, and then nothing is said of it.
    let bigram_model = dir.path().join("bigrams.cwm");
    let out = train_seed3(train.to_str().unwrap(), &bigram_model, &["--ngrams", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("n-grams up to"), "{}", stderr(&out));
    assert_eq!(inspect_json(&bigram_model)["pipeline"]["max_ngram"], 2);
    let bigrams = eval_json(&bigram_model, &test, &[])["accuracy"]
        .as_f64()
        .unwrap();
    assert!(bigrams <= 0.7, "{bigrams}");
}

/// Spaced text keeps bigrams, however many of its words are one letter long: a list of letters
/// or digits is not text written without spaces.
#[test]
fn spaced_text_keeps_bigrams() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("spaced");
    write_label(
        &corpus,
        "letters",
        (0..30).map(|i| format!("a b c {} d e f\n", i % 10)),
    );
    write_label(
        &corpus,
        "words",
        (0..30).map(|i| format!("the cat sat on mat {i}\n")),
    );
    let model = dir.path().join("m.cwm");
    let out = train_seed3(corpus.to_str().unwrap(), &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("n-grams up to"), "{}", stderr(&out));
    assert_eq!(inspect_json(&model)["pipeline"]["max_ngram"], 2);
    // The count is not written when 0: a model of spaced text has the bytes it had before.
    assert_eq!(
        inspect_json(&model)["text_length"]["unspaced"],
        serde_json::Value::Null
    );
}
