//! The compiled policy: immutable matchers built once from the [`Model`], shared by every request
//! (`Send + Sync`, no locks), plus the per-request [`Scratch`]. The request checks live in
//! `check_head`, `check_params` and `check_body`; rating and the decision in `rating`.
//! Imports: `model`, `glob`, `charset`, `sigsel`, `waf::{verdict, response, signatures}`.

use std::collections::HashMap;

use super::charset::{HeaderBytes, Table, parse_metachar};
pub use super::entities::*;
use super::glob::Glob;
use super::sigsel::{self, SigAction};
use crate::waf::policy::PolicyError;
use crate::waf::policy::decl::lenient::Limit;
use crate::waf::policy::decl::model::{Model, Setting};
use crate::waf::policy::decl::templates::TemplateId;
use crate::waf::policy::decl::{self, Base64Mode, DataType, EntityType, ParamLocation, ValueType};
use crate::waf::response::default_grpc_reply;
use crate::waf::signatures::SignatureDb;
use crate::waf::verdict::Reply;
use crate::waf::violation::ViolationKind;

/// An immutable, shareable, compiled policy.
pub struct CompiledPolicy {
    pub(in crate::waf::policy) name: String,
    pub(in crate::waf::policy) template: TemplateId,
    pub(in crate::waf::policy) blocking: bool,
    pub(in crate::waf::policy) fold: bool,
    pub(in crate::waf::policy) settings: Vec<Setting>,
    pub(in crate::waf::policy) evasions: SubChecks,
    pub(in crate::waf::policy) passes: u8,
    pub(in crate::waf::policy) http_checks: SubChecks,
    pub(in crate::waf::policy) max_headers: u64,
    pub(in crate::waf::policy) max_params: u64,
    pub(in crate::waf::policy) max_cookies: u64,
    pub(in crate::waf::policy) max_header_len: Limit,
    pub(in crate::waf::policy) max_cookie_len: Limit,
    pub(in crate::waf::policy) urls: Vec<CUrl>,
    pub(in crate::waf::policy) methods: Vec<String>,
    pub(in crate::waf::policy) params: Vec<CParam>,
    pub(in crate::waf::policy) headers: Vec<CHeader>,
    pub(in crate::waf::policy) cookies: Vec<CCookie>,
    pub(in crate::waf::policy) filetypes: Vec<CFiletype>,
    /// Precompiled lookup of `filetypes`.
    pub(in crate::waf::policy) index: Indexes,
    pub(in crate::waf::policy) json: Vec<CJson>,
    pub(in crate::waf::policy) xml: Vec<CXml>,
    pub(in crate::waf::policy) header_bytes: HeaderBytes,
    /// The policy's URL character set (for URLs the OpenAPI spec matched).
    pub(in crate::waf::policy) url_table: Table,
    pub(in crate::waf::policy) reply: Reply,
    pub(in crate::waf::policy) ajax_reply: Option<Reply>,
    pub(in crate::waf::policy) grpc_reply: Reply,
    pub(in crate::waf::policy) trust_xff: bool,
    pub(in crate::waf::policy) xff_headers: Vec<String>,
    pub(in crate::waf::policy) sigs: HashMap<u32, SigAction>,
    pub(in crate::waf::policy) sensitive: Vec<String>,
    pub(in crate::waf::policy) body_limit: usize,
    pub(in crate::waf::policy) allowed_codes: Vec<u16>,
    /// The linked OpenAPI spec (`open-api-files`), set by `load_with` after compiling.
    pub(in crate::waf::policy) api: Option<std::sync::Arc<crate::waf::openapi::CompiledApi>>,
    /// `grpc-profiles`, compiled by `policy::load` (they need the resolver).
    pub(in crate::waf::policy) grpc_profiles:
        Vec<std::sync::Arc<crate::waf::grpc::CompiledGrpcProfile>>,
    /// Meta-characters refused in gRPC string values (the parameter-value set).
    pub(in crate::waf::policy) grpc_table: Table,
    /// `applicationLanguage`, for VIOL_ENCODING (`check_encoding`).
    pub(in crate::waf::policy) charset: crate::waf::policy::checks::encoding::Charset,
    /// Longest request (head + body) before VIOL_REQUEST_MAX_LENGTH (`check_length`).
    pub(in crate::waf::policy) request_max_len: u64,
    /// The JSON profiles' schemas (`validationFiles`), by profile index (`check_json_schema`).
    pub(in crate::waf::policy) json_schemas:
        Vec<Option<std::sync::Arc<crate::waf::openapi::JsonSchema>>>,
}

/// Most request-body bytes buffered for inspection (larger bodies are inspected up to this size).
pub const BODY_INSPECT_LIMIT: usize = 1 << 20;
/// Most parameters, parts or cookies examined per request.
pub const MAX_ITEMS: usize = 5000;

fn overrides(list: &Option<Vec<decl::SignatureOverride>>) -> Vec<(u32, bool)> {
    list.iter()
        .flatten()
        .filter_map(|o| {
            Some((
                u32::try_from(o.signature_id?).ok()?,
                o.enabled.unwrap_or(true),
            ))
        })
        .collect()
}

fn table_with(mut t: Table, list: &Option<Vec<decl::MetacharOverride>>) -> Table {
    for o in list.iter().flatten() {
        if let Some(c) = parse_metachar(&o.metachar) {
            t.set(c, !o.is_allowed.unwrap_or(true));
        }
    }
    t
}

fn limit_opt(check: Option<bool>, n: Option<u64>) -> Option<u64> {
    if check.unwrap_or(true) { n } else { None }
}

/// `general.allowedResponseCodes` (numbers or numeric strings); when absent, the
/// default of the systems we stand in for (400, 401, 404, 407, 417, 503).
fn allowed_codes(d: &decl::Policy) -> Vec<u16> {
    match d
        .general
        .as_ref()
        .and_then(|g| g.allowed_response_codes.as_ref())
    {
        Some(list) => list
            .iter()
            .filter_map(|v| match v {
                serde_json::Value::Number(n) => n.as_u64(),
                serde_json::Value::String(s) => s.trim().parse().ok(),
                _ => None,
            })
            .filter_map(|n| u16::try_from(n).ok())
            .collect(),
        None => vec![400, 401, 404, 407, 417, 503],
    }
}

/// Checks what compilation checks (regexes, content profiles, pages) without keeping the result.
pub fn validate(m: &Model) -> Result<(), PolicyError> {
    compile_with(m, false).map(|_| ())
}

/// Compiles a validated model.
pub fn compile(m: &Model) -> Result<CompiledPolicy, PolicyError> {
    compile_with(m, true)
}

fn compile_with(m: &Model, with_signatures: bool) -> Result<CompiledPolicy, PolicyError> {
    let d = &m.decl;
    let fold = m.case_insensitive;
    let mut tables: HashMap<&str, Table> = HashMap::from([
        ("url", Table::url()),
        ("parameter-value", Table::param_value()),
        ("parameter-name", Table::param_name()),
        ("header", Table::header()),
        ("json-content", Table::json()),
        ("xml-content", Table::xml()),
    ]);
    for cs in d.character_sets.iter().flatten() {
        let key = match cs.character_set_type {
            Some(decl::CharsetType::Url) => "url",
            Some(decl::CharsetType::ParameterValue) => "parameter-value",
            Some(decl::CharsetType::ParameterName) => "parameter-name",
            Some(decl::CharsetType::Header) => "header",
            Some(decl::CharsetType::JsonContent) => "json-content",
            Some(decl::CharsetType::XmlContent) => "xml-content",
            _ => continue,
        };
        if let Some(t) = tables.get_mut(key) {
            *t = table_with(*t, &cs.character_set);
        }
    }
    let json: Vec<CJson> = d
        .json_profiles
        .iter()
        .flatten()
        .map(|j| {
            let da = j.defense_attributes.clone().unwrap_or_default();
            CJson {
                name: j.name.clone().unwrap_or_default(),
                max_array: da.maximum_array_length.unwrap_or(Limit::Any),
                max_depth: da.maximum_structure_depth.unwrap_or(Limit::Any),
                max_total: da.maximum_total_length.unwrap_or(Limit::Any),
                max_value: da.maximum_value_length.unwrap_or(Limit::Any),
                sig_check: j.attack_signatures_check.unwrap_or(true),
                meta_check: j.metachar_element_check.unwrap_or(false),
                table: table_with(tables["json-content"], &j.metachar_overrides),
                overrides: overrides(&j.signature_overrides),
                as_params: j.handle_json_values_as_parameters.unwrap_or(false),
            }
        })
        .collect();
    let xml: Vec<CXml> = d
        .xml_profiles
        .iter()
        .flatten()
        .map(|x| {
            let da = x.defense_attributes.clone().unwrap_or_default();
            CXml {
                name: x.name.clone().unwrap_or_default(),
                allow_dtd: da.allow_dtds.unwrap_or(true),
                allow_external: da.allow_external_references.unwrap_or(false),
                allow_pi: da.allow_processing_instructions.unwrap_or(true),
                allow_cdata: da.allow_cdata.unwrap_or(true),
                max_depth: match da.maximum_document_depth {
                    Some(Limit::Max(n)) => n as usize,
                    _ => 256,
                }
                .min(256),
                sig_check: x.attack_signatures_check.unwrap_or(true),
                meta_check: x.metachar_element_check.unwrap_or(false),
                table: table_with(tables["xml-content"], &x.metachar_overrides),
                overrides: overrides(&x.signature_overrides),
            }
        })
        .collect();
    let profile_idx = |kind: &str, name: Option<&str>| -> usize {
        let name = name.unwrap_or("Default");
        if kind == "json" {
            json.iter().position(|j| j.name == name).unwrap_or(0)
        } else {
            xml.iter().position(|j| j.name == name).unwrap_or(0)
        }
    };
    let mut urls = Vec::new();
    for (i, u) in d.urls.iter().flatten().enumerate() {
        let Some(raw_name) = u.name.as_deref() else {
            continue;
        };
        let slashed;
        let name = if u.kind.unwrap_or(EntityType::Explicit) == EntityType::Explicit
            && !raw_name.starts_with('/')
        {
            slashed = format!("/{raw_name}");
            slashed.as_str()
        } else {
            raw_name
        };
        let mut content = Vec::new();
        for (j, cp) in u.url_content_profiles.iter().flatten().enumerate() {
            let mut grpc = None;
            let kind = match cp
                .kind
                .as_deref()
                .unwrap_or("apply-value-and-content-signatures")
            {
                "json" => BodyKind::Json(profile_idx(
                    "json",
                    cp.content_profile.as_ref().and_then(|c| c.name.as_deref()),
                )),
                "xml" => BodyKind::Xml(profile_idx(
                    "xml",
                    cp.content_profile.as_ref().and_then(|c| c.name.as_deref()),
                )),
                "form-data" => BodyKind::Form,
                "disallow" => BodyKind::Disallow,
                "do-nothing" => BodyKind::Ignore,
                "apply-content-signatures" | "apply-value-and-content-signatures" => {
                    BodyKind::Signatures
                }
                "grpc" => {
                    grpc = Some(super::grpc_urls::profile_index(d, cp, i, j)?);
                    BodyKind::Signatures
                }
                "graphql" => BodyKind::Signatures,
                other => {
                    return Err(PolicyError(format!(
                        "policy.urls[{i}].urlContentProfiles: unknown type \"{other}\" (expected apply-value-and-content-signatures, apply-content-signatures, form-data, json, xml, grpc, graphql, disallow or do-nothing)"
                    )));
                }
            };
            content.push(ContentRule {
                header: cp
                    .header_name
                    .clone()
                    .unwrap_or_else(|| "*".into())
                    .to_ascii_lowercase(),
                value: Glob::new(cp.header_value.as_deref().unwrap_or("*"), true, true),
                kind,
                grpc,
            });
        }
        // Rules with a specific header first, the catch-all last.
        content.sort_by_key(|c| c.header == "*");
        urls.push(CUrl {
            m: NameMatch::new(
                name,
                u.kind,
                u.wildcard_order,
                fold,
                u.wildcard_includes_slash.unwrap_or(true),
            ),
            method: u.method.clone().filter(|m| m != "*"),
            https: u.protocol.map(|p| p == decl::Protocol::Https),
            allowed: u.is_allowed.unwrap_or(true),
            sig_check: u.attack_signatures_check.unwrap_or(true),
            overrides: overrides(&u.signature_overrides),
            meta_check: u.metachars_on_url_check.unwrap_or(true),
            table: table_with(tables["url"], &u.metachar_overrides),
            content,
            mandatory_body: u.mandatory_body.unwrap_or(false),
            positional: u
                .positional_parameters
                .iter()
                .flatten()
                .filter_map(|pp| {
                    let idx = usize::try_from(pp.url_segment_index?)
                        .ok()
                        .filter(|i| *i >= 1)?;
                    let name = pp
                        .parameter
                        .as_ref()
                        .and_then(|p| p.name.clone())
                        .unwrap_or_else(|| format!("segment{idx}"));
                    Some((idx, name))
                })
                .collect(),
            methods_override: if u.methods_override_on_url_check == Some(true) {
                u.method_overrides
                    .iter()
                    .flatten()
                    .map(|o| (o.method.clone(), o.allowed.unwrap_or(true)))
                    .collect()
            } else {
                Vec::new()
            },
            staged: crate::waf::policy::checks::staging::staged(d, u.perform_staging),
            no_executables: u.disallow_file_upload_of_executables.unwrap_or(false),
            cors: crate::waf::policy::checks::cors::compile(u, i)?,
        });
    }
    // Explicit parameters, then the URLs' positional parameters as URL-level path parameters.
    let mut param_decls: Vec<(String, decl::Parameter)> = d
        .parameters
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, p)| (format!("policy.parameters[{i}]"), p.clone()))
        .collect();
    for (i, u) in d.urls.iter().flatten().enumerate() {
        for (j, pp) in u.positional_parameters.iter().flatten().enumerate() {
            let mut p = pp.parameter.clone().unwrap_or_default();
            p.name = p
                .name
                .or_else(|| Some(format!("segment{}", pp.url_segment_index.unwrap_or(0))));
            p.level = Some(decl::Level::Url);
            p.parameter_location = Some(ParamLocation::Path);
            p.url = Some(decl::UrlRef {
                name: u.name.clone(),
                method: None,
                protocol: None,
                kind: u.kind,
            });
            param_decls.push((
                format!("policy.urls[{i}].positionalParameters[{j}].parameter"),
                p,
            ));
        }
    }
    let mut params = Vec::new();
    for (path, p) in &param_decls {
        let Some(name) = p.name.as_deref() else {
            continue;
        };
        let regex = match (&p.regular_expression, p.enable_regular_expression) {
            (Some(re), Some(true)) => Some(
                regex::RegexBuilder::new(re)
                    .size_limit(1 << 20)
                    .build()
                    .map_err(|e| PolicyError(format!("{path}.regularExpression: {e}")))?,
            ),
            _ => None,
        };
        let statics = p
            .static_values
            .iter()
            .flatten()
            .chain(p.parameter_enum_values.iter().flatten())
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string())
            })
            .collect();
        params.push(CParam {
            m: NameMatch::new(name, p.kind, p.wildcard_order, fold, true),
            url: (p.level == Some(decl::Level::Url)).then(|| {
                let u = p.url.clone().unwrap_or_default();
                NameMatch::new(&u.name.unwrap_or_default(), u.kind, None, fold, true)
            }),
            location: p.parameter_location.unwrap_or(ParamLocation::Any),
            value_type: p.value_type.unwrap_or(ValueType::UserInput),
            data_type: p.data_type.unwrap_or(DataType::AlphaNumeric),
            mandatory: p.mandatory.unwrap_or(false),
            allow_empty: p.allow_empty_value.unwrap_or(true),
            allow_repeat: p.allow_repeated_parameter_name.unwrap_or(false),
            min_len: (p.check_min_value_length == Some(true))
                .then(|| p.minimum_length.unwrap_or(0)),
            max_len: (p.check_max_value_length == Some(true))
                .then(|| p.maximum_length.unwrap_or(10)),
            min: (p.check_min_value == Some(true)).then(|| {
                (
                    p.minimum_value.unwrap_or(0.0),
                    p.exclusive_min.unwrap_or(false),
                )
            }),
            max: (p.check_max_value == Some(true)).then(|| {
                (
                    p.maximum_value.unwrap_or(10.0),
                    p.exclusive_max.unwrap_or(false),
                )
            }),
            multiple_of: (p.check_multiple_of_value == Some(true))
                .then(|| p.multiple_of.unwrap_or(5.0))
                .filter(|m| *m > 0.0),
            regex,
            statics,
            sig_check: p.attack_signatures_check.unwrap_or(true),
            overrides: overrides(&p.signature_overrides),
            meta_check: p.metachars_on_parameter_value_check.unwrap_or(true)
                && p.check_metachars.unwrap_or(true),
            value_table: table_with(tables["parameter-value"], &p.value_metachar_overrides),
            name_table: table_with(tables["parameter-name"], &p.name_metachar_overrides),
            base64: p.decode_value_as_base64.unwrap_or(Base64Mode::Disabled),
            sensitive: p.sensitive_parameter.unwrap_or(false)
                || m.sensitive.iter().any(|s| s == name),
            staged: crate::waf::policy::checks::staging::staged(d, p.perform_staging),
            value_profile: crate::waf::policy::checks::value::value_profile(p, path, &json, &xml)?,
        });
    }
    let headers: Vec<CHeader> = d
        .headers
        .iter()
        .flatten()
        .filter_map(|h| {
            Some(CHeader {
                m: NameMatch::new(h.name.as_deref()?, h.kind, h.wildcard_order, true, true),
                mandatory: h.mandatory.unwrap_or(false),
                allow_repeat: h.allow_repeated_occurrences.unwrap_or(true),
                sig_check: h.check_signatures.unwrap_or(true),
                overrides: overrides(&h.signature_overrides),
                percent_decode: h.percent_decoding.unwrap_or(false),
                url_normalize: h.url_normalization.unwrap_or(false),
                mask: h.mask_value_in_logs.unwrap_or(false),
            })
        })
        .collect();
    let cookies: Vec<CCookie> = d
        .cookies
        .iter()
        .flatten()
        .filter_map(|c| {
            Some(CCookie {
                m: NameMatch::new(c.name.as_deref()?, c.kind, c.wildcard_order, false, true),
                sig_check: c.attack_signatures_check.unwrap_or(true),
                overrides: overrides(&c.signature_overrides),
                staged: crate::waf::policy::checks::staging::staged(d, c.perform_staging),
            })
        })
        .collect();
    let filetypes: Vec<CFiletype> = d
        .filetypes
        .iter()
        .flatten()
        .filter_map(|f| {
            Some(CFiletype {
                m: NameMatch::new(f.name.as_deref()?, f.kind, f.wildcard_order, true, true),
                allowed: f.allowed.unwrap_or(true),
                url_len: limit_opt(f.check_url_length, f.url_length),
                qs_len: limit_opt(f.check_query_string_length, f.query_string_length),
                post_len: limit_opt(f.check_post_data_length, f.post_data_length),
                req_len: limit_opt(f.check_request_length, f.request_length),
                staged: crate::waf::policy::checks::staging::staged(d, f.perform_staging),
            })
        })
        .collect();
    let (reply, ajax_reply, grpc_reply) = super::pages::pages(d, m.template)?;
    let mut settings = vec![
        Setting {
            alarm: true,
            block: false
        };
        ViolationKind::ALL.len()
    ];
    for (i, k) in ViolationKind::ALL.iter().enumerate() {
        settings[i] = m.setting(*k);
    }
    let index = Indexes::new(&filetypes);
    Ok(CompiledPolicy {
        api: None,
        name: m.name.clone(),
        template: m.template,
        blocking: m.blocking,
        fold,
        settings,
        evasions: SubChecks::enabled(&m.evasions),
        passes: m.max_decoding_passes as u8,
        http_checks: SubChecks::enabled(&m.http_checks),
        max_headers: m.max_headers,
        max_params: m.max_params,
        max_cookies: m.max_cookies,
        max_header_len: m.max_header_length,
        max_cookie_len: m.max_cookie_length,
        urls,
        methods: d
            .methods
            .iter()
            .flatten()
            .filter_map(|n| n.name.clone())
            .collect(),
        params,
        headers,
        index,
        cookies,
        filetypes,
        json,
        xml,
        header_bytes: HeaderBytes::new(&tables["header"]),
        url_table: tables["url"],
        reply,
        ajax_reply,
        grpc_reply,
        trust_xff: m.trust_xff,
        xff_headers: m
            .xff_headers
            .iter()
            .map(|h| h.to_ascii_lowercase())
            .collect(),
        sigs: if with_signatures {
            sigsel::select(
                SignatureDb::builtin(),
                d,
                m.staging,
                m.staging_cutoff.as_deref(),
            )
        } else {
            HashMap::new()
        },
        sensitive: m.sensitive.clone(),
        body_limit: BODY_INSPECT_LIMIT,
        allowed_codes: allowed_codes(d),
        grpc_profiles: Vec::new(),
        grpc_table: tables["parameter-value"],
        charset: m.charset,
        request_max_len: crate::waf::policy::checks::length::REQUEST_MAX_LENGTH,
        json_schemas: Vec::new(),
    })
}

impl CompiledPolicy {
    /// A policy that allows everything (what a listener without a policy runs).
    pub fn allow_all(name: &str) -> Self {
        CompiledPolicy {
            api: None,
            name: name.to_string(),
            template: TemplateId::NginxBase,
            blocking: false,
            fold: false,
            settings: vec![Setting::default(); ViolationKind::ALL.len()],
            evasions: SubChecks::default(),
            passes: 2,
            http_checks: SubChecks::default(),
            max_headers: u64::MAX,
            max_params: u64::MAX,
            max_cookies: u64::MAX,
            max_header_len: Limit::Any,
            max_cookie_len: Limit::Any,
            urls: Vec::new(),
            methods: Vec::new(),
            params: Vec::new(),
            headers: Vec::new(),
            cookies: Vec::new(),
            filetypes: Vec::new(),
            index: Indexes::default(),
            json: Vec::new(),
            xml: Vec::new(),
            header_bytes: HeaderBytes::new(&Table::EMPTY),
            url_table: Table::EMPTY,
            reply: Reply::DefaultPage,
            ajax_reply: None,
            grpc_reply: default_grpc_reply(),
            trust_xff: false,
            xff_headers: Vec::new(),
            sigs: HashMap::new(),
            sensitive: Vec::new(),
            body_limit: 0,
            allowed_codes: Vec::new(),
            grpc_profiles: Vec::new(),
            grpc_table: Table::EMPTY,
            charset: crate::waf::policy::checks::encoding::Charset::Unchecked,
            request_max_len: u64::MAX,
            json_schemas: Vec::new(),
        }
    }

    /// The template the policy was built on.
    pub fn template(&self) -> &'static str {
        self.template.name()
    }

    /// Whether the policy blocks (enforcementMode blocking).
    pub fn is_blocking(&self) -> bool {
        self.blocking
    }

    /// Number of signatures the policy enables.
    pub fn signatures_enabled(&self) -> usize {
        self.sigs.len()
    }
}
