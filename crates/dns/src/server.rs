//! The DNS listener: UDP and TCP on one address, authoritative answers from a [`ZoneCatalog`]
//! snapshot taken per query (so a committed SOAP change is visible to the very next query).
//!
//! Limits: UDP answers larger than the client's EDNS payload (512 without EDNS, at most 1232) are
//! truncated with TC set so the client retries over TCP; TCP connections are capped at
//! [`MAX_TCP_CONNS`] and closed after [`TCP_IDLE`] without a query.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hickory_proto::op::{Message, MessageType, OpCode, ResponseCode};
use portcullis_support::task;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use tokio::sync::{Semaphore, watch};

use super::answer::{EDNS_PAYLOAD, answer};
use super::catalog::ZoneCatalog;

/// Concurrent TCP connections served.
pub const MAX_TCP_CONNS: usize = 256;
/// A TCP connection is closed after this long without a complete query.
pub const TCP_IDLE: Duration = Duration::from_secs(10);
/// The view served when none is configured (the zone tool's default view).
pub const DEFAULT_VIEW: &str = "external";

/// A bound UDP socket + TCP listener pair, not yet serving.
pub struct DnsServer {
    udp: UdpSocket,
    tcp: TcpListener,
    view: String,
}

impl DnsServer {
    /// Binds UDP and TCP on `addr`. With port 0, UDP picks the port and TCP takes the same one.
    pub async fn bind(addr: SocketAddr) -> io::Result<DnsServer> {
        let mut last_err = None;
        for _ in 0..8 {
            let udp = UdpSocket::bind(addr).await?;
            match TcpListener::bind(udp.local_addr()?).await {
                Ok(tcp) => {
                    return Ok(DnsServer {
                        udp,
                        tcp,
                        view: DEFAULT_VIEW.to_string(),
                    });
                }
                Err(e) if addr.port() == 0 => last_err = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last_err.unwrap_or_else(|| io::Error::other("no free port for UDP and TCP")))
    }

    /// Serves the zones of `view` instead of `external`.
    pub fn with_view(mut self, view: &str) -> Self {
        self.view = view.to_string();
        self
    }

    /// The bound address (same port for UDP and TCP).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.udp.local_addr()
    }

    /// Serves until `shutdown` completes.
    pub async fn run(self, zones: ZoneCatalog, shutdown: impl Future<Output = ()> + Send) {
        let (stop_tx, stop_rx) = watch::channel(false);
        let view: Arc<str> = Arc::from(self.view.as_str());
        let udp = task::spawn(udp_loop(
            self.udp,
            zones.clone(),
            view.clone(),
            stop_rx.clone(),
        ));
        let tcp = task::spawn(tcp_loop(self.tcp, zones, view, stop_rx));
        shutdown.await;
        let _ = stop_tx.send(true);
        let _ = udp.await;
        let _ = tcp.await;
    }
}

/// Binds `addr` (UDP + TCP) and serves the `external` view until `shutdown` completes.
pub async fn serve(
    addr: SocketAddr,
    zones: ZoneCatalog,
    shutdown: impl Future<Output = ()> + Send,
) -> io::Result<()> {
    DnsServer::bind(addr).await?.run(zones, shutdown).await;
    Ok(())
}

/// Answers raw query bytes; `None` when the bytes are not even a DNS header (dropped).
/// Over UDP (`udp`), answers larger than the client's payload size are truncated (TC).
pub fn handle_bytes(zones: &ZoneCatalog, view: &str, bytes: &[u8], udp: bool) -> Option<Vec<u8>> {
    let resp = match Message::from_vec(bytes) {
        Ok(req) if req.metadata.message_type == MessageType::Query => {
            let limit = udp.then(|| match &req.edns {
                Some(e) => usize::from(e.max_payload().clamp(512, EDNS_PAYLOAD)),
                None => 512,
            });
            let resp = answer(&zones.snapshot(), view, &req);
            return encode(resp, limit);
        }
        Ok(_) => return None,
        Err(_) if bytes.len() >= 12 => {
            let id = u16::from_be_bytes([bytes[0], bytes[1]]);
            Message::error_msg(id, OpCode::Query, ResponseCode::FormErr)
        }
        Err(_) => return None,
    };
    encode(resp, None)
}

fn encode(resp: Message, limit: Option<usize>) -> Option<Vec<u8>> {
    let bytes = resp.to_vec().ok()?;
    match limit {
        Some(max) if bytes.len() > max => resp.truncate().to_vec().ok(),
        _ => Some(bytes),
    }
}

async fn udp_loop(
    sock: UdpSocket,
    zones: ZoneCatalog,
    view: Arc<str>,
    mut stop: watch::Receiver<bool>,
) {
    let mut buf = vec![0u8; 4096];
    loop {
        tokio::select! {
            r = sock.recv_from(&mut buf) => {
                let Ok((n, peer)) = r else { continue };
                if let Some(out) = handle_bytes(&zones, &view, &buf[..n], true) {
                    let _ = sock.send_to(&out, peer).await;
                }
            }
            _ = stop.changed() => return,
        }
    }
}

async fn tcp_loop(
    listener: TcpListener,
    zones: ZoneCatalog,
    view: Arc<str>,
    mut stop: watch::Receiver<bool>,
) {
    let permits = Arc::new(Semaphore::new(MAX_TCP_CONNS));
    loop {
        tokio::select! {
            r = listener.accept() => {
                let Ok((stream, _)) = r else { continue };
                let Ok(permit) = permits.clone().try_acquire_owned() else { continue };
                let (zones, view, stop) = (zones.clone(), view.clone(), stop.clone());
                task::spawn(async move {
                    tcp_conn(stream, zones, view, stop).await;
                    drop(permit);
                });
            }
            _ = stop.changed() => return,
        }
    }
}

async fn tcp_conn(
    mut s: TcpStream,
    zones: ZoneCatalog,
    view: Arc<str>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let mut len = [0u8; 2];
        let read = async {
            s.read_exact(&mut len).await?;
            let mut msg = vec![0u8; usize::from(u16::from_be_bytes(len))];
            s.read_exact(&mut msg).await?;
            Ok::<_, io::Error>(msg)
        };
        let msg = tokio::select! {
            r = tokio::time::timeout(TCP_IDLE, read) => match r {
                Ok(Ok(m)) => m,
                _ => return,
            },
            _ = stop.changed() => return,
        };
        let Some(out) = handle_bytes(&zones, &view, &msg, false) else {
            return;
        };
        let Ok(n) = u16::try_from(out.len()) else {
            return;
        };
        if s.write_all(&n.to_be_bytes()).await.is_err() || s.write_all(&out).await.is_err() {
            return;
        }
    }
}
