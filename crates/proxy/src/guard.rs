//! The IO wrapper of a connection hyper serves (HTTP/2): it replays the bytes the HTTP/1.1
//! connection code read before it recognised the HTTP/2 preface, and bounds the wait for a new
//! connection's first bytes by the header timeout, so a TLS client that negotiated `h2` and sends
//! nothing is cut like one that trickles (hyper's HTTP/2 server has no such timer of its own).
//!
//! Every HTTP/1 head is validated by the HTTP/1.1 connection code itself ([`super::h1`]), which
//! never hands an HTTP/1 connection over.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// See the module documentation.
pub struct Guard<S> {
    inner: S,
    /// Read before the handover, not yet passed on.
    replay: BytesMut,
    /// Nothing has been read from the connection yet: its first bytes are due within `timeout`.
    fresh: bool,
    timeout: Duration,
    deadline: Option<Pin<Box<Sleep>>>,
}

impl<S> Guard<S> {
    /// A connection nothing has been read from (TLS with ALPN `h2`).
    pub fn fresh(inner: S, header_timeout: Duration) -> Self {
        Guard {
            inner,
            replay: BytesMut::new(),
            fresh: true,
            timeout: header_timeout,
            deadline: None,
        }
    }

    /// A connection whose first bytes, `buffered` (the HTTP/2 preface and what followed it), were
    /// read already.
    pub fn resume(inner: S, buffered: BytesMut) -> Self {
        Guard {
            inner,
            replay: buffered,
            fresh: false,
            timeout: Duration::ZERO,
            deadline: None,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Guard<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.replay.is_empty() {
            let n = this.replay.len().min(buf.remaining());
            buf.put_slice(&this.replay[..n]);
            this.replay.advance(n);
            return Poll::Ready(Ok(()));
        }
        if !this.fresh {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                if buf.filled().len() > before {
                    this.fresh = false;
                    this.deadline = None;
                }
                Poll::Ready(r)
            }
            Poll::Pending => {
                let timeout = this.timeout;
                let sleep = this
                    .deadline
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                if sleep.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "no request within the header timeout",
                    )));
                }
                Poll::Pending
            }
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

    #[tokio::test]
    async fn replayed_bytes_come_first_then_the_connection() {
        let (mut client, server) = tokio::io::duplex(64);
        let mut g = Guard::resume(server, BytesMut::from(&b"PRI * HTTP/2.0"[..]));
        client.write_all(b" rest").await.expect("write");
        drop(client);
        let mut all = Vec::new();
        g.read_to_end(&mut all).await.expect("read");
        assert_eq!(all, b"PRI * HTTP/2.0 rest");
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_fresh_connection_times_out() {
        let (_client, server) = tokio::io::duplex(64);
        let mut g = Guard::fresh(server, Duration::from_secs(10));
        let mut b = [0u8; 8];
        let err = g.read(&mut b).await.expect_err("timed out");
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    }
}
