//! A client's TCP connection that joins the reactor only when it has to wait. Registering a socket
//! with epoll (and leaving it before the close) is two system calls and a reactor slot per
//! connection; a connection whose request is already there when it is accepted and whose answer
//! fits the socket's send buffer (a request with `Connection: close`, a blocked request) never
//! waits, so it is read and written with non-blocking calls as they are and closed without ever
//! being registered. The first call that would block registers the socket, and from then on
//! tokio's `TcpStream` serves it.
//!
//! The socket must be in non-blocking mode (the listener accepts with `SOCK_NONBLOCK`).

use std::cell::RefCell;
use std::io::{self, ErrorKind, IoSlice, Read, Write};
use std::net::Shutdown;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// The most a read of an unregistered socket asks for.
const RAW_READ: usize = 16 * 1024;

thread_local! {
    /// Where an unregistered socket is read, before its bytes are copied to the caller's buffer.
    /// The caller's room is not initialised, and safe code would have to zero it before every
    /// read; this is zeroed once per thread, and a request head is a small copy.
    static SCRATCH: RefCell<Box<[u8]>> = RefCell::new(vec![0; RAW_READ].into_boxed_slice());
}

enum State {
    /// Not registered.
    Raw {
        tcp: std::net::TcpStream,
        /// A read returned less than it asked for: the socket holds nothing more for now, so the
        /// next read registers at once rather than make a call that would only say so.
        drained: bool,
    },
    Registered(TcpStream),
    /// Registration failed: the connection is unusable.
    Failed,
}

/// A client's TCP connection, registered with the reactor at its first wait.
pub struct ClientTcp {
    state: State,
}

impl ClientTcp {
    /// `tcp` must be non-blocking.
    pub fn new(tcp: std::net::TcpStream) -> ClientTcp {
        ClientTcp {
            state: State::Raw {
                tcp,
                drained: false,
            },
        }
    }

    /// Whether the socket is registered with the reactor (it had to wait).
    #[cfg(test)]
    pub fn registered(&self) -> bool {
        matches!(self.state, State::Registered(_))
    }

    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        match &self.state {
            State::Raw { tcp, .. } => tcp.set_nodelay(on),
            State::Registered(tcp) => tcp.set_nodelay(on),
            State::Failed => Err(failed()),
        }
    }

    #[cfg(test)]
    pub fn nodelay(&self) -> io::Result<bool> {
        match &self.state {
            State::Raw { tcp, .. } => tcp.nodelay(),
            State::Registered(tcp) => tcp.nodelay(),
            State::Failed => Err(failed()),
        }
    }

    /// Registers the socket with the reactor of the current runtime.
    fn register(&mut self) -> io::Result<&mut TcpStream> {
        if let State::Raw { .. } = self.state {
            let State::Raw { tcp, .. } = std::mem::replace(&mut self.state, State::Failed) else {
                unreachable!("matched above");
            };
            self.state = State::Registered(TcpStream::from_std(tcp)?);
        }
        match &mut self.state {
            State::Registered(tcp) => Ok(tcp),
            _ => Err(failed()),
        }
    }
}

fn failed() -> io::Error {
    io::Error::new(ErrorKind::NotConnected, "connection not registered")
}

/// What a non-blocking call on an unregistered socket gave: its result, or that it would block.
fn ready_or_wait<T>(r: io::Result<T>) -> Option<io::Result<T>> {
    match r {
        Err(e) if e.kind() == ErrorKind::WouldBlock => None,
        other => Some(other),
    }
}

impl AsyncRead for ClientTcp {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let State::Raw { tcp, drained } = &mut this.state
            && !*drained
        {
            let want = buf.remaining().min(RAW_READ);
            let read = SCRATCH.with_borrow_mut(|scratch| -> io::Result<usize> {
                let dst = &mut scratch[..want];
                let n = loop {
                    match (&*tcp).read(dst) {
                        Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                        r => break r?,
                    }
                };
                buf.put_slice(&dst[..n]);
                Ok(n)
            });
            if let Some(r) = ready_or_wait(read) {
                *drained = r? < want;
                return Poll::Ready(Ok(()));
            }
        }
        let tcp = this.register()?;
        Pin::new(tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for ClientTcp {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if let State::Raw { tcp, .. } = &this.state
            && let Some(r) = ready_or_wait((&*tcp).write(data))
        {
            return Poll::Ready(r);
        }
        let tcp = this.register()?;
        Pin::new(tcp).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if let State::Raw { tcp, .. } = &this.state
            && let Some(r) = ready_or_wait((&*tcp).write_vectored(bufs))
        {
            return Poll::Ready(r);
        }
        let tcp = this.register()?;
        Pin::new(tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.state {
            State::Registered(tcp) => Pin::new(tcp).poll_flush(cx),
            // Nothing is buffered here.
            State::Raw { .. } => Poll::Ready(Ok(())),
            State::Failed => Poll::Ready(Err(failed())),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.state {
            State::Registered(tcp) => {
                ready!(Pin::new(tcp).poll_shutdown(cx))?;
                Poll::Ready(Ok(()))
            }
            State::Raw { tcp, .. } => Poll::Ready(tcp.shutdown(Shutdown::Write)),
            State::Failed => Poll::Ready(Err(failed())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn pair() -> (ClientTcp, TcpStream) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let client = TcpStream::connect(addr).await.expect("connect");
        let (tcp, _) = listener.accept().expect("accept");
        tcp.set_nonblocking(true).expect("non-blocking");
        (ClientTcp::new(tcp), client)
    }

    /// A request already there and an answer written at once: the socket is never registered.
    /// A read that has to wait registers it, and the bytes sent later still arrive.
    #[tokio::test]
    async fn a_connection_registers_only_when_it_waits() {
        let (mut conn, mut client) = pair().await;
        client
            .write_all(b"GET / HTTP/1.1\r\n\r\n")
            .await
            .expect("send");
        // The bytes cross the loopback before the read.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let mut got = Vec::with_capacity(64);
        conn.read_buf(&mut got).await.expect("read");
        assert_eq!(got, b"GET / HTTP/1.1\r\n\r\n");
        conn.write_all(b"HTTP/1.1 200 OK\r\n\r\n")
            .await
            .expect("write");
        assert!(!conn.registered());

        let late = tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            client.write_all(b"later").await.expect("send");
            let mut answer = Vec::new();
            client.read_to_end(&mut answer).await.expect("read");
            answer
        });
        got.clear();
        conn.read_buf(&mut got).await.expect("read");
        assert_eq!(got, b"later");
        assert!(conn.registered());
        conn.write_all(b"bye").await.expect("write");
        conn.shutdown().await.expect("shutdown");
        drop(conn);
        assert_eq!(
            late.await.expect("client"),
            b"HTTP/1.1 200 OK\r\n\r\nbye".to_vec()
        );
    }

    /// A client that closes before sending: the read says end of stream, unregistered.
    #[tokio::test]
    async fn end_of_stream_reads_as_zero_bytes() {
        let (mut conn, client) = pair().await;
        drop(client);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let mut got = Vec::with_capacity(64);
        assert_eq!(conn.read_buf(&mut got).await.expect("read"), 0);
    }
}
