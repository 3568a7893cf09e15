//! Upstream HTTP/1.1 connections driven by the proxy itself, in the task of the request they
//! serve: a plain TCP or TLS stream and its read buffer. Idle ones wait in their host's pool
//! ([`crate::conns::HostConns`]); one that shows a sign of life while idle (bytes or the
//! upstream's close) is not reused.

use std::future::Future;
use std::io;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::upstream::UpStream;

/// Read buffer reserved per read.
const READ_CHUNK: usize = 16 * 1024;

/// One upstream HTTP/1.1 connection.
pub struct UpConn {
    io: UpStream,
    /// Bytes read and not consumed yet.
    pub buf: BytesMut,
    /// Taken from a pool (so it may have been closed by the upstream in the meantime).
    pub pooled: bool,
    /// The current request was written completely.
    pub sent: bool,
}

impl std::fmt::Debug for UpConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpConn")
            .field("buffered", &self.buf.len())
            .field("pooled", &self.pooled)
            .finish_non_exhaustive()
    }
}

impl UpConn {
    pub fn fresh(io: UpStream) -> UpConn {
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
        matches!(self.try_fill(), Ok(None))
    }

    /// Reads what the connection has without waiting: `Ok(None)` when nothing is there yet,
    /// `Ok(Some(0))` at its end. A TLS record that carries no data (a session ticket) reads as
    /// nothing.
    pub fn try_fill(&mut self) -> io::Result<Option<usize>> {
        let mut cx = Context::from_waker(Waker::noop());
        match self.poll_read_more(&mut cx) {
            Poll::Pending => Ok(None),
            Poll::Ready(r) => r.map(Some),
        }
    }

    /// Writes all of `bytes`.
    pub async fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.io.write_all(bytes).await
    }

    /// Reads more bytes into `buf`; `Ok(0)` is the upstream's end of stream.
    pub async fn read_more(&mut self) -> io::Result<usize> {
        self.reserve();
        self.io.read_buf(&mut self.buf).await
    }

    /// [`UpConn::read_more`] for a caller that polls.
    pub fn poll_read_more(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        self.reserve();
        pin!(self.io.read_buf(&mut self.buf)).poll(cx)
    }

    fn reserve(&mut self) {
        if self.buf.capacity() - self.buf.len() < 1024 {
            self.buf.reserve(READ_CHUNK);
        }
    }

    /// The stream and what was read from it and not consumed (for a tunnel).
    pub fn into_parts(self) -> (UpStream, BytesMut) {
        (self.io, self.buf)
    }
}
