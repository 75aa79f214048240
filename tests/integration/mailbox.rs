//! Mail stores as corpora and as input (issue 19): Maildir, Maildir++, mbox and MH read by
//! `train`, `eval`, `learn`, `label`, `tune` and `classify`, autodetected or chosen with
//! `--layout`; stores that would train nonsense labels are refused.

use std::path::Path;

use crate::common::{self, cwtext, stderr, stdout};

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

fn labels_of(model: &Path) -> Vec<String> {
    let out = cwtext()
        .args(["inspect", "--format", "json"])
        .arg(model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value =
        serde_json::from_str(stdout(&out).lines().next().unwrap()).unwrap();
    json["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
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
