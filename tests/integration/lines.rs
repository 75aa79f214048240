//! A folder of a file per label with a line per document, as the sentence corpora of the field
//! come (`rt-polarity.pos`, `rt-polarity.neg`). Before it was read, `cwtext train
//! rt-polaritydata/` answered "no documents found: expected ROOT/<label>/<file>".

use std::path::Path;

use crate::common::{train_seed3 as train, *};

/// What `eval --format json` says that depends on every prediction and probability.
fn figures(model: &Path, corpus: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    let v = eval_json(model, corpus, extra);
    [
        "documents",
        "accuracy",
        "macro_f1",
        "brier",
        "confusion",
        "labels",
    ]
    .iter()
    .map(|k| v[*k].clone())
    .collect()
}

#[test]
fn a_file_per_label_is_read_a_line_per_document() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a.cwm"), tmp.path().join("b.cwm"));
    for model in [&a, &b] {
        let out = train("lines/news-train", model, &[]);
        assert!(out.status.success(), "{}", stderr(&out));
        for said in [
            "read lines/news-train as a file per label, a line per document: rec.sport.hockey (12 lines of rec.sport.hockey.txt), sci.space (12 lines of sci.space.txt), talk.politics.mideast (12 lines of talk.politics.mideast.txt)",
            "README.txt: a notice (README, LICENSE), not a label: left out",
            "on 36 documents, 3 labels",
        ] {
            assert!(stderr(&out).contains(said), "{said}: {}", stderr(&out));
        }
    }
    assert!(
        std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
        "the same lines and seed give the same bytes"
    );
    let out = cwtext()
        .args(["inspect", "--format", "json"])
        .arg(&a)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["labels"],
        serde_json::json!(["rec.sport.hockey", "sci.space", "talk.politics.mideast"]),
        "the labels are the names without what they share (.txt)"
    );
    // The test posts as lines (`posts.GROUP`: the shared part leads this time) are the test
    // posts as files: every prediction and probability the same.
    let lines = figures(&a, "lines/news-test", &[]);
    assert_eq!(lines, figures(&a, "news", &["--include", "test-*"]));
    assert_eq!(lines[0], 15);
    assert!(lines[1].as_f64().unwrap() >= 0.9, "{lines:?}");
    // Corrections can come the same way.
    let before = std::fs::read(&a).unwrap();
    let out = cwtext()
        .args(["learn", "lines/news-test", "-m"])
        .arg(&a)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read(&a).unwrap() != before, "the model learned");
}

#[test]
fn folders_that_are_no_file_per_label_say_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("m.cwm");
    // One file of lines is no choice between labels: the message names the layout to ask for.
    let one = tmp.path().join("one");
    std::fs::create_dir(&one).unwrap();
    std::fs::copy(
        fixtures().join("lines/news-train/sci.space.txt"),
        one.join("sci.space.txt"),
    )
    .unwrap();
    let out = train(one.to_str().unwrap(), &model, &[]);
    assert_refused(&out, "it holds 1 file(s) and no label folder: if each file holds one label's documents a line each, say --layout lines");
    // Asked for, it reads the one file, and one label is too few to train.
    let out = train(one.to_str().unwrap(), &model, &["--layout", "lines"]);
    assert_refused(
        &out,
        "found 1 label(s), \"sci.space\" (12 documents) (read with --layout lines)",
    );
    // A file is no folder of files.
    let out = train(
        "lines/news-train/sci.space.txt",
        &model,
        &["--layout", "lines"],
    );
    assert_refused(&out, "not a directory, read with --layout lines");
    // Mail files at a folder's top are no labels' lines.
    let mail = tmp.path().join("mail");
    std::fs::create_dir(&mail).unwrap();
    for (name, subject) in [("1.eml", "hello"), ("2.eml", "again")] {
        std::fs::write(
            mail.join(name),
            format!("Subject: {subject}\n\nfirst line\nsecond line\n"),
        )
        .unwrap();
    }
    let out = train(mail.to_str().unwrap(), &model, &[]);
    assert_refused(&out, "no documents found: expected ROOT/<label>/<file>");
    assert!(!model.exists(), "no model is written for refused input");
}

#[test]
fn two_splits_in_one_folder_are_told_apart_by_include() {
    // train.GROUP and test.GROUP side by side: the globs choose a split, and without them the
    // warning says so.
    let tmp = tempfile::tempdir().unwrap();
    let both = tmp.path().join("both");
    std::fs::create_dir(&both).unwrap();
    for group in ["rec.sport.hockey", "sci.space", "talk.politics.mideast"] {
        std::fs::copy(
            fixtures().join(format!("lines/news-train/{group}.txt")),
            both.join(format!("train.{group}")),
        )
        .unwrap();
        std::fs::copy(
            fixtures().join(format!("lines/news-test/posts.{group}")),
            both.join(format!("test.{group}")),
        )
        .unwrap();
    }
    let model = tmp.path().join("m.cwm");
    let out = train(both.to_str().unwrap(), &model, &["--include", "train.*"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    let v = eval_json(&model, &both, &["--include", "test.*"]);
    assert_eq!(v["documents"], 15);
    assert_eq!(
        v["labels"].as_array().unwrap().len(),
        3,
        "the labels are the groups: {v}"
    );
    let out = train(both.to_str().unwrap(), &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the labels start with test, train: splits of one corpus, read as labels of their own; --include 'train*' reads one split"),
        "{}",
        stderr(&out)
    );
}
