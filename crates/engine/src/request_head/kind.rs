//! What a request field's name means to the checks and to the proxy ([`FieldKind`]), told once
//! when [`super::Fields`] first stores the name: the phase-1 checks, the hop-by-hop bookkeeping
//! and the upstream head then compare a byte instead of matching the name again for each reader.

/// The request field names read by name somewhere on a request's path; every other is `Other`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FieldKind {
    #[default]
    Other,
    Host,
    ContentLength,
    ContentType,
    TransferEncoding,
    ContentEncoding,
    ContentRange,
    RequestedWith,
    UserAgent,
    Accept,
    AcceptEncoding,
    Range,
    Expect,
    /// `x-http-method-override`, `x-http-method`, `x-method-override`: the method-override
    /// fields, in the order the method-override check reads them.
    HttpMethodOverride,
    HttpMethod,
    MethodOverride,
    Connection,
    Te,
    Trailer,
    Cookie,
    Referer,
    XForwardedFor,
    /// A credential, checked on every request (never answered from a memo): its entity is
    /// found by kind, not by name.
    Authorization,
    /// Never forwarded, like `Connection` and `Transfer-Encoding` (RFC 9110 7.6.1), whatever
    /// the `Connection` field names: `keep-alive`, `proxy-connection`, `proxy-authenticate`,
    /// `proxy-authorization`, `upgrade`, `http2-settings`.
    HopByHop,
}

impl FieldKind {
    /// How many kinds there are (`kind as usize` is below it).
    pub const COUNT: usize = FieldKind::HopByHop as usize + 1;

    /// Every kind with one name, and that name ([`Self::of`] gives the kind back).
    pub const NAMED: [(FieldKind, &'static str); 22] = [
        (FieldKind::Host, "host"),
        (FieldKind::ContentLength, "content-length"),
        (FieldKind::ContentType, "content-type"),
        (FieldKind::TransferEncoding, "transfer-encoding"),
        (FieldKind::ContentEncoding, "content-encoding"),
        (FieldKind::ContentRange, "content-range"),
        (FieldKind::RequestedWith, "x-requested-with"),
        (FieldKind::UserAgent, "user-agent"),
        (FieldKind::Accept, "accept"),
        (FieldKind::AcceptEncoding, "accept-encoding"),
        (FieldKind::Range, "range"),
        (FieldKind::Expect, "expect"),
        (FieldKind::HttpMethodOverride, "x-http-method-override"),
        (FieldKind::HttpMethod, "x-http-method"),
        (FieldKind::MethodOverride, "x-method-override"),
        (FieldKind::Connection, "connection"),
        (FieldKind::Te, "te"),
        (FieldKind::Trailer, "trailer"),
        (FieldKind::Cookie, "cookie"),
        (FieldKind::Referer, "referer"),
        (FieldKind::XForwardedFor, "x-forwarded-for"),
        (FieldKind::Authorization, "authorization"),
    ];

    /// The kind of a lower-case field name.
    pub fn of(lower: &str) -> FieldKind {
        use FieldKind as K;
        match lower {
            "host" => K::Host,
            "content-length" => K::ContentLength,
            "content-type" => K::ContentType,
            "transfer-encoding" => K::TransferEncoding,
            "content-encoding" => K::ContentEncoding,
            "content-range" => K::ContentRange,
            "x-requested-with" => K::RequestedWith,
            "user-agent" => K::UserAgent,
            "accept" => K::Accept,
            "accept-encoding" => K::AcceptEncoding,
            "range" => K::Range,
            "expect" => K::Expect,
            "x-http-method-override" => K::HttpMethodOverride,
            "x-http-method" => K::HttpMethod,
            "x-method-override" => K::MethodOverride,
            "connection" => K::Connection,
            "te" => K::Te,
            "trailer" => K::Trailer,
            "cookie" => K::Cookie,
            "referer" => K::Referer,
            "x-forwarded-for" => K::XForwardedFor,
            "authorization" => K::Authorization,
            "keep-alive"
            | "proxy-connection"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "upgrade"
            | "http2-settings" => K::HopByHop,
            _ => K::Other,
        }
    }
}
