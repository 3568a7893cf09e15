//! Upstream HTTP/1.1 connections driven by the fast path itself, in the client connection's task:
//! a plain TCP stream and its read buffer. Idle ones wait in their host's pool
//! ([`crate::proxy::conns::HostConns`]); one that shows a sign of life while idle (bytes or the
//! upstream's close) is not reused.
//!
//! Imports: tokio TCP, `crate::proxy::conns`.

use std::io;
use std::task::{Context, Poll, Waker};

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Read buffer reserved per read.
const READ_CHUNK: usize = 16 * 1024;

/// One upstream connection of the fast path.
#[derive(Debug)]
pub struct UpConn {
    io: TcpStream,
    /// Bytes read and not consumed yet.
    pub buf: BytesMut,
    /// Taken from a pool (so it may have been closed by the upstream in the meantime).
    pub pooled: bool,
    /// The current request was written completely.
    pub sent: bool,
}

impl UpConn {
    pub fn fresh(io: TcpStream) -> UpConn {
        UpConn {
            io,
            buf: BytesMut::new(),
            pooled: false,
            sent: false,
        }
    }

    /// False when the idle connection has bytes to read or was closed: it cannot serve a request.
    /// Costs no system call unless the runtime saw the socket become readable.
    pub fn idle_and_open(&mut self) -> bool {
        let mut cx = Context::from_waker(Waker::noop());
        match self.io.poll_read_ready(&mut cx) {
            Poll::Pending => true,
            Poll::Ready(Err(_)) => false,
            Poll::Ready(Ok(())) => {
                let mut probe = [0u8; 1];
                matches!(self.io.try_read(&mut probe), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
            }
        }
    }

    /// Writes the whole request (head, no body).
    pub async fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.io.write_all(bytes).await
    }

    /// Reads more bytes into `buf`; `Ok(0)` is the upstream's end of stream.
    pub async fn read_more(&mut self) -> io::Result<usize> {
        if self.buf.capacity() - self.buf.len() < 1024 {
            self.buf.reserve(READ_CHUNK);
        }
        self.io.read_buf(&mut self.buf).await
    }
}
