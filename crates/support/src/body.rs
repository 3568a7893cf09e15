//! Reading request bodies on the admin port (the `/mgmt` API and the SOAP portal) so that a
//! client cannot hold a connection open by sending slowly, or by sending nothing:
//!
//! * a declared `Content-Length` over the limit is refused before any of it is read;
//! * a body must keep coming: no gap longer than `read_timeout`, and after a first
//!   `read_timeout` of grace at least `min_rate` bytes per second on average;
//! * an early answer (401 before the body is read, 413, 404) reaches a client that is still
//!   sending: a bounded remainder is read and thrown away first ([`answer_early`]).
//!
//! Imports nothing internal.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderValue, Version, header};
use http_body::Frame;
use http_body_util::BodyExt as _;
use tokio::time::Instant;

/// Most bytes read and thrown away so that an early answer reaches a client still sending its
/// body. Above the largest JSON body (16 MiB), so a body just over that limit still gets its
/// 413; beyond it the answer is sent at once and the request's stream is given up.
pub const DISCARD_MAX: u64 = 32 * 1024 * 1024;

/// The bounds a body is read under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BodyLimits {
    /// Largest body accepted.
    pub max_bytes: u64,
    /// Longest wait for the next bytes of a body; also the grace before `min_rate` applies,
    /// and the longest time spent discarding a body.
    pub read_timeout: Duration,
    /// Slowest average rate accepted after the grace, in bytes per second (0: none).
    pub min_rate: u64,
}

/// Why a body was not read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyError {
    /// Longer than `max_bytes` (declared or counted).
    TooLarge,
    /// A gap longer than `read_timeout`, or slower than `min_rate`.
    TimedOut,
    /// The connection failed or the framing was invalid.
    Broken(String),
}

impl BodyError {
    /// The status that answers it.
    pub fn status(&self) -> http::StatusCode {
        match self {
            BodyError::TooLarge => http::StatusCode::PAYLOAD_TOO_LARGE,
            BodyError::TimedOut => http::StatusCode::REQUEST_TIMEOUT,
            BodyError::Broken(_) => http::StatusCode::BAD_REQUEST,
        }
    }
}

/// `response` with `Connection: close`: after a body that was not read whole, the next bytes on
/// the connection cannot be told from a next request.
pub fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The `Content-Length` a request declares, if it declares a valid one.
pub fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Reads frames until the body ends or `budget` bytes were read; calls `keep` with each chunk.
/// Returns how many bytes were read and whether the body ended.
async fn pump(
    body: &mut Body,
    limits: &BodyLimits,
    budget: u64,
    give_up_at: Option<Instant>,
    mut keep: impl FnMut(Bytes),
) -> Result<(u64, bool), BodyError> {
    let start = Instant::now();
    let mut received = 0u64;
    loop {
        if http_body::Body::is_end_stream(body) {
            return Ok((received, true));
        }
        let mut deadline = Instant::now() + limits.read_timeout;
        if limits.min_rate > 0 {
            // The rate bound: by `start + grace + received / rate` the next bytes must be in.
            let owed = Duration::from_secs_f64(received as f64 / limits.min_rate as f64);
            deadline = deadline.min(start + limits.read_timeout + owed);
        }
        if let Some(g) = give_up_at {
            deadline = deadline.min(g);
        }
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => return Err(BodyError::TimedOut),
            Ok(None) => return Ok((received, true)),
            Ok(Some(Err(e))) => return Err(BodyError::Broken(e.to_string())),
            Ok(Some(Ok(f))) => f,
        };
        if let Ok(data) = frame.into_data() {
            received += data.len() as u64;
            if received > budget {
                return Err(BodyError::TooLarge);
            }
            keep(data);
        }
    }
}

/// Reads a whole body under `limits`.
pub async fn read(mut body: Body, limits: &BodyLimits) -> Result<Bytes, BodyError> {
    let mut buf = BytesMut::new();
    pump(&mut body, limits, limits.max_bytes, None, |d| {
        buf.extend_from_slice(&d)
    })
    .await?;
    Ok(buf.freeze())
}

/// Sends `response` for a request whose body was not read (refused before reading: no
/// credentials, a declared length over the limit, an unknown path).
///
/// A client that sends its body without waiting for `100 Continue` is still writing when the
/// answer comes; if the server closed then, it would see a broken pipe (HTTP/1.1) or a reset
/// stream (HTTP/2) instead of the answer. So up to [`DISCARD_MAX`] bytes of the body are read
/// and thrown away first, for at most `read_timeout`. When the body is longer (or slower), the
/// answer goes out at once: on HTTP/1.1 with `Connection: close`; on HTTP/2 the request's
/// stream is kept until the answer is sent, so it is reset with NO_ERROR only after it.
pub async fn answer_early(
    mut body: Body,
    headers: &HeaderMap,
    version: Version,
    limits: &BodyLimits,
    response: Response,
) -> Response {
    let ended = if declared_length(headers).is_some_and(|n| n > DISCARD_MAX) {
        false
    } else {
        let give_up = Instant::now() + limits.read_timeout;
        matches!(
            pump(&mut body, limits, DISCARD_MAX, Some(give_up), drop).await,
            Ok((_, true))
        )
    };
    if ended {
        return response;
    }
    if version <= Version::HTTP_11 {
        return closing(response);
    }
    response.map(|reply| {
        Body::new(Holding {
            reply,
            _request: body,
        })
    })
}

/// A response body that keeps the unread request body alive until the response is sent.
struct Holding {
    reply: Body,
    _request: Body,
}

impl http_body::Body for Holding {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.reply).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.reply.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.reply.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: u64) -> BodyLimits {
        BodyLimits {
            max_bytes: max,
            read_timeout: Duration::from_secs(2),
            min_rate: 1000,
        }
    }

    /// A body fed by the test through a channel, as a slow client would send it.
    fn trickle() -> (tokio::sync::mpsc::Sender<Bytes>, Body) {
        use tokio_stream::StreamExt as _;
        let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
        let stream = tokio_stream::wrappers::ReceiverStream::new(rx).map(Ok::<_, std::io::Error>);
        (tx, Body::from_stream(stream))
    }

    #[tokio::test(start_paused = true)]
    async fn a_whole_body_is_read_and_an_oversized_one_refused() {
        let got = read(Body::from("hello"), &limits(10)).await;
        assert_eq!(got, Ok(Bytes::from("hello")));
        let got = read(Body::from("hello world"), &limits(10)).await;
        assert_eq!(got, Err(BodyError::TooLarge));
    }

    #[tokio::test(start_paused = true)]
    async fn a_stalled_body_times_out() {
        let (tx, body) = trickle();
        tx.send(Bytes::from_static(b"x")).await.unwrap();
        let got = read(body, &limits(100)).await;
        assert_eq!(got, Err(BodyError::TimedOut));
        drop(tx);
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_trickled_under_the_minimum_rate_times_out() {
        let (tx, body) = trickle();
        let reader = tokio::spawn(async move { read(body, &limits(1_000_000)).await });
        // One byte a second: never a gap of 2 s, but far under 1000 bytes/s.
        let mut sent = 0;
        while !reader.is_finished() && sent < 60 {
            if tx.send(Bytes::from_static(b"x")).await.is_err() {
                break;
            }
            sent += 1;
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        assert_eq!(reader.await.unwrap(), Err(BodyError::TimedOut));
        assert!(sent <= 4, "held for {sent} s");
    }
}
