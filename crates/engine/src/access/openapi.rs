//! OpenAPI `security` → access requirements. The spec's security schemes (`securitySchemes`, or
//! Swagger 2.0 `securityDefinitions`) and the `security` of each operation (or of the root) are
//! read once when the spec is compiled; per request, the matched operation's requirement is
//! resolved against the attached access profile:
//!
//! | scheme | profile method used |
//! | --- | --- |
//! | any, named like a profile method | that method |
//! | `apiKey` (`in`, `name`) | the API-key method with the same location and name |
//! | `http` `bearer`, `oauth2`, `openIdConnect` | the first JWT or introspection method |
//! | `http` `basic` (Swagger 2.0 `basic`) | the first Basic method |
//!
//! Scopes listed in the requirement (oauth2, openIdConnect) become scope checks. A requirement
//! naming a scheme no method can serve cannot be met (fail closed).

use std::collections::HashMap;

use portcullis_support::json_strings;
use serde_json::Value;

use super::profile::{AccessProfile, KeyLocation, MethodKind, Requirement};
use crate::openapi::{ApiMatch, CompiledApi};

/// What a security scheme is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scheme {
    ApiKey { location: String, name: String },
    Bearer,
    Basic,
    Other(String),
}

/// One operation's `security`: alternatives of (scheme name, scopes).
pub type SecurityReq = Vec<Vec<(String, Vec<String>)>>;

/// The security of a compiled spec.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenApiSecurity {
    pub schemes: HashMap<String, Scheme>,
    /// (upper-case method, path template as written in `paths`) → requirement.
    pub operations: HashMap<(String, String), SecurityReq>,
}

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

fn requirement_of(v: Option<&Value>) -> Option<SecurityReq> {
    let Value::Array(alts) = v? else { return None };
    Some(
        alts.iter()
            .filter_map(Value::as_object)
            .map(|alt| {
                alt.iter()
                    .map(|(name, scopes)| (name.clone(), json_strings(Some(scopes))))
                    .collect()
            })
            .collect(),
    )
}

impl OpenApiSecurity {
    /// Reads the schemes and requirements of a spec's root document (inline path items only).
    pub fn from_root(root: &Value) -> OpenApiSecurity {
        let defs = root
            .pointer("/components/securitySchemes")
            .or_else(|| root.get("securityDefinitions"));
        let mut schemes = HashMap::new();
        if let Some(Value::Object(defs)) = defs {
            for (name, s) in defs {
                let ty = s.get("type").and_then(Value::as_str).unwrap_or_default();
                let text = |k: &str| {
                    s.get(k)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                };
                let scheme = match ty {
                    "apiKey" => Scheme::ApiKey {
                        location: text("in"),
                        name: text("name"),
                    },
                    "http" if text("scheme").eq_ignore_ascii_case("basic") => Scheme::Basic,
                    "http" if text("scheme").eq_ignore_ascii_case("bearer") => Scheme::Bearer,
                    "basic" => Scheme::Basic,
                    "oauth2" | "openIdConnect" => Scheme::Bearer,
                    other => Scheme::Other(other.to_string()),
                };
                schemes.insert(name.clone(), scheme);
            }
        }
        let global = requirement_of(root.get("security"));
        let mut operations = HashMap::new();
        if let Some(Value::Object(paths)) = root.get("paths") {
            for (template, item) in paths.iter().filter(|(t, _)| t.starts_with('/')) {
                for m in METHODS {
                    let Some(op) = item.get(m) else { continue };
                    if let Some(req) = requirement_of(op.get("security")).or_else(|| global.clone())
                    {
                        operations.insert((m.to_ascii_uppercase(), template.clone()), req);
                    }
                }
            }
        }
        OpenApiSecurity {
            schemes,
            operations,
        }
    }

    /// The requirement of an operation (method upper case, template as in `paths`).
    pub fn of(&self, method: &str, template: &str) -> Option<&SecurityReq> {
        self.operations
            .get(&(method.to_string(), template.to_string()))
    }

    /// Resolves `req` against the profile's methods. `None` when it cannot be met (every
    /// alternative names a scheme no method serves).
    pub fn resolve(&self, p: &AccessProfile, req: &SecurityReq) -> Option<Requirement> {
        let mut alternatives = Vec::new();
        'alt: for alt in req {
            let mut all = Vec::new();
            for (name, scopes) in alt {
                let Some(id) = self.method_for(p, name) else {
                    continue 'alt;
                };
                all.push((id, scopes.clone()));
            }
            alternatives.push(all);
        }
        if alternatives.is_empty() && !req.is_empty() {
            return None;
        }
        Some(Requirement { alternatives })
    }

    fn method_for(&self, p: &AccessProfile, scheme: &str) -> Option<usize> {
        if let Some(id) = p.method_id(scheme) {
            return Some(id);
        }
        let s = self.schemes.get(scheme)?;
        p.methods.iter().position(|m| match (s, &m.kind) {
            (Scheme::ApiKey { location, name }, MethodKind::ApiKey { location: l, .. }) => {
                match l {
                    KeyLocation::Header(h) => location == "header" && h.eq_ignore_ascii_case(name),
                    KeyLocation::Query(q) => location == "query" && q == name,
                }
            }
            (Scheme::Bearer, MethodKind::Jwt(_) | MethodKind::Introspection(_)) => true,
            (Scheme::Basic, MethodKind::Basic { .. }) => true,
            _ => false,
        })
    }
}

/// What the OpenAPI spec says the request needs: `None` when the spec has no operation or no
/// `security` for it; `Some(None)` when its requirement cannot be met by the profile.
pub fn operation_requirement(
    p: &AccessProfile,
    api: &CompiledApi,
    method: &str,
    path: &str,
) -> Option<Option<Requirement>> {
    let ApiMatch::Operation(m) = api.find(method, path) else {
        return None;
    };
    let prefix = api.prefixes.first().map_or("", String::as_str);
    let template = m.op.url.strip_prefix(prefix).unwrap_or(&m.op.url);
    let req = api.security.of(&m.op.method, template)?;
    Some(api.security.resolve(p, req))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn operations_inherit_the_root_security_and_schemes_map_to_methods() {
        let spec = json!({
            "openapi": "3.0.3",
            "security": [{"key": []}],
            "components": {"securitySchemes": {
                "key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
                "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://x/.well-known"},
                "ops": {"type": "http", "scheme": "basic"}}},
            "paths": {"/pets": {"get": {}, "post": {"security": [{"oidc": ["pets:write"]}]},
                                "delete": {"security": []}}}
        });
        let sec = OpenApiSecurity::from_root(&spec);
        assert_eq!(
            sec.of("GET", "/pets"),
            Some(&vec![vec![("key".to_string(), vec![])]])
        );
        assert_eq!(sec.of("DELETE", "/pets"), Some(&vec![]));
        let p = crate::access::from_value(
            &json!({"methods": {
                "partner": {"apiKey": {"in": "header", "name": "x-api-key"}},
                "sso": {"jwt": {"jwksUrl": "http://127.0.0.1/jwks"}}}}),
            "t",
        )
        .unwrap();
        let post = sec.resolve(&p, sec.of("POST", "/pets").unwrap()).unwrap();
        assert_eq!(
            post.alternatives,
            vec![vec![(1, vec!["pets:write".to_string()])]]
        );
        let get = sec.resolve(&p, sec.of("GET", "/pets").unwrap()).unwrap();
        assert_eq!(get.alternatives, vec![vec![(0, vec![])]]);
        assert!(
            sec.resolve(&p, sec.of("DELETE", "/pets").unwrap())
                .unwrap()
                .anonymous()
        );
        // No Basic method in the profile: a requirement of only `ops` cannot be met.
        assert_eq!(
            sec.resolve(&p, &vec![vec![("ops".to_string(), vec![])]]),
            None
        );
    }
}
