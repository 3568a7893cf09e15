//! `/mgmt/tm/transaction`: POST `{}` opens a transaction; writes sent with
//! `X-F5-REST-Coordination-Id: <transId>` are queued (and answered with the queued command);
//! PATCH `{"state": "VALIDATING"}` runs every queued command in **one** store transaction, so
//! they all apply or none does (`"validateOnly": true` runs them and rolls back). Only generic
//! object kinds can be queued.

use http::{Method, StatusCode};
use serde_json::{Value, json};

use portcullis_admin::Ctx;
use portcullis_admin::Query;
use portcullis_admin::Reply;
use portcullis_admin::Role;
use portcullis_admin::segments;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_admin::{Target, resolve};
use portcullis_admin::{
    create_in, delete_in, parse_body, parse_object, touches_data_plane, update_in,
};
use portcullis_store::Table;
use portcullis_support::now_micros;

const BASE: &str = "/mgmt/tm/transaction";
/// Most commands one transaction may hold.
const MAX_COMMANDS: usize = 1000;

fn key(id: &str) -> String {
    format!("transaction/{id}")
}

fn view(ctx: &Ctx<'_>, rec: &Value) -> Value {
    let mut v = rec.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("commands");
        o.remove("user");
    }
    v["selfLink"] = json!(ctx.st.link(&format!("{BASE}/{}", rec["transId"])));
    v
}

fn load(ctx: &Ctx<'_>, id: &str) -> MgmtResult<Value> {
    let rec = ctx.st.store.get(Table::Tasks, &key(id))?;
    match rec {
        Some(r) if ctx.user.role == Role::Admin || r["user"] == ctx.user.name.as_str() => Ok(r),
        _ => Err(MgmtError::new(
            StatusCode::NOT_FOUND,
            format!("Transaction {id} does not exist."),
        )
        .api(1)),
    }
}

/// Queues a write sent with `X-F5-REST-Coordination-Id`.
pub fn enqueue(ctx: &Ctx<'_>, id: &str, raw_query: Option<&str>, body: &[u8]) -> MgmtResult<Reply> {
    let patch = ctx.method == Method::PATCH;
    let body_v = if ctx.method == Method::DELETE {
        Value::Null
    } else {
        Value::Object(parse_body(body, patch)?)
    };
    let uri = match raw_query {
        Some(q) => format!("{}?{q}", ctx.path),
        None => ctx.path.clone(),
    };
    let id = id.to_string();
    let cmd = ctx.st.store.write(|tx| {
        let mut rec = tx.get(Table::Tasks, &key(&id))?.filter(|r| ctx.user.role == Role::Admin || r["user"] == ctx.user.name.as_str()).ok_or_else(|| {
            MgmtError::bad_request(format!("Transaction {id} does not exist or is not open."))
        })?;
        if rec["state"] != "STARTED" {
            return Err(MgmtError::bad_request(format!("Transaction {id} is {} and accepts no commands.", rec["state"])));
        }
        let cmds = rec["commands"].as_array_mut().ok_or_else(|| MgmtError::internal("corrupt transaction"))?;
        if cmds.len() >= MAX_COMMANDS {
            return Err(MgmtError::bad_request(format!("A transaction holds at most {MAX_COMMANDS} commands.")));
        }
        let n = cmds.len() + 1;
        let cmd = json!({"method": ctx.method.as_str(), "uri": format!("https://localhost{uri}"), "path": uri, "body": body_v,
                         "evalOrder": n, "commandId": n, "kind": "tm:transaction:commandsstate"});
        cmds.push(cmd.clone());
        tx.put(Table::Tasks, &key(&id), &rec)?;
        Ok::<_, MgmtError>(cmd)
    })?;
    let mut out = cmd;
    if let Some(o) = out.as_object_mut() {
        o.remove("path");
    }
    out["selfLink"] = json!(
        ctx.st
            .link(&format!("{BASE}/{id}/commands/{}", out["commandId"]))
    );
    Ok(Reply::json(out))
}

pub fn handle(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    let rest: Vec<&str> = ctx.path[BASE.len()..]
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    match (&ctx.method, rest.as_slice()) {
        (&Method::POST, []) => {
            let now = now_micros();
            let rec = ctx.st.store.write(|tx| {
                let mut id = now / 1000;
                while tx.get(Table::Tasks, &key(&id.to_string()))?.is_some() {
                    id += 1;
                }
                let rec = json!({"transId": id, "state": "STARTED", "timeoutSeconds": 120, "asyncExecution": false,
                                 "validateOnly": false, "executionTimeout": 300, "executionTime": 0, "failureReason": "",
                                 "kind": "tm:transactionstate", "user": ctx.user.name, "commands": []});
                tx.put(Table::Tasks, &key(&id.to_string()), &rec)?;
                Ok::<_, MgmtError>(rec)
            })?;
            Ok(Reply::json(view(ctx, &rec)))
        }
        (&Method::GET, []) => {
            let items: Vec<Value> = ctx
                .st
                .store
                .list(Table::Tasks, "transaction/")?
                .into_iter()
                .filter(|(_, r)| {
                    ctx.user.role == Role::Admin || r["user"] == ctx.user.name.as_str()
                })
                .map(|(_, r)| view(ctx, &r))
                .collect();
            Ok(Reply::json(
                json!({"kind": "tm:transactioncollectionstate", "selfLink": ctx.st.link(BASE), "items": items}),
            ))
        }
        (&Method::GET, [id]) => Ok(Reply::json(view(ctx, &load(ctx, id)?))),
        (&Method::GET, [id, "commands"]) => {
            let rec = load(ctx, id)?;
            Ok(Reply::json(
                json!({"kind": "tm:transaction:commandscollectionstate", "selfLink": ctx.st.link(&ctx.path), "items": rec["commands"]}),
            ))
        }
        (&Method::DELETE, [id]) => {
            load(ctx, id)?;
            ctx.st.store.write(|tx| tx.delete(Table::Tasks, &key(id)))?;
            Ok(Reply::empty(StatusCode::OK))
        }
        (&Method::PATCH, [id]) => commit(ctx, id, body),
        _ => Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        )),
    }
}

/// Marker error used to roll back a `validateOnly` run that succeeded.
const VALIDATED: &str = "\u{0}validated";

fn commit(ctx: &Ctx<'_>, id: &str, body: &[u8]) -> MgmtResult<Reply> {
    let b = parse_object(body)?;
    if b.get("state").and_then(Value::as_str) != Some("VALIDATING") {
        return Err(MgmtError::bad_request(
            "A transaction is committed with {\"state\": \"VALIDATING\"}.",
        ));
    }
    let validate_only = b
        .get("validateOnly")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut rec = load(ctx, id)?;
    if rec["state"] != "STARTED" {
        return Err(MgmtError::bad_request(format!(
            "Transaction {id} is {} and cannot be committed.",
            rec["state"]
        )));
    }
    let cmds = rec["commands"].as_array().cloned().unwrap_or_default();
    let st = ctx.st;
    let user = ctx.user.name.as_str();
    let started = std::time::Instant::now();
    let mut done = rec.clone();
    done["state"] = json!("COMPLETED");
    let outcome = st.store.write(|tx| {
        let mut data_plane = false;
        for (i, cmd) in cmds.iter().enumerate() {
            let fail = |e: MgmtError| MgmtError {
                message: format!("transaction command {}: {}", i + 1, e.message),
                ..e
            };
            let path = cmd["path"].as_str().unwrap_or_default();
            let (p, q) = path
                .split_once('?')
                .map_or((path, None), |(p, q)| (p, Some(q)));
            let query = Query::parse(q).map_err(fail)?;
            let segs = segments(p).map_err(fail)?;
            let method = cmd["method"].as_str().unwrap_or_default();
            let attrs = cmd["body"].as_object().cloned().unwrap_or_default();
            let unsupported = || {
                fail(MgmtError::bad_request(format!(
                    "{method} {p} cannot run in a transaction."
                )))
            };
            let c = match (method, resolve(st, &segs).map_err(fail)?) {
                ("POST", Some(Target::Collection(c))) => {
                    create_in(st, tx, user, &c, attrs).map_err(fail)?;
                    c
                }
                (m @ ("PUT" | "PATCH"), Some(Target::Object(c, n))) => {
                    update_in(
                        st,
                        tx,
                        user,
                        &c,
                        &n,
                        attrs,
                        m == "PATCH",
                        query.options.as_deref(),
                    )
                    .map_err(fail)?;
                    c
                }
                ("DELETE", Some(Target::Object(c, n))) => {
                    delete_in(st, tx, &c, &n).map_err(fail)?;
                    c
                }
                _ => return Err(unsupported()),
            };
            data_plane |= touches_data_plane(&c);
        }
        if validate_only {
            return Err(MgmtError::new(StatusCode::OK, VALIDATED));
        }
        done["executionTime"] = json!(started.elapsed().as_millis() as u64);
        tx.put(Table::Tasks, &key(id), &done)?;
        Ok(data_plane)
    });
    match outcome {
        Ok(data_plane) => {
            if data_plane {
                st.reapply();
            }
            Ok(Reply::json(view(ctx, &done)))
        }
        Err(e) if e.status == StatusCode::OK && e.message == VALIDATED => {
            rec["validateOnly"] = json!(true);
            Ok(Reply::json(view(ctx, &rec)))
        }
        Err(e) => {
            rec["state"] = json!("FAILED");
            rec["failureReason"] = json!(e.message);
            st.store.write(|tx| tx.put(Table::Tasks, &key(id), &rec))?;
            Err(e)
        }
    }
}
