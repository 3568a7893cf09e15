//! Compiles a [`GrpcProfileSpec`] into a [`CompiledGrpcProfile`]: fetches the IDL files through the
//! injected [`Resolver`], compiles them with protox into a prost-reflect descriptor pool, rejects
//! proto2, and indexes every method of every service the listed files declare by its HTTP/2 path
//! `/<package>.<service>/<method>`.
//!
//! Imports are resolved among the listed files first (by import name, then by path suffix), then
//! fetched relative to the primary file's link, then from the Google well-known types protox ships.
//! A broken IDL is a [`GrpcError::Idl`] naming the file, line, column and reason.

use std::collections::HashMap;
use std::sync::Arc;

use prost_reflect::{DescriptorPool, MessageDescriptor, MethodDescriptor, Syntax};

use super::idl::{compile_files, dir_of, fetch_text, file_name, syntax_position};
use super::schema::Schema;
use super::spec::{DataLength, GrpcProfileSpec};
use super::stream::{Encoding, GrpcLimits, GrpcStream};
use crate::resolver::Resolver;

/// Most IDL files (listed + fetched imports) one profile may pull in.
pub const MAX_IDL_FILES: usize = 64;

/// Why a gRPC profile cannot be compiled. `Display` is the message `policy check` prints.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GrpcError {
    /// The profile declaration itself is unusable (no IDL file, two primaries...).
    #[error("grpc profile {profile:?}: {reason}")]
    Profile { profile: String, reason: String },
    /// An IDL file could not be read.
    #[error("grpc profile {profile:?}: cannot read IDL file {link}: {reason}")]
    Fetch {
        profile: String,
        link: String,
        reason: String,
    },
    /// An IDL file does not compile.
    #[error("grpc profile {profile:?}: {file}{}: {reason}", position(*.line, *.column))]
    Idl {
        profile: String,
        file: String,
        line: Option<usize>,
        column: Option<usize>,
        reason: String,
    },
}

fn position(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

/// One callable method: its path and descriptors. Cheap to clone.
#[derive(Clone, Debug)]
pub struct GrpcMethod {
    path: Arc<str>,
    desc: MethodDescriptor,
    schema: Arc<Schema>,
    /// The request type's table in `schema`.
    input: usize,
}

impl GrpcMethod {
    /// The HTTP/2 `:path`, `/<package>.<service>/<method>`.
    pub fn path(&self) -> &str {
        &self.path
    }
    /// The request message type.
    pub fn input(&self) -> MessageDescriptor {
        self.desc.input()
    }
    pub fn output(&self) -> MessageDescriptor {
        self.desc.output()
    }
    pub fn client_streaming(&self) -> bool {
        self.desc.is_client_streaming()
    }
    pub fn server_streaming(&self) -> bool {
        self.desc.is_server_streaming()
    }
    pub fn descriptor(&self) -> &MethodDescriptor {
        &self.desc
    }
    /// The field tables of the profile, and the request type's index in them.
    pub fn schema(&self) -> (&Schema, usize) {
        (&self.schema, self.input)
    }
}

/// `GrpcProfile::compile(..)` reads as the declaration it compiles.
pub type GrpcProfile = CompiledGrpcProfile;

/// A compiled gRPC profile: immutable, shared by every request.
#[derive(Debug)]
pub struct CompiledGrpcProfile {
    name: String,
    pool: DescriptorPool,
    methods: HashMap<String, GrpcMethod>,
    /// Service full names (`demo.v1.Greeter`), sorted.
    services: Vec<String>,
    limits: GrpcLimits,
    associate_urls: bool,
    attack_signatures_check: bool,
    metachar_check: bool,
    signature_overrides: Vec<(u32, bool)>,
}

impl CompiledGrpcProfile {
    /// Compiles `spec`. `base_link` is the link of the policy document that declares it (relative
    /// `$ref`s are resolved against it by `resolver`).
    pub fn compile(
        spec: &GrpcProfileSpec,
        resolver: &dyn Resolver,
        base_link: &str,
    ) -> Result<Self, GrpcError> {
        let profile_err = |reason: String| GrpcError::Profile {
            profile: spec.name.clone(),
            reason,
        };
        if spec.idl_files.is_empty() {
            return Err(profile_err(
                "idlFiles is empty: a gRPC profile needs its IDL (.proto) file".into(),
            ));
        }
        let primaries = spec.idl_files.iter().filter(|f| f.is_primary).count();
        let primary_idx = match (primaries, spec.idl_files.len()) {
            (1, _) => spec
                .idl_files
                .iter()
                .position(|f| f.is_primary)
                .unwrap_or(0),
            (0, 1) => 0,
            (0, _) => {
                return Err(profile_err(
                    "several idlFiles and none has isPrimary: true".into(),
                ));
            }
            (n, _) => {
                return Err(profile_err(format!(
                    "{n} idlFiles have isPrimary: true; exactly one may"
                )));
            }
        };
        let mut links = Vec::with_capacity(spec.idl_files.len());
        for (i, f) in spec.idl_files.iter().enumerate() {
            let link = f.idl_file.link().filter(|l| !l.is_empty());
            links.push(
                link.ok_or_else(|| profile_err(format!("idlFiles[{i}].idlFile has no $ref")))?,
            );
        }
        let primary_link = links[primary_idx];
        let primary_dir = dir_of(primary_link);

        let mut sources: HashMap<String, String> = HashMap::new();
        let mut listed: Vec<String> = Vec::new();
        for (i, link) in links.iter().enumerate() {
            let name = match &spec.idl_files[i].import_url {
                Some(n) if !n.is_empty() => n.clone(),
                _ => link
                    .strip_prefix(primary_dir)
                    .filter(|_| i != primary_idx)
                    .unwrap_or_else(|| file_name(link))
                    .to_string(),
            };
            let text = fetch_text(resolver, base_link, link, &spec.name)?;
            if sources.insert(name.clone(), text).is_some() {
                return Err(profile_err(format!("two idlFiles are both named {name:?}")));
            }
            listed.push(name);
        }

        let pool = compile_files(spec, resolver, primary_link, &listed, &mut sources)?;
        for name in &listed {
            let Some(file) = pool.get_file_by_name(name) else {
                continue;
            };
            if file.syntax() == Syntax::Proto2 {
                let src = sources.get(name).map(String::as_str).unwrap_or("");
                let (line, column) = syntax_position(src);
                return Err(GrpcError::Idl {
                    profile: spec.name.clone(),
                    file: name.clone(),
                    line,
                    column,
                    reason: "proto2 is not supported: gRPC profiles take proto3 IDL files (syntax = \"proto3\";)".into(),
                });
            }
        }

        let schema = Arc::new(Schema::new(&pool));
        let mut methods = HashMap::new();
        let mut services = Vec::new();
        for svc in pool.services() {
            if !listed.iter().any(|n| n == svc.parent_file().name()) {
                continue;
            }
            for m in svc.methods() {
                let path = format!("/{}/{}", svc.full_name(), m.name());
                let Some(input) = schema.index_of(m.input().full_name()) else {
                    continue;
                };
                let schema = schema.clone();
                let method = GrpcMethod {
                    path: path.clone().into(),
                    desc: m,
                    schema,
                    input,
                };
                methods.insert(path, method);
            }
            services.push(svc.full_name().to_string());
        }
        if services.is_empty() {
            return Err(GrpcError::Idl {
                profile: spec.name.clone(),
                file: listed[primary_idx].clone(),
                line: None,
                column: None,
                reason: "declares no service: nothing to protect".into(),
            });
        }
        services.sort();

        let da = &spec.defense_attributes;
        let limits = GrpcLimits {
            maximum_data_length: match da.maximum_data_length {
                DataLength::Any => None,
                DataLength::Bytes(n) => Some(n),
            },
            allow_unknown_fields: da.allow_unknown_fields,
            decode_base64: spec.decode_string_values_as_base64,
            ..GrpcLimits::default()
        };
        Ok(CompiledGrpcProfile {
            name: spec.name.clone(),
            pool,
            methods,
            services,
            limits,
            associate_urls: spec.associate_urls,
            attack_signatures_check: spec.attack_signatures_check,
            metachar_check: spec.metachars_enabled(),
            signature_overrides: spec
                .signature_overrides
                .iter()
                .map(|o| (o.signature_id, o.enabled))
                .collect(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The descriptor pool (the IDL files and their imports).
    pub fn pool(&self) -> &DescriptorPool {
        &self.pool
    }

    /// Full names of the services the IDL declares, sorted (`demo.v1.Greeter`).
    pub fn service_names(&self) -> &[String] {
        &self.services
    }

    /// The wildcard URL of every service, `/<package>.<service>/*`: the URLs `associateUrls` adds.
    pub fn services(&self) -> Vec<String> {
        self.services.iter().map(|s| format!("/{s}/*")).collect()
    }

    /// The method called by an HTTP/2 `:path` (exact match, no query string); `None` means
    /// `VIOL_GRPC_METHOD` when the path is under one of [`Self::services`].
    pub fn method(&self, path: &str) -> Option<&GrpcMethod> {
        self.methods.get(path)
    }

    /// Every method, in no particular order.
    pub fn methods(&self) -> impl Iterator<Item = &GrpcMethod> {
        self.methods.values()
    }

    /// True when `path` is `/<service>/...` for a service of this profile.
    pub fn covers(&self, path: &str) -> bool {
        let Some(rest) = path.strip_prefix('/') else {
            return false;
        };
        let svc = rest.split_once('/').map_or(rest, |(s, _)| s);
        self.services
            .binary_search_by(|s| s.as_str().cmp(svc))
            .is_ok()
    }

    /// The per-message limits (`defenseAttributes` and the engine's caps).
    pub fn limits(&self) -> &GrpcLimits {
        &self.limits
    }

    /// A fresh inspector for one call of `method` sent with `grpc-encoding: encoding`.
    pub fn stream(&self, method: &GrpcMethod, encoding: Encoding) -> GrpcStream {
        GrpcStream::new(method.clone(), self.limits.clone()).with_encoding(encoding)
    }

    pub fn associate_urls(&self) -> bool {
        self.associate_urls
    }
    pub fn attack_signatures_check(&self) -> bool {
        self.attack_signatures_check
    }
    pub fn metachar_check(&self) -> bool {
        self.metachar_check
    }
    /// `signatureOverrides` as `(signatureId, enabled)`.
    pub fn signature_overrides(&self) -> &[(u32, bool)] {
        &self.signature_overrides
    }
}
