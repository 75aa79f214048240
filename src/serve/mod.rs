//! Layer 6, serve: `cwtext serve`, a long-running classifier with a learn API that loses no
//! correction (issue 21). Models stay in memory ([`served`]); corrections are journaled and
//! synced before they are acknowledged ([`journal`]) and written into the model file by
//! snapshots; the HTTP API ([`http`], axum on hyper and tokio) answers with the very bytes
//! `classify`, `filter` and `learn` print, through the same library functions; [`metrics`] is
//! `/metrics`.
//!
//! **May use:** every layer below it. Nothing uses it (the CLI aside).

pub mod client;
pub mod http;
pub mod journal;
pub mod metrics;
pub mod served;
pub mod sniff;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::integrations::lock::ServerMark;
use crate::integrations::shelf;
pub use served::{Durability, Opened, ServedModel};

/// Why the server could not start or keep a model.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Cwtext(#[from] crate::Error),
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Journal { path: PathBuf, message: String },
    /// A start or an operation refused, with why and what to do.
    #[error("{0}")]
    Refused(String),
    #[error("invalid setting: {0}")]
    Setting(String),
}

impl ServeError {
    pub fn io(path: impl AsRef<Path>, error: std::io::Error) -> ServeError {
        ServeError::Io {
            path: path.as_ref().to_path_buf(),
            error,
        }
    }
}

/// Where the server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

/// Where a served model comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    File(PathBuf),
    /// A built-in model, by its shelf name.
    Shelf(String),
}

/// `cwtext serve`'s settings as given; [`ServeRequest::plan`] checks them once.
#[derive(Debug, Clone)]
pub struct ServeRequest {
    /// (name, source); empty: the built-in models.
    pub models: Vec<(String, ModelSource)>,
    pub listen: Listen,
    /// A file holding the token that learn and reload need (mode 0600).
    pub token_file: Option<PathBuf>,
    pub max_body_bytes: usize,
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub max_concurrent: usize,
    pub max_connections: usize,
    pub durability: Durability,
}

impl Default for ServeRequest {
    fn default() -> Self {
        ServeRequest {
            models: Vec::new(),
            listen: Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], 8470))),
            token_file: None,
            max_body_bytes: crate::text::pipeline::DEFAULT_MAX_DOCUMENT_BYTES,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_concurrent: 64,
            max_connections: 1024,
            durability: Durability::default(),
        }
    }
}

/// Checked settings: the only way to a [`Server`].
#[derive(Debug, Clone)]
pub struct ServePlan {
    request: ServeRequest,
    token: Option<String>,
    /// No `-m` was given, so the built-in models are served and `/filter` without `model=`
    /// uses the built-in spam model, as `cwtext filter` does.
    shelf_by_default: bool,
}

impl ServeRequest {
    pub fn plan(mut self) -> Result<ServePlan, ServeError> {
        let positive = |v: usize, what: &str| {
            if v == 0 {
                Err(ServeError::Setting(format!(
                    "{what} must be at least 1, but is 0"
                )))
            } else {
                Ok(())
            }
        };
        positive(self.max_body_bytes, "--max-body-bytes")?;
        // A journal record's length is 32 bits.
        if self.max_body_bytes > (u32::MAX as usize) - (1 << 16) {
            return Err(ServeError::Setting(format!(
                "--max-body-bytes must be below 4 GiB, but is {}",
                self.max_body_bytes
            )));
        }
        positive(self.max_concurrent, "--max-concurrent")?;
        positive(self.max_connections, "--max-connections")?;
        positive(self.durability.snapshot_every, "--snapshot-every")?;
        for (what, d) in [
            ("--header-timeout", self.header_timeout),
            ("--body-timeout", self.body_timeout),
            ("--snapshot-interval", self.durability.snapshot_interval),
        ] {
            if d.is_zero() {
                return Err(ServeError::Setting(format!("{what} must be more than 0 s")));
            }
        }
        let shelf_by_default = self.models.is_empty();
        if shelf_by_default {
            self.models = shelf::SHELF
                .iter()
                .map(|m| (m.name.to_string(), ModelSource::Shelf(m.name.to_string())))
                .collect();
        }
        let mut names = std::collections::BTreeSet::new();
        for (name, source) in &self.models {
            if name.is_empty() || !names.insert(name.clone()) {
                return Err(ServeError::Setting(format!(
                    "model names must be unique and not empty, but {name:?} is given twice or empty"
                )));
            }
            if let ModelSource::Shelf(s) = source {
                if shelf::find(s).is_none() {
                    return Err(ServeError::Setting(format!(
                        "no built-in model {s:?} ({})",
                        shelf::names()
                    )));
                }
            }
        }
        let token = match &self.token_file {
            None => None,
            Some(path) => Some(read_token(path)?),
        };
        if let Listen::Tcp(addr) = &self.listen {
            if !addr.ip().is_loopback() && token.is_none() {
                return Err(ServeError::Setting(format!(
                    "listening on {addr}, beyond this machine, needs --token-file FILE (a secret, mode 0600) so that nobody else can teach the models"
                )));
            }
        }
        Ok(ServePlan {
            request: self,
            token,
            shelf_by_default,
        })
    }
}

/// Reads a token file, for the server (`--token-file`) and for its clients (`learn --server
/// … --token-file`): refused when others may read it (a secret that teaches the models) or
/// when it holds nothing but white space.
pub fn read_token(path: &Path) -> Result<String, ServeError> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).map_err(|e| ServeError::io(path, e))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(ServeError::Setting(format!(
            "{}: the token file is readable by others (mode {mode:03o}); `chmod 600 {}`",
            path.display(),
            path.display()
        )));
    }
    let token = std::fs::read_to_string(path).map_err(|e| ServeError::io(path, e))?;
    let token = token.trim().to_string();
    if token.is_empty() {
        return Err(ServeError::Setting(format!(
            "{}: the token file is empty",
            path.display()
        )));
    }
    Ok(token)
}

enum Listener {
    Tcp(tokio::net::TcpListener),
    Unix(tokio::net::UnixListener, PathBuf),
}

/// A bound server with its models open, ready to [`Server::serve`].
pub struct Server {
    url: String,
    listener: Listener,
    state: Arc<http::AppState>,
    header_timeout: Duration,
    max_connections: usize,
    _marks: Vec<ServerMark>,
    /// What opening each model file did.
    pub opened: Vec<(String, Opened)>,
}

impl ServePlan {
    /// Binds the address, claims the model files (`MODEL.server`), opens the models (replaying
    /// journals left behind). Must run inside a tokio runtime.
    pub async fn bind(self) -> Result<Server, ServeError> {
        let r = self.request;
        let (listener, url) = match &r.listen {
            Listen::Tcp(addr) => {
                let l = tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|e| ServeError::Refused(format!("cannot listen on {addr}: {e}")))?;
                let local = l
                    .local_addr()
                    .map_err(|e| ServeError::Refused(e.to_string()))?;
                (Listener::Tcp(l), format!("http://{local}"))
            }
            Listen::Unix(path) => {
                if let Ok(meta) = std::fs::symlink_metadata(path) {
                    // A socket left by a killed server is replaced; a live one is not, nor is
                    // anything that is not a socket.
                    use std::os::unix::fs::FileTypeExt;
                    if !meta.file_type().is_socket() {
                        return Err(ServeError::Refused(format!(
                            "{}: exists and is not a socket; --socket makes a new one there, so move that file or name another path",
                            path.display()
                        )));
                    }
                    if std::os::unix::net::UnixStream::connect(path).is_ok() {
                        return Err(ServeError::Refused(format!(
                            "{}: another server listens there",
                            path.display()
                        )));
                    }
                    std::fs::remove_file(path).map_err(|e| ServeError::io(path, e))?;
                }
                let l =
                    tokio::net::UnixListener::bind(path).map_err(|e| ServeError::io(path, e))?;
                (
                    Listener::Unix(l, path.clone()),
                    format!("unix:{}", path.display()),
                )
            }
        };
        let mut models = Vec::new();
        let mut marks = Vec::new();
        let mut opened = Vec::new();
        for (name, source) in &r.models {
            match source {
                ModelSource::Shelf(s) => {
                    let m = shelf::find(s).expect("checked by plan");
                    models.push(ServedModel::shelf(name, m)?);
                }
                ModelSource::File(path) => {
                    marks.push(ServerMark::hold(path, &url)?);
                    let (served, o) = ServedModel::open(name, path, r.durability)?;
                    models.push(served);
                    opened.push((name.clone(), o));
                }
            }
        }
        // The first model, or the built-in spam model when the built-ins are served because no
        // model was named (telling it by the count of models chose the built-in spam model
        // for a user who named three, one of them `spam`, and put another first).
        let filter_model = models
            .iter()
            .position(|m| self.shelf_by_default && m.file.is_none() && m.name == "spam")
            .unwrap_or(0);
        let state = Arc::new(http::AppState {
            models,
            default_model: 0,
            filter_model,
            token: self.token,
            max_body_bytes: r.max_body_bytes,
            body_timeout: r.body_timeout,
            metrics: metrics::Metrics::new(),
            work: Arc::new(tokio::sync::Semaphore::new(r.max_concurrent)),
            body_budget: Arc::new(tokio::sync::Semaphore::new(http::body_budget_kib(
                r.max_body_bytes,
            ))),
        });
        Ok(Server {
            url,
            listener,
            state,
            header_timeout: r.header_timeout,
            max_connections: r.max_connections,
            _marks: marks,
            opened,
        })
    }
}

impl Server {
    /// `http://127.0.0.1:PORT` or `unix:/path`.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn models(&self) -> &[Arc<ServedModel>] {
        &self.state.models
    }

    /// On every SIGHUP, checks at once whether model files were replaced (as `POST /reload`
    /// does; the server also checks every second) and logs what each model did, as daemons
    /// reload on a hangup.
    pub fn reload_on_hangup(&self, mut hangup: tokio::signal::unix::Signal) {
        let models = self.state.file_models();
        tokio::spawn(async move {
            while hangup.recv().await.is_some() {
                for m in &models {
                    match m.reload().await {
                        served::Reload::Unchanged => {
                            log::info!("{}: SIGHUP: the model file is unchanged", m.name)
                        }
                        // Logged by the reload itself.
                        served::Reload::Reloaded { .. } => {}
                        served::Reload::Refused(why) => {
                            log::warn!("{}: SIGHUP: not reloaded: {why}", m.name)
                        }
                    }
                }
            }
        });
    }

    /// Answers until `shutdown` completes, then stops accepting, lets the requests in flight
    /// finish (up to 30 s), snapshots every model and returns.
    pub async fn serve(
        self,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> Result<(), ServeError> {
        use hyper_util::rt::{TokioIo, TokioTimer};
        // The bound on concurrent requests is taken inside the handlers once a body is in
        // (http::AppState::work): a tower concurrency layer here counted requests still
        // receiving their bodies, so 64 clients sending bodies slowly held every worker.
        let router = http::router(self.state.clone()).layer(
            tower_http::catch_panic::CatchPanicLayer::custom(http::panic_response),
        );
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        let connections = Arc::new(tokio::sync::Semaphore::new(self.max_connections));
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.header_timeout)
            .keep_alive(true)
            // A script that sends its request and shuts its side (`printf … | nc -N`, spamc's
            // way) still gets its answer: without this hyper may close on the early EOF.
            .half_close(true);
        tokio::pin!(shutdown);
        let header_timeout = self.header_timeout;
        // Tells connections still reading their first head that the server stops: they close
        // at once, as hyper closes its idle ones (graceful.shutdown waits for them otherwise).
        let (stopping, stop) = tokio::sync::watch::channel(false);
        // Each connection's first request head is read and checked in its own task
        // (sniff::first_request: a malformed one gets a JSON error), then hyper serves it.
        macro_rules! spawn_connection {
            ($io:expr, $permit:expr) => {{
                let permit = $permit;
                let service = hyper_util::service::TowerToHyperService::new(router.clone());
                let builder = builder.clone();
                let watcher = graceful.watcher();
                let mut stop = stop.clone();
                let io = $io;
                tokio::spawn(async move {
                    let sniffed = tokio::select! {
                        sniffed = sniff::first_request(io, header_timeout) => sniffed,
                        _ = stop.wait_for(|&s| s) => sniff::Sniffed::Done,
                    };
                    if let sniff::Sniffed::Http(io) = sniffed {
                        let conn = builder.serve_connection(TokioIo::new(io), service);
                        let _ = watcher.watch(conn).await;
                    }
                    drop(permit);
                });
            }};
        }
        loop {
            // A connection is accepted only with a permit (--max-connections), and the wait for
            // one watches for shutdown too: taken after accept, it held SIGTERM off while every
            // permit was in use, and the accepted socket waited unserved.
            let permit = tokio::select! {
                permit = connections.clone().acquire_owned() => {
                    permit.expect("the connection permits are never closed")
                }
                _ = &mut shutdown => break,
            };
            match &self.listener {
                Listener::Tcp(l) => tokio::select! {
                    accepted = l.accept() => match accepted {
                        Ok((stream, _)) => {
                            let _ = stream.set_nodelay(true);
                            spawn_connection!(stream, permit)
                        }
                        Err(e) => { log::warn!("accept: {e}"); tokio::time::sleep(Duration::from_millis(10)).await; }
                    },
                    _ = &mut shutdown => break,
                },
                Listener::Unix(l, _) => tokio::select! {
                    accepted = l.accept() => match accepted {
                        Ok((stream, _)) => spawn_connection!(stream, permit),
                        Err(e) => { log::warn!("accept: {e}"); tokio::time::sleep(Duration::from_millis(10)).await; }
                    },
                    _ = &mut shutdown => break,
                },
            }
        }
        let _ = stopping.send(true);
        if let Listener::Unix(_, path) = &self.listener {
            let _ = std::fs::remove_file(path);
        }
        drop(self.listener);
        if tokio::time::timeout(Duration::from_secs(30), graceful.shutdown())
            .await
            .is_err()
        {
            log::warn!("requests still in flight after 30 s were cut off");
        }
        let models = self.state.models.clone();
        let errors = tokio::task::spawn_blocking(move || {
            models
                .iter()
                .filter_map(|m| m.shutdown().err())
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(ServeError::Refused(format!(
                "the last snapshot failed: {}",
                errors.join("; ")
            )))
        }
    }
}

/// SIGHUP, to be given to [`Server::reload_on_hangup`]: installed when called (inside the
/// runtime), so call it before announcing the server, as [`shutdown_signal`]. Without it a
/// hangup (a closed terminal, `systemctl reload`) would end the server at once, unsnapshotted.
pub fn hangup_signal() -> std::io::Result<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
}

/// A future that completes on SIGTERM or SIGINT. The handlers are installed when this is
/// called (inside the runtime), so call it before announcing the server: a signal that comes
/// before the future is first polled is not lost.
pub fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {},
            _ = int.recv() => {},
        }
    })
}
