//! Which policy entities judged a request: the URL (a policy URL, an OpenAPI operation, or
//! none), the file type, the JSON or XML profile of the body, the parameter, header and cookie
//! entities of a name. The management plane's tuning loop turns a violation into a change of
//! exactly the entity that raised it, so it asks the engine itself rather than re-implementing
//! its lookups: [`CompiledPolicy::owners`] runs the real headers phase on a scratch of its own.

use crate::policy::compile::compiled::{CompiledPolicy, Scratch};
use crate::policy::compile::entities::{BodyKind, NameMatch, pick};
use crate::signatures::Level;
use crate::violation::{Violation, ViolationKind};

/// The URL entity that judged a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UrlOwner {
    /// A policy URL: its merge key (name, method `*` or one, protocol) and whether it is a wildcard.
    Entity {
        name: String,
        method: String,
        protocol: &'static str,
        wildcard: bool,
    },
    /// An operation of the policy's OpenAPI spec (the spec, not the policy, declares it).
    Spec,
    /// No URL entity (VIOL_URL).
    None,
}

/// The body's content profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BodyOwner {
    Json(String),
    Xml(String),
    /// Parsed as form fields (parameters), signatures on the raw body, or not inspected.
    Other,
}

/// The entities one request met in the headers phase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owners {
    pub url: UrlOwner,
    /// The file-type entity (its name, e.g. `*` or `php`), if one matched.
    pub filetype: Option<String>,
    pub body: BodyOwner,
    /// The normalised, decoded path (what URL entities and URL-level parameters match).
    pub path: Vec<u8>,
}

/// A named entity (parameter, header, cookie) and whether it is a wildcard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    pub name: String,
    pub wildcard: bool,
    /// For a URL-level parameter: the URL name it belongs to.
    pub url: Option<String>,
}

fn named(m: &NameMatch, url: Option<&NameMatch>) -> Named {
    Named {
        name: m.name.clone(),
        wildcard: m.glob.is_some(),
        url: url.map(|u| u.name.clone()),
    }
}

impl CompiledPolicy {
    /// Runs the headers phase on `head` (on a scratch of its own) and reports the entities it used.
    pub fn owners(&self, head: &crate::RequestHead, tls: bool) -> Owners {
        let mut s = Scratch::default();
        let mut found = Vec::new();
        self.check_headers(head, tls, &mut s, &mut found);
        let policy_url = s.url.and_then(|i| self.urls.get(i));
        let explicit = policy_url.is_some_and(|u| u.m.glob.is_none());
        let url = match policy_url {
            _ if s.api.is_some() && !explicit => UrlOwner::Spec,
            Some(u) => UrlOwner::Entity {
                name: u.m.name.clone(),
                method: u.method.clone().unwrap_or_else(|| "*".into()),
                protocol: if u.https == Some(true) {
                    "https"
                } else {
                    "http"
                },
                wildcard: u.m.glob.is_some(),
            },
            None => UrlOwner::None,
        };
        let body = match s.body_kind {
            Some(BodyKind::Json(i)) => self
                .json
                .get(i)
                .map_or(BodyOwner::Other, |p| BodyOwner::Json(p.name.clone())),
            Some(BodyKind::Xml(i)) => self
                .xml
                .get(i)
                .map_or(BodyOwner::Other, |p| BodyOwner::Xml(p.name.clone())),
            _ => BodyOwner::Other,
        };
        Owners {
            url,
            filetype: s
                .filetype
                .and_then(|i| self.filetypes.get(i))
                .map(|f| f.m.name.clone()),
            body,
            path: s.path,
        }
    }

    /// The parameter entity that judges parameter `name` on (normalised) `path`.
    pub fn parameter_owner(&self, path: &[u8], name: &str) -> Option<Named> {
        let s = Scratch {
            path: path.to_vec(),
            ..Scratch::default()
        };
        self.param_for(&s, name.as_bytes())
            .map(|p| named(&p.m, p.url.as_ref()))
    }

    /// The header entity that judges header `name` (lower case).
    pub fn header_owner(&self, name: &str) -> Option<Named> {
        pick(self.headers.iter(), |c| &c.m, name.as_bytes(), true).map(|c| named(&c.m, None))
    }

    /// The cookie entity that judges cookie `name`.
    pub fn cookie_owner(&self, name: &str) -> Option<Named> {
        pick(self.cookies.iter(), |c| &c.m, name.as_bytes(), false).map(|c| named(&c.m, None))
    }

    /// Whether `v` carries an enforced (not staged) attack signature of high accuracy: the
    /// signatures this engine rates 5 and that say "attack" with the least doubt.
    pub fn high_accuracy_hit(&self, v: &Violation) -> bool {
        !v.staged
            && v.kind == ViolationKind::AttackSignature
            && v.signature_ids
                .iter()
                .filter_map(|id| self.sigs.get(id))
                .any(|a| a.accuracy == Level::High && !a.staged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::load;
    use crate::resolver::MemResolver;

    fn policy(doc: serde_json::Value) -> CompiledPolicy {
        let bytes = serde_json::to_vec(&doc).unwrap();
        load(&bytes, "", &MemResolver::default()).unwrap().policy
    }

    fn head(m: &str, uri: &str, ct: Option<&str>) -> crate::RequestHead {
        let mut b = http::Request::builder().method(m).uri(uri);
        if let Some(ct) = ct {
            b = b.header("content-type", ct).header("content-length", "2");
        }
        b.body(()).unwrap().into_parts().0.into()
    }

    #[test]
    fn the_entities_are_the_ones_the_engine_used() {
        let p = policy(serde_json::json!({"policy": {
            "name": "p", "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"},
            "urls": [{"name": "/api/items", "method": "POST", "protocol": "http"}],
            "parameters": [{"name": "q", "type": "explicit"}],
            "headers": [{"name": "x-trace", "type": "explicit"}]
        }}));
        let o = p.owners(&head("POST", "/api/items?q=1", None), false);
        assert_eq!(
            o.url,
            UrlOwner::Entity {
                name: "/api/items".into(),
                method: "POST".into(),
                protocol: "http",
                wildcard: false
            }
        );
        let o = p.owners(&head("GET", "/x/y.php", Some("application/json")), false);
        assert!(
            matches!(&o.url, UrlOwner::Entity { name, wildcard: true, .. } if name == "*"),
            "{o:?}"
        );
        assert_eq!(o.body, BodyOwner::Json("Default".into()));
        assert_eq!(o.path, b"/x/y.php");
        assert!(!p.parameter_owner(b"/x", "q").unwrap().wildcard);
        assert!(p.parameter_owner(b"/x", "other").unwrap().wildcard);
        assert_eq!(p.header_owner("x-trace").unwrap().name, "x-trace");
        assert!(p.header_owner("user-agent").is_none_or(|h| h.wildcard));
    }
}
