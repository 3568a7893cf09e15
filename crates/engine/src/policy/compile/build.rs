//! Building a [`CompiledPolicy`] from the validated [`Model`], in named steps: the meta-character
//! tables of each context, the JSON and XML profiles, the URLs and their content rules, the
//! parameters (explicit and positional), headers, cookies, file types, block pages and the
//! violation settings. [`validate`] runs the same steps without selecting signatures.

use super::charset::{HeaderBytes, Table, parse_metachar};
use super::compiled::{
    BODY_INSPECT_LIMIT, BodyKind, CompiledCookie, CompiledFiletype, CompiledHeader, CompiledJson,
    CompiledParam, CompiledPolicy, CompiledUrl, CompiledXml, ContentRule, Indexes, NameMatch,
    SubChecks,
};
use super::glob::Glob;
use super::signature_selection;
use crate::policy::PolicyError;
use crate::policy::checks::{cors, length, staging, value};
use crate::policy::decl::lenient::{Lenient, Limit};
use crate::policy::decl::model::{Model, Setting};
use crate::policy::decl::{self, Base64Mode, DataType, EntityType, ParamLocation, ValueType};
use crate::signatures::SignatureDb;
use crate::violation::ViolationKind;

fn overrides(list: &Option<Vec<decl::SignatureOverride>>) -> Vec<(u32, bool)> {
    list.iter()
        .flatten()
        .filter_map(|o| {
            Some((
                u32::try_from(o.signature_id.get()?).ok()?,
                o.enabled.or(true),
            ))
        })
        .collect()
}

fn table_with(mut t: Table, list: &Option<Vec<decl::MetacharOverride>>) -> Table {
    for o in list.iter().flatten() {
        if let Some(c) = parse_metachar(&o.metachar) {
            t.set(c, !o.is_allowed.or(true));
        }
    }
    t
}

fn limit_opt(check: Lenient<bool>, n: Lenient<u64>) -> Option<u64> {
    if check.or(true) { n.get() } else { None }
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

/// Compiles the model in named steps; `with_signatures: false` skips the signature selection,
/// which is all [`validate`] needs.
fn compile_with(m: &Model, with_signatures: bool) -> Result<CompiledPolicy, PolicyError> {
    let d = &m.decl;
    let fold = m.case_insensitive;
    let tables = Tables::of(d);
    let json = json_profiles(d, &tables);
    let xml = xml_profiles(d, &tables);
    let urls = urls(d, fold, &tables, &json, &xml)?;
    let params = params(m, fold, &tables, &json, &xml)?;
    let filetypes = filetypes(d);
    let (reply, ajax_reply, grpc_reply) = super::pages::pages(d, m.template)?;
    let settings = settings(m);
    let headers = headers(d);
    let index = Indexes::new(&filetypes, &headers);
    Ok(CompiledPolicy {
        id: super::compiled::next_policy_id(),
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
            .filter_map(|n| n.name.cloned())
            .collect(),
        params,
        headers,
        index,
        cookies: cookies(d),
        filetypes,
        json,
        xml,
        header_bytes: HeaderBytes::new(&tables.header),
        url_table: tables.url,
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
            signature_selection::select(
                SignatureDb::builtin(),
                d,
                m.staging,
                m.staging_cutoff.as_deref(),
            )
        } else {
            Default::default()
        },
        sensitive: m.sensitive.clone(),
        body_limit: BODY_INSPECT_LIMIT,
        allowed_codes: allowed_codes(d),
        grpc_profiles: Vec::new(),
        grpc_table: tables.param_value,
        charset: m.charset,
        request_max_len: length::REQUEST_MAX_LENGTH,
        json_schemas: Vec::new(),
    })
}

/// The meta-character table of each context: the defaults, with the policy's `character-sets`
/// applied. Entities start from these and apply their own overrides.
struct Tables {
    url: Table,
    param_value: Table,
    param_name: Table,
    header: Table,
    json: Table,
    xml: Table,
}

impl Tables {
    fn of(d: &decl::Policy) -> Self {
        let mut t = Tables {
            url: Table::url(),
            param_value: Table::param_value(),
            param_name: Table::param_name(),
            header: Table::header(),
            json: Table::json(),
            xml: Table::xml(),
        };
        for cs in d.character_sets.iter().flatten() {
            let table = match cs.character_set_type {
                Some(decl::CharsetType::Url) => &mut t.url,
                Some(decl::CharsetType::ParameterValue) => &mut t.param_value,
                Some(decl::CharsetType::ParameterName) => &mut t.param_name,
                Some(decl::CharsetType::Header) => &mut t.header,
                Some(decl::CharsetType::JsonContent) => &mut t.json,
                Some(decl::CharsetType::XmlContent) => &mut t.xml,
                _ => continue,
            };
            *table = table_with(*table, &cs.character_set);
        }
        t
    }
}

/// `json-profiles`, in declaration order (content rules and parameters refer to them by index).
fn json_profiles(d: &decl::Policy, tables: &Tables) -> Vec<CompiledJson> {
    d.json_profiles
        .iter()
        .flatten()
        .map(|j| {
            let da = j.defense_attributes.clone().unwrap_or_default();
            CompiledJson {
                name: j.name.cloned().unwrap_or_default(),
                max_array: da.maximum_array_length.unwrap_or(Limit::Any),
                max_depth: da.maximum_structure_depth.unwrap_or(Limit::Any),
                max_total: da.maximum_total_length.unwrap_or(Limit::Any),
                max_value: da.maximum_value_length.unwrap_or(Limit::Any),
                sig_check: j.attack_signatures_check.or(true),
                meta_check: j.metachar_element_check.or(false),
                table: table_with(tables.json, &j.metachar_overrides),
                overrides: overrides(&j.signature_overrides),
                as_params: j.handle_json_values_as_parameters.or(false),
            }
        })
        .collect()
}

/// `xml-profiles`, in declaration order.
fn xml_profiles(d: &decl::Policy, tables: &Tables) -> Vec<CompiledXml> {
    d.xml_profiles
        .iter()
        .flatten()
        .map(|x| {
            let da = x.defense_attributes.clone().unwrap_or_default();
            CompiledXml {
                name: x.name.cloned().unwrap_or_default(),
                allow_dtd: da.allow_dtds.or(true),
                allow_external: da.allow_external_references.or(false),
                allow_pi: da.allow_processing_instructions.or(true),
                allow_cdata: da.allow_cdata.or(true),
                max_depth: match da.maximum_document_depth {
                    Some(Limit::Max(n)) => n as usize,
                    _ => 256,
                }
                .min(256),
                sig_check: x.attack_signatures_check.or(true),
                meta_check: x.metachar_element_check.or(false),
                table: table_with(tables.xml, &x.metachar_overrides),
                overrides: overrides(&x.signature_overrides),
            }
        })
        .collect()
}

/// The index of the JSON or XML profile named `name` (`Default` when unnamed) among `names`;
/// the first profile when none has that name.
fn profile_index<'a>(mut names: impl Iterator<Item = &'a str>, name: Option<&str>) -> usize {
    let name = name.unwrap_or("Default");
    names.position(|n| n == name).unwrap_or(0)
}

/// `urls`: explicit names get their leading `/`; each URL's matcher, checks and content rules.
fn urls(
    d: &decl::Policy,
    fold: bool,
    tables: &Tables,
    json: &[CompiledJson],
    xml: &[CompiledXml],
) -> Result<Vec<CompiledUrl>, PolicyError> {
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
        let content = content_rules(d, u, i, json, xml)?;
        urls.push(CompiledUrl {
            m: NameMatch::new(
                name,
                u.kind,
                u.wildcard_order,
                fold,
                u.wildcard_includes_slash.or(true),
            ),
            method: u.method.clone().filter(|m| m != "*"),
            https: u.protocol.map(|p| p == decl::Protocol::Https),
            allowed: u.is_allowed.or(true),
            sig_check: u.attack_signatures_check.or(true),
            overrides: overrides(&u.signature_overrides),
            meta_check: u.metachars_on_url_check.or(true),
            table: table_with(tables.url, &u.metachar_overrides),
            content,
            mandatory_body: u.mandatory_body.or(false),
            positional: u
                .positional_parameters
                .iter()
                .flatten()
                .filter_map(|pp| {
                    let idx = usize::try_from(pp.url_segment_index.get()?)
                        .ok()
                        .filter(|i| *i >= 1)?;
                    let name = pp
                        .parameter
                        .as_ref()
                        .and_then(|p| p.name.cloned())
                        .unwrap_or_else(|| format!("segment{idx}"));
                    Some((idx, name))
                })
                .collect(),
            methods_override: if u.methods_override_on_url_check.or(false) {
                u.method_overrides
                    .iter()
                    .flatten()
                    .map(|o| (o.method.clone(), o.allowed.or(true)))
                    .collect()
            } else {
                Vec::new()
            },
            staged: staging::staged(d, u.perform_staging),
            no_executables: u.disallow_file_upload_of_executables.or(false),
            cors: cors::compile(u, i)?,
        });
    }
    Ok(urls)
}

/// The `urlContentProfiles` of URL `i`: how its bodies are parsed, by request header. Rules with
/// a specific header come first, the catch-all last.
fn content_rules(
    d: &decl::Policy,
    u: &decl::Url,
    i: usize,
    json: &[CompiledJson],
    xml: &[CompiledXml],
) -> Result<Vec<ContentRule>, PolicyError> {
    let mut content = Vec::new();
    for (j, cp) in u.url_content_profiles.iter().flatten().enumerate() {
        let mut grpc = None;
        let kind = match cp
            .kind
            .as_deref()
            .unwrap_or("apply-value-and-content-signatures")
        {
            "json" => BodyKind::Json(profile_index(
                json.iter().map(|j| j.name.as_str()),
                cp.content_profile.as_ref().and_then(|c| c.name.as_deref()),
            )),
            "xml" => BodyKind::Xml(profile_index(
                xml.iter().map(|x| x.name.as_str()),
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
                return Err(PolicyError::invalid(
                    format!("policy.urls[{i}].urlContentProfiles"),
                    format!(
                        "unknown type \"{other}\" (expected apply-value-and-content-signatures, apply-content-signatures, form-data, json, xml, grpc, graphql, disallow or do-nothing)"
                    ),
                ));
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
    content.sort_by_key(|c| c.header == "*");
    Ok(content)
}

/// Explicit parameters, then the URLs' positional parameters as URL-level path parameters, each
/// with the JSON path its errors name.
fn parameter_decls(d: &decl::Policy) -> Vec<(String, decl::Parameter)> {
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
            if p.name.is_none() {
                p.name = format!("segment{}", pp.url_segment_index.or(0)).into();
            }
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
    param_decls
}

/// Every parameter entity compiled; unnamed ones are skipped.
fn params(
    m: &Model,
    fold: bool,
    tables: &Tables,
    json: &[CompiledJson],
    xml: &[CompiledXml],
) -> Result<Vec<CompiledParam>, PolicyError> {
    let mut params = Vec::new();
    for (path, p) in &parameter_decls(&m.decl) {
        if let Some(c) = param(m, fold, tables, json, xml, path, p)? {
            params.push(c);
        }
    }
    Ok(params)
}

/// One parameter entity; `path` is where its declaration is, for errors.
fn param(
    m: &Model,
    fold: bool,
    tables: &Tables,
    json: &[CompiledJson],
    xml: &[CompiledXml],
    path: &str,
    p: &decl::Parameter,
) -> Result<Option<CompiledParam>, PolicyError> {
    let d = &m.decl;
    let Some(name) = p.name.as_deref() else {
        return Ok(None);
    };
    let regex = match (&p.regular_expression, p.enable_regular_expression.get()) {
        (Some(re), Some(true)) => Some(
            regex::RegexBuilder::new(re)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| {
                    PolicyError::invalid(format!("{path}.regularExpression"), e.to_string())
                })?,
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
    Ok(Some(CompiledParam {
        m: NameMatch::new(name, p.kind, p.wildcard_order, fold, true),
        url: (p.level == Some(decl::Level::Url)).then(|| {
            let u = p.url.clone().unwrap_or_default();
            NameMatch::new(
                u.name.as_deref().unwrap_or_default(),
                u.kind,
                None,
                fold,
                true,
            )
        }),
        location: p.parameter_location.unwrap_or(ParamLocation::Any),
        value_type: p.value_type.unwrap_or(ValueType::UserInput),
        data_type: p.data_type.unwrap_or(DataType::AlphaNumeric),
        mandatory: p.mandatory.or(false),
        allow_empty: p.allow_empty_value.or(true),
        allow_repeat: p.allow_repeated_parameter_name.or(false),
        min_len: p
            .check_min_value_length
            .or(false)
            .then(|| p.minimum_length.or(0)),
        max_len: p
            .check_max_value_length
            .or(false)
            .then(|| p.maximum_length.or(10)),
        min: p
            .check_min_value
            .or(false)
            .then(|| (p.minimum_value.or(0.0), p.exclusive_min.or(false))),
        max: p
            .check_max_value
            .or(false)
            .then(|| (p.maximum_value.or(10.0), p.exclusive_max.or(false))),
        multiple_of: p
            .check_multiple_of_value
            .or(false)
            .then(|| p.multiple_of.or(5.0))
            .filter(|m| *m > 0.0),
        regex,
        statics,
        sig_check: p.attack_signatures_check.or(true),
        overrides: overrides(&p.signature_overrides),
        meta_check: p.metachars_on_parameter_value_check.or(true) && p.check_metachars.or(true),
        value_table: table_with(tables.param_value, &p.value_metachar_overrides),
        name_table: table_with(tables.param_name, &p.name_metachar_overrides),
        base64: p.decode_value_as_base64.unwrap_or(Base64Mode::Disabled),
        sensitive: p.sensitive_parameter.or(false) || m.sensitive.iter().any(|s| s == name),
        staged: staging::staged(d, p.perform_staging),
        value_profile: value::value_profile(p, path, json, xml)?,
    }))
}

/// `headers` entities (names always case-insensitive).
fn headers(d: &decl::Policy) -> Vec<CompiledHeader> {
    d.headers
        .iter()
        .flatten()
        .filter_map(|h| {
            Some(CompiledHeader {
                m: NameMatch::new(h.name.as_deref()?, h.kind, h.wildcard_order, true, true),
                mandatory: h.mandatory.or(false),
                allow_repeat: h.allow_repeated_occurrences.or(true),
                sig_check: h.check_signatures.or(true),
                overrides: overrides(&h.signature_overrides),
                percent_decode: h.percent_decoding.or(false),
                url_normalize: h.url_normalization.or(false),
                mask: h.mask_value_in_logs.or(false),
            })
        })
        .collect()
}

/// `cookies` entities (names case-sensitive).
fn cookies(d: &decl::Policy) -> Vec<CompiledCookie> {
    d.cookies
        .iter()
        .flatten()
        .filter_map(|c| {
            Some(CompiledCookie {
                m: NameMatch::new(c.name.as_deref()?, c.kind, c.wildcard_order, false, true),
                sig_check: c.attack_signatures_check.or(true),
                overrides: overrides(&c.signature_overrides),
                staged: staging::staged(d, c.perform_staging),
            })
        })
        .collect()
}

/// `filetypes` entities and their length limits.
fn filetypes(d: &decl::Policy) -> Vec<CompiledFiletype> {
    d.filetypes
        .iter()
        .flatten()
        .filter_map(|f| {
            Some(CompiledFiletype {
                m: NameMatch::new(f.name.as_deref()?, f.kind, f.wildcard_order, true, true),
                allowed: f.allowed.or(true),
                url_len: limit_opt(f.check_url_length, f.url_length),
                qs_len: limit_opt(f.check_query_string_length, f.query_string_length),
                post_len: limit_opt(f.check_post_data_length, f.post_data_length),
                req_len: limit_opt(f.check_request_length, f.request_length),
                staged: staging::staged(d, f.perform_staging),
            })
        })
        .collect()
}

/// The alarm and block setting of every violation kind, indexed like `ViolationKind::ALL`.
fn settings(m: &Model) -> Vec<Setting> {
    ViolationKind::ALL.iter().map(|k| m.setting(*k)).collect()
}
