//! Declarative security policies: declaration → validated model → compiled policy.
//!
//! - [`decl`]: the document as `portcullis-policy` reads it (serde mirror, references, layering
//!   over the template, merge keys), and the validated model with every default applied;
//! - [`compile`]: the immutable [`CompiledPolicy`] the transaction consults, and its matchers;
//! - [`checks`]: the request checks of each phase, staging, rating and the decision.
//!
//! The folders are private: what the rest of the crate uses is re-exported here.
//! No IO.

mod checks;
mod compile;
mod decl;
#[cfg(any(test, fuzzing))]
pub(crate) mod fuzzing;

use serde_json::{Map, Value};

pub use checks::explain::{BodyOwner, Named, Owners, UrlOwner};
pub(crate) use checks::rating::Decision;
pub use compile::compiled::{CompiledPolicy, Scratch};
pub(crate) use compile::glob;
pub use decl::layers::{apply_modifications, merge_policy};
pub use decl::model::Summary;
pub use decl::templates::{SHIPPED as SHIPPED_TEMPLATES, TemplateId, select as select_template};
pub(crate) use decl::{layers, templates};
#[cfg(fuzzing)]
pub use fuzzing::fuzz_inspect;
pub use portcullis_policy::{PolicyError, SyntaxError, parse_document};

use compile::build;
use decl::{model, sections};

use super::Resolver;

/// A policy document compiled, with the warnings for accepted-but-unenforced sections.
pub struct Loaded {
    pub policy: CompiledPolicy,
    pub warnings: Vec<String>,
    /// Counts for `policy check`.
    pub summary: Summary,
}

/// How strictly documents are read.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadOptions {
    /// Accept a bare policy object without the `policy` wrapper (with a warning).
    pub lenient: bool,
}

/// Parses, validates and compiles a declarative policy document. `base` is the document's own link
/// (e.g. `file:///etc/policies/p.json`), against which relative links inside it are resolved through
/// `resolver`.
pub fn load(doc: &[u8], base: &str, resolver: &dyn Resolver) -> Result<Loaded, PolicyError> {
    load_with(doc, base, resolver, LoadOptions::default())
}

/// [`load`] with options. A linked OpenAPI spec (`open-api-files`) is compiled into the policy
/// ([`checks::api`]): its operations sit between the explicit and the wildcard URLs.
pub fn load_with(
    doc: &[u8],
    base: &str,
    resolver: &dyn Resolver,
    opts: LoadOptions,
) -> Result<Loaded, PolicyError> {
    let root = parse_document(doc, base)?;
    let mut warnings = Vec::new();
    let (mut body, mods, mods_ref) = unwrap_root(root, opts, &mut warnings)?;

    let mut cx = portcullis_policy::RefCtx {
        base,
        resolver,
        fetched: 0,
        warnings: Vec::new(),
    };
    portcullis_policy::resolve_policy(&mut body, &mut cx)?;
    let mods = match (mods, mods_ref) {
        (Some(m), _) => Some((m, "modifications".to_string())),
        (None, Some(link)) => Some((
            cx.fetch_doc("modificationsReference.link", &link)?,
            format!("modificationsReference ({link})"),
        )),
        (None, None) => None,
    };
    warnings.append(&mut cx.warnings);

    // The body alone, for precise paths and unknown-field warnings.
    let body_decl =
        portcullis_policy::read_decl(&Value::Object(body.clone()), "policy", &mut warnings)?;
    let template_name = body_decl.template.as_ref().and_then(|t| t.name.clone());
    let (template, twarn) = templates::select(template_name.as_deref())?;
    warnings.extend(twarn);
    portcullis_policy::check_unenforced(&body, template == templates::TemplateId::NginxBase)?;

    // Validate the body's own entities first, so error paths index the user's document.
    let body_model = model::Model::build(body_decl.clone(), template, &body_decl, &mut Vec::new())?;
    build::validate(&body_model)?;

    // JSON profile schemas of the body alone first, so errors index the user's json-profiles.
    checks::json_schema::compile(&body_decl)?;
    let api = checks::api::load_api(&body, base, resolver)?;
    if let Some(api) = &api {
        warnings.extend(
            api.warnings
                .iter()
                .map(|w| format!("open-api-files[0]: {w}")),
        );
    }
    let mut merged = template.policy();
    layers::merge_policy(&mut merged, &body);
    if let Some((m, path)) = &mods {
        layers::apply_modifications(&mut merged, m, path)?;
    }
    let mut ignored = Vec::new();
    let decl = portcullis_policy::read_decl(&Value::Object(merged), "policy", &mut ignored)?;
    let model = model::Model::build(decl, template, &body_decl, &mut warnings)?;
    let mut summary = model.summary();
    let mut policy = build::compile(&model)?;
    policy.api = api;
    policy.set_json_schemas(checks::json_schema::compile(&model.decl)?);
    if let Some(raw) = &model.decl.grpc_profiles {
        policy.set_grpc_profiles(checks::grpc::compile_profiles(raw, base, resolver)?);
    }
    summary.signatures_enabled = policy.signatures_enabled();
    summary.api_operations = policy.api().map_or(0, |a| a.operations.len());
    summary.urls += summary.api_operations;
    Ok(Loaded {
        policy,
        warnings,
        summary,
    })
}

type Root = (Map<String, Value>, Option<Value>, Option<String>);

/// Finds the `policy` object (wrapper, APPolicy `spec`, or bare in lenient mode) and `modifications`.
fn unwrap_root(
    root: Value,
    opts: LoadOptions,
    warnings: &mut Vec<String>,
) -> Result<Root, PolicyError> {
    let Value::Object(mut root) = root else {
        return Err(PolicyError::invalid(
            "document",
            "expected a JSON object with a \"policy\" member",
        ));
    };
    if root.get("kind").and_then(Value::as_str) == Some("APPolicy")
        && let Some(Value::Object(spec)) = root.remove("spec")
    {
        warnings.push("document: Kubernetes APPolicy resource; using its spec".into());
        root = spec;
    }
    for key in root.keys() {
        if !matches!(
            key.as_str(),
            "policy" | "modifications" | "modificationsReference"
        ) {
            let hint =
                sections::suggest(key, ["policy", "modifications", "modificationsReference"])
                    .map(|s| format!(" (did you mean \"{s}\"?)"))
                    .unwrap_or_default();
            if root.contains_key("policy") {
                warnings.push(format!("{key}: unknown top-level member ignored{hint}"));
            }
        }
    }
    let mods = root.remove("modifications");
    let mods_ref = match root.remove("modificationsReference") {
        Some(r) => Some(
            r.get("link")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    PolicyError::invalid("modificationsReference.link", "missing or not a string")
                })?
                .to_string(),
        ),
        None => None,
    };
    match root.remove("policy") {
        Some(Value::Object(p)) => Ok((p, mods, mods_ref)),
        Some(_) => Err(PolicyError::invalid("policy", "expected an object")),
        None if root.contains_key("name") || root.contains_key("template") => {
            if opts.lenient {
                warnings.push(
                    "document: no \"policy\" wrapper; the root object is read as the policy".into(),
                );
                Ok((root, mods, mods_ref))
            } else {
                Err(PolicyError::invalid(
                    "document",
                    "the root object lacks the \"policy\" wrapper (it looks like a bare \
                     policy: wrap it as {\"policy\": {...}}, or check it with --lenient)",
                ))
            }
        }
        None => Err(PolicyError::invalid(
            "policy",
            "missing (expected {\"policy\": {...}})",
        )),
    }
}

/// The fuzz entry point (`fuzz/fuzz_targets/policy_json.rs`): loads `data` as a policy document
/// with no resolver, in both strict and lenient mode; never panics.
#[cfg(any(test, fuzzing))]
pub fn fuzz_policy_json(data: &[u8]) {
    for lenient in [false, true] {
        let _ = load_with(
            data,
            "fuzz.json",
            &super::resolver::NoResolver,
            LoadOptions { lenient },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzz_seeds_load_without_panicking() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/policy_json");
        let mut n = 0;
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let data = std::fs::read(e.path()).unwrap_or_default();
            fuzz_policy_json(&data);
            n += 1;
        }
        assert!(n >= 5);
    }

    #[test]
    fn truncated_json_names_line_and_column() {
        let e = load(
            b"{\n \"policy\": {\"name\": \"p\",",
            "p.json",
            &crate::resolver::NoResolver,
        )
        .err();
        let msg = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.starts_with("JSON error at line 2 column"), "{msg}");
    }

    #[test]
    fn bare_policy_needs_lenient_mode() {
        let doc = br#"{"name": "bare", "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"}}"#;
        assert!(load(doc, "p.json", &crate::resolver::NoResolver).is_err());
        let l = load_with(
            doc,
            "p.json",
            &crate::resolver::NoResolver,
            LoadOptions { lenient: true },
        );
        assert!(l.is_ok_and(|l| l.warnings.iter().any(|w| w.contains("wrapper"))));
    }
}
