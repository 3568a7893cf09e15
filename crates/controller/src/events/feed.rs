//! `GET /mgmt/tm/asm/events/feed?after=<sequence>&limit=<n>`: the stored request events in the
//! order they were stored, after a write sequence, for collectors (the central manager's fleet
//! event store). Reading from the last sequence seen misses no event and repeats none, whatever
//! the events' arrival times; `lastSequence` tells a collector whose cursor is beyond it that this
//! controller's log started over. Items are those of `/mgmt/tm/asm/events/requests`, plus
//! `sequence`.

use serde_json::{Value, json};

use super::local::{SEQUENCE, next_sequence, sequence_key};
use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_store::Table;

pub const PATH: &str = "/mgmt/tm/asm/events/feed";
const KIND: &str = "tm:asm:events:feed:feedstate";
/// Most events in one answer (and the default).
pub const MAX_LIMIT: usize = 5000;
const DEFAULT_LIMIT: usize = 1000;

fn param<'a>(ctx: &'a Ctx<'_>, name: &str) -> Option<&'a str> {
    ctx.query
        .other
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn number(ctx: &Ctx<'_>, name: &str, default: u64) -> MgmtResult<u64> {
    match param(ctx, name) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| {
            MgmtError::bad_request(format!(
                "Query parameter {name} must be a non-negative integer, got '{v}'."
            ))
        }),
    }
}

pub fn handle(ctx: &Ctx<'_>, _body: &[u8]) -> MgmtResult<Reply> {
    ctx.only_get()?;
    if ctx.path != PATH {
        return Err(MgmtError::no_such_uri(&ctx.path));
    }
    let after = number(ctx, "after", 0)?;
    let limit = (number(ctx, "limit", DEFAULT_LIMIT as u64)? as usize).clamp(1, MAX_LIMIT);
    let store = &ctx.st.store;
    let mut keys: Vec<(u64, String)> = Vec::new();
    store.scan_from(
        Table::Events,
        SEQUENCE,
        &sequence_key(after.saturating_add(1)),
        |k, v| {
            if let (Ok(seq), Some(key)) = (k[SEQUENCE.len()..].parse::<u64>(), v.as_str()) {
                keys.push((seq, key.to_string()));
            }
            keys.len() < limit
        },
    )?;
    let mut items = Vec::with_capacity(keys.len());
    for (seq, key) in keys {
        if let Some(e) = store.get(Table::Events, &key)? {
            let mut item = super::rest::item(ctx.st, &e);
            item["sequence"] = json!(seq);
            items.push(item);
        }
    }
    Ok(Reply::json(json!({
        "kind": KIND,
        "selfLink": ctx.st.link(PATH),
        "lastSequence": next_sequence(store)?.saturating_sub(1),
        "items": Value::Array(items),
    })))
}
