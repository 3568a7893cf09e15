//! gRPC deadlines. A client sends its deadline in `grpc-timeout` (forwarded to the upstream, which
//! enforces it too); the proxy waits for the upstream's answer no longer than that, so a call to
//! a member that hangs ends when the client said, with `DEADLINE_EXCEEDED` (grpc-status 4) in a
//! trailers-only response, instead of after the proxy's own upstream response timeout.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use http_body_util::{BodyExt, Empty};

use super::upstream::ProxyBody;

/// The request's `grpc-timeout`: 1 to 8 digits and a unit (`H`, `M`, `S`, `m`, `u`, `n`), as the
/// gRPC over HTTP/2 protocol writes it; `None` when absent or malformed (then it is not a deadline).
pub fn grpc_timeout(headers: &HeaderMap) -> Option<Duration> {
    let v = headers.get("grpc-timeout")?.as_bytes();
    let (digits, unit) = v.split_at(v.len().checked_sub(1)?);
    if digits.is_empty() || digits.len() > 8 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: u64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some(match unit {
        b"H" => Duration::from_secs(n * 3600),
        b"M" => Duration::from_secs(n * 60),
        b"S" => Duration::from_secs(n),
        b"m" => Duration::from_millis(n),
        b"u" => Duration::from_micros(n),
        b"n" => Duration::from_nanos(n),
        _ => return None,
    })
}

/// The answer to a call whose deadline passed before the upstream answered.
pub fn deadline_exceeded() -> Response<ProxyBody> {
    let mut res = Response::new(Empty::<Bytes>::new().map_err(|e| match e {}).boxed_unsync());
    *res.status_mut() = StatusCode::OK;
    let h = res.headers_mut();
    h.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/grpc"),
    );
    h.insert("grpc-status", HeaderValue::from_static("4"));
    h.insert(
        "grpc-message",
        HeaderValue::from_static("Deadline Exceeded"),
    );
    h.insert(http::header::CONTENT_LENGTH, HeaderValue::from_static("0"));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeout(v: &str) -> Option<Duration> {
        let mut h = HeaderMap::new();
        h.insert("grpc-timeout", HeaderValue::from_str(v).expect("value"));
        grpc_timeout(&h)
    }

    #[test]
    fn grpc_timeouts_are_read_in_every_unit_and_bad_ones_ignored() {
        assert_eq!(timeout("2H"), Some(Duration::from_secs(7200)));
        assert_eq!(timeout("3M"), Some(Duration::from_secs(180)));
        assert_eq!(timeout("10S"), Some(Duration::from_secs(10)));
        assert_eq!(timeout("250m"), Some(Duration::from_millis(250)));
        assert_eq!(
            timeout("99999999u"),
            Some(Duration::from_micros(99_999_999))
        );
        assert_eq!(timeout("5n"), Some(Duration::from_nanos(5)));
        for bad in [
            "",
            "m",
            "123456789S",
            "1.5S",
            "-1S",
            "10s",
            "10",
            "S10",
            "1 S",
        ] {
            assert_eq!(timeout(bad), None, "{bad:?}");
        }
        assert_eq!(grpc_timeout(&HeaderMap::new()), None);
    }
}
