//! A connection that is plain TCP or TLS over it, as one type: the client side's connections (so
//! the HTTP/1.1 connection loop, the phase driver under it and hyper's HTTP/2 server are compiled
//! once rather than once per stream type) and the upstream side's. A plain connection pays one
//! branch per read or write for it. The TLS session is boxed: it is far larger than a TCP stream,
//! and every plain connection's future would otherwise carry room for it.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// See the module documentation: `P` is the plain stream, `T` the TLS session over it.
pub enum PlainOrTls<P, T> {
    Plain(P),
    Tls(Box<T>),
}

impl<P, T> AsyncRead for PlainOrTls<P, T>
where
    P: AsyncRead + Unpin,
    T: AsyncRead + Unpin,
{
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            PlainOrTls::Plain(s) => Pin::new(s).poll_read(cx, buf),
            PlainOrTls::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl<P, T> AsyncWrite for PlainOrTls<P, T>
where
    P: AsyncWrite + Unpin,
    T: AsyncWrite + Unpin,
{
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, b: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            PlainOrTls::Plain(s) => Pin::new(s).poll_write(cx, b),
            PlainOrTls::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, b),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            PlainOrTls::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            PlainOrTls::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            PlainOrTls::Plain(s) => s.is_write_vectored(),
            PlainOrTls::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            PlainOrTls::Plain(s) => Pin::new(s).poll_flush(cx),
            PlainOrTls::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            PlainOrTls::Plain(s) => Pin::new(s).poll_shutdown(cx),
            PlainOrTls::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
