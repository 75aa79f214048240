//! The catalogue of bad inputs: every case runs the real binary and checks the exit code, the
//! message (naming the file, and the byte or value where it applies) and that nothing panicked.
//! Inputs are made here, from bytes, so the catalogue needs no network and no large fixtures.

use crate::common;

use std::process::Output;

use assert_cmd::Command;
use common::{fixtures, with_closed, with_closed_stdout, Closed};

fn cwtext() -> Command {
    let mut cmd = Command::cargo_bin("cwtext").unwrap();
    cmd.env_remove("CWTEXT_MODEL");
    cmd
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What a case expects.
enum Expect {
    /// Exit 0, and this text on stdout (a label line) or stderr (a warning).
    Ok(&'static str),
    /// This exit code and this text on stderr.
    Fails(i32, &'static str),
}

fn check(name: &str, out: &Output, expect: &Expect) {
    let err = stderr(out);
    assert!(!err.contains("panicked"), "{name}: {err}");
    match expect {
        Expect::Ok(text) => {
            assert_eq!(out.status.code(), Some(0), "{name}: {err}");
            let all = format!("{}{err}", String::from_utf8_lossy(&out.stdout));
            assert!(all.contains(text), "{name}: {all}");
        }
        Expect::Fails(code, text) => {
            assert_eq!(out.status.code(), Some(*code), "{name}: {err}");
            assert!(err.contains(text), "{name}: {err}");
        }
    }
}

fn utf16(text: &str, big_endian: bool, bom: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if bom {
        out.extend_from_slice(if big_endian {
            &[0xfe, 0xff]
        } else {
            &[0xff, 0xfe]
        });
    }
    for u in text.encode_utf16() {
        out.extend_from_slice(&if big_endian {
            u.to_be_bytes()
        } else {
            u.to_le_bytes()
        });
    }
    out
}

fn mail(headers: &[u8], body: &[u8]) -> Vec<u8> {
    let mut m = b"From: alice@example.com\nTo: bob@example.org\n".to_vec();
    m.extend_from_slice(headers);
    m.extend_from_slice(b"\n\n");
    m.extend_from_slice(body);
    m
}

/// Single documents given to `classify` (the embedded model).
#[test]
fn documents_given_to_classify() {
    let dir = tempfile::tempdir().unwrap();
    let noise: Vec<u8> = (0..8192u64)
        .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8)
        .collect();
    let mut elf = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0>\0\x01\0\0\0".to_vec();
    elf.resize(4096, 0);
    let deep = {
        let mut m = String::from(
            "From: a@b.com\nTo: c@d.com\nSubject: deep\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"b0\"\n\n",
        );
        for i in 0..1000 {
            m += &format!(
                "--b{i}\nContent-Type: multipart/mixed; boundary=\"b{}\"\n\n",
                i + 1
            );
        }
        m += "--b1000\nContent-Type: text/plain\n\nthe shuttle launch was delayed by the orbit team\n--b1000--\n";
        for i in (0..1000).rev() {
            m += &format!("--b{i}--\n");
        }
        m.into_bytes()
    };
    let attachment = {
        let mut m = mail(b"Subject: report\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"x\"",
            b"--x\nContent-Type: text/plain\n\nthe hockey playoff results are attached\n--x\nContent-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n\n",
        );
        let line =
            b"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0\n";
        while m.len() < 50 << 20 {
            m.extend_from_slice(line);
        }
        m.extend_from_slice(b"--x--\n");
        m
    };
    let long_line = b"orbit ".repeat(100 << 20 >> 3);
    let cases: Vec<(&str, Vec<u8>, Expect)> = vec![
        (
            "empty.txt",
            vec![],
            Expect::Ok("rests on the prior: no words"),
        ),
        (
            "whitespace.txt",
            b"  \n\t \r\n ".to_vec(),
            Expect::Ok("rests on the prior: no words"),
        ),
        (
            "stopwords.txt",
            b"the and of to a in".to_vec(),
            Expect::Ok("rests on the prior: no words"),
        ),
        (
            "image.png",
            std::fs::read(fixtures().join("odd/image.png")).unwrap(),
            Expect::Fails(2, "image.png: binary file (image/png data)"),
        ),
        (
            "program.elf",
            elf,
            Expect::Fails(
                2,
                "program.elf: binary file (application/x-executable data)",
            ),
        ),
        (
            "noise.bin",
            noise,
            Expect::Fails(2, "noise.bin: binary file"),
        ),
        (
            "invalid-utf8.txt",
            b"the space shuttle \xff\xfe\xc3 orbit launch \x80 nasa".to_vec(),
            Expect::Ok("sci.space"),
        ),
        // Text that starts like a file signature ("BM" a bitmap, "SQLi" a SQLite database,
        // "ID3" an MP3) is text: these were refused as image/bmp, application/vnd.sqlite3 and
        // audio/mpeg data.
        (
            "bmw.txt",
            b"BMW and the engine: the goalie drove to the hockey game in overtime".to_vec(),
            Expect::Ok("rec.sport.hockey"),
        ),
        (
            "sqlite.txt",
            b"SQLite on the space shuttle: orbit launch data from nasa".to_vec(),
            Expect::Ok("sci.space"),
        ),
        (
            "id3.txt",
            b"ID3 tags aside, the shuttle reached orbit after launch".to_vec(),
            Expect::Ok("sci.space"),
        ),
        (
            "utf16-bom.txt",
            utf16("the space shuttle reached orbit after launch", false, true),
            Expect::Ok("sci.space"),
        ),
        (
            "utf16be-no-bom.txt",
            utf16("the space shuttle reached orbit after launch", true, false),
            Expect::Ok("sci.space"),
        ),
        (
            "nul-inside.txt",
            b"the space shuttle\0reached orbit after its launch from the pad, said nasa".to_vec(),
            Expect::Ok("sci.space"),
        ),
        (
            "cp1252.eml",
            mail(
                b"Subject: Caf\x80",
                b"the goalie saved the puck \x93twice\x94 in overtime, the hockey fans cheered",
            ),
            Expect::Ok("rec.sport.hockey"),
        ),
        (
            "latin1.eml",
            mail(
                b"Subject: Gr\xfc\xdfe\nContent-Type: text/plain; charset=iso-8859-1",
                b"the goalie saved the puck in overtime, ol\xe9, hockey fans cheered",
            ),
            Expect::Ok("rec.sport.hockey"),
        ),
        (
            "open-boundary.eml",
            mail(
                b"Subject: open\nContent-Type: multipart/mixed; boundary=\"zz\"",
                b"--zz\nContent-Type: text/plain\n\nthe goalie saved the puck in overtime\n",
            ),
            Expect::Ok("rec.sport.hockey"),
        ),
        (
            "bad-base64.eml",
            mail(
                b"Subject: b64\nContent-Type: text/plain\nContent-Transfer-Encoding: base64",
                b"!!!not*base64@@@ the goalie saved the puck\n",
            ),
            Expect::Ok("entropy"),
        ),
        (
            "unknown-charset.eml",
            mail(
                b"Subject: cs\nContent-Type: text/plain; charset=x-klingon-42",
                b"the goalie saved the puck in overtime\n",
            ),
            Expect::Ok("rec.sport.hockey"),
        ),
        (
            "nested-1000.eml",
            deep,
            Expect::Ok("nested more than 32 MIME levels deep were skipped"),
        ),
        (
            "attachment-50mb.eml",
            attachment,
            Expect::Ok("rec.sport.hockey"),
        ),
        (
            "line-100mb.txt",
            long_line,
            Expect::Ok(
                "line-100mb.txt: longer than 16777216 bytes, only the first 16777216 were read",
            ),
        ),
    ];
    for (name, bytes, expect) in &cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = cwtext().arg("classify").arg(&path).output().unwrap();
        check(name, &out, expect);
    }
    // A path that does not exist, a folder given as a document, binary standard input.
    let out = cwtext()
        .args(["classify", "no/such/file.txt"])
        .output()
        .unwrap();
    check(
        "missing",
        &out,
        &Expect::Fails(2, "no/such/file.txt: No such file or directory"),
    );
    let out = cwtext().arg("classify").arg(dir.path()).output().unwrap();
    check("directory", &out, &Expect::Fails(2, "Is a directory"));
    let out = cwtext()
        .arg("classify")
        .write_stdin(vec![0u8; 512])
        .output()
        .unwrap();
    check(
        "binary stdin",
        &out,
        &Expect::Fails(2, "<stdin>: binary file"),
    );
}

/// Corpora with odd shapes given to `train`.
#[test]
fn corpora_given_to_train() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.cwm");
    let corpus = |files: &[(&str, &[u8])]| {
        let root = tempfile::tempdir().unwrap();
        for (path, bytes) in files {
            let p = root.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
        root
    };
    // Label folders with spaces and non-ASCII names: trained and named as they are.
    let odd = corpus(&[
        (
            "Raumfahrt ünd Sterne/1.txt",
            b"shuttle orbit launch nasa rocket",
        ),
        ("Raumfahrt ünd Sterne/2.txt", b"orbit satellite launch moon"),
        ("ice hockey/1.txt", b"goalie puck overtime playoff"),
        ("ice hockey/2.txt", b"puck stick goalie rink"),
    ]);
    let out = cwtext()
        .arg("train")
        .arg(odd.path())
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    check("odd label names", &out, &Expect::Ok("2 labels"));
    let doc = dir.path().join("doc.txt");
    std::fs::write(&doc, "the goalie stopped the puck").unwrap();
    let out = cwtext()
        .args(["classify", "-m"])
        .arg(&model)
        .arg(&doc)
        .output()
        .unwrap();
    check("odd label names classify", &out, &Expect::Ok("ice hockey"));
    // One label: nothing to tell apart, refused with what was found and what was expected
    // (issue 19; it trained a model that gives every document that label).
    let one = corpus(&[
        ("only/1.txt", b"some words here"),
        ("only/2.txt", b"more words"),
    ]);
    let out = cwtext()
        .arg("train")
        .arg(one.path())
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    check(
        "one label",
        &out,
        &Expect::Fails(
            2,
            "found 1 label(s), \"only\" (2 documents) (read as files (detected)), but at least 2 are needed: expected a folder per label",
        ),
    );
    // A label folder whose every file is skipped (images saved into a folder of their own):
    // left out with a warning, as an empty folder is. It was trained as a label of no
    // documents, which still took a share of every probability (0.02 of a sci.space post's)
    // and could win a text of unknown words.
    let png = std::fs::read(fixtures().join("odd/image.png")).unwrap();
    let space: &[u8] = b"the shuttle reached orbit after the launch from the cape";
    let hockey: &[u8] = b"the goalie stopped the puck in overtime of the playoff game";
    let pictures = corpus(&[
        ("space/1.txt", space),
        ("space/2.txt", b"a satellite in orbit around the moon"),
        ("hockey/1.txt", hockey),
        ("hockey/2.txt", b"the rink and the stick and the puck"),
        ("pictures/1.png", &png),
        ("pictures/2.png", &png),
    ]);
    let out = cwtext()
        .arg("train")
        .arg(pictures.path())
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    // Exit 1, as for any skipped file: the model is written.
    check(
        "a label of unreadable files",
        &out,
        &Expect::Fails(
            1,
            "label \"pictures\": none of its 2 document(s) could be read as one with words (e.g. ",
        ),
    );
    assert!(
        stderr(&out).contains("not text); label ignored\n"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains(" on 4 documents, 2 labels,"),
        "{}",
        stderr(&out)
    );
    let out = cwtext().arg("inspect").arg(&model).output().unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("labels             2\n"), "{shown}");
    assert!(shown.contains("4 documents (2 skipped)"), "{shown}");
    // With one readable label left, refused as one label is, naming the unread one.
    let one_readable = corpus(&[
        ("space/1.txt", space),
        ("space/2.txt", b"a satellite in orbit around the moon"),
        ("pictures/1.png", &png),
    ]);
    let out = cwtext()
        .arg("train")
        .arg(one_readable.path())
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    check(
        "one readable label",
        &out,
        &Expect::Fails(
            2,
            ": 1 label(s) with documents that could be read (\"space\"), but at least 2 are needed: label \"pictures\": none of its 1 document(s) could be read as one with words (e.g. ",
        ),
    );
    // No documents: refused.
    let none = corpus(&[("empty-label/.hidden", b"x")]);
    let out = cwtext()
        .arg("train")
        .arg(none.path())
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    check(
        "no documents",
        &out,
        &Expect::Fails(2, "no documents found: expected ROOT/<label>/<file>"),
    );
    // Only documents without features (v = 0 for every one): refused, naming why.
    let empty = corpus(&[("a/1.txt", b"\t \r\n"), ("b/1.txt", b"   ")]);
    let out = cwtext()
        .arg("train")
        .arg(empty.path())
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    check(
        "no features",
        &out,
        &Expect::Fails(
            2,
            "none of the 2 files could be read as a document with words",
        ),
    );
    // Only binaries: refused, naming what the files were taken for (the message said only
    // "invalid setting: none of the 2 files could be read as a document with words").
    let png = std::fs::read(fixtures().join("odd/image.png")).unwrap();
    let binaries = corpus(&[("a/1.png", &png), ("b/1.png", &png)]);
    let out = cwtext()
        .arg("train")
        .arg(binaries.path())
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    check(
        "only binaries",
        &out,
        &Expect::Fails(
            2,
            "none of the 2 files could be read as a document with words (2 could not be read, e.g. ",
        ),
    );
    assert!(
        stderr(&out).contains("1.png: binary file (image/png data)"),
        "{}",
        stderr(&out)
    );
    // Documents of stop words only: the list would leave none with words, so train goes
    // without it (it is free to choose) rather than refuse.
    let stop_words = corpus(&[("a/1.txt", b"the of and"), ("b/1.txt", b"what is it")]);
    let out = cwtext()
        .arg("train")
        .arg(stop_words.path())
        .args(["--char-ngrams", "none", "-o"])
        .arg(&model)
        .output()
        .unwrap();
    check(
        "stop words only",
        &out,
        &Expect::Ok("kept stop words none, prior idf: too few documents"),
    );
    // By default such short texts keep every word and have character n-grams: the list is not
    // tried, and the documents are learned from their words and the letters of them.
    let out = cwtext()
        .arg("train")
        .arg(stop_words.path())
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    check(
        "stop words only, character n-grams",
        &out,
        &Expect::Ok("kept stop words none, prior idf: too few documents"),
    );
    // Some documents without features among good ones: skipped by name, exit 1. (Stop words
    // only, under the list asked for (short texts keep every word otherwise), and without
    // character n-grams, which would give "the of" its letters.)
    let some = corpus(&[
        ("a/1.txt", b"shuttle orbit"),
        ("a/2.txt", b"the of"),
        ("b/1.txt", b"goalie puck"),
    ]);
    let out = cwtext()
        .arg("train")
        .arg(some.path())
        .args(["--char-ngrams", "none", "--stopwords", "english", "-o"])
        .arg(&model)
        .output()
        .unwrap();
    check(
        "a featureless document",
        &out,
        &Expect::Fails(1, "2.txt: empty document"),
    );
    // The same under --quiet: the warnings are not printed, but exit 1 is not left unexplained.
    // (Before, a quiet run ended 1 with nothing on stderr at all.)
    let out = cwtext()
        .arg("train")
        .arg(some.path())
        .args([
            "--char-ngrams",
            "none",
            "--stopwords",
            "english",
            "-q",
            "-o",
        ])
        .arg(&model)
        .output()
        .unwrap();
    check(
        "a featureless document, quietly",
        &out,
        &Expect::Fails(
            1,
            "cwtext: some files were skipped (exit 1); run without --quiet to see which and why",
        ),
    );
    assert!(!stderr(&out).contains("2.txt"), "{}", stderr(&out));
    // A symbolic link loop: reported, not followed.
    let looped = corpus(&[("a/1.txt", b"shuttle orbit"), ("b/1.txt", b"goalie puck")]);
    std::os::unix::fs::symlink(looped.path().join("a"), looped.path().join("a/loop")).unwrap();
    let out = cwtext()
        .arg("train")
        .arg(looped.path())
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    check(
        "symlink loop",
        &out,
        &Expect::Ok("symbolic link loop, not followed"),
    );
}

/// Settings out of range are refused before any work, naming the value.
#[test]
fn settings_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.cwm");
    for (args, text) in [
        (&["--eta", "0.3"][..], "eta must be in (0.5, 1), but is 0.3"),
        (
            &["--hash-bits", "12"],
            "hash bits must be in [16, 26], but is 12",
        ),
        (
            &["--epochs", "5000"],
            "epochs must be in [1, 1000], but is 5000",
        ),
        (
            &["--constraints", "sequential", "-k", "0"],
            "k must be at least 1, but is 0",
        ),
        (&["--max-tokens", "0"], "document limits must be at least 1"),
    ] {
        let out = cwtext()
            .arg("train")
            .arg(fixtures().join("mail"))
            .arg("-o")
            .arg(&model)
            .args(args)
            .output()
            .unwrap();
        check(&format!("{args:?}"), &out, &Expect::Fails(2, text));
        assert!(!model.exists());
    }
}

/// Output that cannot be written: a full disk for a model (a 64 KiB tmpfs, where the machine
/// allows mounting one) and for the labels (/dev/full); a closed pipe ends quietly.
#[test]
fn full_disks_and_closed_pipes() {
    let out = cwtext()
        .arg("label")
        .arg(fixtures().join("news"))
        .args(["-o", "/dev/full"])
        .output()
        .unwrap();
    check(
        "label to /dev/full",
        &out,
        &Expect::Fails(2, "/dev/full: cannot write: No space left on device"),
    );
    let dir = tempfile::tempdir().unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(dir.path())
        .status()
        .is_ok_and(|s| s.success());
    if mounted {
        let model = dir.path().join("m.cwm");
        let out = cwtext()
            .arg("train")
            .arg(fixtures().join("mail"))
            .arg("-o")
            .arg(&model)
            .output()
            .unwrap();
        let _ = std::process::Command::new("umount")
            .arg(dir.path())
            .status();
        check(
            "model to a full disk",
            &out,
            &Expect::Fails(2, "m.cwm: No space left on device (os error 28)"),
        );
    } else {
        eprintln!("note: cannot mount a tmpfs here; the full-disk model write was not exercised");
    }
    // `cwtext label DIR | head -1`: the pipe closes early, cwtext exits 0 without a message.
    let out = with_closed_stdout(&["label", "news"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("error"), "{}", stderr(&out));
}

/// `cwtext train … 2>&1 | head -1`: once head has read its line, stderr is a closed pipe.
/// Every note on stderr then panicked (exit 101) and training stopped with no model; in
/// delivery, `filter --always-zero` exited 101 after passing the message on. Notes are for
/// people: when no one reads them, the work goes on.
#[test]
fn a_closed_standard_error_stops_no_work() {
    let dir = tempfile::tempdir().unwrap();
    let (closed, open) = (dir.path().join("closed.cwm"), dir.path().join("open.cwm"));
    let out = with_closed(
        Closed::Stderr,
        &[
            "train".as_ref(),
            "news".as_ref(),
            "-o".as_ref(),
            closed.as_os_str(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "train with stderr closed");
    let trained = cwtext()
        .current_dir(fixtures())
        .args(["train", "news", "-o"])
        .arg(&open)
        .output()
        .unwrap();
    assert!(trained.status.success(), "{}", stderr(&trained));
    assert!(
        std::fs::read(&closed).unwrap() == std::fs::read(&open).unwrap(),
        "the same model as with stderr open"
    );

    // Bad input still exits 2 (its message has nowhere to go), not 101.
    let out = with_closed(
        Closed::Stderr,
        &["eval", "-m", "no-such-model.cwm", "news"],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));

    // Delivery: the message comes back with the error in its field, and --always-zero holds.
    let mail = std::fs::read(
        fixtures()
            .join("mail/ham")
            .read_dir()
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path(),
    )
    .unwrap();
    let out = with_closed(
        Closed::Stderr,
        &["filter", "-m", "no-such-model.cwm", "--always-zero"],
        &mail,
    );
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("X-Cwtext-Error: "), "{text}");
    assert!(
        out.stdout.len() > mail.len(),
        "the whole message and the field"
    );
}

const SEP: &str = "From someone@example.com Sat Jan  3 01:05:34 2004";

/// Mailboxes (issue 19): a truncated mbox, `From ` lines inside bodies, a Maildir with a file
/// that cannot be read, NULs. Each says which mailbox and which message (offset or file), and
/// the other messages are still read.
#[test]
fn mailboxes_that_are_damaged_or_odd() {
    let dir = tempfile::tempdir().unwrap();
    let spam = "Subject: cheap pills\n\nbuy cheap pills now, viagra discount offer\n";
    let ham = "Subject: meeting notes\n\nthe project meeting moved to thursday, agenda attached\n";
    // Truncated: the second message stops inside its header.
    let cut = dir.path().join("cut.mbox");
    let second = SEP.len() + 1 + spam.len() + 1;
    std::fs::write(
        &cut,
        format!("{SEP}\n{spam}\n{SEP}\nSubject: meeting\nX-Cut: ha"),
    )
    .unwrap();
    let out = cwtext()
        .args(["classify", "-m", "spam", "--format", "tsv"])
        .arg(&cut)
        .output()
        .unwrap();
    let message =
        format!("cut.mbox@{second}: the file ends inside this message's header (truncated?)");
    check("truncated mbox", &out, &Expect::Ok("cut.mbox@0\t"));
    assert!(stderr(&out).contains(&message), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("cut.mbox@{second}\t")));
    // `From ` inside a body, quoted (mboxrd) and not: neither splits the message.
    let from = dir.path().join("from.mbox");
    std::fs::write(
        &from,
        format!("{SEP}\n{spam}>From the desk of the director\nFrom the desk of the director\n\n{SEP}\n{ham}\n"),
    )
    .unwrap();
    let out = cwtext()
        .args(["classify", "-m", "spam", "--format", "tsv"])
        .arg(&from)
        .output()
        .unwrap();
    check("From lines in bodies", &out, &Expect::Ok("from.mbox@0\t"));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        2,
        "two messages"
    );
    // An unquoted body line shaped like a separator does split (nothing tells it apart), and
    // the warning names where.
    let forwarded = dir.path().join("forwarded.mbox");
    let text = format!("{SEP}\n{spam}forwarded below:\n{SEP}\nSubject: inner\n\ninner text\n");
    std::fs::write(&forwarded, &text).unwrap();
    let at = text.rfind(SEP).unwrap();
    let out = cwtext()
        .args(["classify", "-m", "spam", "--format", "tsv"])
        .arg(&forwarded)
        .output()
        .unwrap();
    check(
        "unquoted separator",
        &out,
        &Expect::Ok("forwarded.mbox@0\t"),
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("forwarded.mbox@{at}\t")));
    assert!(
        stderr(&out).contains(&format!(
            "forwarded.mbox@{at}: a `From ` line with no blank line before it"
        )),
        "{}",
        stderr(&out)
    );
    // NULs inside a message: that message is named by its offset, the other one is read.
    let nul = dir.path().join("nul.mbox");
    let mut bytes = format!("{SEP}\n{ham}\n{SEP}\nSubject: x\n\n").into_bytes();
    let offset = SEP.len() + 1 + ham.len() + 1;
    bytes.extend_from_slice(&[0u8; 64]);
    bytes.extend_from_slice(b"\x00\x01\x02binary\x00\n");
    std::fs::write(&nul, &bytes).unwrap();
    let out = cwtext()
        .args(["classify", "-m", "spam", "--format", "tsv"])
        .arg(&nul)
        .output()
        .unwrap();
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(all.contains("nul.mbox@0\t"), "{all}");
    assert!(all.contains(&format!("nul.mbox@{offset}")), "{all}");
    // A Maildir with a message that cannot be read (a dangling link; as a user, also a file
    // without read permission): a warning names it, the rest trains.
    let maildir = dir.path().join("Maildir");
    for (folder, text) in [(".Spam", spam), (".Work", ham)] {
        for i in 0..3 {
            let p = maildir
                .join(folder)
                .join("cur")
                .join(format!("{i}.host:2,S"));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("{text}{i}\n")).unwrap();
        }
        std::fs::create_dir_all(maildir.join(folder).join("new")).unwrap();
    }
    let dangling = maildir.join(".Spam/cur/9.host:2,S");
    std::os::unix::fs::symlink(dir.path().join("gone"), &dangling).unwrap();
    let locked = maildir.join(".Work/cur/8.host:2,S");
    std::fs::write(&locked, ham).unwrap();
    std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    let as_root = std::fs::read(&locked).is_ok();
    let out = cwtext()
        .arg("train")
        .arg(&maildir)
        .arg("-o")
        .arg(dir.path().join("m.cwm"))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains(".Spam/cur/9.host:2,S: not a readable file, skipped"),
        "{err}"
    );
    if !as_root {
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(".Work/cur/8.host:2,S: Permission denied"),
            "{err}"
        );
    }
    // label and classify name it too; the other messages are labelled. (As root, where
    // permissions do not apply, the file is read: only the dangling link is checked.)
    let out = cwtext()
        .arg("label")
        .arg(&maildir)
        .args(["-m", "spam"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains(".Spam/cur/9.host:2,S: not a readable file, skipped"),
        "{err}"
    );
    let labelled = String::from_utf8_lossy(&out.stdout).lines().count();
    if as_root {
        assert_eq!(labelled, 7, "{err}");
    } else {
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("skipped") && err.contains(".Work/cur/8.host:2,S: Permission denied"),
            "{err}"
        );
        assert_eq!(labelled, 6, "{err}");
        let out = cwtext()
            .args(["classify", "-m", "spam"])
            .arg(&locked)
            .output()
            .unwrap();
        check(
            "unreadable message",
            &out,
            &Expect::Fails(2, ".Work/cur/8.host:2,S: Permission denied"),
        );
    }
    std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
}

/// The messages of an mbox as given to `filter` (procmail hands a message over with its `From `
/// line): the bytes from each separator to the next.
fn mbox_messages(bytes: &[u8]) -> Vec<(usize, &[u8])> {
    let starts: Vec<usize> = (0..bytes.len())
        .filter(|&i| bytes[i..].starts_with(SEP.as_bytes()) && (i == 0 || bytes[i - 1] == b'\n'))
        .collect();
    starts
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            (
                s,
                &bytes[s..starts.get(k + 1).copied().unwrap_or(bytes.len())],
            )
        })
        .collect()
}

/// Damaged mailboxes through every command (issue 19): a message cut mid-body and one cut
/// mid-header (each the last of its file), an unquoted `From ` line inside a body (mboxo), NULs
/// in a header and a body, and a message of 100 MB. `train`, `label` and `classify` read every
/// message, warn naming the mailbox and the message (`FILE@OFFSET`) and exit 0; `filter` passes
/// each message through with only its fields added and exits with a label's code.
#[test]
fn damaged_mailboxes_through_train_label_classify_and_filter() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("mail");
    std::fs::create_dir(&store).unwrap();
    let spam = |n: usize| {
        format!("Subject: cheap pills {n}\n\nbuy cheap pills now, viagra discount offer\n")
    };
    let ham = |n: usize| {
        format!("Subject: meeting notes {n}\n\nthe project meeting moved to thursday, agenda attached\n")
    };
    // Spam: the last message stops in the middle of its body.
    let mut spam_box = format!("{SEP}\n{}\n{SEP}\n{}\n", spam(1), spam(2)).into_bytes();
    let cut_body = spam_box.len();
    spam_box.extend_from_slice(format!("{SEP}\nSubject: cheap\n\nbuy cheap pi").as_bytes());
    // Work: NULs in a header and the body; an unquoted `From ` body line (mboxo), which is not
    // a separator (no time and year after it) and so stays in its message.
    let mut work_box = format!("{SEP}\n{}\n", ham(1)).into_bytes();
    let nul = work_box.len();
    work_box.extend_from_slice(
        format!("{SEP}\nSubject: meet\0ing\nX-Odd: a\0b\n\nthe project\0 meeting moved\n")
            .as_bytes(),
    );
    let from_line = work_box.len() + 1;
    work_box.extend_from_slice(
        format!(
            "\n{SEP}\n{}From the desk of the director: thursday\n\n",
            ham(2)
        )
        .as_bytes(),
    );
    // Lists: the last message stops inside its header.
    let mut lists_box = format!("{SEP}\n{}\n", ham(3)).into_bytes();
    let cut_header = lists_box.len();
    lists_box.extend_from_slice(format!("{SEP}\nSubject: meeting\nX-Cut: ha").as_bytes());
    // Big: a message of 100 MB between two small ones, cut by --max-document-bytes (16 MiB).
    let mut big_box = format!("{SEP}\n{}\n", spam(3)).into_bytes();
    let big = big_box.len();
    big_box.extend_from_slice(format!("{SEP}\nSubject: huge\n\n").as_bytes());
    let line = b"buy cheap pills now, viagra discount offer\n";
    while big_box.len() < big + (100 << 20) {
        big_box.extend_from_slice(line);
    }
    big_box.extend_from_slice(format!("\n{SEP}\n{}", spam(4)).as_bytes());
    for (name, bytes) in [
        ("Spam", &spam_box),
        ("Work", &work_box),
        ("Lists", &lists_box),
        ("Big", &big_box),
    ] {
        std::fs::write(store.join(name), bytes).unwrap();
    }
    let warnings = [
        format!(
            "Spam@{cut_body}: the file ends in the middle of a line at byte {} (truncated?)",
            spam_box.len()
        ),
        format!("Lists@{cut_header}: the file ends inside this message's header (truncated?)"),
        format!(
            "Big@{big}: longer than 16777216 bytes, only the first 16777216 were read (--max-document-bytes)"
        ),
    ];
    let names = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.split('\t').next())
            .map(|n| n.rsplit('/').next().unwrap().to_string())
            .collect()
    };
    let all_messages = [
        "Big@0".to_string(),
        format!("Big@{big}"),
        format!("Big@{}", big_box.len() - SEP.len() - 1 - spam(4).len()),
        "Lists@0".into(),
        format!("Lists@{cut_header}"),
        "Spam@0".into(),
        format!("Spam@{}", SEP.len() + 1 + spam(1).len() + 1),
        format!("Spam@{cut_body}"),
        "Work@0".into(),
        format!("Work@{nul}"),
        format!("Work@{from_line}"),
    ];
    // train: every message is a document; the damage is named, nothing is skipped.
    let model = dir.path().join("m.cwm");
    let out = cwtext()
        .arg("train")
        .arg(&store)
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    let err = stderr(&out);
    check("train", &out, &Expect::Ok("on 11 documents, 4 labels"));
    for w in &warnings {
        assert!(err.contains(w.as_str()), "train: {w}\n{err}");
    }
    // label: one line per message, in order, the same warnings.
    let out = cwtext()
        .arg("label")
        .arg(&store)
        .arg("-m")
        .arg(&model)
        .output()
        .unwrap();
    check("label", &out, &Expect::Ok("labelled 11 files"));
    assert_eq!(names(&String::from_utf8_lossy(&out.stdout)), all_messages);
    for w in &warnings {
        assert!(
            stderr(&out).contains(w.as_str()),
            "label: {w}\n{}",
            stderr(&out)
        );
    }
    // classify, file by file.
    for (name, expected) in [("Spam", 3), ("Work", 3), ("Lists", 2), ("Big", 3)] {
        let out = cwtext()
            .args(["classify", "--format", "tsv", "-m"])
            .arg(&model)
            .arg(store.join(name))
            .output()
            .unwrap();
        check(name, &out, &Expect::Ok("@0\t"));
        let got = names(&String::from_utf8_lossy(&out.stdout));
        assert_eq!(got.len(), expected, "{name}: {got:?}");
        for w in warnings
            .iter()
            .filter(|w| w.starts_with(&format!("{name}@")))
        {
            assert!(
                stderr(&out).contains(w.as_str()),
                "classify {name}: {w}\n{}",
                stderr(&out)
            );
        }
    }
    // filter: each message, as procmail hands it over, comes back with only the fields added.
    for (name, bytes) in [
        ("Spam", &spam_box),
        ("Work", &work_box),
        ("Lists", &lists_box),
        ("Big", &big_box),
    ] {
        for (offset, message) in mbox_messages(bytes) {
            let out = cwtext()
                .arg("filter")
                .arg("-m")
                .arg(&model)
                .write_stdin(message.to_vec())
                .output()
                .unwrap();
            let what = format!("filter {name}@{offset}");
            assert!(
                !stderr(&out).contains("panicked"),
                "{what}: {}",
                stderr(&out)
            );
            assert!(
                matches!(out.status.code(), Some(0..=3)),
                "{what}: a label's exit code, got {:?}: {}",
                out.status.code(),
                stderr(&out)
            );
            // A message cut inside its header gets a line end before the fields (the one
            // change besides them; without it the first field would continue the cut line).
            let mut expected = message.to_vec();
            if !message.windows(2).any(|w| w == b"\n\n") && !message.ends_with(b"\n") {
                expected.push(b'\n');
            }
            let fields = crate::filter::added_fields(&expected, &out.stdout);
            assert!(
                fields[0].starts_with("X-Cwtext-Label: "),
                "{what}: {fields:?}"
            );
        }
    }
}
