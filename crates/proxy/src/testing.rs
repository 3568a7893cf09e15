//! Fixtures the data plane's unit tests share: bodies made of given frames, and hyper's own
//! HTTP/1.1 server, the reference the connection code is compared with byte for byte.

use std::convert::Infallible;

use bytes::Bytes;
use http::HeaderMap;
use http_body::Frame;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
use tokio::io::{AsyncWriteExt, DuplexStream};
use tokio_stream::StreamExt;

/// A body that never fails, of unknown length (as a streamed body is).
pub(crate) type TestBody = BoxBody<Bytes, Infallible>;

/// A body made of `frames` (`Err`: trailers), which then ends.
pub(crate) fn frames_body(frames: Vec<Result<Bytes, HeaderMap>>) -> TestBody {
    let frames = frames.into_iter().map(|f| {
        Ok(match f {
            Ok(d) => Frame::data(d),
            Err(t) => Frame::trailers(t),
        })
    });
    http_body_util::StreamBody::new(tokio_stream::iter(frames)).boxed()
}

/// A body of the given data chunks, which then ends.
pub(crate) fn chunks(parts: &[&'static [u8]]) -> TestBody {
    frames_body(parts.iter().map(|p| Ok(Bytes::from_static(p))).collect())
}

/// A body of the given data chunks that then stalls without ending (a streaming client).
pub(crate) fn chunks_then_stall(parts: &[&'static [u8]]) -> TestBody {
    let frames: Vec<Result<Frame<Bytes>, Infallible>> = parts
        .iter()
        .map(|p| Ok(Frame::data(Bytes::from_static(p))))
        .collect();
    let stalls = tokio_stream::iter(frames).chain(tokio_stream::pending());
    http_body_util::StreamBody::new(stalls).boxed()
}

/// Serves one connection with hyper's HTTP/1.1 server (configured as the proxy configures its
/// own: no `Date` field) answering with `svc`, sends it the raw `request`, and returns the
/// client's end to read the answer from.
pub(crate) async fn hyper_h1_serving<S>(svc: S, request: &str) -> DuplexStream
where
    S: hyper::service::Service<http::Request<Incoming>, Response = http::Response<TestBody>>
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (mut client, io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let mut b = hyper::server::conn::http1::Builder::new();
        b.auto_date_header(false);
        let _ = b
            .serve_connection(hyper_util::rt::TokioIo::new(io), svc)
            .await;
    });
    client.write_all(request.as_bytes()).await.expect("write");
    client
}
