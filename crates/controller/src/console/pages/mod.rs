//! The console's pages, one file each, and the table that routes a path to them. A GET renders a
//! page; a POST (CSRF-checked before it gets here) makes one change and redirects (303) to the
//! page that shows it.

mod events;
mod overview;
mod policies;
mod suggestions;
mod virtuals;

use axum::response::Response;
use http::StatusCode;

use super::session::{self, Session};
use super::{Req, see_other, view};

/// Whether every path segment is a page name or an id (support ids are digits, policy and
/// suggestion ids URL-safe base64): the ids are put into REST paths, which must not change shape.
fn plain_segments(segs: &[&str]) -> bool {
    segs.iter().all(|s| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    })
}

pub fn get(r: &Req<'_>, s: &Session, segs: &[&str]) -> Response {
    if !plain_segments(segs) {
        return view::error_page(StatusCode::NOT_FOUND, "There is no such page.");
    }
    match segs {
        [] => see_other("/ui/overview"),
        ["overview"] => overview::page(r, s),
        ["events"] => events::list(r, s),
        ["events", id] => events::detail(r, s, id),
        ["policies"] => policies::list(r, s),
        ["policies", id] => policies::detail(r, s, id),
        ["policies", id, "export"] => policies::export(r, s, id),
        ["policies", id, "suggestions"] => suggestions::page(r, s, id),
        ["virtuals"] => virtuals::page(r, s),
        _ => view::error_page(StatusCode::NOT_FOUND, "There is no such page."),
    }
}

pub fn post(r: &Req<'_>, s: &Session, segs: &[&str]) -> Response {
    if !plain_segments(segs) {
        return view::error_page(StatusCode::NOT_FOUND, "There is no such action.");
    }
    match segs {
        ["logout"] => session::logout(r, s),
        ["events", id, "accept"] => events::accept(r, s, id),
        ["policies", id, "apply"] => policies::post_apply(r, s, id),
        ["policies", id, "blocking"] => policies::post_blocking(r, s, id),
        ["policies", id, "suggestions", "accept"] => suggestions::post(r, s, id, None, "accept"),
        [
            "policies",
            id,
            "suggestions",
            sid,
            action @ ("accept" | "dismiss"),
        ] => suggestions::post(r, s, id, Some(sid), action),
        _ => view::error_page(StatusCode::NOT_FOUND, "There is no such action."),
    }
}
