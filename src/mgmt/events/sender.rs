//! Background senders of formatted security-log messages: one tokio task per syslog server (UDP
//! datagrams, or TCP with octet-counting framing and reconnect with exponential backoff) or log
//! file, each behind a bounded queue. Queuing never waits: a full queue drops the message and
//! counts it (logged at powers of two). A dead collector costs nothing but its queue.
//! Imports: `super::syslog` (framing).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpStream, UdpSocket};
use tokio::runtime::Handle;
use tokio::sync::mpsc;

use super::syslog::octet_frame;

/// Largest UDP syslog datagram (the IPv4 UDP payload limit).
pub const MAX_DATAGRAM: usize = 65_507;
/// First reconnect delay of a TCP sender; doubled per failure up to [`MAX_BACKOFF`].
pub const MIN_BACKOFF: Duration = Duration::from_millis(100);
pub const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// Connect and write deadline of a TCP sender.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// How a message is put on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    Datagram,
    OctetCounted,
    Line,
}

/// The queue in front of one sender task; dropping it ends the task once its queue is drained.
pub struct Output {
    label: String,
    framing: Framing,
    tx: mpsc::Sender<Bytes>,
    dropped: AtomicU64,
}

impl Output {
    /// Queues one message without waiting.
    pub fn send(&self, msg: &str) {
        let bytes = match self.framing {
            Framing::Datagram => Bytes::copy_from_slice(msg.as_bytes()),
            Framing::OctetCounted => Bytes::from(octet_frame(msg)),
            Framing::Line => Bytes::from(format!("{msg}\n")),
        };
        if self.tx.try_send(bytes).is_err() {
            let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if n.is_power_of_two() {
                tracing::warn!(destination = %self.label, dropped = n, "security log queue full; messages dropped");
            }
        }
    }

    /// Messages dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    pub fn label(&self) -> &str {
        &self.label
    }
}

fn output(label: String, framing: Framing, queue: usize) -> (Output, mpsc::Receiver<Bytes>) {
    let (tx, rx) = mpsc::channel(queue.max(1));
    (
        Output {
            label,
            framing,
            tx,
            dropped: AtomicU64::new(0),
        },
        rx,
    )
}

/// A UDP syslog sender to `addr`.
pub fn udp(rt: &Handle, addr: SocketAddr, queue: usize) -> Output {
    let (out, mut rx) = output(format!("udp://{addr}"), Framing::Datagram, queue);
    rt.spawn(async move {
        let local: SocketAddr = if addr.is_ipv4() {
            ([0, 0, 0, 0], 0).into()
        } else {
            (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let sock = match UdpSocket::bind(local).await {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(%addr, "security log: cannot open a UDP socket: {e}");
                return;
            }
        };
        while let Some(m) = rx.recv().await {
            if let Err(e) = sock.send_to(&m, addr).await {
                tracing::debug!(%addr, "security log: UDP send failed: {e}");
            }
        }
    });
    out
}

/// A TCP syslog sender to `addr` (RFC 6587 octet counting), reconnecting with backoff. A message
/// whose write failed is sent again on the next connection.
pub fn tcp(rt: &Handle, addr: SocketAddr, queue: usize) -> Output {
    let (out, mut rx) = output(format!("tcp://{addr}"), Framing::OctetCounted, queue);
    rt.spawn(async move {
        let mut conn: Option<TcpStream> = None;
        let mut pending: Option<Bytes> = None;
        let mut backoff = MIN_BACKOFF;
        loop {
            let msg = match pending.take() {
                Some(m) => m,
                None => match rx.recv().await {
                    Some(m) => m,
                    None => return,
                },
            };
            if conn.is_none() {
                match tokio::time::timeout(IO_TIMEOUT, TcpStream::connect(addr)).await {
                    Ok(Ok(s)) => {
                        let _ = s.set_nodelay(true);
                        conn = Some(s);
                        backoff = MIN_BACKOFF;
                    }
                    Ok(Err(e)) => tracing::debug!(%addr, "security log: connect failed: {e}"),
                    Err(_) => tracing::debug!(%addr, "security log: connect timed out"),
                }
            }
            let Some(s) = conn.as_mut() else {
                pending = Some(msg);
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
                if rx.is_closed() && rx.is_empty() {
                    return;
                }
                continue;
            };
            match tokio::time::timeout(IO_TIMEOUT, s.write_all(&msg)).await {
                Ok(Ok(())) => {}
                _ => {
                    tracing::debug!(%addr, "security log: write failed; reconnecting");
                    conn = None;
                    pending = Some(msg);
                }
            }
        }
    });
    out
}

/// A sender appending one message per line to `path` (reopened after a failure).
pub fn file(rt: &Handle, path: PathBuf, queue: usize) -> Output {
    let (out, mut rx) = output(format!("file://{}", path.display()), Framing::Line, queue);
    rt.spawn(async move {
        let mut f: Option<tokio::fs::File> = None;
        while let Some(m) = rx.recv().await {
            if f.is_none() {
                if let Some(dir) = path.parent() {
                    let _ = tokio::fs::create_dir_all(dir).await;
                }
                match tokio::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .await
                {
                    Ok(file) => f = Some(file),
                    Err(e) => {
                        tracing::warn!(path = %path.display(), "security log: cannot open: {e}");
                        continue;
                    }
                }
            }
            if let Some(file) = f.as_mut()
                && (file.write_all(&m).await.is_err() || file.flush().await.is_err())
            {
                f = None;
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn tcp_sender_survives_a_dead_collector_then_delivers() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let out = tcp(&Handle::current(), addr, 4);
        for i in 0..10 {
            out.send(&format!("m{i}"));
        }
        assert!(out.dropped() >= 5, "a full queue drops instead of waiting");
        tokio::time::sleep(Duration::from_millis(250)).await;
        let l = tokio::net::TcpListener::bind(addr).await.unwrap();
        let (mut s, _) = tokio::time::timeout(Duration::from_secs(15), l.accept())
            .await
            .expect("the sender reconnects")
            .unwrap();
        let mut buf = vec![0u8; 64];
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert!(buf[..n].starts_with(b"2 m0"), "{:?}", &buf[..n]);
    }
}
