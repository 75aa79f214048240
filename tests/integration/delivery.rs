//! The README's delivery recipes run with the real programs: a message goes through procmail or
//! maildrop, `cwtext filter` adds its fields, and the message lands in the Maildir++ folder of
//! its label with every other byte as it came. Ignored by default (they need the Debian packages
//! procmail and maildrop); `.ci/run` installs both and runs them with
//! `cargo test --locked --test integration delivery:: -- --ignored`; the Sieve recipe needs
//! dovecot-sieve's `sieve-test`, which `.ci/run` installs too.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{cwtext, files_in, fixtures, stderr};

fn require(program: &str) {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "{program} is not installed: `apt-get install procmail maildrop` (CI does), or leave out --ignored"
    );
}

/// A model on the fixture mails (ham, spam) and a Maildir++ store with a .Spam folder.
fn setup(dir: &Path) -> (PathBuf, PathBuf) {
    let model = dir.join("mail.cwm");
    let out = cwtext()
        .args(["train", "mail", "--epochs", "3", "-q", "-o"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let store = dir.join("Maildir");
    for folder in [store.clone(), store.join(".Spam")] {
        for sub in ["cur", "new", "tmp"] {
            std::fs::create_dir_all(folder.join(sub)).unwrap();
        }
    }
    (model, store)
}

/// Every fixture mail, with the label `classify` gives it.
fn mails_and_labels(model: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for label in ["ham", "spam"] {
        for file in files_in(&fixtures().join("mail").join(label))
            .into_iter()
            .take(3)
        {
            let c = cwtext()
                .arg("classify")
                .arg("-m")
                .arg(model)
                .arg(&file)
                .output()
                .unwrap();
            let predicted = String::from_utf8(c.stdout).unwrap();
            out.push((file, predicted.lines().next().unwrap().to_string()));
        }
    }
    assert!(out.iter().any(|(_, l)| l == "spam") && out.iter().any(|(_, l)| l == "ham"));
    out
}

fn deliver(program: &str, args: &[&Path], message: &Path) {
    let status = Command::new(program)
        .args(args)
        .stdin(std::fs::File::open(message).unwrap())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(
        status.success(),
        "{program} {args:?} < {}",
        message.display()
    );
}

/// The single message in `folder/new`, removed after reading.
fn take_one(folder: &Path) -> Vec<u8> {
    let files: Vec<PathBuf> = std::fs::read_dir(folder.join("new"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "one message in {}", folder.display());
    let bytes = std::fs::read(&files[0]).unwrap();
    std::fs::remove_file(&files[0]).unwrap();
    bytes
}

/// `message` without a leading mbox `From ` line (procmail drops it for Maildir, maildrop keeps
/// it).
fn without_from_line(message: &[u8]) -> &[u8] {
    if message.starts_with(b"From ") {
        &message[message.iter().position(|&b| b == b'\n').unwrap() + 1..]
    } else {
        message
    }
}

/// The delivered message is the original with cwtext's fields added (the mbox `From ` line
/// aside).
fn assert_delivered(delivered: &[u8], original: &[u8], label: &str) {
    let text = String::from_utf8_lossy(delivered);
    assert!(
        text.contains(&format!("\nX-Cwtext-Label: {label}\n")),
        "{text}"
    );
    let kept: Vec<&[u8]> = without_from_line(delivered)
        .split_inclusive(|&b| b == b'\n')
        .filter(|l| !l.starts_with(b"X-Cwtext-"))
        .collect();
    assert!(
        kept.concat() == without_from_line(original),
        "the delivered message differs from the original beyond the added fields"
    );
}

fn binary() -> PathBuf {
    assert_cmd::cargo::cargo_bin("cwtext")
}

/// The README's procmail recipe with `model`, delivering into `store`, written into `dir`.
fn procmailrc(dir: &Path, store: &Path, model: &Path) -> PathBuf {
    let rc = dir.join("procmailrc");
    std::fs::write(
        &rc,
        format!(
            "MAILDIR={store}/\nDEFAULT={store}/\nSHELL=/bin/sh\n\n\
             :0fw\n| {cwtext} filter -m {model} --always-zero\n\n\
             :0\n* ^X-Cwtext-Label: spam\n.Spam/\n",
            store = store.display(),
            cwtext = binary().display(),
            model = model.display()
        ),
    )
    .unwrap();
    rc
}

/// Delivers every fixture mail with `program ARGS < mail` and checks that it landed in its
/// label's folder (`.Spam` for spam, the inbox otherwise) with only cwtext's fields added.
fn files_every_mail_by_label(model: &Path, store: &Path, program: &str, args: &[&Path]) {
    for (mail, label) in mails_and_labels(model) {
        deliver(program, args, &mail);
        let folder = if label == "spam" {
            store.join(".Spam")
        } else {
            store.to_path_buf()
        };
        assert_delivered(&take_one(&folder), &std::fs::read(&mail).unwrap(), &label);
    }
}

#[test]
#[ignore = "needs procmail (CI installs it)"]
fn procmail_recipe_files_each_message_into_its_labels_maildir_folder() {
    require("procmail");
    let dir = tempfile::tempdir().unwrap();
    let (model, store) = setup(dir.path());
    let rc = procmailrc(dir.path(), &store, &model);
    files_every_mail_by_label(&model, &store, "procmail", &[Path::new("-m"), &rc]);
}

#[test]
#[ignore = "needs maildrop (CI installs it)"]
fn maildrop_recipe_files_each_message_into_its_labels_maildir_folder() {
    require("maildrop");
    let dir = tempfile::tempdir().unwrap();
    let (model, store) = setup(dir.path());
    let filter = dir.path().join("mailfilter");
    // The README's recipe.
    std::fs::write(
        &filter,
        format!(
            "xfilter \"{cwtext} filter -m {model} --always-zero\"\n\
             if (/^X-Cwtext-Label: spam/)\n{{\n  to \"{store}/.Spam/\"\n}}\n\
             to \"{store}/\"\n",
            store = store.display(),
            cwtext = binary().display(),
            model = model.display()
        ),
    )
    .unwrap();
    // maildrop refuses a filter file others can write to.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&filter, std::fs::Permissions::from_mode(0o600)).unwrap();
    files_every_mail_by_label(&model, &store, "maildrop", &[&filter]);
}

#[test]
#[ignore = "needs procmail (CI installs it)"]
fn with_a_missing_model_procmail_still_delivers_the_message_to_the_inbox() {
    require("procmail");
    let dir = tempfile::tempdir().unwrap();
    let (_, store) = setup(dir.path());
    let rc = procmailrc(dir.path(), &store, &dir.path().join("gone.cwm"));
    let mail = std::fs::read_dir(fixtures().join("mail/spam"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    deliver("procmail", &[Path::new("-m"), &rc], &mail);
    let delivered = take_one(&store);
    assert!(String::from_utf8_lossy(&delivered).contains("\nX-Cwtext-Error: "));
}

/// The README's Sieve recipe, run by Pigeonhole's `sieve-test` (Debian's dovecot-sieve): the
/// `filter` extension pipes the message through `cwtext filter`, and the script files it by the
/// added header. `sieve-test` without `-e` only prints the actions, so no Maildir is written.
/// Dovecot refuses mail access as root, so as root it runs as `nobody` (through `setpriv`).
#[test]
#[ignore = "needs sieve-test (apt-get install dovecot-sieve); CI installs it"]
fn sieve_recipe_files_by_the_added_header() {
    require("sieve-test");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let as_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    if as_root {
        require("setpriv");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let bin = root.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let wrapper = bin.join("cwtext");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec '{}' filter -m spam --always-zero\n",
            assert_cmd::cargo::cargo_bin("cwtext").display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let config = root.join("dovecot.conf");
    std::fs::write(
        &config,
        format!(
            "mail_location = maildir:{}/Maildir\nplugin {{\n  sieve_plugins = sieve_extprograms\n  sieve_extensions = +vnd.dovecot.filter\n  sieve_filter_bin_dir = {}\n}}\n",
            root.display(),
            bin.display()
        ),
    )
    .unwrap();
    // The README's script.
    let script = root.join("route.sieve");
    std::fs::write(
        &script,
        "require [\"vnd.dovecot.filter\", \"fileinto\"];\nfilter \"cwtext\";\nif header :is \"X-Cwtext-Label\" \"spam\" {\n  fileinto \"Spam\";\n} elsif header :is \"X-Cwtext-Label\" \"_unsure\" {\n  fileinto \"Unsure\";\n}\n",
    )
    .unwrap();
    for (mail, label) in mails_and_labels(Path::new("spam")) {
        let message = root.join("message.eml");
        std::fs::copy(&mail, &message).unwrap();
        let mut command = if as_root {
            let mut c = Command::new("setpriv");
            c.args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "sieve-test",
            ]);
            c
        } else {
            Command::new("sieve-test")
        };
        let out = command
            .arg("-c")
            .arg(&config)
            .arg(&script)
            .arg(&message)
            .env("HOME", root)
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert!(out.status.success(), "{}: {text}", mail.display());
        let folder = if label == "spam" { "Spam" } else { "INBOX" };
        assert!(
            text.contains(&format!("store message in folder: {folder}")),
            "{} ({label}): {text}",
            mail.display()
        );
    }
}
