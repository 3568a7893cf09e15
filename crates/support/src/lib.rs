//! Small shared pieces every module may use: support ids, the clock, ISO 8601 formatting, IP
//! addresses and integers as text, registration keys, the UUID text form, a stack-first vector for per-request
//! scratch lists, bounded reading of admin request bodies ([`body`]), the one outbound HTTP client
//! with its bounds ([`Outbound`]) and destination guard ([`Guard`]), bounded server-side pulls of
//! URLs ([`fetch`]), the certificate-pinning verifier ([`pin`]), links to policy files
//! ([`links`]), URLs with their password masked, string arrays of loosely typed JSON
//! ([`json_strings`]), the spawning of background tasks off the request path ([`task`]).

pub mod body;
mod clock;
mod decimal;
pub mod fetch;
mod guard;
mod inline_vec;
mod ip_text;
mod json;
pub mod links;
mod outbound;
pub mod pin;
mod regkey;
mod support_id;
pub mod task;
mod url;
mod uuid;

pub use clock::{iso8601_utc, now_micros, parse_iso8601_utc, unix_seconds};
pub use decimal::{DECIMAL_MAX, decimal, decimal_bytes};
pub use guard::{BadCidr, Cidr, Guard};
pub use inline_vec::InlineVec;
pub use ip_text::ip_text;
pub use json::json_strings;
pub use outbound::{
    Answer, Bounds, Call, Outbound, OutboundError, PullError, collect_bounded, within,
};
pub use regkey::{RegKeyError, parse_regkey};
pub use support_id::SupportId;
pub use url::redact_url;
pub use uuid::{is_uuid, new_uuid};

/// The client address of a connection, put in each request's extensions by the admin server.
#[derive(Clone, Copy, Debug)]
pub struct Peer(pub std::net::SocketAddr);
