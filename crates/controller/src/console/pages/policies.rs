//! Policies: each policy's enforcement mode, virtual servers and pending suggestions; one policy
//! with its pending changes (the applied document against the edited one, as a diff), the last
//! apply, apply and export, and — for a transparent policy — switching to blocking with the
//! readiness figures beside it. Changes are the REST requests they stand for.

use askama::Template;
use axum::response::Response;
use http::{HeaderValue, Method, StatusCode, header};
use serde_json::json;

use crate::asm::export;
use crate::asm::learn::suggestions;
use crate::asm::policies::{POLICIES, applied_key, edited_key, stored};
use crate::console::diff::{self, Line};
use crate::console::session::Session;
use crate::console::view::{self, Nav, done_message, joined, query, text};
use crate::console::{Req, html, rest, see_other};

/// Where the REST API starts an export: the console's download asks for the same right.
const EXPORT_TASKS: &str = "/mgmt/tm/asm/tasks/export-policy";

pub struct Row {
    pub id: String,
    pub full_path: String,
    pub mode: String,
    pub virtuals: String,
    pub modified: bool,
    pub active: bool,
    pub pending: usize,
}

#[derive(Template)]
#[template(path = "policies.html")]
pub struct Policies {
    pub nav: Nav,
    pub rows: Vec<Row>,
}

pub fn list(r: &Req<'_>, s: &Session) -> Response {
    let b = match rest::get(r, s, POLICIES) {
        Ok(b) => b,
        Err(e) => return view::rest_error(&e),
    };
    let rows = b["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let id = text(&p["id"]);
            let pending = suggestions::records(&r.st.store, &id)
                .map(|v| v.iter().filter(|r| r["state"] == "pending").count())
                .unwrap_or(0);
            Row {
                full_path: text(&p["fullPath"]),
                mode: text(&p["enforcementMode"]),
                virtuals: joined(&p["virtualServers"]),
                modified: p["isModified"] == true,
                active: p["active"] == true,
                pending,
                id,
            }
        })
        .collect();
    view::page(&Policies {
        nav: Nav::of(s, "policies"),
        rows,
    })
}

pub struct Reason {
    pub violation: String,
    pub requests: u64,
}

#[derive(Template)]
#[template(path = "policy.html")]
pub struct Detail {
    pub nav: Nav,
    pub id: String,
    pub full_path: String,
    pub mode: String,
    pub template: String,
    pub virtuals: String,
    pub modified: bool,
    pub active: bool,
    pub diff: Vec<Line>,
    pub last_apply: Option<(String, String, String)>,
    pub readiness: Option<(String, String, String, Vec<Reason>)>,
    pub can_apply: bool,
    pub can_export: bool,
    pub can_edit: bool,
    pub message: Option<String>,
}

/// The documents of a policy, pretty-printed: (applied, edited).
fn documents(r: &Req<'_>, id: &str) -> (String, String) {
    let pretty = |key: String| {
        stored(r.st, &key)
            .ok()
            .flatten()
            .map(|s| serde_json::to_string_pretty(&s.doc).unwrap_or_default())
            .unwrap_or_default()
    };
    (pretty(applied_key(id)), pretty(edited_key(id)))
}

pub fn detail(r: &Req<'_>, s: &Session, id: &str) -> Response {
    let path = format!("{POLICIES}/{id}");
    let p = match rest::get(r, s, &path) {
        Ok(p) => p,
        Err(e) => return view::rest_error(&e),
    };
    let full_path = text(&p["fullPath"]);
    let (applied, edited) = documents(r, id);
    let last_apply = rest::get(
        r,
        s,
        &format!(
            "/mgmt/tm/asm/tasks/apply-policy?{}",
            query(&[(
                "$filter",
                &format!("policyReference/fullPath eq '{full_path}'")
            )])
        ),
    )
    .ok()
    .and_then(|b| {
        let mut items = b["items"].as_array().cloned().unwrap_or_default();
        items.sort_by(|a, b| {
            a["lastUpdateMicros"]
                .as_f64()
                .partial_cmp(&b["lastUpdateMicros"].as_f64())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let t = items.pop()?;
        Some((text(&t["id"]), text(&t["status"]), text(&t["startTime"])))
    });
    let readiness = rest::get(r, s, &format!("{path}/readiness?hours=24"))
        .ok()
        .map(|x| {
            let share = x["wouldBlockShare"].as_f64().unwrap_or(0.0) * 100.0;
            let reasons = x["topReasons"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| Reason {
                    violation: text(&t["violation"]),
                    requests: t["requests"].as_u64().unwrap_or(0),
                })
                .collect();
            (
                format!("{share:.1}%"),
                x["wouldBlock"].to_string(),
                x["requests"].to_string(),
                reasons,
            )
        });
    view::page(&Detail {
        nav: Nav::of(s, "policies"),
        id: id.to_string(),
        mode: text(&p["enforcementMode"]),
        template: text(&p["templateReference"]["title"]),
        virtuals: joined(&p["virtualServers"]),
        modified: p["isModified"] == true,
        active: p["active"] == true,
        diff: if applied.is_empty() {
            diff::diff("", &edited, 0)
        } else {
            diff::diff(&applied, &edited, 3)
        },
        last_apply,
        readiness,
        can_apply: s.can(&Method::POST, "/mgmt/tm/asm/tasks/apply-policy"),
        can_export: s.can(&Method::POST, EXPORT_TASKS),
        can_edit: s.can(&Method::PATCH, &path),
        message: done_message(r.q("done"), r.q("task")),
        full_path,
    })
}

/// Starts an apply of policy `id` through REST; the task id.
fn apply(r: &Req<'_>, s: &Session, id: &str) -> Result<String, portcullis_admin::MgmtError> {
    let link = r.st.link(&format!("{POLICIES}/{id}"));
    let t = rest::call(
        r,
        s,
        Method::POST,
        "/mgmt/tm/asm/tasks/apply-policy",
        Some(&json!({"policyReference": {"link": link}})),
    )?;
    Ok(text(&t["id"]))
}

fn back(id: &str, done: &str, task: &str) -> Response {
    see_other(&format!(
        "/ui/policies/{id}?{}",
        query(&[("done", done), ("task", task)])
    ))
}

/// `POST /ui/policies/<id>/apply`.
pub fn post_apply(r: &Req<'_>, s: &Session, id: &str) -> Response {
    match apply(r, s, id) {
        Ok(task) => back(id, "applied", &task),
        Err(e) => view::rest_error(&e),
    }
}

/// `POST /ui/policies/<id>/blocking`: enforcement mode blocking, then apply.
pub fn post_blocking(r: &Req<'_>, s: &Session, id: &str) -> Response {
    let path = format!("{POLICIES}/{id}");
    let done = rest::call(
        r,
        s,
        Method::PATCH,
        &path,
        Some(&json!({"enforcementMode": "blocking"})),
    )
    .and_then(|_| apply(r, s, id));
    match done {
        Ok(task) => back(id, "blocking", &task),
        Err(e) => view::rest_error(&e),
    }
}

/// `GET /ui/policies/<id>/export`: the edited document, as the export task writes it.
pub fn export(r: &Req<'_>, s: &Session, id: &str) -> Response {
    if !s.can(&Method::POST, EXPORT_TASKS) {
        return view::error_page(
            StatusCode::UNAUTHORIZED,
            "Your role cannot export policies.",
        );
    }
    let p = match rest::get(r, s, &format!("{POLICIES}/{id}")) {
        Ok(p) => p,
        Err(e) => return view::rest_error(&e),
    };
    let full_path = p["fullPath"].as_str().unwrap_or_default();
    let doc = match export::document(r.st, full_path) {
        Ok(d) => d,
        Err(e) => return view::rest_error(&e),
    };
    let mut res = html(
        StatusCode::OK,
        serde_json::to_string_pretty(&doc).unwrap_or_default(),
    );
    let name = p["name"].as_str().unwrap_or("policy");
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}.json\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    res
}
