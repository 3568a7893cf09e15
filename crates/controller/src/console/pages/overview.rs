//! Overview: requests, blocked and alarmed per second over the last hour (by minute) or day (by
//! hour), and the top violations, signatures, URLs, sources and policies, as charts; from the
//! controller's own statistics (`events::stats`), a few records whatever the event log holds.

use askama::Template;
use axum::response::Response;
use http::{Method, StatusCode};

use crate::console::session::Session;
use crate::console::view::{self, Nav, count, query};
use crate::console::{Req, chart};
use crate::events::stats::{self, Span};
use portcullis_engine::signatures::SignatureDb;
use portcullis_support::{iso8601_utc, now_micros};

pub struct Tile {
    pub label: &'static str,
    pub total: String,
    pub rate: String,
}

#[derive(Template)]
#[template(path = "overview.html")]
pub struct Overview {
    pub nav: Nav,
    pub span: &'static str,
    pub tiles: Vec<Tile>,
    pub series: String,
    pub tops: Vec<(&'static str, String)>,
}

fn title(dim: &str) -> &'static str {
    match dim {
        "violations" => "Top violations",
        "signatures" => "Top signatures",
        "urls" => "Top URLs",
        "sources" => "Top sources",
        _ => "Top policies",
    }
}

/// The events search a bar of a top list opens.
fn link(dim: &str, value: &str) -> Option<String> {
    let field = match dim {
        "violations" => "violation",
        "signatures" => "signature",
        "urls" => "url",
        "sources" => "client",
        "policies" => "policy",
        _ => return None,
    };
    (value != "(other)").then(|| format!("/ui/events?{}", query(&[(field, value)])))
}

pub fn page(r: &Req<'_>, s: &Session) -> Response {
    if !s.can(&Method::GET, crate::events::rest::PATH) {
        return view::error_page(
            StatusCode::UNAUTHORIZED,
            "Your role cannot read request events.",
        );
    }
    let span = r.q("span").and_then(Span::parse).unwrap_or(Span::Hour);
    let w = match stats::window(&r.st.store, span, now_micros()) {
        Ok(w) => w,
        Err(e) => return view::error_page(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    let secs = (w.series.len() as u64 * span.step_secs()) as f64;
    let tile = |label, n: u64| Tile {
        label,
        total: count(n),
        rate: format!("{:.2}/s", n as f64 / secs),
    };
    let tiles = vec![
        tile("Requests", w.requests),
        tile("Blocked", w.blocked),
        tile("Alarmed", w.alarmed),
    ];
    let labels: Vec<String> = w
        .series
        .iter()
        .map(|p| {
            let t = iso8601_utc(p.start);
            match span {
                Span::Hour => t[11..16].to_string(),
                Span::Day => format!("{}h", &t[11..13]),
            }
        })
        .collect();
    let per_sec = |f: fn(&stats::Point) -> u64| -> Vec<f64> {
        w.series
            .iter()
            .map(|p| f(p) as f64 / span.step_secs() as f64)
            .collect()
    };
    let series = chart::lines(
        &format!("Requests per second, last {} (UTC)", span.as_str()),
        &labels,
        &[
            ("requests", per_sec(|p| p.requests)),
            ("blocked", per_sec(|p| p.blocked)),
            ("alarmed", per_sec(|p| p.alarmed)),
        ],
    );
    let db = SignatureDb::builtin();
    let tops = w
        .top
        .iter()
        .map(|(dim, list)| {
            let rows: Vec<(String, u64, Option<String>)> = list
                .iter()
                .map(|(v, n)| {
                    let label = match (*dim, v.parse::<u32>().ok().and_then(|id| db.get(id))) {
                        ("signatures", Some(sig)) => format!("{v} {}", sig.name),
                        _ => v.clone(),
                    };
                    (label, *n, link(dim, v))
                })
                .collect();
            (title(dim), chart::bars(title(dim), &rows))
        })
        .collect();
    view::page(&Overview {
        nav: Nav::of(s, "overview"),
        span: span.as_str(),
        tiles,
        series,
        tops,
    })
}
