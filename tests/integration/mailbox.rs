//! Mail stores as corpora and as input (issue 19): Maildir, Maildir++, mbox and MH read by
//! `train`, `eval`, `learn`, `label`, `tune` and `classify`, autodetected or chosen with
//! `--layout`; stores that would train nonsense labels are refused.

use std::path::Path;

use crate::common::{self, cwtext, eval_json, labels_of, stderr, stdout};
use crate::in_process;

/// The fixture mails, without their mbox `From ` line (a Maildir file has none).
fn mails(folder: &str, prefix: &str, n: usize) -> Vec<Vec<u8>> {
    let dir = common::fixtures().join("mail").join(folder);
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    names
        .iter()
        .take(n)
        .map(|n| {
            let bytes = std::fs::read(dir.join(n)).unwrap();
            match bytes.strip_prefix(b"From ") {
                Some(rest) => rest[rest.iter().position(|&b| b == b'\n').unwrap() + 1..].to_vec(),
                None => bytes,
            }
        })
        .collect()
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A Dovecot Maildir as a new user has it: the inbox in `cur/ new/ tmp/`, folders as dot
/// directories, Dovecot's own files beside them.
fn dovecot_maildir(root: &Path) {
    for (i, m) in mails("ham", "test-", 3).iter().enumerate() {
        write(&root.join(format!("cur/100{i}.M1P1.host:2,S")), m);
    }
    for (folder, label, prefix) in [
        (".Spam", "spam", "train-"),
        (".Work.Projects", "ham", "train-"),
    ] {
        for (i, m) in mails(label, prefix, 12).iter().enumerate() {
            write(&root.join(format!("{folder}/cur/200{i}.M2P2.host:2,S")), m);
        }
        std::fs::create_dir_all(root.join(folder).join("new")).unwrap();
        std::fs::create_dir_all(root.join(folder).join("tmp")).unwrap();
        write(&root.join(folder).join("maildirfolder"), b"");
    }
    std::fs::create_dir_all(root.join("new")).unwrap();
    std::fs::create_dir_all(root.join("tmp")).unwrap();
    write(
        &root.join("dovecot-uidlist"),
        b"3 V1 N4\n1 1000.M1P1.host\n",
    );
    write(&root.join("subscriptions"), b"Spam\nWork.Projects\n");
}

/// Issue 19: a Dovecot Maildir trained a one-label model called "cur", silently (the dot
/// folders were skipped as hidden, the inbox's `cur` became a label).
#[test]
fn a_dovecot_maildir_trains_its_folders_not_a_label_called_cur() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("Maildir");
    dovecot_maildir(&root);
    let model = dir.path().join("m.cwm");
    let out = cwtext()
        .arg("train")
        .arg(&root)
        .arg("-o")
        .arg(&model)
        .args(["--seed", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(labels_of(&model), ["Spam", "Work/Projects"]);
}

/// A directory of mbox files unzipped from an archive made on a Mac (`__MACOSX/` with `._`
/// resource forks) and kept on Windows (`desktop.ini`): read as mbox files, what the systems
/// left is not a folder or a message. Before, `__MACOSX` made it a folder layout (a file per
/// document: "no documents found"), and `desktop.ini` was "not an mbox".
#[test]
fn an_mbox_directory_with_what_systems_leave_in_it_is_read_as_mbox_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("mail");
    for (folder, label) in [("Spam", "spam"), ("Lists", "ham")] {
        let mut mbox = Vec::new();
        for m in mails(label, "train-", 12) {
            mbox.extend_from_slice(b"From sender@example.org Mon Nov 23 10:00:00 2026\n");
            mbox.extend_from_slice(&m);
            if !m.ends_with(b"\n") {
                mbox.push(b'\n');
            }
            mbox.push(b'\n');
        }
        write(&root.join(folder), &mbox);
        write(
            &root.join("__MACOSX").join(format!("._{folder}")),
            b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        ",
        );
    }
    write(&root.join("desktop.ini"), b"[.ShellClassInfo]\r\n");
    let model = dir.path().join("m.cwm");
    let (labels, err) = train(root.to_str().unwrap(), &[], &model);
    assert_eq!(labels, ["Lists", "Spam"]);
    assert!(err.contains("on 24 documents"), "{err}");
    assert!(!err.contains("warning"), "{err}");
}

/// Trains on a committed store and returns the model's labels and train's stderr.
fn train(store: &str, extra: &[&str], model: &Path) -> (Vec<String>, String) {
    let out = cwtext()
        .args(["train", store, "--seed", "1", "-o"])
        .arg(model)
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{store}: {}", stderr(&out));
    (labels_of(model), stderr(&out))
}

#[test]
fn each_kind_of_store_trains_its_folders_as_labels() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.cwm");
    for (store, labels) in [
        ("mailstores/maildir", ["Lists/Ham", "Spam"]),
        ("mailstores/mbox", ["Lists/Ham", "Spam"]),
        ("mailstores/mh", ["lists/ham", "spam"]),
    ] {
        let (found, err) = train(store, &[], &model);
        assert_eq!(found, labels, "{store}");
        assert!(err.contains("24 documents"), "{store}: {err}");
        assert!(
            err.contains("the inbox (3 messages) is left out"),
            "{store}: {err}"
        );
        // The inbox as a label of its own.
        let (found, err) = train(store, &["--inbox-label", "Inbox"], &model);
        assert_eq!(found, ["Inbox", labels[0], labels[1]], "{store}");
        assert!(err.contains("27 documents"), "{store}: {err}");
        // Chosen explicitly, the same.
        let layout = store.rsplit('/').next().unwrap();
        let (found, _) = train(store, &["--layout", layout], &model);
        assert_eq!(found, labels, "{store}");
    }
}

#[test]
fn stores_read_as_the_wrong_layout_or_with_one_label_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.cwm");
    let out = cwtext()
        .args(["train", "mailstores/maildir", "--layout", "files", "-o"])
        .arg(&model)
        .output()
        .unwrap();
    common::assert_refused(&out, "mailstores/maildir: label \"cur\" is a Maildir sub-folder (read with --layout files, labels \"cur\", \"new\", \"tmp\")");
    assert!(
        stderr(&out).contains("read it with --layout maildir"),
        "{}",
        stderr(&out)
    );
    let out = cwtext()
        .args(["train", "mailstores/mbox", "--include", "Spam", "-o"])
        .arg(&model)
        .output()
        .unwrap();
    common::assert_refused(
        &out,
        "mailstores/mbox: found 1 label(s), \"Spam\" (12 documents) (read as mbox (detected)), but at least 2 are needed: expected an mbox file per label",
    );
    assert!(stderr(&out).contains("--inbox-label"), "{}", stderr(&out));
    assert!(!model.exists());
    let out = cwtext()
        .args([
            "eval",
            "-m",
            "spam",
            "mailstores/maildir",
            "--layout",
            "files",
        ])
        .output()
        .unwrap();
    common::assert_refused(&out, "label \"cur\" is a Maildir sub-folder");
    let out = cwtext()
        .args(["train", "mailstores/mh", "--layout", "mbox", "-o"])
        .arg(&model)
        .output()
        .unwrap();
    common::assert_refused(
        &out,
        "no messages found reading it as mbox: expected an mbox file per label",
    );
}

#[test]
fn eval_learn_and_tune_read_stores_too() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.cwm");
    train("mailstores/maildir", &[], &model);
    let json = eval_json(&model, "mailstores/mbox", &[]);
    assert_eq!(json["documents"], 24);
    assert!(json["accuracy"].as_f64().unwrap() >= 0.9, "{json}");
    let out = cwtext()
        .args(["learn", "mailstores/mh", "--inbox-label", "Lists/Ham", "-m"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("learned 27 document(s)"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("new label(s): lists/ham, spam"),
        "{}",
        stderr(&out)
    );
    // An mbox given with --label (sa-learn --mbox), as a file or on standard input.
    let out = cwtext()
        .args(["learn", "--label", "Spam", "mailstores/mbox/Spam", "-m"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("learned 12 document(s)"),
        "{}",
        stderr(&out)
    );
    let inbox = std::fs::read(common::fixtures().join("mailstores/mbox/Inbox")).unwrap();
    let out = cwtext()
        .args(["learn", "--label", "Inbox", "-m"])
        .arg(&model)
        .write_stdin(inbox)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("learned 3 document(s)"),
        "{}",
        stderr(&out)
    );
    let out = cwtext()
        .args([
            "tune",
            "mailstores/mbox",
            "--budget",
            "1",
            "--max-epochs",
            "1",
            "-o",
        ])
        .arg(dir.path().join("t.cwm"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("24 files, 2 labels"),
        "{}",
        stderr(&out)
    );
}

/// Issue 19: two concatenated messages, spam and ham, were classified as one document.
#[test]
fn classify_takes_an_mbox_message_by_message() {
    let inbox = std::fs::read(common::fixtures().join("mailstores/mbox/Inbox")).unwrap();
    let offsets: Vec<usize> = std::iter::once(0)
        .chain(
            inbox
                .windows(6)
                .enumerate()
                .filter(|(_, w)| w == b"\nFrom ")
                .map(|(i, _)| i + 1),
        )
        .collect();
    assert_eq!(offsets.len(), 3);
    let out = cwtext()
        .args([
            "classify",
            "-m",
            "spam",
            "--format",
            "tsv",
            "mailstores/mbox/Inbox",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    let names: Vec<&str> = lines
        .iter()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    let want: Vec<String> = offsets
        .iter()
        .map(|o| format!("mailstores/mbox/Inbox@{o}"))
        .collect();
    assert_eq!(names, want);
    let labels: Vec<&str> = lines
        .iter()
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    assert_eq!(
        labels,
        ["ham", "ham", "spam"],
        "two test hams and a test spam"
    );
    // On standard input, named -@OFFSET, each in its own block.
    let out = cwtext()
        .args(["classify", "-m", "spam"])
        .write_stdin(inbox.clone())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("==> -@0 <==\nham\n"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains(&format!("==> -@{} <==\nspam\n", offsets[2])));
    // One message with its From line is one document, named as before.
    let one = &inbox[..offsets[1]];
    let out = cwtext()
        .args(["classify", "-m", "spam", "--format", "tsv"])
        .write_stdin(one.to_vec())
        .output()
        .unwrap();
    assert!(stdout(&out).starts_with("-\tham\t"), "{}", stdout(&out));
}

#[test]
fn label_walks_a_store_message_by_message() {
    let out = cwtext()
        .args(["label", "-m", "spam", "mailstores/maildir"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(
        text.lines().count(),
        27,
        "every folder and the inbox: {text}"
    );
    assert!(
        !text.contains("tmp/") && !text.contains("dovecot") && !text.contains("maildirfolder"),
        "{text}"
    );
    assert!(
        text.contains("mailstores/maildir/.Spam/cur/2000000000.M0P2.fixture:2,RS\tspam\t"),
        "{text}"
    );
    let out = cwtext()
        .args([
            "label",
            "-m",
            "spam",
            "mailstores/maildir",
            "--skip-folder",
            "spam",
        ])
        .output()
        .unwrap();
    assert_eq!(stdout(&out).lines().count(), 15, "{}", stdout(&out));
    assert!(!stdout(&out).contains(".Spam/"), "{}", stdout(&out));
    let out = cwtext()
        .args([
            "label",
            "-m",
            "spam",
            "mailstores/mbox",
            "--format",
            "jsonl",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 27, "{text}");
    assert!(
        text.contains("\"file\":\"mailstores/mbox/Inbox@0\""),
        "{text}"
    );
    // Copied out of an mbox message by message (tests/integration/store.rs); not moved.
    let dir = tempfile::tempdir().unwrap();
    let out = cwtext()
        .args(["label", "-m", "spam", "mailstores/mbox", "--move-to"])
        .arg(dir.path())
        .output()
        .unwrap();
    common::assert_refused(&out, "--move-to would have to rewrite the mbox");
    let out = cwtext()
        .args(["label", "-m", "spam", "mailstores/mh"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out).lines().count(), 27, "{}", stdout(&out));
    assert!(
        !stdout(&out).contains(",13"),
        "a deleted MH message is not read"
    );
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Mailing-list archives in a folder per label (`ROOT/<list>/<month>.txt`, as pipermail
/// serves them, or gzipped as `2024-January.txt.gz`): each archive is an mbox of many
/// messages, and every message is a document. Before, every archive file was one document
/// (the fixture lists trained "on 2 documents"), and a gzipped one also classified as one.
#[test]
fn list_archives_in_label_folders_give_their_messages_compressed_or_not() {
    let tmp = tempfile::tempdir().unwrap();
    let stores = common::fixtures().join("mailstores/mbox");
    let ham = std::fs::read(stores.join("Lists.sbd/Ham")).unwrap();
    let spam = std::fs::read(stores.join("Spam")).unwrap();
    let (plain, packed) = (tmp.path().join("plain"), tmp.path().join("packed"));
    for (root, pack) in [(&plain, false), (&packed, true)] {
        for (list, bytes) in [("ham-list", &ham), ("spam-list", &spam)] {
            // Compressed files are told by their first bytes, not their names: the same
            // names in both copies give the same held-out fifth, so the same model.
            let bytes = if pack { gzip(bytes) } else { bytes.clone() };
            write(&root.join(list).join("2024-January.txt"), &bytes);
        }
    }
    let train = |root: &Path, model: &str| {
        let out = cwtext()
            .args(["train", "--seed", "3", "-o"])
            .arg(tmp.path().join(model))
            .arg(root)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("on 24 documents, 2 labels"),
            "12 messages a list: {}",
            stderr(&out)
        );
        std::fs::read(tmp.path().join(model)).unwrap()
    };
    assert!(
        train(&plain, "plain.cwm") == train(&packed, "packed.cwm"),
        "a gzipped archive trains what the archive trains"
    );
    // classify and learn --label read a compressed archive message by message too, named by
    // the offsets of their `From ` lines in what it holds.
    let archive = packed.join("spam-list/2024-January.txt");
    let out = cwtext()
        .args(["classify", "--format", "tsv", "-m"])
        .arg(tmp.path().join("plain.cwm"))
        .arg(&archive)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let names: Vec<String> = stdout(&out)
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 12, "{}", stdout(&out));
    assert_eq!(names[0], format!("{}@0", archive.display()));
    assert!(names.iter().all(|n| n.contains(".txt@")), "{names:?}");
    let out = cwtext()
        .args(["classify", "--format", "tsv", "-m"])
        .arg(tmp.path().join("plain.cwm"))
        .write_stdin(gzip(&ham))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 12, "{}", stdout(&out));
    assert!(stdout(&out).starts_with("-@0\t"), "{}", stdout(&out));
    let out = cwtext()
        .args(["learn", "--label", "spam-list", "-m"])
        .arg(tmp.path().join("plain.cwm"))
        .arg(&archive)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("learned 12 document(s)"),
        "{}",
        stderr(&out)
    );
}

/// Mail routed into folders by a header field alone: the same messages went out through two
/// mailing lists (cross-posted), so the two folders hold the same bodies, Subjects, senders and
/// relays, and only the List-Id tells them apart. A model of the body, Subject, From and To
/// gives both copies of a message the same label: exactly half right.
#[test]
fn folders_told_apart_by_a_header_field_alone_are_learned() {
    let dir = tempfile::tempdir().unwrap();
    let (train_dir, test_dir) = (dir.path().join("train"), dir.path().join("test"));
    let mut all = mails("ham", "", 40);
    all.extend(mails("spam", "", 40));
    for (i, mail) in all.iter().enumerate() {
        let root = if i % 4 < 3 { &train_dir } else { &test_dir };
        for (list, id) in [
            ("alpha", "Alpha users <alpha.lists.example.org>"),
            ("beta", "Beta users <beta.lists.example.org>"),
        ] {
            let mut bytes = format!("List-Id: {id}\n").into_bytes();
            bytes.extend_from_slice(mail);
            write(&root.join(list).join(format!("{i}.eml")), &bytes);
        }
    }
    let model = dir.path().join("m.cwm");
    let accuracy = |extra: &[&str]| {
        train(train_dir.to_str().unwrap(), extra, &model);
        let report = eval_json(&model, &test_dir, &[]);
        assert_eq!(report["documents"], 40);
        report["accuracy"].as_f64().unwrap()
    };
    // With the flat prior every test mail is right. With the idf prior (train's base, kept on
    // these 24 held-out mails, too few to choose the prior on) the List-Id, in half of all
    // mail, starts surer than the bodies' rarer words, which both folders share and which
    // therefore cannot settle: 2 to 4 of the 40 stay wrong after the 5 epochs, against 20
    // without the fields. (Which of the two, is the stop words': cross-validated on copies that
    // differ in their List-Id alone, every candidate is right on 8 to 11% of the folds'
    // mail, and the list and none are a coin toss.)
    assert_eq!(accuracy(&["--prior", "flat"]), 1.0);
    assert!(accuracy(&[]) >= 0.9);
    assert_eq!(accuracy(&["--no-header-fields"]), 0.5);
}

/// A user's `2023` and `2024` archives of 40 ham and 40 spam fixture mails each, the same
/// messages in both, told apart only by the year their three relays stamped on them: one copy
/// of each to train (160 messages, a held-out fifth of 32) and one to test.
fn small_period_archives(train_dir: &Path, test_dir: &Path) {
    let mut all = mails("ham", "", 40);
    all.extend(mails("spam", "", 40));
    for (i, mail) in all.iter().enumerate() {
        for year in [2023, 2024] {
            for (root, copy) in [(train_dir, 0), (test_dir, 1)] {
                let day = 1 + (i + 7 * copy) % 28;
                let mut bytes: Vec<u8> = (0..3)
                    .flat_map(|hop| {
                        format!(
                            "Received: from hop{hop}.example.org by hop{}.example.org with ESMTP id Q{:05}{hop}; {day} Mar {year} 10:0{hop}:00 +0000\n",
                            hop + 1,
                            2 * i + copy
                        )
                        .into_bytes()
                    })
                    .collect();
                bytes.extend_from_slice(mail);
                write(
                    &root.join(year.to_string()).join(format!("{i}-{copy}.eml")),
                    &bytes,
                );
            }
        }
    }
}

/// `tune` with a budget of train's eight choices on mail too small to hold out 50 documents:
/// its copy of train's pick cross-validates them as `train` does (the stop words and the
/// header fields' rules at the base prior, for the run's epochs, train's rule), so that pick,
/// trained, is train's model. (Whether a challenger then beats it is tune's own business.)
#[test]
fn tune_keeps_trains_pick_on_small_mail() {
    use cwtext::progress::NoProgress;
    let dir = tempfile::tempdir().unwrap();
    let (train_dir, test_dir) = (dir.path().join("train"), dir.path().join("test"));
    small_period_archives(&train_dir, &test_dir);
    let corpus = cwtext::jobs::corpus::scan_labelled(
        &train_dir,
        &cwtext::jobs::corpus::FileFilter::default(),
    )
    .unwrap();
    let plain = in_process::train_in_process(&corpus);
    let selection = plain.model.header.selection.clone().unwrap();
    assert_eq!((selection.folds, selection.epochs), (5, 5));
    assert_eq!(selection.trials.len(), 4, "{}", selection.describe());
    let tune = in_process::tune_plan(8);
    let search = tune.search(&corpus, 2, &NoProgress, &mut |_| {}).unwrap();
    let pick = search
        .cross_validated
        .first()
        .map_or(search.best, |c| c.trial);
    assert!(pick < 8);
    let kept = cwtext::jobs::tune::Search {
        best: pick,
        epochs: 5,
        cross_validated: Vec::new(),
        ..search
    };
    let tuned = tune.train_winner(&corpus, &kept, &NoProgress).unwrap();
    assert_eq!(tuned.model.header.pipeline, plain.model.header.pipeline);
    assert_eq!(tuned.model.learner, plain.model.learner);
}

/// The same archives as in [`folders_that_are_periods_take_every_header_field_whole`], but a
/// user's first few dozen messages of each: a held-out fifth of 32 is too few to choose on, so
/// `train` cross-validates, and on mail the header fields' rules too (the stable one and every
/// field whole, at the base prior), each trained for the run's epochs (after one epoch the
/// whole fields' lead has not yet appeared). Before, the stable rule was kept and half of the
/// test mail was wrong.
#[test]
fn few_messages_in_folders_that_are_periods_still_take_every_header_field_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (train_dir, test_dir) = (dir.path().join("train"), dir.path().join("test"));
    small_period_archives(&train_dir, &test_dir);
    let model = dir.path().join("m.cwm");
    let (_, err) = train(train_dir.to_str().unwrap(), &[], &model);
    let chose = err.lines().find(|l| l.starts_with("chose ")).unwrap();
    let (what, how) = chose.split_once(": accuracy over ").unwrap();
    assert!(what.contains("every header field whole"), "{chose}");
    assert!(
        how.starts_with(
            "5 cross-validation folds (too few documents to hold out a fifth) after 5 epochs "
        ),
        "{chose}"
    );
    // The four candidates at the base prior are in the line: the field rule was chosen too.
    assert_eq!(chose.matches("stop words ").count(), 4, "{chose}");
    assert_eq!(chose.matches("prior idf").count(), 4, "{chose}");
    // One training copy a year: 139 of the 160 test messages are right on this fixture (the
    // stable rule: 80, every copy in one folder).
    let report = eval_json(&model, &test_dir, &[]);
    assert_eq!(report["documents"], 160);
    assert!(
        report["accuracy"].as_f64().unwrap() >= 0.8,
        "{report}: {err}"
    );
    let shown = stdout(&cwtext().arg("inspect").arg(&model).output().unwrap());
    assert!(
        shown.contains("\"field_rule\":\"every_field_whole\""),
        "{shown}"
    );
    // The cross-validation's twenty trainings run in parallel: the same data and seed still
    // give the same bytes.
    let again = dir.path().join("again.cwm");
    train(train_dir.to_str().unwrap(), &[], &again);
    assert_eq!(
        std::fs::read(&model).unwrap(),
        std::fs::read(&again).unwrap()
    );
}

/// Folders that are periods (a user's `2023` and `2024` archives): the same messages in both,
/// relayed in different years, so that only the moment in their Received fields tells them
/// apart, which the stable rule leaves out. Plain `train` tries every header field whole beside
/// the stable rule on mail, says so, and takes it because it is clearly more accurate held out;
/// `inspect` shows the choice; asking for the stable rule keeps it (and cannot tell the
/// folders apart); asking for no header fields and a rule at once is refused.
#[test]
fn folders_that_are_periods_take_every_header_field_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (train_dir, test_dir) = (dir.path().join("train"), dir.path().join("test"));
    let mut all = mails("ham", "", 40);
    all.extend(mails("spam", "", 40));
    let relayed = |year: u32, day: usize, id: usize| {
        format!(
            "Received: from relay.example.org by mx.example.org with ESMTP id Q{id:05}; {day} Mar {year} 10:00:00 +0000\n"
        )
    };
    for (i, mail) in all.iter().enumerate() {
        for year in [2023, 2024] {
            // Four copies for training (640 messages: a held-out fifth of about 128, enough
            // for the whole fields to lead by the three standard errors they must), one to
            // test, each relayed on a day of its own.
            for (root, copy) in [
                (&train_dir, 0),
                (&train_dir, 1),
                (&train_dir, 2),
                (&train_dir, 3),
                (&test_dir, 4),
            ] {
                let mut bytes = relayed(year, 1 + (i + 7 * copy) % 28, 5 * i + copy).into_bytes();
                bytes.extend_from_slice(mail);
                write(
                    &root.join(year.to_string()).join(format!("{i}-{copy}.eml")),
                    &bytes,
                );
            }
        }
    }
    let model = dir.path().join("m.cwm");
    let accuracy = |extra: &[&str]| {
        let (_, err) = train(train_dir.to_str().unwrap(), extra, &model);
        let report = eval_json(&model, &test_dir, &[]);
        assert_eq!(report["documents"], 160);
        (report["accuracy"].as_f64().unwrap(), err)
    };

    let (whole, err) = accuracy(&[]);
    assert!(
        err.contains("header fields by the stable rule (the fields and parts that recur in later mail), and each setting also with every field whole (dates, queue ids and relays' addresses too), taken only when more accurate by three standard errors on a held-out fifth of at least 50 documents (over 5 cross-validation folds after the run's epochs when fewer are held out)"),
        "{err}"
    );
    let chose = err.lines().find(|l| l.starts_with("chose ")).unwrap();
    assert!(
        chose.starts_with("chose stop words ") && chose.contains(", every header field whole: "),
        "{chose}"
    );
    // One of the 160 test messages may go astray (its copy's day); the stable rule gets 0.5.
    assert!(whole >= 0.99, "{whole}: {err}");
    let shown = stdout(&cwtext().arg("inspect").arg(&model).output().unwrap());
    assert!(shown.contains(", every header field whole"), "{shown}");
    assert!(
        shown.contains("\"field_rule\":\"every_field_whole\""),
        "{shown}"
    );

    let (stable, err) = accuracy(&["--field-rule", "stable"]);
    assert!(!err.contains("every header field whole"), "{err}");
    assert_eq!(stable, 0.5, "{err}");
    assert!(accuracy(&["--field-rule", "whole"]).0 >= 0.99);

    // The same messages in folders by list, each relayed in both years alike: the moment
    // tells nothing, the stable rule reads the List-Id, and it is kept.
    let lists = dir.path().join("lists");
    for (i, mail) in all.iter().enumerate() {
        for (list, id) in [
            ("alpha", "alpha.lists.example.org"),
            ("beta", "beta.lists.example.org"),
        ] {
            for year in [2023, 2024] {
                let mut bytes = relayed(year, 1 + i % 28, i).into_bytes();
                bytes.extend_from_slice(format!("List-Id: <{id}>\n").as_bytes());
                bytes.extend_from_slice(mail);
                write(&lists.join(list).join(format!("{i}-{year}.eml")), &bytes);
            }
        }
    }
    let (_, err) = train(lists.to_str().unwrap(), &[], &model);
    let chose = err.lines().find(|l| l.starts_with("chose ")).unwrap();
    assert!(
        !chose
            .split(':')
            .next()
            .unwrap()
            .contains("every header field whole"),
        "{chose}"
    );

    let out = cwtext()
        .args(["train", train_dir.to_str().unwrap(), "-o"])
        .arg(&model)
        .args(["--field-rule", "whole", "--no-header-fields"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("'--field-rule <RULE>' cannot be used with '--no-header-fields'"),
        "{}",
        stderr(&out)
    );
}

/// Google Takeout's Gmail export as it writes it: one mbox, CRLF line ends, each message's
/// labels in `X-Gmail-Labels` (after Gmail's thread id), body lines starting `From ` quoted.
fn gmail_export(messages: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, (labels, mail)) in messages.iter().enumerate() {
        out.extend_from_slice(
            format!(
                "From 17{i:017}@xxx Mon Jan 01 00:00:00 +0000 2024\r\nX-GM-THRID: 17{i:017}\r\nX-Gmail-Labels: {labels}\r\n"
            )
            .as_bytes(),
        );
        for line in mail.split_inclusive(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.starts_with(b"From ") {
                out.push(b'>');
            }
            out.extend_from_slice(line);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// A Gmail user's export trained one label named after the file ("found 1 label(s), \"All
/// mail Including Spam and Trash\""): it trains the user's labels, passes over Gmail's own
/// (states, tabs, IMAP flags), says what it left out and why, and the inbox is the inbox.
#[test]
fn a_gmail_export_trains_the_users_labels() {
    let dir = tempfile::tempdir().unwrap();
    let (ham, spam) = (mails("ham", "train-", 14), mails("spam", "train-", 12));
    let mut messages: Vec<(&str, &[u8])> = Vec::new();
    for m in &ham[..12] {
        messages.push(("Archived,Lists/Ham,Opened,IMAP_$Forwarded", m));
    }
    for m in &spam {
        messages.push(("Spam,Category promotions,Unread", m));
    }
    for m in &ham[..3] {
        messages.push(("Inbox,Opened,Category Updates,Important", m));
    }
    messages.push(("Sent", &ham[12]));
    messages.push(("Trash,Lists/Ham", &ham[13]));
    messages.push(("Archived,Opened", &ham[13]));
    messages.push(("Lists/Ham,\"Clients, 2024\"", &ham[12]));
    let export = dir
        .path()
        .join("Takeout/Mail/All mail Including Spam and Trash.mbox");
    write(&export, &gmail_export(&messages));
    // Takeout puts the account's settings beside the export, a JSON file each.
    write(
        &dir.path()
            .join("Takeout/Mail/User Settings/Forwarding.json"),
        b"{\"forwarding\": []}\n",
    );
    let model = dir.path().join("m.cwm");
    let root = dir.path().join("Takeout/Mail");
    for store in [&root, &export] {
        let (found, err) = train(store.to_str().unwrap(), &[], &model);
        assert_eq!(found, ["Lists/Ham", "Spam"], "{err}");
        assert!(err.contains("24 documents"), "{err}");
        assert!(
            err.contains("a Gmail export (X-Gmail-Labels): 27 messages in 2 label(s) and the inbox; left out: 1 in the trash, 1 sent, drafts or chats (mail you wrote), 1 archived under no label of yours, 1 under two or more of your labels"),
            "{err}"
        );
        assert!(err.contains("the inbox (3 messages) is left out"), "{err}");
    }
    let (found, err) = train(root.to_str().unwrap(), &["--inbox-label", "Inbox"], &model);
    assert_eq!(found, ["Inbox", "Lists/Ham", "Spam"], "{err}");
    assert!(!err.contains("User Settings"), "{err}");
    // The folder the download unpacks to is one level too high, and says where to go.
    let out = cwtext()
        .args(["train"])
        .arg(dir.path().join("Takeout"))
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    common::assert_refused(&out, "\"Mail\" is a mail store (mbox): train on ");
    assert!(stderr(&out).contains("Takeout/Mail"), "{}", stderr(&out));
    // A user who never made a label: spam, and the inbox in Gmail's tabs. The refusal says
    // what was read and what was wanted, not "an mbox file per label".
    let tabs: Vec<(&str, &[u8])> = (ham
        .iter()
        .take(6)
        .map(|m| ("Inbox,Category Social,Opened", &m[..])))
    .chain(spam.iter().take(6).map(|m| ("Spam", &m[..])))
    .collect();
    let export = dir
        .path()
        .join("tabs/All mail Including Spam and Trash.mbox");
    write(&export, &gmail_export(&tabs));
    let out = cwtext()
        .args(["train"])
        .arg(export.parent().unwrap())
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    common::assert_refused(&out, "found 1 label(s), \"Spam\" (6 documents) (read as mbox (detected)), but at least 2 are needed: expected messages under labels of your own (Gmail's own, its states and tabs, are no labels): ");
    assert!(
        stderr(&out).contains("a Gmail export (X-Gmail-Labels): 12 messages in 1 label(s) and the inbox; the inbox is left out unless --inbox-label NAME names it"),
        "{}",
        stderr(&out)
    );
    let (found, _) = train(
        export.parent().unwrap().to_str().unwrap(),
        &["--inbox-label", "Inbox"],
        &model,
    );
    assert_eq!(found, ["Inbox", "Spam"]);
}

/// The labels are in each message's header, and header fields are features: learned, they
/// decide every training message and are absent from new mail. Each of 20 mails under two
/// labels, the copies differing in that field alone: nothing else tells them apart, so a model
/// gets exactly one copy of each right (it got all 40 while the field was a feature).
#[test]
fn a_gmail_exports_labels_are_not_learned_as_words() {
    let dir = tempfile::tempdir().unwrap();
    let ham = mails("ham", "train-", 20);
    let mut messages: Vec<(&str, &[u8])> = Vec::new();
    for m in &ham {
        messages.push(("Archived,Alpha", m));
        messages.push(("Archived,Beta", m));
    }
    let mut bytes = gmail_export(&messages);
    // One thread id for both copies: it is no label either.
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let mut fixed = String::new();
    for (i, part) in text.split("X-GM-THRID: ").enumerate() {
        if i == 0 {
            fixed.push_str(part);
        } else {
            let (_, rest) = part.split_once("\r\n").unwrap();
            fixed.push_str(&format!("X-GM-THRID: {}\r\n{rest}", (i - 1) / 2));
        }
    }
    bytes = fixed.into_bytes();
    let root = dir.path().join("Mail");
    write(&root.join("All mail Including Spam and Trash.mbox"), &bytes);
    let fields = [
        "X-Gmail-Labels: Archived,Alpha\r\n",
        "X-Gmail-Labels: Archived,Beta\r\n",
    ];
    assert_fields_are_not_learned(&root, ["Alpha", "Beta"], &ham[0], fields);
}

/// Trains on `root` (each message in both labels, the copies told apart by their mail store's
/// fields alone), by both field rules: half the copies are right, and `mail` with either of
/// `fields` put first is classified the same.
fn assert_fields_are_not_learned(root: &Path, labels: [&str; 2], mail: &[u8], fields: [&str; 2]) {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.cwm");
    for rule in [&[][..], &["--field-rule", "whole"][..]] {
        let (found, err) = train(root.to_str().unwrap(), rule, &model);
        assert_eq!(found, labels, "{err}");
        let report = eval_json(&model, root, &[]);
        assert_eq!(report["accuracy"].as_f64().unwrap(), 0.5, "{rule:?}");
        let said = |i: usize| {
            let path = dir.path().join(format!("{i}.eml"));
            let mut bytes = fields[i].as_bytes().to_vec();
            bytes.extend_from_slice(mail);
            write(&path, &bytes);
            let out = cwtext()
                .args(["classify", "--format", "json", "-m"])
                .arg(&model)
                .arg(&path)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
            stdout(&out).replace(&format!("{i}.eml"), "")
        };
        assert_eq!(said(0), said(1), "{rule:?}");
    }
}

/// Thunderbird writes its flags and keywords into each message of its mbox files: the junk
/// marks (`X-Mozilla-Keys: junk`) are the user's filing, the read flags
/// (`X-Mozilla-Status`) the user's reading, and neither is in new mail.
#[test]
fn thunderbirds_flags_and_junk_marks_are_not_learned_as_words() {
    let dir = tempfile::tempdir().unwrap();
    let ham = mails("ham", "train-", 20);
    let root = dir.path().join("Local Folders");
    for (folder, status, keys) in [("Archives", "0001", "nonjunk"), ("Junk", "0000", "junk")] {
        let mut mbox = Vec::new();
        for m in &ham {
            mbox.extend_from_slice(
                format!("From - Mon Jan  1 00:00:00 2024\nX-Mozilla-Status: {status}\nX-Mozilla-Status2: 00000000\nX-Mozilla-Keys: {keys:<20}\n").as_bytes(),
            );
            mbox.extend_from_slice(m);
            mbox.extend_from_slice(b"\n");
        }
        write(&root.join(folder), &mbox);
        write(&root.join(format!("{folder}.msf")), b"// summary");
    }
    let fields = [
        "X-Mozilla-Status: 0001\nX-Mozilla-Keys: nonjunk\n",
        "X-Mozilla-Status: 0000\nX-Mozilla-Keys: junk\n",
    ];
    assert_fields_are_not_learned(&root, ["Archives", "Junk"], &ham[0], fields);
}

/// mutt and Dovecot keep the same flags in mbox files: `Status: RO` once read, `X-Keywords`
/// with the junk marks IMAP clients set.
#[test]
fn mbox_stores_flags_and_keywords_are_not_learned_as_words() {
    let dir = tempfile::tempdir().unwrap();
    let ham = mails("ham", "train-", 20);
    let root = dir.path().join("Mail");
    let fields = [
        "Status: RO\nX-Status: A\nX-Keywords: NonJunk\n",
        "Status: O\nX-Keywords: $Junk\n",
    ];
    for (folder, field) in ["Archive", "Junk"].iter().zip(fields) {
        let mut mbox = Vec::new();
        for m in &ham {
            mbox.extend_from_slice(b"From a@b.example Mon Jan  1 00:00:00 2024\n");
            mbox.extend_from_slice(field.as_bytes());
            mbox.extend_from_slice(m);
            mbox.extend_from_slice(b"\n");
        }
        write(&root.join(folder), &mbox);
    }
    assert_fields_are_not_learned(&root, ["Archive", "Junk"], &ham[0], fields);
}
