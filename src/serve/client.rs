//! A small blocking client of `cwtext serve`, for `classify`, `filter` and `learn --server URL`:
//! one request on a current-thread tokio runtime with hyper's own client connection, over TCP
//! (`http://host:port`) or a Unix socket (`unix:/path`).

use std::path::PathBuf;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;

/// Where a server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// `host:port`.
    Tcp(String),
    Unix(PathBuf),
}

impl Endpoint {
    /// `http://host:port` (a trailing `/` allowed) or `unix:/path`.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        if let Some(path) = url.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(format!("{url}: no socket path after unix:"));
            }
            return Ok(Endpoint::Unix(PathBuf::from(path)));
        }
        let Some(rest) = url.strip_prefix("http://") else {
            return Err(format!(
                "{url}: a server URL is http://HOST:PORT or unix:/PATH (https is not spoken: put a TLS proxy in front, or use a Unix socket)"
            ));
        };
        let host = rest.trim_end_matches('/');
        if host.is_empty() || host.contains('/') {
            return Err(format!("{url}: expected http://HOST:PORT with no path"));
        }
        let with_port = if host
            .rsplit_once(':')
            .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
        {
            host.to_string()
        } else {
            format!("{host}:80")
        };
        Ok(Endpoint::Tcp(with_port))
    }
}

/// A server's answer.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The `error` of a JSON error answer, or the body as text.
    pub fn error_message(&self) -> String {
        serde_json::from_slice::<serde_json::Value>(&self.body)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_string))
            .unwrap_or_else(|| String::from_utf8_lossy(&self.body).trim().to_string())
    }
}

/// Percent-encodes a query value.
pub fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A query string from (name, value) pairs: `?a=1&b=x%20y` (empty without pairs).
pub fn query(pairs: &[(&str, String)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", encode(v)))
        .collect();
    format!("?{}", parts.join("&"))
}

/// Sends one request and waits (at most `timeout`) for the whole answer; an error when the
/// server cannot be reached or does not answer in time.
pub fn call(
    endpoint: &Endpoint,
    method: &str,
    path_and_query: &str,
    token: Option<&str>,
    body: Vec<u8>,
    timeout: Duration,
) -> Result<Answer, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    let mut request = hyper::Request::builder()
        .method(method)
        .uri(path_and_query)
        .header(
            hyper::header::HOST,
            match endpoint {
                Endpoint::Tcp(host) => host.as_str(),
                Endpoint::Unix(_) => "localhost",
            },
        );
    if let Some(t) = token {
        request = request.header(hyper::header::AUTHORIZATION, format!("Bearer {t}"));
    }
    let request = request
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| format!("bad request: {e}"))?;
    runtime.block_on(async {
        let answer = async {
            match endpoint {
                Endpoint::Tcp(addr) => {
                    let s = tokio::net::TcpStream::connect(addr.as_str())
                        .await
                        .map_err(|e| format!("cannot connect: {e}"))?;
                    let _ = s.set_nodelay(true);
                    send(s, request).await
                }
                Endpoint::Unix(path) => {
                    let s = tokio::net::UnixStream::connect(path)
                        .await
                        .map_err(|e| format!("cannot connect: {e}"))?;
                    send(s, request).await
                }
            }
        };
        tokio::time::timeout(timeout, answer)
            .await
            .unwrap_or_else(|_| Err(format!("no answer within {} s", timeout.as_secs_f64())))
    })
}

async fn send<IO>(io: IO, request: hyper::Request<Full<Bytes>>) -> Result<Answer, String>
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| format!("cannot speak HTTP: {e}"))?;
    tokio::spawn(connection);
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("no answer: {e}"))?;
    let status = response.status().as_u16();
    let (parts, body) = response.into_parts();
    let body = body
        .collect()
        .await
        .map_err(|e| format!("answer cut short: {e}"))?
        .to_bytes()
        .to_vec();
    Ok(Answer {
        status,
        headers: parts.headers,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_queries() {
        assert_eq!(
            Endpoint::parse("http://127.0.0.1:8470/").unwrap(),
            Endpoint::Tcp("127.0.0.1:8470".into())
        );
        assert_eq!(
            Endpoint::parse("http://localhost").unwrap(),
            Endpoint::Tcp("localhost:80".into())
        );
        assert_eq!(
            Endpoint::parse("unix:/run/c.sock").unwrap(),
            Endpoint::Unix("/run/c.sock".into())
        );
        assert!(Endpoint::parse("https://x:1")
            .unwrap_err()
            .contains("https"));
        assert!(Endpoint::parse("http://x:1/path").is_err());
        assert_eq!(
            query(&[("label", "Work/Pro jects".into()), ("model", "m".into())]),
            "?label=Work%2FPro%20jects&model=m"
        );
        assert_eq!(encode("Entwürfe"), "Entw%C3%BCrfe");
    }
}
