//! Real receivers for the SIEM export tests: a test PKI (a CA, a server certificate for
//! `localhost`/127.0.0.1, a client certificate), a real `rsyslogd` (Debian packages `rsyslog` and
//! `rsyslog-gnutls`) configured by the test to receive syslog over UDP, TCP and TLS (RFC 5425, with
//! client certificates required) and JSON lines over TCP, each written to its own file with the
//! fields rsyslog parsed; and parsers for what comes back (CEF, LEEF).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

use super::free_port;

/// PEM texts of the test PKI.
pub struct Pki {
    pub ca: String,
    pub server_cert: String,
    pub server_key: String,
    pub client_cert: String,
    pub client_key: String,
}

pub fn pki() -> Pki {
    let ca_key = KeyPair::generate().expect("key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "Portcullis test CA");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key).expect("CA");
    let issuer = Issuer::new(ca, &ca_key);
    let leaf = |names: Vec<String>, cn: &str| {
        let key = KeyPair::generate().expect("key");
        let mut p = CertificateParams::new(names).expect("params");
        p.distinguished_name.push(DnType::CommonName, cn);
        let cert = p.signed_by(&key, &issuer).expect("leaf");
        (cert.pem(), key.serialize_pem())
    };
    let (server_cert, server_key) = leaf(vec!["localhost".into(), "127.0.0.1".into()], "localhost");
    let (client_cert, client_key) = leaf(vec!["waf.test".into()], "waf.test");
    Pki {
        ca: ca_cert.pem(),
        server_cert,
        server_key,
        client_cert,
        client_key,
    }
}

/// A running `rsyslogd -n` with four inputs, each writing to its own file.
pub struct Rsyslog {
    pub udp: u16,
    pub tcp: u16,
    pub tls: u16,
    pub json: u16,
    pub dir: tempfile::TempDir,
    child: Child,
}

impl Rsyslog {
    /// Starts rsyslogd; returns once every input receives.
    pub fn start(pki: &Pki) -> Rsyslog {
        let dir = tempfile::tempdir().expect("tmp");
        let d = dir.path();
        for (name, pem) in [
            ("ca.pem", &pki.ca),
            ("server.pem", &pki.server_cert),
            ("server.key", &pki.server_key),
        ] {
            std::fs::write(d.join(name), pem).expect("pem");
        }
        let (udp, tcp, tls, json) = (free_port(), free_port(), free_port(), free_port());
        let p = |f: &str| d.join(f).display().to_string();
        // The facility and fields rsyslog parsed from the RFC 5424 header, then the MSG, tab
        // separated.
        let conf = format!(
            r#"global(workDirectory="{work}"
       defaultNetstreamDriverCAFile="{ca}"
       defaultNetstreamDriverCertFile="{cert}"
       defaultNetstreamDriverKeyFile="{key}"
       maxMessageSize="64k"
       parser.escapeControlCharactersOnReceive="off")
module(load="imudp")
module(load="imtcp" maxSessions="100")
template(name="parsed" type="string"
         string="%syslogfacility-text%\t%hostname%\t%app-name%\t%procid%\t%msgid%\t%structured-data%\t%msg%\n")
template(name="raw" type="string" string="%rawmsg%\n")
ruleset(name="udp") {{ action(type="omfile" file="{udp_log}" template="parsed") }}
ruleset(name="tcp") {{ action(type="omfile" file="{tcp_log}" template="parsed") }}
ruleset(name="tls") {{ action(type="omfile" file="{tls_log}" template="parsed") }}
ruleset(name="json") {{ action(type="omfile" file="{json_log}" template="raw") }}
input(type="imudp" address="127.0.0.1" port="{udp}" ruleset="udp")
input(type="imtcp" address="127.0.0.1" port="{tcp}" ruleset="tcp")
input(type="imtcp" address="127.0.0.1" port="{json}" ruleset="json")
input(type="imtcp" address="127.0.0.1" port="{tls}" ruleset="tls"
      streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="x509/certvalid")
"#,
            work = d.display(),
            ca = p("ca.pem"),
            cert = p("server.pem"),
            key = p("server.key"),
            udp_log = p("udp.log"),
            tcp_log = p("tcp.log"),
            tls_log = p("tls.log"),
            json_log = p("json.log"),
        );
        std::fs::write(d.join("rsyslog.conf"), conf).expect("conf");
        let child = Command::new("rsyslogd")
            .arg("-n")
            .arg("-f")
            .arg(d.join("rsyslog.conf"))
            .arg("-i")
            .arg(d.join("rsyslogd.pid"))
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(d.join("rsyslogd.err")).expect("log"),
            ))
            .spawn()
            .expect("rsyslogd (Debian packages rsyslog, rsyslog-gnutls; .ci/run installs them)");
        let r = Rsyslog {
            udp,
            tcp,
            tls,
            json,
            dir,
            child,
        };
        r.wait_ready();
        r
    }

    fn wait_ready(&self) {
        let start = Instant::now();
        let probe = "<134>1 2026-01-01T00:00:00.000000Z probe portcullis - probe - ready";
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").expect("udp");
        loop {
            let tcp_up = [self.tcp, self.tls, self.json]
                .iter()
                .all(|p| std::net::TcpStream::connect(("127.0.0.1", *p)).is_ok());
            if tcp_up {
                let _ = sock.send_to(probe.as_bytes(), ("127.0.0.1", self.udp));
                if self.read("udp.log").contains("\tprobe\t") {
                    return;
                }
            }
            assert!(
                start.elapsed() < Duration::from_secs(15),
                "rsyslogd did not start: {}",
                self.read("rsyslogd.err")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }

    pub fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.path(file)).unwrap_or_default()
    }

    /// The lines of `file` that contain `needle`, once there are `n` of them (or what there is
    /// after 20 s).
    pub async fn lines_with(&self, file: &str, needle: &str, n: usize) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let lines: Vec<String> = self
                .read(file)
                .lines()
                .filter(|l| l.contains(needle))
                .map(str::to_string)
                .collect();
            if lines.len() >= n || Instant::now() > deadline {
                return lines;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Rsyslog {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Splits at unescaped `sep` (a backslash escapes the next character, which is kept escaped).
fn split_unescaped(s: &str, sep: char, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if out.len() + 1 == max {
            break;
        }
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            c if c == sep => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some(o) => out.push(o),
            None => {}
        }
    }
    out
}

/// A parsed CEF record: the seven header fields and the extension.
pub struct Cef {
    pub header: Vec<String>,
    pub ext: BTreeMap<String, String>,
}

/// Parses `CEF:0|…|…|…|…|…|…|k=v k=v …` as an ArcSight parser does: header fields split at
/// unescaped `|`; extension keys are the words followed by an unescaped `=`, values run to the
/// next key.
pub fn parse_cef(s: &str) -> Cef {
    let s = s.strip_prefix("CEF:").expect("CEF record");
    let parts = split_unescaped(s, '|', 8);
    assert_eq!(parts.len(), 8, "7 header fields and the extension: {s}");
    let header = parts[..7].iter().map(|h| unescape(h)).collect();
    let ext_text = parts[7];
    // Key starts: a word of [A-Za-z0-9] at the start or after a space, followed by `=`.
    let bytes = ext_text.as_bytes();
    let mut keys: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if i == 0 || bytes[i - 1] == b' ' {
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_alphanumeric() {
                j += 1;
            }
            let escaped = j > 0 && bytes[j - 1] == b'\\';
            if j > i && j < bytes.len() && bytes[j] == b'=' && !escaped {
                keys.push((i, j));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    let mut ext = BTreeMap::new();
    for (n, (k0, k1)) in keys.iter().enumerate() {
        let end = keys.get(n + 1).map_or(ext_text.len(), |(next, _)| next - 1);
        ext.insert(
            ext_text[*k0..*k1].to_string(),
            unescape(&ext_text[k1 + 1..end.max(k1 + 1)]),
        );
    }
    Cef { header, ext }
}

/// Parses a LEEF 2.0 record with the tab delimiter: the five header fields and the attributes.
pub fn parse_leef(s: &str) -> (Vec<String>, BTreeMap<String, String>) {
    let s = s.strip_prefix("LEEF:").expect("LEEF record");
    let parts = split_unescaped(s, '|', 7);
    assert_eq!(parts.len(), 7, "{s}");
    assert_eq!(parts[5], "x09", "tab delimiter");
    let header = parts[..5].iter().map(|h| unescape(h)).collect();
    let attrs = split_unescaped(parts[6], '\t', usize::MAX)
        .into_iter()
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("key=value");
            (k.to_string(), unescape(v))
        })
        .collect();
    (header, attrs)
}
