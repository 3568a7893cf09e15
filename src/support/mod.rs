//! Small shared pieces every module may use: support ids, the clock, ISO 8601 formatting.
//! Imports nothing internal.

mod clock;
mod support_id;

pub use clock::{iso8601_utc, now_micros, unix_seconds};
pub use support_id::SupportId;
