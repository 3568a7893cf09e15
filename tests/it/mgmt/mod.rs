//! The admin API of `portcullis serve`: objects, auth, files, apply, durability, slow clients.

mod apply;
mod auth;
mod durability;
mod files;
mod log_profiles;
mod objects;
mod robustness;
mod slow_clients;
