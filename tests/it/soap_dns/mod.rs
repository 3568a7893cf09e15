//! The iControl SOAP portal and the DNS listener it manages.

mod dns_listener;
mod serve;
mod soap_portal;
