//! The web console: over HTTPS, and at scale.

mod http;
mod scale;
