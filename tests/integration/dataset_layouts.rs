//! Corpora as datasets ship them: the IMDB reviews' `train/` holds `pos/`, `neg/`, 50,000
//! unrated reviews in `unsup/` and loose files (`labeledBow.feat`, `urls_pos.txt`).

use std::path::Path;

use crate::common::{assert_refused, cwtext, eval_json, labels_of, stderr};

fn imdb_like(root: &Path) {
    for (label, words) in [
        ("pos", "a great wonderful moving film"),
        ("neg", "a terrible boring dull film"),
        ("unsup", "a film with a plot"),
    ] {
        std::fs::create_dir_all(root.join(label)).unwrap();
        for i in 0..30 {
            std::fs::write(
                root.join(label).join(format!("{i}_5.txt")),
                format!("{words} number {i}\n"),
            )
            .unwrap();
        }
    }
    for loose in ["labeledBow.feat", "unsupBow.feat", "urls_pos.txt"] {
        std::fs::write(root.join(loose), "0 0:1\n").unwrap();
    }
}

/// `train [EXTRA…] -o MODEL CORPUS`.
fn train(corpus: &Path, model: &Path, extra: &[&str]) -> std::process::Output {
    cwtext()
        .arg("train")
        .args(extra)
        .arg("-o")
        .arg(model)
        .arg(corpus)
        .output()
        .unwrap()
}

/// Before, `unsup` became a third label, the largest of IMDB's three, and `--skip-folder`
/// was ignored outside mail stores.
#[test]
fn an_imdb_layout_trains_pos_and_neg_not_its_unrated_reviews() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("train");
    imdb_like(&corpus);
    let model = dir.path().join("m.cwm");
    let out = train(&corpus, &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(labels_of(&model), ["neg", "pos"]);
    assert!(
        stderr(&out).contains(&format!(
            "{}: left out, its name says its documents have no label (as the IMDB corpus's train/unsup holds 50,000 reviews without a rating); rename the folder to read it as a label",
            corpus.join("unsup").display()
        )),
        "{}",
        stderr(&out)
    );
    // eval reads the same two labels.
    let report = eval_json(&model, &corpus, &[]);
    assert_eq!(report["documents"], 60, "{report}");

    // --skip-folder leaves label folders out too, case ignored: one label is left.
    let out = train(
        &corpus,
        &dir.path().join("one.cwm"),
        &["--skip-folder", "NEG"],
    );
    assert_refused(&out, "found 1 label(s), \"pos\" (30 documents)");

    // Renamed, the folder is a label like any other.
    std::fs::rename(corpus.join("unsup"), corpus.join("unrated")).unwrap();
    let out = train(&corpus, &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(labels_of(&model), ["neg", "pos", "unrated"]);
}
