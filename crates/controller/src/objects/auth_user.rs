//! Local users at `/mgmt/tm/auth/user[/<name>]`: roles administrator, resource-admin, manager,
//! operator, guest (`partitionAccess: [{name: all-partitions, role}]` or a top-level `role`);
//! passwords are stored only as argon2id hashes and never shown. Any user may change their own
//! password; only administrators create, delete or change roles.

use http::Method;
use serde_json::{Map, Value, json};

use portcullis_admin::Reply;
use portcullis_admin::check_name;
use portcullis_admin::str_field;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_admin::{Role, denied};
use portcullis_admin::{next_generation, parse_object};
use portcullis_admin::{put_user, revoke_tokens};
use portcullis_store::Table;

const BASE: &str = "/mgmt/tm/auth/user";

fn view(st: &MgmtState, rec: &Value) -> Value {
    let name = rec["name"].as_str().unwrap_or_default();
    json!({
        "kind": "tm:auth:user:userstate",
        "name": name,
        "fullPath": name,
        "generation": rec["generation"].as_u64().unwrap_or(1),
        "selfLink": st.link(&format!("{BASE}/{name}")),
        "description": rec.get("description").cloned().unwrap_or_else(|| json!(name)),
        "shell": "none",
        "partitionAccess": [{"name": "all-partitions", "role": rec["role"]}],
    })
}

/// The role a body asks for (`role` or `partitionAccess[0].role`), if any.
fn requested_role(b: &Map<String, Value>) -> MgmtResult<Option<Role>> {
    let raw = b.get("role").and_then(Value::as_str).or_else(|| {
        b.get("partitionAccess")
            .and_then(|p| p.get(0))
            .and_then(|p| p.get("role"))
            .and_then(Value::as_str)
    });
    match raw {
        None => Ok(None),
        Some(r) => Role::parse(r).map(Some).ok_or_else(|| {
            MgmtError::bad_request(format!(
                "Unknown role '{r}' (admin, resource-admin, manager, operator, guest)."
            ))
        }),
    }
}

fn password(b: &Map<String, Value>) -> MgmtResult<Option<String>> {
    match str_field(b, "password")? {
        None => Ok(None),
        Some(p) if !p.is_empty() && p.len() <= 256 => Ok(Some(p.to_string())),
        Some(_) => Err(MgmtError::bad_request(
            "The password must be 1 to 256 characters.",
        )),
    }
}

pub fn handle(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    let st = ctx.st;
    let name = ctx.path[BASE.len()..].trim_start_matches('/').to_string();
    let is_admin = ctx.user.role == Role::Admin;
    let deny = || denied(&ctx.user.name, &ctx.method, &ctx.path, &ctx.peer);
    if name.is_empty() {
        return match ctx.method {
            Method::GET => {
                let items: Vec<Value> = st
                    .store
                    .list(Table::Users, "")?
                    .iter()
                    .map(|(_, v)| view(st, v))
                    .collect();
                Ok(Reply::json(
                    json!({"kind": "tm:auth:user:usercollectionstate", "selfLink": st.link(BASE), "items": ctx.query.apply(items)}),
                ))
            }
            Method::POST if is_admin => create(ctx, body),
            Method::POST => Err(deny()),
            _ => Err(MgmtError::method_not_allowed(
                ctx.method.as_str(),
                &ctx.path,
            )),
        };
    }
    check_name(&name)?;
    let not_found = || MgmtError::not_found("user", &name);
    let rec = st.store.get(Table::Users, &name)?.ok_or_else(not_found)?;
    match ctx.method {
        Method::GET => Ok(Reply::json(ctx.query.project(view(st, &rec)))),
        Method::PATCH | Method::PUT => {
            let b = parse_object(body)?;
            let role = requested_role(&b)?;
            let pw = password(&b)?;
            if !is_admin && (name != ctx.user.name || role.is_some_and(|r| r != ctx.user.role)) {
                return Err(deny());
            }
            let updated = st.store.write(|tx| {
                let mut rec = tx.get(Table::Users, &name)?.ok_or_else(not_found)?;
                if let Some(r) = role {
                    if name == "admin" && r != Role::Admin {
                        return Err(MgmtError::bad_request(
                            "The built-in admin user keeps the administrator role.",
                        ));
                    }
                    rec["role"] = json!(r.as_str());
                }
                if let Some(d) = b.get("description").and_then(Value::as_str) {
                    rec["description"] = json!(d);
                }
                rec["generation"] = json!(next_generation(tx)?);
                match &pw {
                    Some(p) => {
                        let role = rec["role"]
                            .as_str()
                            .and_then(Role::parse)
                            .unwrap_or(Role::Guest);
                        put_user(tx, &name, role, p, &rec)?;
                        if let Some(o) = rec.as_object_mut() {
                            o.remove("passwordHash");
                        }
                        // A new password ends every session of the old one (but the one a user
                        // changing their own password is using).
                        let own = (name == ctx.user.name)
                            .then_some(ctx.token.as_deref())
                            .flatten();
                        revoke_tokens(tx, &name, own)?;
                    }
                    None => tx.put(Table::Users, &name, &rec)?,
                }
                Ok::<_, MgmtError>(rec)
            })?;
            if pw.is_some() && is_admin {
                st.unlock(&name);
            }
            Ok(Reply::json(view(st, &updated)))
        }
        Method::DELETE if is_admin => {
            if name == "admin" || name == ctx.user.name {
                return Err(MgmtError::bad_request(format!(
                    "01070823:3: The user ({name}) cannot be deleted."
                )));
            }
            st.store.write(|tx| {
                tx.delete(Table::Users, &name)?;
                revoke_tokens(tx, &name, None)
            })?;
            st.unlock(&name);
            Ok(Reply::empty(http::StatusCode::OK))
        }
        Method::DELETE => Err(deny()),
        _ => Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        )),
    }
}

fn create(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    let b = parse_object(body)?;
    let name = str_field(&b, "name")?
        .ok_or_else(|| MgmtError::bad_request("The 'name' property is required."))?
        .to_string();
    check_name(&name)?;
    let role = requested_role(&b)?.unwrap_or(Role::Guest);
    let pw = password(&b)?
        .ok_or_else(|| MgmtError::bad_request("A password is required to create a user."))?;
    let rec = ctx.st.store.write(|tx| {
        if tx.get(Table::Users, &name)?.is_some() {
            return Err(MgmtError::exists("user", &name, "Common"));
        }
        let generation = next_generation(tx)?;
        let extra = json!({"description": b.get("description").cloned().unwrap_or_else(|| json!(name)), "generation": generation});
        put_user(tx, &name, role, &pw, &extra)?;
        Ok::<_, MgmtError>(json!({"name": name, "role": role.as_str(), "generation": generation, "description": extra["description"]}))
    })?;
    Ok(Reply::json(view(ctx.st, &rec)))
}
