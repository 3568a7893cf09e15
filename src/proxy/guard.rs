//! An IO wrapper between a client connection and hyper that follows HTTP/1 framing and validates
//! every request head with [`super::head::validate_head`] before hyper sees a byte of it.
//!
//! Body bytes pass straight through (the wrapper only counts them, and follows chunk sizes, so it
//! knows where the next head of a keep-alive connection starts). Head bytes are held until the
//! head is complete and valid. A rejected head is replaced by a synthetic request carrying
//! [`super::head::REJECT_HEADER`] ([`super::refuse`]), which the service answers with the status
//! (and `Connection: close`), so the answer is ordered after the responses to the requests
//! pipelined before it and nothing of it reaches an upstream.
//! A head that does not complete within the header timeout, counted from its first byte, ends the
//! connection (slowloris), and so does a new connection that sends nothing for that long. HTTP/2
//! connections (prior knowledge or ALPN `h2`) pass through untouched once their first bytes came.
//!
//! An upgrade request (WebSocket, [`Framing::Upgrade`]) arms the connection's [`UpgradeLatch`]: the
//! bytes after its head are held, never read as HTTP/1. When the service switches protocols (it
//! opens the latch before answering `101`) they pass through as the tunnel; otherwise the service
//! closes the connection after its answer.
//!
//! Imports: tokio IO traits, `super::head`.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

use super::head::{self, Framing, HeadLimits};
use super::refuse;

const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Longest chunk-size or trailer line accepted.
const MAX_LINE: usize = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Start of a cleartext connection: HTTP/1 or the HTTP/2 preface?
    Sniff,
    Head,
    Body(u64),
    ChunkSize,
    ChunkData(u64),
    ChunkCrlf(u8),
    Trailers,
    /// HTTP/2: not ours to frame.
    Pass,
    /// A synthetic reject request was handed to hyper; nothing more is read.
    Rejected,
    /// An upgrade request was handed to hyper; what follows is held until the latch opens.
    AwaitUpgrade,
}

/// Shared between a connection's guard and its service: did the guard pass an upgrade request, and
/// did the service switch protocols?
#[derive(Debug, Default)]
pub struct UpgradeLatch(AtomicU8);

const ARMED: u8 = 1;
const OPEN: u8 = 2;

impl UpgradeLatch {
    /// True when the guard passed an upgrade request that the service has not answered yet
    /// (the service must then upgrade, or close the connection after its answer).
    pub fn armed(&self) -> bool {
        self.0.load(Ordering::Acquire) == ARMED
    }

    /// The service answers `101`: the held bytes and everything after them are the tunnel's.
    pub fn open(&self) {
        self.0.store(OPEN, Ordering::Release);
    }

    fn arm(&self) {
        self.0.store(ARMED, Ordering::Release);
    }

    fn is_open(&self) -> bool {
        self.0.load(Ordering::Acquire) == OPEN
    }
}

/// The guarded stream; see the module documentation.
pub struct Guard<S> {
    inner: S,
    raw: BytesMut,
    ready: BytesMut,
    line: Vec<u8>,
    state: State,
    lim: HeadLimits,
    header_timeout: Duration,
    deadline: Option<Pin<Box<Sleep>>>,
    eof: bool,
    latch: Option<Arc<UpgradeLatch>>,
    /// Nothing has been read from the connection yet: its first bytes (a head, or the HTTP/2
    /// preface) are due within the header timeout too.
    fresh: bool,
}

impl<S> Guard<S> {
    /// Wraps a cleartext connection (detects the HTTP/2 preface itself).
    pub fn cleartext(inner: S, lim: HeadLimits, header_timeout: Duration) -> Self {
        Self::with_state(inner, lim, header_timeout, State::Sniff)
    }

    /// Wraps a TLS connection given its ALPN outcome (`None`: no ALPN, so sniff as in cleartext).
    pub fn negotiated(
        inner: S,
        alpn: Option<&[u8]>,
        lim: HeadLimits,
        header_timeout: Duration,
    ) -> Self {
        let state = match alpn {
            Some(b"h2") => State::Pass,
            Some(_) => State::Head,
            None => State::Sniff,
        };
        Self::with_state(inner, lim, header_timeout, state)
    }

    fn with_state(inner: S, lim: HeadLimits, header_timeout: Duration, state: State) -> Self {
        Guard {
            inner,
            raw: BytesMut::new(),
            ready: BytesMut::new(),
            line: Vec::new(),
            state,
            lim,
            header_timeout,
            deadline: None,
            eof: false,
            latch: None,
            fresh: true,
        }
    }

    /// Wraps a connection the HTTP/1 fast path (`super::h1`) served until now: `buffered` holds
    /// what it read and did not serve (starting at a head, or at the HTTP/2 preface when `sniff`).
    pub fn resume(
        inner: S,
        buffered: BytesMut,
        sniff: bool,
        lim: HeadLimits,
        header_timeout: Duration,
    ) -> Self {
        let state = if sniff { State::Sniff } else { State::Head };
        let mut g = Self::with_state(inner, lim, header_timeout, state);
        g.raw = buffered;
        g.fresh = false;
        g
    }

    /// Lets upgrade requests through, coordinated with the service by `latch`; without one an
    /// upgrade request is an ordinary request (its `Upgrade` header is not forwarded).
    pub fn with_upgrades(mut self, latch: Arc<UpgradeLatch>) -> Self {
        self.latch = Some(latch);
        self
    }

    fn reject(&mut self, r: head::Reject) {
        tracing::debug!(
            status = r.status,
            reason = r.reason,
            "request head rejected"
        );
        if self.state == State::Head {
            // At a head boundary `ready` holds whole requests that came before the refused one:
            // they are served and answered first.
            let synthetic = refuse::synthetic_request(r, &self.raw);
            self.ready.extend_from_slice(&synthetic);
        } else {
            // Inside a body: the request it belongs to cannot be completed.
            self.ready.clear();
            self.ready
                .extend_from_slice(&refuse::synthetic_request(r, b""));
        }
        self.raw.clear();
        self.state = State::Rejected;
        self.deadline = None;
    }

    /// Moves classified bytes from `raw` to `ready`, validating heads on the way.
    fn process(&mut self) {
        while !self.raw.is_empty() {
            match self.state {
                State::Sniff => {
                    let n = self.raw.len().min(H2_PREFACE.len());
                    if self.raw[..n] != H2_PREFACE[..n] {
                        self.state = State::Head;
                    } else if n == H2_PREFACE.len() {
                        self.state = State::Pass;
                    } else {
                        return;
                    }
                }
                State::AwaitUpgrade => {
                    if !self.latch.as_ref().is_some_and(|l| l.is_open()) {
                        return;
                    }
                    self.state = State::Pass;
                }
                State::Pass | State::Rejected => {
                    if self.state == State::Pass {
                        let all = self.raw.split();
                        self.ready.unsplit(all);
                    } else {
                        self.raw.clear();
                    }
                }
                State::Head => match head::find_head_end(&self.raw) {
                    Err(r) => return self.reject(r),
                    Ok(None) => {
                        if self.raw.len() > self.lim.max_head_bytes {
                            return self.reject(head::Reject {
                                status: 431,
                                reason: "request head too large",
                            });
                        }
                        return;
                    }
                    Ok(Some(end)) => match head::validate_scanned(&self.raw[..end], &self.lim) {
                        Err(r) => return self.reject(r),
                        Ok(framing) => {
                            let h = self.raw.split_to(end);
                            self.ready.unsplit(h);
                            self.deadline = None;
                            self.state = match (framing, &self.latch) {
                                (Framing::Upgrade, Some(latch)) => {
                                    latch.arm();
                                    State::AwaitUpgrade
                                }
                                (Framing::None | Framing::Upgrade, _) => State::Head,
                                (Framing::Length(n), _) => State::Body(n),
                                (Framing::Chunked, _) => State::ChunkSize,
                            };
                        }
                    },
                },
                State::Body(n) => {
                    let take = (self.raw.len() as u64).min(n);
                    self.pass(take as usize);
                    self.state = if take == n {
                        State::Head
                    } else {
                        State::Body(n - take)
                    };
                }
                State::ChunkData(n) => {
                    let take = (self.raw.len() as u64).min(n);
                    self.pass(take as usize);
                    self.state = if take == n {
                        State::ChunkCrlf(0)
                    } else {
                        State::ChunkData(n - take)
                    };
                }
                State::ChunkCrlf(seen) => {
                    let want = if seen == 0 { b'\r' } else { b'\n' };
                    if self.raw[0] != want {
                        return self.reject(head::Reject {
                            status: 400,
                            reason: "malformed chunk",
                        });
                    }
                    self.pass(1);
                    self.state = if seen == 0 {
                        State::ChunkCrlf(1)
                    } else {
                        State::ChunkSize
                    };
                }
                State::ChunkSize | State::Trailers => {
                    if !self.take_line() {
                        return;
                    }
                    if self.state == State::ChunkSize {
                        match httparse::parse_chunk_size(&self.line) {
                            Ok(httparse::Status::Complete((_, 0))) => self.state = State::Trailers,
                            Ok(httparse::Status::Complete((_, n))) => {
                                self.state = State::ChunkData(n)
                            }
                            _ => {
                                return self.reject(head::Reject {
                                    status: 400,
                                    reason: "malformed chunk size",
                                });
                            }
                        }
                    } else if self.line == b"\r\n" {
                        self.state = State::Head;
                    }
                    self.line.clear();
                }
            }
        }
    }

    /// Passes `n` bytes of body from `raw` to `ready`.
    fn pass(&mut self, n: usize) {
        let b = self.raw.split_to(n);
        self.ready.unsplit(b);
    }

    /// Moves bytes of one CRLF-terminated line from `raw` to `ready` (copying them into `line`);
    /// true when the line is complete.
    fn take_line(&mut self) -> bool {
        let n = match self.raw.iter().position(|b| *b == b'\n') {
            Some(i) => i + 1,
            None => self.raw.len(),
        };
        self.line.extend_from_slice(&self.raw[..n]);
        self.pass(n);
        if self.line.len() > MAX_LINE {
            self.reject(head::Reject {
                status: 400,
                reason: "chunk line too long",
            });
            return false;
        }
        self.line.ends_with(b"\n")
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Guard<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.ready.is_empty() && !this.raw.is_empty() && !this.eof {
                // Bytes handed over by the fast path (or left by the last read): classify first.
                this.process();
            }
            if !this.ready.is_empty() {
                let n = this.ready.len().min(buf.remaining());
                buf.put_slice(&this.ready[..n]);
                this.ready.advance(n);
                return Poll::Ready(Ok(()));
            }
            if this.state == State::Rejected {
                // hyper answers the synthetic request with `Connection: close` and closes.
                return Poll::Pending;
            }
            if this.state == State::AwaitUpgrade {
                if this.latch.as_ref().is_some_and(|l| l.is_open()) {
                    this.state = State::Pass;
                    let held = this.raw.split();
                    this.ready.unsplit(held);
                    continue;
                }
                if this.raw.len() > this.lim.max_head_bytes {
                    // A client that does not wait for the 101: hold no more.
                    return Poll::Pending;
                }
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            if this.state == State::Pass && this.raw.is_empty() && !this.fresh {
                return Pin::new(&mut this.inner).poll_read(cx, buf);
            }
            let head_due = this.state == State::Head && !this.raw.is_empty();
            if head_due || (this.fresh && this.raw.is_empty()) {
                let timeout = this.header_timeout;
                let sleep = this
                    .deadline
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                if sleep.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "request head not received within the header timeout",
                    )));
                }
            }
            // Read straight into the caller's buffer; body bytes within the current body are
            // handed over without a copy, anything else goes through `raw`.
            let before = buf.filled().len();
            match Pin::new(&mut this.inner).poll_read(cx, buf) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {}
            }
            let got = buf.filled().len() - before;
            if got == 0 {
                this.eof = true;
                continue;
            }
            if this.fresh {
                this.fresh = false;
                this.deadline = None;
            }
            if this.raw.is_empty() {
                match this.state {
                    State::Pass => return Poll::Ready(Ok(())),
                    State::Body(n) if got as u64 <= n => {
                        let left = n - got as u64;
                        this.state = if left == 0 {
                            State::Head
                        } else {
                            State::Body(left)
                        };
                        return Poll::Ready(Ok(()));
                    }
                    State::ChunkData(n) if got as u64 <= n => {
                        let left = n - got as u64;
                        this.state = if left == 0 {
                            State::ChunkCrlf(0)
                        } else {
                            State::ChunkData(left)
                        };
                        return Poll::Ready(Ok(()));
                    }
                    _ => {}
                }
            }
            this.raw.extend_from_slice(&buf.filled()[before..]);
            buf.set_filled(before);
            this.process();
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Guard<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, data)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const LIM: HeadLimits = HeadLimits {
        max_head_bytes: 4096,
        max_headers: 32,
        max_url_bytes: 1024,
    };

    /// Feeds `input` through a guard and returns what hyper would read.
    async fn through(input: &[u8]) -> Vec<u8> {
        let (mut client, server) = tokio::io::duplex(64);
        let input = input.to_vec();
        let writer = tokio::spawn(async move {
            for piece in input.chunks(7) {
                client.write_all(piece).await.expect("write");
            }
            client
        });
        let mut guard = Guard::cleartext(server, LIM, Duration::from_secs(5));
        let mut out = Vec::new();
        let mut buf = [0u8; 100];
        loop {
            match tokio::time::timeout(Duration::from_millis(300), guard.read(&mut buf)).await {
                Ok(Ok(0)) | Err(_) => break,
                Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
                Ok(Err(e)) => panic!("read error {e}"),
            }
        }
        drop(writer);
        out
    }

    #[tokio::test]
    async fn keep_alive_heads_and_bodies_pass_unchanged() {
        let input =
            b"POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcPOST /b HTTP/1.1\r\n\
            Host: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\nT: 1\r\n\r\n\
            GET /c HTTP/1.1\r\nHost: a\r\n\r\n";
        assert_eq!(through(input).await, input.to_vec());
    }

    #[tokio::test]
    async fn a_smuggled_second_head_is_replaced() {
        let input = b"GET /a HTTP/1.1\r\nHost: a\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 4\r\n\
            Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
        let out = String::from_utf8(through(input).await).expect("utf8");
        assert!(
            out.starts_with("GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\n"),
            "{out}"
        );
        assert!(out.contains("x-portcullis-reject: 400"), "{out}");
        // The refused head is carried for the event, never passed as a head.
        assert!(!out.lines().any(|l| l.starts_with("POST")), "{out}");
    }

    #[tokio::test]
    async fn h2_preface_passes_through() {
        let mut input = H2_PREFACE.to_vec();
        input.extend_from_slice(b"\0\0\0\x04\0\0\0\0\0");
        assert_eq!(through(&input).await, input);
    }
}
