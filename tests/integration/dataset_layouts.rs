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

/// Folders as a user hands them over: unzipped from an archive made on a Mac (`__MACOSX/` with
/// `._` resource forks beside the labels, `.DS_Store`), or copied from Windows (`desktop.ini`,
/// `Thumbs.db` in a label's folder). Before, `desktop.ini` was trained as a document of its
/// label, `Thumbs.db` was skipped as a binary file and failed the batch (exit code 1), and
/// `__MACOSX` was warned about as a label without documents.
#[test]
fn files_that_systems_leave_in_folders_are_not_documents() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("reviews");
    for (label, words) in [
        ("pos", "a great wonderful moving film"),
        ("neg", "a terrible boring dull film"),
    ] {
        let folder = corpus.join(label);
        let forks = corpus.join("__MACOSX").join(label);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::create_dir_all(&forks).unwrap();
        for i in 0..30 {
            let name = format!("{i}.txt");
            std::fs::write(folder.join(&name), format!("{words} number {i}\n")).unwrap();
            // An AppleDouble header: magic, version, "Mac OS X", padding.
            let mut fork = vec![0x00, 0x05, 0x16, 0x07, 0x00, 0x02, 0x00, 0x00];
            fork.extend_from_slice(b"Mac OS X        \x00\x02");
            std::fs::write(forks.join(format!("._{name}")), fork).unwrap();
        }
        std::fs::write(folder.join(".DS_Store"), b"\x00\x00\x00\x01Bud1\x00\x00").unwrap();
    }
    std::fs::write(
        corpus.join("neg").join("desktop.ini"),
        "[.ShellClassInfo]\r\nIconResource=C:\\Windows\\System32\\imageres.dll,-3\r\n",
    )
    .unwrap();
    std::fs::write(
        corpus.join("pos").join("Thumbs.db"),
        b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00",
    )
    .unwrap();
    let model = dir.path().join("m.cwm");
    let out = train(&corpus, &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(!err.contains("warning"), "{err}");
    assert!(
        err.contains("trained ") && err.contains(" on 60 documents, 2 labels"),
        "{err}"
    );
    assert_eq!(labels_of(&model), ["neg", "pos"]);
    let report = eval_json(&model, &corpus, &[]);
    assert_eq!(report["documents"], 60, "{report}");
}

/// A folder named one level off, as a user does after unzipping an archive of the corpus
/// folder (`unzipped/reviews/{neg,pos}`, with the Mac's `__MACOSX/` beside it) or after
/// opening one label's folder. Before, the refusals said only "found 1 label(s), \"reviews\"
/// … but at least 2 are needed" and "no documents found", not where the labels were.
#[test]
fn a_folder_named_one_level_off_is_refused_with_the_folder_of_the_labels() {
    let dir = tempfile::tempdir().unwrap();
    let unzipped = dir.path().join("unzipped");
    let corpus = unzipped.join("reviews");
    for (label, words) in [
        ("pos", "a great wonderful moving film"),
        ("neg", "a terrible boring dull film"),
    ] {
        let folder = corpus.join(label);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::create_dir_all(unzipped.join("__MACOSX/reviews").join(label)).unwrap();
        for i in 0..30 {
            std::fs::write(folder.join(format!("{i}.txt")), format!("{words} {i}\n")).unwrap();
        }
    }
    std::fs::write(corpus.join(".DS_Store"), b"\x00\x00\x00\x01Bud1").unwrap();
    let model = dir.path().join("m.cwm");

    let out = train(&unzipped, &model, &[]);
    assert_refused(
        &out,
        &format!(
            "found 1 label(s), \"reviews\" (60 documents) (read as files (detected)), but at least 2 are needed: expected a folder per label with a file per document, ROOT/<label>/<file>; \"reviews\" holds 2 folders (neg, pos): if those are the labels, train on {}",
            corpus.display()
        ),
    );
    assert!(!model.exists());

    let out = train(&corpus.join("pos"), &model, &[]);
    assert_refused(
        &out,
        &format!(
            "no documents found: expected ROOT/<label>/<file> (check --include/--exclude); it holds files but no label folder, and its parent holds 2 folders of files (neg, pos): if it is one label's folder, give the parent, {}",
            corpus.display()
        ),
    );

    // The folder it names trains.
    let out = train(&corpus, &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(labels_of(&model), ["neg", "pos"]);
}

/// The IMDB reviews as they unpack: `aclImdb/train/{pos,neg,unsup}` and `aclImdb/test/{pos,neg}`.
/// Before, `train aclImdb` trained a model of two labels, "test" and "train", that told the
/// training reviews from the test reviews (their `pos` and `neg` taken as groups), and said
/// nothing.
#[test]
fn a_corpus_given_above_its_splits_is_refused_with_the_split_to_train_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("aclImdb");
    imdb_like(&root.join("train"));
    imdb_like(&root.join("test"));
    std::fs::remove_dir_all(root.join("test/unsup")).unwrap();
    let model = dir.path().join("m.cwm");
    let out = train(&root, &model, &[]);
    assert_refused(
        &out,
        &format!(
            "its folders \"test\", \"train\" are the splits of a corpus, not labels: \"test\" holds the label folders (neg, pos); give one split, e.g. train on {} (and evaluate on another), or rename the folders if they really are labels",
            root.join("train").display()
        ),
    );
    assert!(!model.exists());
    // One level higher still (the folder the archive was unpacked into): the split is named.
    let out = train(dir.path(), &model, &[]);
    assert_refused(
        &out,
        &format!(
            "\"aclImdb\" holds the splits of a corpus (test, train): train on {}",
            root.join("train").display()
        ),
    );
    // The split it names trains, and the other evaluates.
    let out = train(&root.join("train"), &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(labels_of(&model), ["neg", "pos"]);
    let report = eval_json(&model, root.join("test"), &[]);
    assert_eq!(report["documents"], 60, "{report}");
}
