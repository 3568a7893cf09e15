//! Server-side pulls of files named by URL: an import task's `fileReference.link`, the OpenAPI
//! and IDL links inside a policy (on import and apply), an AS3 `WAF_Policy.url`.
//!
//! A pull is a request the controller makes on a user's behalf, so it is bounded: schemes
//! `https`, `http` and `file:` only; `file:` stays inside the data directory (symlinks resolved);
//! at most `max_bytes`, `timeout_secs` for the whole pull (redirects included) and
//! `max_redirects` hops; every destination address is checked against the deny and allow lists
//! *after* name resolution, and the connection goes to the address that was checked (so a name
//! that resolves to a metadata address, or a redirect to one, is refused as well).
//!
//! Built on hyper's client connection API (already a dependency) rather than reqwest: we resolve
//! names ourselves and connect to the checked address, which a higher-level client hides.
//! TLS is rustls with the ring provider and the webpki roots.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::links::FileLinks;

/// Limits and destination rules of server-side pulls (the `fetch` section of the `mgmt` config).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FetchConfig {
    /// Largest file pulled, in bytes.
    pub max_bytes: usize,
    /// Longest time one pull may take (connect, TLS, redirects and body), in seconds.
    pub timeout_secs: u64,
    /// Most redirects followed.
    pub max_redirects: u32,
    /// When not empty, only these networks may be contacted (CIDR, e.g. `10.0.0.0/8`).
    pub allow: Vec<Cidr>,
    /// Networks never contacted; checked before `allow`. Default: link-local and metadata addresses.
    pub deny: Vec<Cidr>,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            max_bytes: 16 * 1024 * 1024,
            timeout_secs: 10,
            max_redirects: 5,
            allow: Vec::new(),
            deny: DEFAULT_DENY.iter().filter_map(|c| c.parse().ok()).collect(),
        }
    }
}

/// Link-local (where every cloud's metadata service lives), the other metadata addresses
/// (Alibaba, AWS over IPv6) and the "this host" network (and its IPv6 form, `::`).
pub const DEFAULT_DENY: &[&str] = &[
    "169.254.0.0/16",
    "fe80::/10",
    "100.100.100.200/32",
    "fd00:ec2::254/128",
    "0.0.0.0/8",
    "::/128",
];

/// A network: an address and a prefix length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct Cidr {
    addr: IpAddr,
    len: u8,
}

impl FromStr for Cidr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("'{s}' is not an address or network (a.b.c.d/n, x::y/n)");
        let (a, l) = s.split_once('/').unwrap_or((s, ""));
        let addr: IpAddr = a.trim().parse().map_err(|_| bad())?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let len = if l.is_empty() {
            max
        } else {
            l.trim().parse::<u8>().map_err(|_| bad())?
        };
        if len > max {
            return Err(bad());
        }
        Ok(Cidr {
            addr: addr.to_canonical(),
            len,
        })
    }
}

impl TryFrom<String> for Cidr {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl Cidr {
    pub fn contains(&self, ip: IpAddr) -> bool {
        fn prefix(bits: u128, width: u32, len: u8) -> u128 {
            if len == 0 {
                0
            } else {
                bits >> (width - u32::from(len))
            }
        }
        match (self.addr, ip.to_canonical()) {
            (IpAddr::V4(n), IpAddr::V4(i)) => {
                prefix(u32::from(n).into(), 32, self.len)
                    == prefix(u32::from(i).into(), 32, self.len)
            }
            (IpAddr::V6(n), IpAddr::V6(i)) => {
                prefix(u128::from(n), 128, self.len) == prefix(u128::from(i), 128, self.len)
            }
            _ => false,
        }
    }
}

impl FetchConfig {
    /// Why `ip` may not be contacted, if it may not. An IPv6 address that carries an IPv4 one
    /// (see [`embedded_ipv4`]) is checked as that IPv4 address too: a NAT64 gateway or 6to4
    /// relay would deliver the connection there.
    pub fn refusal(&self, ip: IpAddr) -> Option<String> {
        let ip = ip.to_canonical();
        let mut forms = vec![ip];
        if let IpAddr::V6(v6) = ip {
            forms.extend(embedded_ipv4(v6).into_iter().map(IpAddr::V4));
        }
        for form in &forms {
            if let Some(c) = self.deny.iter().find(|c| c.contains(*form)) {
                let via = if *form == ip {
                    String::new()
                } else {
                    format!(" (it carries {form})")
                };
                return Some(format!(
                    "destination {ip}{via} is refused (deny list entry {}/{})",
                    c.addr, c.len
                ));
            }
        }
        if !self.allow.is_empty()
            && !forms
                .iter()
                .all(|f| self.allow.iter().any(|c| c.contains(*f)))
        {
            return Some(format!("destination {ip} is not in the allow list"));
        }
        None
    }
}

/// The IPv4 addresses an IPv6 address carries, by every standard embedding: IPv4-mapped
/// (`::ffff:a.b.c.d`) and IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`), NAT64 (`64:ff9b::/96` and the local-use `64:ff9b:1::/48`, RFC 6052 layouts),
/// 6to4 (`2002:AABB:CCDD::/16`), Teredo (`2001::/32`: the server, and the client address
/// stored inverted) and ISATAP (interface id `0000:5efe` or `0200:5efe` under any prefix).
pub fn embedded_ipv4(ip: std::net::Ipv6Addr) -> Vec<std::net::Ipv4Addr> {
    use std::net::Ipv4Addr;
    let o = ip.octets();
    let v4 = |b: &[u8]| Ipv4Addr::new(b[0], b[1], b[2], b[3]);
    let seg = ip.segments();
    let mut out = Vec::new();
    // ::a.b.c.d (not :: or ::1), ::ffff:a.b.c.d, ::ffff:0:a.b.c.d
    if seg[..5] == [0; 5]
        && (seg[5] == 0xffff
            || (seg[5] == 0 && u32::from_be_bytes([o[12], o[13], o[14], o[15]]) > 1))
    {
        out.push(v4(&o[12..]));
    }
    if seg[..4] == [0, 0, 0, 0] && seg[4] == 0xffff && seg[5] == 0 {
        out.push(v4(&o[12..]));
    }
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        out.push(v4(&o[12..]));
    }
    if seg[..3] == [0x64, 0xff9b, 1] {
        // A /48 prefix: the IPv4 address is in octets 6-7 and 9-10 (octet 8 is reserved).
        out.push(Ipv4Addr::new(o[6], o[7], o[9], o[10]));
    }
    if seg[0] == 0x2002 {
        out.push(v4(&o[2..6]));
    }
    if seg[..2] == [0x2001, 0] {
        out.push(v4(&o[4..8]));
        out.push(Ipv4Addr::from(!u32::from_be_bytes([
            o[12], o[13], o[14], o[15],
        ])));
    }
    if matches!(seg[4], 0 | 0x0200) && seg[5] == 0x5efe {
        out.push(v4(&o[12..]));
    }
    out
}

/// Pulls `link` (`https://`, `http://` or `file:`) under the limits of `cfg`; `file:` links are
/// resolved inside `data_dir` (see [`file_links`]). The error names the link and the reason.
pub async fn fetch(cfg: &FetchConfig, data_dir: &Path, link: &str) -> Result<Vec<u8>, String> {
    let fail = |reason: String| format!("{link}: {reason}");
    let lower = link.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        let deadline = Instant::now() + Duration::from_secs(cfg.timeout_secs);
        match tokio::time::timeout_at(deadline, fetch_http(cfg, link)).await {
            Ok(r) => r.map_err(fail),
            Err(_) => Err(fail(format!("timed out after {} s", cfg.timeout_secs))),
        }
    } else if lower.starts_with("file:") {
        file_links(data_dir)
            .read(link, cfg.max_bytes as u64)
            .map_err(fail)
    } else {
        Err(fail(
            "unsupported scheme (expected https, http or file)".into(),
        ))
    }
}

/// [`fetch`] for synchronous callers (handlers run on the blocking pool): runs the pull on a
/// thread of its own with a small runtime, so it works inside or outside a runtime.
pub fn fetch_blocking(cfg: &FetchConfig, data_dir: &Path, link: &str) -> Result<Vec<u8>, String> {
    let (cfg, dir, owned) = (cfg.clone(), data_dir.to_path_buf(), link.to_string());
    let worker = std::thread::Builder::new()
        .name("mgmt-fetch".into())
        .spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("{owned}: {e}"))?
                .block_on(fetch(&cfg, &dir, &owned))
        })
        .map_err(|e| format!("{link}: {e}"))?;
    worker
        .join()
        .unwrap_or_else(|_| Err(format!("{link}: fetch failed")))
}

/// The controller's reading of file links: relative ones and `/var/config/rest/downloads/` in
/// `<data-dir>/downloads`, absolute ones only inside the data directory (symlinks resolved).
pub fn file_links(data_dir: &Path) -> FileLinks {
    FileLinks::within(
        data_dir.join("downloads"),
        data_dir.to_path_buf(),
        "the data directory",
    )
}

fn too_large(cfg: &FetchConfig) -> String {
    format!("larger than the limit of {} bytes", cfg.max_bytes)
}

async fn fetch_http(cfg: &FetchConfig, link: &str) -> Result<Vec<u8>, String> {
    let mut url = link.to_string();
    for _ in 0..=cfg.max_redirects {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| format!("not a valid URL ({url}): {e}"))?;
        let res = request(cfg, &uri).await?;
        let status = res.status();
        if status.is_redirection() {
            let loc = res
                .headers()
                .get(http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| format!("HTTP {status} without a Location"))?;
            url = join(&uri, loc)?;
            continue;
        }
        if !status.is_success() {
            return Err(format!("HTTP status {status} from {url}"));
        }
        let announced = res
            .headers()
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if announced.is_some_and(|n| n > cfg.max_bytes as u64) {
            return Err(too_large(cfg));
        }
        let body = Limited::new(res.into_body(), cfg.max_bytes)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    too_large(cfg)
                } else {
                    format!("reading the body: {e}")
                }
            })?;
        return Ok(body.to_bytes().to_vec());
    }
    Err(format!(
        "too many redirects (more than {})",
        cfg.max_redirects
    ))
}

/// A redirect target: absolute (`https://...`), or a path on the same origin.
fn join(base: &http::Uri, loc: &str) -> Result<String, String> {
    let lower = loc.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(loc.to_string());
    }
    if loc.contains("://") {
        return Err(format!("redirect to an unsupported scheme ({loc})"));
    }
    let origin = format!(
        "{}://{}",
        base.scheme_str().unwrap_or("http"),
        base.authority().map(|a| a.as_str()).unwrap_or_default()
    );
    if loc.starts_with('/') {
        return Ok(format!("{origin}{loc}"));
    }
    let dir = base.path().rsplit_once('/').map_or("", |(d, _)| d);
    Ok(format!("{origin}{dir}/{loc}"))
}

type Resp = http::Response<hyper::body::Incoming>;

async fn request(cfg: &FetchConfig, uri: &http::Uri) -> Result<Resp, String> {
    let https = match uri.scheme_str() {
        Some(s) if s.eq_ignore_ascii_case("https") => true,
        Some(s) if s.eq_ignore_ascii_case("http") => false,
        _ => return Err("only http and https URLs can be pulled".into()),
    };
    let host = uri.host().ok_or("the URL has no host")?;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|e| format!("cannot resolve {bare}: {e}"))?
            .collect(),
    };
    let mut refused = None;
    let mut last_err = None;
    for addr in addrs {
        if let Some(why) = cfg.refusal(addr.ip()) {
            refused = Some(why);
            continue;
        }
        match TcpStream::connect(addr).await {
            Ok(tcp) => return send(tcp, https, bare, uri).await,
            Err(e) => last_err = Some(format!("connect to {addr}: {e}")),
        }
    }
    Err(last_err
        .or(refused)
        .unwrap_or_else(|| format!("{bare} has no address")))
}

async fn send(tcp: TcpStream, https: bool, host: &str, uri: &http::Uri) -> Result<Resp, String> {
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    // Host and port only: credentials in the URL (`user:pw@`) are never sent as a Host.
    let shown = uri.host().unwrap_or(host);
    let authority = match uri.port_u16() {
        Some(p) => format!("{shown}:{p}"),
        None => shown.to_string(),
    };
    let req = http::Request::get(path)
        .header(http::header::HOST, authority)
        .header(http::header::USER_AGENT, "portcullis-fetch")
        .header(http::header::ACCEPT, "*/*")
        .body(Empty::<Bytes>::new())
        .map_err(|e| e.to_string())?;
    if https {
        let name = rustls_pki_types::ServerName::try_from(host.to_string())
            .map_err(|e| format!("invalid TLS server name {host}: {e}"))?;
        let tls = tokio_rustls::TlsConnector::from(tls_config()?)
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS with {host}: {e}"))?;
        exchange(TokioIo::new(tls), req).await
    } else {
        exchange(TokioIo::new(tcp), req).await
    }
}

async fn exchange<T>(io: T, req: http::Request<Empty<Bytes>>) -> Result<Resp, String>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| format!("HTTP handshake: {e}"))?;
    tokio::spawn(conn);
    sender
        .send_request(req)
        .await
        .map_err(|e| format!("request failed: {e}"))
}

fn tls_config() -> Result<Arc<rustls::ClientConfig>, String> {
    static CFG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    if let Some(c) = CFG.get() {
        return Ok(c.clone());
    }
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS configuration: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(CFG.get_or_init(|| Arc::new(cfg)).clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssrf_to_metadata_through_an_ipv6_embedding_is_refused() {
        let cfg = FetchConfig::default();
        for ip in [
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::169.254.169.254",
            "::169.254.169.254",
            "::ffff:169.254.169.254",
            "::ffff:0:169.254.169.254",
            "64:ff9b:1:a9fe:a9:fe00::",
            "2002:a9fe:a9fe::1",
            "2001:0:a9fe:a9fe::1",
            "2001:0:4136:e378:8000:63bf:5601:5601",
            "fe80::5efe:169.254.169.254",
            "2001:db8::200:5efe:a9fe:a9fe",
            "64:ff9b::6464:64c8",
            "::0.0.0.7",
            "::",
        ] {
            let ip: IpAddr = ip.parse().expect(ip);
            assert!(cfg.refusal(ip).is_some(), "{ip} allowed");
        }
        for ip in ["::1", "64:ff9b::808:808", "2002:808:808::1", "2001:db8::1"] {
            let ip: IpAddr = ip.parse().expect(ip);
            assert_eq!(cfg.refusal(ip), None, "{ip}");
        }
    }

    #[test]
    fn default_deny_list_refuses_link_local_and_metadata() {
        let cfg = FetchConfig::default();
        for ip in [
            "169.254.169.254",
            "fe80::1",
            "::ffff:169.254.169.254",
            "100.100.100.200",
            "fd00:ec2::254",
            "0.0.0.0",
        ] {
            let ip: IpAddr = ip.parse().expect("ip");
            assert!(cfg.refusal(ip).is_some(), "{ip} allowed");
        }
        for ip in ["127.0.0.1", "10.1.2.3", "::1", "2001:db8::1"] {
            assert_eq!(cfg.refusal(ip.parse().expect("ip")), None, "{ip}");
        }
        let only = FetchConfig {
            allow: vec!["10.0.0.0/8".parse().expect("cidr")],
            ..FetchConfig::default()
        };
        assert!(only.refusal("10.9.9.9".parse().expect("ip")).is_none());
        assert!(only.refusal("127.0.0.1".parse().expect("ip")).is_some());
        for bad in ["10.0.0.0/33", "x/8", "::/129", ""] {
            assert!(bad.parse::<Cidr>().is_err(), "{bad}");
        }
        assert!(
            "0.0.0.0/0"
                .parse::<Cidr>()
                .expect("all")
                .contains("8.8.8.8".parse().expect("ip"))
        );
    }
}
