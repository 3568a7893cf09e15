//! A REST request on behalf of a console session: built as a client would send it (the session's
//! token in `X-F5-Auth-Token`, a JSON body) and handed to the `/mgmt` dispatcher, so the console
//! can do exactly what the REST API lets this user do, with the API's checks and error messages.

use http::Method;
use serde_json::Value;

use super::Req;
use super::session::Session;
use portcullis_admin::MgmtError;
use portcullis_admin::dispatch;

/// Sends `method path` (path with its query string) with `body`; the answer's JSON body (Null
/// when empty) or the REST error.
pub fn call(
    r: &Req<'_>,
    s: &Session,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> Result<Value, MgmtError> {
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("x-f5-auth-token", s.token.as_str())
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(())
        .map_err(|e| MgmtError::internal(format!("console request {path}: {e}")))?;
    let (parts, ()) = req.into_parts();
    let bytes = body.map(Value::to_string).unwrap_or_default();
    let reply = dispatch(r.st, &parts, bytes.as_bytes(), r.peer)?;
    Ok(reply.body.unwrap_or(Value::Null))
}

/// [`call`] for a GET.
pub fn get(r: &Req<'_>, s: &Session, path: &str) -> Result<Value, MgmtError> {
    call(r, s, Method::GET, path, None)
}
