//! SOAP faults: one type for every error a call can end in, turned into an HTTP 500 SOAP Fault
//! whose faultstring reads like BIG-IP's (`Exception caught in Management::<ns>::<method>()`,
//! exception name, primary error code, error string), which bigsuds raises as `ServerError`.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::response::fault_envelope;

/// What went wrong, which picks the exception name and error code of the faultstring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// The addressed zone or record does not exist.
    NotFound,
    /// The zone to create exists already.
    AlreadyExists,
    /// A parameter is missing, malformed or invalid.
    InvalidArgument,
    /// The envelope itself could not be read, or the method is unknown.
    Client,
    /// The store failed.
    Internal,
    /// The caller's role may not call the method.
    AccessDenied,
}

/// A fault raised by a method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub message: String,
}

impl Fault {
    pub fn not_found(msg: impl Into<String>) -> Fault {
        Fault {
            kind: FaultKind::NotFound,
            message: msg.into(),
        }
    }
    pub fn exists(msg: impl Into<String>) -> Fault {
        Fault {
            kind: FaultKind::AlreadyExists,
            message: msg.into(),
        }
    }
    pub fn invalid(msg: impl Into<String>) -> Fault {
        Fault {
            kind: FaultKind::InvalidArgument,
            message: msg.into(),
        }
    }
    pub fn client(msg: impl Into<String>) -> Fault {
        Fault {
            kind: FaultKind::Client,
            message: msg.into(),
        }
    }
    pub fn denied(msg: impl Into<String>) -> Fault {
        Fault {
            kind: FaultKind::AccessDenied,
            message: msg.into(),
        }
    }
    pub fn internal(msg: impl Into<String>) -> Fault {
        Fault {
            kind: FaultKind::Internal,
            message: msg.into(),
        }
    }

    /// The BIG-IP-style faultstring for a call of `method` in the namespace `ns`.
    pub fn faultstring(&self, ns: &str, method: &str) -> String {
        let (exception, code) = match self.kind {
            FaultKind::NotFound => ("Common::OperationFailed", 0x0102_0036u32),
            FaultKind::AlreadyExists => ("Common::OperationFailed", 0x0102_0066),
            FaultKind::InvalidArgument => ("Common::InvalidArgument", 0x0107_0734),
            FaultKind::Client => ("Common::InvalidArgument", 0),
            FaultKind::Internal => ("Common::OperationFailed", 0x0107_0711),
            FaultKind::AccessDenied => ("Common::AccessDenied", 0),
        };
        format!(
            "Exception caught in Management::{ns}::{method}()\nException: {exception}\n\tprimary_error_code   : {code} (0x{code:08X})\n\tsecondary_error_code : 0\n\terror_string         : {}",
            self.message
        )
    }

    /// The HTTP 500 response carrying this fault.
    pub fn into_http(self, ns: &str, method: &str) -> Response {
        let code = if self.kind == FaultKind::Client {
            "Client"
        } else {
            "Server"
        };
        let body = fault_envelope(code, &self.faultstring(ns, method));
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            [(header::CONTENT_TYPE, "text/xml; charset=utf-8")],
            body,
        )
            .into_response()
    }
}

impl From<portcullis_store::StoreError> for Fault {
    fn from(e: portcullis_store::StoreError) -> Self {
        Fault::internal(e.to_string())
    }
}

impl From<crate::ZoneError> for Fault {
    fn from(e: crate::ZoneError) -> Self {
        Fault::invalid(e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faultstring_reads_like_big_ip() {
        let f = Fault::not_found("The requested zone (external example.com.) was not found.");
        let s = f.faultstring("urn:iControl:Management/Zone", "get_zone_v2");
        assert!(s.starts_with("Exception caught in Management::urn:iControl:Management/Zone::get_zone_v2()\nException: Common::OperationFailed\n\tprimary_error_code   : 16908342 (0x01020036)"));
        assert!(s.ends_with(
            "error_string         : The requested zone (external example.com.) was not found."
        ));
        let r = f.into_http("urn:iControl:Management/Zone", "get_zone_v2");
        assert_eq!(r.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }
}
