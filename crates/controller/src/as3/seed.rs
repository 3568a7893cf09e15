//! The built-in objects of a real controller that AS3 declarations name and our first-start seed
//! does not create: the TCP profiles `f5-tcp-wan`, `f5-tcp-lan`, `f5-tcp-progressive` (`profileTCP`
//! `wan`/`lan`) and the `_sys_https_redirect` rule (the redirect virtual of `redirect80`).
//! Added once when missing, through the object engine.

use serde_json::{Value, json};

use super::deploy::coll_of;
use super::plan::HTTPS_REDIRECT_RULE;
use crate::objects::{profile, rule};
use portcullis_admin::Coll;
use portcullis_admin::MgmtResult;
use portcullis_admin::MgmtState;
use portcullis_admin::create_in;
use portcullis_store::Table;

/// The text of the redirect rule, as on BIG-IP.
const REDIRECT_TEXT: &str =
    "when HTTP_REQUEST {\n    HTTP::redirect https://[getfield [HTTP::host] \":\" 1][HTTP::uri]\n}";

/// Creates whichever of the built-ins is missing, in one write.
pub fn builtins(st: &MgmtState) -> MgmtResult<()> {
    let wanted: Vec<(&str, Value)> = vec![
        (
            profile::TCP.path,
            json!({"name": "/Common/f5-tcp-wan", "defaultsFrom": "/Common/tcp"}),
        ),
        (
            profile::TCP.path,
            json!({"name": "/Common/f5-tcp-lan", "defaultsFrom": "/Common/tcp"}),
        ),
        (
            profile::TCP.path,
            json!({"name": "/Common/f5-tcp-progressive", "defaultsFrom": "/Common/tcp"}),
        ),
        (
            rule::RULE.path,
            json!({"name": HTTPS_REDIRECT_RULE, "apiAnonymous": REDIRECT_TEXT}),
        ),
    ];
    let missing: Vec<(Coll, Value)> = wanted
        .into_iter()
        .map(|(c, body)| Ok((coll_of(st, c)?, body)))
        .collect::<MgmtResult<Vec<_>>>()?
        .into_iter()
        .filter(|(c, body)| {
            let key = format!(
                "{}/{}",
                c.path,
                body["name"].as_str().unwrap_or_default().replace('/', "~")
            );
            st.store.get(Table::Objects, &key).ok().flatten().is_none()
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    st.store.write(|tx| {
        for (c, body) in missing {
            create_in(
                st,
                tx,
                "admin",
                &c,
                body.as_object().cloned().unwrap_or_default(),
            )?;
        }
        Ok(())
    })
}
