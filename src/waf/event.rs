//! The security event: one record per blocked or alarmed request, for the event log,
//! the admin API's request events and remote logging.

use serde::Serialize;

use super::verdict::Action;
use super::violation::Violation;

/// One blocked or alarmed request. Serialised as one JSON line in the event log.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SecurityEvent {
    /// Decimal support id, as in the block response.
    #[serde(rename = "supportId")]
    pub support_id: String,
    /// ISO 8601 UTC time the request arrived.
    pub time: String,
    #[serde(rename = "timeMicros")]
    pub time_micros: u64,
    #[serde(rename = "clientIp")]
    pub client_ip: String,
    pub method: String,
    pub uri: String,
    pub protocol: String,
    pub policy: String,
    pub action: Action,
    pub rating: u8,
    pub violations: Vec<Violation>,
    /// The virtual server (listener) that received the request; filled in by the data plane
    /// (empty when the engine runs without one).
    #[serde(rename = "virtualServerName", skip_serializing_if = "String::is_empty")]
    pub virtual_server: String,
    /// The status code answered to the client; filled in by the data plane (0 when unknown).
    #[serde(rename = "responseCode", skip_serializing_if = "is_zero")]
    pub response_code: u16,
}

fn is_zero(n: &u16) -> bool {
    *n == 0
}
