//! Events: the request log searched by support id, client address, URL, violation, signature,
//! policy, status and time range (indexed, paged newest first with a cursor: `events::search`);
//! one request in detail (the request as received, credentials masked; each violation with its
//! entity, matched text, and signatures by name); and "accept this request" with its preview
//! (the REST accept, on behalf of the session).

use askama::Template;
use axum::response::Response;
use http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::console::session::Session;
use crate::console::view::{self, Nav, count, done_message, query, text, time};
use crate::console::{Req, rest, see_other};
use crate::events::rest::PATH;
use crate::events::search::{self, Criteria, Total};
use portcullis_engine::ViolationKind;
use portcullis_engine::signatures::SignatureDb;
use portcullis_support::parse_iso8601_utc;

/// Rows per page.
pub const PAGE: usize = 50;

pub struct Row {
    pub id: String,
    pub time: String,
    pub blocked: bool,
    pub client: String,
    pub method: String,
    pub url: String,
    pub policy: String,
    pub violations: String,
    pub rating: u64,
}

#[derive(Template)]
#[template(path = "events.html")]
pub struct Events {
    pub nav: Nav,
    pub f: Vec<(&'static str, String)>,
    pub violations: Vec<&'static str>,
    pub policies: Vec<String>,
    pub rows: Vec<Row>,
    pub total: String,
    pub next: Option<String>,
    pub error: Option<String>,
}

impl Events {
    pub fn v(&self, k: &str) -> &str {
        self.f
            .iter()
            .find(|(n, _)| *n == k)
            .map_or("", |(_, v)| v.as_str())
    }
}

const FIELDS: [&str; 9] = [
    "support_id",
    "client",
    "url",
    "violation",
    "signature",
    "policy",
    "status",
    "from",
    "to",
];

fn criteria(r: &Req<'_>) -> Result<Criteria, String> {
    let time = |k: &str| -> Result<Option<u64>, String> {
        r.q(k)
            .map(|v| {
                parse_iso8601_utc(v)
                    .map(|t| t * 1_000_000)
                    .ok_or_else(|| format!("'{v}' is not a time (YYYY-MM-DDThh:mm, UTC)"))
            })
            .transpose()
    };
    let s = |k: &str| {
        r.q(k)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    Ok(Criteria {
        support_id: s("support_id"),
        client: s("client"),
        url: s("url"),
        violation: s("violation"),
        signature: match r.q("signature") {
            Some(v) => Some(
                v.trim()
                    .parse()
                    .map_err(|_| format!("'{v}' is not a signature id"))?,
            ),
            None => None,
        },
        policy: s("policy"),
        status: s("status").filter(|v| v == "blocked" || v == "alerted"),
        from: time("from")?,
        to: time("to")?,
    })
}

fn row(e: &Value) -> Row {
    let s = |k: &str| text(&e[k]);
    let mut names: Vec<&str> = e
        .get("violations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("kind").and_then(Value::as_str))
        .collect();
    names.dedup();
    Row {
        id: s("supportId"),
        time: time(e.get("timeMicros").and_then(Value::as_u64).unwrap_or(0)),
        blocked: s("action") == "block",
        client: s("clientIp"),
        method: s("method"),
        url: crate::events::rest::masked_uri(&s("uri")),
        policy: s("policyFullPath"),
        violations: names.join(", "),
        rating: e.get("rating").and_then(Value::as_u64).unwrap_or(0),
    }
}

pub fn list(r: &Req<'_>, s: &Session) -> Response {
    if !s.can(&Method::GET, PATH) {
        return view::error_page(
            StatusCode::UNAUTHORIZED,
            "Your role cannot read request events.",
        );
    }
    let f: Vec<(&'static str, String)> = FIELDS
        .iter()
        .map(|k| (*k, r.q(k).unwrap_or_default().to_string()))
        .collect();
    let policies = rest::get(r, s, "/mgmt/tm/asm/policies?$select=fullPath")
        .map(|b| {
            b["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["fullPath"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut page = Events {
        nav: Nav::of(s, "events"),
        f,
        violations: ViolationKind::ALL.iter().map(|k| k.name()).collect(),
        policies,
        rows: Vec::new(),
        total: String::new(),
        next: None,
        error: None,
    };
    let c = match criteria(r) {
        Ok(c) => c,
        Err(e) => {
            page.error = Some(e);
            return view::page(&page);
        }
    };
    let store = &r.st.store;
    let found = search::search(store, &c, r.q("before"), PAGE)
        .and_then(|p| Ok((p, search::total(store, &c)?)));
    match found {
        Ok((p, total)) => {
            page.rows = p.items.iter().map(row).collect();
            page.total = match total {
                Total::Exact(n) => format!("{} matching", count(n as u64)),
                Total::AtLeast(n) => format!("at least {} matching", count(n as u64)),
                Total::Unknown => String::new(),
            };
            page.next = p.next.map(|cursor| {
                let mut pairs: Vec<(&str, &str)> =
                    page.f.iter().map(|(k, v)| (*k, v.as_str())).collect();
                pairs.push(("before", &cursor));
                query(&pairs)
            });
        }
        Err(e) => page.error = Some(e.to_string()),
    }
    view::page(&page)
}

pub struct Viol {
    pub name: String,
    pub context: String,
    pub entity: String,
    pub value: String,
    pub detail: String,
    pub staged: bool,
    pub signatures: Vec<(u64, String, String)>,
}

pub struct Change {
    pub violation: String,
    pub description: String,
    pub broad: bool,
}

#[derive(Template)]
#[template(path = "event.html")]
pub struct Detail {
    pub nav: Nav,
    pub id: String,
    pub time: String,
    pub blocked: bool,
    pub client: String,
    pub policy: String,
    pub policy_id: String,
    pub virtual_server: String,
    pub rating: u64,
    pub response: u64,
    pub raw: String,
    pub violations: Vec<Viol>,
    pub preview_error: Option<String>,
    pub already: bool,
    pub would_pass: bool,
    pub attack: bool,
    pub warnings: Vec<String>,
    pub changes: Vec<Change>,
    pub modifications: String,
    pub can_accept: bool,
    pub message: Option<String>,
}

pub fn detail(r: &Req<'_>, s: &Session, id: &str) -> Response {
    let e = match rest::get(r, s, &format!("{PATH}/{id}")) {
        Ok(e) => e,
        Err(e) => return view::rest_error(&e),
    };
    let db = SignatureDb::builtin();
    let violations = e["violations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| Viol {
            name: text(&v["name"]),
            context: text(&v["context"]),
            entity: text(&v["observedEntity"]["name"]),
            value: text(&v["observedEntity"]["value"]),
            detail: text(&v["details"]),
            staged: v["enforcementState"]["isInStaging"] == true,
            signatures: v["signatureIds"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_u64)
                .map(|id| match db.get(id as u32) {
                    Some(sig) => (id, sig.name.clone(), sig.accuracy.as_str().to_string()),
                    None => (id, "(not in this database)".into(), String::new()),
                })
                .collect(),
        })
        .collect();
    let accept = format!("{PATH}/{id}/accept");
    let preview = rest::get(r, s, &accept);
    let p = preview.as_ref().ok();
    let flag = |k: &str| p.is_some_and(|p| p[k] == true);
    let changes = p
        .and_then(|p| p["fixes"].as_array())
        .into_iter()
        .flatten()
        .flat_map(|f| {
            let v = text(&f["violation"]);
            f["changes"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(move |c| Change {
                    violation: v.clone(),
                    description: text(&c["description"]),
                    broad: c["broad"] == true,
                })
        })
        .collect();
    let policy_link = e["policyReference"]["link"].as_str().unwrap_or_default();
    let policy_id = policy_link
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .split('?')
        .next()
        .unwrap_or_default();
    let page = Detail {
        nav: Nav::of(s, "events"),
        id: id.to_string(),
        time: time(e["timeMicros"].as_u64().unwrap_or(0)),
        blocked: e["requestStatus"] == "blocked",
        client: text(&e["clientIp"]),
        policy: text(&e["policyName"]),
        policy_id: policy_id.to_string(),
        virtual_server: text(&e["virtualServerName"]),
        rating: e["violationRating"].as_u64().unwrap_or(0),
        response: e["responseCode"].as_u64().unwrap_or(0),
        raw: text(&e["rawRequest"]["httpRequest"]).replace("\r\n", "\n"),
        violations,
        preview_error: preview.as_ref().err().map(|e| e.message.clone()),
        already: flag("alreadyPasses"),
        would_pass: flag("wouldPass"),
        attack: flag("attack"),
        warnings: p
            .and_then(|p| p["warnings"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|w| w.as_str().map(str::to_string))
            .collect(),
        changes,
        modifications: p
            .map(|p| serde_json::to_string_pretty(&p["modifications"]).unwrap_or_default())
            .unwrap_or_default(),
        can_accept: s.can(&Method::POST, &accept),
        message: done_message(r.q("done"), r.q("task")),
    };
    view::page(&page)
}

/// `POST /ui/events/<id>/accept`: the REST accept, then back to the request.
pub fn accept(r: &Req<'_>, s: &Session, id: &str) -> Response {
    let force = r.f("force") == Some("yes");
    let path = format!("{PATH}/{id}/accept");
    match rest::call(r, s, Method::POST, &path, Some(&json!({"force": force}))) {
        Ok(done) => {
            let task = done["applyTask"]["id"].as_str().unwrap_or_default();
            let code = if task.is_empty() {
                "nothing"
            } else {
                "accepted"
            };
            let id_q: String = form_urlencoded::byte_serialize(id.as_bytes()).collect();
            see_other(&format!(
                "/ui/events/{id_q}?{}",
                query(&[("done", code), ("task", task)])
            ))
        }
        Err(e) => view::rest_error(&e),
    }
}
