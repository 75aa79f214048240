//! `cwtext serve`: the models in memory behind an HTTP API (the library's [`cwtext::serve`]);
//! this parses the flags, starts the runtime and prints where it listens.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::common::Ui;
use super::Outcome;
use cwtext::serve::{Durability, Listen, ModelSource, ServeRequest};

const EXAMPLES: &str = "\
Examples:
  cwtext serve -m mail=mail.cwm                  # http://127.0.0.1:8470
  cwtext serve -m mail=mail.cwm -m spam --listen 127.0.0.1:0
  cwtext serve -m mail.cwm --socket /run/cwtext/cwtext.sock
  curl --data-binary @message.eml 'http://127.0.0.1:8470/classify?model=mail&top=3'
  curl --data-binary @message.eml 'http://127.0.0.1:8470/learn?model=mail&label=spam'

Endpoints: POST /classify (what `classify --format json` prints; format=text|tsv, top, min_prob,
unsure_label, samples, sample_seed, probabilities), POST /filter (the message with the added
header fields, as `filter` writes it; the exit code in X-Cwtext-Exit-Code), POST /learn?label=L
(acknowledged once journaled and synced), POST /reload, GET /models, /health, /metrics
(Prometheus). model=NAME picks a model (default: the first -m).

Corrections go to MODEL.journal (synced before the answer) and into MODEL by a snapshot every
--snapshot-every corrections, every --snapshot-interval seconds and on SIGTERM; a journal left by
a killed server is replayed on start. `cwtext learn` on a served model is refused (it names the
server). A model file replaced by `cwtext train -o` is reloaded between requests, unless
corrections are pending (then refused, with a log line).

The first line on standard output is the URL the server listens on.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct ServeArgs {
    /// A model to serve, repeatable: NAME=FILE, NAME=BUILTIN, FILE (named by its file stem) or
    /// a built-in name (topics, spam, sentiment). Default: the built-in models.
    #[arg(short, long = "model", value_name = "NAME=PATH")]
    pub models: Vec<String>,
    /// The TCP address to listen on (anything but loopback needs --token-file).
    #[arg(
        long,
        value_name = "ADDR",
        default_value = "127.0.0.1:8470",
        conflicts_with = "socket"
    )]
    pub listen: SocketAddr,
    /// Listen on a Unix socket instead.
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// A file (mode 0600) holding the token that /learn and /reload then need
    /// (Authorization: Bearer TOKEN).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Largest request body (default: the largest document classify reads, 16 MiB).
    #[arg(long, value_name = "BYTES", default_value_t = cwtext::text::pipeline::DEFAULT_MAX_DOCUMENT_BYTES)]
    pub max_body_bytes: usize,
    /// Seconds a client has to send a request's headers.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub header_timeout: f64,
    /// Seconds a client has to send a request's body.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub body_timeout: f64,
    /// Requests handled at once (more wait).
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub max_concurrent: usize,
    /// Open connections at once (more wait to be accepted).
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_connections: usize,
    /// Snapshot a model after this many corrections.
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    pub snapshot_every: usize,
    /// Snapshot a model when corrections have waited this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub snapshot_interval: f64,
}

fn seconds(v: f64, flag: &str) -> anyhow::Result<Duration> {
    anyhow::ensure!(
        v.is_finite() && v > 0.0,
        "invalid setting: {flag} must be more than 0 seconds, but is {v}"
    );
    Ok(Duration::from_secs_f64(v))
}

/// `-m` values: NAME=PATH, a built-in name, or a file named by its stem. A built-in name means
/// the built-in model even when a file of that name is in the current directory, as for every
/// command ([`cwtext::integrations::shelf::named`]); the warning says so (`./NAME` is the file).
fn model_source(spec: &str) -> (String, ModelSource, Option<String>) {
    use cwtext::integrations::shelf;
    let source = |s: &str| match shelf::named(std::path::Path::new(s)) {
        Some((m, file_too)) => (
            ModelSource::Shelf(m.name.to_string()),
            file_too.then(|| shelf::also_a_file(m.name)),
        ),
        None => (ModelSource::File(PathBuf::from(s)), None),
    };
    match spec.split_once('=') {
        Some((name, path)) => {
            let (s, warning) = source(path);
            (name.to_string(), s, warning)
        }
        None => {
            let (s, warning) = source(spec);
            let name = match &s {
                ModelSource::Shelf(n) => n.clone(),
                ModelSource::File(p) => p
                    .file_stem()
                    .map_or(spec.to_string(), |s| s.to_string_lossy().into_owned()),
            };
            (name, s, warning)
        }
    }
}

pub fn run(args: ServeArgs, threads: Option<usize>, ui: &Ui) -> anyhow::Result<Outcome> {
    super::common::log_info_too(ui.quiet);
    let request = ServeRequest {
        models: args
            .models
            .iter()
            .map(|m| {
                let (name, source, warning) = model_source(m);
                warning.into_iter().for_each(|w| ui.warn(w));
                (name, source)
            })
            .collect(),
        listen: match args.socket {
            Some(path) => Listen::Unix(path),
            None => Listen::Tcp(args.listen),
        },
        token_file: args.token_file,
        max_body_bytes: args.max_body_bytes,
        header_timeout: seconds(args.header_timeout, "--header-timeout")?,
        body_timeout: seconds(args.body_timeout, "--body-timeout")?,
        max_concurrent: args.max_concurrent,
        max_connections: args.max_connections,
        durability: Durability {
            snapshot_every: args.snapshot_every,
            snapshot_interval: seconds(args.snapshot_interval, "--snapshot-interval")?,
            ..Durability::default()
        },
    };
    let plan = request.plan()?;
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = threads {
        runtime.worker_threads(n);
    }
    let runtime = runtime
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    runtime.block_on(async {
        let stop = cwtext::serve::shutdown_signal().context("cannot handle SIGTERM")?;
        let hangup = cwtext::serve::hangup_signal().context("cannot handle SIGHUP")?;
        let server = plan.bind().await?;
        server.reload_on_hangup(hangup);
        for (name, opened) in &server.opened {
            if opened.torn_bytes > 0 {
                ui.warn(format!(
                    "{name}: dropped {} byte(s) of a correction cut short in the journal (never acknowledged)",
                    opened.torn_bytes
                ));
            }
            if opened.replayed > 0 || opened.already_in_model > 0 {
                ui.info(format!(
                    "cwtext: {name}: replayed {} correction(s) from the journal{}",
                    opened.replayed,
                    if opened.already_in_model > 0 {
                        format!(
                            " ({} were already in the model file by a snapshot)",
                            opened.already_in_model
                        )
                    } else {
                        String::new()
                    }
                ));
            }
        }
        let described: Vec<String> = server
            .models()
            .iter()
            .map(|m| match &m.file {
                Some(f) => format!("{} ({})", m.name, f.display()),
                None => format!("{} (built in, read-only)", m.name),
            })
            .collect();
        ui.info(format!(
            "cwtext: listening on {} with {}",
            server.url(),
            described.join(", ")
        ));
        {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            writeln!(out, "{}", server.url())?;
            out.flush()?;
        }
        server.serve(stop).await?;
        ui.info("cwtext: stopped; every model's corrections are in its file");
        anyhow::Ok(())
    })?;
    Ok(Outcome::Success)
}
