//! What the integration tests share, one helper each: spawning the real binaries, admin-API
//! clients, loopback upstreams, test certificates, and the real servers (PostgreSQL, Redis,
//! rsyslog) some tests start.

pub mod access;
pub mod as3;
pub mod asm;
pub mod central;
pub mod events;
#[macro_use]
pub mod grpc;
pub mod mgmt;
pub mod postgres;
pub mod proxy;
pub mod redis;
pub mod router;
pub mod siem;
pub mod soap;
pub mod tls;
pub mod upstream;

use std::net::SocketAddr;

/// A free loopback address: the kernel picks the port (port 0), the listener is dropped at once,
/// and the process under test binds it right after. Tests share one process, so a fixed port
/// would collide; this one can only race with another process binding port 0 in between.
pub fn free_addr() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local address")
}

/// A loopback address where nothing listens, reserved for as long as the value lives: its socket
/// is bound but never listens, so a connection to it is refused at once. An address only looked
/// up and released (as [`free_addr`] does) can be handed by the kernel to the next test that binds
/// port 0, whose server would then receive the requests meant to fail, and count them.
pub struct DeadAddr {
    addr: SocketAddr,
    _socket: tokio::net::TcpSocket,
}

impl DeadAddr {
    pub fn new() -> DeadAddr {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket
            .bind("127.0.0.1:0".parse().expect("address"))
            .expect("bind 127.0.0.1:0");
        let addr = socket.local_addr().expect("local address");
        DeadAddr {
            addr,
            _socket: socket,
        }
    }
}

impl std::fmt::Display for DeadAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.addr.fmt(f)
    }
}

/// The port of [`free_addr`], for command lines and configuration that take a port.
pub fn free_port() -> u16 {
    free_addr().port()
}

/// Sends a signal (`STOP`, `CONT`, `KILL`, ...) to a process with the `kill` command.
pub fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .expect("kill")
        .success();
    assert!(ok, "kill -{sig} {pid} failed");
}
