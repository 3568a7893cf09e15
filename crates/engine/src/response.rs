//! Block responses, rendered in one place and byte-exact: clients of the
//! systems we stand in for match on these bytes.
//!
//! The proxy turns a [`BlockResponse`] into a wire response without changing a byte of it.

use std::borrow::Cow;

use super::verdict::BlockReply;
use portcullis_support::{DECIMAL_MAX, SupportId, decimal, decimal_bytes};

/// The placeholder the declarative policy uses for the support id in custom pages.
pub const SUPPORT_ID_PLACEHOLDER: &str = "<%TS.request.ID()%>";

/// One field of a block response, name and value. The fields every page shares are the engine's
/// constants, borrowed: a blocked request allocates only what carries its support id.
pub type BlockField = (Cow<'static, str>, Cow<'static, str>);

/// A fully rendered block response: status, headers in order, body.
/// For gRPC the status fields are headers of a trailers-only response (HEADERS with END_STREAM).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockResponse {
    pub status: u16,
    pub headers: Vec<BlockField>,
    pub body: Vec<u8>,
    /// Known when rendered: every field name a lower-case token, no name twice, every value
    /// printable ASCII (the shipped pages), so a front-end may write the fields as they are
    /// without checking each byte. `false` says nothing either way.
    pub plain_fields: bool,
}

/// The default page of the systems we stand in for: what comes before the support id and after.
const PAGE_BEFORE_ID: &str = "<html><head><title>Request Rejected</title></head><body>The \
    requested URL was rejected. Please consult with your administrator.<br><br>Your support ID \
    is: ";
const PAGE_AFTER_ID: &str =
    "<br><br><a href='javascript:history.back();'>[Go Back]</a></body></html>";

/// The default page of the systems we stand in for, with the support id substituted.
pub fn default_page(id: SupportId) -> String {
    format!("{PAGE_BEFORE_ID}{id}{PAGE_AFTER_ID}")
}

/// The fields of a shipped page with a body of `len` bytes: its `content-type`, the fields that
/// keep it out of caches and end the connection, and its length.
fn no_cache_headers(content_type: &'static str, len: usize) -> Vec<BlockField> {
    vec![
        (Cow::Borrowed("content-type"), Cow::Borrowed(content_type)),
        (Cow::Borrowed("cache-control"), Cow::Borrowed("no-cache")),
        (Cow::Borrowed("pragma"), Cow::Borrowed("no-cache")),
        (Cow::Borrowed("connection"), Cow::Borrowed("close")),
        (Cow::Borrowed("content-length"), length_text(len)),
    ]
}

/// Percent-encodes a `grpc-message` value as the gRPC HTTP/2 protocol requires.
fn grpc_percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if (0x20..=0x7e).contains(&b) && b != b'%' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `before`, the support id in decimal, then `after`: the shipped pages, put together without the
/// formatter (they are rendered for every blocked request).
fn around_id(before: &str, id: SupportId, after: &str) -> Vec<u8> {
    let mut buf = [0; DECIMAL_MAX];
    // Bytes: the digits are ASCII, and the page is bytes; a `str` of them would be checked.
    let id = decimal_bytes(id.0, false, &mut buf);
    let mut out = Vec::with_capacity(before.len() + id.len() + after.len());
    out.extend_from_slice(before.as_bytes());
    out.extend_from_slice(id);
    out.extend_from_slice(after.as_bytes());
    out
}

/// `n` in decimal, as a `content-length` value.
fn length_text(n: usize) -> Cow<'static, str> {
    let mut buf = [0; DECIMAL_MAX];
    Cow::Owned(decimal(n as u64, false, &mut buf).to_string())
}

/// Renders `reply` for the request with support id `id`.
pub fn render(reply: &BlockReply, id: SupportId) -> BlockResponse {
    let subst = |s: &str| s.replace(SUPPORT_ID_PLACEHOLDER, &id.to_string());
    match reply {
        BlockReply::DefaultPage => {
            let body = around_id(PAGE_BEFORE_ID, id, PAGE_AFTER_ID);
            BlockResponse {
                status: 200,
                headers: no_cache_headers("text/html; charset=utf-8", body.len()),
                body,
                plain_fields: true,
            }
        }
        BlockReply::ApiJson => {
            let body = around_id("{\"supportID\":\"", id, "\"}");
            BlockResponse {
                status: 403,
                headers: no_cache_headers("application/json; charset=utf-8", body.len()),
                body,
                plain_fields: true,
            }
        }
        BlockReply::Grpc { status, message } => BlockResponse {
            status: 200,
            headers: vec![
                (
                    "content-type".into(),
                    "application/grpc; charset=utf-8".into(),
                ),
                ("grpc-status".into(), status.to_string().into()),
                (
                    "grpc-message".into(),
                    grpc_percent_encode(&subst(message)).into(),
                ),
                ("content-length".into(), "0".into()),
            ],
            body: Vec::new(),
            plain_fields: false,
        },
        BlockReply::Custom {
            status,
            headers,
            body,
        } => {
            let body = subst(body).into_bytes();
            let mut hs: Vec<BlockField> = headers
                .iter()
                .map(|(k, v)| (k.to_ascii_lowercase().into(), subst(v).into()))
                .collect();
            if !hs.iter().any(|(k, _)| k == "content-type") {
                hs.push(("content-type".into(), "text/html; charset=utf-8".into()));
            }
            hs.retain(|(k, _)| k != "content-length");
            hs.push(("content-length".into(), length_text(body.len())));
            BlockResponse {
                status: *status,
                headers: hs,
                body,
                plain_fields: false,
            }
        }
        BlockReply::Redirect { location } => BlockResponse {
            status: 302,
            headers: vec![
                ("location".into(), subst(location).into()),
                ("cache-control".into(), "no-cache".into()),
                ("pragma".into(), "no-cache".into()),
                ("connection".into(), "close".into()),
                ("content-length".into(), "0".into()),
            ],
            body: Vec::new(),
            plain_fields: false,
        },
    }
}

/// The default gRPC block reply: `grpc-status: 3` (INVALID_ARGUMENT) with the support id in the
/// message, so a gRPC client reports it the way it reports any refused call.
pub fn default_grpc_reply() -> BlockReply {
    BlockReply::Grpc {
        status: 3,
        message: format!("Request Rejected. Your support ID is: {SUPPORT_ID_PLACEHOLDER}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: SupportId = SupportId(11_241_918_873_745_059_631);

    fn header<'a>(r: &'a BlockResponse, name: &str) -> Option<&'a str> {
        r.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_ref())
    }

    #[test]
    fn api_json_is_byte_exact() {
        let r = render(&BlockReply::ApiJson, ID);
        assert_eq!(r.status, 403);
        assert_eq!(r.body, br#"{"supportID":"11241918873745059631"}"#);
        assert_eq!(
            header(&r, "content-type"),
            Some("application/json; charset=utf-8")
        );
        assert_eq!(header(&r, "cache-control"), Some("no-cache"));
        assert_eq!(header(&r, "pragma"), Some("no-cache"));
        assert_eq!(header(&r, "connection"), Some("close"));
    }

    #[test]
    fn default_page_matches_the_captured_reply_length() {
        // A captured reply of the system we stand in for: 247 bytes with a 20-digit id.
        let r = render(&BlockReply::DefaultPage, ID);
        assert_eq!(r.status, 200);
        assert_eq!(r.body.len(), 247);
        assert_eq!(header(&r, "content-length"), Some("247"));
        assert_eq!(
            String::from_utf8(r.body).unwrap(),
            "<html><head><title>Request Rejected</title></head><body>The requested URL was \
             rejected. Please consult with your administrator.<br><br>Your support ID is: \
             11241918873745059631<br><br><a href='javascript:history.back();'>[Go Back]</a>\
             </body></html>"
        );
    }

    #[test]
    fn grpc_is_trailers_only() {
        let r = render(&default_grpc_reply(), ID);
        assert_eq!(r.status, 200);
        assert!(r.body.is_empty());
        assert_eq!(header(&r, "grpc-status"), Some("3"));
        assert_eq!(header(&r, "content-length"), Some("0"));
        assert!(
            header(&r, "grpc-message")
                .unwrap()
                .contains("11241918873745059631")
        );
    }

    #[test]
    fn custom_pages_substitute_the_id() {
        let reply = BlockReply::Custom {
            status: 418,
            headers: vec![("X-Id".into(), SUPPORT_ID_PLACEHOLDER.into())],
            body: "id=<%TS.request.ID()%>".into(),
        };
        let r = render(&reply, ID);
        assert_eq!(r.status, 418);
        assert_eq!(r.body, b"id=11241918873745059631");
        assert_eq!(header(&r, "x-id"), Some("11241918873745059631"));
    }
}
