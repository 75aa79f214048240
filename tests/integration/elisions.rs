//! Elided articles taken off words. UAX #29 keeps *l'orage* one word, so a French model that
//! learned *l'orage* and *d'orage* knew nothing of *orage*, nor of *un orage*. `train` now
//! takes the articles of the language it detects in its sampled documents (French, Italian)
//! off words, says so, and stores the filter in the model, so that `classify` does the same;
//! `--elisions` overrides the choice, and `tune`'s trials and its kept pick take them as
//! plain `train` does.

use std::path::Path;

use crate::common::{
    assert_same_model, cwtext, inspect_json, stderr, stdout, train_seed3, write_label,
    write_topic_reports,
};
use crate::tune::{printed_train, run_train};

/// French reports on two topics, weather and football, about 70 words each. The words that
/// tell the topics apart come with an elided article only: *l'orage*, *d'orage*, *l'averse*;
/// *l'équipe*, *d'équipe*, *l'entraîneur*.
fn french_corpus(root: &Path) {
    let topics: [(&str, &[&str]); 2] = [
        (
            "meteo",
            &[
                "Ce matin, l'orage a frappé la ville et l'averse n'a pas cessé avant midi.",
                "Les services annoncent l'arrivée d'orage sur le nord dans la soirée.",
                "Après l'averse, le ciel s'éclaircit et la température remonte doucement.",
                "On attend l'orage du soir, car l'air est lourd depuis hier.",
                "Une alerte d'orage est lancée pour toute la région jusqu'à demain.",
                "L'averse de grêle a surpris les promeneurs qu'on voyait courir.",
                "Le vent souffle fort et l'orage gronde au-dessus des collines.",
            ],
        ),
        (
            "football",
            &[
                "Samedi, l'équipe a gagné le match par trois buts à un.",
                "L'entraîneur a félicité la défense, qui n'a presque rien laissé passer.",
                "Le capitaine d'équipe a marqué juste avant la fin de la rencontre.",
                "Le club a recruté pour l'équipe un nouveau gardien venu d'un autre pays.",
                "Après la défaite, l'entraîneur est sous une forte pression.",
                "L'arbitre a expulsé un défenseur, et l'équipe a fini à dix.",
                "Au classement, l'équipe n'est plus qu'à un point du premier.",
            ],
        ),
    ];
    let shared = [
        "Nous l'avons lu hier dans le journal, et on en parlera encore longtemps.",
        "Beaucoup de gens en ville en parlent, mais tout le monde n'est pas du même avis.",
        "Ce n'est pas la première fois que cela arrive, et ce ne sera pas la dernière.",
        "On verra bien ce que les prochains jours nous apporteront.",
    ];
    write_topic_reports(root, &topics, &shared);
}

/// `explain --format json -m MODEL` of `text`: the features read for its label and against it,
/// by their texts, with their contributions to the margin.
fn explained(model: &Path, text: &str) -> (String, Vec<(String, f64)>) {
    let out = cwtext()
        .args(["explain", "--format", "json", "--top", "100", "-m"])
        .arg(model)
        .write_stdin(text)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let features = ["for_label", "for_runner_up"]
        .iter()
        .flat_map(|side| v[side].as_array().cloned().unwrap_or_default())
        .map(|f| {
            (
                f["texts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.as_str().unwrap())
                    .collect::<Vec<_>>()
                    .join("|"),
                f["contribution"].as_f64().unwrap(),
            )
        })
        .collect();
    (v["label"].as_str().unwrap().to_string(), features)
}

#[test]
fn train_takes_the_articles_of_the_corpus_language_off_words() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("rapports");
    french_corpus(&corpus);
    let corpus = corpus.to_str().unwrap();

    let model = dir.path().join("fr.cwm");
    let out = train_seed3(corpus, &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "elided articles taken off words (l', m', t', …): the sampled documents are in french"
        ),
        "{err}"
    );
    // The model holds the filter and its 13 articles, before the stop words (a format 7 file).
    let pipeline = inspect_json(&model)["pipeline"].to_string();
    assert!(
        pipeline.contains(
            r#"{"type":"max_length","chars":40},{"type":"elisions","name":"french","articles":"(13 items)"}"#
        ),
        "{pipeline}"
    );
    assert_eq!(std::fs::read(&model).unwrap()[8], 7);
    // Words it saw only after an article are read without one, and tell the topics apart.
    for (text, label, words) in [
        ("Un orage, puis une averse.", "meteo", ["orage", "averse"]),
        (
            "Une équipe et son entraîneur.",
            "football",
            ["équipe", "entraîneur"],
        ),
    ] {
        let (chosen, features) = explained(&model, text);
        assert_eq!(chosen, label, "{text}: {features:?}");
        for word in words {
            let part = features.iter().find(|(t, _)| t == word);
            assert!(part.is_some_and(|(_, c)| *c > 0.05), "{word}: {features:?}");
        }
    }

    // Turned off, the same words were never seen without their article: not one is read.
    let whole = dir.path().join("whole.cwm");
    let out = train_seed3(corpus, &whole, &["--elisions", "none"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("elided articles"),
        "{}",
        stderr(&out)
    );
    assert!(!inspect_json(&whole)["pipeline"]
        .to_string()
        .contains("elisions"));
    assert_eq!(std::fs::read(&whole).unwrap()[8], 4);
    let (_, features) = explained(&whole, "Un orage, puis une averse.");
    assert!(
        !features.iter().any(|(t, _)| t == "orage" || t == "averse"),
        "{features:?}"
    );

    // Asked for, on any corpus: the Italian articles; an unknown language lists the lists.
    let italian = dir.path().join("it.cwm");
    let out = train_seed3(corpus, &italian, &["--elisions", "italian"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("elided articles"),
        "{}",
        stderr(&out)
    );
    assert!(inspect_json(&italian)["pipeline"]
        .to_string()
        .contains(r#"{"type":"elisions","name":"italian","articles":"(21 items)"}"#));
    let out = train_seed3(
        corpus,
        &dir.path().join("x.cwm"),
        &["--elisions", "klingon"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[possible values: french, italian, none]"),
        "{}",
        stderr(&out)
    );
    // Typographic and other apostrophes that UAX #29 keeps inside a word come off too.
    for apostrophe in ['\u{2019}', '\u{2018}', '\u{FF07}', '\u{02BC}'] {
        let text = format!("Un orage puis l{apostrophe}averse.");
        let (_, features) = explained(&model, &text);
        assert!(
            features.iter().any(|(t, _)| t == "averse"),
            "{apostrophe:?}: {features:?}"
        );
    }
    // Continuing a model keeps its own: asking for other elisions is said to be unused.
    let out = train_seed3(
        corpus,
        &dir.path().join("more.cwm"),
        &["--resume", model.to_str().unwrap(), "--elisions", "italian"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--elisions italian is not used:")
            && stderr(&out).contains("keeps its own (french;"),
        "{}",
        stderr(&out)
    );
    let out = train_seed3(
        corpus,
        &dir.path().join("x.cwm"),
        &["--elisions", "french", "--tokenizer", "bpe"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--elisions french does not combine with --tokenizer bpe"),
        "{}",
        stderr(&out)
    );
}

/// An English corpus, where an apostrophe starts no article: no filter, nothing said, and the
/// model is the one `--elisions none` writes, byte for byte, with the other choices left to
/// `train` and with every one of them fixed (where the detection alone used to record the
/// sample's text length in the model).
#[test]
fn english_keeps_its_words_whole() {
    let dir = tempfile::tempdir().unwrap();
    let english = dir.path().join("reports");
    for (label, words) in [
        ("weather", "rain wind snow cloud"),
        ("football", "goal match team coach"),
    ] {
        write_label(
            &english,
            label,
            (0..30).map(|d| {
                format!(
                    "The reports of {words} weren't read by O'Brien's people in the city yesterday, and it's not the first time that this has happened here; we'll see what the next days bring, number {d}. "
                )
                .repeat(2)
            }),
        );
    }
    let model = dir.path().join("e.cwm");
    let out = train_seed3(english.to_str().unwrap(), &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("elided articles"),
        "{}",
        stderr(&out)
    );
    assert!(!inspect_json(&model)["pipeline"]
        .to_string()
        .contains("elisions"));
    let fixed = [
        "--stopwords",
        "english",
        "--char-ngrams",
        "none",
        "--hash-bits",
        "18",
        "--ngrams",
        "2",
        "--algo",
        "arow",
        "--ngram-weight",
        "1",
        "--field-rule",
        "stable",
    ];
    for extra in [&[][..], &fixed[..]] {
        let [chosen, none] = ["chosen.cwm", "none.cwm"].map(|m| dir.path().join(m));
        let out = train_seed3(english.to_str().unwrap(), &chosen, extra);
        assert!(out.status.success(), "{}", stderr(&out));
        let with_none = [extra, &["--elisions", "none"]].concat();
        let out = train_seed3(english.to_str().unwrap(), &none, &with_none);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            std::fs::read(&chosen).unwrap() == std::fs::read(&none).unwrap(),
            "{extra:?}"
        );
    }
}

/// `tune`'s trials take the articles off as `train` does, and its kept pick is the model of
/// the plain `train` it names.
#[test]
fn tune_takes_the_articles_off_as_train_does() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("rapports");
    french_corpus(&corpus);
    let tuned = dir.path().join("kept.cwm");
    let out = cwtext()
        .arg("tune")
        .arg(&corpus)
        .args(["--budget", "4", "--seed", "2", "-o"])
        .arg(&tuned)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("every trial takes french elided articles off words"),
        "{}",
        stderr(&out)
    );
    assert!(inspect_json(&tuned)["pipeline"]
        .to_string()
        .contains(r#""name":"french","articles""#));
    let again = dir.path().join("again.cwm");
    let words = printed_train(
        &stdout(&out),
        "kept train's pick, so plain train writes these weights: ",
        &again,
    );
    let err = run_train(&words);
    assert!(err.contains("elided articles taken off words"), "{err}");
    assert_same_model(&tuned, &again, &corpus);
}
