//! The central manager (`portcullis central`) against real controllers.

mod licensing;
mod manager;
mod restart;
