//! The URLs a `grpc-profiles` entry is enforced on (`docs/grpc.md`).
//!
//! A URL entity is bound to a profile by a content profile of `type: grpc` naming it
//! (`urlContentProfiles[{type: "grpc", contentProfile: {name}}]`, as real policies write it), and
//! `associateUrls: true` adds the wildcard URL `/<package>.<service>/*` for every service of the
//! profile's IDL — or, when the policy declares a wildcard URL of that very name, binds that entity,
//! so its URL-level settings (`metacharsOnUrlCheck`, `attackSignaturesCheck`, `signatureOverrides`,
//! `isAllowed`, `performStaging`, …) apply to the service. Either way a bound URL is an ordinary URL
//! entity of the headers phase (URL matching and precedence, method overrides, URL meta-characters
//! and signatures, staging); only the body plan differs: a call whose URL's first matching content
//! profile is the gRPC one is streamed through that profile (`checks/grpc.rs`).

use std::sync::Arc;

use serde_json::Value;

use super::compiled::{CompiledPolicy, CompiledUrl, ContentRule, NameMatch, Scratch};
use super::entities::BodyKind;
use super::glob::Glob;
use crate::grpc::CompiledGrpcProfile;
use crate::policy::PolicyError;
use crate::policy::decl::{self, EntityType};

/// Compile time: the index of the `grpc-profiles` entry that content profile `j` of URL `i` names.
/// The profiles are compiled later in the same order (`checks::grpc::compile_profiles`).
pub(in crate::policy) fn profile_index(
    d: &decl::Policy,
    cp: &decl::UrlContentProfile,
    i: usize,
    j: usize,
) -> Result<usize, PolicyError> {
    let path = format!("policy.urls[{i}].urlContentProfiles[{j}].contentProfile.name");
    let Some(name) = cp.content_profile.as_ref().and_then(|c| c.name.as_deref()) else {
        return Err(PolicyError::invalid(
            path,
            "missing (a content profile of type grpc names its grpc-profiles entry)",
        ));
    };
    let names: Vec<&str> = d
        .grpc_profiles
        .iter()
        .flatten()
        .map(|p| p.get("name").and_then(Value::as_str).unwrap_or(""))
        .collect();
    names.iter().position(|n| *n == name).ok_or_else(|| {
        let known = if names.is_empty() {
            "the policy has no grpc-profiles".to_string()
        } else {
            let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
            format!("expected one of {}", quoted.join(", "))
        };
        PolicyError::invalid(path, format!("unknown gRPC profile \"{name}\" ({known})"))
    })
}

/// The catch-all content rule that binds a URL to gRPC profile `profile`.
fn catch_all(profile: usize) -> ContentRule {
    ContentRule {
        header: "*".into(),
        value: Glob::new("*", true, true),
        kind: BodyKind::Signatures,
        grpc: Some(profile),
    }
}

impl CompiledPolicy {
    /// Installs the compiled gRPC profiles (done by `policy::load` once the IDL files are read)
    /// and the URLs of the profiles with `associateUrls`.
    pub fn set_grpc_profiles(&mut self, profiles: Vec<Arc<CompiledGrpcProfile>>) {
        for (p, profile) in profiles.iter().enumerate() {
            if profile.associate_urls() {
                for url in profile.services() {
                    self.associate(p, &url);
                }
            }
        }
        self.grpc_profiles = profiles;
    }

    /// The compiled gRPC profiles.
    pub fn grpc_profiles(&self) -> &[Arc<CompiledGrpcProfile>] {
        &self.grpc_profiles
    }

    /// Binds the service URL `name` (`/<pkg>.<svc>/*`) to `profile`: the policy's own wildcard
    /// URLs of that name when there are any (a `grpc` content profile they already have wins),
    /// else a new wildcard URL with the defaults of a new URL entity.
    fn associate(&mut self, profile: usize, name: &str) {
        let key = if self.fold {
            name.to_ascii_lowercase()
        } else {
            name.to_string()
        };
        let mut declared = false;
        for u in self
            .urls
            .iter_mut()
            .filter(|u| u.m.glob.is_some() && u.m.name == key)
        {
            declared = true;
            if u.content.iter().all(|c| c.grpc.is_none()) {
                // After the rules on specific headers, before a catch-all of the URL.
                let at = u
                    .content
                    .iter()
                    .position(|c| c.header == "*")
                    .unwrap_or(u.content.len());
                u.content.insert(at, catch_all(profile));
            }
        }
        if declared {
            return;
        }
        self.urls.push(CompiledUrl {
            m: NameMatch::new(name, Some(EntityType::Wildcard), None, self.fold, true),
            method: None,
            https: None,
            allowed: true,
            sig_check: true,
            overrides: Vec::new(),
            meta_check: true,
            table: self.url_table,
            content: vec![catch_all(profile)],
            mandatory_body: false,
            methods_override: Vec::new(),
            positional: Vec::new(),
            staged: false,
            no_executables: false,
            cors: None,
        });
    }

    /// Headers phase, once the URL entity is chosen: the call is bound to a gRPC profile when the
    /// first of the URL's content profiles that matches the request headers is of type grpc (the
    /// same first-match rule as the body plan). Costs nothing without gRPC profiles.
    pub(in crate::policy) fn grpc_bind(&self, head: &crate::RequestHead, s: &mut Scratch) {
        if self.grpc_profiles.is_empty() {
            return;
        }
        let Some(u) = s.url.and_then(|i| self.urls.get(i)) else {
            return;
        };
        let h = &head.headers;
        let ct = h
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        for rule in &u.content {
            let value = if rule.header == "*" {
                Some(ct)
            } else {
                h.get(rule.header.as_str()).and_then(|v| v.to_str().ok())
            };
            if value.is_some_and(|v| rule.value.is_match(v.as_bytes())) {
                s.grpc_profile = rule.grpc.filter(|p| *p < self.grpc_profiles.len());
                return;
            }
        }
    }
}
