//! Response bodies from an upstream connection to the client, in the client connection's task:
//! `Content-Length` bodies copied as they come (the head and the first bytes in one write),
//! chunked bodies decoded and re-chunked (trailers where allowed), bodies delimited by the
//! upstream's close streamed until it; and bodies of hyper's HTTP/2 client re-framed the same way.

use bytes::Buf;
use http::HeaderName;
use http_body_util::BodyExt;
use tokio::io::{AsyncWrite, AsyncWriteExt};

use super::chunked::{Decoder, encode_chunk, encode_end};
use super::encode::{BodyOut, Encoded};
use super::response::BodyFraming;
use super::upconn::UpConn;
use crate::upstream::ProxyBody;

/// How a relayed body ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Relayed {
    /// Complete, and the upstream connection holds nothing more: it may serve another request.
    Reusable,
    /// Complete; the upstream connection is not reusable.
    Done,
    /// The upstream broke off (or sent a malformed body): the client's response is cut short, so
    /// the client connection must close too.
    Broken,
}

/// Writes `out` (the encoded response head) and the body that follows it on `up`.
pub async fn body<W: AsyncWrite + Unpin>(
    io: &mut W,
    out: &mut Vec<u8>,
    up: &mut UpConn,
    framing: BodyFraming,
    enc: &Encoded,
    te_trailers: bool,
) -> std::io::Result<Relayed> {
    let forward = enc.body != BodyOut::Length(0);
    match framing {
        BodyFraming::Empty => {
            io.write_all(out).await?;
            Ok(clean(up))
        }
        BodyFraming::Length(n) => {
            let mut left = n;
            let take = (up.buf.len() as u64).min(left) as usize;
            if forward {
                out.extend_from_slice(&up.buf[..take]);
            }
            up.buf.advance(take);
            left -= take as u64;
            io.write_all(out).await?;
            while left > 0 {
                up.buf.clear();
                if up.read_more().await.unwrap_or(0) == 0 {
                    return Ok(Relayed::Broken);
                }
                let take = (up.buf.len() as u64).min(left) as usize;
                if forward {
                    io.write_all(&up.buf[..take]).await?;
                }
                up.buf.advance(take);
                left -= take as u64;
            }
            Ok(clean(up))
        }
        BodyFraming::Chunked => {
            let chunked = enc.body == BodyOut::Chunked;
            let mut dec = Decoder::default();
            loop {
                let done = dec.decode(&mut up.buf, &mut |d| emit(out, d, enc.body));
                match done {
                    Err(why) => {
                        tracing::warn!("upstream response body: {why}");
                        io.write_all(out).await?;
                        return Ok(Relayed::Broken);
                    }
                    Ok(true) => {
                        if chunked {
                            let allowed = enc.trailers.as_deref().filter(|_| te_trailers);
                            encode_end(out, &dec.trailers(), allowed);
                        }
                        io.write_all(out).await?;
                        return Ok(clean(up));
                    }
                    Ok(false) => {}
                }
                if !out.is_empty() {
                    io.write_all(out).await?;
                    out.clear();
                }
                if up.read_more().await.unwrap_or(0) == 0 {
                    return Ok(Relayed::Broken);
                }
            }
        }
        BodyFraming::Eof => {
            loop {
                if !up.buf.is_empty() {
                    emit(out, &up.buf, enc.body);
                    up.buf.clear();
                }
                if !out.is_empty() {
                    io.write_all(out).await?;
                    out.clear();
                }
                match up.read_more().await {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(_) => return Ok(Relayed::Broken),
                }
            }
            if enc.body == BodyOut::Chunked {
                io.write_all(b"0\r\n\r\n").await?;
            }
            Ok(Relayed::Done)
        }
    }
}

/// Writes `out` (the encoded response head) and the body `body` of a response from hyper's
/// HTTP/2 client: data re-framed as `enc` says, trailers where the client and the response allow
/// them.
pub async fn stream<W: AsyncWrite + Unpin>(
    io: &mut W,
    out: &mut Vec<u8>,
    mut body: ProxyBody,
    enc: &Encoded,
    te_trailers: bool,
) -> std::io::Result<Relayed> {
    // The head goes out at once: a streamed answer may take its time.
    io.write_all(out).await?;
    out.clear();
    loop {
        match body.frame().await {
            None => break,
            Some(Err(e)) => {
                tracing::warn!("upstream response body: {e}");
                io.write_all(out).await?;
                return Ok(Relayed::Broken);
            }
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => {
                    if !data.is_empty() {
                        emit(out, &data, enc.body);
                    }
                }
                Err(frame) => {
                    if let (Ok(t), BodyOut::Chunked) = (frame.into_trailers(), enc.body) {
                        let fields: Vec<(HeaderName, Vec<u8>)> = t
                            .iter()
                            .map(|(n, v)| (n.clone(), v.as_bytes().to_vec()))
                            .collect();
                        let allowed = enc.trailers.as_deref().filter(|_| te_trailers);
                        encode_end(out, &fields, allowed);
                        io.write_all(out).await?;
                        return Ok(Relayed::Done);
                    }
                }
            },
        }
        if !out.is_empty() {
            io.write_all(out).await?;
            out.clear();
        }
    }
    if enc.body == BodyOut::Chunked {
        out.extend_from_slice(b"0\r\n\r\n");
    }
    io.write_all(out).await?;
    Ok(Relayed::Done)
}

fn emit(out: &mut Vec<u8>, data: &[u8], how: BodyOut) {
    match how {
        BodyOut::Chunked => encode_chunk(out, data),
        BodyOut::Close => out.extend_from_slice(data),
        BodyOut::Length(_) => {}
    }
}

fn clean(up: &UpConn) -> Relayed {
    if up.buf.is_empty() {
        Relayed::Reusable
    } else {
        Relayed::Done
    }
}
