//! `tune` says how to train its model again: the `cwtext train` command it prints writes the
//! same model, so a user can train the tuned settings on next month's corpus without a search.

use std::path::Path;

use crate::common::{cwtext, eval_json, stderr, stdout};

/// Runs `cwtext tune ARGS -o MODEL` from the fixture folder and returns its standard output.
fn tune(args: &[&str], model: &Path) -> String {
    let out = cwtext()
        .arg("tune")
        .args(args)
        .arg("-o")
        .arg(model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

/// The command `tune` printed after `marker`, split as a shell splits it, with the model path
/// (after `-o`) replaced by `model`; its words after `cwtext`.
pub fn printed_train(text: &str, marker: &str, model: &Path) -> Vec<String> {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(marker))
        .unwrap_or_else(|| panic!("no line starting {marker:?}:\n{text}"));
    let command = line.split(" (on another corpus").next().unwrap();
    let mut words = shlex::split(command).unwrap_or_else(|| panic!("not shell words: {line}"));
    assert_eq!(words[..2], ["cwtext", "train"], "{line}");
    let o = words.iter().position(|w| w == "-o").expect("-o") + 1;
    words[o] = model.display().to_string();
    words.split_off(1)
}

pub fn run_train(words: &[String]) -> String {
    let out = cwtext().args(words).output().unwrap();
    assert!(out.status.success(), "{words:?}: {}", stderr(&out));
    stderr(&out)
}

/// A challenger that won `tune`'s cross-validation, for each of the rules the search draws (CW
/// stdev with character n-grams and k = 5, AROW, SCW-I) and for mail with every header field
/// whole: the printed `train` command writes tune's model byte for byte. Before, `tune` printed
/// its settings only as `stdev eta=0.8 prior=idf sequential k=5 | stopwords=none … stem=none
/// …`, which no flag spelling matched (`--stem none` was refused), and its AROW and CW trials
/// kept an unread C and r (and AROW an unread η) that `train` could not be given, so no flags
/// wrote its model.
#[test]
fn a_winning_challenger_is_trained_again_by_the_printed_train_command() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["sentences/train", "--seed", "6"], "--update stdev"),
        (&["sentences/train", "--seed", "11"], "--algo arow"),
        (&["sentences/train", "--seed", "35"], "--algo scw1"),
        (
            &["mail", "--include", "train-*", "--seed", "1"],
            "--field-rule whole",
        ),
    ];
    for (i, (args, setting)) in cases.into_iter().enumerate() {
        let tuned = dir.path().join(format!("tuned-{i}.cwm"));
        let text = tune(&[args, &["--max-epochs", "5"]].concat(), &tuned);
        // The search must have ended in a challenger (these seeds do), or the case tests
        // nothing.
        assert!(!text.contains("kept train's pick"), "{args:?}:\n{text}");
        let again = dir.path().join(format!("again-{i}.cwm"));
        let words = printed_train(&text, "the same model from train: ", &again);
        assert!(words.join(" ").contains(setting), "{setting}: {words:?}");
        // Every searched setting is given, so train chooses none of them itself.
        for flag in ["--prior", "--stopwords", "--ngrams", "--values", "--epochs"] {
            assert!(words.iter().any(|w| w == flag), "{flag}: {words:?}");
        }
        run_train(&words);
        assert!(
            std::fs::read(&tuned).unwrap() == std::fs::read(&again).unwrap(),
            "{args:?}: the model of {words:?} is not tune's"
        );
        // The same flags are in MODEL.tune.json, for a script that retrains on new data.
        let report: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(format!("tuned-{i}.cwm.tune.json"))).unwrap(),
        )
        .unwrap();
        let flags: Vec<&str> = report["train_flags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        assert!(words.ends_with(&flags.iter().map(|f| f.to_string()).collect::<Vec<_>>()));
    }
}

/// When train's pick is kept, `tune` says that plain `train` (the same corpus options, no
/// settings) writes its weights; its probabilities on test documents are the same to the last
/// digit. (The files differ in train's record of its own choice, which `tune` replaces with
/// its search.)
#[test]
fn a_kept_pick_names_plain_train() {
    let dir = tempfile::tempdir().unwrap();
    let tuned = dir.path().join("tuned.cwm");
    let text = tune(&["news", "--include", "train-*", "--seed", "1"], &tuned);
    let again = dir.path().join("again.cwm");
    let words = printed_train(
        &text,
        "kept train's pick, so plain train writes these weights: ",
        &again,
    );
    assert_eq!(
        words[1..],
        [
            "news",
            "-o",
            again.to_str().unwrap(),
            "--include",
            "train-*"
        ],
        "{text}"
    );
    run_train(&words);
    let report = |m: &Path| eval_json(m, "news", &["--include", "test-*"]);
    assert_eq!(report(&tuned), report(&again));
    // With fewer epochs than train's 5 allowed, the kept pick is trained for those: the
    // command says so (it named plain train, whose 5 epochs gave other weights).
    let short = dir.path().join("short.cwm");
    let text = tune(
        &["news", "--include", "train-*", "--max-epochs", "3"],
        &short,
    );
    let again = dir.path().join("short-again.cwm");
    let words = printed_train(
        &text,
        "kept train's pick, so plain train writes these weights: ",
        &again,
    );
    assert!(
        words.ends_with(&["--epochs".to_string(), "3".to_string()]),
        "{text}"
    );
    run_train(&words);
    assert_eq!(report(&short), report(&again));
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("tuned.cwm.tune.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["train_flags"], serde_json::json!([]));
}

/// `--stem none` is the default spelled out (tune's trials print `stem=none`): the same model
/// as no `--stem`; a language that is not one is refused with the list, none first.
#[test]
fn stem_none_is_no_stemming() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, none) = (dir.path().join("plain.cwm"), dir.path().join("none.cwm"));
    let train = |model: &Path, extra: &[&str]| {
        let mut words: Vec<String> = ["train", "news", "--include", "train-*", "-o"]
            .map(String::from)
            .into();
        words.push(model.display().to_string());
        words.extend(extra.iter().map(|s| s.to_string()));
        run_train(&words)
    };
    train(&plain, &[]);
    train(&none, &["--stem", "none"]);
    assert!(std::fs::read(&plain).unwrap() == std::fs::read(&none).unwrap());
    let out = cwtext()
        .args(["train", "news", "--stem", "klingon", "-o"])
        .arg(dir.path().join("k.cwm"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("invalid value 'klingon' for '--stem <LANGUAGE|none>'")
            && stderr(&out).contains("[possible values: none, arabic, danish"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("k.cwm").exists());
}

/// `tune`'s stemming trials stem in the corpus's language: on Russian text an English
/// stemmer changes no word, so before every trial that "stemmed" (`stem=english`) was its
/// unstemmed twin. The trials now say `stem=russian`, and the winner's `train` command gives
/// `--stem russian` when it stems.
#[test]
fn stemming_trials_stem_in_the_corpus_language() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    let topics: [(&str, &[&str]); 2] = [
        (
            "sport",
            &[
                "команда",
                "команды",
                "командой",
                "матч",
                "матча",
                "матчей",
                "футбол",
                "футбола",
                "игрок",
                "игроки",
                "игроков",
                "забил",
                "забила",
                "гол",
                "голы",
            ],
        ),
        (
            "weather",
            &[
                "дождь",
                "дождя",
                "дожди",
                "погода",
                "погоды",
                "погодой",
                "ветер",
                "ветра",
                "ветром",
                "снег",
                "снега",
                "холодно",
                "тепло",
                "облака",
                "облаков",
            ],
        ),
    ];
    let common = [
        "сегодня",
        "вчера",
        "в",
        "городе",
        "был",
        "была",
        "очень",
        "и",
        "снова",
    ];
    for (t, (label, words)) in topics.iter().enumerate() {
        let folder = corpus.join(label);
        std::fs::create_dir_all(&folder).unwrap();
        for d in 0..40 {
            let text: Vec<&str> = (0..12)
                .map(|w| {
                    if w % 3 == 0 {
                        common[(d + w + t) % common.len()]
                    } else {
                        words[(d * 7 + w * 5) % words.len()]
                    }
                })
                .collect();
            std::fs::write(folder.join(format!("{d:02}.txt")), text.join(" ") + ".").unwrap();
        }
    }
    let out = cwtext()
        .arg("tune")
        .arg(&corpus)
        .args(["--budget", "16", "--max-epochs", "3", "-o"])
        .arg(dir.path().join("m.cwm"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("trials that stem use the russian stemmer: the sampled documents' language"),
        "{}",
        stderr(&out)
    );
    let text = stdout(&out);
    let trials: Vec<&str> = text.lines().filter(|l| l.starts_with("trial")).collect();
    assert_eq!(trials.len(), 16, "{text}");
    assert!(trials.iter().any(|t| t.contains("stem=russian")), "{text}");
    assert!(!text.contains("stem=english"), "{text}");
}
