//! A client connection that turns Nagle's algorithm off only when it needs to: before its second
//! write. Nagle holds a small segment back only while an earlier one is unacknowledged, so the
//! first write of a connection always goes out at once; from the second on, a response's tail
//! could wait for the client's delayed acknowledgement. A connection answered in one write (a
//! request with `Connection: close`, a blocked request) so never pays the `setsockopt` call,
//! which is when nginx sets the option too (a connection kept alive).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::client_tcp::ClientTcp;

/// Where a connection stands with `TCP_NODELAY`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Nagle {
    /// Nothing written yet.
    Fresh,
    /// Written once, Nagle still on.
    Wrote,
    /// `TCP_NODELAY` asked for (whatever the kernel answered: it is not asked twice).
    Off,
}

/// A client's TCP connection, with `TCP_NODELAY` set before its second write.
pub struct LateNoDelay {
    tcp: ClientTcp,
    nagle: Nagle,
}

impl LateNoDelay {
    pub fn new(tcp: ClientTcp) -> LateNoDelay {
        LateNoDelay {
            tcp,
            nagle: Nagle::Fresh,
        }
    }

    fn before_write(&mut self) {
        if self.nagle == Nagle::Wrote {
            // A refusal changes nothing the client can see but latency: the write goes on.
            let _ = self.tcp.set_nodelay(true);
            self.nagle = Nagle::Off;
        }
    }

    fn after_write(&mut self, r: &Poll<io::Result<usize>>) {
        if self.nagle == Nagle::Fresh && matches!(r, Poll::Ready(Ok(n)) if *n > 0) {
            self.nagle = Nagle::Wrote;
        }
    }
}

impl AsyncRead for LateNoDelay {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for LateNoDelay {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.before_write();
        let r = Pin::new(&mut self.tcp).poll_write(cx, buf);
        self.after_write(&r);
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.before_write();
        let r = Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs);
        self.after_write(&r);
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// The option is off after the first write and on from the second, and the bytes of both
    /// writes arrive in order.
    #[tokio::test]
    async fn nodelay_comes_with_the_second_write() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        // Connected before the accept, which blocks: the kernel completes the handshake.
        let mut c = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let client = tokio::spawn(async move {
            let mut got = Vec::new();
            c.read_to_end(&mut got).await.expect("read");
            got
        });
        let (tcp, _) = listener.accept().expect("accept");
        tcp.set_nonblocking(true).expect("non-blocking");
        let mut conn = LateNoDelay::new(ClientTcp::new(tcp));
        assert!(!conn.tcp.nodelay().expect("nodelay"));
        conn.write_all(b"first ").await.expect("write");
        assert!(!conn.tcp.nodelay().expect("nodelay"));
        conn.write_all(b"second").await.expect("write");
        assert!(conn.tcp.nodelay().expect("nodelay"));
        conn.shutdown().await.expect("shutdown");
        drop(conn);
        assert_eq!(client.await.expect("client"), b"first second");
    }
}
