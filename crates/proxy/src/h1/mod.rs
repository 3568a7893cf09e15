//! The HTTP/1.1 front-end, and the HTTP/1.1 client of the proxy: every HTTP/1.0 and HTTP/1.1
//! connection is served here, in its own task, with our own codec (httparse) and no hyper in
//! between: each head validated and parsed once, bodies read and relayed in place, responses
//! encoded byte for byte as hyper's server encodes them; upstream HTTP/1.1 connections (plain or
//! TLS) are driven in the same task. The phases themselves are the driver's
//! ([`crate::driver`]); `docs/lifecycle.md` draws the whole path.
//!
//! Map: [`conn`] the connection loop (heads, pipelining, lingering close, the HTTP/2 preface);
//! [`front`] one request as the driver drives it; [`wire`] request heads in, upstream request
//! heads out; [`reqbody`] request bodies in; [`response`] upstream response heads in; [`encode`]
//! response heads out; [`relay`] + [`chunked`] response bodies; [`upconn`] upstream connections
//! and [`upbody`] their bodies for hyper; [`timer`] the connection's timeouts.

pub(crate) mod chunked;
pub(crate) mod conn;
pub(crate) mod encode;
mod front;
mod relay;
mod reqbody;
pub(crate) mod response;
pub(crate) mod timer;
pub(crate) mod upbody;
pub(crate) mod upconn;
pub(crate) mod wire;

pub use encode::{
    Answering, BodyLen, Fields, Head as ResponseHead, encode as encode_response_head,
};
pub use response::parse_response;
pub use wire::{encode_request, parse_request};

/// The fuzz entry point of `h1_wire`: the first byte picks a parser, the rest is its input:
/// request heads (and the upstream head written from them), upstream response heads (and the
/// client's head encoded from them), the chunked decoder fed in pieces, request bodies.
#[cfg(any(test, fuzzing))]
pub fn fuzz_wire(bytes: &[u8]) {
    let Some((&pick, rest)) = bytes.split_first() else {
        return;
    };
    match pick % 4 {
        0 => {
            let lim = crate::head::HeadLimits {
                max_head_bytes: 16 * 1024,
                max_headers: 100,
                max_url_bytes: 8 * 1024,
            };
            if let Ok(Some(end)) = crate::head::find_head_end(rest) {
                let head = bytes::Bytes::copy_from_slice(&rest[..end]);
                if let Ok(req) = wire::parse_request(&head, &lim) {
                    let mut out = Vec::new();
                    assert_eq!(req.seen, wire::HopByHopFields::of(&req.parts.headers));
                    wire::encode_request(&mut out, &req.parts, req.seen, Some("127.0.0.1"), &[]);
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
                        http10: false,
                    };
                    encode::encode(&mut out, &h, encode::BodyLen::Unknown, answering);
                }
            }
        }
        2 => {
            let _ = chunked::fuzz_chunked(rest, usize::from(pick / 4).max(1));
        }
        _ => reqbody::fuzz_request(rest),
    }
}

#[cfg(test)]
mod body_tests;

#[cfg(test)]
mod tests {
    #[test]
    fn fuzz_seeds_do_not_panic() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/seeds/h1_wire");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).expect("seed dir") {
            let bytes = std::fs::read(entry.expect("entry").path()).expect("seed");
            super::fuzz_wire(&bytes);
            n += 1;
        }
        assert!(n >= 3, "expected seed files in {dir}");
    }
}
