//! Accepting a request by its support id: the smallest set of policy changes after which the
//! policy (its edited version, in blocking mode) would have let the request through, shown first
//! and, on confirmation, appended to the policy and applied by an apply-policy task.
//!
//! "Smallest": the violations of the request are the candidates; the engine's own decision
//! (`CompiledPolicy::judge`: blocking settings and the violation rating) is asked which subsets
//! of them, once fixed, leave the request unblocked, and the smallest is taken (fewest
//! violations, then fewest changes that relax the whole policy, then fewest signatures
//! disabled). Up to [`EXHAUSTIVE_MAX`] candidates every subset is tried; beyond, violations are
//! added greedily, blocking ones first. A request that carried a high-accuracy attack signature is
//! accepted only when the caller insists (`force`).

use serde_json::{Value, json};

use super::fix::Fix;
use super::request::Request;
use super::{PolicyView, Version};
use crate::events::local;
use portcullis_admin::MgmtState;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_engine::Violation;

/// Violations tried in every combination (2^12 decisions at most).
pub const EXHAUSTIVE_MAX: usize = 12;

/// What accepting a request would change.
pub struct Plan {
    pub request: Request,
    pub policy: String,
    /// The violations to fix, each with its changes.
    pub fixes: Vec<(Violation, Vec<Fix>)>,
    /// Whether the request, fixed so, passes (false: a violation that cannot be fixed remains).
    pub passes: bool,
    /// Already passes in blocking mode: nothing to change.
    pub already_passes: bool,
    pub attack: bool,
    pub warnings: Vec<String>,
}

impl Plan {
    /// The `modifications[]` entries, without duplicates.
    pub fn modifications(&self) -> Vec<Value> {
        let mut out: Vec<Value> = Vec::new();
        for f in self.fixes.iter().flat_map(|(_, f)| f) {
            let m = f.modification();
            if !out.contains(&m) {
                out.push(m);
            }
        }
        out
    }

    /// The preview as REST shows it.
    pub fn preview(&self, st: &MgmtState) -> Value {
        let fixes: Vec<Value> = self
            .fixes
            .iter()
            .map(|(v, fs)| {
                json!({"violation": v.kind.name(), "entity": v.name, "detail": v.detail,
                       "signatureIds": v.signature_ids,
                       "changes": fs.iter().map(|f| json!({"action": f.kind, "description": f.description,
                           "broad": f.broad, "modification": f.modification()})).collect::<Vec<_>>()})
            })
            .collect();
        json!({
            "kind": "tm:asm:events:requests:accept-previewstate",
            "supportId": self.request.support_id,
            "policyReference": {"link": st.link(&format!("/mgmt/tm/asm/policies/{}", super::super::policy_id(&self.policy))),
                                "fullPath": self.policy},
            "alreadyPasses": self.already_passes,
            "wouldPass": self.passes,
            "attack": self.attack,
            "warnings": self.warnings,
            "fixes": fixes,
            "modifications": self.modifications(),
        })
    }
}

/// Cost of fixing a set of violations: (violations, broad changes, signatures disabled).
fn cost(set: &[&(Violation, Vec<Fix>)]) -> (usize, usize, usize) {
    let fixes = || set.iter().flat_map(|(_, f)| f);
    (
        set.len(),
        fixes().filter(|f| f.broad).count(),
        fixes().filter(|f| f.signature.is_some()).count(),
    )
}

/// The plan for the stored request `support_id`.
pub fn plan(st: &MgmtState, support_id: &str) -> MgmtResult<Plan> {
    let e = local::get(&st.store, support_id)?
        .ok_or_else(|| MgmtError::not_found("Request", support_id))?;
    let request = Request::from_stored(&e);
    let view = PolicyView::load(st, &request.policy, Version::Edited)?
        .ok_or_else(|| MgmtError::not_found("Policy", &request.policy))?;
    let policy = &view.compiled;
    let all = request.found();
    let candidates: Vec<(Violation, Vec<Fix>)> = view
        .fixes(&request)
        .into_iter()
        .filter(|(_, f)| !f.is_empty())
        .collect();
    let blocks_without = |fixed: &[&(Violation, Vec<Fix>)]| {
        let left: Vec<Violation> = all
            .iter()
            .filter(|v| !fixed.iter().any(|(f, _)| f == *v))
            .cloned()
            .collect();
        policy.judge(&left).block
    };
    let attack = view.is_attack(&request);
    let mut warnings = Vec::new();
    if attack {
        warnings.push(
            "The request carried a high-accuracy attack signature: it is most likely an attack."
                .to_string(),
        );
    }
    let already = !blocks_without(&[]);
    let chosen: Vec<&(Violation, Vec<Fix>)> = if already {
        Vec::new()
    } else if candidates.len() <= EXHAUSTIVE_MAX {
        let n = candidates.len();
        (1u32..(1 << n))
            .map(|mask| {
                (0..n)
                    .filter(|i| mask & (1 << i) != 0)
                    .map(|i| &candidates[i])
                    .collect::<Vec<_>>()
            })
            .filter(|set| !blocks_without(set))
            .min_by_key(|set| cost(set))
            .unwrap_or_else(|| candidates.iter().collect())
    } else {
        let mut order: Vec<&(Violation, Vec<Fix>)> = candidates.iter().collect();
        order.sort_by_key(|(v, _)| !policy.blocking(std::slice::from_ref(v)).any(|_| true));
        let mut set = Vec::new();
        for c in order {
            if !blocks_without(&set) {
                break;
            }
            set.push(c);
        }
        set
    };
    let passes = already || !blocks_without(&chosen);
    if !passes {
        warnings.push(
            "Some violations of this request cannot be relaxed by a policy change; it would still be blocked."
                .to_string(),
        );
    }
    let fixes: Vec<(Violation, Vec<Fix>)> = chosen.into_iter().cloned().collect();
    if fixes.iter().flat_map(|(_, f)| f).any(|f| f.broad) {
        warnings
            .push("Some changes relax a check of the whole policy, not of one entity.".to_string());
    }
    Ok(Plan {
        policy: view.full_path.clone(),
        request,
        fixes,
        passes,
        already_passes: already,
        attack,
        warnings,
    })
}

/// Accepts the request: appends the plan's changes to its policy and starts the apply task.
/// Returns the plan and the task. `force` is needed for a request that looks like an attack.
pub fn accept(st: &MgmtState, support_id: &str, force: bool) -> MgmtResult<(Plan, Option<Value>)> {
    let plan = plan(st, support_id)?;
    if plan.attack && !force {
        return Err(MgmtError::new(
            http::StatusCode::CONFLICT,
            format!(
                "Request {support_id} carried a high-accuracy attack signature; send {{\"force\": true}} to accept it anyway."
            ),
        ));
    }
    let mods = plan.modifications();
    if mods.is_empty() {
        return Ok((plan, None));
    }
    super::append_modifications(st, &plan.policy, &mods)?;
    let obj = super::super::policies::by_path(st, &plan.policy)?;
    let task = super::super::apply::start_apply(st, &Value::Object(obj))?;
    Ok((plan, Some(Value::Object(task))))
}
