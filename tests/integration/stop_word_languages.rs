//! Stop words in the corpus's language. `train` chooses between a stop-word list and none on
//! long texts; on German text it used to try the English list, which removes almost nothing
//! there (and "was", "will", "also", German words, where it does). It now tries the built-in
//! list of the language it detects in its sampled documents, says so, and `tune`'s train's
//! choices and its trials take the same list. The built-in lists are flags too, and a user's
//! own list is named by its file where `train` reports its choice.

use std::path::Path;

use crate::common::{
    assert_same_model, cwtext, inspect_json, stderr, stdout, train_seed3, write_label,
    write_topic_reports,
};
use crate::tune::{printed_train, run_train};

/// German reports on two topics, weather and football: each document five sentences of its
/// topic and three shared ones, about 70 words, so long enough for the list to be tried.
fn german_corpus(root: &Path) {
    let topics: [(&str, &[&str]); 2] = [
        (
            "wetter",
            &[
                "Am Morgen war der Himmel über der Stadt grau und es regnete ohne Pause.",
                "Der Wetterdienst warnt vor starkem Wind und Gewittern am Nachmittag.",
                "Im Norden fällt in der Nacht Schnee, die Straßen werden glatt sein.",
                "Nach dem Regen kommt die Sonne, und die Temperaturen steigen auf zwanzig Grad.",
                "Die Meteorologen erwarten für das Wochenende einen trockenen und warmen Hochdruck.",
                "Der Nebel über den Feldern löst sich erst gegen Mittag langsam auf.",
                "Ein kalter Wind aus Osten bringt Frost bis in die tiefen Lagen.",
            ],
        ),
        (
            "fussball",
            &[
                "Die Mannschaft gewann das Spiel am Samstag mit drei zu eins Toren.",
                "Der Trainer lobte die Abwehr, die in der zweiten Halbzeit kaum Chancen zuließ.",
                "Im Stadion jubelten die Fans, als der Stürmer kurz vor Schluss traf.",
                "Der Verein hat einen neuen Torwart aus der zweiten Liga verpflichtet.",
                "Nach der Niederlage im Pokal steht der Trainer unter großem Druck.",
                "Der Schiedsrichter zeigte dem Verteidiger nach einem Foul die rote Karte.",
                "In der Tabelle liegt die Mannschaft jetzt nur noch einen Punkt hinter dem Spitzenreiter.",
            ],
        ),
    ];
    let shared = [
        "Das haben wir gestern in der Zeitung gelesen, und es wird noch lange diskutiert werden.",
        "Viele Leute in der Stadt sprechen darüber, aber nicht alle sind derselben Meinung.",
        "Es ist nicht das erste Mal, dass so etwas passiert, und es wird auch nicht das letzte sein.",
        "Man wird sehen, was die nächsten Tage bringen werden.",
    ];
    write_topic_reports(root, &topics, &shared);
}

/// The settings `train` tried, from its `chose …` line (`kept …` when too few documents
/// are held out to choose on).
fn chose_line(err: &str) -> &str {
    err.lines()
        .find(|l| l.starts_with("chose stop words") || l.starts_with("kept stop words"))
        .unwrap_or_else(|| panic!("no choice printed: {err}"))
}

#[test]
fn train_tries_the_list_of_the_corpus_language() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("berichte");
    german_corpus(&corpus);
    let model = dir.path().join("m.cwm");
    let out = train_seed3(corpus.to_str().unwrap(), &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("stop words german or none: the sampled documents are in german, so its list is tried in place of the English one"),
        "{err}"
    );
    // Both priors with the German list and with none, and nothing with the English list.
    let chose = chose_line(&err);
    assert!(chose.contains("stop words german, prior"), "{chose}");
    assert!(chose.contains("stop words none, prior"), "{chose}");
    assert!(!err.contains("stop words english"), "{err}");
    // The model records what was chosen, and the German list when it was.
    let pipeline = inspect_json(&model)["pipeline"].to_string();
    if chose.starts_with("chose stop words german") {
        assert!(pipeline.contains(r#""name":"german""#), "{pipeline}");
    } else {
        assert!(!pipeline.contains("stop_words"), "{pipeline}");
    }

    // The same documents in English get the English list, as before.
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
                    "The reports from {words} were read by many people in the city yesterday, and it is not the first time that this has happened here; we will see what the next days bring to all of them, number {d}. "
                )
                .repeat(2)
            }),
        );
    }
    let out = train_seed3(english.to_str().unwrap(), &dir.path().join("e.cwm"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(!err.contains("in place of the English one"), "{err}");
    assert!(
        chose_line(&err).contains("stop words english, prior"),
        "{err}"
    );
}

#[test]
fn lists_in_other_languages_are_flags_and_a_users_list_is_named_by_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("berichte");
    german_corpus(&corpus);
    let corpus = corpus.to_str().unwrap();

    let model = dir.path().join("de.cwm");
    let out = train_seed3(corpus, &model, &["--stopwords", "german"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The list is the user's: nothing about the language's list, the prior alone chosen.
    let err = stderr(&out);
    assert!(!err.contains("in place of the English one"), "{err}");
    assert!(
        chose_line(&err).contains(" stop words german, prior"),
        "{err}"
    );
    // The model holds the German list itself: Snowball's 231 words, not the English 174.
    let pipeline = inspect_json(&model)["pipeline"].to_string();
    assert!(
        pipeline.contains(r#"{"type":"stop_words","name":"german","words":"(231 items)"}"#),
        "{pipeline}"
    );
    // A user's own list is reported under its file's name, not as the English list.
    let list = dir.path().join("meine-liste.txt");
    std::fs::write(&list, "und\nder\ndie\n").unwrap();
    let out = train_seed3(
        corpus,
        &dir.path().join("own.cwm"),
        &["--stopwords", list.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let chose = chose_line(&err);
    assert!(
        chose.contains(&format!(" stop words {}, prior", list.display())),
        "{chose}"
    );
    assert!(!err.contains("stop words english"), "{err}");

    // An unknown name lists the built-in lists.
    let out = train_seed3(
        corpus,
        &dir.path().join("x.cwm"),
        &["--stopwords", "klingon"],
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("danish, dutch, english, finnish, french, german, hungarian, italian, norwegian, portuguese, russian, spanish, swedish"),
        "{}",
        stderr(&out)
    );
}

/// `tune` tries what `train` tries: train's choices and the random trials that take a list
/// take the German one (no trial and no printed command names the English list), and its kept
/// pick is the model of the plain `train` it names, which tried the German list too.
#[test]
fn tune_takes_the_list_of_the_corpus_language() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("berichte");
    german_corpus(&corpus);
    let out = cwtext()
        .arg("tune")
        .arg(&corpus)
        .args(["--budget", "10", "--max-epochs", "2", "-o"])
        .arg(dir.path().join("t.cwm"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "trials that drop stop words use the german list: the sampled documents' language"
        ),
        "{}",
        stderr(&out)
    );
    let text = stdout(&out);
    let trials: Vec<&str> = text.lines().filter(|l| l.starts_with("trial")).collect();
    assert_eq!(trials.len(), 10, "{text}");
    assert!(
        trials.iter().any(|t| t.contains("stopwords=german")),
        "{text}"
    );
    assert!(!text.contains("stopwords=english"), "{text}");
    assert!(!text.contains("--stopwords english"), "{text}");

    // Train's choices alone: tune keeps train's pick, and the plain `train` it names writes
    // the same model (so the two chose among the same German-list candidates): the same
    // settings, pipeline, probability scale and probabilities. Only the record of the choice
    // differs on a corpus this small, which `train` chose by cross-validation.
    let tuned = dir.path().join("kept.cwm");
    let out = cwtext()
        .arg("tune")
        .arg(&corpus)
        .args(["--budget", "4", "--seed", "2", "-o"])
        .arg(&tuned)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let again = dir.path().join("again.cwm");
    let words = printed_train(
        &stdout(&out),
        "kept train's pick, so plain train writes these weights: ",
        &again,
    );
    let err = run_train(&words);
    // Plain train tried the German list too: tune's copy of its choices is the same set.
    assert!(
        err.contains("stop words german or none: the sampled documents are in german"),
        "{err}"
    );
    assert_same_model(&tuned, &again, &corpus);
}
