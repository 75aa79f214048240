//! Delivery into mail stores and learning from where the user refiles (issue 19): `label
//! --copy-to/--move-to` into a Maildir (through `tmp/` into `new/`, flags kept on a move) and
//! into an mbox per label (mboxrd quoting, locks), the decision log, and `learn --from-store`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{self, assert_refused, cwtext, stderr, stdout};

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Every file below `dir` (recursively), by path relative to it.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut walk = vec![dir.to_path_buf()];
    while let Some(d) = walk.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk.push(p);
            } else {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

/// The contents of the files, sorted: what was delivered, whatever the names.
fn contents(files: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = files.values().cloned().collect();
    v.sort();
    v
}

fn run(args: &[&str], paths: &[&Path]) -> Output {
    let mut cmd = cwtext();
    for a in args {
        if let Some(i) = a.strip_prefix('$') {
            cmd.arg(paths[i.parse::<usize>().unwrap()]);
        } else {
            cmd.arg(a);
        }
    }
    cmd.output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", stderr(out));
    stderr(out)
}

/// A Maildir inbox of the fixture test mails, as a mail program leaves them: read, in `cur/`
/// with the `S` flag.
fn inbox(root: &Path) -> Vec<Vec<u8>> {
    let mut mails = Vec::new();
    for kind in ["ham", "spam"] {
        let dir = common::fixtures().join("mail").join(kind);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with("test-"))
            .collect();
        names.sort();
        for n in names.iter().take(6) {
            mails.push(std::fs::read(dir.join(n)).unwrap());
        }
    }
    for (i, m) in mails.iter().enumerate() {
        write(&root.join(format!("cur/17000{i:02}.M1P1.host:2,S")), m);
    }
    std::fs::create_dir_all(root.join("new")).unwrap();
    std::fs::create_dir_all(root.join("tmp")).unwrap();
    mails
}

/// The first message file of a Maildir folder.
fn first_message(folder: &Path) -> PathBuf {
    let mut found: Vec<PathBuf> = ["cur", "new"]
        .iter()
        .flat_map(|s| std::fs::read_dir(folder.join(s)).unwrap())
        .map(|e| e.unwrap().path())
        .collect();
    found.sort();
    found.into_iter().next().expect("a message")
}

fn label_of(model: &Path, message: &Path) -> String {
    let out = run(
        &["classify", "-m", "$0", "--format", "tsv", "$1"],
        &[model, message],
    );
    ok(&out);
    stdout(&out).split('\t').nth(1).unwrap().to_string()
}

/// The issue's scenario: label a Maildir with --move-to, refile two messages by hand (one into
/// a new folder), then `learn --from-store` twice: the first learns the two, after which the
/// model files them where the user did; the second learns nothing and leaves the model as it was.
#[test]
fn refiling_followed_by_learn_run_twice_learns_each_move_once() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("mail.cwm");
    ok(&run(
        &["train", "mailstores/maildir", "--seed", "1", "-o", "$0"],
        &[&model],
    ));
    let mail = dir.path().join("Maildir");
    let sent = inbox(&mail);
    let err = ok(&run(
        &["label", "$0", "-m", "$1", "--move-to", "$0"],
        &[&mail, &model],
    ));
    assert!(err.contains("labelled 12 files"), "{err}");
    // Every message moved out of the inbox into its folder, in cur/ with its flag, unchanged.
    let after = files(&mail);
    assert!(!after.keys().any(|p| p.starts_with("cur")), "{after:?}");
    let delivered: BTreeMap<PathBuf, Vec<u8>> = after
        .iter()
        .filter(|(p, _)| p.components().count() == 3)
        .map(|(p, b)| (p.clone(), b.clone()))
        .collect();
    assert_eq!(delivered.len(), 12, "{:?}", after.keys());
    for p in delivered.keys() {
        let p = p.to_string_lossy();
        assert!(
            (p.starts_with(".Spam/cur/") || p.starts_with(".Lists.Ham/cur/"))
                && p.ends_with(":2,S"),
            "{p}"
        );
    }
    let mut sent = sent;
    sent.sort();
    assert_eq!(contents(&delivered), sent);
    assert!(mail.join(".Spam/maildirfolder").exists());
    let log = mail.join(".cwtext-decisions.jsonl");
    let lines = std::fs::read_to_string(&log).unwrap();
    assert_eq!(lines.lines().count(), 12, "{lines}");
    assert!(
        lines
            .lines()
            .all(|l| l.starts_with("{\"event\":\"decided\",\"id\":\"<")),
        "{lines}"
    );

    // The user refiles: a Spam message is ham after all (and gets flagged on the way), a
    // Lists/Ham message goes into a new folder Receipts.
    let ham = first_message(&mail.join(".Lists.Ham"));
    let spam = first_message(&mail.join(".Spam"));
    let to_ham = mail
        .join(".Lists.Ham/cur")
        .join(format!("{}F", spam.file_name().unwrap().to_string_lossy()));
    std::fs::rename(&spam, &to_ham).unwrap();
    for sub in ["cur", "new", "tmp"] {
        std::fs::create_dir_all(mail.join(".Receipts").join(sub)).unwrap();
    }
    let receipt = mail.join(".Receipts/new/receipt");
    std::fs::rename(&ham, &receipt).unwrap();

    // Deleted, and thrown into the trash: not learned from.
    std::fs::remove_file(first_message(&mail.join(".Lists.Ham"))).unwrap();
    let trashed = first_message(&mail.join(".Lists.Ham"));
    write(
        &mail.join(".Trash/cur").join(trashed.file_name().unwrap()),
        &std::fs::read(&trashed).unwrap(),
    );
    std::fs::create_dir_all(mail.join(".Trash/new")).unwrap();
    std::fs::remove_file(&trashed).unwrap();

    let err = ok(&run(
        &["learn", "-m", "$0", "--from-store", "$1"],
        &[&model, &mail],
    ));
    // Both filed elsewhere by the model (a router of two labels: corrected on the calibrated
    // variance, so no count of raw-variance corrections).
    assert!(
        err.contains(&format!(
            "learned 2 refiled message(s) into {} (2 mispredicted before the update): ",
            model.display()
        )),
        "{err}"
    );
    assert!(err.contains("Spam → Lists/Ham 1"), "{err}");
    assert!(err.contains("Lists/Ham → Receipts 1"), "{err}");
    assert!(err.contains("new label(s): Receipts"), "{err}");
    assert!(err.contains("8 where they were put"), "{err}");
    assert!(err.contains("2 deleted"), "{err}");
    assert_eq!(label_of(&model, &to_ham), "Lists/Ham");
    assert_eq!(label_of(&model, &receipt), "Receipts");

    let before = std::fs::read(&model).unwrap();
    let err = ok(&run(
        &["learn", "-m", "$0", "--from-store", "$1"],
        &[&model, &mail],
    ));
    assert!(err.contains("nothing new to learn"), "{err}");
    assert!(err.contains("10 where they were put"), "{err}");
    assert_eq!(
        std::fs::read(&model).unwrap(),
        before,
        "the model is left as it was"
    );
}

#[test]
fn delivery_into_a_maildir_goes_through_tmp_into_new_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("Sorted");
    // MH messages (plain files), copied twice: unique names, identical bytes.
    for _ in 0..2 {
        ok(&run(
            &[
                "label",
                "mailstores/mh",
                "-m",
                "spam",
                "--copy-to",
                "$0",
                "--dest-layout",
                "maildir",
            ],
            &[&dest],
        ));
    }
    let delivered = files(&dest);
    let messages: BTreeMap<PathBuf, Vec<u8>> = delivered
        .iter()
        .filter(|(p, _)| p.components().count() == 3)
        .map(|(p, b)| (p.clone(), b.clone()))
        .collect();
    assert_eq!(messages.len(), 54, "{:?}", delivered.keys());
    for p in messages.keys() {
        let parts: Vec<String> = p.iter().map(|c| c.to_string_lossy().into_owned()).collect();
        assert!(parts[0] == ".spam" || parts[0] == ".ham", "{p:?}");
        assert_eq!(parts[1], "new", "{p:?}");
        // TIME.MUSECPPIDQCOUNT.HOST (maildir(5))
        let name: Vec<&str> = parts[2].splitn(3, '.').collect();
        assert!(name[0].bytes().all(|b| b.is_ascii_digit()), "{p:?}");
        assert!(
            name[1].starts_with('M') && name[1].contains('P') && name[1].contains('Q'),
            "{p:?}"
        );
    }
    for folder in [".spam", ".ham", ""] {
        assert_eq!(
            std::fs::read_dir(dest.join(folder).join("tmp"))
                .unwrap()
                .count(),
            0
        );
    }
    let mut source: Vec<Vec<u8>> = files(&common::fixtures().join("mailstores/mh"))
        .into_iter()
        .filter(|(p, _)| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.bytes().all(|b| b.is_ascii_digit())
        })
        .map(|(_, b)| b)
        .collect();
    source.extend(source.clone());
    source.sort();
    assert_eq!(contents(&messages), source, "the same bytes");
    assert!(dest.join(".cwtext-decisions.jsonl").exists());

    // The unsure band is a folder like the others; a detected store needs no --dest-layout.
    // (The news model is unsure of mail.)
    let out = run(
        &[
            "label",
            "mailstores/mh",
            "-m",
            "topics",
            "--copy-to",
            "$0",
            "--min-prob",
            "0.9",
            "--no-record",
        ],
        &[&dest],
    );
    assert!(ok(&out).contains("_unsure 27"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_dir(dest.join("._unsure/new"))
            .unwrap()
            .count(),
        27
    );
    // Another layout than the store's, and MH, are refused.
    let out = run(
        &[
            "label",
            "mailstores/mh",
            "-m",
            "spam",
            "--copy-to",
            "$0",
            "--dest-layout",
            "mbox",
        ],
        &[&dest],
    );
    assert_refused(
        &out,
        "an existing maildir store, but --dest-layout mbox was asked",
    );
    let mh = common::fixtures().join("mailstores/mh");
    let out = run(
        &[
            "label",
            "mailstores/maildir",
            "-m",
            "spam",
            "--copy-to",
            "$0",
        ],
        &[&mh],
    );
    assert_refused(&out, "delivery into MH folders is not written");
}

/// Messages whose bodies have `From ` lines, in LF and CRLF.
fn tricky_maildir(root: &Path) -> Vec<Vec<u8>> {
    let mails: Vec<Vec<u8>> = vec![
        b"From: a@example.com\nSubject: cheap pills viagra\nMessage-ID: <one@example.com>\n\nFrom the desk of the director:\n>From a quote\n>>From deeper\nbuy now\n".to_vec(),
        b"From: b@example.com\r\nSubject: meeting notes\r\n\r\nFrom here on\r\nthe agenda\r\n".to_vec(),
        b"From: c@example.com\nSubject: no newline at the end\n\nFrom x".to_vec(),
    ];
    for (i, m) in mails.iter().enumerate() {
        write(&root.join(format!("new/180000{i}.M1P1.host")), m);
    }
    std::fs::create_dir_all(root.join("cur")).unwrap();
    std::fs::create_dir_all(root.join("tmp")).unwrap();
    mails
}

#[test]
fn delivery_into_mbox_quotes_from_lines_and_reads_back_identically() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("In");
    let mut mails = tricky_maildir(&src);
    let boxes = dir.path().join("Boxes");
    let err = ok(&run(
        &[
            "label",
            "$0",
            "-m",
            "spam",
            "--copy-to",
            "$1",
            "--dest-layout",
            "mbox",
        ],
        &[&src, &boxes],
    ));
    assert!(err.contains("labelled 3 files"), "{err}");
    let written = files(&boxes);
    let all: Vec<u8> = written
        .iter()
        .filter(|(p, _)| !p.to_string_lossy().starts_with('.'))
        .flat_map(|(_, b)| b.clone())
        .collect();
    let text = String::from_utf8_lossy(&all);
    assert!(text.contains("\n>From the desk"), "{text}");
    assert!(
        text.contains("\n>>From a quote\n>>>From deeper\n"),
        "{text}"
    );
    assert!(text.contains("\r\n>From here on\r\n"), "{text}");
    assert!(
        !written
            .keys()
            .any(|p| p.to_string_lossy().ends_with(".lock")),
        "{written:?}"
    );
    // Read back through the mbox reader into a Maildir: the bytes that went in (a line end
    // added where a message had none at its end).
    let back = dir.path().join("Back");
    ok(&run(
        &[
            "label",
            "$0",
            "-m",
            "spam",
            "--copy-to",
            "$1",
            "--dest-layout",
            "maildir",
            "--no-record",
        ],
        &[&boxes, &back],
    ));
    mails[2].push(b'\n');
    mails.sort();
    let returned: BTreeMap<PathBuf, Vec<u8>> = files(&back)
        .into_iter()
        .filter(|(p, _)| p.components().count() == 3)
        .collect();
    assert_eq!(contents(&returned), mails);
    // The same data, delivered again into a new store: the same bytes.
    let again = dir.path().join("Again");
    ok(&run(
        &[
            "label",
            "$0",
            "-m",
            "spam",
            "--copy-to",
            "$1",
            "--dest-layout",
            "mbox",
            "--no-record",
        ],
        &[&src, &again],
    ));
    let strip = |m: BTreeMap<PathBuf, Vec<u8>>| -> BTreeMap<PathBuf, Vec<u8>> {
        m.into_iter()
            .filter(|(p, _)| !p.to_string_lossy().starts_with('.'))
            .collect()
    };
    assert_eq!(strip(files(&again)), strip(written));
}

#[test]
fn mbox_messages_can_be_copied_but_not_moved() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("M");
    let err = ok(&run(
        &[
            "label",
            "mailstores/mbox",
            "-m",
            "spam",
            "--copy-to",
            "$0",
            "--dest-layout",
            "maildir",
        ],
        &[&dest],
    ));
    assert!(err.contains("labelled 27 files"), "{err}");
    let delivered = files(&dest);
    let messages: Vec<&Vec<u8>> = delivered
        .iter()
        .filter(|(p, _)| p.components().count() == 3)
        .map(|(_, b)| b)
        .collect();
    assert_eq!(messages.len(), 27);
    // Taken out of the mbox: no separator line, the quoting undone.
    assert!(messages.iter().all(|m| !m.starts_with(b"From ")));
    assert!(messages.iter().any(|m| m
        .windows(33)
        .any(|w| w == b"\nFrom the desk of the director: a")));
    let copy = dir.path().join("copy");
    let store = common::fixtures().join("mailstores/mbox");
    let mut cmd = std::process::Command::new("cp");
    cmd.arg("-r").arg(&store).arg(&copy);
    assert!(cmd.status().unwrap().success());
    let before = files(&copy);
    let out = run(
        &["label", "$0", "-m", "spam", "--move-to", "$1"],
        &[&copy, &dir.path().join("elsewhere")],
    );
    assert_refused(&out, "--move-to would have to rewrite the mbox");
    assert_eq!(files(&copy), before, "the mbox store is untouched");
}

/// A lock held by another program: each message is refused after the timeout with an error
/// naming the mailbox and the message, and stays where it was.
#[test]
fn a_locked_mbox_is_refused_after_the_timeout_and_the_message_stays() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("In");
    tricky_maildir(&src);
    let boxes = dir.path().join("Boxes");
    let separator = b"From x@example.com Mon Aug 26 15:48:37 2002\nSubject: old\n\nold\n";
    write(&boxes.join("spam"), separator);
    write(&boxes.join("ham"), separator);
    // A dot-lock, as procmail or mutt leave it while they write.
    write(&boxes.join("spam.lock"), b"");
    write(&boxes.join("ham.lock"), b"");
    let before = files(&src);
    let started = std::time::Instant::now();
    let out = run(
        &[
            "label",
            "$0",
            "-m",
            "spam",
            "--move-to",
            "$1",
            "--lock-timeout",
            "0.5",
        ],
        &[&src, &boxes],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("locked by another program"), "{err}");
    assert!(
        err.contains("spam.lock exists") || err.contains("ham.lock exists"),
        "{err}"
    );
    assert!(
        err.contains("was not delivered and is still where it was"),
        "{err}"
    );
    assert!(err.contains("180000"), "the message is named: {err}");
    assert!(
        started.elapsed().as_secs_f64() < 5.0,
        "one wait per mailbox, not per message"
    );
    assert_eq!(files(&src), before, "every message still in the inbox");
    assert_eq!(std::fs::read(boxes.join("spam")).unwrap(), separator);
    assert!(
        boxes.join("spam.lock").exists(),
        "another program's lock is left alone"
    );

    // flock, as Thunderbird or Dovecot hold it: this test process is the other program.
    std::fs::remove_file(boxes.join("spam.lock")).unwrap();
    std::fs::remove_file(boxes.join("ham.lock")).unwrap();
    let spam = std::fs::File::open(boxes.join("spam")).unwrap();
    spam.lock().unwrap();
    let ham = std::fs::File::open(boxes.join("ham")).unwrap();
    ham.lock().unwrap();
    let out = run(
        &[
            "label",
            "$0",
            "-m",
            "spam",
            "--move-to",
            "$1",
            "--lock-timeout",
            "0.3",
        ],
        &[&src, &boxes],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("flock on the mailbox"),
        "{}",
        stderr(&out)
    );
    assert_eq!(files(&src), before);
    drop((spam, ham));
    // Released: delivered, and moved out of the inbox.
    ok(&run(
        &["label", "$0", "-m", "spam", "--move-to", "$1"],
        &[&src, &boxes],
    ));
    assert!(files(&src).is_empty(), "{:?}", files(&src));
}

/// A folder-per-label destination records only when asked (`--record FILE`), and learns from
/// the same log; documents without a Message-ID are known by the hash of their bytes.
#[test]
fn a_folder_per_label_records_when_asked_and_learns_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("news.cwm");
    ok(&run(
        &[
            "train",
            "news",
            "--include",
            "train-*",
            "--seed",
            "1",
            "-o",
            "$0",
        ],
        &[&model],
    ));
    let input = dir.path().join("in");
    for (i, f) in [
        "sci.space/test-05543.txt",
        "rec.sport.hockey/test-03890.txt",
    ]
    .iter()
    .enumerate()
    {
        let text = std::fs::read(common::fixtures().join("news").join(f)).unwrap();
        // Without a header: known by its hash.
        write(&input.join(format!("{i}.txt")), &text);
    }
    let dest = dir.path().join("sorted");
    let log = dir.path().join("log.jsonl");
    ok(&run(
        &["label", "$0", "-m", "$1", "--copy-to", "$2"],
        &[&input, &model, &dest],
    ));
    assert!(!dest.join(".cwtext-decisions.jsonl").exists(), "not asked");
    std::fs::remove_dir_all(&dest).unwrap();
    ok(&run(
        &[
            "label",
            "$0",
            "-m",
            "$1",
            "--copy-to",
            "$2",
            "--record",
            "$3",
        ],
        &[&input, &model, &dest, &log],
    ));
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.matches("\"id\":\"hash:").count(), 2, "{text}");
    // The user files the space post under a folder of their own.
    let space = files(&dest)
        .into_keys()
        .find(|p| p.ends_with("0.txt"))
        .unwrap();
    write(
        &dest.join("astronomy/0.txt"),
        &std::fs::read(dest.join(&space)).unwrap(),
    );
    std::fs::remove_file(dest.join(&space)).unwrap();
    let from = space.parent().unwrap().to_string_lossy().into_owned();
    let err = ok(&run(
        &["learn", "-m", "$0", "--from-store", "$1", "--record", "$2"],
        &[&model, &dest, &log],
    ));
    assert!(err.contains(&format!("{from} → astronomy 1")), "{err}");
    assert_eq!(label_of(&model, &dest.join("astronomy/0.txt")), "astronomy");
    let err = ok(&run(
        &["learn", "-m", "$0", "--from-store", "$1", "--record", "$2"],
        &[&model, &dest, &log],
    ));
    assert!(err.contains("nothing new to learn"), "{err}");
    // Without a log there is nothing to learn from, and the error says where it looked.
    let out = run(
        &["learn", "-m", "$0", "--from-store", "$1"],
        &[&model, &dest],
    );
    assert_refused(&out, "no decision log here");
}
