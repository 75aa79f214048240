//! End-to-end tests of the search archive: `cwtext label DIR --index IDX` then `cwtext search`,
//! on the real binary and the committed fixtures (`tests/fixtures/`), with the embedded default
//! model (20 Newsgroups), so no training is needed.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use common::{
    assert_no_panic, assert_refused, cwtext, fixtures, stderr, stdout, with_closed_stdout,
};
use serde_json::Value;

/// `cwtext label DIR --index IDX [EXTRA…]`, which must succeed; its output.
fn label_into(dir: &str, index: &Path, extra: &[&str]) -> Output {
    let out = cwtext()
        .args(["label", dir, "--index"])
        .arg(index)
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

/// `cwtext search IDX QUERY [EXTRA…]`, which must succeed; its standard output.
fn search(index: &Path, query: &str, extra: &[&str]) -> String {
    let out = cwtext()
        .arg("search")
        .arg(index)
        .arg(query)
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{query} {extra:?}: {}", stderr(&out));
    stdout(&out)
}

/// `search --format json --top 1000`: the hits and the closing summary object.
fn search_json(index: &Path, query: &str, extra: &[&str]) -> (Vec<Value>, Value) {
    let mut args = vec!["--format", "json", "--top", "1000"];
    args.extend_from_slice(extra);
    let text = search(index, query, &args);
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let summary = lines.pop().expect("a summary line");
    (lines, summary)
}

/// The absolute path the archive stores for a fixture.
fn key(fixture: &str) -> String {
    std::fs::canonicalize(fixtures().join(fixture))
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn label_index_then_search_finds_the_one_file_with_a_word() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("news.idx");
    let out = label_into("news", &idx, &[]);
    assert!(
        stderr(&out).contains(&format!("indexed 51 files in {}", idx.display())),
        "{}",
        stderr(&out)
    );
    // `label` prints what it always printed.
    assert_eq!(stdout(&out).lines().count(), 51);
    // "orbit" occurs in one news fixture only.
    let text = search(&idx, "orbit", &[]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    let cols: Vec<&str> = lines[0].split('\t').collect();
    assert_eq!(cols.len(), 5, "{text}");
    assert!(cols[0].parse::<f32>().unwrap() > 0.0, "{text}");
    assert_eq!(cols[1], "sci.space", "{text}");
    assert_eq!(cols[3], key("news/sci.space/train-08540.txt"), "{text}");
    assert_eq!(lines[1], "1 matching document: sci.space 1");
    // Words are joined by AND.
    assert_eq!(search(&idx, "orbit goalie", &[]), "no matching documents\n");
    assert_eq!(
        search(&idx, "orbit OR goalie", &[]).lines().last().unwrap(),
        "2 matching documents: rec.sport.hockey 1, sci.space 1"
    );
}

#[test]
fn label_and_probability_filters_agree_with_what_label_printed() {
    // The default (newsgroup) model is unsure about mail: a spread of probabilities to filter.
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    let jsonl = dir.path().join("labels.jsonl");
    label_into("mail", &idx, &["-o", jsonl.to_str().unwrap()]);
    let labelled: Vec<Value> = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let expect = |keep: &dyn Fn(&Value) -> bool| -> BTreeSet<String> {
        labelled
            .iter()
            .filter(|v| keep(v))
            .map(|v| key(v["file"].as_str().unwrap()))
            .collect()
    };
    let found = |hits: &[Value]| -> BTreeSet<String> {
        hits.iter()
            .map(|h| h["path"].as_str().unwrap().to_string())
            .collect()
    };
    let (hits, summary) = search_json(&idx, "*", &["--label", "misc.forsale"]);
    let forsale = expect(&|v| v["label"] == "misc.forsale");
    assert!(forsale.len() >= 5, "{forsale:?}");
    assert_eq!(found(&hits), forsale);
    assert_eq!(summary["matches"], forsale.len());
    assert_eq!(summary["labels"].as_object().unwrap().len(), 1, "{summary}");
    let p = |v: &Value| v["probability"].as_f64().unwrap();
    for bound in [0.3, 0.6, 0.9] {
        let (low, _) = search_json(&idx, "*", &["--max-prob", &bound.to_string()]);
        let want = expect(&|v| p(v) <= bound);
        assert!(!want.is_empty() && want.len() < labelled.len(), "{bound}");
        assert_eq!(found(&low), want, "max {bound}");
        assert!(low.iter().all(|h| p(h) <= bound));
        let (high, _) = search_json(&idx, "*", &["--min-prob", &bound.to_string()]);
        assert_eq!(found(&high), expect(&|v| p(v) >= bound), "min {bound}");
    }
    // A query, a label and a probability range at once ("forsale mail under 0.6 that
    // mentions money"), against the same selection made from label's output and the files.
    let (hits, _) = search_json(
        &idx,
        "money",
        &[
            "--label",
            "misc.forsale",
            "--min-prob",
            "0.2",
            "--max-prob",
            "0.6",
        ],
    );
    let mentions = |v: &Value| {
        // Mail in any charset: the bytes, read as text where they are UTF-8.
        let bytes = std::fs::read(fixtures().join(v["file"].as_str().unwrap())).unwrap();
        String::from_utf8_lossy(&bytes)
            .to_lowercase()
            .contains("money")
    };
    let want =
        expect(&|v| v["label"] == "misc.forsale" && (0.2..=0.6).contains(&p(v)) && mentions(v));
    // (A substring search over the raw file also finds "moneymaker" and header lines.)
    assert!(
        !hits.is_empty() && found(&hits).is_subset(&want),
        "{hits:?}"
    );
    // Mail documents keep their Subject header as subject.
    let (hits, _) = search_json(&idx, "subject:solaris", &[]);
    let ilug = hits
        .iter()
        .find(|h| h["path"] == key("mail/ham/test-easy-ham-1-00023.txt"))
        .expect("found by its subject");
    assert_eq!(ilug["subject"], "Re: [ILUG] Sun Solaris..");
    // The counts per label cover every match, not only the top shown.
    let text = search(&idx, "*", &["--top", "0"]);
    let counted: usize = labelled.len();
    assert!(
        text.starts_with(&format!("{counted} matching documents: ")),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1);
}

#[test]
fn json_hits_carry_every_stored_field() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    label_into("news/rec.sport.hockey", &idx, &[]);
    let (hits, summary) = search_json(&idx, "goalie", &[]);
    assert_eq!(hits.len(), 1);
    let h = &hits[0];
    assert_eq!(h["path"], key("news/rec.sport.hockey/train-06232.txt"));
    assert_eq!(h["label"], "rec.sport.hockey");
    let probabilities = h["probabilities"].as_object().unwrap();
    assert_eq!(probabilities.len(), 20, "every label of the default model");
    let sum: f64 = probabilities.values().map(|p| p.as_f64().unwrap()).sum();
    assert!((sum - 1.0).abs() < 1e-6, "{sum}");
    let best = probabilities.iter().next().unwrap();
    assert_eq!(best.0, "rec.sport.hockey", "best first");
    assert_eq!(best.1, &h["probability"]);
    let entropy = h["entropy"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&entropy), "{entropy}");
    let model = h["model"].as_str().unwrap();
    assert!(model.starts_with("topics crc32:"), "{model}");
    assert_eq!(model.len(), "topics crc32:".len() + 8);
    assert!(h["score"].as_f64().unwrap() > 0.0);
    let body = h["body"].as_str().unwrap();
    assert!(body.contains("goalie"), "{body}");
    // A news post is one line of text: its subject is that line, cut to 200 characters.
    let subject = h["subject"].as_str().unwrap();
    assert!(
        !subject.is_empty() && subject.chars().count() <= 201,
        "{subject}"
    );
    assert!(body.starts_with(subject.trim_end_matches('…')), "{subject}");
    assert_eq!(
        summary,
        serde_json::json!({"matches": 1, "labels": {"rec.sport.hockey": 1}})
    );
}

#[test]
fn labelling_again_updates_instead_of_duplicating() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    let count = || search(&idx, "*", &["--top", "0"]);
    label_into("news/sci.space", &idx, &[]);
    let first = count();
    assert!(first.starts_with("17 matching documents"), "{first}");
    label_into("news/sci.space", &idx, &[]);
    assert_eq!(count(), first);
    // The same files reached through another path are the same documents.
    let out = cwtext()
        .current_dir(fixtures().join("news"))
        .args(["label", "./sci.space", "--index"])
        .arg(&idx)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(count(), first);
    // New files add to it.
    label_into("news/rec.sport.hockey", &idx, &[]);
    assert!(count().starts_with("34 matching documents"), "{}", count());
}

#[test]
fn a_failed_run_leaves_the_previous_index_usable() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    label_into("news/sci.space", &idx, &[]);
    // The output file cannot be created, so the run stops after opening the index.
    let out = cwtext()
        .args(["label", "news", "--index"])
        .arg(&idx)
        .arg("-o")
        .arg(dir.path().join("missing-dir/out.tsv"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_no_panic(&out);
    let text = search(&idx, "*", &["--top", "0"]);
    assert_eq!(text, "17 matching documents: sci.space 17\n");
}

#[test]
fn a_run_cut_short_after_indexing_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    label_into("news/sci.space", &idx, &[]);
    // Standard output closed before label writes: every file is classified and added to the
    // index writer, then writing the lines fails, and the run ends (quietly) without a commit.
    let out = with_closed_stdout(&[
        std::ffi::OsStr::new("label"),
        "news".as_ref(),
        "--index".as_ref(),
        idx.as_os_str(),
    ]);
    assert_no_panic(&out);
    assert!(!stderr(&out).contains("indexed"), "{}", stderr(&out));
    let text = search(&idx, "*", &["--top", "0"]);
    assert_eq!(text, "17 matching documents: sci.space 17\n");
}

#[test]
fn moved_files_are_archived_where_they_went() {
    let dir = tempfile::tempdir().unwrap();
    let inbox = dir.path().join("inbox");
    std::fs::create_dir(&inbox).unwrap();
    std::fs::copy(
        fixtures().join("news/sci.space/train-08540.txt"),
        inbox.join("post.txt"),
    )
    .unwrap();
    let idx = dir.path().join("idx");
    let sorted = dir.path().join("sorted");
    let out = cwtext()
        .arg("label")
        .arg(&inbox)
        .arg("--move-to")
        .arg(&sorted)
        .arg("--index")
        .arg(&idx)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let (hits, _) = search_json(&idx, "orbit", &[]);
    let moved = std::fs::canonicalize(sorted.join("sci.space/post.txt")).unwrap();
    assert_eq!(hits[0]["path"], moved.to_string_lossy().as_ref());
}

#[test]
fn legacy_encodings_are_stored_as_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    // odd/ holds a binary file too: it is skipped (exit 1), the rest is indexed, the two
    // files without words (labelled by the model's prior) included.
    let out = cwtext()
        .args(["label", "odd", "--index"])
        .arg(&idx)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("indexed 4 files"), "{}", stderr(&out));
    // windows-1252 bytes: é is 0xE9, the apostrophe 0x92, the dash 0x96.
    let (hits, _) = search_json(&idx, "montréal", &[]);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["path"], key("odd/windows-1252.txt"));
    let body = hits[0]["body"].as_str().unwrap();
    assert!(
        body.starts_with(
            "Café owners in Montréal say the hockey playoffs bring crowds – the Canadiens’ goalie"
        ),
        "{body}"
    );
    assert_eq!(hits[0]["subject"], body.trim());
    // Text output shows the same characters.
    assert!(search(&idx, "café", &[]).contains("Café owners in Montréal"));
}

#[test]
fn non_archives_and_bad_queries_are_refused_by_name() {
    // A corpus folder is not an index: exit 2, the path named, nothing written into it.
    let before = std::fs::read_dir(fixtures().join("news")).unwrap().count();
    let out = cwtext().args(["search", "news", "orbit"]).output().unwrap();
    assert_refused(&out, "news: not a cwtext archive");
    assert_no_panic(&out);
    let out = cwtext()
        .args(["label", "news/sci.space", "--index", "news"])
        .output()
        .unwrap();
    assert_refused(&out, "news: not empty and not a cwtext archive");
    assert_no_panic(&out);
    assert_eq!(
        std::fs::read_dir(fixtures().join("news")).unwrap().count(),
        before
    );
    for (path, message) in [
        ("odd/missing-index", "odd/missing-index: "),
        ("odd/empty.txt", "odd/empty.txt: not a cwtext archive"),
    ] {
        let out = cwtext().args(["search", path, "x"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{path}");
        assert!(stderr(&out).contains(message), "{path}: {}", stderr(&out));
        assert_no_panic(&out);
    }
    // A malformed query and impossible bounds.
    let dir = tempfile::tempdir().unwrap();
    let idx = dir.path().join("idx");
    label_into("news/sci.space", &idx, &[]);
    for (args, message) in [
        (vec!["body:(orbit"], "bad query \"body:(orbit\""),
        (
            vec!["x", "--min-prob", "1.5"],
            "--min-prob must be in [0, 1], but is 1.5",
        ),
        (
            vec!["x", "--min-prob", "0.8", "--max-prob", "0.2"],
            "--min-prob (0.8) is above --max-prob (0.2)",
        ),
    ] {
        let out = cwtext()
            .arg("search")
            .arg(&idx)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
        assert_no_panic(&out);
    }
}

#[test]
fn help_shows_search_examples_and_the_index_option() {
    let out = cwtext().args(["search", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = stdout(&out);
    for want in [
        "Examples:",
        "--max-prob",
        "--label",
        "joined by AND",
        "\"matches\"",
    ] {
        assert!(help.contains(want), "{want}: {help}");
    }
    let out = cwtext().args(["label", "--help"]).output().unwrap();
    let help = stdout(&out);
    assert!(help.contains("--index <IDX>"), "{help}");
    assert!(help.contains("cwtext search"), "{help}");
    let out = cwtext().arg("--help").output().unwrap();
    assert!(stdout(&out).contains("search"), "{}", stdout(&out));
}

/// An mbox's messages are archived one by one, each under its file's absolute path and the
/// byte offset of its `From ` line, with its own subject.
#[test]
fn mbox_messages_are_archived_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("idx");
    label_into("mailstores/mbox", &index, &["-m", "spam"]);
    let (hits, summary) = search_json(&index, "*", &[]);
    assert_eq!(summary["matches"], 27, "{summary}");
    let paths: BTreeSet<String> = hits
        .iter()
        .map(|h| h["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(paths.len(), 27, "one entry per message");
    let inbox = key("mailstores/mbox/Inbox");
    assert!(paths.contains(&format!("{inbox}@0")), "{paths:?}");
    let spam = hits
        .iter()
        .filter(|h| {
            h["path"]
                .as_str()
                .unwrap()
                .starts_with(&key("mailstores/mbox/Spam"))
        })
        .count();
    assert_eq!(spam, 12);
    // Labelling again replaces the entries instead of adding to them.
    label_into("mailstores/mbox", &index, &["-m", "spam"]);
    let (_, summary) = search_json(&index, "*", &[]);
    assert_eq!(summary["matches"], 27, "{summary}");
}
