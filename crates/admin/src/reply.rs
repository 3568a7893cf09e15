//! A handler's successful answer: a status, a JSON body (or none, or raw bytes) and headers.

use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderName, HeaderValue, StatusCode};
use serde_json::Value;

/// What a handler answers when it succeeds.
pub struct Reply {
    pub status: StatusCode,
    pub body: Option<Value>,
    pub raw: Option<Bytes>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl Reply {
    pub fn json(v: Value) -> Self {
        Reply {
            status: StatusCode::OK,
            body: Some(v),
            raw: None,
            headers: Vec::new(),
        }
    }
    pub fn status(mut self, s: StatusCode) -> Self {
        self.status = s;
        self
    }
    pub fn empty(status: StatusCode) -> Self {
        Reply {
            status,
            body: None,
            raw: None,
            headers: Vec::new(),
        }
    }
    pub fn bytes(b: Bytes) -> Self {
        Reply {
            status: StatusCode::OK,
            body: None,
            raw: Some(b),
            headers: Vec::new(),
        }
    }
    pub fn header(mut self, name: HeaderName, value: &str) -> Self {
        if let Ok(v) = HeaderValue::from_str(value) {
            self.headers.push((name, v));
        }
        self
    }
}

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        let mut res = match (self.body, self.raw) {
            (Some(v), _) => (self.status, axum::Json(v)).into_response(),
            (None, Some(b)) => (self.status, b).into_response(),
            (None, None) => self.status.into_response(),
        };
        for (k, v) in self.headers {
            res.headers_mut().insert(k, v);
        }
        res
    }
}
