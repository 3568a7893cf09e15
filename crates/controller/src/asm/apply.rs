//! Apply: the edited version of a policy becomes the applied one and runs in the engine of every
//! virtual server it is attached to. The policy is compiled first, off the data path; then, under
//! the apply lock (the one the topology rebuild takes), the compiled policy is published into each
//! engine with one atomic swap (requests in flight finish on the old snapshot, new ones see the
//! new policy, none is dropped) and the applied record is committed; if the commit fails, the
//! previous policies are swapped back. A policy that fails to compile fails the apply and leaves
//! the running version in place.
//! `/mgmt/tm/asm/tasks/apply-policy` wraps [`apply_policy`] as a task.

use std::sync::Arc;

use http::Method;
use serde_json::{Map, Value, json};

use super::compile::compiled;
use super::policies::{
    POLICIES, applied_key, by_path, compile_error, edited_key, full_path_field, object, object_key,
    policy_id, stored, virtuals_of,
};
use super::tasks::{self, TaskType};
use crate::PlaneState;
use portcullis_admin::Reply;
use portcullis_admin::children;
use portcullis_admin::parse_object;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_engine::CompiledPolicy;
use portcullis_store::Table;
use portcullis_support::now_micros;

pub static APPLY: TaskType = TaskType {
    path: "/mgmt/tm/asm/tasks/apply-policy",
    kind: "tm:asm:tasks:apply-policy:apply-policy-task",
};

/// The human title of a template name (`POLICY_TEMPLATE_API_SECURITY` → `API Security`).
pub fn template_title(name: &str) -> String {
    match name {
        "POLICY_TEMPLATE_API_SECURITY" => "API Security".into(),
        "POLICY_TEMPLATE_RAPID_DEPLOYMENT" => "Rapid Deployment Policy".into(),
        "POLICY_TEMPLATE_NGINX_BASE" => "NGINX Base".into(),
        other => other
            .trim_start_matches("POLICY_TEMPLATE_")
            .split('_')
            .map(|w| {
                let lower = w.to_ascii_lowercase();
                let mut c = lower.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// Compiles the edited version of `full_path` and makes it the running one on every attached
/// virtual server. Fails (and changes nothing) when the policy is unknown or does not compile.
pub fn apply_policy(st: &MgmtState, full_path: &str) -> MgmtResult<()> {
    let obj = by_path(st, full_path)?;
    let canonical = full_path_field(&obj);
    let id = policy_id(&canonical);
    let edited =
        stored(st, &edited_key(&id))?.ok_or_else(|| MgmtError::not_found("Policy", &canonical))?;
    let policy = compiled(&edited).map_err(|e| compile_error(&canonical, &e))?;
    let record = serde_json::to_value(&edited).map_err(|e| MgmtError::internal(e.to_string()))?;
    let plane = PlaneState::of(st);
    let _guard = plane.apply_lock.lock();
    // Publish first, then make it durable: enforcement does not wait for the commit, and a
    // failed commit puts the previous policies back (nothing is half-applied).
    let previous: Vec<_> = {
        let engines = plane.engines.lock();
        virtuals_of(&object(st, &id)?)
            .iter()
            .filter_map(|v| engines.get(v))
            .map(|e| {
                let old = e.snapshot();
                e.apply_shared(policy.clone());
                (e.clone(), old)
            })
            .collect()
    };
    let committed = st.store.write(|tx| {
        let mut obj = match tx.get(Table::Objects, &object_key(&id))? {
            Some(Value::Object(m)) => m,
            _ => return Err(MgmtError::not_found("Policy", &canonical)),
        };
        let current = tx.get(Table::Objects, &edited_key(&id))?;
        obj.insert("active".into(), json!(true));
        obj.insert(
            "isModified".into(),
            json!(current.as_ref() != Some(&record)),
        );
        obj.insert("lastUpdateMicros".into(), json!(now_micros() as f64));
        tx.put(Table::Objects, &applied_key(&id), &record)?;
        tx.put(Table::Objects, &object_key(&id), &Value::Object(obj))?;
        Ok::<_, MgmtError>(())
    });
    if committed.is_err() {
        for (engine, old) in previous {
            engine.apply_shared(old);
        }
    }
    committed
}

/// The applied version of policy `full_path`, compiled (None: never applied, or gone).
fn applied_of(st: &MgmtState, full_path: &str) -> MgmtResult<Option<Arc<CompiledPolicy>>> {
    let Some(s) = stored(st, &applied_key(&policy_id(full_path)))? else {
        return Ok(None);
    };
    compiled(&s)
        .map(Some)
        .map_err(|e| compile_error(full_path, &e))
}

/// Publishes the running policy after an attach or delete: `attached` virtuals run the applied
/// version of `full_path` (allow-all when it has none), `detached` ones allow all.
pub(super) fn publish_running(
    st: &MgmtState,
    full_path: &str,
    attached: &[String],
    detached: &[String],
) -> MgmtResult<()> {
    let applied = if attached.is_empty() {
        None
    } else {
        applied_of(st, full_path)?
    };
    let plane = PlaneState::of(st);
    let _guard = plane.apply_lock.lock();
    let engines = plane.engines.lock();
    for v in attached {
        if let Some(e) = engines.get(v) {
            match &applied {
                Some(p) => e.apply_shared(p.clone()),
                None => e.apply(CompiledPolicy::allow_all(v)),
            }
        }
    }
    for v in detached {
        if let Some(e) = engines.get(v) {
            e.apply(CompiledPolicy::allow_all(v));
        }
    }
    Ok(())
}

/// The policy object attached to a virtual server, if any (e.g. to name the policy of an event).
pub fn attached_policy(st: &MgmtState, virtual_full_path: &str) -> Option<Map<String, Value>> {
    children(st, POLICIES)
        .ok()?
        .into_iter()
        .find(|p| virtuals_of(p).iter().any(|v| v == virtual_full_path))
}

/// The policy a virtual server's engine starts with (at start-up and when its listener is first
/// built): the applied version of the policy attached to it, else allow-all.
pub fn running_policy(st: &MgmtState, virtual_full_path: &str) -> Arc<CompiledPolicy> {
    if let Some(p) = attached_policy(st, virtual_full_path) {
        let full_path = full_path_field(&p);
        match applied_of(st, &full_path) {
            Ok(Some(policy)) => return policy,
            Ok(None) => {}
            Err(e) => tracing::error!(virtual_server = virtual_full_path, error = %e.message,
                "the applied policy does not compile; the virtual server allows all traffic"),
        }
    }
    Arc::new(CompiledPolicy::allow_all(virtual_full_path))
}

/// Why a task body names no policy; the admin API answers it as a bad request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("'policy.fullPath' must be a string.")]
    PathNotAString,
    #[error("'policyReference.link' must be a string.")]
    LinkNotAString,
    #[error(
        "'policyReference.link' ({link}) does not name a policy (.../mgmt/tm/asm/policies/<id>)."
    )]
    LinkNamesNoPolicy { link: String },
    #[error(
        "The request names no policy: give 'policy': {{'fullPath': ...}} or 'policyReference': {{'link': ...}}."
    )]
    Missing,
}

impl From<TargetError> for MgmtError {
    fn from(e: TargetError) -> Self {
        MgmtError::bad_request(e.to_string())
    }
}

/// The policy a task body names: `policy.fullPath`, `fullPath`, or `policyReference.link`
/// (whose last path segment is the policy id).
pub fn target_of(body: &Map<String, Value>) -> Result<Target, TargetError> {
    let path = body
        .get("policy")
        .and_then(|p| p.get("fullPath"))
        .or_else(|| body.get("fullPath"));
    if let Some(p) = path {
        return p
            .as_str()
            .map(|s| Target::Path(s.to_string()))
            .ok_or(TargetError::PathNotAString);
    }
    if let Some(l) = body.get("policyReference").and_then(|r| r.get("link")) {
        let link = l.as_str().ok_or(TargetError::LinkNotAString)?;
        let path = link.split(['?', '#']).next().unwrap_or_default();
        let id = path
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or_default();
        if id.is_empty() || !path.contains("/asm/policies/") {
            return Err(TargetError::LinkNamesNoPolicy {
                link: link.to_string(),
            });
        }
        return Ok(Target::Id(id.to_string()));
    }
    Err(TargetError::Missing)
}

/// A policy named by a task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Path(String),
    Id(String),
}

impl Target {
    /// The policy object it names.
    pub fn object(&self, st: &MgmtState) -> MgmtResult<Value> {
        match self {
            Target::Path(p) => by_path(st, p),
            Target::Id(id) => object(st, id),
        }
        .map(Value::Object)
    }
}

/// `/mgmt/tm/asm/tasks/apply-policy`: POST starts an apply task; GET lists or shows tasks.
pub fn handle(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    if ctx.method != Method::POST || ctx.path != APPLY.path {
        return tasks::get(ctx, &APPLY);
    }
    let req = parse_object(body)?;
    let target = target_of(&req)?;
    let obj = target.object(ctx.st)?;
    start_apply(ctx.st, &obj).map(|t| Reply::json(Value::Object(t)))
}

/// Starts an apply task for the policy object `obj` (what `POST .../apply-policy` does); returns
/// the task as created (status NEW).
pub fn start_apply(st: &MgmtState, obj: &Value) -> MgmtResult<Map<String, Value>> {
    let full_path = obj["fullPath"].as_str().unwrap_or_default().to_string();
    let mut fields = Map::new();
    let reference = json!({"link": obj["selfLink"], "fullPath": full_path});
    fields.insert("policyReference".into(), reference.clone());
    let task = tasks::create(st, &APPLY, fields)?;
    tasks::spawn(st, &APPLY, &task, move |st| {
        apply_policy(st, &full_path).map_err(|e| e.message)?;
        let mut out = Map::new();
        out.insert(
            "result".into(),
            json!({"policyReference": reference, "message": format!("The security policy {full_path} was applied.")}),
        );
        Ok(out)
    })?;
    Ok(task)
}
