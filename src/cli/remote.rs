//! `classify`, `filter` and `learn` with `--server URL`: the request to a running `cwtext
//! serve` (the library's [`cwtext::serve::client`]) and its answer printed as the local command
//! prints it. Each returns [`Remote::Unreachable`] when the server cannot be reached or fails
//! (5xx), for the command to fall back or fail as `--server-fallback` says.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use super::common::{SamplingArgs, ServerArgs, Ui};
use cwtext::serve::client::{self, Endpoint};

/// What asking the server gave.
pub enum Remote<T> {
    Done(T),
    /// Why the server could not answer (names the URL).
    Unreachable(String),
}

pub struct Client {
    url: String,
    endpoint: Endpoint,
    timeout: Duration,
    token: Option<String>,
}

impl Client {
    pub fn new(args: &ServerArgs, token_file: Option<&Path>) -> anyhow::Result<Client> {
        let url = args.server.clone().expect("--server given");
        let endpoint = Endpoint::parse(&url).map_err(|e| anyhow::anyhow!("--server {e}"))?;
        anyhow::ensure!(
            args.server_timeout.is_finite() && args.server_timeout > 0.0,
            "invalid setting: --server-timeout must be more than 0 seconds, but is {}",
            args.server_timeout
        );
        // The server's own checks: a token others may read, or an empty one, is refused here
        // rather than sent (an empty one was sent as `Bearer ` and refused as unauthorised).
        let token = token_file.map(cwtext::serve::read_token).transpose()?;
        Ok(Client {
            url,
            endpoint,
            timeout: Duration::from_secs_f64(args.server_timeout),
            token,
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// One request; `Unreachable` for no answer or a 5xx.
    pub fn post(
        &self,
        path: &str,
        pairs: &[(&str, String)],
        body: Vec<u8>,
    ) -> Remote<client::Answer> {
        let target = format!("{path}{}", client::query(pairs));
        match client::call(
            &self.endpoint,
            "POST",
            &target,
            self.token.as_deref(),
            body,
            self.timeout,
        ) {
            Ok(a) if a.status >= 500 => Remote::Unreachable(format!(
                "cwtext serve at {} failed: {} {}",
                self.url,
                a.status,
                a.error_message()
            )),
            Ok(a) => Remote::Done(a),
            Err(e) => {
                Remote::Unreachable(format!("cannot reach cwtext serve at {}: {e}", self.url))
            }
        }
    }
}

/// The `model=` of a request: a local file's absolute path (the server matches its own files'
/// paths), else the name as given. A built-in model's name is sent as it is even when a file
/// of that name is in the current directory, as every command reads it
/// ([`cwtext::integrations::shelf::named`]).
pub fn model_param(model: Option<&Path>) -> Option<(&'static str, String)> {
    let m = model?;
    let built_in = cwtext::integrations::shelf::named(m).is_some();
    let value = if m.is_file() && !built_in {
        std::fs::canonicalize(m).map_or(m.display().to_string(), |p| p.display().to_string())
    } else {
        m.display().to_string()
    };
    Some(("model", value))
}

/// `--samples`, `--sample-seed` and `--probabilities` as query parameters.
pub fn sampling_params(s: &SamplingArgs) -> Vec<(&'static str, String)> {
    let mut p = vec![
        ("samples", s.samples.to_string()),
        ("sample_seed", s.seed.to_string()),
    ];
    if s.probabilities == super::common::ProbabilityMethod::Exact {
        p.push(("probabilities", "exact".into()));
    }
    p
}

/// Writes `bytes` to standard output.
pub fn print(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}

/// Says that the local model is used instead.
pub fn falling_back(ui: &Ui, why: &str) {
    ui.warn(format!(
        "{why}; using the local model (--server-fallback local)"
    ));
}

/// The error of `--server-fallback fail`.
pub fn unreachable(why: String) -> anyhow::Error {
    anyhow::anyhow!("{why} (--server-fallback local would use the local model instead)")
}
