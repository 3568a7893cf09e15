//! Clients: a real tonic client (one HTTP/2 connection per [`TonicClient`]) and a raw HTTP/2 client
//! for requests tonic would never send (broken frames, non-gRPC answers).

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::uri::PathAndQuery;
use http::{HeaderMap, Request};
use http_body_util::{BodyExt as _, Full};
use tonic::codec::CompressionEncoding;
use tonic::transport::{Channel, Endpoint};
use tonic::{Status, Streaming};

use super::codec::BytesCodec;

/// A tonic client over one connection to `addr` (h2c).
pub struct TonicClient {
    grpc: tonic::client::Grpc<Channel>,
}

impl TonicClient {
    pub async fn connect(addr: SocketAddr) -> Self {
        let channel = Endpoint::from_shared(format!("http://{addr}"))
            .expect("endpoint")
            .timeout(Duration::from_secs(10))
            .connect()
            .await
            .expect("connect");
        TonicClient {
            grpc: tonic::client::Grpc::new(channel),
        }
    }

    /// Compress request messages with gzip from now on.
    pub fn gzip(mut self) -> Self {
        self.grpc = self.grpc.send_compressed(CompressionEncoding::Gzip);
        self
    }

    async fn ready(&mut self) -> Result<(), Status> {
        self.grpc
            .ready()
            .await
            .map_err(|e| Status::unavailable(e.to_string()))
    }

    pub async fn unary(&mut self, path: &'static str, msg: Bytes) -> Result<Bytes, Status> {
        self.ready().await?;
        let r = self
            .grpc
            .unary(
                tonic::Request::new(msg),
                PathAndQuery::from_static(path),
                BytesCodec,
            )
            .await?;
        Ok(r.into_inner())
    }

    pub async fn client_streaming(
        &mut self,
        path: &'static str,
        msgs: Vec<Bytes>,
    ) -> Result<Bytes, Status> {
        self.ready().await?;
        let req = tonic::Request::new(tokio_stream::iter(msgs));
        let r = self
            .grpc
            .client_streaming(req, PathAndQuery::from_static(path), BytesCodec)
            .await?;
        Ok(r.into_inner())
    }

    /// A bidirectional call: sends `msgs`, collects every reply until the status.
    pub async fn bidi(
        &mut self,
        path: &'static str,
        msgs: Vec<Bytes>,
    ) -> (Vec<Bytes>, Result<(), Status>) {
        if let Err(e) = self.ready().await {
            return (Vec::new(), Err(e));
        }
        let req = tonic::Request::new(tokio_stream::iter(msgs));
        let mut stream: Streaming<Bytes> = match self
            .grpc
            .streaming(req, PathAndQuery::from_static(path), BytesCodec)
            .await
        {
            Ok(r) => r.into_inner(),
            Err(e) => return (Vec::new(), Err(e)),
        };
        let mut replies = Vec::new();
        loop {
            match stream.message().await {
                Ok(Some(m)) => replies.push(m),
                Ok(None) => return (replies, Ok(())),
                Err(e) => return (replies, Err(e)),
            }
        }
    }
}

/// What a raw HTTP/2 exchange returned.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub trailers: Option<HeaderMap>,
}

impl RawResponse {
    fn field(&self, name: &str) -> Option<String> {
        let from = |h: &HeaderMap| {
            h.get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        self.trailers
            .as_ref()
            .and_then(from)
            .or_else(|| from(&self.headers))
    }

    /// `grpc-status`, from the trailers or (trailers-only) the headers.
    pub fn grpc_status(&self) -> Option<u32> {
        self.field("grpc-status").and_then(|s| s.parse().ok())
    }

    pub fn grpc_message(&self) -> Option<String> {
        self.field("grpc-message")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// One gRPC-shaped POST of `body` to `path` over a fresh HTTP/2 connection.
pub async fn raw_call(
    addr: SocketAddr,
    path: &str,
    body: Vec<u8>,
    extra: &[(&str, &str)],
) -> RawResponse {
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (mut send, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(tcp),
    )
    .await
    .expect("h2 handshake");
    tokio::spawn(conn);
    let mut req = Request::post(format!("http://{addr}{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    let req = req.body(Full::new(Bytes::from(body))).expect("request");
    let resp = tokio::time::timeout(Duration::from_secs(10), send.send_request(req))
        .await
        .expect("answer within 10 s")
        .expect("response");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let collected = resp.into_body().collect().await.expect("body");
    let trailers = collected.trailers().cloned();
    RawResponse {
        status,
        headers,
        body: collected.to_bytes(),
        trailers,
    }
}

/// `payload` in one uncompressed gRPC frame.
pub fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    portcullis::waf::grpc::encode_frame(false, payload, &mut out);
    out
}
