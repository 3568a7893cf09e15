//! Suggestions of one policy: sortable (score, requests, sources, last seen), with their evidence
//! and the modification each would add; accept, dismiss, and accept all pending suggestions at or
//! above a score (the REST routes of `asm::learn`, on behalf of the session).

use askama::Template;
use axum::response::Response;
use http::Method;
use serde_json::{Value, json};

use crate::asm::policies::POLICIES;
use crate::console::session::Session;
use crate::console::view::{self, Nav, done_message, query, text};
use crate::console::{Req, rest, see_other};

/// Rows shown (the highest by the chosen order); accepting "all above a score" covers every one.
pub const ROWS: usize = 200;

pub struct Row {
    pub id: String,
    pub score: u64,
    pub description: String,
    pub status: String,
    pub requests: u64,
    pub sources: u64,
    pub trusted: u64,
    pub attacks: u64,
    pub first: String,
    pub last: String,
    pub reasons: Vec<String>,
    pub events: Vec<String>,
    pub modification: String,
    pub broad: bool,
}

#[derive(Template)]
#[template(path = "suggestions.html")]
pub struct Suggestions {
    pub nav: Nav,
    pub id: String,
    pub full_path: String,
    pub sort: String,
    pub show_all: bool,
    pub rows: Vec<Row>,
    /// How many there are in all (more than shown when above [`ROWS`]).
    pub total: usize,
    pub can_change: bool,
    pub message: Option<String>,
}

impl Suggestions {
    /// The link that sorts by `key`.
    pub fn sort_link(&self, key: &str) -> String {
        let all = if self.show_all { "1" } else { "" };
        format!(
            "/ui/policies/{}/suggestions?{}",
            self.id,
            query(&[("sort", key), ("all", all)])
        )
    }
}

fn row(i: &Value) -> Row {
    let ev = &i["evidence"];
    let n = |k: &str| ev[k].as_u64().unwrap_or(0);
    Row {
        id: text(&i["id"]),
        score: i["learningScore"].as_u64().unwrap_or(0),
        description: text(&i["description"]),
        status: text(&i["status"]),
        requests: n("requests"),
        sources: n("distinctSources"),
        trusted: n("trustedSources"),
        attacks: n("attackRequests"),
        first: text(&ev["firstSeen"])
            .replace('T', " ")
            .trim_end_matches('Z')
            .to_string(),
        last: text(&ev["lastSeen"])
            .replace('T', " ")
            .trim_end_matches('Z')
            .to_string(),
        reasons: i["scoreReasons"]
            .as_array()
            .into_iter()
            .flatten()
            .map(text)
            .collect(),
        events: ev["events"]
            .as_array()
            .into_iter()
            .flatten()
            .map(text)
            .collect(),
        modification: serde_json::to_string_pretty(&i["modification"]).unwrap_or_default(),
        broad: i["broad"] == true,
    }
}

pub fn page(r: &Req<'_>, s: &Session, id: &str) -> Response {
    let p = match rest::get(r, s, &format!("{POLICIES}/{id}")) {
        Ok(p) => p,
        Err(e) => return view::rest_error(&e),
    };
    let b = match rest::get(r, s, &format!("{POLICIES}/{id}/suggestions")) {
        Ok(b) => b,
        Err(e) => return view::rest_error(&e),
    };
    let show_all = r.q("all") == Some("1");
    let mut rows: Vec<Row> = b["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(row)
        .filter(|x| show_all || x.status == "pending")
        .collect();
    let sort = r.q("sort").unwrap_or("score").to_string();
    match sort.as_str() {
        "requests" => rows.sort_by_key(|x| std::cmp::Reverse(x.requests)),
        "sources" => rows.sort_by_key(|x| std::cmp::Reverse(x.sources)),
        "last" => rows.sort_by(|a, b| b.last.cmp(&a.last)),
        _ => rows.sort_by(|a, b| b.score.cmp(&a.score).then(b.requests.cmp(&a.requests))),
    }
    let total = rows.len();
    rows.truncate(ROWS);
    let path = format!("{POLICIES}/{id}/suggestions/accept");
    view::page(&Suggestions {
        nav: Nav::of(s, "policies"),
        id: id.to_string(),
        full_path: text(&p["fullPath"]),
        sort,
        show_all,
        rows,
        total,
        can_change: s.can(&Method::POST, &path),
        message: done_message(r.q("done"), r.q("task")),
    })
}

/// `POST /ui/policies/<id>/suggestions/<sid>/<accept|dismiss>` and `.../suggestions/accept`
/// (`min_score`).
pub fn post(r: &Req<'_>, s: &Session, id: &str, sid: Option<&str>, action: &str) -> Response {
    let base = format!("{POLICIES}/{id}/suggestions");
    let answer = match sid {
        Some(sid) => rest::call(
            r,
            s,
            Method::POST,
            &format!("{base}/{sid}/{action}"),
            Some(&json!({})),
        ),
        None => {
            let min: u64 = r
                .f("min_score")
                .and_then(|m| m.trim().parse().ok())
                .unwrap_or(101);
            rest::call(
                r,
                s,
                Method::POST,
                &format!("{base}/accept"),
                Some(&json!({"minScore": min})),
            )
        }
    };
    match answer {
        Ok(b) => {
            let task = b["applyTask"]["id"].as_str().unwrap_or_default();
            let done = match (action, task.is_empty()) {
                ("dismiss", _) => "dismissed",
                (_, true) => "none",
                _ => "accepted",
            };
            see_other(&format!(
                "/ui/policies/{id}/suggestions?{}",
                query(&[("done", done), ("task", task)])
            ))
        }
        Err(e) => view::rest_error(&e),
    }
}
