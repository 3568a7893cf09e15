//! WAF policies of a declaration (temporary: wired to `mgmt::asm` once it lands).

use serde_json::Value;

use super::plan::Plan;
use crate::mgmt::error::MgmtResult;
use crate::mgmt::state::MgmtState;
use crate::store::WriteTx;

pub struct Prepared;

pub fn prepare(
    _st: &MgmtState,
    plan: &Plan,
    _stored: Option<&Value>,
) -> Result<Vec<Prepared>, String> {
    if plan.policies.is_empty() && plan.attachments.is_empty() {
        Ok(Vec::new())
    } else {
        Err("WAF policies are not available".into())
    }
}

pub fn unchanged(_p: &[Prepared], _stored: Option<&Value>) -> bool {
    true
}

pub fn remove(_st: &MgmtState, _tx: &mut WriteTx<'_>, _stored: Option<&Value>) -> MgmtResult<()> {
    Ok(())
}

pub fn install(
    _st: &MgmtState,
    _tx: &mut WriteTx<'_>,
    _p: &[Prepared],
    _a: &[(String, String)],
    _user: &str,
) -> MgmtResult<Vec<String>> {
    Ok(Vec::new())
}
