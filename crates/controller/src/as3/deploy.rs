//! Deploying a validated declaration: per tenant, compare with what is deployed ("no change"),
//! else replace the tenant's objects in **one** store write (old objects removed, new ones
//! created through the object engine, the tenant record stored) followed by one re-apply of the
//! data plane; a failure leaves the tenant as it was. Also removal of tenants, and the restore of
//! non-persisted tenants at start.

use std::time::Instant;

use parking_lot::Mutex;
use serde_json::{Map, Value, json};

use super::model::{Adc, Request, Tenant};
use super::plan::{Plan, plan_tenant};
use super::waf;
use crate::objects::sys_file::write_durably;
use portcullis_admin::MgmtState;
use portcullis_admin::segments;
use portcullis_admin::{Coll, Target, resolve};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_admin::{create_in, delete_in};
use portcullis_store::{Table, WriteTx};
use portcullis_support::{iso8601_utc, unix_seconds};

/// The declare endpoint; also the store key of the declaration header (tenants below it).
pub const DECLARE: &str = "/mgmt/shared/appsvcs/declare";

/// One deploy at a time (AS3 answers 503 to a second one; we queue it).
static DEPLOY: Mutex<()> = Mutex::new(());

/// Marker error that rolls a dry run back.
const DRY_RUN: &str = "\u{0}dry-run";

pub fn tenant_key(t: &str) -> String {
    format!("{DECLARE}/{t}")
}

/// What became of one tenant (an element of the answer's `results`).
#[derive(Debug, Clone)]
pub struct Outcome {
    pub code: u16,
    pub message: &'static str,
    pub tenant: String,
    pub line_count: usize,
    pub run_time: u128,
    pub errors: Vec<String>,
}

impl Outcome {
    pub fn to_json(&self) -> Value {
        let mut v = json!({"code": self.code, "message": self.message, "lineCount": self.line_count,
                           "host": "localhost", "tenant": self.tenant, "runTime": self.run_time as u64});
        if !self.errors.is_empty() {
            v["response"] = json!(self.errors.join("; "));
            v["errors"] = json!(self.errors);
        }
        v
    }
    fn new(tenant: &str, started: Instant, message: &'static str) -> Self {
        Outcome {
            code: 200,
            message,
            tenant: tenant.to_string(),
            line_count: 0,
            run_time: started.elapsed().as_millis(),
            errors: Vec::new(),
        }
    }
    fn failed(tenant: &str, started: Instant, e: String) -> Self {
        Outcome {
            code: 422,
            message: "declaration failed",
            errors: vec![e],
            ..Outcome::new(tenant, started, "declaration failed")
        }
    }
}

/// The stored tenants (name → record), in name order.
pub fn stored_tenants(st: &MgmtState) -> MgmtResult<Vec<(String, Value)>> {
    let prefix = format!("{DECLARE}/");
    Ok(st
        .store
        .list(Table::Objects, &prefix)?
        .into_iter()
        .map(|(k, v)| (k[prefix.len()..].to_string(), v))
        .collect())
}

/// Deploys (or dry-runs) the tenants of `req` (those named in `only`, when given).
pub fn deploy(
    st: &MgmtState,
    req: &Request,
    only: Option<&[String]>,
    user: &str,
    dry: bool,
) -> Vec<Outcome> {
    let _one = DEPLOY.lock();
    let wanted = |t: &str| only.is_none_or(|o| o.iter().any(|x| x == t));
    // Common first: other tenants may point to its Shared application.
    let mut tenants: Vec<&Tenant> = req.adc.tenants.iter().collect();
    tenants.sort_by_key(|t| t.name != "Common");
    let mut out: Vec<Outcome> = tenants
        .into_iter()
        .filter(|t| wanted(&t.name))
        .map(|t| deploy_tenant(st, &req.adc, t, req.persist, user, dry))
        .collect();
    if req.adc.complete {
        let declared: Vec<&str> = req.adc.tenants.iter().map(|t| t.name.as_str()).collect();
        for (name, _) in stored_tenants(st).unwrap_or_default() {
            if !declared.contains(&name.as_str()) && wanted(&name) {
                out.push(remove_tenant_locked(st, &name, dry));
            }
        }
    }
    if !dry && out.iter().any(|o| o.code == 200) {
        let header = header_of(&req.adc, false);
        if let Err(e) = st
            .store
            .write(|tx| tx.put(Table::Objects, DECLARE, &header))
        {
            tracing::error!(error = %e, "cannot store the AS3 declaration header");
        }
    }
    out
}

/// The declaration as posted, for the answer: with `updateMode` and `controls.archiveTimestamp`.
pub fn posted(adc: &Adc) -> Value {
    header_of(adc, true)
}

/// The declaration (without its tenants unless `with_tenants`), with `updateMode` and
/// `controls.archiveTimestamp`.
fn header_of(adc: &Adc, with_tenants: bool) -> Value {
    let tenants: Vec<&str> = adc.tenants.iter().map(|t| t.name.as_str()).collect();
    let mut h: Map<String, Value> = adc
        .raw
        .iter()
        .filter(|(k, _)| with_tenants || !tenants.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    h.entry("updateMode").or_insert(json!("selective"));
    let controls = h.entry("controls").or_insert(json!({}));
    if let Some(c) = controls.as_object_mut() {
        c.insert(
            "archiveTimestamp".into(),
            json!(iso8601_utc(unix_seconds())),
        );
    }
    Value::Object(h)
}

/// The answer's `declaration`: the stored header plus every stored tenant (or those in `only`).
pub fn current(st: &MgmtState, only: Option<&[String]>) -> MgmtResult<Value> {
    let mut d = match st.store.get(Table::Objects, DECLARE)? {
        Some(Value::Object(h)) => h,
        _ => Map::from_iter([
            ("class".to_string(), json!("ADC")),
            (
                "schemaVersion".to_string(),
                json!(super::model::SCHEMA_CURRENT),
            ),
            ("updateMode".to_string(), json!("selective")),
        ]),
    };
    for (name, rec) in stored_tenants(st)? {
        if only.is_none_or(|o| o.contains(&name)) {
            d.insert(name, rec["declaration"].clone());
        }
    }
    Ok(Value::Object(d))
}

/// The collection at a REST path (`/mgmt/tm/ltm/pool`).
pub fn coll_of(st: &MgmtState, path: &str) -> MgmtResult<Coll> {
    match resolve(st, &segments(path)?)? {
        Some(Target::Collection(c)) => Ok(c),
        _ => Err(MgmtError::internal(format!("{path} is not a collection"))),
    }
}

/// Deletes the objects a tenant created (newest first, so virtuals go before their pools).
fn remove_objects(st: &MgmtState, tx: &mut WriteTx<'_>, rec: Option<&Value>) -> MgmtResult<()> {
    let keys: Vec<&str> = rec
        .and_then(|r| r["objects"].as_array())
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for key in keys.iter().rev() {
        if tx.get(Table::Objects, key)?.is_none() {
            continue;
        }
        if let Some(Target::Object(c, n)) = resolve(st, &segments(key)?)? {
            delete_in(st, tx, &c, &n)?;
        }
    }
    Ok(())
}

fn deploy_tenant(
    st: &MgmtState,
    adc: &Adc,
    t: &Tenant,
    persist: bool,
    user: &str,
    dry: bool,
) -> Outcome {
    let started = Instant::now();
    if t.apps.is_empty() {
        return remove_tenant_locked(st, &t.name, dry);
    }
    let stored = match st.store.get(Table::Objects, &tenant_key(&t.name)) {
        Ok(s) => s,
        Err(e) => return Outcome::failed(&t.name, started, e.to_string()),
    };
    let plan = plan_tenant(adc, t);
    let policies = match waf::prepare(st, &plan, stored.as_ref()) {
        Ok(p) => p,
        Err(e) => return Outcome::failed(&t.name, started, e.to_string()),
    };
    let same = stored.as_ref().is_some_and(|r| {
        r["declaration"] == t.raw && r["persist"].as_bool().unwrap_or(true) == persist
    });
    if same && waf::unchanged(&policies, stored.as_ref()) {
        return Outcome::new(&t.name, started, "no change");
    }
    if !dry && let Err(e) = waf::put(st, &policies, stored.as_ref()) {
        return Outcome::failed(&t.name, started, e.to_string());
    }
    match write_tenant(st, t, &plan, &policies, stored.as_ref(), persist, user, dry) {
        Ok(()) => {
            if !dry {
                // Policies are attached before the listeners start, so no request passes unchecked.
                let attached = waf::activate(st, &plan, &policies, stored.as_ref());
                st.reapply();
                if let Err(e) = attached {
                    return Outcome::failed(&t.name, started, e.to_string());
                }
            }
            Outcome {
                line_count: plan.objects.len(),
                ..Outcome::new(&t.name, started, "success")
            }
        }
        Err(e) => Outcome::failed(&t.name, started, e.message),
    }
}

/// The one store write of a tenant deploy (rolled back for a dry run).
#[allow(clippy::too_many_arguments)]
fn write_tenant(
    st: &MgmtState,
    t: &Tenant,
    plan: &Plan,
    policies: &[waf::Prepared],
    stored: Option<&Value>,
    persist: bool,
    user: &str,
    dry: bool,
) -> MgmtResult<()> {
    let dl = st.downloads_dir();
    for (name, pem) in &plan.files {
        write_durably(&dl.join(name), pem.as_bytes())?;
    }
    let outcome = st.store.write(|tx| {
        remove_objects(st, tx, stored)?;
        let mut keys = Vec::new();
        for obj in &plan.objects {
            let c = coll_of(st, obj.coll)?;
            let attrs = obj.body.as_object().cloned().unwrap_or_default();
            let name = attrs
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            create_in(st, tx, user, &c, attrs).map_err(|e| MgmtError {
                message: format!("{name}: {}", e.message),
                ..e
            })?;
            keys.push(obj.key());
        }
        let (policies, attached) = waf::record(plan, policies);
        // A non-persisted tenant remembers the last persisted declaration for the next start.
        let saved = match stored {
            Some(r) if r["persist"] == json!(false) => r["saved"].clone(),
            Some(r) => r["declaration"].clone(),
            None => Value::Null,
        };
        let rec = json!({"declaration": t.raw, "objects": keys, "policies": policies, "attached": attached,
                         "persist": persist, "saved": if persist { Value::Null } else { saved }});
        tx.put(Table::Objects, &tenant_key(&t.name), &rec)?;
        if dry {
            return Err(MgmtError::new(http::StatusCode::OK, DRY_RUN));
        }
        Ok(())
    });
    for (name, _) in &plan.files {
        let _ = std::fs::remove_file(dl.join(name));
    }
    match outcome {
        Err(e) if e.message == DRY_RUN => Ok(()),
        other => other,
    }
}

/// Removes one tenant: its objects, policies and record, in one write, then one re-apply.
pub fn remove_tenant(st: &MgmtState, name: &str) -> Outcome {
    let _one = DEPLOY.lock();
    remove_tenant_locked(st, name, false)
}

fn remove_tenant_locked(st: &MgmtState, name: &str, dry: bool) -> Outcome {
    let started = Instant::now();
    let key = tenant_key(name);
    let res = st.store.write(|tx| {
        let Some(rec) = tx.get(Table::Objects, &key)? else {
            return Ok(None);
        };
        remove_objects(st, tx, Some(&rec))?;
        tx.delete(Table::Objects, &key)?;
        if dry {
            return Err(MgmtError::new(http::StatusCode::OK, DRY_RUN));
        }
        Ok::<_, MgmtError>(Some(rec))
    });
    match res {
        Ok(None) => Outcome::new(name, started, "no change"),
        Ok(Some(rec)) => {
            waf::release(st, &rec);
            st.reapply();
            Outcome::new(name, started, "success")
        }
        Err(e) if e.message == DRY_RUN => Outcome::new(name, started, "success"),
        Err(e) => Outcome::failed(name, started, e.message),
    }
}

/// At start: tenants deployed with `persist: false` go back to their last persisted
/// declaration (or away, when there was none), as after a reboot without a saved config.
pub fn restore_unpersisted(st: &MgmtState) {
    let Ok(tenants) = stored_tenants(st) else {
        return;
    };
    for (name, rec) in tenants {
        if rec["persist"] != json!(false) {
            continue;
        }
        let saved = rec["saved"].clone();
        let outcome = if saved.is_object() {
            let body = json!({"class": "ADC", "schemaVersion": super::model::SCHEMA_CURRENT, name.clone(): saved});
            match super::model::parse_value(&body) {
                Ok(req) => deploy(st, &req, None, "admin", false).pop(),
                Err(e) => Some(Outcome::failed(&name, Instant::now(), e.join("; "))),
            }
        } else {
            Some(remove_tenant(st, &name))
        };
        if let Some(o) = outcome.filter(|o| o.code != 200) {
            tracing::error!(tenant = %name, errors = ?o.errors, "cannot restore the persisted AS3 tenant");
        }
    }
}
