//! Request bodies on the HTTP/1.1 connection: `Content-Length` and chunked bodies read from the
//! bytes after the head and then from the connection, handed on without a copy (pieces of the
//! read buffer). The pace limits apply to every wait for the client (`body_read_timeout`,
//! `min_body_rate`, on the connection's timer); `Expect: 100-continue` is answered the first time
//! the body has to be waited for; the rest of a body answered early can be read and discarded
//! within a bound, so the connection can go on.
//!
//! Chunked framing is followed strictly (chunk-size lines and trailer lines of at most 4 KiB, CRLF
//! after each chunk); trailer fields of a request are read and dropped.

use std::future::poll_fn;
use std::pin::pin;
use std::task::Poll;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::chunked::{Decoder, Piece};
use super::timer::Timer;
use crate::driver::BodyError;
use crate::head::Framing;
use crate::limits::Limits;
use crate::pace::Pace;

#[derive(Debug)]
enum Kind {
    Length(u64),
    Chunked(Box<Decoder>),
    Done,
}

/// The body of the request being served; see the module documentation.
#[derive(Debug)]
pub struct ReqBody {
    kind: Kind,
    pace: Pace,
    /// `Expect: 100-continue` not answered yet.
    expect: bool,
}

/// The interim answer to `Expect: 100-continue`, as hyper writes it.
const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

impl ReqBody {
    pub fn new(framing: Framing, expect_continue: bool, lim: &Limits) -> ReqBody {
        let kind = match framing {
            Framing::Length(n) if n > 0 => Kind::Length(n),
            Framing::Chunked => Kind::Chunked(Box::default()),
            _ => Kind::Done,
        };
        ReqBody {
            expect: expect_continue && kind_has_body(&kind),
            kind,
            pace: Pace::new(lim),
        }
    }

    /// True once the whole body was read (or there is none).
    pub fn done(&self) -> bool {
        matches!(self.kind, Kind::Done)
    }

    /// The request has a body (read or not).
    pub fn declared(framing: Framing) -> bool {
        matches!(framing, Framing::Chunked) || matches!(framing, Framing::Length(n) if n > 0)
    }

    /// How much of the body is still to come, when the framing says (`None`: chunked).
    pub fn left(&self) -> Option<u64> {
        match self.kind {
            Kind::Length(n) => Some(n),
            Kind::Chunked(_) => None,
            Kind::Done => Some(0),
        }
    }

    /// The 100-continue promise is still open: the client may be waiting before it sends the body.
    pub fn awaiting_continue(&self) -> bool {
        self.expect
    }

    /// The next piece of the body (`None` at its end): from `buf` first (bytes read after the
    /// head), then from `io`, each wait bounded by the pace limits on `timer`.
    pub async fn next<S: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        io: &mut S,
        buf: &mut BytesMut,
        timer: &mut Timer,
    ) -> Result<Option<Bytes>, BodyError> {
        loop {
            if let Some(piece) = self.take(buf)? {
                self.pace.got(piece.len());
                return Ok(Some(piece));
            }
            if self.done() {
                return Ok(None);
            }
            if self.expect {
                self.expect = false;
                io.write_all(CONTINUE).await.map_err(|_| BodyError::Gone)?;
            }
            self.read(io, buf, timer).await?;
        }
    }

    /// Takes the next piece off `buf`, if it holds one.
    fn take(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, BodyError> {
        match &mut self.kind {
            Kind::Done => Ok(None),
            Kind::Length(left) => {
                if buf.is_empty() {
                    return Ok(None);
                }
                let n = (buf.len() as u64).min(*left);
                *left -= n;
                if *left == 0 {
                    self.kind = Kind::Done;
                }
                Ok(Some(buf.split_to(n as usize).freeze()))
            }
            Kind::Chunked(dec) => loop {
                match dec.next(buf).map_err(BodyError::Malformed)? {
                    None => return Ok(None),
                    Some(Piece::Data(d)) if d.is_empty() => {}
                    Some(Piece::Data(d)) => return Ok(Some(d.freeze())),
                    Some(Piece::End) => {
                        self.kind = Kind::Done;
                        return Ok(None);
                    }
                }
            },
        }
    }

    /// Reads more bytes into `buf`, within the pace limits.
    async fn read<S: AsyncRead + Unpin>(
        &mut self,
        io: &mut S,
        buf: &mut BytesMut,
        timer: &mut Timer,
    ) -> Result<(), BodyError> {
        if buf.capacity() - buf.len() < 1024 {
            buf.reserve(16 * 1024);
        }
        let mut armed = false;
        let mut read = pin!(io.read_buf(buf));
        let pace = &mut self.pace;
        let got = poll_fn(|cx| {
            if let Poll::Ready(r) = read.as_mut().poll(cx) {
                return Poll::Ready(Some(r));
            }
            if !armed {
                timer.set(pace.waiting());
                armed = true;
            }
            timer.poll_expired(cx).map(|()| None)
        })
        .await;
        self.pace.got(0);
        match got {
            Some(Ok(n)) if n > 0 => Ok(()),
            Some(_) => Err(BodyError::Gone),
            None => Err(BodyError::TooSlow),
        }
    }

    /// Reads and discards the rest of the body when it is at most `max` bytes (as far as its
    /// framing tells); true when it ended, so the connection can carry the next request.
    pub async fn discard<S: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        io: &mut S,
        buf: &mut BytesMut,
        timer: &mut Timer,
        max: u64,
    ) -> bool {
        if self.expect {
            // The client waits for a 100 that will not come: it may not send the body at all.
            return false;
        }
        let mut seen = 0u64;
        loop {
            match self.next(io, buf, timer).await {
                Ok(None) => return true,
                Ok(Some(b)) => {
                    seen += b.len() as u64;
                    if seen > max {
                        return false;
                    }
                }
                Err(_) => return false,
            }
        }
    }
}

/// The fuzz entry point of request bodies (`h1_wire`): a request head and what follows it, the
/// body read off the bytes as the connection code reads it, then sent on as the proxy frames an
/// upstream body of unknown length and read back: the same bytes must come out.
#[cfg(any(test, fuzzing))]
pub fn fuzz_request(bytes: &[u8]) {
    let lim = crate::head::HeadLimits {
        max_head_bytes: 16 * 1024,
        max_headers: 100,
        max_url_bytes: 8 * 1024,
    };
    let Ok(Some(end)) = crate::head::find_head_end(bytes) else {
        return;
    };
    let head = Bytes::copy_from_slice(&bytes[..end]);
    let Ok(req) = super::wire::parse_request(&head, &lim) else {
        return;
    };
    let mut body = ReqBody::new(req.framing, false, &Limits::default());
    let mut buf = BytesMut::from(&bytes[end..]);
    let mut data = Vec::new();
    while let Ok(Some(piece)) = body.take(&mut buf) {
        assert!(!piece.is_empty());
        data.extend_from_slice(&piece);
    }
    if !body.done() {
        return;
    }
    let mut wire = Vec::new();
    for piece in data.chunks(7) {
        super::chunked::encode_chunk(&mut wire, piece);
    }
    wire.extend_from_slice(b"0\r\n\r\n");
    let mut framed = BytesMut::from(&wire[..]);
    let mut back = Vec::new();
    let ended = Decoder::default().decode(&mut framed, &mut |d| back.extend_from_slice(d));
    assert_eq!(ended, Ok(true));
    assert!(framed.is_empty());
    assert_eq!(back, data);
}

fn kind_has_body(kind: &Kind) -> bool {
    !matches!(kind, Kind::Done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn lim() -> Limits {
        Limits {
            body_read_timeout: Duration::from_millis(200),
            ..Limits::default()
        }
    }

    async fn read_all(
        framing: Framing,
        after_head: &[u8],
        rest: &[u8],
    ) -> Result<Vec<u8>, BodyError> {
        let (mut client, mut server) = tokio::io::duplex(1 << 16);
        client.write_all(rest).await.expect("write");
        let mut buf = BytesMut::from(after_head);
        let mut timer = Timer::new(tokio::time::Instant::now() + Duration::from_secs(60));
        let mut body = ReqBody::new(framing, false, &lim());
        let mut out = Vec::new();
        while let Some(b) = body.next(&mut server, &mut buf, &mut timer).await? {
            out.extend_from_slice(&b);
        }
        drop(client);
        assert!(body.done());
        Ok(out)
    }

    #[tokio::test]
    async fn length_and_chunked_bodies_are_read_from_the_buffer_then_the_connection() {
        assert_eq!(
            read_all(Framing::Length(5), b"he", b"llo").await,
            Ok(b"hello".to_vec())
        );
        assert_eq!(
            read_all(
                Framing::Chunked,
                b"3\r\nabc\r\n",
                b"2;x=1\r\nde\r\n0\r\nT: 1\r\n\r\n"
            )
            .await,
            Ok(b"abcde".to_vec())
        );
        assert_eq!(
            read_all(Framing::Chunked, b"3\r\nabcX\r\n", b"").await,
            Err(BodyError::Malformed("malformed chunk end"))
        );
    }

    #[tokio::test]
    async fn a_body_cut_short_or_stalled_is_an_error() {
        let (client, mut server) = tokio::io::duplex(64);
        let mut buf = BytesMut::from(&b"ab"[..]);
        let mut timer = Timer::new(tokio::time::Instant::now() + Duration::from_secs(60));
        let mut body = ReqBody::new(Framing::Length(5), false, &lim());
        assert!(body.next(&mut server, &mut buf, &mut timer).await.is_ok());
        // Nothing more comes: cut at the body read timeout.
        assert_eq!(
            body.next(&mut server, &mut buf, &mut timer).await,
            Err(BodyError::TooSlow)
        );
        drop(client);
        let mut body = ReqBody::new(Framing::Length(5), false, &lim());
        assert_eq!(
            body.next(&mut server, &mut buf, &mut timer).await,
            Err(BodyError::Gone)
        );
    }

    #[tokio::test]
    async fn expect_continue_is_answered_before_the_first_wait() {
        let (mut client, mut server) = tokio::io::duplex(1024);
        let mut buf = BytesMut::new();
        let mut timer = Timer::new(tokio::time::Instant::now() + Duration::from_secs(60));
        let mut body = ReqBody::new(Framing::Length(2), true, &lim());
        let reader = tokio::spawn(async move {
            let got = body.next(&mut server, &mut buf, &mut timer).await;
            (got, server)
        });
        let mut interim = [0u8; CONTINUE.len()];
        client.read_exact(&mut interim).await.expect("100");
        assert_eq!(&interim, CONTINUE);
        client.write_all(b"ok").await.expect("write");
        let (got, _server) = reader.await.expect("task");
        assert_eq!(got, Ok(Some(Bytes::from_static(b"ok"))));
    }
}
