//! Per-request pipeline overhead of the data plane, without sockets: the HTTP/1 head validation
//! every request goes through, the header rewrite (hop-by-hop removal), and one WAF transaction
//! (all phases) against the allow-all policy and the shipped demo policy; and the HTTP/1.1 fast path's
//! codec for one exchange (both heads in, both heads out).
//!
//! Run: `cargo bench --bench pipeline`.

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};

use criterion::{Criterion, criterion_group, criterion_main};
use portcullis::proxy::strip_hop_by_hop;
use portcullis::proxy::{HeadLimits, find_head_end, validate_head};
use portcullis::waf::{CompiledPolicy, ConnInfo, Engine, Step, Transaction};

const HEAD: &[u8] = b"GET /api/users/42?fields=name,email HTTP/1.1\r\n\
Host: shop.example.com\r\n\
User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36\r\n\
Accept: application/json\r\n\
Accept-Encoding: gzip, deflate, br\r\n\
Accept-Language: en-US,en;q=0.9\r\n\
Cookie: session=7f3a9c2e1b; theme=dark\r\n\
Connection: keep-alive\r\n\r\n";

fn parts() -> http::request::Parts {
    let (mut p, ()) = http::Request::get("/api/users/42?fields=name,email")
        .body(())
        .expect("request")
        .into_parts();
    let h = &mut p.headers;
    h.insert("host", "shop.example.com".parse().expect("hv"));
    h.insert(
        "user-agent",
        "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0"
            .parse()
            .expect("hv"),
    );
    h.insert("accept", "application/json".parse().expect("hv"));
    h.insert("accept-encoding", "gzip, deflate, br".parse().expect("hv"));
    h.insert(
        "cookie",
        "session=7f3a9c2e1b; theme=dark".parse().expect("hv"),
    );
    h.insert("connection", "keep-alive".parse().expect("hv"));
    p
}

fn transaction(c: &mut Criterion, name: &str, engine: &Engine) {
    let head = portcullis::waf::RequestHead::from(parts());
    let conn = ConnInfo {
        peer: IpAddr::V4(Ipv4Addr::LOCALHOST),
        tls: false,
    };
    let resp = http::HeaderMap::new();
    c.bench_function(name, |b| {
        b.iter(|| {
            let mut tx = Transaction::new(engine.snapshot(), conn);
            let step = tx.on_request_headers(black_box(&head));
            if step == Step::InspectBody {
                tx.on_request_end();
            }
            tx.on_response_headers(200, &resp);
            black_box(tx.finish(&head.headers))
        })
    });
}

fn bench(c: &mut Criterion) {
    let lim = HeadLimits {
        max_head_bytes: 32 * 1024,
        max_headers: 100,
        max_url_bytes: 8 * 1024,
    };
    c.bench_function("head_validate", |b| {
        b.iter(|| {
            let end = find_head_end(black_box(HEAD))
                .ok()
                .flatten()
                .unwrap_or(HEAD.len());
            black_box(validate_head(&HEAD[..end], &lim))
        })
    });
    let template = parts().headers;
    c.bench_function("header_rewrite", |b| {
        b.iter(|| {
            let mut h = template.clone();
            strip_hop_by_hop(&mut h, true);
            h.insert(
                "x-forwarded-for",
                http::HeaderValue::from_static("127.0.0.1"),
            );
            black_box(h)
        })
    });
    fast_path(c, &lim);
    transaction(
        c,
        "transaction_allow_all",
        &Engine::new(CompiledPolicy::allow_all("bench")),
    );
    match portcullis::demo::load_policy() {
        Ok(p) => transaction(c, "transaction_demo_policy", &Engine::new(p)),
        Err(e) => eprintln!("demo policy unavailable: {e}"),
    }
}

/// The HTTP/1.1 fast path's codec for one exchange: the client's head validated and parsed into
/// parts, the upstream request head written, an nginx-like response head parsed into a header map,
/// and the client's response head encoded.
fn fast_path(c: &mut Criterion, lim: &HeadLimits) {
    use portcullis::proxy::h1;
    const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\n\
Date: Tue, 24 Nov 2026 05:00:00 GMT\r\nContent-Type: application/json\r\nContent-Length: 21\r\n\
Connection: keep-alive\r\n\r\n{\"id\":1,\"name\":\"Ada\"}";
    let head = bytes::Bytes::from_static(HEAD);
    c.bench_function("h1_fast_path_codec", |b| {
        let mut out = Vec::with_capacity(4096);
        b.iter(|| {
            let Ok(req) = h1::parse_request(black_box(&head), lim) else {
                panic!("valid head")
            };
            out.clear();
            h1::encode_request(&mut out, &req.parts, req.seen, Some("127.0.0.1"), &[]);
            let mut buf = bytes::BytesMut::from(RESPONSE);
            let Ok(Some(res)) = h1::parse_response(&mut buf, &req.parts.method) else {
                panic!("response head")
            };
            out.clear();
            let h = h1::ResponseHead {
                status: res.status,
                version: res.version,
                headers: h1::Fields::Raw(&res.headers),
                strip: true,
            };
            let how = h1::Answering {
                method: &req.parts.method,
                close: false,
                http10: false,
            };
            black_box(h1::encode_response_head(
                &mut out,
                &h,
                h1::BodyLen::Known(21),
                how,
            ))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
