//! The validated model: the merged declaration with every default applied, every enumeration and
//! cross-reference checked, and errors named by JSON path.

use std::collections::HashMap;

use super::lenient::Limit;
use super::sections;
use super::templates::TemplateId;
use crate::policy::PolicyError;
use crate::policy::decl::{self, EnforcementMode, EntityType};
use crate::violation::ViolationKind;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Setting {
    pub alarm: bool,
    pub block: bool,
}

/// Evasion sub-checks (`blocking-settings.evasions[].description`).
pub const EVASIONS: &[&str] = &[
    "%u decoding",
    "Apache whitespace",
    "Bad unescape",
    "Bare byte decoding",
    "Directory traversals",
    "IIS Unicode codepoints",
    "IIS backslashes",
    "Multiple decoding",
    "Multiple slashes",
    "Semicolon path parameters",
    "NGINX whitespace",
    "Multiple slashes in URL",
];

/// HTTP-protocol sub-checks (`blocking-settings.http-protocols[].description`).
pub const HTTP_CHECKS: &[&str] = &[
    "POST request with Content-Length: 0",
    "Multiple host headers",
    "Host header contains IP address",
    "Null in request",
    "Header name with no header value",
    "Chunked request with Content-Length header",
    "Check maximum number of cookies",
    "Check maximum number of parameters",
    "Check maximum number of headers",
    "Body in GET or HEAD requests",
    "Bad multipart/form-data request parsing",
    "Bad multipart parameters parsing",
    "Unescaped space in URL",
    "High ASCII characters in headers",
    "Bad HTTP version",
    "Bad host header value",
    "CRLF characters before request start",
    "Content length should be a positive number",
    "Several Content-Length headers",
    "No Host header in HTTP/1.1 request",
    "Unparsable request content",
    "Empty User-Agent or Accept header",
    "Malformed Range header",
    "Unknown expectation",
    "Absolute URI names another host",
    "Unknown Accept-Encoding",
    "Control character in request",
    "Content header without a body",
];

#[derive(Clone, Debug)]
pub struct Model {
    pub name: String,
    pub template: TemplateId,
    pub blocking: bool,
    pub case_insensitive: bool,
    pub violations: HashMap<ViolationKind, Setting>,
    pub evasions: HashMap<&'static str, bool>,
    pub max_decoding_passes: u32,
    pub http_checks: HashMap<&'static str, bool>,
    pub max_headers: u64,
    pub max_params: u64,
    pub max_cookies: u64,
    pub decl: decl::Policy,
    pub max_header_length: Limit,
    pub max_cookie_length: Limit,
    pub trust_xff: bool,
    pub xff_headers: Vec<String>,
    pub staging: bool,
    pub staging_cutoff: Option<String>,
    pub sensitive: Vec<String>,
    /// `applicationLanguage`: what VIOL_ENCODING validates against.
    pub charset: crate::policy::checks::encoding::Charset,
}

/// What `policy check` prints.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub name: String,
    pub template: String,
    pub mode: String,
    /// URLs enforced: the policy's own plus the operations of its OpenAPI spec.
    pub urls: usize,
    /// Of those, the operations of the OpenAPI spec (the rows of `policy check --urls`).
    pub api_operations: usize,
    pub parameters: usize,
    pub methods: usize,
    pub signature_sets: usize,
    pub signatures_enabled: usize,
}

impl Model {
    pub fn build(
        d: decl::Policy,
        template: TemplateId,
        body: &decl::Policy,
        warnings: &mut Vec<String>,
    ) -> Result<Model, PolicyError> {
        let name = body
            .name
            .cloned()
            .or_else(|| d.name.cloned())
            .unwrap_or_default();
        if name.is_empty() {
            return Err(PolicyError::invalid(
                "policy.name",
                "missing (every policy needs a name)",
            ));
        }
        super::validate::check_body_entities(body)?;
        for (i, u) in body.urls.iter().flatten().enumerate() {
            if let Some(n) = u.name.as_ref()
                && u.kind.unwrap_or(EntityType::Explicit) == EntityType::Explicit
                && !n.starts_with('/')
            {
                warnings.push(format!("policy.urls[{i}].name: explicit URL \"{n}\" does not start with \"/\"; read as \"/{n}\""));
            }
        }
        let mut violations = HashMap::new();
        let bs = d.blocking_settings.clone().unwrap_or_default();
        // `d` is the merged policy (template entries first): name the entry by its index in
        // the user's own document when it comes from there.
        let in_body = |name: &str| {
            body.blocking_settings
                .as_ref()
                .and_then(|b| b.violations.as_ref())
                .and_then(|vs| vs.iter().position(|v| v.name == name))
        };
        for (merged_index, v) in bs.violations.iter().flatten().enumerate() {
            let i = in_body(&v.name).unwrap_or(merged_index);
            match ViolationKind::from_name(&v.name) {
                Some(k) => {
                    violations.insert(k, Setting { alarm: v.alarm.or(false), block: v.block.or(false) });
                }
                None if KNOWN_UNENFORCED_VIOLATIONS.contains(&v.name.as_str()) => {}
                None if v.name.starts_with("VIOL_") => warnings.push(format!(
                    "policy.blocking-settings.violations[{i}].name: violation \"{}\" is not raised by this engine; setting ignored{}",
                    v.name,
                    suggest_violation(&v.name)
                )),
                None => {
                    return Err(PolicyError::invalid(format!("policy.blocking-settings.violations[{i}].name"), format!("unknown violation \"{}\" (expected a VIOL_* name){}", v.name,
                        suggest_violation(&v.name))));
                }
            }
        }
        if violations.contains_key(&ViolationKind::AttackSignature) {
            warnings.push(
                "policy.blocking-settings.violations: VIOL_ATTACK_SIGNATURE is driven by signature sets; its setting is ignored".into(),
            );
        }
        let mut evasions = HashMap::new();
        let mut passes = 2;
        for (i, e) in bs.evasions.iter().flatten().enumerate() {
            let Some(name) = EVASIONS.iter().find(|n| **n == e.description) else {
                return Err(PolicyError::invalid(
                    format!("policy.blocking-settings.evasions[{i}].description"),
                    format!(
                        "unknown value \"{}\" (expected one of {})",
                        e.description,
                        EVASIONS.join(", ")
                    ),
                ));
            };
            evasions.insert(*name, e.enabled.or(false));
            if let Some(p) = e.max_decoding_passes.get() {
                if !(2..=5).contains(&p) {
                    return Err(PolicyError::invalid(
                        format!("policy.blocking-settings.evasions[{i}].maxDecodingPasses"),
                        format!("{p} out of range (expected 2 to 5)"),
                    ));
                }
                passes = p as u32;
            }
        }
        let mut http_checks = HashMap::new();
        let (mut max_headers, mut max_params, mut max_cookies) = (50, 500, 100);
        for (i, h) in bs.http_protocols.iter().flatten().enumerate() {
            let Some(name) = HTTP_CHECKS.iter().find(|n| **n == h.description) else {
                return Err(PolicyError::invalid(
                    format!("policy.blocking-settings.http-protocols[{i}].description"),
                    format!(
                        "unknown value \"{}\" (expected one of {})",
                        h.description,
                        HTTP_CHECKS.join(", ")
                    ),
                ));
            };
            http_checks.insert(*name, h.enabled.or(false));
            max_headers = h.max_headers.or(max_headers);
            max_params = h.max_params.or(max_params);
            max_cookies = h.max_cookies.or(max_cookies);
        }
        let general = d.general.clone().unwrap_or_default();
        let sigset = d.signature_settings.clone().unwrap_or_default();
        let staging_cutoff = sigset
            .staging_certification_datetime
            .cloned()
            .filter(|s| !s.is_empty());
        let staging = sigset.signature_staging.or(false) && staging_cutoff.is_some()
            || body
                .signature_settings
                .as_ref()
                .and_then(|s| s.signature_staging.get())
                == Some(true);
        let mut sensitive: Vec<String> = d
            .sensitive_parameters
            .iter()
            .flatten()
            .filter_map(|n| n.name.cloned())
            .collect();
        for p in d.parameters.iter().flatten() {
            if p.sensitive_parameter.or(false)
                && let Some(n) = p.name.as_ref()
            {
                sensitive.push(n.clone());
            }
        }
        sensitive.push("password".into());
        let charset = crate::policy::checks::encoding::Charset::from_decl(&d, warnings)?;
        Ok(Model {
            name,
            template,
            blocking: d.enforcement_mode.unwrap_or(EnforcementMode::Blocking)
                == EnforcementMode::Blocking,
            case_insensitive: d.case_insensitive.or(false),
            violations,
            evasions,
            max_decoding_passes: passes,
            http_checks,
            max_headers,
            max_params,
            max_cookies,
            max_header_length: d
                .header_settings
                .as_ref()
                .and_then(|h| h.maximum_http_header_length)
                .unwrap_or(Limit::Any),
            max_cookie_length: d
                .cookie_settings
                .as_ref()
                .and_then(|h| h.maximum_cookie_header_length)
                .unwrap_or(Limit::Any),
            trust_xff: general.trust_xff.or(false),
            xff_headers: general.custom_xff_headers.unwrap_or_default(),
            staging,
            staging_cutoff,
            sensitive,
            charset,
            decl: d,
        })
    }

    pub fn summary(&self) -> Summary {
        let d = &self.decl;
        Summary {
            name: self.name.clone(),
            template: self.template.name().to_string(),
            mode: if self.blocking {
                "blocking"
            } else {
                "transparent"
            }
            .to_string(),
            urls: d.urls.as_ref().map_or(0, Vec::len),
            api_operations: 0,
            parameters: d.parameters.as_ref().map_or(0, Vec::len),
            methods: d.methods.as_ref().map_or(0, Vec::len),
            signature_sets: d.signature_sets.as_ref().map_or(0, Vec::len),
            signatures_enabled: 0,
        }
    }

    pub fn setting(&self, k: ViolationKind) -> Setting {
        self.violations.get(&k).copied().unwrap_or(Setting {
            alarm: true,
            block: false,
        })
    }
}

/// Violation names of the format that this engine accepts but never raises.
const KNOWN_UNENFORCED_VIOLATIONS: &[&str] = &[
    "VIOL_ACCESS_INVALID",
    "VIOL_ACCESS_MALFORMED",
    "VIOL_ACCESS_MISSING",
    "VIOL_GRAPHQL_ERROR_RESPONSE",
    "VIOL_LOGIN",
    "VIOL_MALICIOUS_IP",
    "VIOL_HOSTNAME",
    "VIOL_HOSTNAME_MISMATCH",
    "VIOL_FLOW",
    "VIOL_FLOW_DISALLOWED_INPUT",
    "VIOL_FLOW_ENTRY_POINT",
    "VIOL_FLOW_MANDATORY_PARAMS",
    "VIOL_SESSION_AWARENESS",
    "VIOL_HTTP_SANITY_CHECK_FAILED",
    "VIOL_REQUEST",
    "VIOL_XML_SCHEMA",
    "VIOL_XML_SOAP_ATTACHMENT",
    "VIOL_XML_SOAP_METHOD",
    "VIOL_XML_WEB_SERVICES_SECURITY",
    "VIOL_BROWSER",
    "VIOL_DYNAMIC_SESSION",
    "VIOL_HEADER_LENGTH",
    "VIOL_PLAINTEXT_FORMAT",
    "VIOL_GWT_FORMAT",
    "VIOL_GWT_MALFORMED",
    "VIOL_CONVICTION",
    "VIOL_MALICIOUS_DEVICE",
    "VIOL_WEBSOCKET_BINARY_MESSAGE_LENGTH",
    "VIOL_WEBSOCKET_BINARY_MESSAGE_NOT_ALLOWED",
    "VIOL_WEBSOCKET_EXTENSION",
    "VIOL_WEBSOCKET_FRAMES_PER_MESSAGE_COUNT",
    "VIOL_WEBSOCKET_FRAME_LENGTH",
    "VIOL_WEBSOCKET_FRAME_MASKING",
    "VIOL_WEBSOCKET_FRAMING_PROTOCOL",
    "VIOL_WEBSOCKET_TEXT_MESSAGE_NOT_ALLOWED",
    "VIOL_WEBSOCKET_TEXT_NULL_VALUE",
    "VIOL_BLOCKING_CONDITION",
    "VIOL_GRPC_METHOD_NOT_FOUND",
    "VIOL_URL_CONTENT_TYPE",
    "VIOL_HTTP_RESPONSE_STATUS",
];

fn suggest_violation(name: &str) -> String {
    sections::suggest(name, ViolationKind::ALL.iter().map(|k| k.name()))
        .map(|s| format!(" (did you mean {s}?)"))
        .unwrap_or_default()
}
