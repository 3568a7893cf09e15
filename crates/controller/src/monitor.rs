//! Active health monitors: for every pool member whose pool (or own) `monitor` names `http`,
//! `https` or `tcp` monitors, probe it every `interval` seconds within `timeout`; members that
//! fail leave the rotation (`UpstreamSpec::healthy = false`) and come back when they pass.
//! `min N of { a b }` needs N passing monitors, `a and b` all of them. https probes do not
//! verify the member's certificate (like the real monitor) but do verify handshake signatures.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::ServerName;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::objects::pool::split_member;
use crate::PlaneState;
use portcullis_admin::MgmtState;
use portcullis_admin::children;
use portcullis_support::pin;

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Tcp,
    Http,
    Https,
}

/// One monitor as configured.
#[derive(Clone, Debug)]
struct Monitor {
    kind: Kind,
    send: String,
    recv: String,
    timeout: Duration,
    interval: u64,
}

/// One member to probe: its store key, address, monitors and how many must pass.
struct Target {
    key: String,
    addr: SocketAddr,
    monitors: Vec<Monitor>,
    need: usize,
}

fn unescape(s: &str) -> String {
    s.replace("\\r", "\r").replace("\\n", "\n")
}

fn load_monitor(st: &MgmtState, full_path: &str) -> Option<Monitor> {
    let seg = full_path.replace('/', "~");
    for (kind, coll) in [
        (Kind::Http, "http"),
        (Kind::Https, "https"),
        (Kind::Tcp, "tcp"),
    ] {
        if let Some(m) = meta_object(st, &format!("/mgmt/tm/ltm/monitor/{coll}/{seg}")) {
            let num = |k: &str, d: u64| m.get(k).and_then(Value::as_u64).unwrap_or(d);
            return Some(Monitor {
                kind,
                send: unescape(
                    m.get("send")
                        .and_then(Value::as_str)
                        .unwrap_or("GET /\\r\\n"),
                ),
                recv: m
                    .get("recv")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                timeout: Duration::from_secs(num("timeout", 16).max(1)),
                interval: num("interval", 5).max(1),
            });
        }
    }
    None
}

/// Parses `/Common/http`, `a and b`, `min 1 of { a b }` → (monitors, how many must pass).
fn parse_rule(st: &MgmtState, rule: &str) -> (Vec<Monitor>, usize) {
    let toks: Vec<&str> = rule.split_whitespace().collect();
    let mons: Vec<Monitor> = toks
        .iter()
        .filter(|t| t.starts_with('/'))
        .filter_map(|t| load_monitor(st, t))
        .collect();
    let need = match toks.as_slice() {
        ["min", n, ..] => n.parse().unwrap_or(1),
        _ => mons.len(),
    };
    (mons, need)
}

fn targets(st: &MgmtState) -> Vec<Target> {
    let mut out = Vec::new();
    for pool in children(st, "/mgmt/tm/ltm/pool").unwrap_or_default() {
        let full_path = pool
            .get("fullPath")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let pkey = format!("/mgmt/tm/ltm/pool/{}", full_path.replace('/', "~"));
        let pool_rule = pool
            .get("monitor")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        for m in children(st, &format!("{pkey}/members")).unwrap_or_default() {
            let rule = match m.get("monitor").and_then(Value::as_str) {
                Some(r) if r != "default" && !r.is_empty() => r.to_string(),
                _ => pool_rule.clone(),
            };
            let (monitors, need) = parse_rule(st, &rule);
            if monitors.is_empty() {
                continue;
            }
            let name = m.get("name").and_then(Value::as_str).unwrap_or_default();
            let Ok((_, port)) = split_member(name) else {
                continue;
            };
            let Ok(ip) = m
                .get("address")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .split('%')
                .next()
                .unwrap_or_default()
                .parse::<IpAddr>()
            else {
                continue;
            };
            let mfp = m
                .get("fullPath")
                .and_then(Value::as_str)
                .unwrap_or_default();
            out.push(Target {
                key: format!("{pkey}/members/{}", mfp.replace('/', "~")),
                addr: SocketAddr::new(ip, port),
                monitors,
                need,
            });
        }
    }
    out
}

/// Monitors probe members by address: any certificate is accepted, its handshake signatures
/// are still verified.
fn tls_connector() -> Option<tokio_rustls::TlsConnector> {
    let (cfg, _) = pin::client_config(None).ok()?;
    Some(tokio_rustls::TlsConnector::from(Arc::new(cfg)))
}

async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(mut s: S, m: &Monitor) -> bool {
    if s.write_all(m.send.as_bytes()).await.is_err() {
        return false;
    }
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while buf.len() < 64 * 1024 {
        match s.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if !m.recv.is_empty() && String::from_utf8_lossy(&buf).contains(&m.recv) {
            return true;
        }
    }
    if m.recv.is_empty() {
        !buf.is_empty()
    } else {
        String::from_utf8_lossy(&buf).contains(&m.recv)
    }
}

async fn probe(addr: SocketAddr, m: &Monitor) -> bool {
    let run = async {
        let Ok(tcp) = tokio::net::TcpStream::connect(addr).await else {
            return false;
        };
        match m.kind {
            Kind::Tcp => true,
            Kind::Http => exchange(tcp, m).await,
            Kind::Https => {
                let Some(conn) = tls_connector() else {
                    return false;
                };
                let name = ServerName::IpAddress(addr.ip().into());
                match conn.connect(name, tcp).await {
                    Ok(tls) => exchange(tls, m).await,
                    Err(_) => false,
                }
            }
        }
    };
    tokio::time::timeout(m.timeout, run).await.unwrap_or(false)
}

fn meta_object(st: &MgmtState, key: &str) -> Option<serde_json::Map<String, Value>> {
    match st.store.get(portcullis_store::Table::Objects, key).ok()?? {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

/// Probes every monitored member once; re-applies the topology when health changed.
/// Returns the shortest configured interval (seconds) for the next round.
pub async fn probe_members(st: &Arc<MgmtState>) -> u64 {
    let of = st.clone();
    let targets = tokio::task::spawn_blocking(move || targets(&of))
        .await
        .unwrap_or_default();
    let interval = targets
        .iter()
        .flat_map(|t| t.monitors.iter().map(|m| m.interval))
        .min()
        .unwrap_or(5);
    let mut set = tokio::task::JoinSet::new();
    for t in targets {
        set.spawn(async move {
            let mut passed = 0;
            let mut last_fail = String::new();
            for m in &t.monitors {
                if probe(t.addr, m).await {
                    passed += 1;
                } else {
                    last_fail = format!("{:?} monitor failed against {}", m.kind, t.addr);
                }
            }
            (t.key, (passed < t.need).then_some(last_fail))
        });
    }
    let mut down = HashMap::new();
    let mut up = std::collections::HashSet::new();
    while let Some(Ok((key, fail))) = set.join_next().await {
        match fail {
            Some(reason) => {
                down.insert(key, reason);
            }
            None => {
                up.insert(key);
            }
        }
    }
    let plane = PlaneState::of(st);
    *plane.member_up.write() = up;
    let changed = *plane.member_down.read() != down;
    if changed {
        *plane.member_down.write() = down;
        let st = st.clone();
        let _ = tokio::task::spawn_blocking(move || st.reapply()).await;
    }
    interval
}

/// Runs the monitors until the task is dropped.
pub async fn run_monitors(st: Arc<MgmtState>) {
    loop {
        let next = probe_members(&st).await;
        tokio::time::sleep(Duration::from_secs(next)).await;
    }
}
