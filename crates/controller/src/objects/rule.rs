//! `ltm rule`: the rule text is `apiAnonymous` (kept verbatim). A rule attached to a virtual
//! server cannot be deleted.

use portcullis_admin::MgmtState;
use portcullis_admin::ObjName;
use portcullis_admin::{KindSpec, PendingWrite, str_field};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_store::{Table, WriteTx};

pub static RULE: KindSpec = KindSpec {
    path: "/mgmt/tm/ltm/rule",
    label: "Rule",
    prepare: prepare_rule,
    before_delete: rule_in_use,
    ..KindSpec::BASE
};

/// The largest rule text accepted (bytes).
const MAX_RULE: usize = 1024 * 1024;

fn prepare_rule(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    let text = str_field(p.obj, "apiAnonymous")?.ok_or_else(|| {
        MgmtError::bad_request("01070712:3: A rule requires its text in apiAnonymous.")
    })?;
    if text.len() > MAX_RULE {
        return Err(MgmtError::bad_request(format!(
            "The rule text exceeds {MAX_RULE} bytes."
        )));
    }
    Ok(())
}

fn rule_in_use(_: &MgmtState, tx: &WriteTx<'_>, n: &ObjName) -> MgmtResult<()> {
    let full_path = n.full_path();
    let prefix = "/mgmt/tm/ltm/virtual/";
    for k in tx.keys(Table::Objects, prefix)? {
        if k[prefix.len()..].contains('/') {
            continue;
        }
        let Some(v) = tx.get(Table::Objects, &k)? else {
            continue;
        };
        let used = v["rules"]
            .as_array()
            .is_some_and(|r| r.iter().any(|x| x.as_str() == Some(&full_path)));
        if used {
            return Err(MgmtError::bad_request(format!(
                "01070621:3: Rule ({full_path}) cannot be deleted because it is in use by a virtual server ({}).",
                v["fullPath"].as_str().unwrap_or_default()
            )));
        }
    }
    Ok(())
}
