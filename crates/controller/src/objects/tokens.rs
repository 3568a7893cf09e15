//! `POST /mgmt/shared/authn/login` and `/mgmt/shared/authz/tokens[/<token>]` GET, PATCH
//! (`timeout` ≤ 36000 s) and DELETE. Tokens are stored (they survive a restart) under their
//! SHA-256 (`auth::token_key`), and expire. A token is addressed by itself, or, in the
//! collection an administrator lists, by that key (the list cannot show the tokens).

use http::{Method, StatusCode};
use serde_json::{Value, json};

use portcullis_admin::Reply;
use portcullis_admin::Role;
use portcullis_admin::parse_object;
use portcullis_admin::{Ctx, MgmtState};
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_admin::{basic_credentials, is_token_key, new_token, token_key};
use portcullis_store::Table;
use portcullis_support::now_micros;

/// The longest token lifetime a PATCH may set (10 hours, the longest the clients accept).
pub const MAX_TIMEOUT: u64 = 36_000;

/// Login with the body credentials (or Basic): the token object real clients read.
pub fn login(
    st: &MgmtState,
    headers: &http::HeaderMap,
    body: &[u8],
    peer: &str,
) -> MgmtResult<Reply> {
    let fail = |mut e: MgmtError| {
        e.in_array = true;
        e
    };
    let b = parse_object(body).map_err(fail)?;
    let (mut user, mut pass) = (
        b.get("username")
            .and_then(Value::as_str)
            .map(str::to_string),
        b.get("password")
            .and_then(Value::as_str)
            .map(str::to_string),
    );
    if (user.is_none() || pass.is_none())
        && let Some((u, p)) = basic_credentials(headers)
    {
        user = Some(u);
        pass = Some(p);
    }
    let (Some(user), Some(pass)) = (user, pass) else {
        return Err(fail(MgmtError::bad_request(
            "username and password are required.",
        )));
    };
    let provider = b
        .get("loginProviderName")
        .and_then(Value::as_str)
        .unwrap_or("tmos")
        .to_string();
    if !matches!(provider.as_str(), "tmos" | "local") {
        // Only local authentication exists here: any other source (ldap, radius, ...) gets the
        // real system's 401 "service unavailable" answer.
        return Err(fail(MgmtError::new(
            StatusCode::UNAUTHORIZED,
            "Unable to process request /tm/auth/source. Service is unavailable.",
        )));
    }
    let u = st.check_password(&user, &pass, peer).map_err(fail)?;
    let tok = new_token();
    let now = now_micros();
    let timeout = st.cfg.token_timeout.min(MAX_TIMEOUT);
    let rec = json!({
        "token": tok, "name": tok, "userName": u.name, "authProviderName": provider,
        "user": {"link": format!("https://localhost/mgmt/shared/authz/users/{}", u.name)},
        "timeout": timeout, "startTime": portcullis_support::iso8601_utc(now / 1_000_000),
        "address": peer, "partition": "[All]", "generation": 1,
        "lastUpdateMicros": now, "expirationMicros": now + timeout * 1_000_000,
        "kind": "shared:authz:tokens:authtokenitemstate",
        "selfLink": format!("https://localhost/mgmt/shared/authz/tokens/{tok}"),
    });
    let expired: Vec<String> = st
        .store
        .list(Table::Tokens, "")?
        .into_iter()
        .filter(|(_, v)| v["expirationMicros"].as_u64().unwrap_or(0) <= now)
        .map(|(k, _)| k)
        .collect();
    st.store.write(|tx| {
        for k in &expired {
            tx.delete(Table::Tokens, k)?;
        }
        tx.put(Table::Tokens, &token_key(&tok), &stored_form(&rec))
    })?;
    Ok(Reply::json(json!({
        "username": u.name,
        "loginReference": {"link": format!("https://localhost/mgmt/cm/system/authn/providers/{provider}/login")},
        "loginProviderName": provider,
        "token": rec,
        "generation": 0,
        "lastUpdateMicros": 0,
    })))
}

/// A token record without the token itself (the form kept in the store).
fn stored_form(rec: &Value) -> Value {
    let mut rec = rec.clone();
    if let Some(m) = rec.as_object_mut() {
        for k in ["token", "name", "selfLink"] {
            m.remove(k);
        }
    }
    rec
}

/// A stored record as the API shows it, addressed by `id` (the token, or its key in a list).
fn shown(mut rec: Value, id: &str, is_token: bool) -> Value {
    if let Some(m) = rec.as_object_mut() {
        if is_token {
            m.insert("token".into(), json!(id));
        }
        m.insert("name".into(), json!(id));
        m.insert(
            "selfLink".into(),
            json!(format!("https://localhost/mgmt/shared/authz/tokens/{id}")),
        );
    }
    rec
}

/// `/mgmt/shared/authz/tokens[/<token>]`.
pub fn handle(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    let st = ctx.st;
    let rest = ctx
        .path
        .trim_start_matches("/mgmt/shared/authz/tokens")
        .trim_start_matches('/');
    let mine = |v: &Value| ctx.user.role == Role::Admin || v["userName"] == ctx.user.name.as_str();
    if rest.is_empty() {
        if ctx.method != Method::GET {
            return Err(MgmtError::method_not_allowed(
                ctx.method.as_str(),
                &ctx.path,
            ));
        }
        let items: Vec<Value> = st
            .store
            .list(Table::Tokens, "")?
            .into_iter()
            .filter(|(_, v)| mine(v))
            .map(|(k, v)| shown(v, &k, false))
            .collect();
        return Ok(Reply::json(json!({
            "kind": "shared:authz:tokens:authtokencollectionstate",
            "selfLink": "https://localhost/mgmt/shared/authz/tokens",
            "items": ctx.query.apply(items),
        })));
    }
    let missing = || {
        MgmtError::new(
            StatusCode::NOT_FOUND,
            format!("Token {rest} does not exist."),
        )
        .api(1)
    };
    let by_token = token_key(rest);
    let (key, rec) = match st.store.get(Table::Tokens, &by_token)? {
        Some(rec) => (by_token, rec),
        None if is_token_key(rest) => (
            rest.to_string(),
            st.store.get(Table::Tokens, rest)?.ok_or_else(missing)?,
        ),
        None => return Err(missing()),
    };
    if !mine(&rec) {
        return Err(missing());
    }
    let is_token = key != rest;
    match ctx.method {
        Method::GET => Ok(Reply::json(shown(rec, rest, is_token))),
        Method::DELETE => {
            st.store.write(|tx| tx.delete(Table::Tokens, &key))?;
            Ok(Reply::json(shown(rec, rest, is_token)))
        }
        Method::PATCH => {
            let b = parse_object(body)?;
            let timeout = match b.get("timeout") {
                Some(v) => v
                    .as_u64()
                    .or_else(|| v.as_str().and_then(|s| s.parse().ok())),
                None => None,
            }
            .ok_or_else(|| {
                MgmtError::bad_request("timeout must be an integer number of seconds.")
            })?;
            if timeout == 0 || timeout > MAX_TIMEOUT {
                return Err(MgmtError::bad_request(format!(
                    "timeout must be between 1 and {MAX_TIMEOUT} seconds, got {timeout}."
                )));
            }
            let now = now_micros();
            let mut rec = rec;
            rec["timeout"] = json!(timeout);
            rec["lastUpdateMicros"] = json!(now);
            rec["expirationMicros"] = json!(now + timeout * 1_000_000);
            rec["generation"] = json!(rec["generation"].as_u64().unwrap_or(1) + 1);
            st.store.write(|tx| tx.put(Table::Tokens, &key, &rec))?;
            Ok(Reply::json(shown(rec, rest, is_token)))
        }
        _ => Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        )),
    }
}
