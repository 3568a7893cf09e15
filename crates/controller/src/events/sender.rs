//! Background senders of formatted security-log records: one tokio task per syslog server (UDP
//! datagrams; TCP or TLS with octet-counting framing), JSON-lines collector (TCP or TLS), log file
//! or Splunk HEC endpoint (`super::hec`), each behind a bounded queue that never waits: when a
//! receiver is slow or dead and its queue is full, the **oldest** record is dropped and counted
//! (logged at powers of two), so what is delivered once it recovers is the most recent. Stream
//! senders reconnect with exponential backoff; what they could not write goes back to the front
//! of the queue and is sent on the next connection (at least once). A dead collector costs
//! nothing but its queue.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;
use portcullis_support::task;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket};
use tokio::runtime::Handle;
use tokio::sync::Notify;

use super::config::Transport;
use super::syslog::octet_frame;

/// Largest UDP syslog datagram (the IPv4 UDP payload limit).
pub const MAX_DATAGRAM: usize = 65_507;
/// First reconnect delay of a stream sender; doubled per failure up to [`MAX_BACKOFF`].
pub const MIN_BACKOFF: Duration = Duration::from_millis(100);
pub const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// Connect and write deadline of a stream sender.
pub const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// Most records written to a stream at once (one write, one TLS record run).
const WRITE_BATCH: usize = 256;

/// How a record is put on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// One UDP datagram.
    Datagram,
    /// RFC 6587 / RFC 5425 octet counting: `LEN SP MSG`.
    OctetCounted,
    /// The record and a line feed (files, JSON lines).
    Line,
    /// As given (HEC events, batched by their sender).
    Raw,
}

/// A bounded queue that drops its oldest record when full.
pub struct Queue {
    items: Mutex<VecDeque<Bytes>>,
    cap: usize,
    ready: Notify,
    closed: AtomicBool,
    dropped: AtomicU64,
    delivered: AtomicU64,
}

impl Queue {
    fn new(cap: usize) -> Queue {
        Queue {
            items: Mutex::new(VecDeque::new()),
            cap: cap.max(1),
            ready: Notify::new(),
            closed: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
            delivered: AtomicU64::new(0),
        }
    }

    /// Appends `b`; when full, the oldest record goes. Returns the drop count after a drop.
    fn push(&self, b: Bytes) -> Option<u64> {
        let mut q = self.items.lock();
        let dropped = (q.len() >= self.cap).then(|| {
            q.pop_front();
            self.dropped.fetch_add(1, Ordering::Relaxed) + 1
        });
        q.push_back(b);
        drop(q);
        self.ready.notify_one();
        dropped
    }

    /// Up to `max` records, waiting for the first; empty once closed and drained.
    pub async fn next(&self, max: usize) -> Vec<Bytes> {
        loop {
            let notified = self.ready.notified();
            {
                let mut q = self.items.lock();
                if !q.is_empty() {
                    let n = q.len().min(max.max(1));
                    return q.drain(..n).collect();
                }
            }
            if self.closed.load(Ordering::Acquire) {
                return Vec::new();
            }
            notified.await;
        }
    }

    /// Puts back, in front, records that could not be delivered; the oldest go when that
    /// overfills the queue.
    pub fn requeue(&self, batch: Vec<Bytes>) {
        let mut q = self.items.lock();
        for b in batch.into_iter().rev() {
            q.push_front(b);
        }
        let over = q.len().saturating_sub(self.cap);
        if over > 0 {
            q.drain(..over);
            self.dropped.fetch_add(over as u64, Ordering::Relaxed);
        }
    }

    /// Waits until `n` records are queued, the queue closes, or `until` passes.
    pub async fn fill(&self, n: usize, until: tokio::time::Instant) {
        loop {
            let notified = self.ready.notified();
            if self.len() >= n || self.closed.load(Ordering::Acquire) {
                return;
            }
            if tokio::time::timeout_at(until, notified).await.is_err() {
                return;
            }
        }
    }

    pub fn len(&self) -> usize {
        self.items.lock().len()
    }

    /// Counts `n` records the receiver refused for good as dropped.
    pub fn discarded(&self, n: usize) {
        self.dropped.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Whether the output is gone (its task ends once the queue is drained).
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Counts `n` records handed to the receiver.
    pub fn delivered(&self, n: usize) {
        self.delivered.fetch_add(n as u64, Ordering::Relaxed);
    }

    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.ready.notify_one();
    }
}

/// The queue in front of one sender task; dropping it ends the task once its queue is drained.
pub struct Output {
    label: String,
    framing: Framing,
    queue: Arc<Queue>,
}

impl Drop for Output {
    fn drop(&mut self) {
        self.queue.close();
    }
}

impl Output {
    /// Queues one record without waiting (the oldest queued one goes when the queue is full).
    pub fn send(&self, msg: &str) {
        let bytes = match self.framing {
            Framing::Datagram | Framing::Raw => Bytes::copy_from_slice(msg.as_bytes()),
            Framing::OctetCounted => Bytes::from(octet_frame(msg)),
            Framing::Line => Bytes::from(format!("{msg}\n")),
        };
        if let Some(n) = self.queue.push(bytes)
            && n.is_power_of_two()
        {
            tracing::warn!(destination = %self.label, dropped = n, "security log queue full; oldest messages dropped");
        }
    }

    /// Records dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.queue.dropped.load(Ordering::Relaxed)
    }

    /// Records handed to the receiver (written to its socket or file, or accepted by HEC).
    pub fn delivered(&self) -> u64 {
        self.queue.delivered.load(Ordering::Relaxed)
    }

    /// Records waiting.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    pub fn label(&self) -> &str {
        &self.label
    }
}

/// An output and the queue its task reads.
pub fn output(label: String, framing: Framing, queue: usize) -> (Output, Arc<Queue>) {
    let q = Arc::new(Queue::new(queue));
    (
        Output {
            label,
            framing,
            queue: q.clone(),
        },
        q,
    )
}

/// A UDP syslog sender to `addr`.
pub fn udp(rt: &Handle, addr: SocketAddr, queue: usize) -> Output {
    let (out, q) = output(format!("udp://{addr}"), Framing::Datagram, queue);
    task::spawn_on(rt, async move {
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
        loop {
            let batch = q.next(WRITE_BATCH).await;
            if batch.is_empty() {
                return;
            }
            for m in &batch {
                if let Err(e) = sock.send_to(m, addr).await {
                    tracing::debug!(%addr, "security log: UDP send failed: {e}");
                }
            }
            q.delivered(batch.len());
        }
    });
    out
}

type Stream = Box<dyn AsyncWrite + Unpin + Send>;

/// Connects to `addr`, with TLS when `transport` says so.
async fn connect(addr: SocketAddr, transport: &Transport) -> Result<Stream, String> {
    let tcp = tokio::time::timeout(IO_TIMEOUT, TcpStream::connect(addr))
        .await
        .map_err(|_| "connect timed out".to_string())?
        .map_err(|e| format!("connect failed: {e}"))?;
    let _ = tcp.set_nodelay(true);
    let Transport::Tls(settings) = transport else {
        return Ok(Box::new(tcp));
    };
    let connector = super::tls::connector(settings, &[]).map_err(|e| e.to_string())?;
    let name =
        super::tls::server_name(settings, &addr.ip().to_string()).map_err(|e| e.to_string())?;
    let tls = tokio::time::timeout(IO_TIMEOUT, connector.connect(name, tcp))
        .await
        .map_err(|_| "TLS handshake timed out".to_string())?
        .map_err(|e| format!("TLS handshake failed: {e}"))?;
    Ok(Box::new(tls))
}

/// A stream sender to `addr` over TCP or TLS with `framing` (octet counting for syslog, lines for
/// JSON lines), reconnecting with backoff. Records whose write failed go back to the front of the
/// queue and are sent again on the next connection.
pub fn stream(
    rt: &Handle,
    addr: SocketAddr,
    transport: &Transport,
    framing: Framing,
    queue: usize,
) -> Output {
    let scheme = match transport {
        Transport::Tls(_) => "tls",
        _ => "tcp",
    };
    let (out, q) = output(format!("{scheme}://{addr}"), framing, queue);
    let transport = transport.clone();
    task::spawn_on(rt, async move {
        let mut conn: Option<Stream> = None;
        let mut backoff = MIN_BACKOFF;
        let mut failing = false;
        loop {
            let batch = q.next(WRITE_BATCH).await;
            if batch.is_empty() {
                return;
            }
            if conn.is_none() {
                match connect(addr, &transport).await {
                    Ok(s) => {
                        conn = Some(s);
                        backoff = MIN_BACKOFF;
                        if failing {
                            failing = false;
                            tracing::info!(%addr, "security log: connected again");
                        }
                    }
                    Err(e) if !failing => {
                        failing = true;
                        tracing::warn!(%addr, "security log: {e}; retrying, records queue meanwhile");
                    }
                    Err(e) => tracing::debug!(%addr, "security log: {e}"),
                }
            }
            let Some(s) = conn.as_mut() else {
                if q.is_closed() {
                    return;
                }
                q.requeue(batch);
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            };
            let mut buf = BytesMut::with_capacity(batch.iter().map(Bytes::len).sum());
            for m in &batch {
                buf.extend_from_slice(m);
            }
            let written = tokio::time::timeout(IO_TIMEOUT, async {
                s.write_all(&buf).await?;
                s.flush().await
            })
            .await;
            match written {
                Ok(Ok(())) => q.delivered(batch.len()),
                _ => {
                    tracing::debug!(%addr, "security log: write failed; reconnecting");
                    conn = None;
                    q.requeue(batch);
                }
            }
        }
    });
    out
}

/// A sender appending one record per line to `path` (reopened after a failure).
pub fn file(rt: &Handle, path: PathBuf, queue: usize) -> Output {
    let (out, q) = output(format!("file://{}", path.display()), Framing::Line, queue);
    task::spawn_on(rt, async move {
        let mut f: Option<tokio::fs::File> = None;
        loop {
            let batch = q.next(WRITE_BATCH).await;
            if batch.is_empty() {
                return;
            }
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
            let Some(file) = f.as_mut() else { continue };
            let mut ok = true;
            for m in &batch {
                ok = ok && file.write_all(m).await.is_ok();
            }
            if ok && file.flush().await.is_ok() {
                q.delivered(batch.len());
            } else {
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
    async fn a_full_queue_drops_its_oldest_records() {
        let (out, q) = output("t".into(), Framing::Raw, 3);
        for i in 0..5 {
            out.send(&format!("m{i}"));
        }
        assert_eq!(out.dropped(), 2);
        let got: Vec<Bytes> = q.next(10).await;
        assert_eq!(got, [&b"m2"[..], b"m3", b"m4"]);
        drop(out);
        assert!(q.next(10).await.is_empty(), "closed and drained");
    }

    #[tokio::test]
    async fn tcp_sender_survives_a_dead_collector_then_delivers_the_newest() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let out = stream(
            &Handle::current(),
            addr,
            &Transport::Tcp,
            Framing::OctetCounted,
            4,
        );
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
        let mut got = Vec::new();
        while !got.ends_with(b"2 m9") {
            let mut buf = vec![0u8; 256];
            let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
                .await
                .unwrap()
                .unwrap();
            assert!(n > 0, "{:?}", String::from_utf8_lossy(&got));
            got.extend_from_slice(&buf[..n]);
        }
        let text = String::from_utf8_lossy(&got);
        assert!(text.contains("2 m9") && !text.contains("2 m0"), "{text}");
        assert_eq!(out.delivered() as usize + out.dropped() as usize, 10);
    }
}
