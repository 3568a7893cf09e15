//! The section catalogue of the declarative policy: which sections exist, which this engine enforces,
//! and the merge key of each entity list.

use serde_json::Value;

/// Top-level members of a policy read by this engine besides the entity sections.
const MEMBERS: &[&str] = &[
    "name",
    "description",
    "fullPath",
    "template",
    "enforcementMode",
    "applicationLanguage",
    "caseInsensitive",
    "performStaging",
];

/// The entity sections parsed and enforced (or consumed by the OpenAPI/gRPC layers).
const SECTIONS: &[&str] = &[
    "blocking-settings",
    "urls",
    "parameters",
    "methods",
    "headers",
    "cookies",
    "filetypes",
    "character-sets",
    "json-profiles",
    "xml-profiles",
    "response-pages",
    "general",
    "signature-settings",
    "signature-sets",
    "signatures",
    "server-technologies",
    "sensitive-parameters",
    "header-settings",
    "cookie-settings",
    "open-api-files",
    "grpc-profiles",
    "idl-files",
    "json-validation-files",
];

/// Sections of the format that are accepted but not enforced (each gives a warning), which a
/// reference may name and which merge by key.
const UNENFORCED_LISTS: &[&str] = &[
    "bot-defense",
    "brute-force-attack-preventions",
    "browser-definitions",
    "csrf-protection",
    "csrf-urls",
    "data-guard",
    "disallowed-geolocations",
    "graphql-profiles",
    "host-names",
    "ip-address-lists",
    "ip-intelligence",
    "login-enforcement",
    "login-pages",
    "override-rules",
    "threat-campaigns",
    "whitelist-ips",
    "xml-validation-files",
];

/// Lists that are not top-level entity sections but that a reference may name and that merge by
/// key: the modifications and the lists inside `blocking-settings`.
const OTHER_SECTIONS: &[&str] = &["modifications", "evasions", "http-protocols", "violations"];

/// The rest of the format's sections and top-level members that are accepted but not enforced.
const UNENFORCED_OTHERS: &[&str] = &[
    "enforcer-settings",
    "session-tracking",
    "signature-requirements",
    "access-profiles",
    "policy-builder",
    "policy-builder-central-configuration",
    "policy-builder-cookie",
    "policy-builder-filetype",
    "policy-builder-header",
    "policy-builder-parameter",
    "policy-builder-redirection-protection",
    "policy-builder-server-technologies",
    "policy-builder-sessions-and-logins",
    "policy-builder-url",
    "redirection-protection",
    "redirection-protection-domains",
    "websocket-urls",
    "plain-text-profiles",
    "gwt-profiles",
    "deception-settings",
    "deception-response-pages",
    "web-scraping",
    "session-hijacking",
    "single-page-application",
    "microservices",
    "navigation-parameters",
    "web-hooks",
    "ssrf-hosts",
    "cookie-settings-ext",
    "behavioral-enforcement",
    "antivirus",
    "database-protection",
    "login-enforcements",
    "wafEngineVersion",
    "type",
    "softwareVersion",
    "parentPolicyName",
    "applyServerSideOnly",
    "sensitive-headers",
    "signature-systems",
    "threat-campaign-settings",
];

/// The members and sections parsed and enforced (for "did you mean" hints).
pub fn enforced() -> impl Iterator<Item = &'static str> {
    MEMBERS.iter().chain(SECTIONS).copied()
}

/// Every known section (for reference names, merging by key and "did you mean").
pub fn all() -> impl Iterator<Item = &'static str> {
    SECTIONS
        .iter()
        .chain(UNENFORCED_LISTS)
        .chain(OTHER_SECTIONS)
        .copied()
}

/// Whether `name` is a section of the format that is accepted but not enforced (a warning).
pub fn is_unenforced(name: &str) -> bool {
    UNENFORCED_LISTS.contains(&name) || UNENFORCED_OTHERS.contains(&name)
}

/// Fields of the format inside enforced sections that this engine accepts but does not act on
/// (response-side cookie attributes, learning, rendering and serialisation hints, …).
pub const KNOWN_FIELDS: &[&str] = &[
    "accessibleOnlyThroughTheHttpProtocol",
    "insertSameSiteAttribute",
    "securedOverHttpsConnection",
    "isBase64",
    "learn",
    "clickjackingProtection",
    "allowRenderingInFrames",
    "allowRenderingInFramesOnlyFrom",
    "canChangeDomainCookie",
    "accessProfile",
    "authorizationRules",
    "arraySerializationFormat",
    "objectSerializationStyle",
    "explodeObjectSerialization",
    "hostNameRepresentation",
    "isCookie",
    "isHeader",
    "contentProfile",
    "checkMaxItemsInArray",
    "checkMinItemsInArray",
    "maxItemsInArray",
    "minItemsInArray",
    "arrayUniqueItemsCheck",
    "web-services-securities",
    "responseCheck",
    "responseCheckLength",
    "lastUpdateMicros",
    "performStaging",
    "enforcementReadinessPeriod",
    "learnFromResponses",
    "stagingCertificationDatetime",
    "decodeStringValuesAsBase64",
    "maskCreditCardNumbersInRequest",
    "enableEventCorrelation",
    "useDynamicSessionIdInUrl",
    "pathParameterHandling",
    "triggerAsmIruleEvent",
    "trustXff",
    "description",
    "kind",
    "selfLink",
    "id",
    "inClassification",
    "signatureType",
    "isPriority",
];

/// Normalised merge key of one entity of `section` (None for sections merged as plain objects).
pub fn merge_key(section: &str, item: &Value) -> Option<String> {
    let s = |k: &str| item.get(k).map(scalar).unwrap_or_default();
    let key = match section {
        "urls" => format!(
            "{}\u{1}{}\u{1}{}",
            s("name"),
            non_empty(s("method"), "*"),
            non_empty(s("protocol"), "http")
        ),
        "parameters" => {
            let url = item.get("url");
            let u = |k: &str| url.and_then(|u| u.get(k)).map(scalar).unwrap_or_default();
            format!(
                "{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}",
                s("name"),
                non_empty(s("level"), "global"),
                u("name"),
                non_empty(u("method"), "*"),
                non_empty(u("protocol"), "http")
            )
        }
        "response-pages" => non_empty(s("responsePageType"), "default"),
        "character-sets" => s("characterSetType"),
        "characterSet"
        | "metacharOverrides"
        | "valueMetacharOverrides"
        | "nameMetacharOverrides" => s("metachar").to_ascii_lowercase(),
        "evasions" | "http-protocols" => s("description"),
        "signatures" => s("signatureId"),
        "server-technologies" => s("serverTechnologyName"),
        "signatureOverrides" => s("signatureId"),
        "urlContentProfiles" => format!("{}\u{1}{}", s("headerName"), s("headerValue")),
        "methodOverrides" => s("method"),
        "validationFiles" | "idlFiles" | "positionalParameters" => return None,
        _ => s("name"),
    };
    Some(key)
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn non_empty(s: String, default: &str) -> String {
    if s.is_empty() { default.to_string() } else { s }
}

/// The closest known name to `word` (edit distance ≤ 3), for "did you mean" hints.
pub fn suggest<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    known
        .into_iter()
        .map(|k| (distance(word, k), k))
        .filter(|(d, _)| *d <= 3 && *d > 0)
        .min()
        .map(|(_, k)| k)
}

fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
