//! End-to-end tests of the real `cwtext` binary on small real fixtures (`tests/fixtures/`):
//! train → classify → label → eval with a fixed seed, outputs diffed against `tests/golden/`
//! (re-bless with `CWTEXT_BLESS=1 cargo test`, then review the diff), plus error messages and
//! exit codes for bad input.

use crate::common;

use std::path::{Path, PathBuf};

use common::{
    assert_no_panic, assert_refused, cwtext, eval_json, files_in, fixtures, stderr, stdout,
    with_closed_stdout,
};

/// Compares with (or, with CWTEXT_BLESS=1, writes) a golden file: the same lines and words, and
/// the same numbers within [`GOLDEN_TOLERANCE`] where they have a decimal point (probabilities,
/// rates), exactly where they have none (counts) — so labels, counts and layout must match, and
/// a harmless change of f32 summation order (which moves a Gibbs estimate by a sample, 0.001,
/// rarely) does not force a re-bless that would hide a real change.
fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("CWTEXT_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} missing: run with CWTEXT_BLESS=1", path.display()));
    if let Err(e) = golden_match(actual, &want) {
        panic!(
            "output differs from {} ({e}; CWTEXT_BLESS=1 rewrites it):\n{actual}",
            path.display()
        );
    }
}

/// How far a decimal in a golden file may move: three Gibbs samples of 1,000.
const GOLDEN_TOLERANCE: f64 = 0.003;

fn golden_match(actual: &str, want: &str) -> Result<(), String> {
    let (a, w): (Vec<&str>, Vec<&str>) = (actual.lines().collect(), want.lines().collect());
    if a.len() != w.len() {
        return Err(format!("{} lines, golden {}", a.len(), w.len()));
    }
    for (i, (a, w)) in a.iter().zip(&w).enumerate() {
        let (x, y): (Vec<&str>, Vec<&str>) = (
            a.split_whitespace().collect(),
            w.split_whitespace().collect(),
        );
        let same = x.len() == y.len()
            && x.iter()
                .zip(&y)
                .all(|(p, q)| match (p.parse::<f64>(), q.parse::<f64>()) {
                    (Ok(u), Ok(v)) if p.contains('.') && q.contains('.') => {
                        (u - v).abs() <= GOLDEN_TOLERANCE
                    }
                    _ => p == q,
                });
        if !same {
            return Err(format!("line {}: {a:?}, golden {w:?}", i + 1));
        }
    }
    Ok(())
}

/// The golden comparison itself: decimals within the tolerance, everything else exact.
#[test]
fn golden_files_compare_labels_exactly_and_decimals_within_tolerance() {
    let want = "a.txt\tsci.space\t0.4030\ndocuments  20\naccuracy  0.8500\n";
    assert!(golden_match(want, want).is_ok());
    let near = "a.txt\tsci.space\t0.4055\ndocuments  20\naccuracy  0.8480\n";
    assert!(golden_match(near, want).is_ok());
    for (wrong, why) in [
        (
            "a.txt\tsci.space\t0.4070\ndocuments  20\naccuracy  0.8500\n",
            "line 1",
        ),
        (
            "a.txt\trec.autos\t0.4030\ndocuments  20\naccuracy  0.8500\n",
            "line 1",
        ),
        (
            "a.txt\tsci.space\t0.4030\ndocuments  21\naccuracy  0.8500\n",
            "line 2",
        ),
        (
            "a.txt\tsci.space\t0.4030\ndocuments  20\naccuracy  0.8000\n",
            "line 3",
        ),
        (
            "a.txt\tsci.space\t0.4030\ndocuments  20\n",
            "2 lines, golden 3",
        ),
        (
            "a.txt\tsci.space\t0.4030 x\ndocuments  20\naccuracy  0.8500\n",
            "line 1",
        ),
    ] {
        let e = golden_match(wrong, want).unwrap_err();
        assert!(e.starts_with(why), "{wrong:?}: {e}");
    }
}

/// Trains on `corpus` (train-* files) into a temp dir; returns (dir, model path).
fn train(corpus: &str, extra: &[&str]) -> (tempfile::TempDir, PathBuf) {
    train_seed(corpus, "3", extra)
}

fn train_seed(corpus: &str, seed: &str, extra: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model.cwm");
    let out = cwtext()
        .args([
            "train",
            corpus,
            "--include",
            "train-*",
            "--seed",
            seed,
            "-o",
        ])
        .arg(&model)
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    (dir, model)
}

#[test]
fn train_eval_mail_reaches_the_floor_and_matches_golden() {
    let (_dir, model) = train("mail", &[]);
    let out = cwtext()
        .args(["eval", "mail", "--include", "test-*", "-m"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    golden("eval-mail.txt", &text);
    let json = eval_json(&model, "mail", &["--include", "test-*"]);
    assert_eq!(json["documents"], 20);
    assert!(json["accuracy"].as_f64().unwrap() >= 0.8, "{json}");
    for key in [
        "macro_f1",
        "per_label",
        "confusion",
        "mean_entropy",
        "labels",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
}

#[test]
fn eval_reports_the_unsure_bands_accuracy_against_coverage_and_plots_it() {
    let (dir, model) = train("news", &[]);
    let plots = dir.path().join("plots");
    let json = eval_json(&model, "news", &["--plot", plots.to_str().unwrap()]);
    let coverage = json["coverage"].as_array().expect("coverage");
    let thresholds: Vec<f64> = coverage
        .iter()
        .map(|c| c["min_prob"].as_f64().unwrap())
        .collect();
    assert_eq!(
        thresholds,
        [0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999]
    );
    // No threshold: every document kept, the plain accuracy.
    assert_eq!(coverage[0]["kept"], json["documents"]);
    assert_eq!(coverage[0]["accuracy"], json["accuracy"]);
    // A higher threshold keeps fewer documents, never more.
    let kept: Vec<u64> = coverage
        .iter()
        .map(|c| c["kept"].as_u64().unwrap())
        .collect();
    assert!(kept.windows(2).all(|w| w[1] <= w[0]), "{kept:?}");
    for c in coverage {
        let share = c["share"].as_f64().unwrap();
        let expected = c["kept"].as_f64().unwrap() / json["documents"].as_f64().unwrap();
        assert!((share - expected).abs() < 1e-12);
        assert_eq!(c["accuracy"].is_null(), c["kept"] == 0);
    }
    let svg = std::fs::read_to_string(plots.join("coverage.svg")).unwrap();
    assert!(svg.contains("share of documents kept"), "{svg}");
}

/// A test folder whose label folders are named otherwise than the training ones (`Sci.Space`
/// for `sci.space`, a lone line file `rt-polarity.pos` for `pos`): every document of such a
/// label counts as wrong. Before, eval said nothing and printed accuracy 0; now it warns,
/// naming the label, its documents and the model's label it looks like.
#[test]
fn eval_warns_of_labels_the_model_does_not_have() {
    let (dir, model) = train("news", &["--epochs", "2"]);
    let test = dir.path().join("test");
    for (from, to) in [("sci.space", "Sci.Space"), ("rec.sport.hockey", "hockey")] {
        let target = test.join(to);
        std::fs::create_dir_all(&target).unwrap();
        for file in std::fs::read_dir(fixtures().join("news").join(from)).unwrap() {
            let file = file.unwrap().path();
            std::fs::copy(&file, target.join(file.file_name().unwrap())).unwrap();
        }
    }
    let out = cwtext()
        .arg("eval")
        .arg(&test)
        .arg("-m")
        .arg(&model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let space = std::fs::read_dir(fixtures().join("news/sci.space"))
        .unwrap()
        .count();
    for said in [
        format!("the model has no label \"Sci.Space\": its {space} documents count as wrong; it has \"sci.space\""),
        "the model has no label \"hockey\"".to_string(),
        "it has \"rec.sport.hockey\"".to_string(),
    ] {
        assert!(err.contains(&said), "{said}: {err}");
    }
    // Labels it has: no warning.
    let out = cwtext()
        .args(["eval", "news", "-m"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(!stderr(&out).contains("has no label"), "{}", stderr(&out));
}

/// `learn --label Sci.Space` on a model with `sci.space` teaches a new label, as a new folder
/// should be; but a refile typed in another case is more often a slip, and the new label then
/// takes documents from the old one. Before, learn only listed it among the new labels.
#[test]
fn learn_warns_when_a_new_label_looks_like_one_the_model_has() {
    let (_dir, model) = train("news", &["--epochs", "2"]);
    let post = fixtures().join("news/sci.space/test-05593.txt");
    let learn_as = |label: &str| {
        let out = cwtext()
            .args(["learn", "--label", label, "-m"])
            .arg(&model)
            .arg(&post)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stderr(&out)
    };
    let said = learn_as("Sci.Space");
    assert!(
        said.contains("new label \"Sci.Space\" looks like \"sci.space\", which the model has"),
        "{said}"
    );
    // A new label like none: no warning, just the new label.
    let said = learn_as("comp.graphics");
    assert!(said.contains("new label(s): comp.graphics"), "{said}");
    assert!(!said.contains("looks like"), "{said}");
}

#[test]
fn train_summary_names_documents_labels_and_epochs() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.cwm");
    let out = cwtext()
        .args(["train", "news", "--epochs", "3", "-o"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(err.contains("on 51 documents, 3 labels"), "{err}");
    let epochs = err
        .lines()
        .find_map(|l| l.strip_prefix("online training accuracy per epoch: "))
        .unwrap_or_else(|| panic!("{err}"));
    assert_eq!(epochs.split(' ').count(), 3, "{err}");
}

#[test]
fn classify_matches_golden_and_probabilities_sum_to_one() {
    let (_dir, model) = train("news", &[]);
    let files = [
        "news/sci.space/test-05543.txt",
        "news/rec.sport.hockey/test-03890.txt",
    ];
    for f in files {
        assert!(fixtures().join(f).exists(), "fixture {f} moved");
    }
    let out = cwtext()
        .arg("classify")
        .arg("-m")
        .arg(&model)
        .args(files)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    golden("classify-news.txt", &stdout(&out));
    let out = cwtext()
        .args(["classify", "--format", "json", "-m"])
        .arg(&model)
        .args(files)
        .output()
        .unwrap();
    for line in stdout(&out).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let probs = v["probabilities"].as_object().unwrap();
        assert_eq!(probs.len(), 3);
        let sum: f64 = probs.values().map(|p| p.as_f64().unwrap()).sum();
        assert!((sum - 1.0).abs() < 0.01, "{sum}");
        assert!(v["entropy"].as_f64().unwrap() >= 0.0);
        assert!(probs.contains_key(v["label"].as_str().unwrap()));
    }
}

#[test]
fn classify_with_the_embedded_model_from_stdin() {
    let text = std::fs::read(fixtures().join("odd/utf16-bom.txt")).unwrap();
    let out = cwtext()
        .args(["classify", "--top", "2"])
        .write_stdin(text)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let s = stdout(&out);
    assert_eq!(s.lines().next(), Some("sci.space"), "{s}");
    assert_eq!(s.lines().count(), 4, "{s}");
}

#[test]
fn classify_reads_raw_mail_with_the_embedded_model() {
    let out = cwtext()
        .args([
            "classify",
            "--format",
            "tsv",
            "mail/spam/test-spam-1-00026.txt",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let s = stdout(&out);
    assert_eq!(s.split('\t').count(), 4 + 2 * 20, "{s}");
}

#[test]
fn same_seed_same_model_bytes_and_another_seed_other_weights() {
    let (_a, m1) = train("news", &[]);
    let (_b, m2) = train("news", &[]);
    assert_eq!(std::fs::read(&m1).unwrap(), std::fs::read(&m2).unwrap());
    // The seed is stored in the header, so the bytes of another seed differ whatever it does:
    // compare the weights, which it moves through the order of the examples.
    let (_c, m3) = train_seed("news", "99", &[]);
    let weights = |path: &Path| {
        let model = cwtext::model::Model::load(path).unwrap();
        model.learner.weights().raw().to_vec()
    };
    let (w1, w3) = (weights(&m1), weights(&m3));
    assert_eq!(w1.len(), w3.len());
    // (μ, σ) pairs; a feature the corpus never has keeps its prior (μ = 0) under both seeds.
    let trained = w1.chunks(2).filter(|p| p[0] != 0.0).count();
    let moved = w1
        .chunks(2)
        .zip(w3.chunks(2))
        .filter(|(a, b)| a[0] != b[0])
        .count();
    assert!(
        trained > 1000 && moved > trained / 2,
        "seed 99 moved {moved} of the {trained} trained means"
    );
}

#[test]
fn label_copies_into_label_folders_and_never_overwrites() {
    let (dir, model) = train("news", &[]);
    let dest = dir.path().join("sorted");
    let run = || {
        cwtext()
            .args(["label", "news", "--include", "test-*", "-m"])
            .arg(&model)
            .arg("--copy-to")
            .arg(&dest)
            .output()
            .unwrap()
    };
    let out = run();
    assert!(out.status.success(), "{}", stderr(&out));
    golden("label-news.tsv", &stdout(&out));
    assert!(
        stderr(&out).contains("labelled 15 files"),
        "{}",
        stderr(&out)
    );
    let count = |d: &Path| walk(d).len();
    assert_eq!(count(&dest), 15);
    // Every line's file now sits in DEST/<label>/.
    for line in stdout(&out).lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        let name = Path::new(cols[0]).file_name().unwrap();
        assert!(dest.join(cols[1]).join(name).exists(), "{line}");
    }
    let out = run();
    assert!(out.status.success());
    assert_eq!(
        count(&dest),
        30,
        "second run adds -1 copies instead of overwriting"
    );
    assert!(walk(&dest)
        .iter()
        .any(|p| p.to_string_lossy().ends_with("-1.txt")));
}

fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn label_min_prob_routes_unsure_files_and_writes_jsonl() {
    let (dir, model) = train("news", &[]);
    let dest = dir.path().join("sorted");
    let jsonl = dir.path().join("out.jsonl");
    let out = cwtext()
        .args(["label", "news/sci.space", "--min-prob", "1.0", "-m"])
        .arg(&model)
        .arg("--move-to")
        .arg(&dest)
        .arg("-o")
        .arg(&jsonl)
        .arg("--include")
        .arg("nothing-matches-*")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // Nothing matched, so nothing moved: the fixtures stay put.
    assert!(!dest.exists());
    let copy = dir.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    for f in ["a.txt", "b.txt"] {
        std::fs::copy(
            fixtures().join("news/sci.space/test-05543.txt"),
            copy.join(f),
        )
        .unwrap();
    }
    let out = cwtext()
        .arg("label")
        .arg(&copy)
        .args(["--min-prob", "1.0", "--samples", "50", "-m"])
        .arg(&model)
        .arg("--move-to")
        .arg(&dest)
        .arg("-o")
        .arg(&jsonl)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = std::fs::read_to_string(&jsonl).unwrap();
    assert_eq!(lines.lines().count(), 2);
    let v: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert!(v["probability"].as_f64().unwrap() < 1.0 || dest.join("sci.space").exists());
    assert!(!copy.join("a.txt").exists(), "moved away");
    assert_eq!(walk(&dest).len(), 2);
}

#[test]
fn binary_and_missing_inputs_are_refused_by_name() {
    for (file, msg) in [
        (
            "odd/image.png",
            "odd/image.png: binary file (image/png data)",
        ),
        ("odd/missing.txt", "odd/missing.txt: No such file"),
    ] {
        let out = cwtext().args(["classify", file]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{file}");
        assert!(stderr(&out).contains(msg), "{file}: {}", stderr(&out));
        assert_no_panic(&out);
    }
}

/// A document without a word is classified by the model's prior and flagged, in every format
/// (issue 19: it was an error, exit 2, which in a mail pipeline bounces or defers the mail).
#[test]
fn documents_without_words_rest_on_the_prior_and_say_so() {
    let prior = "rests on the prior: no words";
    for file in ["odd/empty.txt", "odd/whitespace.txt"] {
        let out = cwtext().args(["classify", file]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{file}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.lines().nth(1).unwrap().contains(prior), "{text}");
        let out = cwtext()
            .args(["classify", "--format", "json", file])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{file}");
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(v["prior_only"], true, "{v}");
        let out = cwtext()
            .args(["classify", "--format", "tsv", file])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{file}");
        assert!(
            stderr(&out).contains(&format!("{file}: {prior}")),
            "{}",
            stderr(&out)
        );
    }
    // A document with words is not flagged.
    let out = cwtext()
        .args(["classify", "--format", "json", "odd/windows-1252.txt"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(v.get("prior_only").is_none(), "{v}");
    // eval counts them, as classify decides them.
    let corpus = tempfile::tempdir().unwrap();
    for (label, name, text) in [
        (
            "sci.space",
            "1.txt",
            "the shuttle reached orbit after launch",
        ),
        ("sci.space", "2.txt", " \n"),
        ("rec.sport.hockey", "1.txt", "the goalie stopped the puck"),
    ] {
        std::fs::create_dir_all(corpus.path().join(label)).unwrap();
        std::fs::write(corpus.path().join(label).join(name), text).unwrap();
    }
    let out = cwtext()
        .arg("eval")
        .arg(corpus.path())
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["documents"], 3, "{v}");
    assert_eq!(v["prior_only"], 1, "{v}");
    assert!(
        stderr(&out).contains("1 document(s) without a word were classified by the model's prior"),
        "{}",
        stderr(&out)
    );
    // learn refuses to learn nothing, and leaves the model as it was.
    let (_dir, model) = train("news", &["--hash-bits", "16"]);
    let before = std::fs::read(&model).unwrap();
    let out = cwtext()
        .args(["learn", "--label", "sci.space", "-m"])
        .arg(&model)
        .write_stdin("  \n\t\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "<stdin>: empty document: no words found: nothing to learn from it, the model was not changed"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&model).unwrap(), before);
}

/// `classify --min-prob P`: below P the decision is the unsure label, the best label still
/// shown (as filter and label have it).
#[test]
fn classify_below_min_prob_is_unsure_and_names_the_best_label() {
    let doc = "news/sci.space/test-05593.txt"; // sci.space, 0.9320
    let out = cwtext()
        .args(["classify", "--min-prob", "0.99", doc])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("_unsure"), "{text}");
    assert_eq!(
        lines.next(),
        Some("  unsure: best sci.space 0.9320, below --min-prob 0.99"),
        "{text}"
    );
    assert_eq!(lines.next(), Some("  0.9320  sci.space"), "{text}");
    let out = cwtext()
        .args(["classify", "--format", "json", "--min-prob", "0.99"])
        .args(["--unsure-label", "Later", doc])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["label"], "Later", "{v}");
    assert_eq!(v["best"], "sci.space", "{v}");
    assert_eq!(v["probability"], 0.932, "{v}");
    let out = cwtext()
        .args(["classify", "--format", "tsv", "--min-prob", "0.99", doc])
        .output()
        .unwrap();
    assert!(
        stdout(&out).starts_with(&format!("{doc}\t_unsure\t0.9320\t")),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("\tsci.space\t0.9320"));
    // At or above P: the label itself, nothing added.
    let out = cwtext()
        .args(["classify", "--min-prob", "0.93", doc])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.starts_with("sci.space\n  0.9320  sci.space\n"),
        "{text}"
    );
    let out = cwtext()
        .args(["classify", "--min-prob", "1.5", doc])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("a probability must be in [0, 1], but is 1.5"));
}

#[test]
fn legacy_encodings_are_decoded() {
    let out = cwtext()
        .args([
            "classify",
            "--top",
            "1",
            "odd/windows-1252.txt",
            "odd/utf16-bom.txt",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let s = stdout(&out);
    assert!(
        s.contains("==> odd/windows-1252.txt <==\nrec.sport.hockey"),
        "{s}"
    );
    assert!(s.contains("==> odd/utf16-bom.txt <==\nsci.space"), "{s}");
}

#[test]
fn batch_modes_skip_bad_files_with_exit_code_1() {
    let out = cwtext().args(["label", "odd"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("skipped odd/image.png: binary file"), "{err}");
    // Documents without a word are labelled by the prior and flagged, not skipped.
    assert!(
        err.contains("odd/empty.txt: rests on the prior: no words"),
        "{err}"
    );
    assert!(
        err.contains("2 of them without a word: labelled by the model's prior alone"),
        "{err}"
    );
    assert!(err.contains("1 file(s) skipped"), "{err}");
    assert_eq!(stdout(&out).lines().count(), 4);
    let out = cwtext()
        .args(["label", "odd", "--format", "jsonl"])
        .output()
        .unwrap();
    let flagged: Vec<String> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["prior_only"] == true)
        .map(|v| v["file"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(flagged, ["odd/empty.txt", "odd/whitespace.txt"]);
}

#[test]
fn damaged_models_are_refused_with_the_reason() {
    let (dir, model) = train("news", &["--hash-bits", "16"]);
    let bytes = std::fs::read(&model).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated.cwm",
            bytes[..bytes.len() / 2].to_vec(),
            "truncated model file",
        ),
        (
            "flipped.cwm",
            {
                let mut b = bytes.clone();
                b[bytes.len() - 100] ^= 1;
                b
            },
            "checksum mismatch",
        ),
        (
            "newer.cwm",
            {
                let mut b = bytes.clone();
                b[8] = 8;
                b
            },
            "format version 8 is newer",
        ),
        ("text.cwm", b"just some text".to_vec(), "not a cwtext model"),
    ];
    for (name, data, msg) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, data).unwrap();
        let out = cwtext()
            .arg("classify")
            .arg("-m")
            .arg(&path)
            .arg("news/sci.space/test-05543.txt")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = stderr(&out);
        assert!(err.contains(name) && err.contains(msg), "{name}: {err}");
        assert_no_panic(&out);
    }
}

#[test]
fn bad_settings_name_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.cwm");
    for (args, msg) in [
        (vec!["--eta", "1.5"], "eta must be in (0.5, 1), but is 1.5"),
        (
            vec!["--hash-bits", "30"],
            "hash bits must be in [16, 26], but is 30",
        ),
        (
            vec!["--epochs", "0"],
            "epochs must be in [1, 1000], but is 0",
        ),
        (vec!["-k", "3"], "k is 3"),
        (vec!["--stopwords", "klingon"], "\"klingon\""),
    ] {
        train_refused(&m, &args, msg);
    }
    let out = cwtext()
        .args(["train", "no-such-dir", "-o"])
        .arg(&m)
        .output()
        .unwrap();
    assert_refused(&out, "no-such-dir");
}

/// `--tokenizer bpe|wordpiece` trains a vocabulary on the training files, says so, stores it in
/// the model (so classify splits words the same way) and gives the same bytes every time.
#[cfg(feature = "subword")]
#[test]
fn subword_tokenizers_train_classify_and_are_deterministic() {
    for (tokenizer, name) in [("bpe", "BPE"), ("wordpiece", "WordPiece")] {
        let extra = ["--tokenizer", tokenizer, "--vocab-size", "200"];
        let (_a, m1) = train("news", &extra);
        let (_b, m2) = train("news", &extra);
        assert!(
            std::fs::read(&m1).unwrap() == std::fs::read(&m2).unwrap(),
            "{tokenizer}: two runs wrote different models"
        );
        let model = cwtext::model::Model::load(&m1).unwrap();
        assert_eq!(model.pipeline().tokenizer.name(), tokenizer);
        let out = cwtext()
            .args([
                "train",
                "news",
                "--include",
                "train-*",
                "--tokenizer",
                tokenizer,
            ])
            .args(["--vocab-size", "200", "-o"])
            .arg(m1.with_extension("again"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!(
                "trained a {name} vocabulary of 200 pieces on 36 documents in "
            )),
            "{}",
            stderr(&out)
        );
        let json = eval_json(&m1, "news", &["--include", "test-*"]);
        assert!(
            json["accuracy"].as_f64().unwrap() >= 0.8,
            "{tokenizer}: {json}"
        );
        let out = cwtext()
            .args(["classify", "--format", "tsv", "-m"])
            .arg(&m1)
            .arg("news/sci.space/test-05593.txt")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("sci.space"), "{}", stdout(&out));
    }
}

/// The vocabulary settings are checked, naming the value, before the corpus is read.
#[test]
fn subword_settings_name_the_bad_value() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.cwm");
    for (args, msg) in [
        (
            vec!["--tokenizer", "bpe", "--vocab-size", "50"],
            "vocabulary size must be in [100, 1000000], but is 50",
        ),
        (
            vec!["--tokenizer", "wordpiece", "--vocab-size", "2000000"],
            "vocabulary size must be in [100, 1000000], but is 2000000",
        ),
        (
            vec!["--vocab-size", "500"],
            "--vocab-size 500 needs --tokenizer bpe or wordpiece",
        ),
        (
            vec!["--tokenizer", "words", "--vocab-size", "500"],
            "--vocab-size 500 needs --tokenizer bpe or wordpiece",
        ),
        (
            vec!["--tokenizer", "bpe", "--stopwords", "english"],
            "--stopwords english does not combine with --tokenizer bpe",
        ),
        (
            vec!["--tokenizer", "wordpiece", "--stem", "english"],
            "--stem does not combine with --tokenizer wordpiece",
        ),
        (vec!["--tokenizer", "sentencepiece"], "sentencepiece"),
    ] {
        let err = train_refused(&m, &args, msg);
        assert!(
            !err.contains("trained a"),
            "{args:?}: checked before training"
        );
    }
}

/// `train news -o M ARGS`, which must be refused (exit code 2, `msg` on standard error)
/// without writing M; its standard error.
fn train_refused(m: &Path, args: &[&str], msg: &str) -> String {
    let out = cwtext()
        .args(["train", "news", "-o"])
        .arg(m)
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    assert!(stderr(&out).contains(msg), "{args:?}: {}", stderr(&out));
    assert!(!m.exists(), "no model written on bad settings");
    stderr(&out)
}

#[test]
fn a_failed_training_run_keeps_the_previous_model() {
    let (dir, model) = train("news", &[]);
    let before = std::fs::read(&model).unwrap();
    let empty = dir.path().join("empty-corpus/label");
    std::fs::create_dir_all(&empty).unwrap();
    let out = cwtext()
        .arg("train")
        .arg(empty.parent().unwrap())
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    assert_refused(&out, "no documents found");
    assert_eq!(std::fs::read(&model).unwrap(), before);
}

#[test]
fn help_lists_examples_and_exit_codes() {
    let out = cwtext().arg("--help").output().unwrap();
    assert!(stdout(&out).contains("Exit codes:"));
    for cmd in ["train", "classify", "label", "eval"] {
        let out = cwtext().args([cmd, "--help"]).output().unwrap();
        assert!(stdout(&out).contains("Examples:"), "{cmd}");
    }
}

#[test]
fn binary_standard_input_is_refused() {
    let png = std::fs::read(fixtures().join("odd/image.png")).unwrap();
    let out = cwtext().arg("classify").write_stdin(png).output().unwrap();
    assert_refused(&out, "<stdin>: binary file (image/png data)");
}

#[cfg(unix)]
#[test]
fn symlinks_to_files_are_followed_and_loops_reported() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    for label in ["sci.space", "rec.sport.hockey"] {
        let d = corpus.join(label);
        std::fs::create_dir_all(&d).unwrap();
        for e in std::fs::read_dir(fixtures().join("news").join(label)).unwrap() {
            let p = e.unwrap().path();
            symlink(&p, d.join(p.file_name().unwrap())).unwrap();
        }
    }
    symlink(corpus.join("sci.space"), corpus.join("sci.space/loop")).unwrap();
    let model = dir.path().join("m.cwm");
    let out = cwtext()
        .arg("train")
        .arg(&corpus)
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("on 34 documents, 2 labels"), "{err}");
    assert!(err.contains("symbolic link loop"), "{err}");
}

/// A model reached through a relative symbolic link, and kept private (mode 0600), as a user
/// who keeps `current.cwm` pointing at a versioned file does: `learn` updates the file the link
/// names, and the link and the file's mode stay. (Before, the atomic rename replaced the link
/// with a new file of mode 0644 and left the linked model untaught.) A new model file is
/// written with the usual 0644 (less the umask).
#[cfg(unix)]
#[test]
fn writing_through_a_symlink_updates_its_target_and_keeps_the_mode() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let (dir, model) = train("news", &["--hash-bits", "16"]);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    std::fs::set_permissions(&model, std::fs::Permissions::from_mode(0o600)).unwrap();
    let links = dir.path().join("links");
    std::fs::create_dir(&links).unwrap();
    let link = links.join("current.cwm");
    symlink("../model.cwm", &link).unwrap();
    let second = links.join("again.cwm"); // a link to the link
    symlink("current.cwm", &second).unwrap();
    let before = std::fs::read(&model).unwrap();
    for via in [&link, &second] {
        let out = cwtext()
            .args(["learn", "--label", "sci.space", "-m"])
            .arg(via)
            .write_stdin("the shuttle reached orbit after launch from the pad")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        for l in [&link, &second] {
            let meta = std::fs::symlink_metadata(l).unwrap();
            assert!(
                meta.file_type().is_symlink(),
                "{} is no longer a link",
                l.display()
            );
        }
        assert_eq!(mode(&model), 0o600);
    }
    let after = std::fs::read(&model).unwrap();
    assert_ne!(after, before, "the linked model was not taught");
    // One lock for every name of the model: beside the file, not beside the links.
    assert!(dir.path().join("model.cwm.lock").exists());
    assert!(!links.join("current.cwm.lock").exists());
    assert!(!links.join("again.cwm.lock").exists());
    assert_eq!(std::fs::read(&link).unwrap(), after);
    // No temporary file is left beside the link or the model.
    for d in [dir.path(), links.as_path()] {
        let stray: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".cwtext-model-"))
            .collect();
        assert!(stray.is_empty(), "{stray:?}");
    }
    // train -o to a new path: the usual mode, 0644 less the umask (at most 0644).
    let (_fresh_dir, fresh) = train("news", &["--hash-bits", "16"]);
    assert_eq!(mode(&fresh) & !0o644, 0, "{:o}", mode(&fresh));
    assert_ne!(mode(&fresh) & 0o600, 0, "{:o}", mode(&fresh));
}

#[test]
fn one_or_two_threads_give_the_same_model_and_label_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut models = Vec::new();
    let mut labels = Vec::new();
    for threads in ["1", "2"] {
        let model = dir.path().join(format!("m{threads}.cwm"));
        let out = cwtext()
            .args(["--threads", threads, "train", "news", "-o"])
            .arg(&model)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        models.push(std::fs::read(&model).unwrap());
        let out = cwtext()
            .args(["--threads", threads, "label", "news", "-m"])
            .arg(&model)
            .output()
            .unwrap();
        labels.push(stdout(&out));
    }
    assert_eq!(models[0], models[1]);
    assert_eq!(labels[0], labels[1]);
    assert_eq!(labels[0].lines().count(), 51);
}

#[test]
fn every_algorithm_trains_and_classifies() {
    for extra in [
        &["--algo", "arow", "--arow-r", "0.5"][..],
        &["--algo", "scw1", "-C", "0.5"],
        &["--algo", "scw2"],
        &["--algo", "perceptron"],
        &["--algo", "averaged-perceptron"],
        &["--algo", "pa"],
        &["--algo", "pa1", "-C", "0.1"],
        &["--algo", "pa2"],
        &["--update", "var", "--projection", "l2"],
        &["--rule", "stdev", "--projection", "exact"],
        &["--constraints", "parallel", "-k", "all"],
        &["--constraints", "exact", "-k", "all", "--update", "var"],
        &["--binary"],
    ] {
        let (_dir, model) = train("mail", extra);
        let json = eval_json(&model, "mail", &["--include", "test-*"]);
        let accuracy = json["accuracy"].as_f64().unwrap();
        assert!(accuracy >= 0.85, "{extra:?}: accuracy {accuracy}");
    }
}

#[test]
fn invalid_learner_combinations_are_refused_with_the_reason() {
    for (extra, want) in [
        (
            &["--algo", "arow", "--projection", "exact"][..],
            "var and stdev rules only, not for arow",
        ),
        (
            &["--algo", "perceptron", "--projection", "l2"],
            "--algo perceptron does not have",
        ),
        (
            &["--algo", "pa", "--update", "var"],
            "--algo pa has its own update",
        ),
        (
            &["--algo", "scw1", "--constraints", "exact", "-k", "3"],
            "not scw1",
        ),
        (&["-k", "five", "--constraints", "sequential"], "'all'"),
        (
            &["--constraints", "sequential", "-k", "0"],
            "k must be at least 1",
        ),
        (
            &["--algo", "pa1", "-C", "0"],
            "C must be positive, but is 0",
        ),
        (
            &["--binary", "--constraints", "sequential", "-k", "2"],
            "k must be 1, but is 2",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = cwtext()
            .args(["train", "mail", "-o"])
            .arg(dir.path().join("m.cwm"))
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(stderr(&out).contains(want), "{extra:?}: {}", stderr(&out));
        assert_no_panic(&out);
        assert!(!dir.path().join("m.cwm").exists());
    }
    // The binary formulation needs two labels.
    let dir = tempfile::tempdir().unwrap();
    for label in ["a", "b", "c"] {
        std::fs::create_dir(dir.path().join(label)).unwrap();
        std::fs::write(
            dir.path().join(label).join("1.txt"),
            format!("words about {label}"),
        )
        .unwrap();
    }
    let out = cwtext()
        .arg("train")
        .arg(dir.path())
        .args(["--binary", "-o"])
        .arg(dir.path().join("m.cwm"))
        .output()
        .unwrap();
    assert_refused(&out, "exactly 2 labels");
}

#[test]
fn experiment_commands_print_their_tables() {
    let out = cwtext()
        .args([
            "experiment",
            "synthetic",
            "--runs",
            "2",
            "--tuning-runs",
            "1",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    for row in [
        "| Perceptron |",
        "| CW-Stdev-full |",
        "| CW-Var-diag (exact) |",
    ] {
        assert!(table.contains(row), "{table}");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("epochs.md");
    let out = cwtext()
        .args([
            "experiment",
            "epochs",
            "news",
            "--epochs",
            "2",
            "--only",
            "k=1",
            "-o",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let table = std::fs::read_to_string(&file).unwrap();
    assert_eq!(table, stdout(&out));
    assert!(
        table.contains("| CW-Var k=1 |") && !table.contains("k=5"),
        "{table}"
    );
    let out = cwtext()
        .args(["experiment", "epochs", "news", "--only", "nothing-matches"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no configuration name contains"));
    // A corrections scenario named wrong is refused with the names (it ran nothing and printed
    // a report of no sections, exit code 0).
    let out = cwtext()
        .args([
            "experiment",
            "corrections",
            "news",
            "--scenarios",
            "new-folders",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("invalid value 'new-folders' for '--scenarios <SCENARIOS>'")
            && stderr(&out).contains("[possible values: new, one-sided, single, mixed]"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn tune_tries_the_defaults_first_and_writes_the_winner_and_its_trials() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tuned.cwm");
    // `tune` on the mail fixtures' training files, at most 3 epochs a trial, into `model`.
    let tune = |extra: &[&str]| {
        cwtext()
            .args(["tune", "mail", "--include", "train-*", "--max-epochs", "3"])
            .args(extra)
            .arg("-o")
            .arg(&model)
            .output()
            .unwrap()
    };
    let out = tune(&["--budget", "5"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let trials: Vec<&str> = text.lines().filter(|l| l.starts_with("trial")).collect();
    assert_eq!(trials.len(), 5, "{text}");
    // The first four are what plain `train` chooses among.
    for (trial, (prior, stopwords)) in trials.iter().zip([
        ("idf", "english"),
        ("idf", "none"),
        ("flat", "english"),
        ("flat", "none"),
    ]) {
        let want = format!(
            "stdev eta=0.9 prior={prior} single | stopwords={stopwords} symbols=yes stem=none ngrams=2 values=log-tf"
        );
        assert!(trial.contains(&want), "{want}\n{text}");
    }
    assert!(text.contains("best: trial"), "{text}");
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("tuned.cwm.tune.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["trials"].as_array().unwrap().len(), 5);
    let best = report["best"].as_u64().unwrap() as usize;
    let best_accuracy = report["trials"][best]["validation_accuracy"]
        .as_f64()
        .unwrap();
    // The winner is train's pick when no trial beats it on the held-out fifth; otherwise the
    // pick and the challengers were cross-validated on 5 folds (every training document once,
    // train's pick first) and the winner is one of them, and the output says so.
    let top = report["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["validation_accuracy"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let cross_validated = report["cross_validated"].as_array().unwrap();
    if cross_validated.is_empty() {
        assert_eq!(best_accuracy, top, "{text}");
    } else {
        assert!(
            text.contains("cross-validated on 5 folds (60 documents"),
            "{text}"
        );
        let trials: Vec<u64> = cross_validated
            .iter()
            .map(|c| c["trial"].as_u64().unwrap())
            .collect();
        assert!(trials.contains(&(best as u64)), "{text}");
        for c in cross_validated {
            assert_eq!(c["documents"].as_u64().unwrap(), 60, "{text}");
            assert_eq!(c["best_epochs"].as_array().unwrap().len(), 5, "{text}");
        }
    }
    assert!(report["epochs"].as_u64().unwrap() >= 1);
    // No test file was read: the corpus filter is what the user gave.
    assert_eq!(
        report["training_documents"].as_u64().unwrap()
            + report["validation_documents"].as_u64().unwrap(),
        60
    );
    let out = cwtext()
        .args(["eval", "mail", "--include", "test-*", "-m"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));

    // With seed 104 and 8 trials, a trial beats train's pick on the 17 held-out mail
    // fixtures; the pick and the challengers (at most two) are cross-validated and the winner is the one clearly
    // better across the 60 documents (the pick unless a challenger is). The seed is one that
    // reaches this path: most seeds find no trial ahead of the pick on so small a corpus.
    let out = tune(&["--budget", "8", "--seed", "104"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("cross-validated on 5 folds (60 documents"),
        "{text}"
    );
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("tuned.cwm.tune.json")).unwrap(),
    )
    .unwrap();
    let cross_validated = report["cross_validated"].as_array().unwrap();
    assert!((2..=3).contains(&cross_validated.len()), "{text}");
    let accuracy = |c: &serde_json::Value| c["accuracy"].as_f64().unwrap();
    let pick = &cross_validated[0];
    let best = report["best"].as_u64().unwrap();
    let winner = cross_validated
        .iter()
        .find(|c| c["trial"].as_u64().unwrap() == best)
        .expect("the winner was cross-validated");
    // Each challenger was ahead of the pick on the held-out fifth.
    let fifth = |t: &serde_json::Value| {
        report["trials"][t["trial"].as_u64().unwrap() as usize]["validation_accuracy"]
            .as_f64()
            .unwrap()
    };
    for c in &cross_validated[1..] {
        assert!(fifth(c) > fifth(pick), "{text}");
    }
    // Train's pick here (17 held out, too few to choose on): mail cross-validates its stop
    // words and header fields' rules at the base prior for its epochs (3, as --max-epochs caps
    // them), and takes stop words none, prior idf, trial 2, as plain `train --epochs 3` does.
    // The winner is at least as accurate across the folds as the pick; a winning challenger
    // was trained for the median of its folds' best epochs, the pick kept for train's epochs.
    assert_eq!(pick["trial"].as_u64().unwrap(), 1, "{text}");
    let plain = cwtext()
        .args([
            "train",
            "mail",
            "--include",
            "train-*",
            "--epochs",
            "3",
            "-o",
        ])
        .arg(dir.path().join("plain.cwm"))
        .output()
        .unwrap();
    assert!(
        stderr(&plain).contains("\nchose stop words none, prior idf (every header field whole"),
        "{}",
        stderr(&plain)
    );
    assert!(accuracy(winner) >= accuracy(pick), "{text}");
    // The median of a cross-validated trial's five best epochs.
    let median_epochs = |c: &serde_json::Value| {
        let mut epochs: Vec<u64> = c["best_epochs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_u64().unwrap())
            .collect();
        epochs.sort_unstable();
        epochs[2]
    };
    let want = if best == pick["trial"].as_u64().unwrap() {
        3
    } else {
        median_epochs(winner)
    };
    assert_eq!(report["epochs"].as_u64().unwrap(), want, "{text}");
    // Every fold is scored at the epochs the settings would be trained for, not each at its
    // own best: the pick at train's (3 here), a challenger at the median of its folds' best.
    for (i, c) in cross_validated.iter().enumerate() {
        let want = if i == 0 { 3 } else { median_epochs(c) };
        assert_eq!(c["scored_epoch"].as_u64().unwrap(), want, "{text}");
        assert!(
            text.contains(&format!(
                "trial {} {:.4} at epoch {want} (best epochs",
                c["trial"].as_u64().unwrap() + 1,
                accuracy(c)
            )),
            "{text}"
        );
    }
    // Each challenger's evidence against the pick is printed: the documents only it gets right
    // (b), only the pick gets right (c), and (b − c) / √(b + c); it wins only above 1.
    let evidence: Vec<(i64, i64, f64)> = text
        .split("against the pick: right on ")
        .skip(1)
        .map(|s| {
            let words: Vec<&str> = s.split_whitespace().collect();
            // "B it missed, wrong on C it got, Z standard errors"
            let b: i64 = words[0].parse().unwrap();
            let c: i64 = words[5].parse().unwrap();
            let z: f64 = words[8].trim_start_matches('+').parse().unwrap();
            (b, c, z)
        })
        .collect();
    assert_eq!(evidence.len(), cross_validated.len() - 1, "{text}");
    for &(b, c, z) in &evidence {
        let want = if b + c == 0 {
            0.0
        } else {
            (b - c) as f64 / ((b + c) as f64).sqrt()
        };
        assert!((z - want).abs() < 0.006, "{b} {c} {z}\n{text}");
    }
    let winning = evidence.iter().filter(|e| e.2 > 1.0).count();
    // A challenger wins (the best is not the pick) exactly when its evidence is above 1.
    assert_eq!(
        best != pick["trial"].as_u64().unwrap(),
        winning > 0,
        "{text}"
    );

    let out = cwtext()
        .args(["tune", "mail", "--budget", "0", "-o"])
        .arg(&model)
        .output()
        .unwrap();
    assert_refused(&out, "at least 1 trial, but is 0");
}

#[test]
fn exact_probabilities_agree_with_gibbs_and_eval_reports_calibration() {
    let (_dir, model) = train("mail", &[]);
    let probability = |extra: &[&str]| -> f64 {
        let out = cwtext()
            .args([
                "classify",
                "--format",
                "json",
                "mail/spam/test-spam-2-00023.txt",
                "-m",
            ])
            .arg(&model)
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        v["probabilities"]["spam"].as_f64().unwrap()
    };
    let exact = probability(&["--probabilities", "exact"]);
    let gibbs = probability(&["--samples", "20000"]);
    let se = (exact * (1.0 - exact) / 20000.0).sqrt().max(1e-4);
    assert!(
        (exact - gibbs).abs() < 3.0 * se,
        "exact {exact} vs Gibbs {gibbs}"
    );
    // eval's ECE and Brier score, recomputed by hand from classify's exact probabilities of the
    // same files: ECE = Σ_b (n_b/N)·|acc_b − conf_b| over ten bins of the predicted label's
    // probability, Brier = mean Σ_z (P_z − [y = z])². Within 10⁻¹² (the order of the sums).
    let v = eval_json(
        &model,
        "mail",
        &["--include", "test-*", "--probabilities", "exact"],
    );
    let mut files: Vec<String> = ["ham", "spam"]
        .iter()
        .flat_map(|label| {
            std::fs::read_dir(fixtures().join("mail").join(label))
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|n| n.starts_with("test-"))
                .map(move |n| format!("mail/{label}/{n}"))
        })
        .collect();
    files.sort();
    let out = cwtext()
        .args([
            "classify",
            "--format",
            "json",
            "--probabilities",
            "exact",
            "-m",
        ])
        .arg(&model)
        .args(&files)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let (mut brier, mut bins) = (0.0, [(0usize, 0usize, 0.0f64); 10]);
    for line in stdout(&out).lines() {
        let d: serde_json::Value = serde_json::from_str(line).unwrap();
        let truth = d["file"].as_str().unwrap().split('/').nth(1).unwrap();
        let (label, confidence) = (
            d["label"].as_str().unwrap(),
            d["probability"].as_f64().unwrap(),
        );
        let bin = &mut bins[((confidence * 10.0) as usize).min(9)];
        *bin = (
            bin.0 + 1,
            bin.1 + usize::from(label == truth),
            bin.2 + confidence,
        );
        for (z, p) in d["probabilities"].as_object().unwrap() {
            brier += (p.as_f64().unwrap() - f64::from(u8::from(z == truth))).powi(2);
        }
    }
    let n = files.len() as f64;
    let ece: f64 = bins
        .iter()
        .filter(|b| b.0 > 0)
        .map(|&(_, right, confidence)| (right as f64 - confidence).abs() / n)
        .sum();
    assert_eq!(v["documents"].as_u64().unwrap(), files.len() as u64);
    for (name, want) in [("ece", ece), ("brier", brier / n)] {
        let got = v[name].as_f64().unwrap();
        assert!(
            (got - want).abs() < 1e-12,
            "{name}: eval {got}, by hand {want}"
        );
    }
    let counts: Vec<u64> = v["calibration"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["examples"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, bins.map(|b| b.0 as u64));
}

#[test]
fn train_says_whether_it_calibrated() {
    let dir = tempfile::tempdir().unwrap();
    let summary = |extra: &[&str]| {
        let out = cwtext()
            .args(["train", "mail", "-o"])
            .arg(dir.path().join("m.cwm"))
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stderr(&out)
    };
    // All 80 mails: 21 in the held-out fifth, enough for a fit that improves the Brier score.
    let all = summary(&[]);
    let line = all
        .lines()
        .find(|l| l.starts_with("probabilities calibrated on 21 held-out documents"))
        .unwrap_or_else(|| panic!("{all}"));
    let numbers: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.parse().ok())
        .collect();
    // [21, scale, before, after]
    assert!(
        numbers[1] > 0.0 && numbers[1] < 1.0 && numbers[3] < numbers[2],
        "{line}"
    );
    // The 60 training mails: too few held out (13), so every mail is held out once by 5-fold
    // cross-validation.
    let folds = summary(&["--include", "train-*"]);
    assert!(
        folds.contains("probabilities calibrated on 60 documents, each held out once by 5-fold cross-validation (too few for a held-out fifth): variance scale 0."),
        "{folds}"
    );
    // 13 mails (6 spam, 7 ham): too few in all.
    let few = summary(&[
        "--include",
        "train-spam-1-*",
        "--include",
        "train-easy-ham-2-*",
    ]);
    assert!(
        few.contains("probabilities not calibrated: fewer than 20 documents to fit the scale on\n"),
        "{few}"
    );
    assert!(!summary(&["--no-calibrate"]).contains("calibrated"));
}

/// A router trained on a few dozen messages holds out too few to fit its probability scale on a
/// fifth. It kept the scale 1, and its probabilities said 0.5 to 0.9 for 20 test mails that
/// were all right (ECE 0.31). Fitted by cross-validation, they say what they know, and the
/// model says how its scale was fitted.
#[test]
fn a_corpus_too_small_for_a_held_out_fifth_is_calibrated_by_folds() {
    let (_dir, model) = train("mail", &[]);
    let json = eval_json(&model, "mail", &["--include", "test-*"]);
    assert_eq!(json["documents"], 20);
    assert_eq!(json["accuracy"].as_f64().unwrap(), 1.0, "{json}");
    // Measured: 0.008 (at scale 1: 0.311).
    let ece = json["ece"].as_f64().unwrap();
    assert!(ece <= 0.1, "ECE {ece}");
    let out = cwtext().arg("inspect").arg(&model).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("(fitted by train on 60 documents, each held out once by 5-fold cross-validation (Brier "),
        "{}",
        stdout(&out)
    );
}

/// Continuing a model on a few dozen documents keeps the model's probability scale: a fit by
/// cross-validation on the new documents alone (here all of one new label) says nothing of
/// the model's other labels. The first build of the folds' fit refitted it (0.0021 → 0.1095
/// on the news model, Brier "0.1296 → 0.0006" on a single class).
#[test]
fn resuming_on_a_few_documents_keeps_the_models_scale() {
    let (dir, model) = train("news", &[]);
    let scale = |model: &Path| {
        let out = cwtext().arg("inspect").arg(model).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
            .lines()
            .find(|l| l.starts_with("probability scale"))
            .unwrap()
            .split_whitespace()
            .nth(2)
            .unwrap()
            .to_string()
    };
    let before = scale(&model);
    assert_ne!(before, "1", "the news model is calibrated");
    // 40 mails, as one new label: about 8 held out, too few for a fifth.
    let mail = dir.path().join("more");
    std::fs::create_dir_all(mail.join("mail")).unwrap();
    for f in files_in(&fixtures().join("mail/ham")) {
        std::fs::copy(&f, mail.join("mail").join(f.file_name().unwrap())).unwrap();
    }
    let resumed = dir.path().join("resumed.cwm");
    let out = cwtext()
        .arg("train")
        .arg(&mail)
        .arg("--resume")
        .arg(&model)
        .arg("-o")
        .arg(&resumed)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "probabilities: the continued model's variance scale {:.4} is kept (too few held-out documents, or all of one label, to fit it again)",
            before.parse::<f64>().unwrap()
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(scale(&resumed), before);
    // 300 sentences of one new label hold out about 60: enough to fit on, but all of one label,
    // so the scale is kept too (before, 65 held out of one label fitted it again: 0.0149 -> 0.219).
    let resumed = dir.path().join("resumed-sentences.cwm");
    let sentences = dir.path().join("sentences");
    std::fs::create_dir_all(&sentences).unwrap();
    std::fs::copy(
        fixtures().join("sentences/train/pos.txt"),
        sentences.join("pos.txt"),
    )
    .unwrap();
    let out = cwtext()
        .arg("train")
        .arg(&sentences)
        .args(["--layout", "lines", "--resume"])
        .arg(&model)
        .arg("-o")
        .arg(&resumed)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is kept (too few held-out documents, or all of one label"),
        "{}",
        stderr(&out)
    );
    assert_eq!(scale(&resumed), before);
}

#[test]
fn eval_plot_writes_a_reliability_diagram_and_a_learning_curve() {
    let (dir, model) = train("mail", &[]);
    let plots = dir.path().join("plots");
    let out = cwtext()
        .args(["eval", "mail", "--include", "test-*", "--plot"])
        .arg(&plots)
        .arg("-m")
        .arg(&model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    for name in ["reliability.svg", "learning-curve.svg"] {
        let svg = std::fs::read_to_string(plots.join(name)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("<circle"), "{name}");
    }
}

/// A temporary corpus of symbolic links to fixture files: `files` are (label, fixture path).
fn link_corpus(files: &[(&str, PathBuf)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (label, path) in files {
        let target = dir.path().join(label);
        std::fs::create_dir_all(&target).unwrap();
        std::os::unix::fs::symlink(path, target.join(path.file_name().unwrap())).unwrap();
    }
    dir
}

fn mail_files(prefix: &str) -> Vec<(&'static str, PathBuf)> {
    fixture_files("mail", &["ham", "spam"], prefix)
}

fn accuracy(model: &Path, dir: &Path) -> f64 {
    eval_json(model, dir, &[])["accuracy"].as_f64().unwrap()
}

/// Half the corpus trained, the other half learned as corrections: as accurate as one epoch on
/// the whole corpus, within one point (on 20 Newsgroups: 0.8432 against 0.8442).
#[test]
fn learning_the_second_half_reaches_the_whole_corpus_accuracy() {
    let train = mail_files("train-");
    let (first, second): (Vec<_>, Vec<_>) = train
        .iter()
        .cloned()
        .enumerate()
        .partition(|(i, _)| i % 2 == 0);
    let strip =
        |v: Vec<(usize, (&'static str, PathBuf))>| v.into_iter().map(|p| p.1).collect::<Vec<_>>();
    let (first, second) = (link_corpus(&strip(first)), link_corpus(&strip(second)));
    let whole = link_corpus(&train);
    let test = link_corpus(&mail_files("test-"));
    let dir = tempfile::tempdir().unwrap();
    let (half, full) = (dir.path().join("half.cwm"), dir.path().join("whole.cwm"));
    for (corpus, model) in [(first.path(), &half), (whole.path(), &full)] {
        let out = cwtext()
            .arg("train")
            .arg(corpus)
            .args(["--epochs", "1", "--no-calibrate", "-o"])
            .arg(model)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let before = accuracy(&half, test.path());
    let out = cwtext()
        .args(["learn", "-m"])
        .arg(&half)
        .arg(second.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("learned 30 document(s)"),
        "{}",
        stderr(&out)
    );
    let (after, target) = (accuracy(&half, test.path()), accuracy(&full, test.path()));
    // 20 test documents: at most one of them behind (learn protects the kept documents after
    // each correction, which cost the one mail the whole model got right when only Subject,
    // From and To were header features). Ahead is fine: with every header field a feature, the
    // one epoch of the whole model gets 18 of 20, the half model and its corrections 20.
    assert!(
        after >= target - 0.05 - 1e-9,
        "half+learn {after} vs whole {target} (half alone {before})"
    );
    assert!(after >= before);
}

#[test]
fn learn_adds_unseen_labels_from_files_and_standard_input() {
    let (_dir, model) = train("mail", &[]);
    let news = fixtures().join("news/sci.space/train-08372.txt");
    let out = cwtext()
        .args(["learn", "-m"])
        .arg(&model)
        .args(["--label", "space"])
        .arg(&news)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("new label(s): space"),
        "{}",
        stderr(&out)
    );
    assert!(
        model_lock_path(&model).exists(),
        "the lock file stays for the next writer"
    );
    let out = cwtext()
        .args(["learn", "-m"])
        .arg(&model)
        .args(["--label", "space"])
        .write_stdin(std::fs::read(fixtures().join("news/sci.space/train-08380.txt")).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = cwtext()
        .args(["classify", "--format", "json", "-m"])
        .arg(&model)
        .arg(&news)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["label"], "space", "{v}");
    assert_eq!(v["probabilities"].as_object().unwrap().len(), 3);
    // Without --label the input must be a labelled folder.
    let out = cwtext()
        .args(["learn", "-m"])
        .arg(&model)
        .arg(&news)
        .output()
        .unwrap();
    assert_refused(&out, "give --label L");
    // A binary-formulation model cannot take a third label.
    let (_d, binary) = train("mail", &["--binary"]);
    let out = cwtext()
        .args(["learn", "-m"])
        .arg(&binary)
        .args(["--label", "space"])
        .arg(&news)
        .output()
        .unwrap();
    assert_refused(&out, "exactly two labels");
}

/// A label is a name: learn refuses one with a line break, a tab or another control character
/// (it would break `label`'s TSV, `classify`'s lines and a folder's name) or longer than
/// 1,024 bytes, saying why, and leaves the model as it was.
#[test]
fn learn_refuses_a_label_that_is_not_a_name_and_keeps_the_model() {
    let (_dir, model) = train("mail", &[]);
    let before = std::fs::read(&model).unwrap();
    let news = fixtures().join("news/sci.space/train-08372.txt");
    let long = "x".repeat(1025);
    for (label, says) in [
        ("spam\nX-Label: ham", "a control character (U+000A)"),
        ("a\tb", "a control character (U+0009)"),
        ("bell\u{7}", "a control character (U+0007)"),
        (long.as_str(), "1025 bytes long, more than 1024"),
    ] {
        let out = cwtext()
            .args(["learn", "-m"])
            .arg(&model)
            .args(["--label", label])
            .arg(&news)
            .output()
            .unwrap();
        assert_refused(&out, says);
        assert_refused(&out, "the model was not changed");
        assert_eq!(std::fs::read(&model).unwrap(), before, "{label:?}");
    }
    // Right at the bound, and any other character, are names.
    let out = cwtext()
        .args(["learn", "-q", "-m"])
        .arg(&model)
        .args(["--label", &"y".repeat(1024)])
        .arg(&news)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A label folder whose name holds a control character is refused by train, naming it.
#[test]
fn train_refuses_a_label_folder_whose_name_is_not_a_name() {
    let dir = tempfile::tempdir().unwrap();
    for (label, text) in [
        ("good", "apples and pears"),
        ("bad\tname", "nuts and bolts"),
    ] {
        std::fs::create_dir(dir.path().join(label)).unwrap();
        std::fs::write(dir.path().join(label).join("a.txt"), text).unwrap();
    }
    let out = cwtext()
        .arg("train")
        .arg(dir.path())
        .arg("-o")
        .arg(dir.path().join("m.cwm"))
        .output()
        .unwrap();
    assert_refused(
        &out,
        "label \"bad\\tname\" has a control character (U+0009)",
    );
    assert!(!dir.path().join("m.cwm").exists());
}

/// The fixture files of `labels` in `corpus` whose names start with `prefix`, as (label, path).
fn fixture_files(
    corpus: &str,
    labels: &[&'static str],
    prefix: &str,
) -> Vec<(&'static str, PathBuf)> {
    let mut out = Vec::new();
    for &label in labels {
        let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures().join(corpus).join(label))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
            .collect();
        files.sort();
        out.extend(files.into_iter().map(|f| (label, f)));
    }
    out
}

/// `cwtext train CORPUS -o MODEL`, which must succeed.
fn train_folder(corpus: &Path, model: &Path) {
    let out = cwtext()
        .arg("train")
        .arg(corpus)
        .arg("-o")
        .arg(model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `cwtext learn -m MODEL FOLDER [EXTRA…]`, which must succeed; its standard error.
fn learn_folder(model: &Path, folder: &Path, extra: &[&str]) -> String {
    let out = cwtext()
        .args(["learn", "-m"])
        .arg(model)
        .arg(folder)
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stderr(&out)
}

/// How often `eval` predicted `label` (its confusion column).
fn predicted(report: &serde_json::Value, label: &str) -> u64 {
    let labels = report["labels"].as_array().unwrap();
    let Some(i) = labels.iter().position(|l| l == label) else {
        return 0;
    };
    report["confusion"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row[i].as_u64().unwrap())
        .sum()
}

/// Issue 16: a folder the model has never seen, filled with a few refiled messages, must not
/// take the documents of the labels the model knows. Before the fix, the 12 refiled posts of
/// `talk.politics.mideast` took 17 of the 30 test documents of the 4 trained labels (accuracy
/// 1.0 → 0.43): the new label started at the prior (μ = 0, σ = 1) and its first updates were huge.
#[test]
fn a_new_folder_learned_from_few_refiles_does_not_take_the_old_labels_documents() {
    let mut trained = mail_files("train-");
    trained.extend(fixture_files(
        "news",
        &["sci.space", "rec.sport.hockey"],
        "train-",
    ));
    let mut old_test = mail_files("test-");
    old_test.extend(fixture_files(
        "news",
        &["sci.space", "rec.sport.hockey"],
        "test-",
    ));
    let (trained, old_test) = (link_corpus(&trained), link_corpus(&old_test));
    let refiled = link_corpus(&fixture_files("news", &["talk.politics.mideast"], "train-"));
    let new_test = link_corpus(&fixture_files("news", &["talk.politics.mideast"], "test-"));
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.cwm");
    train_folder(trained.path(), &model);
    // Every training document is kept: 30 + 30 mails and 12 + 12 posts, under the 32 per
    // label that are the least kept.
    let out = cwtext().arg("inspect").arg(&model).output().unwrap();
    assert!(
        stdout(&out).contains("rehearsal          84 documents kept (up to "),
        "{}",
        stdout(&out)
    );
    let before = eval_json(&model, old_test.path(), &[]);
    let learned = learn_folder(&model, refiled.path(), &[]);
    assert!(
        learned.contains("new label(s): talk.politics.mideast"),
        "{learned}"
    );
    let after = eval_json(&model, old_test.path(), &[]);
    let (a0, a1) = (
        before["accuracy"].as_f64().unwrap(),
        after["accuracy"].as_f64().unwrap(),
    );
    // 30 documents, 12 training posts per newsgroup: at most 2 may go to the new folder (with
    // the fix, 2 of the 5 sci.space posts do; before it, 17 documents of every label did).
    assert!(a1 >= a0 - 2.0 / 30.0 - 1e-9, "old labels {a0} → {a1}");
    assert!(predicted(&after, "talk.politics.mideast") <= 2, "{after}");
    // And the new folder is learned: its own test posts go to it. On 5 test posts after 12
    // refiles this depends on the seed's order (0.0 to 1.0 over seeds 1–8 and 42, with the old
    // shuffle as with the permutation of issue 20: means 0.51 and 0.42), so it is checked on
    // average over 8 seeds rather than for one.
    //
    // With the mail's header fields (the default) the two mail labels of these 84 documents
    // are told apart with wide margins, all 20 held-out documents are right, and the
    // probability scale is fitted to its floor (0.0001; 0.0135 without the fields). Corrections
    // demanded the confidence η on that scale and became minimal: 12 refiles won 0.575 of the
    // new folder's posts on average over the 8 seeds. They now demand it on at least
    // MIN_CORRECTION_SCALE (0.025, `jobs::online::correction_scale`): 0.775 (31 of 40 posts;
    // the same runs every time, so the bound below separates the two).
    let mut total = 0.0;
    for seed in 1..=8 {
        let model = dir.path().join(format!("seed-{seed}.cwm"));
        let out = cwtext()
            .arg("train")
            .arg(trained.path())
            .args(["--seed", &seed.to_string(), "-o"])
            .arg(&model)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        learn_folder(&model, refiled.path(), &[]);
        total += eval_json(&model, new_test.path(), &[])["accuracy"]
            .as_f64()
            .unwrap();
    }
    assert!(
        total / 8.0 >= 0.7,
        "mean accuracy on the new folder {}",
        total / 8.0
    );
}

/// Issue 16: corrections drawn from one label only (the folder a user is busy with) must not
/// move the other labels' documents. Before the fix, 96 corrections of `sci.space` (its 12
/// training posts, learned 8 times) turned a `rec.sport.hockey` test post into `sci.space`.
#[test]
fn one_sided_corrections_keep_the_other_labels_documents() {
    let labels = ["sci.space", "rec.sport.hockey", "talk.politics.mideast"];
    let trained = link_corpus(&fixture_files("news", &labels, "train-"));
    let others = link_corpus(&fixture_files("news", &labels[1..], "test-"));
    let corrections = link_corpus(&fixture_files("news", &labels[..1], "train-"));
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.cwm");
    train_folder(trained.path(), &model);
    let before = eval_json(&model, others.path(), &[]);
    for seed in 1..=8 {
        learn_folder(&model, corrections.path(), &["--seed", &seed.to_string()]);
    }
    let after = eval_json(&model, others.path(), &[]);
    assert_eq!(after["confusion"], before["confusion"], "{before}\n{after}");
}

/// The same corrections in the same order give the same model bytes (rehearsal included).
#[test]
fn the_same_corrections_give_the_same_bytes() {
    let (_dir, model) = train("mail", &[]);
    let copy = model.with_extension("copy.cwm");
    std::fs::copy(&model, &copy).unwrap();
    let refiled = link_corpus(&fixture_files(
        "news",
        &["sci.space", "rec.sport.hockey"],
        "train-",
    ));
    for m in [&model, &copy] {
        learn_folder(m, refiled.path(), &[]);
    }
    assert_eq!(
        std::fs::read(&model).unwrap(),
        std::fs::read(&copy).unwrap()
    );
}

fn model_lock_path(model: &Path) -> PathBuf {
    PathBuf::from(format!("{}.lock", model.display()))
}

#[test]
fn resume_continues_a_model_and_adds_labels() {
    let (dir, model) = train("mail", &["--epochs", "1"]);
    let news = link_corpus(&[
        (
            "sci.space",
            fixtures().join("news/sci.space/train-08372.txt"),
        ),
        (
            "ham",
            fixtures().join("mail/ham/train-easy-ham-1-00089.txt"),
        ),
    ]);
    let resumed = dir.path().join("resumed.cwm");
    let out = cwtext()
        .arg("train")
        .arg(news.path())
        .args(["--no-calibrate", "--resume"])
        .arg(&model)
        .arg("-o")
        .arg(&resumed)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("continuing"), "{}", stderr(&out));
    let json = |m: &Path| -> serde_json::Value {
        let bytes = std::fs::read(m).unwrap();
        let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        serde_json::from_slice(&bytes[16..16 + len]).unwrap()
    };
    let (before, after) = (json(&model), json(&resumed));
    assert_eq!(
        after["labels"],
        serde_json::json!(["ham", "spam", "sci.space"])
    );
    assert_eq!(
        after["training"]["documents"].as_u64().unwrap(),
        before["training"]["documents"].as_u64().unwrap() + 2
    );
    assert_eq!(after["pipeline"], before["pipeline"]);
}

#[test]
fn merge_combines_shards_and_refuses_different_pipelines() {
    // The stop words given: on these 60 mails `train` cross-validates them, and a shard trained
    // in another order may choose the other list (a different pipeline, refused below).
    let (dir, a) = train("mail", &["--hash-bits", "16", "--stopwords", "english"]);
    let (_d2, b) = train_seed(
        "mail",
        "9",
        &["--hash-bits", "16", "--stopwords", "english"],
    );
    for method in ["kl", "average"] {
        let merged = dir.path().join(format!("{method}.cwm"));
        let out = cwtext()
            .arg("merge")
            .arg(&a)
            .arg(&b)
            .args(["--method", method, "-o"])
            .arg(&merged)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stderr(&out).contains("merged 2 models"), "{}", stderr(&out));
        let test = link_corpus(&mail_files("test-"));
        assert!(accuracy(&merged, test.path()) >= 0.85);
    }
    // Models that learned with different rules merge, with a note on which rule goes on.
    let (_d4, scw) = train_seed(
        "mail",
        "9",
        &["--hash-bits", "16", "--algo", "scw1", "-C", "0.3"],
    );
    let mixed = dir.path().join("mixed.cwm");
    let out = cwtext()
        .arg("merge")
        .arg(&a)
        .arg(&scw)
        .arg("-o")
        .arg(&mixed)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("warning: the models learned with different settings (rule is \"scw1\" in")
            && stderr(&out).contains("but \"stdev\" in")
            && stderr(&out).contains("the merged model learns on with"),
        "{}",
        stderr(&out)
    );
    let out = cwtext().arg("inspect").arg(&mixed).output().unwrap();
    assert!(
        stdout(&out).contains(r#""rule":"stdev""#),
        "{}",
        stdout(&out)
    );
    let (_d3, c) = train("mail", &["--hash-bits", "17"]);
    let out = cwtext()
        .arg("merge")
        .arg(&a)
        .arg(&c)
        .arg("-o")
        .arg(dir.path().join("bad.cwm"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("different pipelines: hash_bits is 17 in")
            && stderr(&out).contains("but 16 in")
            // And what to do about it.
            && stderr(&out).contains("train them with the same --stopwords, --hash-bits, --ngram-weight, --char-ngrams and --ngrams"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("bad.cwm").exists());
}

#[test]
fn sharded_training_merges_its_shards() {
    for extra in [&["--shards", "3"][..], &["--shards", "3", "--mix"]] {
        let (_dir, model) = train("mail", extra);
        let test = link_corpus(&mail_files("test-"));
        let a = accuracy(&model, test.path());
        assert!(a >= 0.8, "{extra:?}: {a}");
    }
    let dir = tempfile::tempdir().unwrap();
    let out = cwtext()
        .args(["train", "mail", "--shards", "500", "-o"])
        .arg(dir.path().join("m.cwm"))
        .output()
        .unwrap();
    assert_refused(&out, "has no documents: use fewer shards");
}

/// Two processes on 127.0.0.1 train on timely dataflow and write exactly the model that
/// `--shards 2 --mix` writes in one process (bit for bit: the same f32 operations in the same
/// order).
#[cfg(feature = "cluster")]
#[test]
fn two_processes_on_loopback_equal_two_shards_in_one() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts.txt");
    // Two free ports on loopback, in the host file. A port is free when it is chosen, and
    // another test's listener may take it before the cluster binds it: then the run is tried
    // again on new ports (twice at most).
    let choose_ports = || {
        let ports: Vec<u16> = (0..2)
            .map(|_| {
                std::net::TcpListener::bind("127.0.0.1:0")
                    .unwrap()
                    .local_addr()
                    .unwrap()
                    .port()
            })
            .collect();
        std::fs::write(
            &hosts,
            ports
                .iter()
                .map(|p| format!("127.0.0.1:{p}\n"))
                .collect::<String>(),
        )
        .unwrap();
    };
    let cluster_model = dir.path().join("cluster.cwm");
    // Both processes of a two-process cluster on loopback, with these extra flags.
    let run_cluster_once = |corpus: &std::path::Path, extra: &[&str], may_retry: bool| -> bool {
        let spawn = |index: usize| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("cwtext"))
                .current_dir(fixtures())
                .arg("train")
                .arg(corpus)
                .args(["--seed", "3", "--cluster"])
                .args(extra)
                .args([
                    "--processes",
                    "2",
                    "--process",
                    &index.to_string(),
                    "--hostfile",
                ])
                .arg(&hosts)
                .arg("-o")
                .arg(if index == 0 {
                    cluster_model.clone()
                } else {
                    dir.path().join("unused.cwm")
                })
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        // A process that fails (its port taken) leaves its peer waiting to connect for ever:
        // then the peer is stopped, as both are after five minutes.
        let mut children = [spawn(0), spawn(1)];
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
        loop {
            let ended: Vec<Option<std::process::ExitStatus>> =
                children.iter_mut().map(|c| c.try_wait().unwrap()).collect();
            if ended.iter().all(Option::is_some) {
                break;
            }
            let failed = ended.iter().flatten().any(|s| !s.success());
            if failed || std::time::Instant::now() > deadline {
                children.iter_mut().for_each(|c| drop(c.kill()));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let [zero, one] = children.map(|c| c.wait_with_output().unwrap());
        let taken = |o: &std::process::Output| stderr(o).contains("in use");
        if may_retry && (taken(&zero) || taken(&one)) {
            return false;
        }
        assert!(zero.status.success(), "{}", stderr(&zero));
        assert!(one.status.success(), "{}", stderr(&one));
        assert!(
            stderr(&zero).contains("process 0 of 2: wrote"),
            "{}",
            stderr(&zero)
        );
        assert!(
            !dir.path().join("unused.cwm").exists(),
            "only process 0 writes"
        );
        true
    };
    let run_cluster_on = |corpus: &std::path::Path, extra: &[&str]| {
        for attempt in 0.. {
            choose_ports();
            if run_cluster_once(corpus, extra, attempt < 2) {
                return;
            }
        }
    };
    let run_cluster = |extra: &[&str]| run_cluster_on(std::path::Path::new("mail"), extra);
    // Calibrated by default, on the held-out documents of both processes (21 of all 80 mails).
    run_cluster(&[]);
    let calibrated = cwtext::model::Model::load(&cluster_model).unwrap();
    let info = calibrated.header.calibration.clone().expect("calibrated");
    assert_eq!(info.fitted_by, "train --cluster");
    assert_eq!(info.held_out, 21);
    assert!(info.brier_after < info.brier_before, "{info:?}");
    assert!(calibrated.header.probability_scale < 1.0);
    // Each process's shard from a feature cache file on disk (issue 20): the same bytes.
    run_cluster(&["--memory-budget", "0"]);
    assert_eq!(
        cwtext::model::Model::load(&cluster_model)
            .unwrap()
            .to_bytes(),
        calibrated.to_bytes(),
        "--cluster from the cache on disk equals --cluster in memory"
    );
    run_cluster(&["--include", "train-*", "--no-calibrate"]);
    let (_d, shards) = train("mail", &["--shards", "2", "--mix", "--no-calibrate"]);
    // The cluster's model equals --shards 2 --mix but for the rehearsal documents, which only
    // a process that featurised the whole corpus can choose (train keeps them, the cluster does
    // not yet).
    let cluster = cwtext::model::Model::load(&cluster_model).unwrap();
    let mut shards = cwtext::model::Model::load(&shards).unwrap();
    assert!(cluster.rehearsal.is_none() && shards.rehearsal.is_some());
    shards.rehearsal = None;
    assert_eq!(
        cluster.to_bytes(),
        shards.to_bytes(),
        "the cluster's model equals --shards 2 --mix"
    );
    // A corpus whose hash bits are chosen (35,200 words, 2 labels: 2^19 for two shards' tables
    // within 32 MiB): every process chooses them alike, as --shards 2 --mix does. (The cluster
    // chooses nothing on a held-out fifth, so the one process is given the cluster's stop
    // words, prior and no label shift.)
    let text = dir.path().join("text");
    crate::hash_collisions::vocabulary_corpus(&text, 2, 220, false);
    run_cluster_on(&text, &["--no-calibrate"]);
    let sharded = dir.path().join("sharded.cwm");
    let out = cwtext()
        .arg("train")
        .arg(&text)
        .args(["--seed", "3", "--shards", "2", "--mix", "--no-calibrate"])
        .args([
            "--stopwords",
            "english",
            "--prior",
            "idf",
            "--no-label-shift",
        ])
        .arg("-o")
        .arg(&sharded)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let cluster = cwtext::model::Model::load(&cluster_model).unwrap();
    let mut shards = cwtext::model::Model::load(&sharded).unwrap();
    assert_eq!(cluster.header.pipeline.hash_bits, 19);
    assert_eq!(cluster.header.pipeline, shards.header.pipeline);
    shards.rehearsal = None;
    assert!(
        cluster.to_bytes() == shards.to_bytes(),
        "with chosen hash bits too, the cluster's model equals --shards 2 --mix"
    );
}

/// SIGKILL at varied moments during `learn` or `train -o` never leaves a damaged model: the file
/// is either the old model or the new one, and always loads.
#[test]
fn killing_learn_or_train_leaves_a_loadable_model() {
    let (dir, model) = train("mail", &[]);
    let corrections = link_corpus(&mail_files("test-"));
    for i in 0..16u64 {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("cwtext"));
        if i % 2 == 0 {
            command
                .args(["learn", "-q", "-m"])
                .arg(&model)
                .arg(corrections.path());
        } else {
            command
                .arg("train")
                .arg(fixtures().join("mail"))
                .args(["-q", "-o"])
                .arg(&model);
        }
        let mut child = command.stderr(std::process::Stdio::null()).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(3 + i * 11));
        let _ = child.kill(); // SIGKILL on Unix
        let _ = child.wait();
        let out = cwtext()
            .args(["classify", "-m"])
            .arg(&model)
            .arg("mail/spam/test-spam-2-00023.txt")
            .output()
            .unwrap();
        assert!(out.status.success(), "kill {i}: {}", stderr(&out));
    }
    // No temporary file is left that a reader could mistake for a model (a killed writer may
    // leave a hidden .cwtext-model-* file; it is never read as a model).
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cwm") && n != "model.cwm")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn shelf_models_are_chosen_by_name() {
    // The mail fixtures come from the SpamAssassin corpus the spam model was trained on (apart
    // from its held-out fifth), so this checks wiring, not generalisation: models/README.md has
    // the held-out accuracy.
    let out = cwtext()
        .args(["eval", "-m", "spam", "mail", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["accuracy"].as_f64().unwrap() >= 0.95, "{report}");
    for (review, want) in [
        (
            "A gorgeous, moving film with a superb cast and a witty script.",
            "pos",
        ),
        (
            "Dull, lifeless and far too long; the plot is a mess.",
            "neg",
        ),
    ] {
        // `--verify` checks the built-in model's checksum too (skipped by default) and changes
        // nothing else.
        for verify in [None, Some("--verify")] {
            let out = cwtext()
                .args(["classify", "-m", "sentiment"])
                .args(verify)
                .write_stdin(review)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(stdout(&out).lines().next(), Some(want), "{review}");
        }
    }
    let out = cwtext().args(["models"]).output().unwrap();
    let names: Vec<String> = stdout(&out)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(names, ["topics", "spam", "sentiment"]);
    // A name that is neither a file nor a shelf model says both.
    let out = cwtext()
        .args(["classify", "-m", "spma"])
        .write_stdin("hello")
        .output()
        .unwrap();
    assert_refused(
        &out,
        "spma is neither a model file nor a built-in model (topics, spam, sentiment)",
    );
}

#[test]
fn completions_and_man_pages_come_from_the_parser() {
    for (shell, marker) in [
        ("bash", "_cwtext()"),
        ("zsh", "#compdef cwtext"),
        ("fish", "complete -c cwtext"),
    ] {
        let out = cwtext().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let script = stdout(&out);
        assert!(script.contains(marker), "{shell}: {script}");
        assert!(
            script.contains("classify") && script.contains("min-prob"),
            "{shell}"
        );
    }
    let out = cwtext().args(["man"]).output().unwrap();
    assert!(out.status.success());
    assert!(stdout(&out).starts_with(".ie") && stdout(&out).contains(".TH cwtext 1"));
    let dir = tempfile::tempdir().unwrap();
    let out = cwtext()
        .args(["man", "--dir"])
        .arg(dir.path().join("man1"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let page = std::fs::read_to_string(dir.path().join("man1/cwtext-classify.1")).unwrap();
    assert!(page.contains("\\-\\-top"), "{page}");
    // A closed pipe ends quietly.
    let out = with_closed_stdout(&["completions", "fish"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_no_panic(&out);
    let out = cwtext().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Sums the parts of an `explain --format json` answer.
fn explained_margin(report: &serde_json::Value) -> f64 {
    let parts = |key: &str| -> f64 {
        report[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["contribution"].as_f64().unwrap())
            .sum()
    };
    parts("for_label")
        + report["for_label_rest"].as_f64().unwrap()
        + parts("for_runner_up")
        + report["for_runner_up_rest"].as_f64().unwrap()
}

#[test]
fn explain_splits_the_margin_into_the_documents_own_words() {
    let out = cwtext()
        .args([
            "explain",
            "news/sci.space/test-05593.txt",
            "--format",
            "json",
            "--top",
            "3",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["label"], "sci.space");
    let margin =
        report["label_score"].as_f64().unwrap() - report["runner_up_score"].as_f64().unwrap();
    assert!(margin > 0.0);
    assert!(
        (explained_margin(&report) - margin).abs() < 1e-6,
        "{report}"
    );
    let top = &report["for_label"][0];
    assert_eq!(top["texts"][0], "space", "{report}");
    assert!(top["label_mean"].as_f64().unwrap() > top["runner_up_mean"].as_f64().unwrap());
    assert!(top["label_sigma"].as_f64().unwrap() > 0.0);
    assert_eq!(report["for_label"].as_array().unwrap().len(), 3);
    // Text: the words, and what is missing without a vocabulary.
    let (dir, model) = train("news", &["--hash-bits", "16"]);
    // A post this small model files as sci.space with every shuffle tried (05593 above is
    // near the boundary between sci.space and talk.politics.mideast for it).
    let out = cwtext()
        .args(["explain", "news/sci.space/test-05719.txt", "-m"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("sci.space (probability "), "{text}");
    assert!(text.contains("The model keeps no vocabulary"), "{text}");
    assert!(!text.contains("bucket shared with"), "{text}");
    // Errors: no words, a missing file.
    let out = cwtext()
        .args(["explain", "odd/whitespace.txt"])
        .output()
        .unwrap();
    assert_refused(&out, "odd/whitespace.txt");
    let out = cwtext().args(["explain", "nope.txt"]).output().unwrap();
    assert_refused(&out, "nope.txt");
    assert_no_panic(&out);
    drop(dir);
}

#[test]
fn keep_vocabulary_names_features_in_inspect_and_explain() {
    let (dir, plain) = train("mail", &["--hash-bits", "16"]);
    let named = dir.path().join("named.cwm");
    let out = cwtext()
        .args([
            "train",
            "mail",
            "--include",
            "train-*",
            "--seed",
            "3",
            "--hash-bits",
            "16",
        ])
        .args(["--keep-vocabulary", "-o"])
        .arg(&named)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("kept the vocabulary: texts for"),
        "{}",
        stderr(&out)
    );
    // The vocabulary changes nothing else: the weights and predictions are the same. Both keep
    // rehearsal documents, so both are version 3 files (without them: 1 and 2, see
    // tests/integration/model_compat.rs).
    let (a, b) = (
        std::fs::read(&plain).unwrap(),
        std::fs::read(&named).unwrap(),
    );
    assert_eq!(a[8], 3);
    assert_eq!(b[8], 3);
    assert!(b.len() > a.len());
    let classify = |m: &Path| {
        let out = cwtext()
            .args(["classify", "--format", "json", "-m"])
            .arg(m)
            .arg("mail/spam/test-spam-1-00026.txt")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    assert_eq!(classify(&plain), classify(&named));
    // inspect: words instead of bucket numbers.
    let inspect = |m: &Path| {
        let out = cwtext()
            .args(["inspect", "--format", "json", "--top", "5"])
            .arg(m)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let (with, without) = (inspect(&named), inspect(&plain));
    assert_eq!(with["labels"], serde_json::json!(["ham", "spam"]));
    assert_eq!(
        with["training"]["documents"],
        without["training"]["documents"]
    );
    assert!(without["vocabulary_buckets"].is_null());
    assert!(with["vocabulary_buckets"].as_u64().unwrap() > 100);
    for report in [&with, &without] {
        let strongest = report["features"][1]["strongest"].as_array().unwrap();
        assert_eq!(strongest.len(), 5);
        let z: Vec<f64> = strongest.iter().map(|f| f["z"].as_f64().unwrap()).collect();
        assert!(z.windows(2).all(|w| w[0] >= w[1]) && z[4] > 0.0, "{z:?}");
    }
    let spam_words = &with["features"][1]["strongest"];
    assert!(
        spam_words[0]["texts"][0]
            .as_str()
            .is_some_and(|t| !t.is_empty()),
        "{spam_words}"
    );
    assert_eq!(
        without["features"][1]["strongest"][0]["texts"],
        serde_json::json!([])
    );
    assert_eq!(
        spam_words[0]["feature"], without["features"][1]["strongest"][0]["feature"],
        "the same features, named"
    );
    let out = cwtext().args(["inspect"]).arg(&named).output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("vocabulary         texts for"), "{text}");
    assert!(text.contains("spam: strongest features"), "{text}");
    // explain with the vocabulary: the margin still adds up.
    let out = cwtext()
        .args(["explain", "--format", "json", "-m"])
        .arg(&named)
        .arg("mail/spam/test-spam-1-00026.txt")
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["vocabulary"], true);
    let margin =
        report["label_score"].as_f64().unwrap() - report["runner_up_score"].as_f64().unwrap();
    assert!((explained_margin(&report) - margin).abs() < 1e-6);
    // Merging keeps a vocabulary only when every part has one (and, since 2026-12-07, the
    // parts' kept documents, a section of version 3).
    for (other, vocabulary) in [(&named, true), (&plain, false)] {
        let merged = dir.path().join("merged.cwm");
        let out = cwtext()
            .arg("merge")
            .arg(&named)
            .arg(other)
            .arg("-o")
            .arg(&merged)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(std::fs::read(&merged).unwrap()[8], 3);
        let out = cwtext()
            .args(["explain", "--format", "json", "-m"])
            .arg(&merged)
            .arg("mail/spam/test-spam-1-00026.txt")
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["vocabulary"], vocabulary);
    }
    // Bad values.
    let out = cwtext()
        .args(["train", "mail", "--keep-vocabulary", "0", "-o"])
        .arg(dir.path().join("x.cwm"))
        .output()
        .unwrap();
    assert_refused(&out, "at least 1 text per bucket, but is 0");
    let out = cwtext()
        .args(["inspect", "spam", "--label", "eggs"])
        .output()
        .unwrap();
    assert_refused(&out, "spam has no label \"eggs\"; its labels are ham, spam");
}

/// Writes a two-label corpus of `n` documents per label and split: 40 words each, a word from
/// the label's own 60 (probability `own`) or else from 400 shared ones, seeded.
fn synthetic_corpus(dir: &Path, n: usize, own: f64) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let word = |i: usize| {
        let letters = b"bcdfghjklmnpqrstvwxz";
        let (a, b, c) = (i % 20, (i / 20) % 20, i / 400);
        format!(
            "{}o{}a{}",
            letters[a] as char, letters[b] as char, letters[c] as char
        )
    };
    for (z, label) in ["alpha", "beta"].iter().enumerate() {
        std::fs::create_dir_all(dir.join(label)).unwrap();
        for split in ["train", "test"] {
            for d in 0..n {
                let text: Vec<String> = (0..40)
                    .map(|_| {
                        if rng.gen_bool(own) {
                            word(z * 60 + rng.gen_range(0..60))
                        } else {
                            word(120 + rng.gen_range(0..400))
                        }
                    })
                    .collect();
                std::fs::write(
                    dir.join(label).join(format!("{split}-{d}.txt")),
                    text.join(" "),
                )
                .unwrap();
            }
        }
    }
}

/// Calibration lowers the ECE on test documents: on a generated two-label corpus (200 training
/// and 200 test documents per label, 93% accuracy), train with and without --no-calibrate and
/// eval both on the test files. Measured: ECE 0.162 → 0.050, Brier 0.155 → 0.100 (the raw
/// probabilities are under-confident; the fitted variance scale is 0.25); asserted: ECE at
/// least halved, Brier lower.
#[test]
fn calibration_lowers_test_ece() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    synthetic_corpus(&corpus, 200, 0.1);
    let eval = |extra: &[&str]| {
        let model = dir.path().join("m.cwm");
        let out = cwtext()
            .arg("train")
            .arg(&corpus)
            .args(["--include", "train-*", "-o"])
            .arg(&model)
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            stderr(&out).contains("probabilities calibrated on"),
            extra.is_empty(),
            "{}",
            stderr(&out)
        );
        let v = eval_json(&model, &corpus, &["--include", "test-*"]);
        (v["ece"].as_f64().unwrap(), v["brier"].as_f64().unwrap())
    };
    let ((raw_ece, raw_brier), (ece, brier)) = (eval(&["--no-calibrate"]), eval(&[]));
    assert!(
        ece < 0.5 * raw_ece && brier < raw_brier,
        "ECE {raw_ece} → {ece}, Brier {raw_brier} → {brier}"
    );
}

/// `--prior` fixes what `train` otherwise chooses: the model records it (inspect), a
/// first-order rule, which has no variances, refuses it by name, and a model trained with the
/// idf prior takes corrections like any other and reloads to the same bytes.
#[test]
fn the_prior_is_chosen_or_fixed_and_recorded() {
    let (dir, idf) = train("news", &["--prior", "idf"]);
    let shown = stdout(&cwtext().arg("inspect").arg(&idf).output().unwrap());
    assert!(shown.contains("\"prior\":\"idf\""), "{shown}");
    let (_flat_dir, flat) = train("news", &["--prior", "flat"]);
    let shown = stdout(&cwtext().arg("inspect").arg(&flat).output().unwrap());
    assert!(
        !shown.contains("\"prior\""),
        "a flat prior is not written: {shown}"
    );
    // Not the same model: the prior changed the weights.
    assert_ne!(std::fs::read(&idf).unwrap(), std::fs::read(&flat).unwrap());
    let out = cwtext()
        .args([
            "train",
            "news",
            "--algo",
            "perceptron",
            "--prior",
            "idf",
            "-o",
        ])
        .arg(dir.path().join("p.cwm"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out)
            .contains("the perceptron rule has no variances, so it takes no prior but flat"),
        "{}",
        stderr(&out)
    );
    // Corrections on an idf model: the document is learned and the model still loads.
    let refiled = link_corpus(&fixture_files("news", &["sci.space"], "test-"));
    learn_folder(&idf, refiled.path(), &[]);
    let report = eval_json(&idf, refiled.path(), &[]);
    assert_eq!(report["accuracy"].as_f64().unwrap(), 1.0, "{report}");
}

/// The same sci.space post saved as a page: a head with a style sheet and a script, a menu of
/// list items, a table, the post in a paragraph.
fn page(title: &str, text: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title>\n\
         <style>body {{ font-family: Helvetica, sans-serif; color: #222; }} .nav li {{ display: inline; }}</style>\n\
         <script>function toggleMenu(x) {{ var menu = document.getElementById(\"menu\"); return false; }}</script>\n\
         </head><body><ul class=\"nav\" id=\"menu\"><li><a href=\"/\">Home</a></li><li><a href=\"/groups\">Groups</a></li></ul>\n\
         <table class=\"meta\"><tr><td>Archive</td><td>1993</td></tr></table><p>{text}</p>\n\
         <!-- generated by the archive's template engine --></body></html>\n"
    )
}

/// HTML pages are read as their text: a model trained on pages holds none of their markup's
/// words (the style sheet's, the script's, the tags' attributes), the words on both sides of a
/// block tag stay apart, the title is read, and `--raw-html` reads the markup as before (the
/// only reading before this change: the first assertion fails on it). The built-in model,
/// trained on plain posts, gives a saved page the probability it gives the post.
#[test]
fn html_pages_are_read_as_their_text() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("pages");
    for label in ["sci.space", "rec.sport.hockey"] {
        std::fs::create_dir_all(corpus.join(label)).unwrap();
        for (path, name) in fixture_files("news", &[label], "train-") {
            let text = std::fs::read_to_string(&name).unwrap();
            let title = format!("{label} archive");
            let html = page(&title, &text);
            let file = corpus.join(path).join(name.file_name().unwrap());
            std::fs::write(file.with_extension("html"), html).unwrap();
        }
    }
    let markup = [
        "font",
        "helvetica",
        "function",
        "getelementbyid",
        "href",
        "nav",
        "meta",
        "charset",
        "generated",
    ];
    let probe = dir.path().join("probe.html");
    std::fs::write(
        &probe,
        page("orbit", "the shuttle launch</p><p>space station"),
    )
    .unwrap();
    // Every word explain can name, from both sides (the model keeps one text per bucket).
    let texts_of = |model: &Path| -> Vec<String> {
        let out = cwtext()
            .args(["explain", "--format", "json", "--top", "10000", "-m"])
            .arg(model)
            .arg(&probe)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        ["for_label", "for_runner_up"]
            .iter()
            .flat_map(|side| v[side].as_array().unwrap().clone())
            .flat_map(|f| f["texts"].as_array().unwrap().clone())
            .map(|t| t.as_str().unwrap().to_string())
            .collect()
    };
    let mut read = Vec::new();
    for raw in [false, true] {
        let model = dir.path().join(format!("pages-{raw}.cwm"));
        let mut cmd = cwtext();
        cmd.arg("train")
            .arg(&corpus)
            .args(["--seed", "1", "--keep-vocabulary", "1", "-q", "-o"])
            .arg(&model);
        if raw {
            cmd.arg("--raw-html");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        read.push(texts_of(&model));
    }
    let (text, raw) = (&read[0], &read[1]);
    for word in markup {
        assert!(
            !text.iter().any(|t| t == word),
            "{word} read from the markup: {text:?}"
        );
    }
    assert!(markup.iter().any(|w| raw.iter().any(|t| t == w)), "{raw:?}");
    // The title ("orbit"), and words apart at block tags: the menu's list items give "home
    // groups" (not "homegroups"), the paragraphs "launch" and "space" (not "launchspace").
    for word in ["orbit", "launch", "space", "home groups"] {
        assert!(text.iter().any(|t| t == word), "{word} missing: {text:?}");
    }
    assert!(
        !text
            .iter()
            .any(|t| t.contains("launchspace") || t.contains("homegroups")),
        "{text:?}"
    );
    // The built-in model (trained on plain posts) on a saved page: from standard input too.
    let fixture = fixtures().join("html/sci.space-page.html");
    let json = |out: std::process::Output| -> serde_json::Value {
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let from_file = json(
        cwtext()
            .args(["classify", "--format", "json", "-m", "topics"])
            .arg(&fixture)
            .output()
            .unwrap(),
    );
    let from_stdin = json(
        cwtext()
            .args(["classify", "--format", "json", "-m", "topics"])
            .pipe_stdin(&fixture)
            .unwrap()
            .output()
            .unwrap(),
    );
    assert_eq!(from_file["label"], "sci.space", "{from_file}");
    // 0.977 read as text (0.477 when the markup was read: font, color, function, return
    // are comp.windows.x's words).
    assert!(
        from_file["probability"].as_f64().unwrap() > 0.9,
        "{from_file}"
    );
    assert_eq!(from_file["probabilities"], from_stdin["probabilities"]);
}

/// `inspect` counts each label's training documents in words a user reads: a folder of one
/// document is "1 training document".
#[test]
fn inspect_counts_one_training_document_in_the_singular() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    common::write_label(
        &corpus,
        "greetings",
        (0..6).map(|i| format!("hello there friend {i}")),
    );
    common::write_label(&corpus, "weather", ["will it rain tomorrow".to_string()]);
    let model = dir.path().join("m.cwm");
    let out = cwtext()
        .args(["train", "-q", "-o"])
        .arg(&model)
        .arg(&corpus)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let shown = stdout(&cwtext().arg("inspect").arg(&model).output().unwrap());
    assert!(
        shown.contains("\n  greetings                            6 training documents\n"),
        "{shown}"
    );
    assert!(
        shown.contains("\n  weather                              1 training document\n"),
        "{shown}"
    );
}
