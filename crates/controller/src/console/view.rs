//! What the templates show: one struct per page (askama templates under `templates/`, escaped
//! HTML by default), the navigation every page carries, and small formatting helpers.

use askama::Template;
use axum::response::Response;
use http::StatusCode;
use serde_json::Value;

use super::html;
use super::session::Session;

/// The bar at the top of every page.
pub struct Nav {
    pub user: String,
    pub role: &'static str,
    pub csrf: String,
    pub active: &'static str,
}

impl Nav {
    pub fn of(s: &Session, active: &'static str) -> Nav {
        Nav {
            user: s.user.name.clone(),
            role: s.user.role.as_str(),
            csrf: s.csrf.clone(),
            active,
        }
    }
}

/// Renders a template (a template that fails to render is a defect: the error page says so).
pub fn render<T: Template>(t: &T) -> String {
    t.render().unwrap_or_else(|e| {
        format!("<!doctype html><title>Error</title><p>The page could not be drawn: {e}")
    })
}

/// A string of a REST answer (empty when it is missing or not a string).
pub fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// The strings of a REST answer's array, comma-separated.
pub fn joined(v: &Value) -> String {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A page.
pub fn page<T: Template>(t: &T) -> Response {
    html(StatusCode::OK, render(t))
}

#[derive(Template)]
#[template(path = "login.html")]
pub struct Login {
    pub next: String,
    pub csrf: String,
    pub error: Option<String>,
}

#[derive(Template)]
#[template(path = "error.html")]
pub struct ErrorPage {
    pub status: u16,
    pub message: String,
}

/// An error page with `status`.
pub fn error_page(status: StatusCode, message: &str) -> Response {
    let p = ErrorPage {
        status: status.as_u16(),
        message: message.to_string(),
    };
    html(status, render(&p))
}

/// The error page of a REST error (its status and message).
pub fn rest_error(e: &portcullis_admin::MgmtError) -> Response {
    error_page(e.status, &e.message)
}

/// `2026-11-26 07:33:46` from microseconds since the epoch.
pub fn time(micros: u64) -> String {
    portcullis_support::iso8601_utc(micros / 1_000_000)
        .trim_end_matches('Z')
        .replace('T', " ")
}

/// `1 234 567`.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push('\u{202f}');
        }
        out.push(c);
    }
    out
}

/// A query string with `key=value` pairs (values percent-encoded).
pub fn query(pairs: &[(&str, &str)]) -> String {
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        if !v.is_empty() {
            s.append_pair(k, v);
        }
    }
    s.finish()
}

/// An outcome message shown after a change (`?done=...`).
pub fn done_message(code: Option<&str>, task: Option<&str>) -> Option<String> {
    let task = task
        .map(|t| format!(" (apply task {t})"))
        .unwrap_or_default();
    Some(match code? {
        "accepted" => format!("The changes were added to the policy and an apply started{task}."),
        "nothing" => "Nothing to change: the request passes already.".to_string(),
        "applied" => format!("The policy is being applied{task}."),
        "blocking" => format!("The policy is switched to blocking and being applied{task}."),
        "dismissed" => "The suggestion was dismissed.".to_string(),
        "none" => "No pending suggestion reaches that score.".to_string(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(count(1234567), "1\u{202f}234\u{202f}567");
        assert_eq!(count(12), "12");
        assert_eq!(time(1_672_292_545_000_000), "2022-12-29 05:42:25");
        assert_eq!(
            query(&[("a", "x y"), ("b", ""), ("c", "/&")]),
            "a=x+y&c=%2F%26"
        );
    }
}
