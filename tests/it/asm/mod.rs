//! Firewall policies over REST: upload, import, apply, events, learning.

mod apply_load;
mod events;
mod learning;
mod learning_corpus;
mod lifecycle;
