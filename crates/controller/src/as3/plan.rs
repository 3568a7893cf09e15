//! Declaration → objects: what one tenant of a validated declaration becomes in the object model
//! under `/<Tenant>/<Application>/` (ltm virtuals, pools with members, http/tcp/client-ssl
//! profiles, sys file ssl-cert/ssl-key for inline certificates), in creation order, plus the WAF
//! policies to install and attach. Pure: no IO, no store.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::classes::{Item, Pem, Service, WafSource};
use super::model::{Adc, Tenant};
use crate::objects::{pool, profile, sys_file, virtual_server};

/// The iRule a virtual carries to answer every request with a redirect to HTTPS (as on BIG-IP).
pub const HTTPS_REDIRECT_RULE: &str = "/Common/_sys_https_redirect";

/// One object to create: its collection path and its POST body (`name` is the full path).
#[derive(Debug, Clone, PartialEq)]
pub struct Obj {
    pub coll: &'static str,
    pub body: Value,
}

impl Obj {
    /// The store key (`/mgmt/tm/ltm/pool/~T~A~p`).
    pub fn key(&self) -> String {
        let full_path = self.body["name"].as_str().unwrap_or_default();
        format!("{}/{}", self.coll, full_path.replace('/', "~"))
    }
}

/// A WAF policy the tenant declares.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyPlan {
    pub full_path: String,
    pub source: WafSource,
    pub enforcement: Option<&'static str>,
}

/// Everything one tenant becomes.
#[derive(Debug, Default)]
pub struct Plan {
    /// Files to place in the downloads directory first: (file name, PEM text).
    pub files: Vec<(String, String)>,
    pub objects: Vec<Obj>,
    pub policies: Vec<PolicyPlan>,
    /// (policy full path, virtual full path): the policy protects that virtual.
    pub attachments: Vec<(String, String)>,
}

/// Creation order: files, then profiles (which name files), pools, virtuals (which name both).
fn rank(coll: &str) -> usize {
    [
        sys_file::SSL_CERT.path,
        sys_file::SSL_KEY.path,
        profile::TCP.path,
        profile::HTTP.path,
        profile::CLIENT_SSL.path,
        profile::MONITOR_HTTP.path,
        profile::MONITOR_HTTPS.path,
        profile::MONITOR_TCP.path,
        pool::POOL.path,
        virtual_server::VIRTUAL.path,
    ]
    .iter()
    .position(|c| *c == coll)
    .unwrap_or(usize::MAX)
}

/// The objects of one tenant. `adc` is the whole declaration (a `use` may name an item of
/// another tenant, e.g. `/Common/Shared/...`).
pub fn plan_tenant(adc: &Adc, t: &Tenant) -> Plan {
    let index: BTreeMap<&str, &Item> = adc
        .tenants
        .iter()
        .flat_map(|t| t.apps.iter())
        .flat_map(|a| a.items.iter())
        .map(|i| (i.full_path.as_str(), &i.item))
        .collect();
    let mut plan = Plan::default();
    for app in &t.apps {
        for named in &app.items {
            let full_path = named.full_path.as_str();
            match &named.item {
                Item::Certificate { cert, key, chain } => {
                    let file = format!("as3_{}_{}_{}", t.name, app.name, named.name);
                    let mut file_obj = |coll, ext: &str, full_path: String, pem: &Pem| {
                        if let Pem::Inline(text) = pem {
                            let f = format!("{file}.{ext}");
                            plan.objects.push(Obj {
                                coll,
                                body: json!({"name": full_path, "sourcePath": format!("file:{}{f}", sys_file::DOWNLOADS)}),
                            });
                            plan.files.push((f, text.clone()));
                        }
                    };
                    file_obj(sys_file::SSL_CERT.path, "crt", full_path.to_string(), cert);
                    file_obj(sys_file::SSL_KEY.path, "key", full_path.to_string(), key);
                    if let Some(c) = chain {
                        file_obj(sys_file::SSL_CERT.path, "chain", format!("{full_path}-bundle"), c);
                    }
                }
                Item::HttpProfile { x_forwarded_for } => plan.objects.push(Obj {
                    coll: profile::HTTP.path,
                    body: json!({"name": full_path, "defaultsFrom": "/Common/http",
                                 "xForwardedFor": if *x_forwarded_for { "enabled" } else { "disabled" }}),
                }),
                Item::TcpProfile { idle_timeout } => plan.objects.push(Obj {
                    coll: profile::TCP.path,
                    body: json!({"name": full_path, "defaultsFrom": "/Common/tcp", "idleTimeout": idle_timeout}),
                }),
                Item::TlsServer { certificates } => {
                    let chains: Vec<Value> = certificates
                        .iter()
                        .map(|c| cert_key_chain(&index, c.path()))
                        .collect();
                    plan.objects.push(Obj {
                        coll: profile::CLIENT_SSL.path,
                        body: json!({"name": full_path, "defaultsFrom": "/Common/clientssl", "certKeyChain": chains}),
                    });
                }
                Item::Pool(p) => {
                    let paths: Vec<&str> = p.monitors.iter().map(|m| m.path()).collect();
                    let monitor = match (paths.len(), p.min_monitors) {
                        (0, _) => None,
                        (1, _) => Some(paths[0].to_string()),
                        (_, None) => Some(paths.join(" and ")),
                        (_, Some(n)) => Some(format!("min {n} of {{ {} }}", paths.join(" "))),
                    };
                    let members: Vec<Value> = p
                        .members
                        .iter()
                        .map(|m| {
                            let v6 = m.address.contains(':');
                            let sep = if v6 { '.' } else { ':' };
                            let address = with_route_domain(&m.address, t.route_domain);
                            json!({"name": format!("{address}{sep}{}", m.port), "partition": t.name,
                                   "address": address,
                                   "session": if m.enabled { "user-enabled" } else { "user-disabled" }})
                        })
                        .collect();
                    let mut body = json!({"name": full_path, "loadBalancingMode": p.lb_mode, "members": members});
                    if let Some(m) = monitor {
                        body["monitor"] = json!(m);
                    }
                    plan.objects.push(Obj {
                        coll: pool::POOL.path,
                        body,
                    });
                }
                Item::Monitor {
                    monitor_type,
                    send,
                    receive,
                    interval,
                    timeout,
                } => {
                    let coll = match *monitor_type {
                        "https" => profile::MONITOR_HTTPS.path,
                        "tcp" => profile::MONITOR_TCP.path,
                        _ => profile::MONITOR_HTTP.path,
                    };
                    // The monitor objects keep `\r\n` escaped, as tmsh shows them.
                    let esc = |t: &str| t.replace('\r', "\\r").replace('\n', "\\n");
                    let mut body = json!({"name": full_path, "interval": interval, "timeout": timeout});
                    if let Some(t) = send {
                        body["send"] = json!(esc(t));
                    }
                    if let Some(t) = receive {
                        body["recv"] = json!(esc(t));
                    }
                    plan.objects.push(Obj { coll, body });
                }
                Item::Service(s) => {
                    let on = Switches {
                        route_domain: t.route_domain,
                        enabled: t.enabled && app.enabled && s.enabled,
                    };
                    service(&mut plan, &t.name, full_path, s, on)
                }
                Item::WafPolicy {
                    source,
                    enforcement,
                } => plan.policies.push(PolicyPlan {
                    full_path: full_path.to_string(),
                    source: source.clone(),
                    enforcement: *enforcement,
                }),
            }
        }
    }
    plan.objects.sort_by_key(|o| rank(o.coll));
    plan
}

/// One `certKeyChain` entry for a declared Certificate: its objects share its full path (an
/// inline chain is `<path>-bundle`); `bigip` parts name existing files.
fn cert_key_chain(index: &BTreeMap<&str, &Item>, path: &str) -> Value {
    let name = path.rsplit('/').next().unwrap_or(path);
    let file = |pem: &Pem, own: String| match pem {
        Pem::Inline(_) => own,
        Pem::Bigip(b) => b.clone(),
    };
    match index.get(path) {
        Some(Item::Certificate { cert, key, chain }) => json!({
            "name": name,
            "cert": file(cert, path.to_string()),
            "key": file(key, path.to_string()),
            "chain": chain.as_ref().map_or("none".to_string(), |c| file(c, format!("{path}-bundle"))),
        }),
        // Unreachable for a validated declaration (the pointer resolved to a Certificate).
        _ => json!({"name": name, "cert": path, "key": path, "chain": "none"}),
    }
}

fn destination(tenant: &str, addr: &str, port: u16) -> String {
    if addr.contains(':') {
        format!("/{tenant}/{addr}.{port}")
    } else {
        format!("/{tenant}/{addr}:{port}")
    }
}

/// `10.0.0.1` → `10.0.0.1%2` in a tenant with `defaultRouteDomain: 2` (an explicit `%N` wins).
fn with_route_domain(addr: &str, rd: u16) -> String {
    if rd == 0 || addr.contains('%') {
        addr.to_string()
    } else {
        format!("{addr}%{rd}")
    }
}

/// What the tenant and application decide for their services.
#[derive(Clone, Copy)]
struct Switches {
    route_domain: u16,
    enabled: bool,
}

fn service(plan: &mut Plan, tenant: &str, full_path: &str, s: &Service, on: Switches) {
    let tcp = if s.tcp_client.path() == s.tcp_server.path() {
        vec![json!({"name": s.tcp_client.path(), "context": "all"})]
    } else {
        vec![
            json!({"name": s.tcp_client.path(), "context": "clientside"}),
            json!({"name": s.tcp_server.path(), "context": "serverside"}),
        ]
    };
    let logs: Vec<&str> = s.log_profiles.iter().map(|p| p.path()).collect();
    for (i, addr) in s.addresses.iter().enumerate() {
        let addr = &with_route_domain(addr, on.route_domain);
        let name = if i == 0 {
            full_path.to_string()
        } else {
            format!("{full_path}-{i}-")
        };
        let mut profiles = tcp.clone();
        profiles.push(json!({"name": s.http.path(), "context": "all"}));
        if let Some(tls) = &s.tls {
            profiles.push(json!({"name": tls.path(), "context": "clientside"}));
        }
        let mut body = json!({
            "name": name,
            "destination": destination(tenant, addr, s.port),
            "profiles": profiles,
            "securityLogProfiles": logs,
            "sourceAddressTranslation": {"type": if s.snat { "automap" } else { "none" }},
        });
        if let Some(p) = &s.pool {
            body["pool"] = json!(p.path());
        }
        if !on.enabled {
            body["disabled"] = json!(true);
        }
        plan.objects.push(Obj {
            coll: virtual_server::VIRTUAL.path,
            body,
        });
        if let Some(w) = &s.waf {
            plan.attachments.push((w.path().to_string(), name.clone()));
        }
        if let Some(port) = s.redirect {
            let mut profiles = tcp.clone();
            profiles.push(json!({"name": "/Common/http", "context": "all"}));
            plan.objects.push(Obj {
                coll: virtual_server::VIRTUAL.path,
                body: json!({
                    "name": format!("{name}-Redirect-"),
                    "destination": destination(tenant, addr, port),
                    "profiles": profiles,
                    "rules": [HTTPS_REDIRECT_RULE],
                    "disabled": !on.enabled,
                }),
            });
        }
    }
}
