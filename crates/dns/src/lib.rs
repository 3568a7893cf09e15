//! DNS zones of the zone tool, the listener that serves them, and the iControl SOAP portal
//! ([`soap`]) through which management clients edit them.
//!
//! - [`name`]: domain-name checks and reverse names.
//! - [`record`]: one record and its zone-file text (`<name> <ttl> IN <type> <data>`).
//! - [`zone`]: a zone (view, MASTER type, zone file, options, records) and its invariants.
//! - [`catalog`]: the served zones, swapped atomically on every committed change.
//! - [`answer`]: authoritative answers from a snapshot (pure).
//! - [`server`]: the UDP + TCP listener (`portcullis serve --dns-listen ADDR`).

mod answer;
mod catalog;
mod name;
mod record;
mod server;
pub mod soap;
mod zone;

pub use catalog::ZoneCatalog;
pub use record::{RData, Record, parse_record};
pub use server::{DnsServer, serve};
pub use zone::{Zone, ZoneDoc, ZoneError, zone_key};
