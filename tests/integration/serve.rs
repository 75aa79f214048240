//! `cwtext serve` seen from outside: the real binary on 127.0.0.1 (port 0, the URL read from its
//! first line of output), spoken to over plain HTTP/1.1. Its answers are byte for byte what
//! `classify --format json`, `filter` and `learn` give; acknowledged corrections survive
//! SIGTERM and `kill -9`; bad requests get a 4xx with a JSON error. Every server is killed when
//! its test ends, and every test is bounded in requests and time.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{cwtext, files_in, fixtures, new_and_outgrown_models, stderr, stdout};

/// A running server, killed (SIGKILL) when dropped unless it was stopped.
struct Server {
    child: Option<Child>,
    url: String,
    stderr_path: PathBuf,
}

impl Server {
    fn start(dir: &Path, args: &[&str]) -> Server {
        Server::try_start(dir, args).unwrap_or_else(|e| panic!("server did not start: {e}"))
    }

    fn try_start(dir: &Path, args: &[&str]) -> Result<Server, String> {
        let stderr_path = dir.join(format!(
            "server-{}.err",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("cwtext"))
            .current_dir(dir)
            .env_remove("CWTEXT_MODEL")
            .arg("serve")
            .args(["--listen", "127.0.0.1:0"])
            // No snapshot by time during a test (the tests count what the journal holds).
            .args(["--snapshot-interval", "600"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .unwrap();
        let line = first_line(&mut child);
        if line.trim().is_empty() {
            let _ = child.wait();
            return Err(std::fs::read_to_string(&stderr_path).unwrap());
        }
        Ok(Server {
            child: Some(child),
            url: line.trim().to_string(),
            stderr_path,
        })
    }

    fn addr(&self) -> String {
        self.url.trim_start_matches("http://").to_string()
    }

    fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
        http(&self.addr(), method, path, headers, body)
    }

    fn post(&self, path: &str, body: &[u8]) -> Answer {
        self.request("POST", path, &[], body)
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap()
    }

    /// SIGTERM, then the exit status (within 10 s).
    fn terminate(mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().unwrap();
        signal(child.id(), "TERM");
        wait_bounded(&mut child, Duration::from_secs(10))
    }

    /// SIGKILL.
    fn kill(mut self) {
        let mut child = self.child.take().unwrap();
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn signal(pid: u32, name: &str) {
    let ok = Command::new("kill")
        .args([format!("-{name}"), pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{name} {pid}");
}

fn wait_bounded(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("the server did not stop within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An HTTP answer.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }

    /// A 4xx/5xx with a JSON error that says `message`.
    fn assert_error(&self, status: u16, message: &str) {
        let text = String::from_utf8_lossy(&self.body);
        assert_eq!(self.status, status, "{text}");
        assert_eq!(self.header("content-type"), Some("application/json"));
        let error = self.json()["error"].as_str().unwrap().to_string();
        assert!(error.contains(message), "{error}");
    }
}

/// One request on its own connection (`Connection: close`), the answer read to its end.
fn http(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    // A server may answer (413) before reading the whole body, and close.
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    parse_answer(&raw)
}

fn parse_answer(raw: &[u8]) -> Answer {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no answer: {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8(raw[..end].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.trim().to_string(), v.trim().to_string())
        })
        .collect();
    let answer = Answer {
        status,
        headers,
        body: raw[end + 4..].to_vec(),
    };
    if let Some(len) = answer.header("content-length") {
        assert_eq!(answer.body.len(), len.parse::<usize>().unwrap());
    }
    answer
}

/// A model trained on the fixture mails (labels ham, spam) in `dir`.
fn mail_model(dir: &Path, name: &str) -> PathBuf {
    let model = dir.join(name);
    let out = cwtext()
        .args(["train", "mail", "-q", "--epochs", "3", "-o"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    model
}

fn mails() -> Vec<PathBuf> {
    let mail = fixtures().join("mail");
    [files_in(&mail.join("ham")), files_in(&mail.join("spam"))].concat()
}

/// A few corrections: (label, document), some against the model's own decision, one a new
/// label.
fn corrections() -> Vec<(&'static str, Vec<u8>)> {
    let m = mails();
    let n = m.len();
    vec![
        ("spam", std::fs::read(&m[0]).unwrap()),
        ("ham", std::fs::read(&m[n - 1]).unwrap()),
        ("receipts", std::fs::read(&m[3]).unwrap()),
        ("ham", std::fs::read(&m[n - 2]).unwrap()),
        ("spam", std::fs::read(&m[5]).unwrap()),
        ("receipts", std::fs::read(&m[n - 5]).unwrap()),
    ]
}

/// `cwtext learn -m model --label L < document`, once per correction, in order.
fn learn_with_the_command(model: &Path, corrections: &[(&str, Vec<u8>)]) {
    for (label, document) in corrections {
        let out = cwtext()
            .args(["learn", "-q", "--label", label, "-m"])
            .arg(model)
            .write_stdin(document.clone())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
}

/// `cwtext serve -m spam --socket SOCKET` from `dir`: the child and the URL it printed first.
fn serve_spam_on_socket(dir: &Path, socket: &Path) -> (Child, String) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("cwtext"))
        .current_dir(dir)
        .args(["serve", "-m", "spam", "--socket"])
        .arg(socket)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let line = first_line(&mut child);
    (child, line.trim().to_string())
}

/// The first line a child writes on its piped standard output (a server's URL).
fn first_line(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    line
}

/// Sends the first fixture mail to `/classify` on connection after connection until `stop`
/// (bounded: at most 200,000 requests and 30 s, so a fast server does not end before what the
/// test waits for), counting the answers by `key`.
fn classify_until(
    server: &Server,
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
    key: impl Fn(&Answer) -> String + Send + 'static,
) -> std::thread::JoinHandle<std::collections::BTreeMap<String, usize>> {
    let (stop, addr) = (stop.clone(), server.addr());
    let mail = std::fs::read(&mails()[0]).unwrap();
    std::thread::spawn(move || {
        let mut answers = std::collections::BTreeMap::new();
        let (mut n, begun) = (0, Instant::now());
        while !stop.load(std::sync::atomic::Ordering::Relaxed)
            && n < 200_000
            && begun.elapsed() < Duration::from_secs(30)
        {
            *answers
                .entry(key(&http(&addr, "POST", "/classify", &[], &mail)))
                .or_insert(0) += 1;
            n += 1;
        }
        answers
    })
}

fn copy(from: &Path, to: &Path) -> PathBuf {
    std::fs::copy(from, to).unwrap();
    to.to_path_buf()
}

#[test]
fn filter_without_a_model_uses_the_first_named_one() {
    // Three models named, one of them the built-in spam model but not first: /filter without
    // model= uses the first, as /classify does; only a server started without -m (the
    // built-ins) filters with the built-in spam model, as `cwtext filter` does.
    let dir = tempfile::tempdir().unwrap();
    mail_model(dir.path(), "mail.cwm");
    let server = Server::start(
        dir.path(),
        &["-m", "topics", "-m", "mail=mail.cwm", "-m", "spam"],
    );
    let label = |a: &Answer| {
        let text = String::from_utf8_lossy(&a.body).to_string();
        let line = text.lines().find(|l| l.starts_with("X-Cwtext-Label: "));
        line.expect("a label header").to_string()
    };
    for path in mails().iter().step_by(10) {
        let bytes = std::fs::read(path).unwrap();
        let unnamed = server.post("/filter", &bytes);
        assert_eq!(unnamed.status, 200, "{path:?}");
        let topics = server.post("/filter?model=topics", &bytes);
        assert_eq!(label(&unnamed), label(&topics), "{path:?}");
        assert!(unnamed.body == topics.body, "{path:?}");
        // A newsgroup, not ham or spam.
        let spam = label(&server.post("/filter?model=spam", &bytes));
        assert!(spam == "X-Cwtext-Label: ham" || spam == "X-Cwtext-Label: spam");
        assert_ne!(label(&unnamed), spam, "{path:?}");
    }
    drop(server);
    let server = Server::start(dir.path(), &[]);
    let bytes = std::fs::read(&mails()[0]).unwrap();
    assert!(server.post("/filter", &bytes).body == server.post("/filter?model=spam", &bytes).body);
}

/// The label counts in /metrics are the decisions the answers carry: under `min_prob` a
/// document below it is counted under the unsure label by /classify as by /filter (classify
/// counted the best label, which its answer did not give).
#[test]
fn metrics_count_the_decision_each_answer_gives() {
    let dir = tempfile::tempdir().unwrap();
    mail_model(dir.path(), "mail.cwm");
    let server = Server::start(dir.path(), &["-m", "mail=mail.cwm"]);
    let mut decisions: std::collections::BTreeMap<String, u64> = Default::default();
    // Its own mails (sure) and news posts (often unsure: neither ham nor spam).
    let mut documents: Vec<PathBuf> = mails().into_iter().step_by(8).collect();
    for group in ["rec.sport.hockey", "sci.space"] {
        documents.extend(
            files_in(&fixtures().join("news").join(group))
                .into_iter()
                .take(8),
        );
    }
    for path in &documents {
        let bytes = std::fs::read(path).unwrap();
        let answer = server.post("/classify?min_prob=0.99&unsure_label=later", &bytes);
        assert_eq!(answer.status, 200, "{path:?}");
        let label = answer.json()["label"].as_str().unwrap().to_string();
        *decisions.entry(label).or_default() += 1;
        let filtered = server.post("/filter?min_prob=0.99&unsure_label=later", &bytes);
        let text = String::from_utf8_lossy(&filtered.body).to_string();
        let header = text
            .lines()
            .find_map(|l| l.strip_prefix("X-Cwtext-Label: "))
            .expect("a label header")
            .to_string();
        *decisions.entry(header).or_default() += 1;
    }
    // The case this is about: some documents below 0.99, some above.
    assert!(
        decisions.get("later").is_some_and(|&n| n >= 2),
        "{decisions:?}"
    );
    assert!(decisions.len() >= 2, "{decisions:?}");
    let metrics = String::from_utf8(server.request("GET", "/metrics", &[], b"").body).unwrap();
    let counted: std::collections::BTreeMap<String, u64> = metrics
        .lines()
        .filter_map(|l| l.strip_prefix(r#"cwtext_predictions_total{model="mail",label=""#))
        .map(|rest| {
            let (label, count) = rest.split_once(r#""} "#).unwrap();
            (label.to_string(), count.trim().parse().unwrap())
        })
        .collect();
    assert_eq!(counted, decisions, "{metrics}");
    assert!(server.terminate().success());
}

#[test]
fn classify_and_filter_answer_as_the_commands_do() {
    let dir = tempfile::tempdir().unwrap();
    let model = mail_model(dir.path(), "mail.cwm");
    let server = Server::start(dir.path(), &["-m", "mail=mail.cwm", "-m", "spam"]);
    for (i, path) in mails().iter().enumerate().step_by(7) {
        let bytes = std::fs::read(path).unwrap();
        // JSON (the server's default), then text with --top and --min-prob.
        for (query, flags) in [
            ("", vec!["--format", "json"]),
            (
                "&format=text&top=1&min_prob=0.99",
                vec!["--format", "text", "--top", "1", "--min-prob", "0.99"],
            ),
            (
                "&format=tsv&probabilities=exact",
                vec!["--format", "tsv", "--probabilities", "exact"],
            ),
        ] {
            let answer = server.post(&format!("/classify?model=mail{query}"), &bytes);
            assert_eq!(
                answer.status,
                200,
                "{}",
                String::from_utf8_lossy(&answer.body)
            );
            let out = cwtext()
                .args(["classify", "-m"])
                .arg(&model)
                .args(&flags)
                .write_stdin(bytes.clone())
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(
                stdout(&out),
                String::from_utf8(answer.body).unwrap(),
                "{path:?} {query}"
            );
        }
        // The built-in spam model by name.
        let answer = server.post("/classify?model=spam", &bytes);
        let out = cwtext()
            .args(["classify", "-m", "spam", "--format", "json"])
            .write_stdin(bytes.clone())
            .output()
            .unwrap();
        assert_eq!(stdout(&out).as_bytes(), answer.body.as_slice());
        // filter: the same bytes and the same exit code.
        let extra: &[&str] = if i % 2 == 0 { &["--subject-tag"] } else { &[] };
        let query = if i % 2 == 0 { "&subject_tag=true" } else { "" };
        let answer = server.post(&format!("/filter?model=mail{query}"), &bytes);
        assert_eq!(answer.status, 200);
        let out = cwtext()
            .args(["filter", "-m"])
            .arg(&model)
            .args(extra)
            .write_stdin(bytes.clone())
            .output()
            .unwrap();
        assert_eq!(out.stdout, answer.body, "{path:?}");
        assert_eq!(
            answer.header("x-cwtext-exit-code"),
            Some(out.status.code().unwrap().to_string().as_str())
        );
        assert!(answer.body.len() > bytes.len());
    }
    // An mbox of two messages: one JSON line per message, named -@OFFSET, as classify prints.
    let mut mbox = Vec::new();
    for p in &mails()[..2] {
        mbox.extend_from_slice(b"From a@example.com Tue Oct  1 09:00:00 2002\n");
        mbox.extend_from_slice(&std::fs::read(p).unwrap());
        mbox.extend_from_slice(b"\n");
    }
    let answer = server.post("/classify?model=mail", &mbox);
    let out = cwtext()
        .args(["classify", "--format", "json", "-m"])
        .arg(&model)
        .write_stdin(mbox.clone())
        .output()
        .unwrap();
    assert_eq!(stdout(&out).as_bytes(), answer.body.as_slice());
    assert_eq!(String::from_utf8(answer.body).unwrap().lines().count(), 2);

    // models, health, metrics.
    let models = server.request("GET", "/models", &[], b"").json();
    assert_eq!(models["models"][0]["name"], "mail");
    assert_eq!(
        models["models"][0]["labels"],
        serde_json::json!(["ham", "spam"])
    );
    assert_eq!(models["models"][1]["learns"], false);
    assert_eq!(
        server.request("GET", "/health", &[], b"").json()["status"],
        "ok"
    );
    let metrics = String::from_utf8(server.request("GET", "/metrics", &[], b"").body).unwrap();
    assert!(
        metrics.contains(r#"cwtext_requests_total{endpoint="classify",model="mail",status="200"}"#),
        "{metrics}"
    );
    assert!(
        metrics.contains("cwtext_request_duration_seconds_bucket"),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"cwtext_predictions_total{model="mail",label="#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"cwtext_journal_corrections{model="mail"} 0"#),
        "{metrics}"
    );
    assert!(server.terminate().success());
}

/// Corrections through the server, then SIGTERM: the model file is byte for byte what `cwtext
/// learn` makes of the same corrections in the same order, and the journal is empty. While the
/// server runs, `cwtext learn` on its model is refused and names it.
#[test]
fn learning_through_the_server_gives_the_bytes_learn_gives() {
    let dir = tempfile::tempdir().unwrap();
    let model = mail_model(dir.path(), "mail.cwm");
    let reference = copy(&model, &dir.path().join("reference.cwm"));
    let corrections = corrections();
    let server = Server::start(dir.path(), &["-m", "mail=mail.cwm"]);
    for (i, (label, document)) in corrections.iter().enumerate() {
        let answer = server.post(&format!("/learn?label={label}"), document);
        assert_eq!(
            answer.status,
            200,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        let v = answer.json();
        assert_eq!(v["documents"], 1);
        assert_eq!(v["journal_corrections"], i + 1);
        if i == 2 {
            assert_eq!(v["new_labels"], serde_json::json!(["receipts"]));
        }
    }
    // The corrections are in memory at once: the new label is classified.
    let answer = server.post("/classify?top=3", &corrections[2].1);
    assert!(String::from_utf8_lossy(&answer.body).contains("receipts"));
    let out = cwtext()
        .args(["learn", "--label", "spam", "-m"])
        .arg(&model)
        .write_stdin(corrections[0].1.clone())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!("is held by cwtext serve at {}", server.url)),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("learn --server"), "{}", stderr(&out));
    let before = std::fs::read(&reference).unwrap();
    assert_eq!(std::fs::read(&model).unwrap(), before, "no snapshot yet");
    let mark = dir.path().join("mail.cwm.server");
    assert!(std::fs::read_to_string(&mark)
        .unwrap()
        .starts_with(&server.url));

    let status = server.terminate();
    assert!(status.success(), "{status:?}");
    assert!(!mark.exists(), "a server that stops takes its mark away");
    learn_with_the_command(&reference, &corrections);
    assert_ne!(std::fs::read(&reference).unwrap(), before);
    assert!(
        std::fs::read(&model).unwrap() == std::fs::read(&reference).unwrap(),
        "the served model's snapshot differs from learn's model"
    );
    let journal = std::fs::read(dir.path().join("mail.cwm.journal")).unwrap();
    assert_eq!(journal.len(), 16, "an empty journal (header only)");
    // Once the server is gone, learn works again.
    learn_with_the_command(&model, &corrections[..1]);
}

/// After `kill -9` the journal holds acknowledged corrections the model file has not got:
/// `cwtext learn` on that file (directly or as `--server-fallback local`) is refused naming
/// the journal and leaves the file as it was, since a changed file would strand them (the
/// server refuses a journal written for another file); once a server has applied them, learn
/// works again.
#[test]
fn learn_refuses_a_model_whose_killed_server_left_corrections() {
    let dir = tempfile::tempdir().unwrap();
    let model = mail_model(dir.path(), "mail.cwm");
    let corrections = corrections();
    let server = Server::start(dir.path(), &["-m", "mail=mail.cwm"]);
    let url = server.url.clone();
    for (label, document) in &corrections[..2] {
        let answer = server.post(&format!("/learn?label={label}"), document);
        assert_eq!(answer.status, 200);
    }
    server.kill();
    let before = std::fs::read(&model).unwrap();
    for fallback in [false, true] {
        let mut cmd = cwtext();
        cmd.args(["learn", "--label", "spam", "-m"]).arg(&model);
        if fallback {
            cmd.args(["--server", &url, "--server-fallback", "local"]);
        }
        let out = cmd.write_stdin(corrections[2].1.clone()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("mail.cwm.journal holds corrections a cwtext serve acknowledged"),
            "{}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("start `cwtext serve -m"),
            "{}",
            stderr(&out)
        );
        assert!(
            std::fs::read(&model).unwrap() == before,
            "the model was changed"
        );
    }
    let server = Server::start(dir.path(), &["-m", "mail=mail.cwm"]);
    assert!(
        server.stderr().contains("replayed 2 correction(s)"),
        "{}",
        server.stderr()
    );
    assert!(server.terminate().success());
    learn_with_the_command(&model, &corrections[2..3]);
}

/// `kill -9` after acknowledged corrections, and a torn record at the journal's end (a write
/// cut short): the restarted server replays the whole records once, drops the torn one, and
/// its model is byte for byte `learn`'s. A snapshot interrupted after its rename is not
/// applied twice.
#[test]
fn killed_server_replays_its_journal_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let model = mail_model(dir.path(), "mail.cwm");
    let reference = copy(&model, &dir.path().join("reference.cwm"));
    let corrections = corrections();
    let server = Server::start(dir.path(), &["-m", "mail=mail.cwm"]);
    for (label, document) in &corrections[..4] {
        assert_eq!(
            server
                .post(&format!("/learn?label={label}"), document)
                .status,
            200
        );
    }
    server.kill();
    let journal = dir.path().join("mail.cwm.journal");
    let whole = std::fs::read(&journal).unwrap();
    // Half of one more record, as a write cut short by the kill would leave it.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&journal)
        .unwrap();
    f.write_all(&[200, 0, 0, 0, 1, 2, 3, 4, 1, b's', b'p'])
        .unwrap();
    drop(f);

    let start = Instant::now();
    let server = Server::start(dir.path(), &["-m", "mail=mail.cwm"]);
    let took = start.elapsed();
    assert!(took < Duration::from_secs(5), "{took:?}");
    let log = server.stderr();
    assert!(log.contains("replayed 4 correction(s)"), "{log}");
    assert!(log.contains("dropped 11 byte(s)"), "{log}");
    // Replayed and snapshotted at start: the file already holds the four.
    let mut expected = copy(&reference, &dir.path().join("four.cwm"));
    learn_with_the_command(&expected, &corrections[..4]);
    assert!(std::fs::read(&model).unwrap() == std::fs::read(&expected).unwrap());
    assert!(std::fs::read(&journal).unwrap().len() < whole.len());

    // Two more, then kill -9 again and restart: six in all, each once.
    for (label, document) in &corrections[4..] {
        assert_eq!(
            server
                .post(&format!("/learn?label={label}"), document)
                .status,
            200
        );
    }
    server.kill();
    let server = Server::start(dir.path(), &["-m", "mail=mail.cwm"]);
    assert!(
        server.stderr().contains("replayed 2 correction(s)"),
        "{}",
        server.stderr()
    );
    assert!(server.terminate().success());
    learn_with_the_command(&reference, &corrections);
    assert!(std::fs::read(&model).unwrap() == std::fs::read(&reference).unwrap());

    // A crash between a snapshot's rename and the journal's reset: the journal's base is the
    // old file, its last mark the new one. Made by hand: the journal of `four.cwm`'s start
    // (base = the original model) with the four corrections and a mark naming four.cwm.
    expected = dir.path().join("four.cwm");
    let four_crc = u32::from_le_bytes(
        std::fs::read(&expected).unwrap()
            [std::fs::metadata(&expected).unwrap().len() as usize - 4..]
            .try_into()
            .unwrap(),
    );
    let mut stale = whole.clone();
    let payload = [&[2u8][..], &four_crc.to_le_bytes()].concat();
    stale.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    stale.extend_from_slice(&crc32(&payload).to_le_bytes());
    stale.extend_from_slice(&payload);
    let four_model = dir.path().join("served-four.cwm");
    std::fs::copy(&expected, &four_model).unwrap();
    std::fs::write(dir.path().join("served-four.cwm.journal"), &stale).unwrap();
    let server = Server::start(dir.path(), &["-m", "four=served-four.cwm"]);
    let log = server.stderr();
    assert!(log.contains("4 were already in the model file"), "{log}");
    let status = server.terminate();
    let log = std::fs::read_to_string(dir.path().join(log_name(&dir))).unwrap_or_default();
    assert!(status.success(), "{status:?} {log}");
    assert!(std::fs::read(&four_model).unwrap() == std::fs::read(&expected).unwrap());

    // A journal for another model file entirely (replaced while the server was down) with
    // corrections pending: refused, never merged, and the journal is kept.
    std::fs::write(dir.path().join("served-four.cwm.journal"), &whole).unwrap();
    std::fs::copy(&expected, &four_model).unwrap();
    let refused = Server::try_start(dir.path(), &["-m", "four=served-four.cwm"])
        .err()
        .unwrap();
    assert!(refused.contains("never merged"), "{refused}");
    assert_eq!(
        std::fs::read(dir.path().join("served-four.cwm.journal")).unwrap(),
        whole
    );
}

/// The newest server log in `dir`.
fn log_name(dir: &tempfile::TempDir) -> PathBuf {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "err"))
        .collect();
    logs.sort();
    logs.pop().unwrap()
}

fn crc32(bytes: &[u8]) -> u32 {
    // CRC-32 (IEEE), bit by bit: the test needs no crate for it.
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn bad_requests_get_a_json_error_and_the_server_keeps_going() {
    let dir = tempfile::tempdir().unwrap();
    mail_model(dir.path(), "mail.cwm");
    let server = Server::start(
        dir.path(),
        &[
            "-m",
            "mail=mail.cwm",
            "-m",
            "spam",
            "--max-body-bytes",
            "2000",
            "--body-timeout",
            "1",
        ],
    );
    let big = vec![b'a'; 5000];
    server
        .post("/classify", &big)
        .assert_error(413, "larger than 2000 bytes");
    server
        .post("/learn?label=spam", &big)
        .assert_error(413, "--max-body-bytes");
    server
        .post("/classify?format=xml", b"hi")
        .assert_error(400, "format must be json, text or tsv");
    server
        .post("/classify?top=many", b"hi")
        .assert_error(400, "top must be a whole number");
    server
        .post("/classify?min_prob=2", b"hi")
        .assert_error(400, "min_prob must be a probability");
    server
        .post("/classify?colour=red", b"hi")
        .assert_error(400, "unknown parameter \"colour\"");
    server
        .post("/classify?model=nope", b"hi")
        .assert_error(404, "no model \"nope\" here (served: mail, spam)");
    server
        .post(
            "/classify",
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01",
        )
        .assert_error(415, "binary file");
    server
        .post("/learn", b"hello")
        .assert_error(400, "learn needs label=L");
    server
        .post("/learn?label=spam", b"")
        .assert_error(422, "nothing to learn from it");
    server
        .post(
            "/learn?label=spam",
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01",
        )
        .assert_error(415, "binary file");
    server
        .post("/learn?model=spam&label=spam", b"cheap pills")
        .assert_error(409, "built-in model and read-only");
    server
        .request("GET", "/learn", &[], b"")
        .assert_error(405, "method not allowed");
    server
        .post("/nowhere", b"")
        .assert_error(404, "no such endpoint");
    // A body that never arrives in full: 408 after --body-timeout.
    let mut s = TcpStream::connect(server.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"POST /classify HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly this")
        .unwrap();
    let mut raw = Vec::new();
    let started = Instant::now();
    let _ = s.read_to_end(&mut raw);
    assert!(started.elapsed() < Duration::from_secs(5));
    parse_answer(&raw).assert_error(408, "did not arrive within 1 s");
    // Heads hyper would refuse with a bare 400 or 431: a JSON error naming the problem, and
    // the server still answers.
    // One byte past the bound and no more, so that the server reads all of it before it
    // answers and closes (unread bytes would reset the connection under the answer).
    let mut long_head = b"POST /classify HTTP/1.1\r\nHost: x\r\nX-Long: ".to_vec();
    long_head.resize(400 * 1024 + 1, b'a');
    for (raw, status, says) in [
        (
            &b"\x00\x01garbage\r\n\r\n"[..],
            400,
            "the request line is not METHOD TARGET HTTP/1.1",
        ),
        (
            b"HELO mail.example.com\r\n",
            400,
            "the request line is not METHOD TARGET HTTP/1.1",
        ),
        (
            b"POST /classify HTTP/1.1\r\nHost: x\r\nthis line has no colon\r\n\r\n",
            400,
            "a header line is not NAME: VALUE",
        ),
        (
            b"POST /classify HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n",
            400,
            "Content-Length must be a whole number of bytes, but is \"ten\"",
        ),
        (
            b"POST /classify HTTP/9.9\r\nHost: x\r\n\r\n",
            400,
            "this server speaks HTTP/1.1",
        ),
        // Such a head was handed to hyper, which refuses one past its own buffer with a bare
        // 431 and no body.
        (
            &long_head[..],
            431,
            "the request's head (its request line and header fields) is larger than 400 KiB",
        ),
    ] {
        let mut s = TcpStream::connect(server.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(raw).unwrap();
        let mut answer = Vec::new();
        let _ = s.read_to_end(&mut answer);
        parse_answer(&answer).assert_error(status, says);
    }
    assert_eq!(server.request("GET", "/health", &[], b"").status, 200);
    let model = server.request("GET", "/models", &[], b"").json();
    assert_eq!(model["models"][0]["journal_corrections"], 0);
    assert!(server.terminate().success());
}

/// A label must be a name, as for `cwtext learn`: a query whose percent-encoding is not UTF-8
/// (which the query parser would turn into U+FFFD, a label nobody asked for) and a label with
/// a control character are refused with a 400 before anything is journaled.
#[test]
fn learn_refuses_a_label_that_is_not_a_name() {
    let dir = tempfile::tempdir().unwrap();
    mail_model(dir.path(), "mail.cwm");
    let server = Server::start(dir.path(), &["-m", "mail=mail.cwm"]);
    let mail = std::fs::read(&mails()[0]).unwrap();
    server
        .post("/learn?label=%FF", &mail)
        .assert_error(400, "parameter label is not UTF-8 once percent-decoded");
    server
        .post("/classify?unsure_label=caf%E9", &mail)
        .assert_error(
            400,
            "parameter unsure_label is not UTF-8 once percent-decoded",
        );
    server
        .post("/learn?label=spam%0D%0AX-Label:%20ham", &mail)
        .assert_error(400, "a control character (U+000D)");
    server
        .post(&format!("/learn?label={}", "x".repeat(1025)), &mail)
        .assert_error(400, "more than 1024");
    let models = server.request("GET", "/models", &[], b"").json();
    assert_eq!(
        models["models"][0]["labels"],
        serde_json::json!(["ham", "spam"])
    );
    assert_eq!(models["models"][0]["journal_corrections"], 0);
    // Percent-encoded UTF-8 is a name like any other.
    let answer = server.post("/learn?label=caf%C3%A9", &mail);
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert_eq!(answer.json()["new_labels"], serde_json::json!(["café"]));
    assert!(server.terminate().success());
}

/// Scripts that send a request and shut their side of the connection (`printf … | nc -N`,
/// spamc) get their answer, whether the request came in one write or a byte at a time.
#[test]
fn a_client_that_shuts_its_side_after_the_request_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["-m", "spam"]);
    let post = b"POST /classify HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\ncheap pills";
    let get = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
    for (request, dribble) in [(&post[..], false), (&post[..], true), (&get[..], false)] {
        let mut s = TcpStream::connect(server.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        if dribble {
            for b in request {
                s.write_all(&[*b]).unwrap();
                std::thread::sleep(Duration::from_millis(1));
            }
        } else {
            s.write_all(request).unwrap();
        }
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut raw = Vec::new();
        let _ = s.read_to_end(&mut raw);
        assert!(
            raw.starts_with(b"HTTP/1.1 200 OK"),
            "{:?} (dribbled: {dribble}): {:?}",
            String::from_utf8_lossy(&request[..20]),
            String::from_utf8_lossy(&raw)
        );
    }
    assert!(server.terminate().success());
}

/// SIGTERM while every connection permit is held by clients that have sent nothing (and one
/// more client waits to be accepted): the server stops at once, not when their header
/// timeout ends.
#[test]
fn sigterm_at_the_connection_limit_stops_the_server_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        dir.path(),
        &[
            "-m",
            "spam",
            "--max-connections",
            "2",
            "--header-timeout",
            "60",
        ],
    );
    let silent: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(server.addr()).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let status = server.terminate();
    let took = started.elapsed();
    assert!(status.success(), "{status:?}");
    assert!(took < Duration::from_secs(5), "stopped after {took:?}");
    drop(silent);
}

/// `learn --server` skips a document that is not text or has no word, as local `learn` does
/// (a warning, exit 1, the others learned), instead of stopping at it; all skipped is an error.
#[test]
fn learn_through_the_server_skips_what_local_learn_skips() {
    let dir = tempfile::tempdir().unwrap();
    let model = mail_model(dir.path(), "mail.cwm");
    let local = copy(&model, &dir.path().join("local.cwm"));
    let png = dir.path().join("picture.png");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01").unwrap();
    let mail = mails()[0].clone();
    let server = Server::start(dir.path(), &["-m", "mail=mail.cwm"]);
    let through = |files: &[&Path]| {
        cwtext()
            .args(["learn", "--label", "spam", "--server", &server.url, "-m"])
            .arg(&model)
            .args(files)
            .output()
            .unwrap()
    };
    let out = through(&[&png, &mail]);
    let by_hand = cwtext()
        .args(["learn", "--label", "spam", "-m"])
        .arg(&local)
        .args([&png, &mail])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), by_hand.status.code(), "{}", stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("skipped"), "{}", stderr(&out));
    assert!(stderr(&out).contains("picture.png"), "{}", stderr(&out));
    assert!(stderr(&out).contains("binary file"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("learned 1 document(s)"),
        "{}",
        stderr(&out)
    );
    let out = through(&[&png]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("nothing learned"), "{}", stderr(&out));
    assert!(server.terminate().success());
}

#[test]
fn slow_clients_are_cut_off_by_the_header_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["-m", "spam", "--header-timeout", "1"]);
    let mut s = TcpStream::connect(server.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"POST /classify HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let started = Instant::now();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "{took:?}"
    );
    parse_answer(&raw).assert_error(408, "header did not arrive within 1 s (--header-timeout)");
    // Meanwhile and after, others are answered.
    assert_eq!(server.post("/classify", b"cheap pills").status, 200);
}

#[test]
fn clients_sending_their_bodies_slowly_hold_no_worker_and_bodies_are_budgeted() {
    let dir = tempfile::tempdir().unwrap();
    // Two workers; six clients declare a body and send three bytes of it. They used to hold
    // both workers (and make everyone else wait) until the body timeout, 20 s here.
    let server = Server::start(
        dir.path(),
        &[
            "-m",
            "spam",
            "--max-concurrent",
            "2",
            "--body-timeout",
            "20",
        ],
    );
    let stalled: Vec<TcpStream> = (0..6)
        .map(|_| {
            let mut s = TcpStream::connect(server.addr()).unwrap();
            s.write_all(b"POST /classify HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc")
                .unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    for _ in 0..5 {
        assert_eq!(server.post("/classify", b"cheap pills").status, 200);
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "answered in {:?} while six bodies were stalled",
        started.elapsed()
    );
    drop(stalled);
    // The bodies' memory budget is four largest bodies (at least 256 MiB), reserved by the
    // declared length before a body is read.
    assert_eq!(cwtext::serve::http::body_budget_kib(16 << 20), 256 << 10);
    assert_eq!(cwtext::serve::http::body_budget_kib(100 << 20), 400 << 10);
}

#[test]
fn learning_needs_the_token_when_one_is_set_and_beyond_loopback() {
    let dir = tempfile::tempdir().unwrap();
    mail_model(dir.path(), "mail.cwm");
    // Beyond loopback without a token: refused at start.
    let out = cwtext()
        .current_dir(dir.path())
        .args(["serve", "-m", "spam", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("needs --token-file"),
        "{}",
        stderr(&out)
    );
    // A token file others can read: refused.
    let token = dir.path().join("token");
    std::fs::write(&token, "s3cret\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = cwtext()
        .current_dir(dir.path())
        .args(["serve", "-m", "spam", "--token-file", "token"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("readable by others (mode 644)"),
        "{}",
        stderr(&out)
    );
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    let server = Server::start(
        dir.path(),
        &["-m", "mail=mail.cwm", "--token-file", "token"],
    );
    let mail = std::fs::read(&mails()[0]).unwrap();
    server
        .post("/learn?label=spam", &mail)
        .assert_error(401, "needs the server's token");
    server
        .request(
            "POST",
            "/learn?label=spam",
            &[("Authorization", "Bearer wrong")],
            &mail,
        )
        .assert_error(401, "Authorization: Bearer");
    server.post("/reload", b"").assert_error(401, "token");
    let ok = server.request(
        "POST",
        "/learn?label=spam",
        &[("Authorization", "Bearer s3cret")],
        &mail,
    );
    assert_eq!(ok.status, 200, "{}", String::from_utf8_lossy(&ok.body));
    // Classifying needs no token.
    assert_eq!(server.post("/classify", &mail).status, 200);
    // The client reads its token file with the server's checks: others may not read it, and
    // it may not be empty (it was sent as `Bearer ` and refused as unauthorised); a good one
    // teaches the model.
    let learn = |token_file: &str| {
        cwtext()
            .current_dir(dir.path())
            .args(["learn", "--server", &server.url, "--token-file", token_file])
            .args(["--server-fallback", "fail", "-m", "mail", "--label", "spam"])
            .arg(&mails()[0])
            .output()
            .unwrap()
    };
    let open = dir.path().join("open-token");
    std::fs::write(&open, "s3cret\n").unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = learn("open-token");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("open-token: the token file is readable by others (mode 644)"),
        "{}",
        stderr(&out)
    );
    let empty = dir.path().join("empty-token");
    std::fs::write(&empty, " \n").unwrap();
    std::fs::set_permissions(&empty, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = learn("empty-token");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("empty-token: the token file is empty"),
        "{}",
        stderr(&out)
    );
    let out = learn("token");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(server.terminate().success());
}

/// `--socket PATH` replaces a socket a killed server left there, but never a file that is not
/// a socket (it deleted `--socket notes.txt`, a slip of the keyboard away from data loss).
#[test]
fn the_socket_path_replaces_a_left_socket_but_no_other_file() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "precious").unwrap();
    let err = dir.path().join("serve.err");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("cwtext"))
        .current_dir(dir.path())
        .args(["serve", "-m", "spam", "--socket"])
        .arg(&notes)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    // Bounded: a server that took the path would serve until killed.
    let status = wait_bounded(&mut child, Duration::from_secs(10));
    let said = std::fs::read_to_string(&err).unwrap();
    assert_eq!(status.code(), Some(2), "{said}");
    assert!(
        said.contains("notes.txt: exists and is not a socket; --socket makes a new one there, so move that file or name another path"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "precious");
    // A socket nobody listens on (as a killed server leaves it) is replaced.
    let left = dir.path().join("left.sock");
    drop(std::os::unix::net::UnixListener::bind(&left).unwrap());
    assert!(left.exists());
    let (mut child, url) = serve_spam_on_socket(dir.path(), &left);
    assert_eq!(url, format!("unix:{}", left.display()));
    signal(child.id(), "TERM");
    assert!(wait_bounded(&mut child, Duration::from_secs(10)).success());
}

/// SIGHUP (a closed terminal, `systemctl reload`) ended the server at once, unsnapshotted: it
/// now checks the model files, says so, and goes on serving; SIGTERM still stops it cleanly.
#[test]
fn a_hangup_reloads_instead_of_ending_the_server() {
    let dir = tempfile::tempdir().unwrap();
    mail_model(dir.path(), "mail.cwm");
    let server = Server::start(dir.path(), &["-m", "mail=mail.cwm"]);
    let pid = server.child.as_ref().unwrap().id();
    signal(pid, "HUP");
    let start = Instant::now();
    while !server
        .stderr()
        .contains("mail: SIGHUP: the model file is unchanged")
    {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mail = std::fs::read(&mails()[0]).unwrap();
    assert_eq!(server.post("/classify", &mail).status, 200);
    assert_eq!(server.post("/learn?label=spam", &mail).status, 200);
    signal(pid, "HUP");
    assert_eq!(server.request("GET", "/health", &[], b"").status, 200);
    assert!(server.terminate().success());
}

/// `cp NEW MODEL` writes the served file in place: cut to nothing, then written piece by piece.
/// A model of 1 MiB or more used to be read through a memory map, and a classification
/// touching a page past the cut killed the server (SIGBUS). It must keep answering from its own
/// copy, refuse the half-written file, and load the new one once it is whole.
#[test]
fn a_model_file_overwritten_in_place_under_load_neither_stops_the_server_nor_is_read_half() {
    let dir = tempfile::tempdir().unwrap();
    let model = mail_model(dir.path(), "mail.cwm");
    assert!(
        std::fs::metadata(&model).unwrap().len() >= 1 << 20,
        "a model the server would have mapped"
    );
    let out = cwtext()
        .args(["train", "news", "-q", "--epochs", "1", "-o"])
        .arg(dir.path().join("news.cwm"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let new = std::fs::read(dir.path().join("news.cwm")).unwrap();
    let server = Server::start(dir.path(), &["-m", "mail=mail.cwm"]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load = classify_until(&server, &stop, |a| a.status.to_string());
    std::thread::sleep(Duration::from_millis(200));
    {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&model)
            .unwrap();
        // Requests keep coming while the file is empty, then while it is part written.
        std::thread::sleep(Duration::from_millis(300));
        for piece in new.chunks(new.len() / 8 + 1) {
            f.write_all(piece).unwrap();
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let labels = |server: &Server| {
        server.request("GET", "/models", &[], b"").json()["models"][0]["labels"].clone()
    };
    let news = serde_json::json!(["rec.sport.hockey", "sci.space", "talk.politics.mideast"]);
    let start = Instant::now();
    while labels(&server) != news {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "not reloaded: {}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let statuses = load
        .join()
        .unwrap_or_else(|_| panic!("the server stopped answering: {}", server.stderr()));
    assert_eq!(statuses.keys().collect::<Vec<_>>(), ["200"], "{statuses:?}");
    let post = std::fs::read(fixtures().join("news/sci.space/test-05593.txt")).unwrap();
    assert_eq!(server.post("/classify", &post).json()["label"], "sci.space");
    assert!(server.terminate().success());
}

/// A model file replaced by `train -o` is picked up between requests; replaced again while a
/// correction is pending, it is refused (a log line, learning suspended), never merged.
#[test]
fn a_replaced_model_is_reloaded_unless_corrections_are_pending() {
    let dir = tempfile::tempdir().unwrap();
    let model = mail_model(dir.path(), "mail.cwm");
    let server = Server::start(dir.path(), &["-m", "mail=mail.cwm"]);
    let labels = |server: &Server| {
        server.request("GET", "/models", &[], b"").json()["models"][0]["labels"].clone()
    };
    assert_eq!(labels(&server), serde_json::json!(["ham", "spam"]));
    // Classify requests keep coming while the model is replaced: every one is answered, by
    // the old model or the new one.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load = classify_until(&server, &stop, |a| match a.status {
        200 => a.json()["label"].as_str().unwrap().to_string(),
        s => format!("status {s}"),
    });
    std::thread::sleep(Duration::from_millis(200));
    let out = cwtext()
        .args(["train", "news", "-q", "--epochs", "1", "-o"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let news = serde_json::json!(["rec.sport.hockey", "sci.space", "talk.politics.mideast"]);
    let start = Instant::now();
    while labels(&server) != news {
        assert!(start.elapsed() < Duration::from_secs(5), "not reloaded");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let answers = load.join().unwrap();
    assert!(
        answers.keys().all(|l| !l.starts_with("status")),
        "{answers:?}"
    );
    assert!(
        answers.contains_key("spam") || answers.contains_key("ham"),
        "{answers:?}"
    );
    assert!(
        answers
            .keys()
            .any(|l| news.as_array().unwrap().iter().any(|n| n == l)),
        "{answers:?}"
    );
    assert!(server.stderr().contains("reloaded"), "{}", server.stderr());
    let post = std::fs::read(fixtures().join("news/sci.space/test-05593.txt")).unwrap();
    let answer = server.post("/classify", &post).json();
    assert_eq!(answer["label"], "sci.space");

    // One correction pending, then another train -o: refused.
    assert_eq!(server.post("/learn?label=sci.space", &post).status, 200);
    mail_model(dir.path(), "mail.cwm");
    let answer = server.post("/reload", b"");
    assert_eq!(answer.status, 409);
    assert!(answer.json()["mail"]["error"]
        .as_str()
        .unwrap()
        .contains("not merged"));
    assert_eq!(
        labels(&server),
        news,
        "still the model the correction was made on"
    );
    server
        .post("/learn?label=sci.space", &post)
        .assert_error(409, "learning is suspended");
    assert!(
        server
            .stderr()
            .contains("was replaced by another program while 1 correction(s)"),
        "{}",
        server.stderr()
    );
    // SIGTERM does not overwrite the new file; the journal is kept for the operator.
    let _ = server.terminate();
    let out = cwtext().arg("inspect").arg(&model).output().unwrap();
    assert!(stdout(&out).contains("spam"), "{}", stdout(&out));
    assert!(
        std::fs::read(dir.path().join("mail.cwm.journal"))
            .unwrap()
            .len()
            > 16
    );
}

/// `-m spam` with a file named `spam` in the current directory means the built-in model for
/// `serve` and for `--server` clients, as for the local commands (which warn and use the
/// built-in one): `serve` opened the file, and the client sent the file's path.
#[test]
fn a_built_in_name_means_the_built_in_model_through_the_server_too() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spam"), "notes about spam, not a model\n").unwrap();
    let server = Server::start(dir.path(), &["-m", "spam"]);
    let bytes = std::fs::read(&mails()[3]).unwrap();
    let run = |args: &[&str]| {
        cwtext()
            .current_dir(dir.path())
            .args(args)
            .write_stdin(bytes.clone())
            .output()
            .unwrap()
    };
    let local = run(&["classify", "-m", "spam", "--format", "json"]);
    assert!(local.status.success(), "{}", stderr(&local));
    assert!(stderr(&local).contains("names a built-in model and a file"));
    let remote = run(&[
        "classify",
        "-m",
        "spam",
        "--format",
        "json",
        "--server",
        &server.url,
        "--server-fallback",
        "fail",
    ]);
    assert!(remote.status.success(), "{}", stderr(&remote));
    assert_eq!(stdout(&local), stdout(&remote));
    // The server read `-m spam` as the built-in model too, and said so.
    assert!(
        server.stderr().contains(
            "spam names a built-in model and a file; using the built-in one (write ./spam for the file)"
        ),
        "{}",
        server.stderr()
    );
    assert!(server.terminate().success());
}

/// `classify`, `filter` and `learn --server URL` print what the local commands print, over TCP
/// and a Unix socket; an unreachable server fails loudly, falls back on the local model when
/// asked, and never loses a message in `filter`.
#[test]
fn the_commands_talk_to_a_running_server() {
    let dir = tempfile::tempdir().unwrap();
    let model = mail_model(dir.path(), "mail.cwm");
    let reference = copy(&model, &dir.path().join("reference.cwm"));
    let server = Server::start(dir.path(), &["-m", "mail=mail.cwm"]);
    let mail = mails()[4].clone();
    let bytes = std::fs::read(&mail).unwrap();
    let run = |args: &[&str], stdin: &[u8]| {
        cwtext()
            .current_dir(dir.path())
            .args(args)
            .write_stdin(stdin.to_vec())
            .output()
            .unwrap()
    };
    let local = run(
        &[
            "classify", "-m", "mail.cwm", "--format", "json", "--top", "1",
        ],
        &bytes,
    );
    let remote = run(
        &[
            "classify",
            "--server",
            &server.url,
            "-m",
            "mail",
            "--format",
            "json",
            "--top",
            "1",
        ],
        &bytes,
    );
    assert!(remote.status.success(), "{}", stderr(&remote));
    assert_eq!(stdout(&local), stdout(&remote));
    // Two files by path, text: the same ==> FILE <== blocks; -m as the served file's path.
    let all = mails();
    let files = [mail.to_str().unwrap(), all[30].to_str().unwrap()];
    let local = run(&[&["classify", "-m", "mail.cwm"][..], &files].concat(), b"");
    let remote = run(
        &[
            &["classify", "-m", "mail.cwm", "--server", &server.url][..],
            &files,
        ]
        .concat(),
        b"",
    );
    assert_eq!(stdout(&local), stdout(&remote));
    assert!(stdout(&remote).contains("==> "), "{}", stdout(&remote));
    let local = run(&["filter", "-m", "mail.cwm", "--subject-tag"], &bytes);
    let remote = run(
        &[
            "filter",
            "-m",
            "mail",
            "--subject-tag",
            "--server",
            &server.url,
        ],
        &bytes,
    );
    assert_eq!(local.stdout, remote.stdout);
    assert_eq!(local.status.code(), remote.status.code());

    let corrections = corrections();
    for (label, document) in &corrections {
        let out = run(
            &[
                "learn",
                "--server",
                &server.url,
                "-m",
                "mail",
                "--label",
                label,
            ],
            document,
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("learned 1 document(s) into mail at"),
            "{}",
            stderr(&out)
        );
    }
    assert!(server.terminate().success());
    learn_with_the_command(&reference, &corrections);
    assert!(std::fs::read(&model).unwrap() == std::fs::read(&reference).unwrap());

    // Nobody listens any more.
    let gone = "http://127.0.0.1:9";
    let out = run(&["classify", "--server", gone, "-m", "mail"], &bytes);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot reach cwtext serve at http://127.0.0.1:9"),
        "{}",
        stderr(&out)
    );
    let out = run(
        &[
            "classify",
            "--server",
            gone,
            "--server-fallback",
            "local",
            "-m",
            "mail.cwm",
            "--format",
            "json",
        ],
        &bytes,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("{\"file\":\"-\""),
        "{}",
        stdout(&out)
    );
    let out = run(&["filter", "--server", gone, "-m", "mail"], &bytes);
    assert_eq!(out.status.code(), Some(101));
    let fields = crate::filter::added_fields(&bytes, &out.stdout);
    assert!(
        fields[0].starts_with("X-Cwtext-Error: cannot reach cwtext serve"),
        "{fields:?}"
    );
    let out = run(
        &[
            "filter",
            "--server",
            gone,
            "--server-fallback",
            "local",
            "-m",
            "mail.cwm",
        ],
        &bytes,
    );
    assert_eq!(
        out.stdout,
        run(&["filter", "-m", "mail.cwm"], &bytes).stdout
    );
    let out = run(
        &["learn", "--server", gone, "-m", "mail", "--label", "spam"],
        &bytes,
    );
    assert_eq!(out.status.code(), Some(2));

    // A Unix socket.
    let socket = dir.path().join("cwtext.sock");
    let (mut child, url) = serve_spam_on_socket(dir.path(), &socket);
    assert_eq!(url, format!("unix:{}", socket.display()));
    let out = run(
        &[
            "classify",
            "--server",
            url.as_str(),
            "-m",
            "spam",
            "--format",
            "json",
        ],
        &bytes,
    );
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        stdout(&out),
        stdout(&run(
            &["classify", "-m", "spam", "--format", "json"],
            &bytes
        ))
    );
}

/// A correction through the server says what `learn` says of a model that keeps far fewer
/// documents for its corrections than `train` would now keep: `/learn` answers `outgrown`
/// (null for a model trained now), and `learn --server` warns as local `learn` does.
#[test]
fn learning_through_the_server_says_when_a_model_is_outgrown() {
    let dir = tempfile::tempdir().unwrap();
    let (_, _) = new_and_outgrown_models(dir.path());
    let sentence = b"a warm , funny and moving film".to_vec();
    let server = Server::start(dir.path(), &["-m", "old=old.cwm", "-m", "new=new.cwm"]);
    let answer = server.post("/learn?model=old&label=pos", &sentence);
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert_eq!(
        answer.json()["outgrown"],
        serde_json::json!({"kept_per_label": 32, "train_would_keep": 301})
    );
    let answer = server.post("/learn?model=new&label=pos", &sentence);
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert!(answer.json()["outgrown"].is_null(), "{}", answer.json());
    let learn = |name: &str| {
        let out = cwtext()
            .current_dir(dir.path())
            .args([
                "learn",
                "--server",
                &server.url,
                "-m",
                name,
                "--label",
                "pos",
            ])
            .write_stdin(sentence.clone())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stderr(&out)
    };
    let said = learn("old");
    assert!(
        said.contains(&format!(
            "old at {} keeps 32 documents a label for learn to protect, and `cwtext train` would now keep up to 302 for it",
            server.url
        )),
        "{said}"
    );
    assert!(!learn("new").contains("would now keep"));
}

/// A new folder taught through the server: `/learn` answers how many of its mistakes were of a
/// label added since the probability scale was fitted and learned on the raw variance
/// (`raw_variance`), the count `cwtext learn` prints locally for the same corrections, and
/// `learn --server` prints it as `learn` does. (Before, the server's answer had no such count,
/// and `learn --server` said only how many were mispredicted.)
#[test]
fn a_new_folder_learned_through_the_server_reports_its_raw_variance_corrections() {
    let dir = tempfile::tempdir().unwrap();
    let out = cwtext()
        .args(["train", "news", "-q", "--seed", "1", "-o"])
        .arg(dir.path().join("news.cwm"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let local = copy(&dir.path().join("news.cwm"), &dir.path().join("local.cwm"));
    let ham = files_in(&fixtures().join("mail/ham"));
    // The corrections, in order: (label, mail). Two labels the news model has never seen.
    let steps: Vec<(&str, &PathBuf)> = [
        ("mail", 0),
        ("post", 1),
        ("mail", 2),
        ("mail", 3),
        ("mail", 4),
    ]
    .iter()
    .map(|&(label, i)| (label, &ham[i]))
    .collect();
    let said = |out: &std::process::Output| {
        assert!(out.status.success(), "{}", stderr(out));
        stderr(out)
    };
    let raw_phrase = " of them of a label added since the probability scale was fitted, learned on the raw variance as training learns its mistakes";
    let server = Server::start(dir.path(), &["-m", "news=news.cwm"]);
    // The first, through `learn --server`: a label never seen, so misfiled and learned on the raw
    // variance, and the line says so as the local `learn` does.
    let (label, mail) = steps[0];
    let out = cwtext()
        .args([
            "learn",
            "--label",
            label,
            "--server",
            &server.url,
            "-m",
            "news",
        ])
        .arg(mail)
        .output()
        .unwrap();
    let remote = said(&out);
    assert!(
        remote.contains(&format!("1 mispredicted before the update, 1{raw_phrase}")),
        "{remote}"
    );
    // The rest through POST /learn, reading the answer's counts.
    let (mut mistakes, mut raw) = (1, 1);
    for (i, (label, mail)) in steps.iter().enumerate().skip(1) {
        let answer = server.post(
            &format!("/learn?label={label}"),
            &std::fs::read(mail).unwrap(),
        );
        assert_eq!(
            answer.status,
            200,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        let v = answer.json();
        if i == 1 {
            // Another label never seen: misfiled, and learned on the raw variance.
            assert_eq!(
                (v["mistakes"].as_u64(), v["raw_variance"].as_u64()),
                (Some(1), Some(1)),
                "{v}"
            );
        }
        mistakes += v["mistakes"].as_u64().unwrap();
        raw += v["raw_variance"].as_u64().unwrap();
    }
    assert!(server.terminate().success());
    // The same corrections learned locally, one command each, say the same counts.
    let count = |said: &str, phrase: &str| -> u64 {
        said.match_indices(phrase)
            .map(|(at, _)| {
                let digits: String = said[..at]
                    .chars()
                    .rev()
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits
                    .chars()
                    .rev()
                    .collect::<String>()
                    .parse::<u64>()
                    .unwrap()
            })
            .sum()
    };
    let mut local_said = String::new();
    for (label, mail) in &steps {
        let out = cwtext()
            .args(["learn", "--label", label, "-m"])
            .arg(&local)
            .arg(mail)
            .output()
            .unwrap();
        local_said += &said(&out);
    }
    assert_eq!(
        (mistakes, raw),
        (
            count(&local_said, " mispredicted before the update"),
            count(&local_said, raw_phrase)
        ),
        "server: {mistakes} {raw}; local: {local_said}"
    );
}
