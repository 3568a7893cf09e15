//! Differential tests of [`super::encode`]: each response head is compared byte for byte with what
//! hyper's HTTP/1.1 server (configured as the proxy configures it) writes for the same response.

use super::*;
use bytes::Bytes;
use http::HeaderValue;
use http_body_util::{BodyExt, Empty, Full};
use tokio::io::AsyncReadExt;

use crate::testing::{TestBody, chunks, hyper_h1_serving};

#[derive(Clone, Copy, Debug)]
enum Kind {
    Empty,
    Full(&'static str),
    Stream,
}

fn headers(list: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in list {
        h.append(*k, HeaderValue::from_static(v));
    }
    h
}

/// The head hyper's server writes for a response with `status`, `h` and a body of `kind`, to a
/// request `request` (raw bytes).
async fn hyper_head(
    status: u16,
    version: Version,
    h: HeaderMap,
    kind: Kind,
    request: &str,
) -> String {
    let svc = hyper::service::service_fn(move |_req| {
        let body: TestBody = match kind {
            Kind::Empty => Empty::new().boxed(),
            Kind::Full(s) => Full::new(Bytes::from_static(s.as_bytes())).boxed(),
            Kind::Stream => chunks(&[b"abc"]),
        };
        let mut res = http::Response::new(body);
        *res.status_mut() = StatusCode::from_u16(status).expect("status");
        *res.version_mut() = version;
        *res.headers_mut() = h.clone();
        std::future::ready(Ok::<_, std::convert::Infallible>(res))
    });
    let mut client = hyper_h1_serving(svc, request).await;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while !out.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = client.read(&mut buf).await.expect("read");
        assert!(n > 0, "hyper closed before a head");
        out.extend_from_slice(&buf[..n]);
    }
    let end = out.windows(4).position(|w| w == b"\r\n\r\n").expect("end") + 4;
    String::from_utf8(out[..end].to_vec()).expect("utf8")
}

fn ours(
    status: u16,
    version: Version,
    h: &HeaderMap,
    kind: Kind,
    method: &Method,
    (close, http10): (bool, bool),
) -> String {
    let mut out = Vec::new();
    let body = match kind {
        Kind::Empty => BodyLen::Empty,
        Kind::Full(s) => BodyLen::Known(s.len() as u64),
        Kind::Stream => BodyLen::Unknown,
    };
    let head = Head {
        status: StatusCode::from_u16(status).expect("status"),
        version,
        headers: Fields::Map(h),
        strip: false,
    };
    let answering = Answering {
        method,
        close,
        http10,
    };
    encode(&mut out, &head, body, answering);
    String::from_utf8(out).expect("utf8")
}

/// Status, header fields, body.
type Case = (u16, &'static [(&'static str, &'static str)], Kind);

#[tokio::test]
async fn heads_match_hyper_byte_for_byte() {
    let cases: Vec<Case> = vec![
        (
            200,
            &[
                ("content-type", "application/json"),
                ("content-length", "21"),
            ],
            Kind::Full("{\"id\":1,\"name\":\"Ada\"}"),
        ),
        (
            200,
            &[("content-type", "text/plain"), ("x-a", "1"), ("x-a", "2")],
            Kind::Full("hello"),
        ),
        (
            200,
            &[("server", "nginx"), ("content-length", "0")],
            Kind::Empty,
        ),
        (404, &[("content-type", "text/plain")], Kind::Empty),
        (204, &[("content-length", "0"), ("x-b", "b")], Kind::Empty),
        (304, &[("etag", "\"x\"")], Kind::Empty),
        (
            502,
            &[("content-type", "text/plain; charset=utf-8")],
            Kind::Full("upstream failed\n"),
        ),
        (
            403,
            &[
                ("content-type", "application/json; charset=utf-8"),
                ("cache-control", "no-cache"),
                ("pragma", "no-cache"),
                ("connection", "close"),
            ],
            Kind::Full("{\"supportID\":\"1\"}"),
        ),
        (
            200,
            &[("content-type", "text/plain"), ("trailer", "grpc-status")],
            Kind::Stream,
        ),
        (200, &[("x-stream", "1")], Kind::Stream),
        (599, &[], Kind::Full("x")),
        (201, &[("connection", "keep-alive")], Kind::Full("x")),
    ];
    // (request, its method, the connection closes after it, HTTP/1.0)
    let requests = [
        (
            "GET / HTTP/1.1\r\nhost: a\r\n\r\n",
            Method::GET,
            (false, false),
        ),
        (
            "GET / HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n",
            Method::GET,
            (true, false),
        ),
        (
            "HEAD / HTTP/1.1\r\nhost: a\r\n\r\n",
            Method::HEAD,
            (false, false),
        ),
        ("GET / HTTP/1.0\r\n\r\n", Method::GET, (true, true)),
        (
            "GET / HTTP/1.0\r\nconnection: keep-alive\r\n\r\n",
            Method::GET,
            (false, true),
        ),
        (
            "HEAD / HTTP/1.0\r\nconnection: keep-alive\r\n\r\n",
            Method::HEAD,
            (false, true),
        ),
    ];
    for (status, list, kind) in &cases {
        for version in [Version::HTTP_11, Version::HTTP_10] {
            for (raw, method, close) in &requests {
                let h = headers(list);
                let theirs = hyper_head(*status, version, h.clone(), *kind, raw).await;
                let mine = ours(*status, version, &h, *kind, method, *close);
                assert_eq!(
                    mine, theirs,
                    "{status} {version:?} {list:?} {kind:?} {raw:?}"
                );
            }
        }
    }
}

#[test]
fn hop_by_hop_fields_of_an_upstream_response_are_left_out() {
    let h = headers(&[
        ("content-type", "text/plain"),
        ("connection", "keep-alive, x-hop"),
        ("x-hop", "1"),
        ("keep-alive", "timeout=5"),
        ("transfer-encoding", "chunked"),
        ("upgrade", "h2c"),
        ("proxy-authenticate", "Basic"),
        ("x-end", "1"),
    ]);
    let head = Head {
        status: StatusCode::OK,
        version: Version::HTTP_11,
        headers: Fields::Map(&h),
        strip: true,
    };
    let mut out = Vec::new();
    let enc = encode(
        &mut out,
        &head,
        BodyLen::Unknown,
        Answering {
            method: &Method::GET,
            close: false,
            http10: false,
        },
    );
    assert_eq!(
        String::from_utf8(out).expect("utf8"),
        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nx-end: 1\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    assert_eq!(enc.body, BodyOut::Chunked);
    assert!(!enc.last);
}

#[test]
fn an_upstream_head_encodes_the_same_from_its_fields_as_from_a_map() {
    let raw = "HTTP/1.1 200 OK\r\nServer: nginx\r\nX-A: 1\r\nConnection: keep-alive, X-Hop\r\nx-hop: 1\r\nx-a: 2\r\nContent-Length: 3\r\nTrailer: x-t\r\nKeep-Alive: timeout=5\r\n\r\n";
    for method in [Method::GET, Method::HEAD] {
        for close in [false, true] {
            for body in [BodyLen::Known(3), BodyLen::Unknown, BodyLen::Empty] {
                let mut buf = bytes::BytesMut::from(raw);
                let Ok(Some(res)) = super::super::response::parse_response(&mut buf, &method)
                else {
                    panic!("no head");
                };
                let map = res.headers.to_map();
                let answering = Answering {
                    method: &method,
                    close,
                    http10: false,
                };
                let mut a = Vec::new();
                let mut b = Vec::new();
                let head = |headers| Head {
                    status: res.status,
                    version: res.version,
                    headers,
                    strip: true,
                };
                let ea = encode(&mut a, &head(Fields::Raw(&res.headers)), body, answering);
                let eb = encode(&mut b, &head(Fields::Map(&map)), body, answering);
                assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
                assert_eq!(ea, eb);
            }
        }
    }
}

/// A block response written from its fields as they are reads exactly as through the map
/// `block_headers` builds, for each kind of request it may answer; fields that a map would
/// change (upper case, a repeat, a value it refuses) are not taken as they are.
#[test]
fn plain_block_fields_encode_as_their_map() {
    use crate::response::{block_fields_plain, block_headers};
    use portcullis_engine::BlockResponse;
    let pairs = |list: &[(&str, &str)]| -> Vec<portcullis_engine::response::BlockField> {
        list.iter()
            .map(|(k, v)| (k.to_string().into(), v.to_string().into()))
            .collect()
    };
    let shipped = [
        pairs(&[
            ("content-type", "application/json; charset=utf-8"),
            ("cache-control", "no-cache"),
            ("pragma", "no-cache"),
            ("connection", "close"),
        ]),
        pairs(&[("content-type", "text/html; charset=utf-8")]),
        pairs(&[
            ("location", "https://example.test/blocked"),
            ("x-why", "caf\u{e9} \t1"),
        ]),
        pairs(&[("content-length", "2"), ("connection", "keep-alive")]),
    ];
    for headers in shipped {
        assert!(block_fields_plain(&headers), "{headers:?}");
        let b = BlockResponse {
            status: 403,
            headers: headers.clone(),
            body: b"{}".to_vec(),
            plain_fields: false,
        };
        let map = block_headers(&b);
        for method in [Method::GET, Method::HEAD] {
            for (close, http10) in [(false, false), (true, false), (false, true)] {
                let answering = Answering {
                    method: &method,
                    close,
                    http10,
                };
                let head = |headers| Head {
                    status: StatusCode::FORBIDDEN,
                    version: Version::HTTP_11,
                    headers,
                    strip: false,
                };
                let (mut a, mut m) = (Vec::new(), Vec::new());
                let ea = encode(
                    &mut a,
                    &head(Fields::Plain(&headers)),
                    BodyLen::Known(2),
                    answering,
                );
                let em = encode(
                    &mut m,
                    &head(Fields::Map(&map)),
                    BodyLen::Known(2),
                    answering,
                );
                assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&m));
                assert_eq!(ea, em);
            }
        }
    }
    for odd in [
        pairs(&[("Content-Type", "text/html")]),
        pairs(&[("x-a", "1"), ("x-b", "2"), ("x-a", "3")]),
        pairs(&[("x-a", "line\nbreak")]),
        pairs(&[("x a", "1")]),
        pairs(&[("", "1")]),
    ] {
        assert!(!block_fields_plain(&odd), "{odd:?}");
    }
}

/// The shipped block pages written as they are (`encode_as_is`) read exactly as through
/// `encode`, under every status a refusal gives them and for every kind of request; the requests
/// whose answer `encode` would change (HEAD, HTTP/1.0) and fields that do not say all it adds are
/// left to `encode`.
#[test]
fn shipped_pages_go_out_as_is_exactly_as_encoded() {
    use portcullis_engine::BlockReply;
    use portcullis_engine::response::{BlockField, render};
    use portcullis_support::SupportId;
    let id = SupportId(11_241_918_873_745_059_631);
    let mut used = 0;
    for reply in [BlockReply::ApiJson, BlockReply::DefaultPage] {
        let page = render(&reply, id);
        for status in [200, 403, 400, 408, 413, 431, 501] {
            let status = StatusCode::from_u16(status).expect("status");
            for method in [Method::GET, Method::POST, Method::HEAD] {
                for (close, http10) in [(false, false), (true, false), (false, true)] {
                    let req = Answering {
                        method: &method,
                        close,
                        http10,
                    };
                    let len = page.body.len() as u64;
                    let mut fast = b"kept".to_vec();
                    let Some(ef) = encode_as_is(&mut fast, status, &page.headers, len, req) else {
                        assert_eq!(fast, b"kept", "nothing written when declined");
                        assert!(method == Method::HEAD || http10, "{method} {status}");
                        continue;
                    };
                    used += 1;
                    let head = Head {
                        status,
                        version: Version::HTTP_11,
                        headers: Fields::Plain(&page.headers),
                        strip: false,
                    };
                    let mut slow = b"kept".to_vec();
                    let es = encode(&mut slow, &head, BodyLen::Known(len), req);
                    assert_eq!(
                        String::from_utf8_lossy(&fast),
                        String::from_utf8_lossy(&slow)
                    );
                    assert_eq!(ef, es);
                }
            }
        }
    }
    assert!(used > 0);
    // Fields that leave something for `encode` to add or drop are not written as they are.
    let own = |list: &[(&'static str, &'static str)]| -> Vec<BlockField> {
        list.iter().map(|&(k, v)| (k.into(), v.into())).collect()
    };
    for fields in [
        own(&[("content-length", "2")]),
        own(&[("connection", "close")]),
        own(&[("connection", "keep-alive"), ("content-length", "2")]),
        own(&[
            ("connection", "close"),
            ("content-length", "2"),
            ("transfer-encoding", "chunked"),
        ]),
        own(&[
            ("connection", "close"),
            ("content-length", "2"),
            ("trailer", "x"),
        ]),
    ] {
        let req = Answering {
            method: &Method::GET,
            close: true,
            http10: false,
        };
        let mut out = Vec::new();
        assert!(encode_as_is(&mut out, StatusCode::FORBIDDEN, &fields, 2, req).is_none());
        assert!(out.is_empty(), "{fields:?}");
    }
}
