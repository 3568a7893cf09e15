//! The serde mirror of the access profile document: field names, types and unknown-field
//! refusal. Nothing is validated here beyond types; `super::config` turns it into the profile.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// Security Requirement Objects: alternatives of method name → scopes (as in OpenAPI).
pub type Security = Vec<BTreeMap<String, Vec<String>>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProfileDecl {
    pub realm: Option<String>,
    pub methods: Map<String, Value>,
    #[serde(default)]
    pub rules: Vec<RuleDecl>,
    pub default: Option<Security>,
    pub rate_limit: Option<RateDecl>,
    pub revocations: Option<StoreDecl>,
    pub forward_credentials: Option<bool>,
    pub openapi: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MethodDecl {
    pub api_key: Option<ApiKeyDecl>,
    pub jwt: Option<JwtDecl>,
    pub introspection: Option<IntrospectionDecl>,
    pub basic: Option<BasicDecl>,
    pub identity_header: Option<String>,
    #[serde(default)]
    pub claim_headers: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ApiKeyDecl {
    #[serde(rename = "in")]
    pub location: String,
    pub name: String,
    #[serde(default)]
    pub keys: Vec<KeyDecl>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KeyDecl {
    pub id: String,
    pub sha256: Option<String>,
    pub key: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JwtDecl {
    pub jwks: Option<Value>,
    pub jwks_url: Option<String>,
    #[serde(default)]
    pub secrets: Vec<SecretDecl>,
    #[serde(default)]
    pub issuers: Vec<String>,
    #[serde(default)]
    pub audiences: Vec<String>,
    pub leeway_seconds: Option<u64>,
    #[serde(default)]
    pub required_claims: Vec<String>,
    #[serde(default)]
    pub algorithms: Vec<String>,
    pub refresh_seconds: Option<u64>,
    pub min_refresh_seconds: Option<u64>,
    pub timeout_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SecretDecl {
    pub kid: Option<String>,
    pub value: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IntrospectionDecl {
    pub endpoint: String,
    pub client_id: String,
    pub client_secret: String,
    pub timeout_ms: Option<u64>,
    pub cache_seconds: Option<u64>,
    pub cache_entries: Option<usize>,
    #[serde(default)]
    pub audiences: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BasicDecl {
    pub users: Vec<UserDecl>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UserDecl {
    pub name: String,
    pub hash: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuleDecl {
    pub path: String,
    #[serde(default)]
    pub methods: Vec<String>,
    pub require: Security,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RateDecl {
    pub requests_per_second: Option<f64>,
    pub burst: Option<u32>,
    pub requests: Option<u32>,
    pub window_seconds: Option<u64>,
    pub by: Option<String>,
    pub max_clients: Option<usize>,
    pub store: Option<StoreDecl>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StoreDecl {
    pub redis: String,
    pub key_prefix: Option<String>,
    pub timeout_ms: Option<u64>,
    pub on_unavailable: Option<String>,
}
