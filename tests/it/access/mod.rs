//! API access control: JWT, introspection and API keys on the real proxy, and access profiles as configuration.

mod config;
mod control;
