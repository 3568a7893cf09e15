//! The error object of the `/mgmt` surface (`docs/mgmt.md`): one type, one place that turns it
//! into bytes.
//!
//! Every non-2xx answer of the admin API is `{code, message, errorStack, apiError?, referer,
//! restOperationId, kind: ":resterrorresponse"}` with `code` equal to the HTTP status.

use std::sync::atomic::{AtomicU64, Ordering};

use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::{Value, json};

use portcullis_store::StoreError;

static OPERATION_ID: AtomicU64 = AtomicU64::new(1);

/// A management-plane error: the status, the message, the optional `apiError` number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MgmtError {
    pub status: StatusCode,
    pub message: String,
    pub api_error: Option<u64>,
    /// The client address, echoed as `referer` (filled in by the dispatcher).
    pub referer: String,
    /// Wrap the object in a one-element array (the form a failed login answers with).
    pub in_array: bool,
}

pub type MgmtResult<T> = Result<T, MgmtError>;

impl MgmtError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        MgmtError {
            status,
            message: message.into(),
            api_error: None,
            referer: String::new(),
            in_array: false,
        }
    }

    pub fn api(mut self, code: u64) -> Self {
        self.api_error = Some(code);
        self
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// `Found invalid JSON body in the request.` (400, apiError 1).
    pub fn invalid_json() -> Self {
        Self::bad_request("Found invalid JSON body in the request.").api(1)
    }

    /// The real "not found" message: `01020036:3: The requested Pool (/Common/x) was not found.`
    pub fn not_found(label: &str, full_path: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            format!("01020036:3: The requested {label} ({full_path}) was not found."),
        )
        .api(3)
    }

    /// The real duplicate message (409).
    pub fn exists(label: &str, full_path: &str, partition: &str) -> Self {
        Self::new(
            StatusCode::CONFLICT,
            format!(
                "01020066:3: The requested {label} ({full_path}) already exists in partition {partition}."
            ),
        )
        .api(3)
    }

    /// A path that names nothing the API knows.
    pub fn no_such_uri(path: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            format!(
                "URI path {path} not registered.  Please verify URI is supported and wait for /available suffix to be responsive."
            ),
        )
    }

    pub fn method_not_allowed(method: &str, path: &str) -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("Method {method} is not supported on {path}."),
        )
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// The JSON body (without the array wrapping).
    pub fn body(&self) -> Value {
        let mut v = json!({
            "code": self.status.as_u16(),
            "message": self.message,
            "errorStack": [],
            "referer": self.referer,
            "restOperationId": OPERATION_ID.fetch_add(1, Ordering::Relaxed),
            "kind": ":resterrorresponse",
        });
        if let (Some(code), Some(obj)) = (self.api_error, v.as_object_mut()) {
            obj.insert("apiError".into(), json!(code));
        }
        v
    }
}

impl From<StoreError> for MgmtError {
    fn from(e: StoreError) -> Self {
        MgmtError::internal(e.to_string())
    }
}

impl IntoResponse for MgmtError {
    fn into_response(self) -> Response {
        let body = if self.in_array {
            Value::Array(vec![self.body()])
        } else {
            self.body()
        };
        let mut res = (self.status, axum::Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            res.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                http::HeaderValue::from_static("Basic realm=\"Enterprise Manager\""),
            );
        }
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_object_has_every_part7_field() {
        let e = MgmtError::invalid_json();
        let b = e.body();
        assert_eq!(b["code"], 400);
        assert_eq!(b["message"], "Found invalid JSON body in the request.");
        assert_eq!(b["apiError"], 1);
        assert_eq!(b["kind"], ":resterrorresponse");
        assert!(b["errorStack"].as_array().is_some_and(|a| a.is_empty()));
        assert!(b["restOperationId"].as_u64().is_some());
        let nf = MgmtError::not_found("Pool", "/Common/x").body();
        assert_eq!(
            nf["message"],
            "01020036:3: The requested Pool (/Common/x) was not found."
        );
        assert_eq!(nf["code"], 404);
    }
}

/// Why a configuration file of a command (`serve --config`, `central --config`) cannot be used;
/// `Display` names the file, or the section of it, and the reason: what the command prints
/// before it exits.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: {source}", .path.display())]
    Read {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", .path.display())]
    Parse {
        path: std::path::PathBuf,
        source: serde_json::Error,
    },
    /// A section the file holds as free JSON (central's `mgmt`) is not what it configures.
    #[error("{section}: {source}")]
    Section {
        section: &'static str,
        source: serde_json::Error,
    },
}

impl ConfigError {
    /// Reads the JSON configuration file at `path`.
    pub fn read_json<T: serde::de::DeserializeOwned>(path: &std::path::Path) -> Result<T, Self> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| ConfigError::Parse {
            path: path.to_path_buf(),
            source,
        })
    }
}
