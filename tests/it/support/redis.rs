//! A real `redis-server` (Debian package `redis-server`) on a free loopback port, with its data
//! in a temporary directory and the append-only file synced on every write (so a SIGKILL loses
//! nothing, as a production server configured for revocations would). It can be killed, stopped
//! (SIGSTOP: a server that no longer answers) and restarted on the same port and data.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::signal;

pub struct Redis {
    pub port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl Redis {
    pub fn start() -> Redis {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let mut r = Redis {
            port,
            dir: tempfile::tempdir().expect("tmp"),
            child: None,
        };
        r.spawn();
        r
    }

    fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(self.dir.path())
            .args([
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
            ])
            .args(["--daemonize", "no", "--protected-mode", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server (Debian package redis-server; .ci/run installs it)");
        self.child = Some(child);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if self.cli(&["PING"]).trim() == "PONG" {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server did not start on port {}", self.port);
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Runs `redis-cli` against this server; its standard output.
    pub fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// SIGKILL: the server dies without a word.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the server again on the same port and data.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// SIGSTOP: the server keeps its connections but answers nothing.
    pub fn freeze(&self) {
        signal(self.pid(), "STOP");
    }

    pub fn thaw(&self) {
        signal(self.pid(), "CONT");
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        if let Some(c) = &self.child {
            let _ = Command::new("kill")
                .args(["-CONT", &c.id().to_string()])
                .status();
        }
        self.kill();
    }
}
