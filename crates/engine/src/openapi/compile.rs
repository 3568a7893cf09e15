//! `ApiSpec` → `CompiledApi`: server prefixes (2.0 `basePath`, 3.x `servers`), the path trie and one
//! [`Operation`] per (path, method) (built in `op_compile`), plus the per-request lookup `find`
//! (`locate`: the same without allocating, for the compiled policy's hot path).

use super::load::{ApiSpec, SpecVersion};
use super::op_compile::{api_key_param, compile_op, query_api_keys};
use super::operation::{Content, Operation};
use super::param::{Location, Param};
use super::router::{
    ApiMatch, Caps, OpMatch, Router, Undocumented, guess_template, template_params,
};
use super::schema::SchemaCompiler;
use super::{OpenApiError, OpenApiLimits};
use serde_json::Value;
use std::sync::Arc;

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// A spec compiled for enforcement: immutable, `Send + Sync`, shared by every request.
#[derive(Debug)]
pub struct CompiledApi {
    pub version: SpecVersion,
    /// Path prefixes from `basePath` / `servers[].url` (empty = none), longest first.
    pub prefixes: Vec<String>,
    pub(crate) router: Router,
    pub operations: Vec<Operation>,
    /// Things accepted but not enforced (e.g. patterns the regex engine cannot compile).
    pub warnings: Vec<String>,
    /// Security schemes and per-operation `security`, for API access control.
    pub security: crate::access::openapi::OpenApiSecurity,
}

impl CompiledApi {
    /// Compiles a loaded spec; errors name the file, JSON pointer and reason.
    pub fn compile(spec: &ApiSpec, limits: &OpenApiLimits) -> Result<CompiledApi, OpenApiError> {
        let mut sc = SchemaCompiler::new(spec, limits);
        let root = spec.root();
        let prefixes = prefixes(spec);
        let mut router = Router::default();
        let mut pending: Vec<Pending> = Vec::new();
        let api_keys = query_api_keys(spec);
        if let Some(Value::Object(paths)) = root.get("paths") {
            for (template, item) in paths {
                if !template.starts_with('/') {
                    continue; // `x-` extensions
                }
                let at = format!("/paths/{}", template.replace('~', "~0").replace('/', "~1"));
                let (doc, item_at, item) = spec.deref(0, &at, item)?;
                let Value::Object(item) = item else {
                    return Err(OpenApiError::new(
                        spec.doc_link(doc),
                        &item_at,
                        "path item must be an object",
                    ));
                };
                let shared = item.get("parameters");
                for method in METHODS {
                    let Some(op) = item.get(method) else { continue };
                    let op_at = format!("{item_at}/{method}");
                    let leaf = router.insert(template);
                    let mut compiled = compile_op(
                        &mut sc, doc, &op_at, template, method, op, shared, &item_at, root,
                    )?;
                    for key in &api_keys {
                        if !compiled
                            .params
                            .iter()
                            .any(|p| p.location == Location::Query && p.name == *key)
                        {
                            compiled.params.push(api_key_param(key));
                        }
                    }
                    pending.push(Pending { leaf, op: compiled });
                }
            }
        }
        let schemas = Arc::new(std::mem::take(&mut sc.out));
        let warnings = sc.warnings;
        let prefix = prefixes.first().cloned().unwrap_or_default();
        let mut operations = Vec::with_capacity(pending.len());
        for (i, p) in pending.into_iter().enumerate() {
            let method = p.op.method.to_ascii_uppercase();
            router.leaves[p.leaf].ops.push((method.clone(), i));
            let query_index = Operation::index_query(&p.op.params);
            operations.push(Operation {
                method,
                url: format!("{prefix}{}", p.op.template),
                operation_id: p.op.operation_id,
                params: p.op.params,
                path_names: template_params(&p.op.template),
                body_required: p.op.body_required,
                contents: p.op.contents,
                schemas: Arc::clone(&schemas),
                limits: limits.clone(),
                query_index,
            });
        }
        Ok(CompiledApi {
            version: spec.version,
            prefixes,
            router,
            operations,
            warnings,
            security: crate::access::openapi::OpenApiSecurity::from_root(root),
        })
    }

    /// Matches a request: `path` is the path as sent (no query string, not percent-decoded).
    pub fn find<'a, 'p>(&'a self, method: &str, path: &'p str) -> ApiMatch<'a, 'p> {
        let mut caps = Caps::new();
        match self.locate(method, path, &mut caps) {
            Located::Operation(i) => {
                let op = &self.operations[i];
                let path_params = op
                    .path_names
                    .iter()
                    .map(String::as_str)
                    .zip(caps.iter().copied())
                    .collect();
                ApiMatch::Operation(OpMatch { op, path_params })
            }
            miss => self.miss(method, path, miss),
        }
    }

    /// [`Self::find`] without allocating: the operation's index (`operations[i]`) with the path
    /// values it captured in `caps` (in the order of [`Operation::path_param_names`]), or where
    /// the miss is, for [`Self::miss`].
    pub(crate) fn locate<'p>(&self, method: &str, path: &'p str, caps: &mut Caps<'p>) -> Located {
        for (p, prefix) in self.prefixes.iter().enumerate() {
            let Some(rest) = strip_prefix(path, prefix) else {
                continue;
            };
            caps.clear();
            let Some(leaf) = self.router.lookup(rest, caps) else {
                continue;
            };
            return match self.router.leaves[leaf]
                .ops
                .iter()
                .find(|(m, _)| m.eq_ignore_ascii_case(method))
            {
                Some(&(_, i)) => Located::Operation(i),
                None => Located::WrongMethod { prefix: p, leaf },
            };
        }
        Located::NoUrl
    }

    /// The [`ApiMatch`] of a request [`Self::locate`] did not find an operation for (the texts
    /// of its violation).
    pub(crate) fn miss<'a, 'p>(
        &'a self,
        method: &str,
        path: &str,
        at: Located,
    ) -> ApiMatch<'a, 'p> {
        match at {
            Located::WrongMethod { prefix, leaf } => {
                let leaf = &self.router.leaves[leaf];
                let allowed = leaf.ops.iter().map(|(m, _)| m.as_str()).collect();
                let template = format!("{}{}", self.prefixes[prefix], leaf.template);
                ApiMatch::WrongMethod {
                    allowed,
                    undocumented: Undocumented {
                        method: method.to_ascii_uppercase(),
                        template,
                    },
                }
            }
            Located::Operation(_) | Located::NoUrl => ApiMatch::NoUrl(Undocumented {
                method: method.to_ascii_uppercase(),
                template: guess_template(path),
            }),
        }
    }
}

/// What [`CompiledApi::locate`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Located {
    /// `operations[i]`.
    Operation(usize),
    /// The path matches leaf `leaf` under `prefixes[prefix]`, the method is not declared for it.
    WrongMethod { prefix: usize, leaf: usize },
    /// No template matches the path.
    NoUrl,
}

fn strip_prefix<'p>(path: &'p str, prefix: &str) -> Option<&'p str> {
    let rest = path.strip_prefix(prefix)?;
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

struct Pending {
    leaf: usize,
    op: PendingOp,
}

pub(crate) struct PendingOp {
    pub(crate) method: String,
    pub(crate) template: String,
    pub(crate) operation_id: Option<String>,
    pub(crate) params: Vec<Param>,
    pub(crate) body_required: bool,
    pub(crate) contents: Vec<Content>,
}

/// `basePath` (2.0) or the path part of every `servers[].url` (3.x), trailing `/` removed.
fn prefixes(spec: &ApiSpec) -> Vec<String> {
    let root = spec.root();
    let mut out: Vec<String> = match spec.version {
        SpecVersion::Swagger2 => vec![
            root.get("basePath")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        ],
        _ => root
            .get("servers")
            .and_then(Value::as_array)
            .map(|servers| servers.iter().filter_map(server_path).collect())
            .unwrap_or_default(),
    };
    for p in &mut out {
        while p.ends_with('/') {
            p.pop();
        }
        if !p.is_empty() && !p.starts_with('/') {
            p.insert(0, '/');
        }
    }
    if out.is_empty() {
        out.push(String::new());
    }
    out.sort_by_key(|p| std::cmp::Reverse(p.len()));
    out.dedup();
    out
}

/// The path of a server URL with its variables replaced by their defaults.
fn server_path(server: &Value) -> Option<String> {
    let mut url = server.get("url")?.as_str()?.to_string();
    if let Some(Value::Object(vars)) = server.get("variables") {
        for (name, var) in vars {
            let default = var.get("default").and_then(Value::as_str).unwrap_or("");
            url = url.replace(&format!("{{{name}}}"), default);
        }
    }
    let path = match url.find("://") {
        Some(i) => url[i + 3..]
            .find('/')
            .map_or(String::new(), |j| url[i + 3 + j..].to_string()),
        None => url,
    };
    Some(path)
}
