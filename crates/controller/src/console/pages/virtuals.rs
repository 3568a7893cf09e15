//! Virtual servers and pools: what is attached where (pool, policy, log profiles) and the status
//! of each (the listener's availability, each member's monitor state), read through REST.

use std::collections::HashMap;

use askama::Template;
use axum::response::Response;
use serde_json::Value;

use crate::console::session::Session;
use crate::console::view::{self, Nav, joined, text};
use crate::console::{Req, rest};

pub struct Virtual {
    pub full_path: String,
    pub destination: String,
    pub pool: String,
    pub policy: Option<(String, String)>,
    pub log_profiles: String,
    pub available: bool,
    pub status: String,
}

pub struct Member {
    pub name: String,
    pub state: String,
    pub up: bool,
    pub detail: String,
}

pub struct Pool {
    pub full_path: String,
    pub monitor: String,
    pub members: Vec<Member>,
}

#[derive(Template)]
#[template(path = "virtuals.html")]
pub struct Virtuals {
    pub nav: Nav,
    pub virtuals: Vec<Virtual>,
    pub pools: Vec<Pool>,
}

pub fn page(r: &Req<'_>, ses: &Session) -> Response {
    let read = |p: &str| rest::get(r, ses, p);
    let (vs, pools, policies) = match (
        read("/mgmt/tm/ltm/virtual"),
        read("/mgmt/tm/ltm/pool?expandSubcollections=true"),
        read("/mgmt/tm/asm/policies"),
    ) {
        (Ok(a), Ok(b), Ok(c)) => (a, b, c),
        (Err(e), ..) | (_, Err(e), _) | (.., Err(e)) => return view::rest_error(&e),
    };
    let items = |v: &Value| v["items"].as_array().cloned().unwrap_or_default();
    let mut attached: HashMap<String, (String, String)> = HashMap::new();
    for p in items(&policies) {
        for v in p["virtualServers"].as_array().into_iter().flatten() {
            attached.insert(text(v), (text(&p["fullPath"]), text(&p["id"])));
        }
    }
    let virtuals = items(&vs)
        .iter()
        .map(|v| {
            let full_path = text(&v["fullPath"]);
            Virtual {
                destination: text(&v["destination"]),
                pool: text(&v["pool"]),
                policy: attached.get(&full_path).cloned(),
                log_profiles: joined(&v["securityLogProfiles"]),
                available: v["status"]["availabilityState"] == "available",
                status: text(&v["status"]["statusReason"]),
                full_path,
            }
        })
        .collect();
    let pools = items(&pools)
        .iter()
        .map(|p| Pool {
            full_path: text(&p["fullPath"]),
            monitor: text(&p["monitor"]),
            members: p["membersReference"]["items"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    let state = text(&m["state"]);
                    Member {
                        name: text(&m["name"]),
                        up: state == "up" || state == "unchecked",
                        detail: text(&m["monitorStatus"]),
                        state,
                    }
                })
                .collect(),
        })
        .collect();
    view::page(&Virtuals {
        nav: Nav::of(ses, "virtuals"),
        virtuals,
        pools,
    })
}
