//! Differential tests of the HTTP/1.1 body code against hyper: a request body is read as hyper's
//! server reads it (the same bytes, the same refusals), and an upstream response body is relayed
//! as hyper's server writes the same body (chunks, trailers, lengths), byte for byte.

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, Method};
use http_body_util::BodyExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::encode::{self, Answering, BodyLen, Fields, Head};
use super::relay;
use super::reqbody::ReqBody;
use super::response::{BodyFraming, parse_response};
use super::timer::Timer;
use super::upconn::UpConn;
use super::wire::parse_request;
use crate::head::{HeadLimits, find_head_end};
use crate::limits::Limits;
use crate::testing::{frames_body, hyper_h1_serving};
use crate::upstream::UpStream;

const LIM: HeadLimits = HeadLimits {
    max_head_bytes: 8192,
    max_headers: 64,
    max_url_bytes: 1024,
};

/// The body of `raw` (one request) as hyper's server reads it; `Err` when hyper refuses it.
async fn hyper_body(raw: &'static [u8]) -> Result<Vec<u8>, ()> {
    let (mut client, io) = tokio::io::duplex(1 << 16);
    let (tx, rx) = tokio::sync::oneshot::channel();
    let tx = parking_lot::Mutex::new(Some(tx));
    let svc = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
        let sender = tx.lock().take();
        async move {
            let got = req
                .into_body()
                .collect()
                .await
                .map(|c| c.to_bytes().to_vec());
            if let Some(s) = sender {
                let _ = s.send(got.map_err(|_| ()));
            }
            Ok::<_, std::convert::Infallible>(http::Response::new(
                http_body_util::Empty::<Bytes>::new(),
            ))
        }
    });
    tokio::spawn(async move {
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(hyper_util::rt::TokioIo::new(io), svc)
            .await;
    });
    client.write_all(raw).await.map_err(|_| ())?;
    let mut rx = rx;
    let wait = std::time::Duration::from_millis(300);
    if let Ok(got) = tokio::time::timeout(wait, &mut rx).await {
        return got.unwrap_or(Err(()));
    }
    // A body cut short: hyper sees its end at the connection's.
    client.shutdown().await.map_err(|_| ())?;
    match tokio::time::timeout(wait, rx).await {
        Ok(Ok(r)) => r,
        _ => Err(()),
    }
}

/// The body of `raw` as the proxy reads it, the bytes arriving in pieces of `split`.
async fn our_body(raw: &'static [u8], split: usize) -> Result<Vec<u8>, ()> {
    let end = find_head_end(raw).map_err(|_| ())?.ok_or(())?;
    let head = Bytes::from_static(&raw[..end]);
    let req = parse_request(&head, &LIM).map_err(|_| ())?;
    let (mut client, mut server) = tokio::io::duplex(1 << 16);
    let rest = raw[end..].to_vec();
    tokio::spawn(async move {
        for piece in rest.chunks(split) {
            if client.write_all(piece).await.is_err() {
                return;
            }
            tokio::task::yield_now().await;
        }
        let _ = client.shutdown().await;
    });
    let lim = Limits::default();
    let mut body = ReqBody::new(req.framing, false, &lim);
    let mut buf = BytesMut::new();
    let mut timer = Timer::new(tokio::time::Instant::now() + std::time::Duration::from_secs(5));
    let mut out = Vec::new();
    while let Some(b) = body
        .next(&mut server, &mut buf, &mut timer)
        .await
        .map_err(|_| ())?
    {
        out.extend_from_slice(&b);
    }
    Ok(out)
}

#[tokio::test]
async fn request_bodies_read_as_hyper_reads_them() {
    let cases: &[&'static [u8]] = &[
        b"POST / HTTP/1.1\r\nhost: a\r\ncontent-length: 11\r\n\r\nhello world",
        b"POST / HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
        b"POST / HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\n5;ext=\"a b\";x\r\nhello\r\n0\r\n\r\n",
        b"POST / HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\nx-t: 1\r\ny-t: 2\r\n\r\n",
        b"POST / HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n",
        b"PUT / HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\n00001\r\nx\r\n0000\r\n\r\n",
        // Malformed: both refuse.
        b"POST / HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n",
        b"POST / HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
        b"POST / HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
        // Cut short: both fail.
        b"POST / HTTP/1.1\r\nhost: a\r\ncontent-length: 20\r\n\r\nshort",
        b"POST / HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel",
    ];
    for raw in cases {
        let theirs = hyper_body(raw).await;
        for split in [1, 3, 7, 64, 4096] {
            let ours = our_body(raw, split).await;
            assert_eq!(
                ours,
                theirs,
                "split {split}: {:?}",
                String::from_utf8_lossy(raw)
            );
        }
    }
}

/// What hyper's server writes for a response with `status`, `headers` and the body frames
/// `frames` (`Err`: trailers), to the request `request`.
async fn hyper_response(
    status: u16,
    headers: HeaderMap,
    frames: Vec<Result<Bytes, HeaderMap>>,
    request: &'static str,
) -> Vec<u8> {
    let svc = hyper::service::service_fn(move |_req| {
        let frames = frames.clone();
        let headers = headers.clone();
        async move {
            let mut res = http::Response::new(frames_body(frames));
            *res.status_mut() = http::StatusCode::from_u16(status).expect("status");
            *res.headers_mut() = headers;
            Ok::<_, std::convert::Infallible>(res)
        }
    });
    let mut client = hyper_h1_serving(svc, request).await;
    let mut out = Vec::new();
    let _ = tokio::time::timeout(
        std::time::Duration::from_millis(500),
        client.read_to_end(&mut out),
    )
    .await;
    out
}

/// What the proxy writes when it relays `upstream` (a raw response) to the request `request`.
async fn our_response(upstream: &'static [u8], request: &'static str, method: &Method) -> Vec<u8> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        if let Ok((mut s, _)) = listener.accept().await {
            let _ = s.write_all(upstream).await;
            let _ = s.shutdown().await;
            let mut sink = Vec::new();
            let _ = s.read_to_end(&mut sink).await;
        }
    });
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let mut up = UpConn::fresh(UpStream::Plain(tcp));
    let head = loop {
        if let Ok(Some(h)) = parse_response(&mut up.buf, method) {
            break h;
        }
        assert!(up.read_more().await.expect("read") > 0, "no head");
    };
    let te_trailers = request.contains("te: trailers");
    let len = match head.framing {
        BodyFraming::Empty => BodyLen::Empty,
        BodyFraming::Length(n) => BodyLen::Known(n),
        BodyFraming::Chunked | BodyFraming::Eof => BodyLen::Unknown,
    };
    let mut out = Vec::new();
    let h = Head {
        status: head.status,
        version: head.version,
        headers: Fields::Raw(&head.headers),
        strip: true,
    };
    let answering = Answering {
        method,
        close: false,
        http10: false,
    };
    let enc = encode::encode(&mut out, &h, len, answering);
    let (mut client, mut server) = tokio::io::duplex(1 << 16);
    relay::body(
        &mut server,
        &mut out,
        &mut up,
        head.framing,
        &enc,
        te_trailers,
    )
    .await
    .expect("relay");
    drop(server);
    let mut wire = Vec::new();
    client.read_to_end(&mut wire).await.expect("read");
    wire
}

fn fields(list: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in list {
        h.append(*k, http::HeaderValue::from_static(v));
    }
    h
}

#[tokio::test]
async fn response_bodies_relay_as_hyper_writes_them() {
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
    trailers.insert("x-other", http::HeaderValue::from_static("1"));
    let chunked: &'static [u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\
        trailer: grpc-status\r\ntransfer-encoding: chunked\r\n\r\n\
        5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\ngrpc-status: 0\r\nx-other: 1\r\n\r\n";
    let frames = vec![
        Ok(Bytes::from_static(b"hello")),
        Ok(Bytes::from_static(b" world")),
        Err(trailers),
    ];
    let map = fields(&[("content-type", "text/plain"), ("trailer", "grpc-status")]);
    for request in [
        "GET / HTTP/1.1\r\nhost: a\r\nte: trailers\r\n\r\n",
        "GET / HTTP/1.1\r\nhost: a\r\n\r\n",
    ] {
        let theirs = hyper_response(200, map.clone(), frames.clone(), request).await;
        let ours = our_response(chunked, request, &Method::GET).await;
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs),
            "{request:?}"
        );
    }
    // A length-delimited body, and a body delimited by the upstream's close (re-chunked).
    let length: &'static [u8] =
        b"HTTP/1.1 201 Created\r\ncontent-length: 11\r\nx-a: 1\r\n\r\nhello world";
    let mut map = fields(&[("x-a", "1")]);
    let request = "POST / HTTP/1.1\r\nhost: a\r\ncontent-length: 0\r\n\r\n";
    let hello = vec![Ok(Bytes::from_static(b"hello world"))];
    let with_len = fields(&[("content-length", "11"), ("x-a", "1")]);
    let theirs = hyper_response(201, with_len, hello.clone(), request).await;
    let ours = our_response(length, request, &Method::POST).await;
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs)
    );
    let eof: &'static [u8] = b"HTTP/1.1 200 OK\r\nx-a: 1\r\n\r\nhello world";
    map.insert("x-a", http::HeaderValue::from_static("1"));
    let theirs = hyper_response(200, map, hello, "GET / HTTP/1.1\r\nhost: a\r\n\r\n").await;
    let ours = our_response(eof, "GET / HTTP/1.1\r\nhost: a\r\n\r\n", &Method::GET).await;
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs)
    );
}
