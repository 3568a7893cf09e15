//! Serves [`DemoGrpc`] over HTTP/2 with hyper: gRPC framing in and out, gzip request messages,
//! responses streamed as they are produced, status in trailers (or trailers-only before any message).
//!
//! [`serve_listener`] runs an h2c (prior knowledge) accept loop; [`handle`] is the per-request
//! function for a server the caller already runs.

use std::convert::Infallible;
use std::io::Read as _;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, Response};
use http_body::{Body, Frame};
use http_body_util::BodyExt as _;
use tokio::sync::mpsc;

use super::{DemoGrpc, GrpcStatus, code};
use crate::support::task;
use crate::waf::grpc::{FrameEvent, FrameParser, encode_frame};

/// Largest request message the demo accepts (compressed or not, and once inflated).
pub const MAX_REQUEST_MESSAGE: u32 = 4 * 1024 * 1024;

/// A response body fed by the task that runs the call.
pub struct CallBody {
    rx: mpsc::Receiver<Frame<Bytes>>,
}

impl Body for CallBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.rx.poll_recv(cx).map(|f| f.map(Ok))
    }
}

fn status_headers(status: &GrpcStatus) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("grpc-status", HeaderValue::from(status.code));
    let msg: String = status
        .message
        .bytes()
        .map(|b| {
            if (0x20..=0x7e).contains(&b) && b != b'%' {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    if let Ok(v) = HeaderValue::from_str(&msg) {
        h.insert("grpc-message", v);
    }
    h
}

/// A trailers-only response carrying `status`.
fn trailers_only(status: &GrpcStatus) -> Response<CallBody> {
    let (_tx, rx) = mpsc::channel(1);
    let mut resp = Response::new(CallBody { rx });
    resp.headers_mut()
        .insert("content-type", HeaderValue::from_static("application/grpc"));
    resp.headers_mut().extend(status_headers(status));
    resp
}

/// Answers one gRPC request.
pub async fn handle<B>(demo: Arc<DemoGrpc>, req: Request<B>) -> Response<CallBody>
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: std::fmt::Display + Send,
{
    let is_grpc = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/grpc"));
    if req.method() != http::Method::POST || !is_grpc {
        return trailers_only(&GrpcStatus::new(
            code::UNIMPLEMENTED,
            "gRPC calls are POST application/grpc",
        ));
    }
    let gzip = match req
        .headers()
        .get("grpc-encoding")
        .and_then(|v| v.to_str().ok())
    {
        None | Some("identity") => false,
        Some("gzip") => true,
        Some(other) => {
            return trailers_only(&GrpcStatus::new(
                code::UNIMPLEMENTED,
                format!("grpc-encoding {other} not supported"),
            ));
        }
    };
    let mut call = match demo.start(req.uri().path()) {
        Ok(c) => c,
        Err(status) => return trailers_only(&status),
    };
    let (tx, rx) = mpsc::channel(16);
    let mut body = req.into_body();
    task::spawn(async move {
        let mut frames = FrameParser::new(MAX_REQUEST_MESSAGE);
        let outcome = async {
            while let Some(frame) = body.frame().await {
                let frame = frame
                    .map_err(|e| GrpcStatus::new(code::INTERNAL, format!("request body: {e}")))?;
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                let mut input: &[u8] = &data;
                loop {
                    let msg = match frames.next(&mut input) {
                        Ok(Some(FrameEvent::Message {
                            compressed,
                            payload,
                        })) => message_bytes(compressed, gzip, payload)?,
                        Ok(Some(FrameEvent::Header { .. })) => continue,
                        Ok(None) => break,
                        Err(e) => return Err(GrpcStatus::new(code::INTERNAL, e.to_string())),
                    };
                    for out in call.on_message(&msg)? {
                        send_message(&tx, &out).await;
                    }
                }
            }
            frames
                .finish()
                .map_err(|e| GrpcStatus::new(code::INTERNAL, e.to_string()))?;
            for out in call.on_end()? {
                send_message(&tx, &out).await;
            }
            Ok(())
        }
        .await;
        let status = outcome
            .err()
            .unwrap_or_else(|| GrpcStatus::new(code::OK, ""));
        let _ = tx.send(Frame::trailers(status_headers(&status))).await;
    });
    let mut resp = Response::new(CallBody { rx });
    resp.headers_mut()
        .insert("content-type", HeaderValue::from_static("application/grpc"));
    resp
}

fn message_bytes(compressed: bool, gzip: bool, payload: &[u8]) -> Result<Vec<u8>, GrpcStatus> {
    if !compressed {
        return Ok(payload.to_vec());
    }
    if !gzip {
        return Err(GrpcStatus::new(
            code::INTERNAL,
            "compressed message without grpc-encoding",
        ));
    }
    let mut out = Vec::new();
    let limit = u64::from(MAX_REQUEST_MESSAGE) + 1;
    flate2::read::GzDecoder::new(payload)
        .take(limit)
        .read_to_end(&mut out)
        .map_err(|e| GrpcStatus::new(code::INTERNAL, format!("bad gzip message: {e}")))?;
    if out.len() as u64 >= limit {
        return Err(GrpcStatus::new(
            code::RESOURCE_EXHAUSTED,
            "message too large",
        ));
    }
    Ok(out)
}

async fn send_message(tx: &mpsc::Sender<Frame<Bytes>>, msg: &[u8]) {
    let mut out = Vec::with_capacity(msg.len() + 5);
    encode_frame(false, msg, &mut out);
    let _ = tx.send(Frame::data(Bytes::from(out))).await;
}

/// Serves the demo on `listener` (HTTP/2 prior knowledge, as gRPC clients speak h2c) until the
/// task is dropped.
pub async fn serve_listener(
    listener: tokio::net::TcpListener,
    demo: Arc<DemoGrpc>,
) -> std::io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        let demo = demo.clone();
        task::spawn(async move {
            let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let demo = demo.clone();
                async move { Ok::<_, Infallible>(handle(demo, req).await) }
            });
            let builder =
                hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new());
            let _ = builder
                .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                .await;
        });
    }
}
