//! A reference front for the gRPC scenarios: a minimal h2c proxy built only from the engine's public
//! gRPC API (`compile`, `covers`, `start_call`, `GrpcStream::feed/finish`, `response::render`), driven
//! the way docs/grpc.md asks the data plane to drive it. It proves the scenarios of `grpc/proxy.rs`
//! right against real tonic traffic before the real proxy and policy branches are merged. Any
//! violation blocks; the signature engine is stood in for by two literal patterns.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Request, Response};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Empty, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use portcullis::support::SupportId;
use portcullis::waf::BlockReply;
use portcullis::waf::MemResolver;
use portcullis::waf::grpc::{CompiledGrpcProfile, GrpcProfile, GrpcProfileSpec, start_call};
use portcullis::waf::response::{BlockResponse, default_grpc_reply, render};
use portcullis::waf::{Context, Violation, ViolationKind};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;

use super::proxy::{MAX_MESSAGE, policy};
use crate::support::upstream::serve_fn;

type Body = BoxBody<Bytes, std::io::Error>;
type Upstream = Client<HttpConnector, Body>;

fn profile() -> CompiledGrpcProfile {
    let link = "file:///demo.proto";
    let doc = policy(link);
    let spec: GrpcProfileSpec = serde_json::from_value(doc["policy"]["grpc-profiles"][0].clone())
        .expect("profile of the test policy");
    let proto = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/policies/demo/demo.proto"
    ))
    .expect("demo.proto");
    let files = MemResolver(HashMap::from([(link.to_string(), proto)]));
    let p = GrpcProfile::compile(&spec, &files, "").expect("demo profile");
    assert_eq!(p.limits().maximum_data_length, Some(MAX_MESSAGE as u64));
    p
}

/// Stand-in for the signature engine and meta-character checks.
fn check(path: &str, value: &str) -> Option<Violation> {
    let v = value.to_ascii_lowercase();
    (v.contains("<script") || v.contains("union select")).then(|| {
        Violation::new(ViolationKind::AttackSignature, Context::Grpc)
            .named(path)
            .snippet(value.as_bytes())
    })
}

fn to_response(b: BlockResponse) -> Response<Body> {
    let mut resp = Response::builder().status(b.status);
    for (k, v) in &b.headers {
        resp = resp.header(&**k, &**v);
    }
    let body = if b.body.is_empty() {
        Empty::new().map_err(|e: Infallible| match e {}).boxed()
    } else {
        Full::new(Bytes::from(b.body))
            .map_err(|e: Infallible| match e {})
            .boxed()
    };
    resp.body(body).expect("block response")
}

/// The block trailers of a call whose response already started.
fn block_trailers(id: SupportId) -> HeaderMap {
    let r = render(&default_grpc_reply(), id);
    let mut h = HeaderMap::new();
    for (k, v) in r.headers.iter().filter(|(k, _)| k.starts_with("grpc-")) {
        if let (Ok(k), Ok(v)) = (HeaderName::try_from(&**k), HeaderValue::from_str(v)) {
            h.insert(k, v);
        }
    }
    h
}

async fn handle(
    p: Arc<CompiledGrpcProfile>,
    up: Upstream,
    upstream: SocketAddr,
    req: Request<Incoming>,
) -> Response<Body> {
    let id = SupportId::random();
    let path = req.uri().path().to_string();
    if !p.covers(&path) {
        return to_response(render(&BlockReply::DefaultPage, id));
    }
    let (head, mut body) = req.into_parts();
    let start = start_call(&p, &head.clone().into());
    let (false, Some(mut stream)) = (!start.violations.is_empty(), start.stream) else {
        return to_response(render(&default_grpc_reply(), id));
    };
    let (up_tx, up_rx) = mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(16);
    let mut up_req = Request::post(format!("http://{upstream}{path}"));
    for (k, v) in &head.headers {
        up_req = up_req.header(k, v);
    }
    let up_req = up_req
        .body(StreamBody::new(ReceiverStream::new(up_rx)).boxed())
        .expect("upstream request");
    let (block_tx, mut block_rx) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let mut held: Vec<u8> = Vec::new();
        let mut sent = 0u64;
        let mut violations = Vec::new();
        let mut blocked = false;
        while let Some(Ok(frame)) = body.frame().await {
            let Ok(data) = frame.into_data() else {
                continue;
            };
            held.extend_from_slice(&data);
            let r = stream.feed(&data, &mut check, &mut violations);
            if !violations.is_empty() {
                blocked = true;
                break;
            }
            if r.release > sent {
                let chunk: Vec<u8> = held.drain(..(r.release - sent) as usize).collect();
                sent = r.release;
                let _ = up_tx.send(Ok(Frame::data(Bytes::from(chunk)))).await;
            }
        }
        if !blocked {
            stream.finish(&mut violations);
            blocked = !violations.is_empty();
        }
        if blocked {
            let _ = block_tx.send(());
            let _ = up_tx.send(Err(std::io::Error::other("blocked"))).await;
        }
    });
    // Until the upstream answers, a block is answered trailers-only.
    let mut block_open = true;
    let mut answer = std::pin::pin!(up.request(up_req));
    let resp = loop {
        tokio::select! {
            biased;
            r = &mut block_rx, if block_open => match r {
                Ok(()) => return to_response(render(&default_grpc_reply(), id)),
                Err(_) => block_open = false, // the request ended without a block
            },
            r = &mut answer => break r,
        }
    };
    let Ok(resp) = resp else {
        return to_response(render(&default_grpc_reply(), id));
    };
    let (parts, mut up_body) = resp.into_parts();
    let (tx, rx) = mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(16);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                biased;
                r = &mut block_rx, if block_open => match r {
                    Ok(()) => {
                        let _ = tx.send(Ok(Frame::trailers(block_trailers(id)))).await;
                        return;
                    }
                    Err(_) => block_open = false,
                },
                f = up_body.frame() => match f {
                    Some(Ok(f)) => { let _ = tx.send(Ok(f)).await; }
                    _ => return,
                }
            }
        }
    });
    Response::from_parts(parts, StreamBody::new(ReceiverStream::new(rx)).boxed())
}

/// Starts the reference front for `upstream`; returns its address.
pub async fn start(upstream: SocketAddr) -> SocketAddr {
    let p = Arc::new(profile());
    let up: Upstream = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http();
    serve_fn(move |req| handle(p.clone(), up.clone(), upstream, req)).await
}
