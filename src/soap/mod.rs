//! The iControl SOAP portal for the DNS zone tool, at `/iControl/iControlPortal.cgi` on the admin
//! port: HTTP Basic (401 challenge first, as suds sends every request without credentials
//! before retrying), `GET ?WSDL=<Interface>`, and `POST` calls dispatched on the namespace of the
//! operation element.
//!
//! - [`envelope`]: lenient request parsing. [`decode`]: typed parameters.
//! - [`response`]: strict response envelopes. [`fault`]: SOAP faults (HTTP 500).
//! - [`zone_methods`], [`rr_methods`]: the methods. [`workset`]: one atomic store write per call.
//! - [`wsdl`]: the WSDL documents. [`standalone`]: HTTPS serving for tests and the example.
//!
//! Imports: `store`, `dns`, `support`.

pub mod decode;
pub mod envelope;
pub mod fault;
pub mod response;
pub mod rr_methods;
pub mod standalone;
pub mod workset;
pub mod wsdl;
pub mod zone_methods;

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine as _;

use crate::dns::{Zone, ZoneCatalog, ZoneDoc};
use crate::store::{Store, Table};

use decode::ViewZone;
use fault::Fault;
use workset::{WorkSet, key_of};

/// The portal path.
pub const PORTAL_PATH: &str = "/iControl/iControlPortal.cgi";
/// Largest request body accepted (bytes).
pub const MAX_BODY: usize = 4 * 1024 * 1024;
/// The Basic realm of the challenge.
pub const REALM: &str = "BIG-IP";

/// Checks a username and password.
pub type Authenticator = Arc<dyn Fn(&str, &str) -> bool + Send + Sync>;

/// What the portal needs: the store, the served zones (updated after every committed change),
/// and the credential check.
#[derive(Clone)]
pub struct SoapState {
    pub store: Arc<Store>,
    pub zones: ZoneCatalog,
    pub auth: Authenticator,
    write_lock: Arc<parking_lot::Mutex<()>>,
}

impl SoapState {
    pub fn new(store: Arc<Store>, zones: ZoneCatalog, auth: Authenticator) -> Self {
        SoapState {
            store,
            zones,
            auth,
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
        .layer(DefaultBodyLimit::max(MAX_BODY))
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

/// The `user:password` of a Basic header, checked.
fn authorized(st: &SoapState, headers: &HeaderMap) -> bool {
    let Some(v) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some((scheme, b64)) = v.trim().split_once(' ') else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return false;
    }
    let Ok(raw) = base64::engine::general_purpose::STANDARD.decode(b64.trim()) else {
        return false;
    };
    let Ok(pair) = String::from_utf8(raw) else {
        return false;
    };
    match pair.split_once(':') {
        Some((user, pass)) => (st.auth)(user, pass),
        None => false,
    }
}

async fn get_portal(
    State(st): State<SoapState>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    let work = tokio::task::spawn_blocking(move || {
        if !authorized(&st, &headers) {
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

async fn post_call(State(st): State<SoapState>, headers: HeaderMap, body: Bytes) -> Response {
    let work = tokio::task::spawn_blocking(move || {
        if !authorized(&st, &headers) {
            return challenge();
        }
        handle_call(&st, &body)
    });
    work.await
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Parses, dispatches and answers one call (blocking: it may write the store).
pub fn handle_call(st: &SoapState, body: &[u8]) -> Response {
    let call = match envelope::parse_request(body) {
        Ok(c) => c,
        Err(e) => return Fault::client(e.to_string()).into_http("urn:iControl", "unknown"),
    };
    let result = match call.interface.as_str() {
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
