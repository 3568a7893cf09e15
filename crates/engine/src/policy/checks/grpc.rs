//! gRPC enforcement of the compiled policy (`docs/grpc.md`): `grpc-profiles` compiled
//! through the resolver, the headers-phase call checks of a URL bound to a profile (`grpc_urls`
//! binds them) and the body phase that streams the call message by message through the profile's
//! [`GrpcStream`], string fields checked by the policy's signatures and meta-characters.

use std::sync::Arc;

use serde_json::Value;

use crate::Resolver;
use crate::grpc::{self, CompiledGrpcProfile, GrpcProfileSpec};
use crate::policy::PolicyError;
use crate::policy::compile::compiled::{CompiledPolicy, Scratch};
use crate::signatures::Target;
use crate::transaction::Step;
use crate::violation::{Context, Violation, ViolationKind as K};

/// Compiles the raw `grpc-profiles` entries; `base` is the policy's own link (IDL `$ref`s are
/// relative to it).
pub fn compile_profiles(
    raw: &[Value],
    base: &str,
    resolver: &dyn Resolver,
) -> Result<Vec<Arc<CompiledGrpcProfile>>, PolicyError> {
    raw.iter()
        .enumerate()
        .map(|(i, v)| {
            let spec: GrpcProfileSpec =
                serde_json::from_value(lenient_flags(v.clone())).map_err(|e| {
                    PolicyError::invalid(format!("policy.grpc-profiles[{i}]"), e.to_string())
                })?;
            grpc::GrpcProfile::compile(&spec, resolver, base)
                .map(Arc::new)
                .map_err(|e| {
                    PolicyError::invalid(format!("policy.grpc-profiles[{i}]"), e.to_string())
                })
        })
        .collect()
}

/// Real-world profiles spell some switches as strings (`"decodeStringValuesAsBase64": "enabled"`):
/// `"enabled"`/`"true"` and `"disabled"`/`"false"` become booleans before the spec is read.
fn lenient_flags(mut v: Value) -> Value {
    const FLAGS: &[&str] = &[
        "associateUrls",
        "attackSignaturesCheck",
        "metacharCheck",
        "metacharElementCheck",
        "decodeStringValuesAsBase64",
        "allowUnknownFields",
    ];
    fn fix(obj: &mut serde_json::Map<String, Value>) {
        for (k, v) in obj.iter_mut() {
            if let Value::Object(inner) = v {
                fix(inner);
            } else if FLAGS.contains(&k.as_str())
                && let Value::String(text) = v
            {
                match text.trim().to_ascii_lowercase().as_str() {
                    "enabled" | "true" => *v = Value::Bool(true),
                    "disabled" | "false" => *v = Value::Bool(false),
                    _ => {}
                }
            }
        }
    }
    if let Value::Object(obj) = &mut v {
        fix(obj);
    }
    v
}

/// After a chunk fed to a message inspector: release what it inspected, or pass the rest through
/// once it gave up.
fn next_step(r: &grpc::FeedResult) -> Step {
    if r.passthrough {
        Step::PassRest
    } else {
        Step::Release(r.release)
    }
}

impl CompiledPolicy {
    /// Headers phase for a bound call: method, IDL method and content type. Returns true when the
    /// body must be streamed through the inspector.
    pub(in crate::policy) fn grpc_start(
        &self,
        head: &crate::RequestHead,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) -> bool {
        let Some(profile) = s.grpc_profile.and_then(|i| self.grpc_profiles.get(i)) else {
            return false;
        };
        s.grpc = true;
        let start = grpc::start_call(profile, head);
        self.push_all(out, start.violations);
        s.grpc_stream = start.stream;
        s.grpc_stream.is_some()
    }

    /// Body phase for a streamed call: feeds the chunk, releases whole inspected messages.
    pub(in crate::policy) fn grpc_chunk(
        &self,
        chunk: &[u8],
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) -> Step {
        let Some(mut stream) = s.grpc_stream.take() else {
            return Step::PassRest;
        };
        // Stream and string-check findings alike go through `push`, so a violation switched off
        // in `blocking-settings` is not recorded.
        let (mut found, mut raised) = (Vec::new(), Vec::new());
        let r = stream.feed(chunk, &mut self.grpc_check(s, &mut found), &mut raised);
        self.push_all(out, raised.into_iter().chain(found));
        s.grpc_stream = Some(stream);
        next_step(&r)
    }

    /// Body end for a streamed call: a body cut inside a frame is malformed.
    pub(in crate::policy) fn grpc_end(&self, s: &mut Scratch, out: &mut Vec<Violation>) {
        if let Some(mut stream) = s.grpc_stream.take() {
            let mut raised = Vec::new();
            stream.finish(&mut raised);
            self.push_all(out, raised);
        }
    }

    /// Body phase for a gRPC call on a URL no profile binds: each whole message is scanned as
    /// raw bytes (the URL's signature check and overrides) and released.
    pub(in crate::policy) fn opaque_chunk(
        &self,
        chunk: &[u8],
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) -> Step {
        let Some(mut call) = s.grpc_opaque.take() else {
            return Step::PassRest;
        };
        s.body_len += chunk.len() as u64;
        let (ov, sig) = match s.url.and_then(|i| self.urls.get(i)) {
            Some(u) => (u.overrides.as_slice(), u.sig_check),
            None => (&[][..], true),
        };
        let mut raised = Vec::new();
        let mut message = |m: &[u8]| {
            if sig {
                self.scan(s, out, Target::Body, Context::Grpc, None, m, ov, false);
            }
        };
        let r = call.feed(chunk, &mut message, &mut raised);
        self.push_all(out, raised);
        s.grpc_opaque = Some(call);
        next_step(&r)
    }

    /// Body end of such a call: a body cut inside a frame is malformed.
    pub(in crate::policy) fn opaque_end(&self, s: &mut Scratch, out: &mut Vec<Violation>) {
        if let Some(mut call) = s.grpc_opaque.take() {
            let mut raised = Vec::new();
            call.finish(&mut raised);
            self.push_all(out, raised);
        }
        self.check_mandatory(s, out, true);
    }

    /// The string-value check: the policy's signatures (`Target::Grpc`, the profile's overrides)
    /// and meta-characters, named by the field path. Extra findings go to `found`.
    fn grpc_check<'a>(
        &'a self,
        s: &'a Scratch,
        found: &'a mut Vec<Violation>,
    ) -> impl FnMut(&str, &str) -> Option<Violation> + 'a {
        let profile = s.grpc_profile.and_then(|i| self.grpc_profiles.get(i));
        let sig = profile.is_some_and(|p| p.attack_signatures_check()) && !self.sigs.is_empty();
        let meta = profile.is_some_and(|p| p.metachar_check());
        let overrides: &[(u32, bool)] = profile.map(|p| p.signature_overrides()).unwrap_or(&[]);
        let mut hits = Vec::new();
        move |path: &str, value: &str| {
            if meta && let Some(c) = self.grpc_table.first_bad(value.as_bytes()) {
                found.push(
                    Violation::new(K::ParameterValueMetachar, Context::Grpc)
                        .named(path)
                        .snippet(value.as_bytes())
                        .metachar(c),
                );
            }
            if sig && !value.is_empty() {
                hits.clear();
                crate::signatures::SignatureDb::builtin().scan(
                    Target::Grpc,
                    value.as_bytes(),
                    &mut hits,
                );
                hits.retain(|id| {
                    self.sigs.contains_key(id) && !overrides.iter().any(|(o, en)| o == id && !en)
                });
                hits.sort_unstable();
                hits.dedup();
                if !hits.is_empty() {
                    found.push(
                        Violation::new(K::AttackSignature, Context::Grpc)
                            .signatures(hits.clone())
                            .named(path)
                            .snippet(value.as_bytes()),
                    );
                }
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::net::{IpAddr, Ipv4Addr};
    use std::sync::Arc;

    use serde_json::json;

    use crate::resolver::MemResolver;
    use crate::transaction::{ConnInfo, Step, Transaction};
    use crate::violation::ViolationKind as K;

    const PROTO: &str = include_str!("../../../../../policies/demo/demo.proto");
    const IDL: &str = "file:///p/demo.proto";

    /// A blocking policy with the demo profile; `profile` fields are merged into the profile.
    fn policy(profile: serde_json::Value, extra: serde_json::Value) -> Arc<super::CompiledPolicy> {
        let mut p = json!({
            "name": "demo_profile",
            "associateUrls": true,
            "defenseAttributes": {"allowUnknownFields": false, "maximumDataLength": 1000},
            "idlFiles": [{"idlFile": {"$ref": IDL}, "isPrimary": true}]
        });
        for (k, v) in profile.as_object().into_iter().flatten() {
            p[k] = v.clone();
        }
        let mut body = json!({
            "name": "g",
            "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"},
            "enforcementMode": "blocking",
            "grpc-profiles": [p],
            "urls": [{"name": "*", "type": "wildcard", "method": "*", "$action": "delete"}],
            "blocking-settings": {"violations": [
                {"name": "VIOL_GRPC_MALFORMED", "alarm": true, "block": true},
                {"name": "VIOL_GRPC_FORMAT", "alarm": true, "block": true},
                {"name": "VIOL_GRPC_METHOD", "alarm": true, "block": true},
                {"name": "VIOL_PARAMETER_VALUE_METACHAR", "alarm": true, "block": true},
                {"name": "VIOL_METHOD", "alarm": true, "block": true},
                {"name": "VIOL_URL", "alarm": true, "block": true}
            ]}
        });
        for (k, v) in extra.as_object().into_iter().flatten() {
            body[k] = v.clone();
        }
        let doc = serde_json::to_vec(&json!({ "policy": body })).unwrap_or_default();
        let r = MemResolver(HashMap::from([(
            IDL.to_string(),
            PROTO.as_bytes().to_vec(),
        )]));
        match crate::policy::load(&doc, "file:///p/policy.json", &r) {
            Ok(l) => Arc::new(l.policy),
            Err(e) => panic!("policy loads: {e}"),
        }
    }

    fn head(method: &str, path: &str, ct: &str) -> crate::RequestHead {
        let req = http::Request::builder()
            .method(method)
            .uri(format!("http://h{path}"))
            .version(http::Version::HTTP_2)
            .header("content-type", ct)
            .header("te", "trailers")
            .body(())
            .unwrap_or_default();
        req.into_parts().0.into()
    }

    /// One frame holding a HelloRequest whose `name` (field 1) is `name`.
    fn hello(name: &str) -> Vec<u8> {
        let mut msg = vec![0x0a, name.len() as u8];
        msg.extend_from_slice(name.as_bytes());
        let mut f = vec![0];
        f.extend_from_slice(&(msg.len() as u32).to_be_bytes());
        f.extend_from_slice(&msg);
        f
    }

    fn tx(p: &Arc<super::CompiledPolicy>) -> Transaction {
        let conn = ConnInfo {
            peer: IpAddr::V4(Ipv4Addr::LOCALHOST),
            tls: false,
        };
        Transaction::new(p.clone(), conn)
    }

    fn kinds(mut t: Transaction) -> Vec<(K, String)> {
        t.finish(&crate::Fields::default())
            .map(|e| {
                e.violations
                    .into_iter()
                    .map(|v| (v.kind, v.name.unwrap_or_default()))
                    .collect()
            })
            .unwrap_or_default()
    }

    const SAY: &str = "/demo.v1.Greeter/SayHello";

    #[test]
    fn messages_are_released_one_by_one_and_a_clean_call_passes() {
        let p = policy(json!({}), json!({}));
        let mut t = tx(&p);
        assert_eq!(
            t.on_request_headers(&head("POST", SAY, "application/grpc")),
            Step::InspectBody
        );
        let m = hello("alice");
        // Half a message releases nothing; the rest releases the whole message.
        assert_eq!(t.on_request_body(&m[..4]), Step::Release(0));
        assert_eq!(t.on_request_body(&m[4..]), Step::Release(m.len() as u64));
        assert_eq!(t.on_request_end(), Step::Forward);
        assert!(kinds(t).is_empty());
    }

    #[test]
    fn head_checks_of_a_bound_url() {
        let p = policy(json!({}), json!({}));
        let mut t = tx(&p);
        let step = t.on_request_headers(&head("POST", "/demo.v1.Greeter/Nope", "application/grpc"));
        assert_eq!(step, Step::Block);
        let reply = t.block_response();
        assert_eq!(reply.status, 200);
        assert!(
            reply
                .headers
                .iter()
                .any(|(k, v)| k == "grpc-status" && v == "3")
        );
        assert!(kinds(t).iter().any(|(k, _)| *k == K::GrpcMethod));
        let mut t = tx(&p);
        assert_eq!(
            t.on_request_headers(&head("GET", SAY, "application/grpc")),
            Step::Block
        );
        assert!(kinds(t).iter().any(|(k, _)| *k == K::Method));
        let mut t = tx(&p);
        assert_eq!(
            t.on_request_headers(&head("POST", SAY, "text/plain")),
            Step::Block
        );
        assert!(kinds(t).iter().any(|(k, _)| *k == K::GrpcMalformed));
    }

    #[test]
    fn an_unbound_grpc_path_gets_the_html_page() {
        let p = policy(json!({}), json!({}));
        let mut t = tx(&p);
        let h = head("POST", "/demo.v1.Nowhere/Call", "application/grpc");
        assert_eq!(t.on_request_headers(&h), Step::Block);
        let reply = t.block_response();
        assert!(String::from_utf8_lossy(&reply.body).contains("Request Rejected"));
        assert!(kinds(t).iter().any(|(k, _)| *k == K::Url));
    }

    #[test]
    fn string_fields_are_checked_by_signatures_and_metacharacters_by_path() {
        let attack = "' or 1=1 union select password from users--";
        let p = policy(json!({}), json!({}));
        let mut t = tx(&p);
        t.on_request_headers(&head("POST", SAY, "application/grpc"));
        assert_eq!(t.on_request_body(&hello(attack)), Step::Block);
        let found = kinds(t);
        assert!(
            found.contains(&(K::AttackSignature, "name".to_string())),
            "{found:?}"
        );
        // Signatures off in the profile: only the meta-characters remain.
        let p = policy(json!({"attackSignaturesCheck": false}), json!({}));
        let mut t = tx(&p);
        t.on_request_headers(&head("POST", SAY, "application/grpc"));
        t.on_request_body(&hello(attack));
        let found = kinds(t);
        assert!(
            found.iter().all(|(k, _)| *k != K::AttackSignature),
            "{found:?}"
        );
        assert!(found.contains(&(K::ParameterValueMetachar, "name".to_string())));
        // Both off: the same call passes.
        let p = policy(
            json!({"attackSignaturesCheck": false, "metacharCheck": false}),
            json!({}),
        );
        let mut t = tx(&p);
        t.on_request_headers(&head("POST", SAY, "application/grpc"));
        let m = hello(attack);
        assert_eq!(t.on_request_body(&m), Step::Release(m.len() as u64));
        assert!(kinds(t).is_empty());
    }

    #[test]
    fn a_grpc_response_page_changes_status_and_message() {
        let pages = json!({"response-pages": [{"responsePageType": "grpc",
            "grpcStatusCode": "PERMISSION_DENIED", "grpcStatusMessage": "no <%TS.request.ID()%>"}]});
        let p = policy(json!({}), pages);
        let mut t = tx(&p);
        t.on_request_headers(&head("POST", "/demo.v1.Greeter/Nope", "application/grpc"));
        let reply = t.block_response();
        let get = |name: &str| {
            reply
                .headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.to_string())
        };
        assert_eq!(get("grpc-status").as_deref(), Some("7"));
        let id = t.support_id().to_string();
        assert_eq!(get("grpc-message"), Some(format!("no {id}")));
    }

    #[test]
    fn a_broken_idl_is_a_policy_error_naming_the_profile() {
        let doc = json!({"policy": {"name": "g", "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"},
            "grpc-profiles": [{"name": "x", "idlFiles": [{"idlFile": {"$ref": IDL}}]}]}});
        let doc = serde_json::to_vec(&doc).unwrap_or_default();
        let broken = b"syntax = \"proto3\";\nmessage A { string a = 1 }\n".to_vec();
        let r = MemResolver(HashMap::from([(IDL.to_string(), broken)]));
        let e = crate::policy::load(&doc, "file:///p/policy.json", &r);
        let msg = e.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.starts_with("policy.grpc-profiles[0]: "), "{msg}");
        assert!(msg.contains("demo.proto:2:"), "{msg}");
    }

    #[test]
    fn string_switches_are_read_as_booleans() {
        let v = super::lenient_flags(json!({"decodeStringValuesAsBase64": "enabled",
            "associateUrls": "Disabled", "defenseAttributes": {"allowUnknownFields": "false"},
            "name": "true"}));
        assert_eq!(v["decodeStringValuesAsBase64"], json!(true));
        assert_eq!(v["associateUrls"], json!(false));
        assert_eq!(v["defenseAttributes"]["allowUnknownFields"], json!(false));
        assert_eq!(v["name"], json!("true"));
    }
}
