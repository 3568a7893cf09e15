//! Responses the proxy itself produces: the engine's block response converted without changing a
//! byte (status, header order, body) and hop-by-hop header removal.

use bytes::Bytes;
use http::HeaderMap;
use http::header::{CONNECTION, HeaderName, HeaderValue, TE, TRANSFER_ENCODING, UPGRADE};
use http_body_util::{BodyExt, Full};

use super::upstream::ProxyBody;
use portcullis_engine::BlockResponse;
use portcullis_engine::response::BlockField;

pub fn full(body: impl Into<Bytes>) -> ProxyBody {
    Full::new(body.into())
        .map_err(|e| match e {})
        .boxed_unsync()
}

/// The fields of a block response as a map (a field that is not valid HTTP is left out).
pub fn block_headers(b: &BlockResponse) -> HeaderMap {
    let mut h = HeaderMap::with_capacity(b.headers.len());
    for (k, v) in &b.headers {
        match (
            HeaderName::from_bytes(k.as_bytes()),
            HeaderValue::from_str(v),
        ) {
            (Ok(k), Ok(v)) => {
                h.append(k, v);
            }
            _ => tracing::warn!(header = %k, "block response header is not valid HTTP; left out"),
        }
    }
    h
}

/// Whether a block response's fields, written in their order as they are, read exactly as
/// [`block_headers`]' map writes them: every name a lower-case token (the map's spelling), every
/// value one `HeaderValue` accepts (nothing left out), no name twice (the map groups repeats).
/// The shipped block responses are; a policy's own headers may not be, and go through the map.
pub fn block_fields_plain(fields: &[BlockField]) -> bool {
    // Past a few fields the pairwise look for repeats costs more than the map it saves.
    const PAIRWISE: usize = 16;
    let value = |b: u8| b == b'\t' || (b >= 0x20 && b != 0x7f);
    fields.len() <= PAIRWISE
        && fields.iter().enumerate().all(|(i, (k, v))| {
            !k.is_empty()
                && k.bytes().all(|b| PLAIN_NAME[usize::from(b)])
                && v.bytes().all(value)
                && fields[..i].iter().all(|(prev, _)| prev != k)
        })
}

/// The bytes of a field name a map keeps as they are: lower-case letters, digits and the other
/// token characters. A table, because every byte of every blocked request's fields is looked up.
const PLAIN_NAME: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_lowercase() || c.is_ascii_digit() || {
            let others = b"!#$%&'*+-.^_`|~";
            let mut i = 0;
            let mut found = false;
            while i < others.len() {
                found |= others[i] == c;
                i += 1;
            }
            found
        };
        b += 1;
    }
    t
};

/// Headers that are never forwarded (names built once: a `&str` lookup parses the name each time).
const HOP_BY_HOP: [HeaderName; 5] = [
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    // Only meaningful with `Upgrade: h2c`, which is never forwarded.
    HeaderName::from_static("http2-settings"),
    http::header::PROXY_AUTHENTICATE,
    http::header::PROXY_AUTHORIZATION,
];

/// Removes hop-by-hop headers (RFC 9110 7.6.1): `Connection` and the fields it names,
/// `Keep-Alive`, `Transfer-Encoding`, `Upgrade`, `TE` (kept as `te: trailers` on requests when the
/// client asked for trailers, which gRPC needs).
pub fn strip_hop_by_hop(h: &mut HeaderMap, request: bool) {
    if h.contains_key(CONNECTION) {
        let named: Vec<HeaderName> = h
            .get_all(CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|s| s.split(','))
            .filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok())
            .collect();
        for n in named {
            // Never let a client strip what identifies or frames the request.
            if !matches!(n.as_str(), "host" | "content-length" | "x-forwarded-for") {
                h.remove(n);
            }
        }
        h.remove(CONNECTION);
    }
    for n in &HOP_BY_HOP {
        h.remove(n);
    }
    h.remove(TRANSFER_ENCODING);
    h.remove(UPGRADE);
    if h.contains_key(TE) {
        let trailers = request
            && h.get_all(TE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .any(|v| {
                    v.split(',')
                        .any(|c| c.trim().eq_ignore_ascii_case("trailers"))
                });
        h.remove(TE);
        if trailers {
            h.insert(TE, HeaderValue::from_static("trailers"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{Response, StatusCode};
    use portcullis_engine::{BlockReply, response::render};
    use portcullis_support::SupportId;

    #[test]
    fn hop_by_hop_headers_go() {
        let mut h = HeaderMap::new();
        h.insert(
            "connection",
            HeaderValue::from_static("keep-alive, x-secret, host"),
        );
        h.insert("x-secret", HeaderValue::from_static("1"));
        h.insert("host", HeaderValue::from_static("a"));
        h.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        h.insert("te", HeaderValue::from_static("trailers, deflate"));
        h.insert("upgrade", HeaderValue::from_static("websocket"));
        strip_hop_by_hop(&mut h, true);
        let names: Vec<&str> = h.keys().map(|k| k.as_str()).collect();
        assert_eq!(names, ["host", "te"]);
        assert_eq!(h["te"], "trailers");
    }

    /// The engine's block response as a hyper response: same status, same headers in the same order,
    /// same body (what the fronts send through `block_headers`), to compare the wire bytes.
    fn block_reply(b: BlockResponse) -> Response<ProxyBody> {
        let headers = block_headers(&b);
        let mut res = Response::new(full(b.body));
        *res.status_mut() = StatusCode::from_u16(b.status).unwrap_or(StatusCode::FORBIDDEN);
        *res.headers_mut() = headers;
        res
    }

    const ID: SupportId = SupportId(11_241_918_873_745_059_631);

    fn server(
        reply: BlockResponse,
    ) -> impl hyper::service::Service<
        http::Request<hyper::body::Incoming>,
        Response = Response<ProxyBody>,
        Error = std::convert::Infallible,
        Future = std::future::Ready<Result<Response<ProxyBody>, std::convert::Infallible>>,
    > + Clone {
        hyper::service::service_fn(move |_req| std::future::ready(Ok(block_reply(reply.clone()))))
    }

    /// Serves `reply` once over HTTP/1.1 (as the proxy's server is configured) and returns the wire bytes.
    async fn h1_wire(reply: BlockResponse) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut client, io) = tokio::io::duplex(8192);
        tokio::spawn(async move {
            let mut b = hyper::server::conn::http1::Builder::new();
            b.auto_date_header(false);
            let _ = b
                .serve_connection(hyper_util::rt::TokioIo::new(io), server(reply))
                .await;
        });
        client
            .write_all(b"GET /x HTTP/1.1\r\nhost: a\r\n\r\n")
            .await
            .expect("write");
        let mut out = Vec::new();
        client.read_to_end(&mut out).await.expect("read");
        String::from_utf8_lossy(&out).into_owned()
    }

    #[tokio::test]
    async fn api_and_page_block_responses_go_out_byte_for_byte() {
        let expected = "HTTP/1.1 403 Forbidden\r\ncontent-type: application/json; charset=utf-8\r\n\
            cache-control: no-cache\r\npragma: no-cache\r\nconnection: close\r\ncontent-length: 36\r\n\r\n\
            {\"supportID\":\"11241918873745059631\"}";
        assert_eq!(h1_wire(render(&BlockReply::ApiJson, ID)).await, expected);

        let page = portcullis_engine::response::default_page(ID);
        let expected = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncache-control: no-cache\r\n\
             pragma: no-cache\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{page}",
            page.len()
        );
        assert_eq!(
            h1_wire(render(&BlockReply::DefaultPage, ID)).await,
            expected
        );
    }

    /// A block response that says its fields are plain skips the check of every byte: the check
    /// must agree, for each page the engine renders, and for a HEAD request's and a refusal's.
    #[test]
    fn rendered_pages_that_claim_plain_fields_have_them() {
        let replies = [
            BlockReply::ApiJson,
            BlockReply::DefaultPage,
            BlockReply::Redirect {
                location: "https://example.test/why".into(),
            },
            portcullis_engine::response::default_grpc_reply(),
        ];
        let mut claimed = 0;
        for reply in &replies {
            let r = render(reply, ID);
            if r.plain_fields {
                claimed += 1;
                assert!(block_fields_plain(&r.headers), "{reply:?}: {:?}", r.headers);
            }
        }
        assert_eq!(claimed, 2, "the two shipped pages claim plain fields");
    }

    #[tokio::test]
    async fn grpc_block_is_trailers_only_over_http2() {
        let (client, io) = tokio::io::duplex(8192);
        let reply = render(&portcullis_engine::response::default_grpc_reply(), ID);
        tokio::spawn(async move {
            let mut b =
                hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new());
            b.auto_date_header(false);
            let _ = b
                .serve_connection(hyper_util::rt::TokioIo::new(io), server(reply))
                .await;
        });
        let (mut send, conn) = hyper::client::conn::http2::handshake(
            hyper_util::rt::TokioExecutor::new(),
            hyper_util::rt::TokioIo::new(client),
        )
        .await
        .expect("handshake");
        tokio::spawn(conn);
        let req = http::Request::post("http://a/pkg.Svc/Method")
            .header("content-type", "application/grpc")
            .body(http_body_util::Empty::<Bytes>::new())
            .expect("req");
        let res = send.send_request(req).await.expect("response");
        assert_eq!(res.status(), 200);
        let names: Vec<(&str, &str)> = res
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str(), v.to_str().unwrap_or("?")))
            .collect();
        assert_eq!(
            names,
            [
                ("content-type", "application/grpc; charset=utf-8"),
                ("grpc-status", "3"),
                (
                    "grpc-message",
                    "Request Rejected. Your support ID is: 11241918873745059631"
                ),
                ("content-length", "0"),
            ]
        );
        // HEADERS carried END_STREAM: no data, no trailers frame.
        assert!(http_body::Body::is_end_stream(res.body()));
        let collected = res.into_body().collect().await.expect("body");
        assert!(collected.trailers().is_none());
        assert!(collected.to_bytes().is_empty());
    }
}
