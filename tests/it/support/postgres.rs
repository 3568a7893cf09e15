//! A real PostgreSQL server (Debian package `postgresql`) shared by the tests of the process: the
//! test runs `initdb` and `pg_ctl` from `/usr/lib/postgresql/<version>/bin` in a temporary
//! directory (as the `postgres` user when the tests run as root, which PostgreSQL refuses), with
//! trust authentication on 127.0.0.1, TLS offered (a certificate for 127.0.0.1 from a test CA,
//! [`Postgres::ca_pem`]) and durability off (fast). A small shell holds it: when the
//! test process ends its standard input closes and the shell stops the server and removes the
//! directory, so nothing outlives the tests even when one panics.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use parking_lot::Mutex;

pub struct Postgres {
    pub port: u16,
    /// The CA certificate (PEM) of the server's TLS certificate.
    pub ca_pem: String,
    bin: PathBuf,
    /// The holding shell, its standard input open for the life of the test process (closing it
    /// stops the server).
    _holder: Mutex<Child>,
}

/// The newest installed server's `bin` directory.
fn bin_dir() -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL (Debian package postgresql; .ci/run installs it)")
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|p| p.join("initdb").exists())
        .collect();
    dirs.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    dirs.pop().expect("no /usr/lib/postgresql/*/bin/initdb")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// A CA and a server certificate for 127.0.0.1 it signed: (CA PEM, certificate PEM, key PEM).
fn pki() -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().expect("key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).expect("CA");
    let issuer = Issuer::new(ca, &ca_key);
    let key = KeyPair::generate().expect("key");
    let cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .expect("params")
        .signed_by(&key, &issuer)
        .expect("certificate");
    (ca_cert.pem(), cert.pem(), key.serialize_pem())
}

/// The server shared by the tests of this binary (started on first use).
pub fn shared() -> &'static Postgres {
    static PG: OnceLock<Postgres> = OnceLock::new();
    PG.get_or_init(start)
}

fn start() -> Postgres {
    let bin = bin_dir();
    let dir = tempfile::Builder::new()
        .prefix("portcullis-pg-")
        .tempdir()
        .expect("tmp")
        .keep();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    // The shell runs as the test (so it can remove the directory at the end); PostgreSQL, which
    // refuses root, runs as `postgres` when the test is root ($AS).
    let script = r#"
set -e
if [ -n "$AS" ]; then chown postgres:postgres "$D"; fi
$AS "$B/initdb" -D "$D/data" -U portcullis --auth=trust -E UTF8 --no-sync >"$D/initdb.log" 2>&1
printf '%s' "$CERT" >"$D/data/server.crt"
printf '%s' "$KEY" >"$D/data/server.key"
chmod 600 "$D/data/server.key"
if [ -n "$AS" ]; then chown postgres:postgres "$D/data/server.crt" "$D/data/server.key"; fi
$AS "$B/pg_ctl" -D "$D/data" -l "$D/server.log" -w start -o "-p $P -k $D -c listen_addresses=127.0.0.1 -c ssl=on -c fsync=off -c synchronous_commit=off -c full_page_writes=off" >/dev/null
echo ready
read _ || true
$AS "$B/pg_ctl" -D "$D/data" -m immediate stop >/dev/null 2>&1 || true
rm -rf "$D"
"#;
    let root = is_root();
    if root {
        // `postgres` must be able to reach the directory through its parent (a private TMPDIR
        // is often 0700).
        use std::os::unix::fs::PermissionsExt;
        if let Some(parent) = dir.parent()
            && let Ok(m) = std::fs::metadata(parent)
        {
            let mut perms = m.permissions();
            perms.set_mode(perms.mode() | 0o001);
            let _ = std::fs::set_permissions(parent, perms);
        }
    }
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script])
        .env("AS", if root { "runuser -u postgres --" } else { "" });
    let (ca_pem, cert, key) = pki();
    let mut child = cmd
        .env("CERT", cert)
        .env("KEY", key)
        .env("B", &bin)
        .env("D", &dir)
        .env("P", port.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("sh");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read");
    assert_eq!(
        line.trim(),
        "ready",
        "PostgreSQL did not start: {}{}",
        std::fs::read_to_string(dir.join("initdb.log")).unwrap_or_default(),
        std::fs::read_to_string(dir.join("server.log")).unwrap_or_default()
    );
    Postgres {
        port,
        ca_pem,
        bin,
        _holder: Mutex::new(child),
    }
}

impl Postgres {
    /// `postgres://portcullis@127.0.0.1:<port>/<db>`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://portcullis@127.0.0.1:{}/{db}", self.port)
    }

    /// Creates database `name` (one per test, so tests do not see each other's rows).
    pub fn create_db(&self, name: &str) -> String {
        let out = Command::new(self.bin.join("createdb"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "portcullis",
                name,
            ])
            .output()
            .expect("createdb");
        assert!(
            out.status.success(),
            "createdb {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.url(name)
    }
}
