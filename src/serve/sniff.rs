//! The first request of a connection, read and checked before hyper takes the connection over,
//! so that a request hyper would refuse with a bare `400` and no body (a request line that is
//! not HTTP, a header line without a colon, a `Content-Length` that is not a number) gets the
//! API's JSON error naming the problem, as every other malformed request does.
//!
//! The head is checked with `httparse`, the parser hyper itself uses (so what passes here is
//! what hyper accepts, and this module parses nothing by hand); once it is complete the bytes
//! read so far are handed to hyper in front of the rest of the stream ([`Prefixed`]). Later
//! requests on a kept-alive connection are hyper's alone: a client that has sent one good
//! request speaks HTTP.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

/// The most header fields of a request: hyper's own bound (`http1::Builder::max_headers`'s
/// default).
const MAX_HEADERS: usize = 100;
/// The most bytes of a first request head: a little below the most hyper buffers for a head
/// (its default read buffer limit, 8 KiB + 400 × 4 KiB), so that a head past it is refused here
/// with a JSON error and not by hyper with a bare 431.
const MAX_HEAD_BYTES: usize = 400 * 1024;

/// What the first read of a connection found.
pub enum Sniffed<S> {
    /// A well-formed head: the stream with the bytes already read in front.
    Http(Prefixed<S>),
    /// Answered with a JSON error and closed, or closed by the client before a request.
    Done,
}

/// Reads the first request head of `stream` within `timeout`; a malformed one is answered with
/// `400` (or `431` for too many header fields or a head past [`MAX_HEAD_BYTES`], `408` when the
/// head does not arrive in time) and a JSON body naming the problem.
pub async fn first_request<S>(mut stream: S, timeout: Duration) -> Sniffed<S>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut buffer = Vec::with_capacity(4096);
    let read = async {
        // httparse cannot resume, so every check parses the whole buffer again. Checking after
        // every read made a head sent in small pieces cost quadratic time (a 400 KiB head in
        // 512-byte writes: about 50 ms of the server's CPU per connection). A check now waits
        // for a line end, the buffer doubling, or the bound: each line is checked once it
        // ends, and a head takes at most a parse per line (past [`MAX_HEADERS`] lines it is
        // refused) and a doubling series, not a parse per read.
        let mut checked: usize;
        loop {
            match check(&buffer) {
                Check::Complete => return Ok(true),
                Check::Bad(status, message) => {
                    answer(&mut stream, status, &message).await;
                    return Ok(false);
                }
                Check::Partial => checked = buffer.len(),
            }
            loop {
                let mut chunk = [0u8; 4096];
                let n = stream.read(&mut chunk).await?;
                if n == 0 {
                    return Ok(false);
                }
                buffer.extend_from_slice(&chunk[..n]);
                if chunk[..n].contains(&b'\n')
                    || buffer.len() >= 2 * checked
                    || buffer.len() > MAX_HEAD_BYTES
                {
                    break;
                }
            }
        }
    };
    let outcome: io::Result<bool> = match tokio::time::timeout(timeout, read).await {
        Ok(result) => result,
        Err(_) => {
            if !buffer.is_empty() {
                let message = format!(
                    "the request's header did not arrive within {} s (--header-timeout)",
                    timeout.as_secs_f64()
                );
                answer(&mut stream, "408 Request Timeout", &message).await;
            }
            Ok(false)
        }
    };
    match outcome {
        Ok(true) => Sniffed::Http(Prefixed {
            prefix: buffer,
            at: 0,
            inner: stream,
        }),
        _ => Sniffed::Done,
    }
}

enum Check {
    Partial,
    Complete,
    Bad(&'static str, String),
}

fn check(buffer: &[u8]) -> Check {
    if buffer.is_empty() {
        return Check::Partial;
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(buffer) {
        Ok(httparse::Status::Complete(_)) => match content_length_problem(request.headers) {
            Some(message) => Check::Bad("400 Bad Request", message),
            None => Check::Complete,
        },
        Ok(httparse::Status::Partial) if buffer.len() > MAX_HEAD_BYTES => Check::Bad(
            "431 Request Header Fields Too Large",
            format!(
                "the request's head (its request line and header fields) is larger than {} KiB",
                MAX_HEAD_BYTES / 1024
            ),
        ),
        Ok(httparse::Status::Partial) => Check::Partial,
        Err(httparse::Error::TooManyHeaders) => Check::Bad(
            "431 Request Header Fields Too Large",
            format!("malformed request: more than {MAX_HEADERS} header fields"),
        ),
        // httparse fills the version once the request line is read: without it, the error is
        // in the request line.
        Err(e) => Check::Bad("400 Bad Request", malformed(e, request.version.is_none())),
    }
}

/// What is wrong, in words, with where: the request line or the header line the parser stopped
/// in.
fn malformed(e: httparse::Error, in_request_line: bool) -> String {
    use httparse::Error as E;
    let what = match e {
        E::Version => {
            "the request line does not end in HTTP/1.0 or HTTP/1.1 (this server speaks HTTP/1.1)"
        }
        E::Token | E::NewLine if in_request_line => {
            "the request line is not METHOD TARGET HTTP/1.1"
        }
        E::Token => "a bad character in the request head",
        E::HeaderName => "a header line is not NAME: VALUE (a bad character in a field name)",
        E::HeaderValue => "a bad character in a header field's value",
        E::NewLine => "a bad line ending (lines end in CRLF)",
        E::Status | E::TooManyHeaders => "a bad request head",
    };
    format!("malformed request: {what}")
}

/// A `Content-Length` that is not a whole number, or two that differ (RFC 9112 §6.3): hyper
/// refuses those with a bare 400.
fn content_length_problem(headers: &[httparse::Header<'_>]) -> Option<String> {
    let mut seen: Option<u64> = None;
    for h in headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("content-length"))
    {
        let text = String::from_utf8_lossy(h.value);
        for value in text.split(',').map(str::trim) {
            let Some(n) = value
                .bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| value.parse::<u64>().ok())
                .flatten()
            else {
                return Some(format!(
                    "malformed request: Content-Length must be a whole number of bytes, but is {text:?}"
                ));
            };
            if seen.is_some_and(|s| s != n) {
                return Some("malformed request: two different Content-Length values".into());
            }
            seen = Some(n);
        }
    }
    None
}

async fn answer<S: AsyncWrite + Unpin>(stream: &mut S, status: &str, message: &str) {
    let body = super::http::error_body(message);
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    // The client may be gone; nothing to do then.
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// A stream with bytes already read from it put back in front.
pub struct Prefixed<S> {
    prefix: Vec<u8>,
    at: usize,
    inner: S,
}

impl<S: AsyncRead + Unpin> AsyncRead for Prefixed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.at < this.prefix.len() {
            let n = buf.remaining().min(this.prefix.len() - this.at);
            buf.put_slice(&this.prefix[this.at..this.at + n]);
            this.at += n;
            if this.at == this.prefix.len() {
                this.prefix = Vec::new();
                this.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Prefixed<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(raw: &[u8]) -> (&'static str, String) {
        match check(raw) {
            Check::Bad(status, message) => (status, message),
            _ => panic!("{:?} passed", String::from_utf8_lossy(raw)),
        }
    }

    #[test]
    fn well_formed_heads_pass_and_incomplete_ones_wait() {
        assert!(matches!(
            check(b"POST /classify HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"),
            Check::Complete
        ));
        assert!(matches!(
            check(b"POST /classify HTTP/1.1\r\nHost: x\r\n"),
            Check::Partial
        ));
        assert!(matches!(
            check(b"GET /health HTTP/1.0\n\n"),
            Check::Complete
        ));
        assert!(matches!(
            check(b"POST / HTTP/1.1\r\nContent-Length: 7, 7\r\n\r\n"),
            Check::Complete
        ));
    }

    #[test]
    fn malformed_heads_are_named() {
        let (status, m) = bad(b"\x00\x01garbage\r\n\r\n");
        assert_eq!(status, "400 Bad Request");
        assert!(
            m.contains("the request line is not METHOD TARGET HTTP/1.1"),
            "{m}"
        );
        assert!(bad(b"POST /classify SPDY/3\r\n\r\n").1.contains("HTTP/1.1"));
        assert!(bad(b"POST /classify HTTP/1.1\r\nno colon here\r\n\r\n")
            .1
            .contains("NAME: VALUE"));
        let (_, m) = bad(b"POST /classify HTTP/1.1\r\nContent-Length: ten\r\n\r\n");
        assert!(m.contains("Content-Length must be a whole number"), "{m}");
        let (_, m) = bad(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n");
        assert!(m.contains("two different Content-Length"), "{m}");
        let mut many = b"GET / HTTP/1.1\r\n".to_vec();
        for i in 0..=MAX_HEADERS {
            many.extend_from_slice(format!("X-{i}: y\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        assert_eq!(bad(&many).0, "431 Request Header Fields Too Large");
    }

    /// A head that is still incomplete past the bound gets a JSON 431 here. Before, it was
    /// handed to hyper, which answered with a bare 431 and no body.
    #[test]
    fn a_head_past_the_bound_is_refused_with_its_size() {
        let mut head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Long: ".to_vec();
        head.resize(MAX_HEAD_BYTES, b'a');
        assert!(matches!(check(&head), Check::Partial));
        head.push(b'a');
        let (status, m) = bad(&head);
        assert_eq!(status, "431 Request Header Fields Too Large");
        assert!(m.contains("larger than 400 KiB"), "{m}");
    }

    #[tokio::test]
    async fn the_bytes_read_are_handed_on_in_front_of_the_rest() {
        let (mut client, server) = tokio::io::duplex(64);
        let talk = tokio::spawn(async move {
            client
                .write_all(b"POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123")
                .await
                .unwrap();
            client.write_all(b"456789").await.unwrap();
            client
        });
        let Sniffed::Http(mut io) = first_request(server, Duration::from_secs(5)).await else {
            panic!("refused");
        };
        let _client = talk.await.unwrap();
        let sent = b"POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789";
        let mut all = vec![0u8; sent.len()];
        io.read_exact(&mut all).await.unwrap();
        assert_eq!(&all[..], &sent[..]);
    }
}
