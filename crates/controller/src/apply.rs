//! Configuration → data plane: builds one `ListenerSpec` per enabled virtual server (destination,
//! pool members round-robin with their health, client-ssl → TLS, http `xForwardedFor`,
//! server-ssl → https upstreams) and hands the whole set to the `Topology`. Runs after every
//! committed change of a data-plane kind; a listener that cannot run is reported in the
//! virtual's `status`.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::objects::profile::PROFILE_TYPES;
use super::objects::sys_file::stored_path;
use crate::PlaneState;
use portcullis_admin::MgmtState;
use portcullis_admin::children;
use portcullis_engine::Engine;
use portcullis_proxy::{ListenerSpec, ListenerStatus, TlsSpec, Topology, UpstreamSpec};
use portcullis_store::Table;

/// A topology for a build without a data plane: reports every listener as not served.
pub struct DetachedTopology;

impl Topology for DetachedTopology {
    fn apply(&self, listeners: Vec<ListenerSpec>) -> Vec<ListenerStatus> {
        listeners
            .into_iter()
            .map(|l| ListenerStatus {
                name: l.name,
                error: Some("no data plane is attached to this management plane".into()),
            })
            .collect()
    }
}

/// `/Common/10.0.0.1%2:80` or `/Common/2001:db8::1.443` → a socket address (route domain dropped).
pub fn destination_addr(dest: &str) -> Option<SocketAddr> {
    let rest = dest
        .strip_prefix('/')
        .and_then(|r| r.split_once('/'))
        .map_or(dest, |(_, r)| r);
    let v6 = rest.matches(':').count() > 1;
    let (addr, port) = if v6 {
        rest.rsplit_once('.')
    } else {
        rest.rsplit_once(':')
    }?;
    let ip: IpAddr = addr.split('%').next()?.parse().ok()?;
    Some(SocketAddr::new(ip, port.parse().ok()?))
}

/// Rebuilds the listener set from the store and applies it; records per-virtual errors.
pub fn reapply(st: &MgmtState) {
    let plane = PlaneState::of(st);
    let _guard = plane.apply_lock.lock();
    let (specs, mut errors) = match listener_specs(st) {
        Ok(x) => x,
        Err(e) => {
            tracing::error!(error = %e.message, "cannot build the listener set");
            return;
        }
    };
    for s in plane.topology.apply(specs) {
        if let Some(e) = s.error {
            // The data plane reports, the caller logs: once, naming the virtual server.
            tracing::error!(virtual_server = %s.name, "listener not started: {e}");
            errors.insert(s.name, e);
        }
    }
    *plane.listener_errors.write() = errors;
}

fn object(st: &MgmtState, coll: &str, full_path: &str) -> Option<Map<String, Value>> {
    match st
        .store
        .get(
            Table::Objects,
            &format!("{coll}/{}", full_path.replace('/', "~")),
        )
        .ok()??
    {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

fn file_text(st: &MgmtState, kind: &str, full_path: &str) -> Option<String> {
    let key = format!("/mgmt/tm/sys/file/{kind}/{}", full_path.replace('/', "~"));
    std::fs::read_to_string(stored_path(st, &key)).ok()
}

/// The listener specs of every enabled virtual server, plus errors of those that cannot run.
#[allow(clippy::type_complexity)]
pub fn listener_specs(
    st: &MgmtState,
) -> Result<(Vec<ListenerSpec>, HashMap<String, String>), portcullis_admin::MgmtError> {
    let mut specs = Vec::new();
    let mut errors = HashMap::new();
    for vs in children(st, "/mgmt/tm/ltm/virtual")? {
        let full_path = vs
            .get("fullPath")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if vs.get("disabled").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        match listener_of(st, &full_path, &vs) {
            Ok(spec) => specs.push(spec),
            Err(e) => {
                errors.insert(full_path, e);
            }
        }
    }
    Ok((specs, errors))
}

fn listener_of(
    st: &MgmtState,
    full_path: &str,
    vs: &Map<String, Value>,
) -> Result<ListenerSpec, String> {
    let dest = vs
        .get("destination")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let bind = destination_addr(dest)
        .ok_or_else(|| format!("destination {dest} is not an address:port"))?;
    let plane = PlaneState::of(st);
    let key = format!("/mgmt/tm/ltm/virtual/{}", full_path.replace('/', "~"));
    let (mut tls, mut xff, mut upstream_tls, mut access) = (None, false, false, None);
    for p in children(st, &format!("{key}/profiles")).map_err(|e| e.message)? {
        let pfp = p
            .get("fullPath")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let ctx = p.get("context").and_then(Value::as_str).unwrap_or("all");
        let Some((ty, prof)) = PROFILE_TYPES
            .iter()
            .find_map(|(t, c)| object(st, c, pfp).map(|o| (*t, o)))
        else {
            continue;
        };
        match ty {
            "http" => xff = prof.get("xForwardedFor").and_then(Value::as_str) == Some("enabled"),
            "client-ssl" if ctx != "serverside" => {
                let cert = prof.get("cert").and_then(Value::as_str).unwrap_or("none");
                let keyp = prof.get("key").and_then(Value::as_str).unwrap_or("none");
                let mut cert_pem = file_text(st, "ssl-cert", cert).ok_or_else(|| {
                    format!("client-ssl profile {pfp}: certificate {cert} is not available")
                })?;
                let key_pem = file_text(st, "ssl-key", keyp).ok_or_else(|| {
                    format!("client-ssl profile {pfp}: key {keyp} is not available")
                })?;
                if let Some(chain) = prof
                    .get("chain")
                    .and_then(Value::as_str)
                    .filter(|c| *c != "none")
                {
                    cert_pem.push_str(&file_text(st, "ssl-cert", chain).unwrap_or_default());
                }
                tls = Some(TlsSpec { cert_pem, key_pem });
            }
            "server-ssl" if ctx != "clientside" => upstream_tls = true,
            "api-access" => {
                access = Some(Arc::new(
                    super::objects::api_access::compile(&prof, pfp).map_err(|e| e.to_string())?,
                ));
            }
            _ => {}
        }
    }
    let mut upstreams = Vec::new();
    if let Some(pool) = vs.get("pool").and_then(Value::as_str) {
        let pkey = format!("/mgmt/tm/ltm/pool/{}", pool.replace('/', "~"));
        let down = plane.member_down.read();
        for m in children(st, &format!("{pkey}/members")).map_err(|e| e.message)? {
            let name = m.get("name").and_then(Value::as_str).unwrap_or_default();
            let Ok((_, port)) = super::objects::pool::split_member(name) else {
                continue;
            };
            let addr = m.get("address").and_then(Value::as_str).unwrap_or_default();
            let Ok(ip) = addr.split('%').next().unwrap_or_default().parse::<IpAddr>() else {
                continue;
            };
            let scheme = if upstream_tls { "https" } else { "http" };
            let mkey = format!(
                "{pkey}/members/{}",
                m.get("fullPath")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .replace('/', "~")
            );
            let enabled = m.get("session").and_then(Value::as_str) != Some("user-disabled")
                && m.get("state").and_then(Value::as_str) != Some("user-down");
            upstreams.push(UpstreamSpec {
                url: format!("{scheme}://{}", SocketAddr::new(ip, port)),
                healthy: enabled && !down.contains_key(&mkey),
            });
        }
    }
    let engine = plane
        .engines
        .lock()
        .entry(full_path.to_string())
        .or_insert_with(|| {
            Arc::new(Engine::from_shared(super::asm::running_policy(
                st, full_path,
            )))
        })
        .clone();
    Ok(ListenerSpec {
        name: full_path.to_string(),
        bind,
        tls,
        upstreams,
        engine,
        x_forwarded_for: xff,
        access,
        redirect_to_https: vs.get("rules").and_then(Value::as_array).is_some_and(|r| {
            r.iter()
                .any(|x| x.as_str() == Some(super::as3::plan::HTTPS_REDIRECT_RULE))
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_to_socket_addresses() {
        assert_eq!(
            destination_addr("/Common/127.0.0.1:8080"),
            Some("127.0.0.1:8080".parse().unwrap())
        );
        assert_eq!(
            destination_addr("/Common/10.0.0.1%3:80"),
            Some("10.0.0.1:80".parse().unwrap())
        );
        assert_eq!(
            destination_addr("/Common/::1.443"),
            Some("[::1]:443".parse().unwrap())
        );
        assert_eq!(destination_addr("/Common/nope"), None);
    }
}
