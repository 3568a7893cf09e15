//! The HTTP/1.1 fast path: bodiless HTTP/1.1 requests to `http://` members served in the client
//! connection's task with our own codec (httparse), no hyper in between: one task per connection,
//! the upstream connection driven inline, each head parsed once, responses encoded byte for byte
//! as hyper's server encodes them. Everything else goes to the general path (guard + hyper), which
//! takes the connection over at the first request the fast path does not serve.
//! `docs/lifecycle.md` draws both paths.
//!
//! Map: [`conn`] the connection loop and the handover; [`exchange`] one request through the WAF
//! phases and the upstream; [`wire`] request heads in, upstream request heads out; [`response`] upstream
//! response heads in; [`encode`] response heads out; [`relay`] + [`chunked`] response bodies; [`upconn`]
//! upstream connections; [`timer`] the connection's timeouts.
//!
//! Imports: `crate::proxy::{head, handler, conns, upstream, drain, listener}`, `crate::waf`.

pub mod chunked;
pub mod conn;
pub mod encode;
pub mod exchange;
pub mod relay;
pub mod response;
pub mod timer;
pub mod upconn;
pub mod wire;

/// The fuzz entry point of `h1_wire`: the first byte picks a parser, the rest is its input.
pub fn fuzz_wire(bytes: &[u8]) {
    let Some((&pick, rest)) = bytes.split_first() else {
        return;
    };
    match pick % 3 {
        0 => {
            let lim = crate::proxy::head::HeadLimits {
                max_head_bytes: 16 * 1024,
                max_headers: 100,
                max_url_bytes: 8 * 1024,
            };
            if let Ok(Some(end)) = crate::proxy::head::find_head_end(rest) {
                let head = bytes::Bytes::copy_from_slice(&rest[..end]);
                if let Ok(req) = wire::parse_request(&head, &lim) {
                    let mut out = Vec::new();
                    assert_eq!(req.seen, wire::Seen::of(&req.parts.headers));
                    wire::encode_request(&mut out, &req.parts, req.seen, Some("127.0.0.1"));
                }
            }
        }
        1 => {
            for method in [http::Method::GET, http::Method::HEAD] {
                let mut buf = bytes::BytesMut::from(rest);
                if let Ok(Some(head)) = response::parse_response(&mut buf, &method) {
                    let mut out = Vec::new();
                    let h = encode::Head {
                        status: head.status,
                        version: head.version,
                        headers: encode::Fields::Raw(&head.headers),
                        strip: true,
                    };
                    let answering = encode::Answering {
                        method: &method,
                        close: false,
                    };
                    encode::encode(&mut out, &h, encode::BodyLen::Unknown, answering);
                }
            }
        }
        _ => {
            let _ = chunked::fuzz_chunked(rest, usize::from(pick / 3).max(1));
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fuzz_seeds_do_not_panic() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/h1_wire");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).expect("seed dir") {
            let bytes = std::fs::read(entry.expect("entry").path()).expect("seed");
            super::fuzz_wire(&bytes);
            n += 1;
        }
        assert!(n >= 3, "expected seed files in {dir}");
    }
}
