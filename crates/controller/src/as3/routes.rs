//! The `/mgmt/shared/appsvcs` endpoints: `declare` (POST deploys, GET returns the declaration,
//! DELETE removes tenants; `/declare/T1,T2` narrows to tenants), `info`, and `task` (the records
//! of `?async=true` deploys). Answers follow AS3's shapes (`docs/as3.md`), which its clients parse.

use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::deploy::{self, DECLARE, Outcome};
use super::model::{self, Action};
use portcullis_admin::Reply;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_store::Table;
use portcullis_support::now_micros;

pub const INFO: &str = "/mgmt/shared/appsvcs/info";
pub const TASK: &str = "/mgmt/shared/appsvcs/task";
/// Finished async task records kept (oldest dropped first).
pub const MAX_TASKS: usize = 50;

/// The tenants named after `/declare/` (`T1,T2`), if any.
fn tenant_filter(ctx: &Ctx<'_>) -> MgmtResult<Option<Vec<String>>> {
    let rest = ctx.path[DECLARE.len()..].trim_start_matches('/');
    if rest.is_empty() {
        return Ok(None);
    }
    if rest.contains('/') {
        return Err(MgmtError::no_such_uri(&ctx.path));
    }
    Ok(Some(
        rest.split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
    ))
}

fn flag(ctx: &Ctx<'_>, name: &str) -> bool {
    ctx.query
        .other
        .iter()
        .any(|(k, v)| k == name && v.eq_ignore_ascii_case("true"))
}

/// `/mgmt/shared/appsvcs/declare[/tenants]`.
pub fn declare(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    let only = tenant_filter(ctx)?;
    match ctx.method {
        Method::GET => get(ctx, only.as_deref()),
        Method::POST => post(ctx, body, only.as_deref()),
        Method::DELETE => {
            let names: Vec<String> = match only {
                Some(o) => o,
                None => deploy::stored_tenants(ctx.st)?
                    .into_iter()
                    .map(|(n, _)| n)
                    .collect(),
            };
            let results: Vec<Outcome> = names
                .iter()
                .map(|n| deploy::remove_tenant(ctx.st, n))
                .collect();
            answer(ctx, &results, deploy::current(ctx.st, None)?, false)
        }
        _ => Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        )),
    }
}

fn get(ctx: &Ctx<'_>, only: Option<&[String]>) -> MgmtResult<Reply> {
    if let Some(names) = only {
        let stored: Vec<String> = deploy::stored_tenants(ctx.st)?
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        if let Some(missing) = names.iter().find(|n| !stored.contains(n)) {
            return Err(MgmtError::new(
                StatusCode::NOT_FOUND,
                format!("specified tenant {missing} not found in declaration"),
            ));
        }
    }
    Ok(Reply::json(deploy::current(ctx.st, only)?))
}

/// The 422 of an invalid declaration (nothing changed).
fn invalid(errors: Vec<String>, id: &str) -> Reply {
    Reply::json(
        json!({"code": 422, "errors": errors, "declarationFullId": id,
                       "message": "declaration is invalid"}),
    )
    .status(StatusCode::UNPROCESSABLE_ENTITY)
}

fn post(ctx: &Ctx<'_>, body: &[u8], only: Option<&[String]>) -> MgmtResult<Reply> {
    let req = match model::parse(body) {
        Ok(r) => r,
        Err(errors) => {
            let id = serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(|v| {
                    v.pointer("/declaration/id")
                        .or(v.get("id"))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .unwrap_or_default();
            return Ok(invalid(errors, &id));
        }
    };
    if flag(ctx, "async") {
        return post_async(ctx, req, only);
    }
    let (results, decl) = run(ctx.st, &ctx.user.name, &req, only)?;
    answer(ctx, &results, decl, req.action == Action::DryRun)
}

/// Runs one request; returns the tenant outcomes and the declaration to answer with.
fn run(
    st: &MgmtState,
    user: &str,
    req: &model::Request,
    only: Option<&[String]>,
) -> MgmtResult<(Vec<Outcome>, Value)> {
    Ok(match req.action {
        Action::Retrieve => (Vec::new(), deploy::current(st, only)?),
        Action::Remove => {
            let names: Vec<String> = if req.adc.tenants.is_empty() {
                deploy::stored_tenants(st)?
                    .into_iter()
                    .map(|(n, _)| n)
                    .collect()
            } else {
                req.adc.tenants.iter().map(|t| t.name.clone()).collect()
            };
            let r = names
                .iter()
                .filter(|n| only.is_none_or(|o| o.contains(n)))
                .map(|n| deploy::remove_tenant(st, n))
                .collect();
            (r, deploy::current(st, None)?)
        }
        Action::Deploy | Action::DryRun => {
            let dry = req.action == Action::DryRun;
            let r = deploy::deploy(st, req, only, user, dry);
            (r, deploy::posted(&req.adc))
        }
    })
}

fn results_json(results: &[Outcome], dry: bool) -> Vec<Value> {
    let mut out: Vec<Value> = results.iter().map(Outcome::to_json).collect();
    if out.is_empty() {
        out.push(json!({"code": 200, "message": "no change", "host": "localhost", "tenant": "", "runTime": 0, "lineCount": 0}));
    }
    if dry {
        for r in &mut out {
            r["dryRun"] = json!(true);
        }
    }
    out
}

fn answer(_ctx: &Ctx<'_>, results: &[Outcome], decl: Value, dry: bool) -> MgmtResult<Reply> {
    let code = results.iter().map(|o| o.code).max().unwrap_or(200);
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
    Ok(
        Reply::json(json!({"results": results_json(results, dry), "declaration": decl}))
            .status(status),
    )
}

fn task_key(id: &str) -> String {
    format!("appsvcs/task/{id}")
}

/// `?async=true`: the request becomes a task record (polled at `/task/<id>`), answered 202 at
/// once; the deploy runs on a thread of its own and writes its results into the record.
fn post_async(ctx: &Ctx<'_>, req: model::Request, only: Option<&[String]>) -> MgmtResult<Reply> {
    let st = ctx
        .st
        .this
        .upgrade()
        .ok_or_else(|| MgmtError::internal("the management state is shutting down"))?;
    let id = portcullis_support::new_uuid();
    let link = ctx.st.link(&format!("{TASK}/{id}"));
    let pending = json!({"id": id, "results": [{"message": "in progress", "tenant": "", "host": "localhost",
                         "runTime": 0, "code": 0}], "declaration": {}, "selfLink": link, "created": now_micros()});
    ctx.st.store.write(|tx| {
        let mut old = tx
            .keys(Table::Tasks, "appsvcs/task/")?
            .into_iter()
            .filter_map(|k| {
                tx.get(Table::Tasks, &k)
                    .ok()
                    .flatten()
                    .map(|v| (v["created"].as_u64().unwrap_or(0), k))
            })
            .collect::<Vec<_>>();
        old.sort();
        let excess = (old.len() + 1).saturating_sub(MAX_TASKS);
        for (_, k) in old.into_iter().take(excess) {
            tx.delete(Table::Tasks, &k)?;
        }
        tx.put(Table::Tasks, &task_key(&id), &pending)
    })?;
    let (user, only, mut done, key) = (
        ctx.user.name.clone(),
        only.map(<[String]>::to_vec),
        pending.clone(),
        task_key(&id),
    );
    std::thread::Builder::new()
        .name("as3-task".into())
        .spawn(move || {
            match run(&st, &user, &req, only.as_deref()) {
                Ok((results, decl)) => {
                    done["results"] = json!(results_json(&results, req.action == Action::DryRun));
                    done["declaration"] = decl;
                }
                Err(e) => done["results"] = json!([{"code": e.status.as_u16(), "message": e.message,
                                                    "tenant": "", "host": "localhost", "runTime": 0}]),
            }
            if let Err(e) = st.store.write(|tx| tx.put(Table::Tasks, &key, &done)) {
                tracing::error!(error = %e, "cannot store the AS3 task result");
            }
        })
        .map_err(|e| MgmtError::internal(format!("cannot start the AS3 task: {e}")))?;
    let mut out = pending;
    if let Some(o) = out.as_object_mut() {
        o.remove("created");
        o["results"][0]["message"] = json!("Declaration successfully submitted");
    }
    Ok(Reply::json(out).status(StatusCode::ACCEPTED))
}

/// `/mgmt/shared/appsvcs/task[/<id>]`.
pub fn task(ctx: &Ctx<'_>, _body: &[u8]) -> MgmtResult<Reply> {
    if ctx.method != Method::GET {
        return Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        ));
    }
    let view = |mut v: Value| {
        if let Some(o) = v.as_object_mut() {
            o.remove("created");
        }
        v
    };
    let rest = ctx.path[TASK.len()..].trim_start_matches('/');
    if rest.is_empty() {
        let mut items: Vec<Value> = ctx
            .st
            .store
            .list(Table::Tasks, "appsvcs/task/")?
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        items.sort_by_key(|v| v["created"].as_u64().unwrap_or(0));
        return Ok(Reply::json(
            json!({"items": items.into_iter().map(view).collect::<Vec<_>>()}),
        ));
    }
    match ctx.st.store.get(Table::Tasks, &task_key(rest))? {
        Some(v) if !rest.contains('/') => Ok(Reply::json(view(v))),
        _ => Err(MgmtError::new(
            StatusCode::NOT_FOUND,
            format!("task {rest} not found"),
        )),
    }
}

/// `GET /mgmt/shared/appsvcs/info` (external WAF policies need 3.18 or later, so
/// clients check the version first).
pub fn info(ctx: &Ctx<'_>, _body: &[u8]) -> MgmtResult<Reply> {
    if ctx.method != Method::GET {
        return Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        ));
    }
    Ok(Reply::json(
        json!({"version": model::SCHEMA_CURRENT, "release": "1",
                           "schemaCurrent": model::SCHEMA_CURRENT, "schemaMinimum": model::SCHEMA_MINIMUM}),
    ))
}
