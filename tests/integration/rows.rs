//! A corpus in one file of labelled rows, as fastText, Vowpal Wabbit and scikit-learn users keep
//! theirs: `__label__GROUP text` lines, tab-separated and comma-separated tables. Before it was
//! read, `cwtext train train.txt` answered "Not a directory" and nothing else.

use std::path::Path;

use crate::common::{train_seed3 as train, *};

/// What `eval --format json` says that depends on every prediction and probability.
fn figures(model: &Path, corpus: &[&str]) -> (serde_json::Value, Vec<serde_json::Value>) {
    let out = cwtext()
        .arg("eval")
        .args(corpus)
        .args(["--format", "json", "-m"])
        .arg(model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys = ["accuracy", "macro_f1", "brier", "mean_entropy", "confusion"];
    (
        v["documents"].clone(),
        keys.iter().map(|k| v[*k].clone()).collect(),
    )
}

/// A model trained on the news fixture's training posts (folder per label), in a temporary
/// folder that lives as long as the first value.
fn news_model() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("folders.cwm");
    let out = train("news", &model, &["--include", "train-*"]);
    assert!(out.status.success(), "{}", stderr(&out));
    (tmp, model)
}

#[test]
fn rows_of_a_file_are_documents_like_the_files_they_came_from() {
    let (_tmp, model) = news_model();
    // The same 15 test posts as files, as fastText lines and as pandas's CSV (an unnamed row
    // number column, a header that names no column `label`): every prediction and probability
    // the same.
    let files = figures(&model, &["news", "--include", "test-*"]);
    assert_eq!(files.0, 15);
    assert_eq!(figures(&model, &["rows/news-test.txt"]), files);
    assert_eq!(figures(&model, &["rows/news-test.csv"]), files);
    assert_eq!(figures(&model, &["rows/news-test.jsonl"]), files);

    // What was decided reading the table is said.
    let out = cwtext()
        .args(["eval", "rows/news-test.csv", "-m"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains(
            "read rows/news-test.csv as comma-separated rows: 15 rows, labels from column 3 \"group\" (3 labels), text from column 2 \"text\"; line 1 is a header"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_file_of_rows_trains_a_model_with_its_labels_reproducibly() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, tsv) = (
        tmp.path().join("a.cwm"),
        tmp.path().join("b.cwm"),
        tmp.path().join("tsv.cwm"),
    );
    for model in [&a, &b] {
        let out = train("rows/news-train.txt", model, &[]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(
                "read rows/news-train.txt as fastText lines (__label__LABEL text): 36 rows, 3 labels"
            ),
            "{}",
            stderr(&out)
        );
    }
    assert!(
        std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
        "the same rows and seed give the same bytes"
    );
    let out = train("rows/news-train.tsv", &tsv, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("labels from column 1 (3 labels), text from column 2; no header row"),
        "{}",
        stderr(&out)
    );
    // The same posts give the same model, from lines or from a table.
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&tsv).unwrap());
    let out = cwtext()
        .args(["inspect", "--format", "json"])
        .arg(&a)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["labels"],
        serde_json::json!(["rec.sport.hockey", "sci.space", "talk.politics.mideast"])
    );
    // Trained on 36 posts, it sorts the 15 test posts as the folder-trained fixture models do.
    let (documents, figures) = figures(&a, &["rows/news-test.csv"]);
    assert_eq!(documents, 15);
    assert!(figures[0].as_f64().unwrap() >= 0.9, "{figures:?}");
}

#[test]
fn bad_rows_are_named_by_line_and_files_that_are_no_rows_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("m.cwm");
    // Rows with two labels, none, or a field too many are left out, each named by its line.
    let text = std::fs::read_to_string(fixtures().join("rows/news-train.txt")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[2] = format!("__label__sci.space {}", lines[2]);
    lines[4] = lines[4].split_once(' ').unwrap().1.to_string();
    let odd = tmp.path().join("odd.txt");
    std::fs::write(&odd, lines.join("\n")).unwrap();
    let out = train(odd.to_str().unwrap(), &tmp.path().join("odd.cwm"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    for said in [
        "odd.txt:3: 2 labels; cwtext learns one label per document: left out",
        "odd.txt:5: no __label__ at the start of the line, left out",
        "34 rows, 3 labels",
    ] {
        assert!(stderr(&out).contains(said), "{said}: {}", stderr(&out));
    }

    // A file that is neither mail nor rows: what was expected, not "Not a directory".
    let out = train("odd/windows-1252.txt", &model, &[]);
    assert_refused(&out, "odd/windows-1252.txt");
    assert_refused(&out, "expected one labelled example per line");
    // A spreadsheet's "Unicode text".
    let utf16 = tmp.path().join("sheet.tsv");
    let mut bytes = vec![0xFF, 0xFE];
    for unit in "label\ttext\r\nspam\tWin now\r\n".encode_utf16() {
        bytes.extend_from_slice(&unit.to_le_bytes());
    }
    std::fs::write(&utf16, bytes).unwrap();
    let out = train(utf16.to_str().unwrap(), &model, &[]);
    assert_refused(&out, "save it as UTF-8");
    // A table whose columns all differ on every row.
    let ids = tmp.path().join("ids.csv");
    std::fs::write(&ids, "1,first text\n2,second text\n3,third text\n").unwrap();
    let out = train(ids.to_str().unwrap(), &model, &[]);
    assert_refused(&out, "no column looks like a label");
    // A folder that holds a file of rows, not label folders: the file is named.
    let holder = tmp.path().join("data");
    std::fs::create_dir(&holder).unwrap();
    std::fs::copy(
        fixtures().join("rows/news-train.txt"),
        holder.join("train.txt"),
    )
    .unwrap();
    let out = train(holder.to_str().unwrap(), &model, &[]);
    assert_refused(
        &out,
        "it holds 1 file(s) of labelled rows (train.txt): give one as the corpus",
    );
    // Globs that leave the file out.
    let out = train("rows/news-train.txt", &model, &["--include", "train-*"]);
    assert_refused(&out, "a file of rows that --include/--exclude leave out");
    // A directory read as rows.
    let out = train("news", &model, &["--layout", "rows"]);
    assert_refused(&out, "a directory, read with --layout rows");
    assert!(!model.exists(), "no model is written for refused input");
}

/// A file of rows that all carry one label: the corrections a user refiled to one folder, or a
/// test file of one class. Before, its label column (one value throughout) was passed over as
/// no label and every command refused the file: "no column looks like a label: each has a
/// different value on almost every row", which was not what its rows showed.
#[test]
fn a_file_of_rows_of_one_label_is_read_for_eval_and_learn() {
    let (tmp, model) = news_model();
    // The space posts of the tab-separated fixture, as headerless comma-separated rows.
    let text = std::fs::read_to_string(fixtures().join("rows/news-train.tsv")).unwrap();
    let space: Vec<String> = text
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .filter(|(label, _)| *label == "sci.space")
        .map(|(label, post)| format!("{label},\"{post}\""))
        .collect();
    assert_eq!(space.len(), 12, "the fixture's space posts");
    let rows = tmp.path().join("refiled.csv");
    std::fs::write(&rows, space.join("\n") + "\n").unwrap();

    let out = cwtext()
        .args(["eval", "--format", "json", "-m"])
        .arg(&model)
        .arg(&rows)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("12 rows, labels from column 1 (1 label), text from column 2"),
        "{}",
        stderr(&out)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["documents"], 12);
    // The model saw these very posts in training: it sorts them.
    assert!(v["accuracy"].as_f64().unwrap() >= 0.9, "{v}");

    let before = std::fs::read(&model).unwrap();
    let out = cwtext()
        .args(["learn", "-m"])
        .arg(&model)
        .arg(&rows)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        std::fs::read(&model).unwrap() != before,
        "the model learned"
    );

    // Training needs two labels: the refusal says so, not that no column is a label.
    let fresh = tmp.path().join("fresh.cwm");
    let out = train(rows.to_str().unwrap(), &fresh, &[]);
    assert_refused(&out, "refiled.csv");
    assert_refused(&out, "1 label");
    assert!(
        !stderr(&out).contains("no column looks like a label"),
        "{}",
        stderr(&out)
    );
    assert!(!fresh.exists());
}

#[test]
fn corrections_can_come_as_rows() {
    let (_tmp, model) = news_model();
    let before = std::fs::read(&model).unwrap();
    let out = cwtext()
        .args(["learn", "rows/news-test.csv", "-m"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("15 rows"), "{}", stderr(&out));
    assert!(
        std::fs::read(&model).unwrap() != before,
        "the model learned"
    );
}

#[test]
fn classify_lines_answers_each_line_as_the_file_it_came_from() {
    let (_tmp, model) = news_model();
    let tsv = |args: &[&str]| -> Vec<Vec<String>> {
        let out = cwtext()
            .args(["classify", "--format", "tsv", "-m"])
            .arg(&model)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
            .lines()
            .map(|l| l.split('\t').map(str::to_string).collect())
            .collect()
    };
    // The test posts as files, in the order of their names (the order of the rows).
    let mut posts: Vec<String> = ["rec.sport.hockey", "sci.space", "talk.politics.mideast"]
        .iter()
        .flat_map(|g| files_in(&fixtures().join("news").join(g)))
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("test-")
        })
        .map(|p| {
            p.strip_prefix(fixtures())
                .unwrap()
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    posts.sort_by_key(|p| p.rsplit('/').next().unwrap().to_string());
    let refs: Vec<&str> = posts.iter().map(String::as_str).collect();
    let from_files = tsv(&refs);
    // The fastText test file starts every line with its answer: taken off, not read.
    let from_lines = tsv(&["--lines", "rows/news-test.txt"]);
    assert_eq!(from_lines.len(), 15);
    for (i, (line, file)) in from_lines.iter().zip(&from_files).enumerate() {
        assert_eq!(line[0], format!("rows/news-test.txt:{}", i + 1));
        assert_eq!(line[1..], file[1..], "line {} against {}", i + 1, file[0]);
    }
}

#[test]
fn a_column_that_copies_the_label_is_no_text() {
    // The test posts as a SetFit-style export: the label, and its name again in `label_text`.
    // Read as text the name would be a word of every row; left out, the rows are the posts.
    let (tmp, model) = news_model();
    let text = std::fs::read_to_string(fixtures().join("rows/news-test.txt")).unwrap();
    let mut csv = String::from("text,label,label_text\n");
    for line in text.lines() {
        let (label, post) = line.split_once(' ').unwrap();
        let label = label.trim_start_matches("__label__");
        let name = label.rsplit('.').next().unwrap();
        csv.push_str(&format!("{post},{label},{name} posts\n"));
    }
    let file = tmp.path().join("export.csv");
    std::fs::write(&file, csv).unwrap();
    let out = cwtext()
        .args(["eval", file.to_str().unwrap(), "-m"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("column 3 \"label_text\" left out: each of its values goes with one label (a copy of the label, not text)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        figures(&model, &[file.to_str().unwrap()]),
        figures(&model, &["news", "--include", "test-*"])
    );
}

#[test]
fn trec_question_lines_train_what_the_same_fasttext_lines_train() {
    // TREC's `COARSE:fine text` lines (Li and Roth's train_5500.label): the coarse class is the
    // label, and the model is the one the same lines with fastText labels train, byte for byte.
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixtures().join("rows/news-train.txt")).unwrap();
    let (mut trec, mut fasttext) = (String::new(), String::new());
    for line in text.lines() {
        let (label, post) = line.split_once(' ').unwrap();
        let group = label.trim_start_matches("__label__");
        let coarse = group.rsplit('.').next().unwrap().to_uppercase();
        let fine = group.split('.').next().unwrap();
        trec.push_str(&format!("{coarse}:{fine} {post}\n"));
        fasttext.push_str(&format!("__label__{coarse} {post}\n"));
    }
    let (trec_file, ft_file) = (tmp.path().join("train.label"), tmp.path().join("train.txt"));
    std::fs::write(&trec_file, trec).unwrap();
    std::fs::write(&ft_file, fasttext).unwrap();
    let (a, b) = (tmp.path().join("trec.cwm"), tmp.path().join("ft.cwm"));
    let out = train(trec_file.to_str().unwrap(), &a, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("as TREC question lines (COARSE:fine text): 36 rows, 3 labels, the coarse classes of 3 fine ones"),
        "{}",
        stderr(&out)
    );
    let out = train(ft_file.to_str().unwrap(), &b, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap());
}
