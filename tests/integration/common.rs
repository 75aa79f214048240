//! What the end-to-end test binaries share: the fixtures, the real binary run from them, its
//! output as text, and the checks every test makes. Each test binary uses a part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use assert_cmd::Command;

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The files of the folder `dir`, sorted by path.
pub fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

/// The binary, run from the fixture folder so that printed paths are short and stable, and
/// without a model from the environment.
pub fn cwtext() -> Command {
    let mut cmd = Command::cargo_bin("cwtext").unwrap();
    cmd.current_dir(fixtures()).env_remove("CWTEXT_MODEL");
    cmd
}

/// `cwtext eval CORPUS --format json -m MODEL [EXTRA…]` (from the fixture folder), which must
/// succeed; its JSON report.
pub fn eval_json(
    model: &Path,
    corpus: impl AsRef<std::ffi::OsStr>,
    extra: &[&str],
) -> serde_json::Value {
    let out = cwtext()
        .arg("eval")
        .arg(corpus)
        .args(["--format", "json", "-m"])
        .arg(model)
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{extra:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The label `classify -m MODEL` prints for `text` on standard input (its first line).
pub fn label_of(model: &Path, text: &str) -> String {
    let out = cwtext()
        .args(["classify", "-m"])
        .arg(model)
        .write_stdin(text)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).lines().next().unwrap_or_default().to_string()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// The run was refused the way bad input and bad settings are (exit code 2), saying `message`
/// on standard error.
pub fn assert_refused(out: &Output, message: &str) {
    assert_eq!(out.status.code(), Some(2), "{}", stderr(out));
    assert!(stderr(out).contains(message), "{}", stderr(out));
}

pub fn assert_no_panic(out: &Output) {
    assert!(!stderr(out).contains("panicked"), "{}", stderr(out));
}

/// Which of cwtext's output streams a run finds closed.
#[derive(Clone, Copy, PartialEq)]
pub enum Closed {
    Stdout,
    Stderr,
}

/// Runs cwtext (from the fixture folder) with `args`, `input` on standard input and the
/// `closed` stream closed before it writes: `cwtext … | head` where head has already gone
/// (stdout), `cwtext train … 2>&1 | head -1` once head has gone or a delivery agent that runs
/// it without a standard error (stderr). The other stream is kept.
pub fn with_closed<S: AsRef<std::ffi::OsStr>>(closed: Closed, args: &[S], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cwtext"))
        .current_dir(fixtures())
        .env_remove("CWTEXT_MODEL")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    match closed {
        Closed::Stdout => drop(child.stdout.take()),
        Closed::Stderr => drop(child.stderr.take()),
    }
    let mut stdin = child.stdin.take().unwrap();
    // A command that reads no input may be gone before it is written: that is no failure.
    let _ = stdin.write_all(input);
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// [`with_closed`] standard output, nothing on standard input.
pub fn with_closed_stdout<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    with_closed(Closed::Stdout, args, b"")
}

/// `cwtext train CORPUS --seed 3 -o MODEL [EXTRA…]` from the fixture folder, which must not
/// panic; its output, to check or refuse.
pub fn train_seed3(corpus: &str, model: &Path, extra: &[&str]) -> Output {
    let out = cwtext()
        .args(["train", corpus, "--seed", "3", "-o"])
        .arg(model)
        .args(extra)
        .output()
        .unwrap();
    assert_no_panic(&out);
    out
}

/// Two models of the fixture sentences (300 a label) in `dir`: `new.cwm` as `train` makes it now
/// (every sentence kept for `learn` to protect) and `old.cwm`, the same model keeping 32 a label
/// as models trained before the capacity rule did, which `learn` calls outgrown ("`cwtext
/// train` would now keep up to 301", once a pos sentence is refiled).
pub fn new_and_outgrown_models(dir: &Path) -> (PathBuf, PathBuf) {
    use cwtext::learn::rehearsal::Rehearsal;
    use cwtext::model::{KeptDocuments, Model};
    let model = dir.join("new.cwm");
    let out = train_seed3("sentences/train", &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut old = Model::load(&model).unwrap();
    let kept = old.rehearsal().unwrap().unwrap().into_owned();
    let documents: Vec<_> = (0..kept.labels())
        .flat_map(|z| kept.documents(z).iter().map(move |d| (z, d.x.clone())))
        .collect();
    let memory = Rehearsal::from_examples(32, &old.learner, documents.iter().map(|(z, x)| (*z, x)));
    old.rehearsal = Some(KeptDocuments::Parsed(memory));
    let old_path = dir.join("old.cwm");
    old.save(&old_path).unwrap();
    (model, old_path)
}

/// Writes one label of a corpus: each of `texts` as ROOT/LABEL/000.txt, 001.txt, …
pub fn write_label(root: &Path, label: &str, texts: impl IntoIterator<Item = String>) {
    let dir = root.join(label);
    std::fs::create_dir_all(&dir).unwrap();
    for (i, text) in texts.into_iter().enumerate() {
        std::fs::write(dir.join(format!("{i:03}.txt")), text).unwrap();
    }
}

/// A corpus of reports on topics, 30 a topic: each report five of its topic's sentences (a
/// different choice each) and three of the `shared` ones, about 70 words, long enough for
/// `train` to choose its stop words.
pub fn write_topic_reports(root: &Path, topics: &[(&str, &[&str])], shared: &[&str]) {
    for (t, (label, sentences)) in topics.iter().enumerate() {
        let texts = (0..30).map(|d| {
            let mut text: Vec<&str> = (0..5)
                .map(|s| sentences[(d * 3 + s * 2 + t) % sentences.len()])
                .collect();
            text.extend((0..3).map(|s| shared[(d + s) % shared.len()]));
            text.join(" ")
        });
        write_label(root, label, texts);
    }
}

/// Two models that must be the same one as `inspect` and `eval` on `corpus` see them: the same
/// settings, pipeline, probability scale and probabilities. Only the record of the choice
/// (`model`, `selection`) may differ.
pub fn assert_same_model(a: &Path, b: &Path, corpus: &Path) {
    let header = |m: &Path| {
        let mut v = inspect_json(m);
        let o = v.as_object_mut().unwrap();
        o.remove("model");
        o.remove("selection");
        v
    };
    assert_eq!(header(a), header(b));
    assert_eq!(eval_json(a, corpus, &[]), eval_json(b, corpus, &[]));
}

/// What `inspect --format json` says of a model.
pub fn inspect_json(model: &Path) -> serde_json::Value {
    let out = cwtext()
        .args(["inspect", "--format", "json"])
        .arg(model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(stdout(&out).lines().next().unwrap()).unwrap()
}

/// The labels of a model, as `inspect --format json` lists them.
pub fn labels_of(model: &Path) -> Vec<String> {
    inspect_json(model)["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}
