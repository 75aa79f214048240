//! Load generator for `cwtext serve` (benches/serve/run.sh runs it): keep-alive HTTP/1.1
//! connections on loopback, each sending one request after the other, bounded by a request
//! count and a time limit; prints one JSON line of counts, rate and latency percentiles.
//!
//! ```text
//! serve_load classify URL DIR [--connections 32] [--requests N] [--seconds S] [--model NAME]
//! serve_load mixed URL DIR [--connections 32] [--learners 8] [--requests N] [--seconds S]
//! serve_load crash CWTEXT MODEL DIR [--rounds 20] [--learn-log FILE]
//! ```
//!
//! DIR holds documents, one folder per label (the folder is the correction's label for learn).
//! `crash` starts `CWTEXT serve -m m=MODEL`, runs classify load and one learner (one correction
//! in flight at a time, so the order of acknowledged corrections is known), kills the server
//! with SIGKILL at a random moment, restarts it (timing how long until it answers), checks the
//! model's document count, and at the end writes the acknowledged corrections (plus any one in
//! flight that the journal had made durable) as a replay list for `cwtext learn`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| default.to_string())
}

/// (label, path, bytes) of every file below DIR/<label>/.
fn corpus(dir: &Path) -> Vec<(String, PathBuf, Bytes)> {
    let mut out = Vec::new();
    let mut labels: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    labels.sort();
    for l in labels.iter().filter(|p| p.is_dir()) {
        let mut files: Vec<_> = std::fs::read_dir(l)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let label = l.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = Bytes::from(std::fs::read(&f).unwrap());
            out.push((label, f, bytes));
        }
    }
    assert!(!out.is_empty(), "no documents below {}", dir.display());
    out
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(addr: &str) -> Sender {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    sender
}

/// One request on a kept-alive connection: status and body.
async fn post(
    sender: &mut Sender,
    addr: &str,
    path: &str,
    body: Bytes,
) -> Result<(u16, Bytes), String> {
    sender.ready().await.map_err(|e| e.to_string())?;
    let req = hyper::Request::post(path)
        .header(hyper::header::HOST, addr)
        .body(Full::new(body))
        .unwrap();
    let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok((status, body))
}

#[derive(Default)]
struct Stats {
    latencies: Mutex<Vec<Duration>>,
    errors: AtomicU64,
}

impl Stats {
    fn summary(&self, what: &str, seconds: f64) -> serde_json::Value {
        let mut l = self.latencies.lock().unwrap().clone();
        l.sort();
        let pct = |p: f64| {
            if l.is_empty() {
                0.0
            } else {
                l[((l.len() as f64 * p).ceil() as usize).clamp(1, l.len()) - 1].as_secs_f64() * 1e3
            }
        };
        serde_json::json!({
            "what": what,
            "requests": l.len(),
            "errors": self.errors.load(Ordering::Relaxed),
            "seconds": seconds,
            "per_second": l.len() as f64 / seconds,
            "p50_ms": pct(0.50),
            "p99_ms": pct(0.99),
            "max_ms": pct(1.0),
        })
    }
}

/// `connections` clients sending `path` requests with the corpus's documents until `budget`
/// requests in all or `deadline` or `stop`.
#[allow(clippy::too_many_arguments)]
async fn load(
    addr: String,
    docs: Arc<Vec<(String, PathBuf, Bytes)>>,
    connections: usize,
    budget: u64,
    deadline: Instant,
    learn: bool,
    model: String,
    stats: Arc<Stats>,
    stop: Arc<AtomicBool>,
) {
    let sent = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for c in 0..connections {
        let (addr, docs, stats, sent, stop, model) = (
            addr.clone(),
            docs.clone(),
            stats.clone(),
            sent.clone(),
            stop.clone(),
            model.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut sender = connect(&addr).await;
            let mut i = c * 7919;
            while Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
                if sent.fetch_add(1, Ordering::Relaxed) >= budget {
                    break;
                }
                let (label, _, body) = &docs[i % docs.len()];
                i += 1;
                let path = if learn {
                    format!("/learn?model={model}&label={label}")
                } else {
                    format!("/classify?model={model}")
                };
                let t = Instant::now();
                match post(&mut sender, &addr, &path, body.clone()).await {
                    Ok((200, _)) => stats.latencies.lock().unwrap().push(t.elapsed()),
                    Ok(_) => {
                        stats.errors.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(_) => {
                        stats.errors.fetch_add(1, Ordering::Relaxed);
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        match tokio::net::TcpStream::connect(&addr).await {
                            Ok(_) => sender = connect(&addr).await,
                            Err(_) => break,
                        }
                    }
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(arg(&args, "--threads", "2").parse().unwrap())
        .enable_all()
        .build()
        .unwrap();
    match args.get(1).map(String::as_str) {
        Some("classify") | Some("mixed") => runtime.block_on(throughput(&args)),
        Some("crash") => runtime.block_on(crash(&args)),
        _ => {
            eprintln!("usage: serve_load classify|mixed URL DIR … | crash CWTEXT MODEL DIR …");
            std::process::exit(2);
        }
    }
}

async fn throughput(args: &[String]) {
    let addr = args[2]
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let docs = Arc::new(corpus(Path::new(&args[3])));
    let connections: usize = arg(args, "--connections", "32").parse().unwrap();
    let learners: usize = arg(args, "--learners", "8").parse().unwrap();
    let requests: u64 = arg(args, "--requests", "200000").parse().unwrap();
    let seconds: f64 = arg(args, "--seconds", "10").parse().unwrap();
    let model = arg(args, "--model", "m");
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds);
    let stop = Arc::new(AtomicBool::new(false));
    let classify = Arc::new(Stats::default());
    let learn = Arc::new(Stats::default());
    let c = tokio::spawn(load(
        addr.clone(),
        docs.clone(),
        connections,
        requests,
        deadline,
        false,
        model.clone(),
        classify.clone(),
        stop.clone(),
    ));
    if args[1] == "mixed" {
        let l = tokio::spawn(load(
            addr,
            docs,
            learners,
            requests,
            deadline,
            true,
            model,
            learn.clone(),
            stop,
        ));
        let _ = l.await;
    }
    let _ = c.await;
    let took = start.elapsed().as_secs_f64();
    println!("{}", classify.summary("classify", took));
    if args[1] == "mixed" {
        println!("{}", learn.summary("learn", took));
    }
}

/// Waits until the server at `addr` answers /health; the time it took.
async fn wait_up(addr: &str, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Ok(s) = tokio::net::TcpStream::connect(addr).await {
            if let Ok((mut sender, conn)) =
                hyper::client::conn::http1::handshake(TokioIo::new(s)).await
            {
                tokio::spawn(conn);
                let req = hyper::Request::get("/health")
                    .header(hyper::header::HOST, addr)
                    .body(Full::new(Bytes::new()))
                    .unwrap();
                if let Ok(r) = sender.send_request(req).await {
                    if r.status() == 200 {
                        return Some(start.elapsed());
                    }
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    None
}

fn start_server(bin: &str, model: &str, port: u16) -> std::process::Child {
    std::process::Command::new(bin)
        .args([
            "serve",
            "-q",
            "-m",
            &format!("m={model}"),
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

async fn documents_trained(addr: &str) -> u64 {
    let s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(s))
        .await
        .unwrap();
    tokio::spawn(conn);
    let req = hyper::Request::get("/models")
        .header(hyper::header::HOST, addr)
        .body(Full::new(Bytes::new()))
        .unwrap();
    let body = sender
        .send_request(req)
        .await
        .unwrap()
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes();
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    v["models"][0]["training"]["documents"].as_u64().unwrap()
}

async fn crash(args: &[String]) {
    use rand::{Rng, SeedableRng};
    let bin = args[2].clone();
    let model = args[3].clone();
    let docs = Arc::new(corpus(Path::new(&args[4])));
    let rounds: usize = arg(args, "--rounds", "20").parse().unwrap();
    let log_path = PathBuf::from(arg(args, "--learn-log", "acknowledged.tsv"));
    let port: u16 = arg(args, "--port", "18471").parse().unwrap();
    let addr = format!("127.0.0.1:{port}");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(arg(args, "--seed", "1").parse().unwrap());
    let mut child = start_server(&bin, &model, port);
    wait_up(&addr, Duration::from_secs(10))
        .await
        .expect("the server starts");
    let base = documents_trained(&addr).await;
    // (documents_trained after it, index into docs): acknowledged corrections.
    let mut acknowledged: Vec<(u64, usize)> = Vec::new();
    let mut in_flight_applied = Vec::new();
    let mut restart_ms = Vec::new();
    let mut next = 0usize;
    for round in 0..rounds {
        let stop = Arc::new(AtomicBool::new(false));
        let classify = tokio::spawn(load(
            addr.clone(),
            docs.clone(),
            8,
            u64::MAX,
            Instant::now() + Duration::from_secs(30),
            false,
            "m".into(),
            Arc::new(Stats::default()),
            stop.clone(),
        ));
        let kill_after = Duration::from_millis(rng.gen_range(50..600));
        let started = Instant::now();
        let mut sender = connect(&addr).await;
        while started.elapsed() < kill_after {
            let i = next % docs.len();
            let (label, _, body) = &docs[i];
            match post(
                &mut sender,
                &addr,
                &format!("/learn?model=m&label={label}"),
                body.clone(),
            )
            .await
            {
                Ok((200, body)) => {
                    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
                    acknowledged.push((v["documents_trained"].as_u64().unwrap(), i));
                    next += 1;
                }
                other => panic!("learn failed before the kill: {other:?}"),
            }
        }
        // kill -9 with one correction in flight.
        let i = next % docs.len();
        let (label, _, body) = &docs[i];
        let flight = {
            let addr = addr.clone();
            let label = label.clone();
            let body = body.clone();
            tokio::spawn(async move {
                post(
                    &mut sender,
                    &addr,
                    &format!("/learn?model=m&label={label}"),
                    body,
                )
                .await
            })
        };
        tokio::time::sleep(Duration::from_micros(rng.gen_range(0..3000))).await;
        child.kill().unwrap();
        child.wait().unwrap();
        stop.store(true, Ordering::Relaxed);
        let _ = classify.await;
        let answered = flight.await.unwrap();
        let pending = if let Ok((200, body)) = &answered {
            let v: serde_json::Value = serde_json::from_slice(body).unwrap();
            acknowledged.push((v["documents_trained"].as_u64().unwrap(), i));
            next += 1;
            None
        } else {
            Some(i)
        };
        child = start_server(&bin, &model, port);
        let up = wait_up(&addr, Duration::from_secs(10))
            .await
            .expect("the server comes back");
        restart_ms.push(up.as_secs_f64() * 1e3);
        let trained = documents_trained(&addr).await;
        let expected = base + acknowledged.len() as u64 + in_flight_applied.len() as u64;
        // The correction in flight at the kill may have been made durable without its answer.
        if trained == expected + 1 {
            let i = pending.expect("one in flight");
            in_flight_applied.push((trained, i));
            next += 1;
        } else {
            assert_eq!(
                trained, expected,
                "round {round}: the model's count after the restart"
            );
        }
        eprintln!(
            "round {round}: killed after {} ms, {} acknowledged in all, back in {:.0} ms, documents {trained}",
            kill_after.as_millis(),
            acknowledged.len(),
            up.as_secs_f64() * 1e3
        );
    }
    // Stop cleanly (SIGTERM: snapshot) for the byte check.
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    child.wait().unwrap();
    let mut all: Vec<(u64, usize)> = acknowledged
        .iter()
        .chain(&in_flight_applied)
        .cloned()
        .collect();
    all.sort();
    for (k, (seq, _)) in all.iter().enumerate() {
        assert_eq!(
            *seq,
            base + k as u64 + 1,
            "every correction exactly once, in order"
        );
    }
    let mut log = String::new();
    for (_, i) in &all {
        log.push_str(&format!("{}\t{}\n", docs[*i].0, docs[*i].1.display()));
    }
    std::fs::write(&log_path, log).unwrap();
    restart_ms.sort_by(f64::total_cmp);
    println!(
        "{}",
        serde_json::json!({
            "what": "crash",
            "rounds": rounds,
            "acknowledged": acknowledged.len(),
            "in_flight_made_durable": in_flight_applied.len(),
            "restart_ms_median": restart_ms[restart_ms.len() / 2],
            "restart_ms_max": restart_ms.last(),
            "replay_list": log_path.display().to_string(),
        })
    );
}
