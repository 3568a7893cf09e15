//! The model of a security log profile's `application` entries (what to log, where, in which
//! format) parsed from the stored JSON, with the precise error for anything we cannot honour.
//! Used by the kind's validation (`objects/security_log.rs`) and by the event router.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde_json::{Map, Value};

/// Which requests an entry logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestType {
    /// Blocked and alarmed requests (`illegal`, `illegal-including-staged-signatures`, `all`:
    /// passing requests produce no event, so these three log the same requests).
    Illegal,
    /// Only blocked requests (`blocked`, our addition).
    Blocked,
}

/// How the syslog MSG part is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MsgFormat {
    /// `key="value"` pairs joined by `delimiter` (the `predefined` format of `remote`/`splunk`).
    Pairs { delimiter: String },
    /// `userString` with `%field%` placeholders replaced.
    User(String),
    /// The event as one JSON object.
    Json,
    /// ArcSight Common Event Format.
    Cef,
    /// QRadar Log Event Extended Format 2.0.
    Leef,
}

/// Stream and datagram transports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    Udp,
    /// TCP; syslog with RFC 6587 octet-counting framing.
    Tcp,
    /// TLS over TCP; syslog with RFC 5425 framing (octet counting).
    Tls(TlsSettings),
}

/// How a TLS connection to a collector is verified (and authenticated, with a client certificate).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsSettings {
    /// CA certificates (PEM) the collector's certificate must chain to; none: the built-in roots.
    pub ca_pem: Option<String>,
    /// The name the certificate must carry; none: the server's address.
    pub server_name: Option<String>,
    /// A client certificate chain and its key (PEM), for collectors that require one.
    pub client_cert_pem: Option<String>,
    pub client_key_pem: Option<String>,
}

/// A Splunk HTTP Event Collector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hec {
    /// `https://host:8088/services/collector/event` (the path is added when not given).
    pub url: String,
    pub token: String,
    pub index: Option<String>,
    pub source: String,
    pub sourcetype: String,
    /// Most events in one request.
    pub batch: usize,
    /// Longest an event waits for its batch to fill.
    pub flush: Duration,
    pub tls: TlsSettings,
}

/// Where an entry sends events besides the local store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Remote {
    None,
    /// RFC 5424 messages.
    Syslog {
        servers: Vec<SocketAddr>,
        transport: Transport,
    },
    /// One event JSON object per line, over TCP or TLS.
    JsonLines {
        servers: Vec<SocketAddr>,
        transport: Transport,
    },
    /// One RFC 5424 message per line, appended to `<data-dir>/security-logs/<name>`.
    File(String),
    /// Batches of events posted to a Splunk HTTP Event Collector.
    Hec(Hec),
}

/// One `application` entry of a log profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogApp {
    pub name: String,
    pub local_storage: bool,
    pub remote: Remote,
    pub format: MsgFormat,
    pub request_type: RequestType,
    /// Syslog facility number (local0 = 16 … local7 = 23).
    pub facility: u8,
    /// Longest message sent (bytes); longer ones are cut on a character boundary.
    pub max_entry: usize,
}

/// Parses a syslog server address: `192.0.2.1:514`, `[2001:db8::1]:514` or the `2001:db8::1.514`
/// form of the real system's IPv6 destinations. Port 0 is refused.
fn parse_server(s: &str) -> Result<SocketAddr, String> {
    let bad = || format!("invalid syslog server address '{s}' (expected ip:port)");
    let addr = match s.parse::<SocketAddr>() {
        Ok(a) => a,
        Err(_) => {
            let (ip, port) = s.rsplit_once('.').ok_or_else(bad)?;
            if !ip.contains(':') {
                return Err(bad());
            }
            let ip: IpAddr = ip.parse().map_err(|_| bad())?;
            SocketAddr::new(ip, port.parse().map_err(|_| bad())?)
        }
    };
    if addr.port() == 0 {
        return Err(bad());
    }
    Ok(addr)
}

fn text<'a>(m: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("'{key}' must be a string")),
    }
}

fn switch(m: &Map<String, Value>, key: &str, default: bool) -> Result<bool, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::String(s)) if s == "enabled" => Ok(true),
        Some(Value::String(s)) if s == "disabled" => Ok(false),
        Some(_) => Err(format!("'{key}' must be enabled or disabled")),
    }
}

/// A file name for a local security log: letters, digits, `.`, `_`, `-`, not starting with `.`.
fn check_file_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid log file name '{name}' (letters, digits, '.', '_', '-'; not starting with '.')"
        ))
    }
}

fn request_type(m: &Map<String, Value>) -> Result<RequestType, String> {
    let value = match m.get("filter").or_else(|| m.get("storageFilter")) {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => {
            let mut found = None;
            for it in items {
                if it.get("name").and_then(Value::as_str) != Some("request-type") {
                    continue;
                }
                found = match it.get("values") {
                    Some(Value::Array(v)) => v.first().and_then(Value::as_str).map(str::to_string),
                    Some(Value::String(s)) => Some(s.clone()),
                    _ => None,
                };
            }
            found
        }
        Some(Value::Object(o)) => text(o, "requestType")?.map(str::to_string),
        Some(_) => return Err("'filter' must be an array of {name, values}".into()),
    };
    match value.as_deref() {
        None | Some("illegal" | "illegal-including-staged-signatures" | "all") => {
            Ok(RequestType::Illegal)
        }
        Some("blocked") => Ok(RequestType::Blocked),
        Some(other) => Err(format!(
            "unsupported request-type '{other}' (illegal, illegal-including-staged-signatures, all or blocked)"
        )),
    }
}

fn format(m: &Map<String, Value>) -> Result<MsgFormat, String> {
    let Some(f) = m.get("format").filter(|v| !v.is_null()) else {
        return Ok(MsgFormat::Pairs {
            delimiter: ",".into(),
        });
    };
    let f = f
        .as_object()
        .ok_or("'format' must be an object {type, fieldDelimiter, userString}")?;
    let delimiter = text(f, "fieldDelimiter")?.unwrap_or(",").to_string();
    if delimiter.is_empty() || delimiter.len() > 8 || delimiter.contains(['\r', '\n']) {
        return Err("'fieldDelimiter' must be 1 to 8 characters without line breaks".into());
    }
    match text(f, "type")?.unwrap_or("predefined") {
        "predefined" | "none" => Ok(MsgFormat::Pairs { delimiter }),
        "user-defined" => match text(f, "userString")? {
            Some(s) if !s.is_empty() => Ok(MsgFormat::User(s.to_string())),
            _ => Err("a user-defined format needs a 'userString'".into()),
        },
        "json" => Ok(MsgFormat::Json),
        "cef" => Ok(MsgFormat::Cef),
        "leef" => Ok(MsgFormat::Leef),
        other => Err(format!(
            "unsupported format type '{other}' (predefined, user-defined, json, cef or leef)"
        )),
    }
}

fn facility(m: &Map<String, Value>) -> Result<u8, String> {
    let f = text(m, "facility")?.unwrap_or("local0");
    f.strip_prefix("local")
        .and_then(|n| n.parse::<u8>().ok())
        .filter(|n| *n <= 7)
        .map(|n| 16 + n)
        .ok_or_else(|| format!("unsupported facility '{f}' (local0 to local7)"))
}

fn max_entry(m: &Map<String, Value>) -> Result<usize, String> {
    match text(m, "maximumEntryLength")?.unwrap_or("64k") {
        "1k" => Ok(1024),
        "2k" => Ok(2048),
        "10k" => Ok(10 * 1024),
        "64k" => Ok(64 * 1024),
        other => Err(format!(
            "unsupported maximumEntryLength '{other}' (1k, 2k, 10k or 64k)"
        )),
    }
}

fn servers(m: &Map<String, Value>) -> Result<Vec<SocketAddr>, String> {
    let servers = match m.get("servers") {
        Some(Value::Array(a)) => a
            .iter()
            .map(|s| {
                if let (Some(a), Some(p)) = (s.get("address"), s.get("port")) {
                    let a = a.as_str().unwrap_or_default();
                    let p = p
                        .as_u64()
                        .map(|n| n.to_string())
                        .or_else(|| p.as_str().map(str::to_string));
                    let host = if a.contains(':') {
                        format!("[{a}]")
                    } else {
                        a.into()
                    };
                    return parse_server(&format!("{host}:{}", p.unwrap_or_default()));
                }
                let name = s
                    .get("name")
                    .and_then(Value::as_str)
                    .or_else(|| s.as_str())
                    .ok_or("each server must be {\"name\": \"ip:port\"}")?;
                parse_server(name)
            })
            .collect::<Result<Vec<_>, String>>()?,
        None | Some(Value::Null) => Vec::new(),
        Some(_) => return Err("'servers' must be an array of {name: \"ip:port\"}".into()),
    };
    if servers.is_empty() {
        return Err("remote storage needs at least one server in 'servers'".into());
    }
    Ok(servers)
}

/// Refuses a field of the object `what` that is not one of `known`.
fn only(m: &Map<String, Value>, what: &str, known: &[&str]) -> Result<(), String> {
    match m.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(format!("unknown '{what}' field '{k}'")),
        None => Ok(()),
    }
}

/// Checks that `pem` holds at least one certificate (`what` names it in errors).
fn certificates(pem: &str, what: &str) -> Result<(), String> {
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("'{what}' is not PEM: {e}"))?;
    if certs.is_empty() {
        return Err(format!("'{what}' holds no PEM certificate"));
    }
    Ok(())
}

/// The `tls` object: `caCertificate`, `serverName`, `clientCertificate`, `clientKey`.
fn tls(m: &Map<String, Value>) -> Result<TlsSettings, String> {
    let Some(t) = m.get("tls").filter(|v| !v.is_null()) else {
        return Ok(TlsSettings::default());
    };
    let t = t.as_object().ok_or(
        "'tls' must be an object {caCertificate, serverName, clientCertificate, clientKey}",
    )?;
    only(
        t,
        "tls",
        &[
            "caCertificate",
            "serverName",
            "clientCertificate",
            "clientKey",
        ],
    )?;
    let s = TlsSettings {
        ca_pem: text(t, "caCertificate")?.map(str::to_string),
        server_name: text(t, "serverName")?.map(str::to_string),
        client_cert_pem: text(t, "clientCertificate")?.map(str::to_string),
        client_key_pem: text(t, "clientKey")?.map(str::to_string),
    };
    if let Some(ca) = &s.ca_pem {
        certificates(ca, "tls.caCertificate")?;
    }
    if let Some(n) = &s.server_name
        && rustls_pki_types::ServerName::try_from(n.as_str()).is_err()
    {
        return Err(format!(
            "'tls.serverName' '{n}' is not a DNS name or IP address"
        ));
    }
    match (&s.client_cert_pem, &s.client_key_pem) {
        (None, None) => {}
        (Some(c), Some(k)) => {
            certificates(c, "tls.clientCertificate")?;
            use rustls_pki_types::pem::PemObject;
            rustls_pki_types::PrivateKeyDer::from_pem_slice(k.as_bytes())
                .map_err(|e| format!("'tls.clientKey' is not a PEM private key: {e}"))?;
        }
        _ => return Err("'tls.clientCertificate' and 'tls.clientKey' go together".into()),
    }
    Ok(s)
}

fn transport(m: &Map<String, Value>) -> Result<Transport, String> {
    let t = match text(m, "protocol")?.unwrap_or("udp") {
        "udp" => Transport::Udp,
        "tcp" => Transport::Tcp,
        "tls" => Transport::Tls(tls(m)?),
        other => {
            return Err(format!("unsupported protocol '{other}' (udp, tcp or tls)"));
        }
    };
    if !matches!(t, Transport::Tls(_)) && m.get("tls").is_some_and(|v| !v.is_null()) {
        return Err("'tls' needs protocol 'tls'".into());
    }
    Ok(t)
}

/// HEC batches: at most this many events per request.
const MAX_HEC_BATCH: u64 = 1000;

fn hec(m: &Map<String, Value>) -> Result<Hec, String> {
    let h = m
        .get("hec")
        .and_then(Value::as_object)
        .ok_or("remote storage 'splunk-hec' needs 'hec': {url, token}")?;
    only(
        h,
        "hec",
        &[
            "url",
            "token",
            "index",
            "source",
            "sourcetype",
            "batchEvents",
            "flushMs",
        ],
    )?;
    let url = text(h, "url")?.ok_or("'hec.url' is required")?;
    let uri: http::Uri = url
        .parse()
        .map_err(|_| format!("'hec.url' '{url}' is not a URL"))?;
    if !matches!(uri.scheme_str(), Some("https" | "http")) || uri.host().is_none() {
        return Err(format!(
            "'hec.url' '{url}' must be an https:// (or http://) URL"
        ));
    }
    let url = match uri.path() {
        "" | "/" => format!(
            "{}://{}/services/collector/event",
            uri.scheme_str().unwrap_or("https"),
            uri.authority().map(|a| a.as_str()).unwrap_or_default()
        ),
        _ => url.to_string(),
    };
    let token = text(h, "token")?
        .filter(|t| !t.is_empty())
        .ok_or("'hec.token' is required")?;
    if token.chars().any(|c| c.is_control() || c == ' ') {
        return Err("'hec.token' must not contain spaces or control characters".into());
    }
    let number = |k: &str, default: u64, max: u64| -> Result<u64, String> {
        match h.get(k) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v
                .as_u64()
                .filter(|n| (1..=max).contains(n))
                .ok_or_else(|| format!("'hec.{k}' must be a whole number from 1 to {max}")),
        }
    };
    Ok(Hec {
        url,
        token: token.to_string(),
        index: text(h, "index")?.map(str::to_string),
        source: text(h, "source")?.unwrap_or("portcullis").to_string(),
        sourcetype: text(h, "sourcetype")?
            .unwrap_or("portcullis:security")
            .to_string(),
        batch: number("batchEvents", 100, MAX_HEC_BATCH)? as usize,
        flush: Duration::from_millis(number("flushMs", 1000, 60_000)?),
        tls: tls(m)?,
    })
}

fn remote(m: &Map<String, Value>) -> Result<Remote, String> {
    match text(m, "remoteStorage")?.unwrap_or("none") {
        "none" | "disabled" => Ok(Remote::None),
        "remote" | "splunk" | "arcsight" => Ok(Remote::Syslog {
            transport: transport(m)?,
            servers: servers(m)?,
        }),
        "json-lines" => {
            let transport = match text(m, "protocol")? {
                None => Transport::Tcp,
                Some(_) => transport(m)?,
            };
            if transport == Transport::Udp {
                return Err("JSON lines travel over tcp or tls, not udp".into());
            }
            Ok(Remote::JsonLines {
                transport,
                servers: servers(m)?,
            })
        }
        "splunk-hec" => Ok(Remote::Hec(hec(m)?)),
        "file" => {
            let name = text(m, "file")?.ok_or("remote storage 'file' needs a 'file' name")?;
            check_file_name(name)?;
            Ok(Remote::File(name.to_string()))
        }
        other => Err(format!(
            "unsupported remoteStorage '{other}' (none, remote, splunk, arcsight, json-lines, splunk-hec or file)"
        )),
    }
}

/// Why a log profile's `application` entry cannot be used; the admin API shows it after the
/// profile's path, the event router logs it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    #[error("'name' must be a string")]
    Name,
    /// The entry `application` has a field at fault; `reason` names the field and the problem.
    #[error("application '{application}': {reason}")]
    Entry { application: String, reason: String },
}

/// Why a profile body's `application` entries cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplicationsError {
    #[error("each application entry must be an object")]
    EntryNotAnObject,
    #[error("'application' must be an array or an object")]
    NotArrayOrObject,
}

/// Parses one `application` entry; `default_name` names an entry without `name`.
pub fn parse_app(m: &Map<String, Value>, default_name: &str) -> Result<LogApp, AppError> {
    let name = text(m, "name")
        .map_err(|_| AppError::Name)?
        .unwrap_or(default_name)
        .to_string();
    let ctx = |reason: String| AppError::Entry {
        application: name.clone(),
        reason,
    };
    let format = format(m).map_err(ctx)?;
    let format = match (text(m, "remoteStorage").ok().flatten(), format) {
        (Some("splunk"), MsgFormat::Pairs { .. }) => MsgFormat::Pairs {
            delimiter: ",".into(),
        },
        // ArcSight reads CEF; the predefined format of an arcsight entry is CEF.
        (Some("arcsight"), MsgFormat::Pairs { .. }) => MsgFormat::Cef,
        (_, f) => f,
    };
    Ok(LogApp {
        local_storage: switch(m, "localStorage", true).map_err(ctx)?,
        remote: remote(m).map_err(ctx)?,
        format,
        request_type: request_type(m).map_err(ctx)?,
        facility: facility(m).map_err(ctx)?,
        max_entry: max_entry(m).map_err(ctx)?,
        name,
    })
}

/// The `application` entries given in a profile body (`application`, or an expanded
/// `applicationReference.items`): an array of objects with `name`, or an object keyed by name
/// (the form real clients POST). Returns them in order, each with its `name` (`default_name`
/// when none is given); `None` when the body has neither.
pub fn applications(
    body: &Map<String, Value>,
    default_name: &str,
) -> Result<Option<Vec<Map<String, Value>>>, ApplicationsError> {
    let named = |mut m: Map<String, Value>, name: &str| {
        m.entry("name")
            .or_insert_with(|| Value::String(name.to_string()));
        m
    };
    let given = match (body.get("application"), body.get("applicationReference")) {
        (Some(v), _) if !v.is_null() => v,
        (_, Some(r)) if r.get("items").is_some() => &r["items"],
        _ => return Ok(None),
    };
    match given {
        Value::Array(a) => a
            .iter()
            .map(|v| {
                v.as_object()
                    .map(|m| named(m.clone(), default_name))
                    .ok_or(ApplicationsError::EntryNotAnObject)
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Value::Object(o) if !o.is_empty() && o.values().all(Value::is_object) => Ok(Some(
            o.iter()
                .map(|(k, v)| named(v.as_object().cloned().unwrap_or_default(), k))
                .collect(),
        )),
        Value::Object(o) => Ok(Some(vec![named(o.clone(), default_name)])),
        _ => Err(ApplicationsError::NotArrayOrObject),
    }
}

/// The fuzz target `log_profile`: a profile body (JSON) through [`applications`] and
/// [`parse_app`], and every line
/// of the text through [`parse_server`] (a parsed address must parse back to itself).
#[cfg(any(test, fuzzing))]
pub fn fuzz_log_profile(data: &[u8]) {
    if let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(data)
        && let Ok(Some(apps)) = applications(&m, "p")
    {
        for a in &apps {
            let _ = parse_app(a, "p");
        }
    }
    for line in String::from_utf8_lossy(data).lines() {
        if let Ok(a) = parse_server(line) {
            assert_eq!(parse_server(&a.to_string()), Ok(a));
        }
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
