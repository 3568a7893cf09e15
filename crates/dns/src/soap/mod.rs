//! The iControl SOAP portal for the DNS zone tool, at `/iControl/iControlPortal.cgi` on the admin
//! port: HTTP Basic (401 challenge first, as suds sends every request without credentials
//! before retrying), `GET ?WSDL=<Interface>`, and `POST` calls dispatched on the namespace of the
//! operation element. Credentials are checked before the body is read, and the body is read
//! under the admin port's bounds (`support::body`). Every caller may read zones; only callers
//! whose role may change them ([`Access::ReadWrite`], decided by the [`Authenticator`]) may call
//! the other methods.
//!
//! - [`envelope`]: lenient request parsing. [`decode`]: typed parameters.
//! - [`response`]: strict response envelopes. [`fault`]: SOAP faults (HTTP 500).
//! - [`zone_methods`], [`rr_methods`]: the methods. [`workset`]: one atomic store write per call.
//! - [`wsdl`]: the WSDL documents. [`standalone`]: HTTPS serving for tests and the example.

mod decode;
mod envelope;
mod fault;
mod response;
mod rr_methods;
mod standalone;
mod workset;
mod wsdl;
mod zone_methods;

use std::sync::Arc;

use axum::Router;
use axum::extract::{RawQuery, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine as _;

use crate::{Zone, ZoneCatalog, ZoneDoc};
use portcullis_store::{Store, Table};
use portcullis_support::Peer;
use portcullis_support::body::{self, BodyLimits};

pub use envelope::parse_request;
pub use standalone::{self_signed_tls, serve_https};

use decode::ViewZone;
use fault::Fault;
use workset::{WorkSet, key_of};

/// The portal path.
pub const PORTAL_PATH: &str = "/iControl/iControlPortal.cgi";
/// Largest request body accepted (bytes).
pub const MAX_BODY: u64 = 4 * 1024 * 1024;
/// The Basic realm of the challenge.
pub const REALM: &str = "BIG-IP";

/// What an authenticated caller may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Call the methods that read (`zone_exist`, `get_*`) and fetch the WSDL.
    Read,
    /// Call every method.
    ReadWrite,
}

/// Checks a username and password sent from a client address: `None` when they are wrong (or
/// refused, e.g. locked out), else what the user may do.
pub type Authenticator = Arc<dyn Fn(&str, &str, &str) -> Option<Access> + Send + Sync>;

/// Whether a method only reads: everything else needs [`Access::ReadWrite`].
pub fn reads(method: &str) -> bool {
    method == "zone_exist" || method.starts_with("get_")
}

/// What the portal needs: the store, the served zones (updated after every committed change),
/// the credential check and the bounds request bodies are read under.
#[derive(Clone)]
pub struct SoapState {
    pub store: Arc<Store>,
    pub zones: ZoneCatalog,
    pub auth: Authenticator,
    pub limits: BodyLimits,
    write_lock: Arc<parking_lot::Mutex<()>>,
}

impl SoapState {
    /// A portal with the default body bounds ([`MAX_BODY`], 10 s without progress, 1 KiB/s).
    pub fn new(store: Arc<Store>, zones: ZoneCatalog, auth: Authenticator) -> Self {
        SoapState {
            store,
            zones,
            auth,
            limits: BodyLimits {
                max_bytes: MAX_BODY,
                read_timeout: std::time::Duration::from_secs(10),
                min_rate: 1024,
            },
            write_lock: Arc::new(parking_lot::Mutex::new(())),
        }
    }

    /// Reads one zone from the store.
    pub fn load_zone(&self, vz: &ViewZone) -> Result<Option<Zone>, Fault> {
        let key = key_of(&vz.view, &vz.zone)?;
        match self.store.get(Table::Zones, &key)? {
            None => Ok(None),
            Some(v) => {
                let doc: ZoneDoc = serde_json::from_value(v)
                    .map_err(|e| Fault::internal(format!("stored zone {key}: {e}")))?;
                Ok(Some(Zone::from_doc(&doc)?))
            }
        }
    }

    /// Runs `f` on the zones in one store write; commits and publishes to the DNS listener only
    /// when `f` succeeds. Writers are serialised so publications follow commit order.
    pub fn write<T>(
        &self,
        f: impl FnOnce(&mut WorkSet<'_, '_>) -> Result<T, Fault>,
    ) -> Result<T, Fault> {
        let _guard = self.write_lock.lock();
        let (out, changes) = self.store.write(|tx| {
            let mut ws = WorkSet::new(tx);
            let out = f(&mut ws)?;
            let changes = ws.finish()?;
            Ok::<_, Fault>((out, changes))
        })?;
        self.zones.publish(changes);
        Ok(out)
    }
}

/// The portal router (state applied), to merge into the admin server.
pub fn router(state: SoapState) -> Router {
    Router::new()
        .route(PORTAL_PATH, get(get_portal).post(post_call))
        .with_state(state)
}

fn challenge() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [
            (header::WWW_AUTHENTICATE, format!("Basic realm=\"{REALM}\"")),
            (header::CONTENT_TYPE, "text/html; charset=utf-8".to_string()),
        ],
        "<html><head><title>401 Unauthorized</title></head><body><h1>401 Unauthorized</h1></body></html>",
    )
        .into_response()
}

/// What the caller of a Basic header may do, if its credentials are right.
fn authorized(st: &SoapState, headers: &HeaderMap, peer: &str) -> Option<Access> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, b64) = v.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .ok()?;
    let pair = String::from_utf8(raw).ok()?;
    let (user, pass) = pair.split_once(':')?;
    (st.auth)(user, pass, peer)
}

/// The client address the admin server recorded, if any.
fn peer_of(req: &Request) -> String {
    req.extensions()
        .get::<Peer>()
        .map(|p| p.0.ip().to_string())
        .unwrap_or_else(|| "127.0.0.1".to_string())
}

async fn get_portal(State(st): State<SoapState>, RawQuery(q): RawQuery, req: Request) -> Response {
    let peer = peer_of(&req);
    let work = tokio::task::spawn_blocking(move || {
        if authorized(&st, req.headers(), &peer).is_none() {
            return challenge();
        }
        let wanted = q.as_deref().and_then(|q| {
            form_urlencoded::parse(q.as_bytes())
                .find(|(k, _)| k.eq_ignore_ascii_case("wsdl"))
                .map(|(_, v)| v.into_owned())
        });
        let xml = [(header::CONTENT_TYPE, "text/xml; charset=utf-8")];
        match wanted {
            Some(iface) => match wsdl::document(&iface) {
                Some(doc) => (StatusCode::OK, xml, doc).into_response(),
                None => (
                    StatusCode::NOT_FOUND,
                    format!("No WSDL for interface {iface}\n"),
                )
                    .into_response(),
            },
            None => {
                // one link per line: clients scrape the `?WSDL=` links line by line
                let mut page = String::from(
                    "<html><head><title>iControl Portal</title></head><body><h1>iControl Portal</h1><ul>\n",
                );
                for iface in [
                    "Management.Zone",
                    "Management.ResourceRecord",
                    "System.Session",
                ] {
                    page.push_str(&format!(
                        "<li><a href=\"{PORTAL_PATH}?WSDL={iface}\">{iface}</a></li>\n"
                    ));
                }
                page.push_str("</ul></body></html>");
                (
                    StatusCode::OK,
                    [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                    page,
                )
                    .into_response()
            }
        }
    });
    work.await
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

async fn post_call(State(st): State<SoapState>, req: Request) -> Response {
    let peer = peer_of(&req);
    let (parts, body) = req.into_parts();
    // The credentials first: nobody makes the portal read a body without them.
    let (st2, headers) = (st.clone(), parts.headers.clone());
    let access = tokio::task::spawn_blocking(move || authorized(&st2, &headers, &peer))
        .await
        .ok()
        .flatten();
    let refusal = match access {
        None => Some(challenge()),
        Some(_)
            if body::declared_length(&parts.headers).is_some_and(|n| n > st.limits.max_bytes) =>
        {
            Some(StatusCode::PAYLOAD_TOO_LARGE.into_response())
        }
        Some(_) => None,
    };
    if let Some(r) = refusal {
        return body::answer_early(body, &parts.headers, parts.version, &st.limits, r).await;
    }
    let bytes = match body::read(body, &st.limits).await {
        Ok(b) => b,
        Err(e) => return body::closing(e.status().into_response()),
    };
    let access = access.unwrap_or(Access::Read);
    let work = tokio::task::spawn_blocking(move || handle_call(&st, access, &bytes));
    work.await
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Parses, dispatches and answers one call of a caller with `access` (blocking: it may write
/// the store).
pub fn handle_call(st: &SoapState, access: Access, body: &[u8]) -> Response {
    let call = match envelope::parse_request(body) {
        Ok(c) => c,
        Err(e) => return Fault::client(e.to_string()).into_http("urn:iControl", "unknown"),
    };
    let result = match call.interface.as_str() {
        _ if access == Access::Read && !reads(&call.method) => Err(Fault::denied(format!(
            "Access Denied: the user's role may read zones but not call {}::{}",
            call.interface, call.method
        ))),
        "Management.Zone" => zone_methods::dispatch(&call, st),
        "Management.ResourceRecord" => rr_methods::dispatch(&call, st),
        "System.Session" if call.method == "get_session_identifier" => {
            // bigsuds `with_session_id()` asks for one and sends it back in `X-iControl-Session`;
            // calls are independent here, so any positive id serves.
            use rand::RngExt as _;
            Ok(Some(response::Value::Long(
                rand::rng().random_range(1..=i64::from(i32::MAX)),
            )))
        }
        other => Err(Fault::client(format!(
            "Interface {other} is not implemented"
        ))),
    };
    match result {
        Ok(ret) => {
            tracing::info!(interface = %call.interface, method = %call.method, "soap call");
            let body = response::envelope(&call.namespace, &call.method, ret.as_ref());
            (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "text/xml; charset=utf-8")],
                body,
            )
                .into_response()
        }
        Err(f) => {
            tracing::info!(interface = %call.interface, method = %call.method, error = %f.message, "soap fault");
            f.into_http(&call.namespace, &call.method)
        }
    }
}
