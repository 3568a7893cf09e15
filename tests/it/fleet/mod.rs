//! What a fleet shares through real servers: Redis limits, the PostgreSQL event store, SIEM receivers.

mod events;
mod shared_limits;
mod siem_export;
