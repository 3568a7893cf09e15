//! Credential extraction: the `Authorization` header (`Bearer`, `Basic`; RFC 9110 11.6.2,
//! RFC 6750 2.1, RFC 7617) and API keys from a header or a query parameter. Parsing only: nothing
//! here checks a credential. Parsers never panic and never copy a secret into an error message.

use base64::Engine as _;

/// Longest credential accepted (bytes); longer ones are refused before any parsing or hashing.
pub const MAX_CREDENTIAL_BYTES: usize = 8192;

/// A parsed `Authorization` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authorization {
    /// `Bearer <token68>`.
    Bearer(String),
    /// `Basic base64(user:password)`, decoded.
    Basic { user: String, password: String },
    /// Another scheme (named, lower-cased); never accepted by a method.
    Other(String),
}

/// Why a credential could not be read. The text never contains the credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    #[error("the credential is longer than {MAX_CREDENTIAL_BYTES} bytes")]
    TooLong,
    #[error("the Authorization header is not valid UTF-8 text")]
    NotText,
    #[error("the Authorization header has no credentials after the scheme")]
    Empty,
    #[error("the bearer token is not a token68 value")]
    BadToken,
    #[error("the Basic credentials are not base64 of user:password")]
    BadBasic,
    #[error("the credential is sent more than once")]
    Repeated,
}

fn is_token68(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    !body.is_empty()
        && body.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        })
}

/// Parses one `Authorization` header value.
pub fn parse_authorization(value: &[u8]) -> Result<Authorization, CredentialError> {
    if value.len() > MAX_CREDENTIAL_BYTES {
        return Err(CredentialError::TooLong);
    }
    let text = std::str::from_utf8(value).map_err(|_| CredentialError::NotText)?;
    let text = text.trim_matches(|c| c == ' ' || c == '\t');
    let (scheme, rest) = text
        .split_once([' ', '\t'])
        .map_or((text, ""), |(s, r)| (s, r.trim_start_matches([' ', '\t'])));
    let scheme = scheme.to_ascii_lowercase();
    match scheme.as_str() {
        "bearer" => {
            if rest.is_empty() {
                return Err(CredentialError::Empty);
            }
            if !is_token68(rest) {
                return Err(CredentialError::BadToken);
            }
            Ok(Authorization::Bearer(rest.to_string()))
        }
        "basic" => {
            if rest.is_empty() {
                return Err(CredentialError::Empty);
            }
            let raw = base64::engine::general_purpose::STANDARD
                .decode(rest)
                .map_err(|_| CredentialError::BadBasic)?;
            let text = String::from_utf8(raw).map_err(|_| CredentialError::BadBasic)?;
            let (user, password) = text.split_once(':').ok_or(CredentialError::BadBasic)?;
            if user.chars().any(char::is_control) {
                return Err(CredentialError::BadBasic);
            }
            Ok(Authorization::Basic {
                user: user.to_string(),
                password: password.to_string(),
            })
        }
        _ => Ok(Authorization::Other(scheme)),
    }
}

/// The single `Authorization` header of a request: `None` when absent; an error when repeated
/// (a request with two is ambiguous and refused) or unreadable.
pub fn authorization(headers: &crate::Fields) -> Option<Result<Authorization, CredentialError>> {
    let mut all = headers.get_all(http::header::AUTHORIZATION);
    let first = all.next()?;
    if all.next().is_some() {
        return Some(Err(CredentialError::Repeated));
    }
    Some(parse_authorization(first.as_bytes()))
}

/// An API key from header `name` (one value; repeated is an error).
pub fn header_key(headers: &crate::Fields, name: &str) -> Option<Result<String, CredentialError>> {
    let mut all = headers.get_all(name);
    let first = all.next()?;
    if all.next().is_some() {
        return Some(Err(CredentialError::Repeated));
    }
    let v = first.as_bytes();
    if v.len() > MAX_CREDENTIAL_BYTES {
        return Some(Err(CredentialError::TooLong));
    }
    match std::str::from_utf8(v) {
        Ok(s) if !s.trim().is_empty() => Some(Ok(s.trim().to_string())),
        Ok(_) => Some(Err(CredentialError::Empty)),
        Err(_) => Some(Err(CredentialError::NotText)),
    }
}

/// An API key from query parameter `name` (percent-decoded; repeated is an error).
pub fn query_key(query: Option<&str>, name: &str) -> Option<Result<String, CredentialError>> {
    let q = query?;
    if q.len() > MAX_CREDENTIAL_BYTES * 4 {
        return Some(Err(CredentialError::TooLong));
    }
    let mut found: Option<String> = None;
    for (k, v) in form_urlencoded::parse(q.as_bytes()) {
        if k == name {
            if found.is_some() {
                return Some(Err(CredentialError::Repeated));
            }
            found = Some(v.into_owned());
        }
    }
    let v = found?;
    if v.len() > MAX_CREDENTIAL_BYTES {
        return Some(Err(CredentialError::TooLong));
    }
    if v.is_empty() {
        return Some(Err(CredentialError::Empty));
    }
    Some(Ok(v))
}

/// Removes query parameter `name` from `query` (used when credentials are not forwarded);
/// `None` when nothing is left.
pub fn strip_query_key(query: &str, name: &str) -> Option<String> {
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            let k = pair.split('=').next().unwrap_or_default();
            let k: String = form_urlencoded::parse(format!("{k}=").as_bytes())
                .next()
                .map(|(k, _)| k.into_owned())
                .unwrap_or_default();
            k != name
        })
        .collect();
    if kept.is_empty() {
        None
    } else {
        Some(kept.join("&"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_and_basic() {
        assert_eq!(
            parse_authorization(b"Bearer abc.def-ghi_~+/=="),
            Ok(Authorization::Bearer("abc.def-ghi_~+/==".into()))
        );
        assert_eq!(
            parse_authorization(b"bEaReR   tok"),
            Ok(Authorization::Bearer("tok".into()))
        );
        assert_eq!(
            parse_authorization(b"Basic YWxpY2U6czNjcjp0"),
            Ok(Authorization::Basic {
                user: "alice".into(),
                password: "s3cr:t".into()
            })
        );
        assert_eq!(
            parse_authorization(b"Digest x=1"),
            Ok(Authorization::Other("digest".into()))
        );
    }

    #[test]
    fn malformed_credentials_are_errors() {
        assert_eq!(parse_authorization(b"Bearer"), Err(CredentialError::Empty));
        assert_eq!(
            parse_authorization(b"Bearer a b"),
            Err(CredentialError::BadToken)
        );
        assert_eq!(
            parse_authorization(b"Basic !!!"),
            Err(CredentialError::BadBasic)
        );
        assert_eq!(
            parse_authorization(b"Basic YWxpY2U="),
            Err(CredentialError::BadBasic)
        );
        assert_eq!(
            parse_authorization(&[b'a'; MAX_CREDENTIAL_BYTES + 1]),
            Err(CredentialError::TooLong)
        );
        assert_eq!(
            parse_authorization(b"Bearer \xff"),
            Err(CredentialError::NotText)
        );
    }

    #[test]
    fn api_keys_from_header_and_query() {
        let mut h = crate::Fields::default();
        h.insert("x-api-key", b"k1");
        assert_eq!(header_key(&h, "x-api-key"), Some(Ok("k1".into())));
        h.append("x-api-key", b"k2");
        assert_eq!(
            header_key(&h, "x-api-key"),
            Some(Err(CredentialError::Repeated))
        );
        assert_eq!(
            query_key(Some("a=1&api_key=k%2B1"), "api_key"),
            Some(Ok("k+1".into()))
        );
        assert_eq!(query_key(Some("a=1"), "api_key"), None);
        assert_eq!(
            query_key(Some("api_key=1&api_key=2"), "api_key"),
            Some(Err(CredentialError::Repeated))
        );
        assert_eq!(
            strip_query_key("a=1&api_key=x&b=2", "api_key"),
            Some("a=1&b=2".into())
        );
        assert_eq!(strip_query_key("api_key=x", "api_key"), None);
    }
}
