//! The violation catalogue: every `VIOL_*` name the engine can raise, and one recorded violation.

use serde::Serialize;

macro_rules! violations {
    ($($variant:ident => $name:literal),* $(,)?) => {
        /// A violation type, named as in the declarative policy's `blocking-settings.violations`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ViolationKind { $($variant),* }

        impl ViolationKind {
            /// Every violation kind, in declaration order.
            pub const ALL: &'static [ViolationKind] = &[$(ViolationKind::$variant),*];

            /// The policy name, e.g. `VIOL_URL`.
            pub fn name(self) -> &'static str {
                match self { $(ViolationKind::$variant => $name),* }
            }

            /// Looks a policy name up; `None` for names this engine does not know.
            pub fn from_name(name: &str) -> Option<Self> {
                match name { $($name => Some(ViolationKind::$variant),)* _ => None }
            }
        }
    };
}

violations! {
    AttackSignature => "VIOL_ATTACK_SIGNATURE",
    Url => "VIOL_URL",
    UrlLength => "VIOL_URL_LENGTH",
    UrlMetachar => "VIOL_URL_METACHAR",
    UrlContentType => "VIOL_URL_CONTENT_TYPE",
    Method => "VIOL_METHOD",
    Filetype => "VIOL_FILETYPE",
    Parameter => "VIOL_PARAMETER",
    ParameterDataType => "VIOL_PARAMETER_DATA_TYPE",
    ParameterNumericValue => "VIOL_PARAMETER_NUMERIC_VALUE",
    ParameterValueLength => "VIOL_PARAMETER_VALUE_LENGTH",
    ParameterLocation => "VIOL_PARAMETER_LOCATION",
    ParameterEmptyValue => "VIOL_PARAMETER_EMPTY_VALUE",
    ParameterRepeated => "VIOL_PARAMETER_REPEATED",
    ParameterStaticValue => "VIOL_PARAMETER_STATIC_VALUE",
    ParameterValueRegexp => "VIOL_PARAMETER_VALUE_REGEXP",
    ParameterArrayValue => "VIOL_PARAMETER_ARRAY_VALUE",
    ParameterValueBase64 => "VIOL_PARAMETER_VALUE_BASE64",
    ParameterNameMetachar => "VIOL_PARAMETER_NAME_METACHAR",
    ParameterValueMetachar => "VIOL_PARAMETER_VALUE_METACHAR",
    ParameterMultipartNullValue => "VIOL_PARAMETER_MULTIPART_NULL_VALUE",
    MandatoryParameter => "VIOL_MANDATORY_PARAMETER",
    MandatoryRequestBody => "VIOL_MANDATORY_REQUEST_BODY",
    MandatoryHeader => "VIOL_MANDATORY_HEADER",
    HeaderLength => "VIOL_HEADER_LENGTH",
    HeaderMetachar => "VIOL_HEADER_METACHAR",
    HeaderRepeated => "VIOL_HEADER_REPEATED",
    CookieLength => "VIOL_COOKIE_LENGTH",
    CookieMalformed => "VIOL_COOKIE_MALFORMED",
    CookieModified => "VIOL_COOKIE_MODIFIED",
    CookieExpired => "VIOL_COOKIE_EXPIRED",
    AsmCookieModified => "VIOL_ASM_COOKIE_MODIFIED",
    QueryStringLength => "VIOL_QUERY_STRING_LENGTH",
    PostDataLength => "VIOL_POST_DATA_LENGTH",
    RequestLength => "VIOL_REQUEST_LENGTH",
    RequestMaxLength => "VIOL_REQUEST_MAX_LENGTH",
    JsonMalformed => "VIOL_JSON_MALFORMED",
    JsonFormat => "VIOL_JSON_FORMAT",
    JsonSchema => "VIOL_JSON_SCHEMA",
    XmlMalformed => "VIOL_XML_MALFORMED",
    XmlFormat => "VIOL_XML_FORMAT",
    XmlSchema => "VIOL_XML_SCHEMA",
    GrpcMalformed => "VIOL_GRPC_MALFORMED",
    GrpcFormat => "VIOL_GRPC_FORMAT",
    GrpcMethod => "VIOL_GRPC_METHOD",
    GraphqlMalformed => "VIOL_GRAPHQL_MALFORMED",
    GraphqlFormat => "VIOL_GRAPHQL_FORMAT",
    GraphqlIntrospectionQuery => "VIOL_GRAPHQL_INTROSPECTION_QUERY",
    Evasion => "VIOL_EVASION",
    HttpProtocol => "VIOL_HTTP_PROTOCOL",
    Encoding => "VIOL_ENCODING",
    HttpResponseStatus => "VIOL_HTTP_RESPONSE_STATUS",
    RatingThreat => "VIOL_RATING_THREAT",
    RatingNeedExamination => "VIOL_RATING_NEED_EXAMINATION",
    FileUpload => "VIOL_FILE_UPLOAD",
    FileUploadInBody => "VIOL_FILE_UPLOAD_IN_BODY",
    MultipartMalformed => "VIOL_MULTIPART_MALFORMED",
    ThreatCampaign => "VIOL_THREAT_CAMPAIGN",
    BotClient => "VIOL_BOT_CLIENT",
    Geolocation => "VIOL_GEOLOCATION",
    BlacklistedIp => "VIOL_BLACKLISTED_IP",
    DataGuard => "VIOL_DATA_GUARD",
    Csrf => "VIOL_CSRF",
    CsrfExpired => "VIOL_CSRF_EXPIRED",
    BruteForce => "VIOL_BRUTE_FORCE",
    DynamicSession => "VIOL_DYNAMIC_SESSION",
    LoginUrlBypassed => "VIOL_LOGIN_URL_BYPASSED",
    LoginUrlExpired => "VIOL_LOGIN_URL_EXPIRED",
    Redirect => "VIOL_REDIRECT",
    CrossOriginRequest => "VIOL_CROSS_ORIGIN_REQUEST",
    ServerSideHost => "VIOL_SERVER_SIDE_HOST",
    Websocket => "VIOL_WEBSOCKET_BAD_REQUEST",
    Rule => "VIOL_RULE",
    AccessUnauthorized => "VIOL_ACCESS_UNAUTHORIZED",
    AccessForbidden => "VIOL_ACCESS_FORBIDDEN",
    RateLimit => "VIOL_RATE_LIMIT",
}

impl Serialize for ViolationKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Where in the request a violation was found, as security events name it (`context` in their
/// JSON). It is not the signatures' `Target`, though many names are alike: a target says which
/// values a signature is matched against (a parameter's name apart from its value, the query
/// string whole, an upload's file name), while a context says where any violation is reported,
/// including the request as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Context {
    Request,
    Url,
    Query,
    Parameter,
    Header,
    Cookie,
    Body,
    Json,
    Xml,
    Grpc,
}

/// Longest value excerpt kept in a violation (bytes), so events stay small.
pub const SNIPPET_MAX: usize = 200;

/// One violation found in a request, with what the event log needs to explain it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Violation {
    pub kind: ViolationKind,
    pub context: Context,
    /// The entity involved: parameter, header or cookie name, JSON pointer, gRPC field path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A bounded excerpt of the offending value (at most [`SNIPPET_MAX`] bytes, lossy UTF-8).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub snippet: String,
    /// Human-readable detail, e.g. `expected integer`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// Attack signatures that matched (empty for other violations).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signature_ids: Vec<u32>,
    /// Raised by an entity in staging (`performStaging`): reported, never blocks, not rated.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub staged: bool,
}

impl Violation {
    pub fn new(kind: ViolationKind, context: Context) -> Self {
        Violation {
            kind,
            context,
            name: None,
            snippet: String::new(),
            detail: String::new(),
            signature_ids: Vec::new(),
            staged: false,
        }
    }

    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = detail.into();
        self
    }

    /// The detail of a metacharacter violation: the disallowed byte found.
    pub fn metachar(self, byte: u8) -> Self {
        self.detail(format!("metacharacter 0x{byte:02x}"))
    }

    /// Keeps a bounded excerpt of `value`, cut on a character boundary.
    pub fn snippet(mut self, value: &[u8]) -> Self {
        let text = String::from_utf8_lossy(&value[..value.len().min(SNIPPET_MAX)]);
        let mut end = text.len().min(SNIPPET_MAX);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.snippet = text[..end].to_string();
        self
    }

    pub fn signatures(mut self, ids: Vec<u32>) -> Self {
        self.signature_ids = ids;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in ViolationKind::ALL {
            assert_eq!(ViolationKind::from_name(k.name()), Some(*k));
        }
        assert_eq!(ViolationKind::from_name("VIOL_NOPE"), None);
    }

    #[test]
    fn snippet_is_bounded_and_valid_utf8() {
        let v =
            Violation::new(ViolationKind::Url, Context::Url).snippet("é".repeat(300).as_bytes());
        assert!(v.snippet.len() <= SNIPPET_MAX);
    }
}
