//! The item classes of an AS3 application we support, each parsed from its JSON object with
//! AS3's defaults: Service_HTTP, Service_HTTPS, Pool, HTTP_Profile, TCP_Profile, TLS_Server,
//! Certificate, WAF_Policy. Unknown classes and properties are errors (docs/as3.md lists what
//! is supported). Pure: no IO, no store.

use serde_json::{Map, Value};

use super::props::{Errors, Props, valid_bigip_path};
use super::secure::{certificate, tls_server, waf_policy};
use super::service::{pool, service};

/// The classes an application may hold.
pub const SUPPORTED: &[&str] = &[
    "Service_HTTP",
    "Service_HTTPS",
    "Pool",
    "HTTP_Profile",
    "TCP_Profile",
    "TLS_Server",
    "Certificate",
    "WAF_Policy",
    "Monitor",
];

/// A reference to another object: a declared item (`use`, resolved to its full path by
/// `model.rs`) or an object that already exists on the controller (`bigip`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Use(String),
    Bigip(String),
}

/// One pointer property of an item.
#[derive(Debug, Clone)]
pub struct Ptr {
    /// The property path below the item (`pool`, `securityLogProfiles/0`).
    pub prop: String,
    /// Classes a `use` may point to.
    pub classes: &'static [&'static str],
    pub target: Target,
}

impl Ptr {
    /// The full path of the referenced object.
    pub fn path(&self) -> &str {
        match &self.target {
            Target::Use(p) | Target::Bigip(p) => p,
        }
    }
    pub fn builtin(prop: &str, path: &str) -> Ptr {
        Ptr {
            prop: prop.into(),
            classes: &[],
            target: Target::Bigip(path.into()),
        }
    }
}

#[derive(Debug)]
pub struct Service {
    pub https: bool,
    /// Addresses as written (`10.0.1.10`, `10.0.1.10%2`, `2001:db8::1`).
    pub addresses: Vec<String>,
    pub port: u16,
    /// The port of the redirecting virtual (`redirect80`), when there is one.
    pub redirect: Option<u16>,
    pub pool: Option<Ptr>,
    pub waf: Option<Ptr>,
    pub log_profiles: Vec<Ptr>,
    pub tcp_client: Ptr,
    pub tcp_server: Ptr,
    pub http: Ptr,
    pub tls: Option<Ptr>,
    pub enabled: bool,
    pub snat: bool,
}

#[derive(Debug)]
pub struct Member {
    pub address: String,
    pub port: u16,
    pub enabled: bool,
}

#[derive(Debug)]
pub struct Pool {
    pub monitors: Vec<Ptr>,
    /// `None` = all monitors must pass.
    pub min_monitors: Option<u64>,
    pub members: Vec<Member>,
    pub lb_mode: &'static str,
}

/// Where a WAF policy comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum WafSource {
    Url {
        url: String,
        ignore_changes: bool,
    },
    /// A file in the downloads directory.
    File(String),
    /// The policy document itself.
    Inline(Value),
}

/// A PEM text given inline, or an existing file object.
#[derive(Debug, Clone)]
pub enum Pem {
    Inline(String),
    Bigip(String),
}

#[derive(Debug)]
pub enum Item {
    Service(Box<Service>),
    Pool(Pool),
    /// A health monitor: `ltm monitor http|https|tcp`.
    Monitor {
        monitor_type: &'static str,
        send: Option<String>,
        receive: Option<String>,
        interval: i64,
        timeout: i64,
    },
    HttpProfile {
        x_forwarded_for: bool,
    },
    TcpProfile {
        idle_timeout: i64,
    },
    TlsServer {
        certificates: Vec<Ptr>,
    },
    Certificate {
        cert: Pem,
        key: Pem,
        chain: Option<Pem>,
    },
    WafPolicy {
        source: WafSource,
        enforcement: Option<&'static str>,
    },
}

impl Item {
    pub fn class(&self) -> &'static str {
        match self {
            Item::Service(s) if s.https => "Service_HTTPS",
            Item::Service(_) => "Service_HTTP",
            Item::Pool(_) => "Pool",
            Item::Monitor { .. } => "Monitor",
            Item::HttpProfile { .. } => "HTTP_Profile",
            Item::TcpProfile { .. } => "TCP_Profile",
            Item::TlsServer { .. } => "TLS_Server",
            Item::Certificate { .. } => "Certificate",
            Item::WafPolicy { .. } => "WAF_Policy",
        }
    }

    /// Calls `f` on every `use` pointer; a `Some` answer is the resolved full path.
    pub fn resolve(&mut self, f: &mut dyn FnMut(&Ptr) -> Option<String>) {
        let ptrs: Vec<&mut Ptr> = match self {
            Item::Service(s) => {
                let mut v: Vec<&mut Ptr> = vec![&mut s.tcp_client, &mut s.tcp_server, &mut s.http];
                v.extend(s.pool.as_mut());
                v.extend(s.waf.as_mut());
                v.extend(s.tls.as_mut());
                v.extend(s.log_profiles.iter_mut());
                v
            }
            Item::Pool(p) => p.monitors.iter_mut().collect(),
            Item::TlsServer { certificates } => certificates.iter_mut().collect(),
            _ => Vec::new(),
        };
        for p in ptrs {
            if matches!(p.target, Target::Use(_))
                && let Some(full) = f(p)
            {
                p.target = Target::Use(full);
            }
        }
    }
}

/// Parses one item of an application at `path`.
pub fn parse_item(path: &str, m: &Map<String, Value>, errs: &mut Errors) -> Option<Item> {
    let p = Props::new(path, m);
    let class = match m.get("class").and_then(Value::as_str) {
        Some(c) => c,
        None => {
            errs.push(path, "should have required property 'class'");
            return None;
        }
    };
    Some(match class {
        "Service_HTTP" => Item::Service(Box::new(service(&p, false, errs))),
        "Service_HTTPS" => Item::Service(Box::new(service(&p, true, errs))),
        "Pool" => Item::Pool(pool(&p, errs)),
        "Monitor" => {
            p.only(
                &["monitorType", "send", "receive", "interval", "timeout"],
                errs,
            );
            if !m.contains_key("monitorType") {
                errs.push(path, "should have required property 'monitorType'");
            }
            Item::Monitor {
                monitor_type: p.choice("monitorType", "http", &["http", "https", "tcp"], errs),
                send: p.str("send", errs).map(str::to_string),
                receive: p.str("receive", errs).map(str::to_string),
                interval: p.int("interval", 5, 1, 86_400, errs),
                timeout: p.int("timeout", 16, 1, 86_400, errs),
            }
        }
        "HTTP_Profile" => {
            p.only(&["xForwardedFor"], errs);
            Item::HttpProfile {
                x_forwarded_for: p.bool("xForwardedFor", true, errs),
            }
        }
        "TCP_Profile" => {
            p.only(&["idleTimeout"], errs);
            Item::TcpProfile {
                idle_timeout: p.int("idleTimeout", 300, 0, 4_294_967_295, errs),
            }
        }
        "TLS_Server" => tls_server(&p, errs),
        "Certificate" => certificate(&p, errs)?,
        "WAF_Policy" => waf_policy(&p, errs)?,
        other => {
            errs.push(
                &p.at("class"),
                format!(
                    "class {other} is not supported (supported: {})",
                    SUPPORTED.join(", ")
                ),
            );
            return None;
        }
    })
}

/// A pointer property: a string (a `use` name), `{use}` or `{bigip}`.
pub fn pointer(
    p: &Props<'_>,
    prop: &str,
    v: &Value,
    classes: &'static [&'static str],
    errs: &mut Errors,
) -> Option<Ptr> {
    let at = p.at(prop);
    let target = match v {
        Value::String(s) if !s.is_empty() => Target::Use(s.clone()),
        Value::Object(o) if o.len() == 1 => match (o.get("use"), o.get("bigip")) {
            (Some(Value::String(s)), _) if !s.is_empty() => Target::Use(s.clone()),
            (_, Some(Value::String(s))) if valid_bigip_path(s) => Target::Bigip(s.clone()),
            (_, Some(_)) => {
                errs.push(
                    &format!("{at}/bigip"),
                    "should be a path /Partition/name of an existing object",
                );
                return None;
            }
            _ => {
                errs.push(&at, "should have exactly one of the properties use, bigip");
                return None;
            }
        },
        _ => {
            errs.push(
                &at,
                "should be a name, {\"use\": name} or {\"bigip\": path}",
            );
            return None;
        }
    };
    Some(Ptr {
        prop: prop.into(),
        classes,
        target,
    })
}
