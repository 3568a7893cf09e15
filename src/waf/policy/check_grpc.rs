//! gRPC enforcement of the compiled policy (issue 5, `docs/grpc.md`): `grpc-profiles` compiled
//! through the resolver, the URLs `/<pkg>.<svc>/*` they bind (`associateUrls`), the headers-phase
//! call checks and the body phase that streams the call message by message through the profile's
//! [`GrpcStream`], string fields checked by the policy's signatures and meta-characters.
//! Imports: `compiled`, `waf::{grpc, signatures, violation, resolver, transaction}`.

use std::sync::Arc;

use serde_json::Value;

use super::PolicyError;
use super::compiled::{CompiledPolicy, Scratch};
use crate::waf::Resolver;
use crate::waf::grpc::{self, CompiledGrpcProfile, GrpcProfileSpec};
use crate::waf::signatures::Target;
use crate::waf::transaction::Step;
use crate::waf::violation::{Context, Violation, ViolationKind as K};

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
            let spec: GrpcProfileSpec = serde_json::from_value(v.clone())
                .map_err(|e| PolicyError(format!("policy.grpc-profiles[{i}]: {e}")))?;
            grpc::GrpcProfile::compile(&spec, resolver, base)
                .map(Arc::new)
                .map_err(|e| PolicyError(format!("policy.grpc-profiles[{i}]: {e}")))
        })
        .collect()
}

impl CompiledPolicy {
    /// Installs the compiled gRPC profiles (done by `policy::load` once the IDL files are read).
    pub fn set_grpc_profiles(&mut self, profiles: Vec<Arc<CompiledGrpcProfile>>) {
        self.grpc_profiles = profiles;
    }

    /// The compiled gRPC profiles.
    pub fn grpc_profiles(&self) -> &[Arc<CompiledGrpcProfile>] {
        &self.grpc_profiles
    }

    /// Headers phase: binds `path` to the first profile whose associated URLs cover it. A bound
    /// path is a URL of the policy (`/<pkg>.<svc>/*`), so the generic URL check is skipped.
    pub(super) fn grpc_bind(&self, path: &[u8], s: &mut Scratch) -> bool {
        let Ok(path) = std::str::from_utf8(path) else {
            return false;
        };
        s.grpc_profile = self
            .grpc_profiles
            .iter()
            .position(|p| p.associate_urls() && p.covers(path));
        s.grpc_profile.is_some()
    }

    /// Headers phase for a bound call: method, IDL method and content type. Returns true when the
    /// body must be streamed through the inspector.
    pub(super) fn grpc_start(
        &self,
        head: &http::request::Parts,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) -> bool {
        let Some(profile) = s.grpc_profile.and_then(|i| self.grpc_profiles.get(i)) else {
            return false;
        };
        s.grpc = true;
        let start = grpc::start_call(profile, head);
        for v in start.violations {
            self.push(out, v);
        }
        s.grpc_stream = start.stream;
        s.grpc_stream.is_some()
    }

    /// Body phase for a streamed call: feeds the chunk, releases whole inspected messages.
    pub(super) fn grpc_chunk(
        &self,
        chunk: &[u8],
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) -> Step {
        let Some(mut stream) = s.grpc_stream.take() else {
            return Step::PassRest;
        };
        let mut found = Vec::new();
        let r = stream.feed(chunk, &mut self.grpc_check(s, &mut found), out);
        for v in found {
            self.push(out, v);
        }
        s.grpc_stream = Some(stream);
        if r.passthrough {
            Step::PassRest
        } else {
            Step::Release(r.release)
        }
    }

    /// Body end for a streamed call: a body cut inside a frame is malformed.
    pub(super) fn grpc_end(&self, s: &mut Scratch, out: &mut Vec<Violation>) {
        if let Some(mut stream) = s.grpc_stream.take() {
            stream.finish(out);
        }
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
                        .detail(format!("metacharacter 0x{c:02x}")),
                );
            }
            if sig && !value.is_empty() {
                hits.clear();
                crate::waf::signatures::SignatureDb::builtin().scan(
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
