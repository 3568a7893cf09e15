//! The declaration: a serde mirror of the declarative policy JSON.
//! Every field is optional here (a missing field takes the template's value during layering);
//! enumerations are typed so a bad value fails with the JSON path of the field. Unknown fields
//! are not errors: `load` reports them as warnings with their path.

use serde::Deserialize;
use serde_json::Value;

use super::entities::{
    CharacterSet, Cookie, Filetype, Header, JsonProfile, Named, Parameter, ResponsePage,
    SignatureOverride, Url, XmlProfile,
};
use super::lenient::{Lenient, Limit};

macro_rules! kebab_enum {
    ($name:ident { $($variant:ident => $text:literal),* $(,)? }) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
        pub enum $name { $(#[serde(rename = $text)] $variant),* }
    };
}

kebab_enum!(EnforcementMode { Blocking => "blocking", Transparent => "transparent" });
kebab_enum!(EntityType { Explicit => "explicit", Wildcard => "wildcard" });
kebab_enum!(Protocol { Http => "http", Https => "https" });
kebab_enum!(Level { Global => "global", Url => "url" });
kebab_enum!(ParamLocation {
    Any => "any", Query => "query", FormData => "form-data", Path => "path", Header => "header",
    Cookie => "cookie",
});
kebab_enum!(ValueType {
    UserInput => "user-input", AutoDetect => "auto-detect", Array => "array", Json => "json",
    Xml => "xml", Object => "object", OpenapiArray => "openapi-array",
    StaticContent => "static-content", Ignore => "ignore",
});
kebab_enum!(DataType {
    AlphaNumeric => "alpha-numeric", Binary => "binary", Phone => "phone", Email => "email",
    Boolean => "boolean", Integer => "integer", Decimal => "decimal",
});
kebab_enum!(Base64Mode { Disabled => "disabled", Enabled => "enabled", Required => "required" });
kebab_enum!(Delete { Delete => "delete" });
kebab_enum!(CharsetType {
    Header => "header", Url => "url", ParameterName => "parameter-name",
    ParameterValue => "parameter-value", XmlContent => "xml-content", JsonContent => "json-content",
    GwtContent => "gwt-content", PlainTextContent => "plain-text-content",
});
kebab_enum!(PageType {
    Default => "default", Ajax => "ajax", Xml => "xml", Grpc => "grpc", Graphql => "graphql",
    Mobile => "mobile", AjaxLogin => "ajax-login", Captcha => "captcha",
    CaptchaFail => "captcha-fail", FailedLoginHoneypot => "failed-login-honeypot",
    FailedLoginHoneypotAjax => "failed-login-honeypot-ajax", Hijack => "hijack",
    LeakedCredentials => "leaked-credentials", LeakedCredentialsAjax => "leaked-credentials-ajax",
    PersistentFlow => "persistent-flow", SessionAwareness => "session-awareness",
});
kebab_enum!(PageAction {
    Default => "default", Custom => "custom", Redirect => "redirect",
    EraseCookies => "erase-cookies", SoapFault => "soap-fault",
});
kebab_enum!(Accuracy { Low => "low", Medium => "medium", High => "high" });

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Template {
    pub name: Option<String>,
}

/// `policy`: the root object of the declaration.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Policy {
    pub name: Lenient<String>,
    pub description: Lenient<String>,
    #[serde(rename = "fullPath")]
    pub full_path: Lenient<String>,
    pub template: Option<Template>,
    #[serde(rename = "enforcementMode")]
    pub enforcement_mode: Option<EnforcementMode>,
    #[serde(rename = "applicationLanguage")]
    pub application_language: Lenient<String>,
    #[serde(rename = "caseInsensitive")]
    pub case_insensitive: Lenient<bool>,
    #[serde(rename = "performStaging")]
    pub perform_staging: Lenient<bool>,
    #[serde(rename = "blocking-settings")]
    pub blocking_settings: Option<BlockingSettings>,
    pub urls: Option<Vec<Url>>,
    pub parameters: Option<Vec<Parameter>>,
    pub methods: Option<Vec<Named>>,
    pub headers: Option<Vec<Header>>,
    pub cookies: Option<Vec<Cookie>>,
    pub filetypes: Option<Vec<Filetype>>,
    #[serde(rename = "character-sets")]
    pub character_sets: Option<Vec<CharacterSet>>,
    #[serde(rename = "json-profiles")]
    pub json_profiles: Option<Vec<JsonProfile>>,
    #[serde(rename = "xml-profiles")]
    pub xml_profiles: Option<Vec<XmlProfile>>,
    #[serde(rename = "response-pages")]
    pub response_pages: Option<Vec<ResponsePage>>,
    pub general: Option<General>,
    #[serde(rename = "signature-settings")]
    pub signature_settings: Option<SignatureSettings>,
    #[serde(rename = "signature-sets")]
    pub signature_sets: Option<Vec<SignatureSet>>,
    pub signatures: Option<Vec<Signature>>,
    #[serde(rename = "server-technologies")]
    pub server_technologies: Option<Vec<ServerTechnology>>,
    #[serde(rename = "sensitive-parameters")]
    pub sensitive_parameters: Option<Vec<Named>>,
    #[serde(rename = "header-settings")]
    pub header_settings: Option<HeaderSettings>,
    #[serde(rename = "cookie-settings")]
    pub cookie_settings: Option<CookieSettings>,
    /// OpenAPI files: consumed by the OpenAPI layer (`waf::openapi`), kept raw here.
    #[serde(rename = "open-api-files")]
    pub open_api_files: Option<Vec<Value>>,
    /// gRPC profiles and IDL files: consumed by the gRPC support, kept raw here.
    #[serde(rename = "grpc-profiles")]
    pub grpc_profiles: Option<Vec<Value>>,
    #[serde(rename = "idl-files")]
    pub idl_files: Option<Vec<Value>>,
    #[serde(rename = "json-validation-files")]
    pub json_validation_files: Option<Vec<Value>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct BlockingSettings {
    pub violations: Option<Vec<ViolationSetting>>,
    pub evasions: Option<Vec<SubCheck>>,
    #[serde(rename = "http-protocols")]
    pub http_protocols: Option<Vec<SubCheck>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct ViolationSetting {
    pub name: String,
    pub alarm: Lenient<bool>,
    pub block: Lenient<bool>,
    pub learn: Lenient<bool>,
    pub description: Lenient<String>,
}

/// An item of `evasions` or `http-protocols`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubCheck {
    pub description: String,
    pub enabled: Lenient<bool>,
    pub learn: Lenient<bool>,
    pub max_decoding_passes: Lenient<u64>,
    pub max_headers: Lenient<u64>,
    pub max_params: Lenient<u64>,
    pub max_cookies: Lenient<u64>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct General {
    pub trust_xff: Lenient<bool>,
    pub custom_xff_headers: Option<Vec<String>>,
    pub allowed_response_codes: Option<Vec<Value>>,
    pub mask_credit_card_numbers_in_request: Lenient<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignatureSettings {
    pub signature_staging: Lenient<bool>,
    pub staging_certification_datetime: Lenient<String>,
    pub minimum_accuracy_for_auto_added_signatures: Option<Accuracy>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetFilter {
    pub accuracy_filter: Option<String>,
    pub accuracy_value: Option<String>,
    pub risk_filter: Option<String>,
    pub risk_value: Option<String>,
    pub attack_type: Option<Value>,
    pub signature_type: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomSet {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub filter: Option<SetFilter>,
    pub signatures: Option<Vec<SignatureOverride>>,
    pub systems: Option<Vec<Value>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignatureSet {
    pub name: Lenient<String>,
    pub alarm: Lenient<bool>,
    pub block: Lenient<bool>,
    pub learn: Lenient<bool>,
    pub signature_set: Option<CustomSet>,
    #[serde(rename = "$action")]
    pub action: Option<Delete>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Signature {
    pub signature_id: Lenient<u64>,
    pub name: Lenient<String>,
    pub enabled: Lenient<bool>,
    pub perform_staging: Lenient<bool>,
    pub learn: Lenient<bool>,
    pub tag: Option<String>,
    #[serde(rename = "$action")]
    pub action: Option<Delete>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerTechnology {
    pub server_technology_name: Lenient<String>,
    #[serde(rename = "$action")]
    pub action: Option<Delete>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeaderSettings {
    pub maximum_http_header_length: Option<Limit>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CookieSettings {
    pub maximum_cookie_header_length: Option<Limit>,
}
