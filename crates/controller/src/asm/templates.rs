//! Policy templates at `/mgmt/tm/asm/policy-templates[/<id>]` (read-only): the templates shipped
//! under `policies/templates/`, id = URL-safe base64 MD5 of the template name (the link a policy's
//! `templateReference` and an import's `policyTemplateReference` carry).

use http::Method;
use serde_json::{Value, json};

use super::apply::template_title;
use super::policies::policy_id;
use portcullis_admin::Reply;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_engine::policy::SHIPPED_TEMPLATES as SHIPPED;

pub const TEMPLATES: &str = "/mgmt/tm/asm/policy-templates";

/// The template name behind an id or a link ending in one.
pub fn name_of(link_or_id: &str) -> Option<&'static str> {
    let id = link_or_id
        .split(['?', '#'])
        .next()?
        .trim_end_matches('/')
        .rsplit('/')
        .next()?;
    SHIPPED
        .iter()
        .map(|t| t.name())
        .find(|n| policy_id(n) == id)
}

/// The object of one template.
pub fn object(st: &MgmtState, name: &str) -> Value {
    let id = policy_id(name);
    json!({
        "kind": "tm:asm:policy-templates:policy-templatestate",
        "selfLink": st.link(&format!("{TEMPLATES}/{id}")),
        "id": id,
        "name": name,
        "title": template_title(name),
        "templateType": "security",
    })
}

/// GET of the collection or of one template.
pub fn handle(ctx: &Ctx<'_>, _: &[u8]) -> MgmtResult<Reply> {
    if ctx.method != Method::GET {
        return Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        ));
    }
    let rest = ctx.path[TEMPLATES.len()..].trim_start_matches('/');
    if rest.is_empty() {
        let items: Vec<Value> = SHIPPED.iter().map(|t| object(ctx.st, t.name())).collect();
        let items = ctx.query.apply(items);
        return Ok(Reply::json(json!({
            "kind": "tm:asm:policy-templates:policy-templatecollectionstate",
            "selfLink": ctx.st.link(TEMPLATES),
            "totalItems": items.len(),
            "items": items,
        })));
    }
    match name_of(rest).filter(|_| !rest.contains('/')) {
        Some(n) => Ok(Reply::json(ctx.query.project(object(ctx.st, n)))),
        None => Err(MgmtError::not_found("Policy Template", rest)),
    }
}
