//! Compiles a [`GrpcProfileSpec`] into a [`CompiledGrpcProfile`]: fetches the IDL files through the
//! injected [`Resolver`], compiles them with protox into a prost-reflect descriptor pool, rejects
//! proto2, and indexes every method of every service the listed files declare by its HTTP/2 path
//! `/<package>.<service>/<method>`.
//!
//! Imports are resolved among the listed files first (by import name, then by path suffix), then
//! fetched relative to the primary file's link, then from the Google well-known types protox ships.
//! A broken IDL is a [`GrpcError::Idl`] naming the file, line, column and reason.
//!
//! Imports: `waf::resolver`, [`super::spec`], [`super::stream`] (limits); protox, prost-reflect, miette.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use prost_reflect::{DescriptorPool, MessageDescriptor, MethodDescriptor, Syntax};
use protox::file::{File, FileResolver, GoogleFileResolver};

use super::spec::{DataLength, GrpcProfileSpec};
use super::stream::{Encoding, GrpcLimits, GrpcStream};
use crate::waf::resolver::Resolver;

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

        let mut methods = HashMap::new();
        let mut services = Vec::new();
        for svc in pool.services() {
            if !listed.iter().any(|n| n == svc.parent_file().name()) {
                continue;
            }
            for m in svc.methods() {
                let path = format!("/{}/{}", svc.full_name(), m.name());
                methods.insert(
                    path.clone(),
                    GrpcMethod {
                        path: path.into(),
                        desc: m,
                    },
                );
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

fn file_name(link: &str) -> &str {
    let link = link.split(['?', '#']).next().unwrap_or(link);
    link.rsplit('/').next().unwrap_or(link)
}

fn dir_of(link: &str) -> &str {
    let link = link.split(['?', '#']).next().unwrap_or(link);
    link.rfind('/').map_or("", |i| &link[..=i])
}

fn fetch_text(
    resolver: &dyn Resolver,
    base: &str,
    link: &str,
    profile: &str,
) -> Result<String, GrpcError> {
    let fetch_err = |reason: String| GrpcError::Fetch {
        profile: profile.into(),
        link: link.into(),
        reason,
    };
    let bytes = resolver
        .fetch(base, link)
        .map_err(|e| fetch_err(e.reason))?;
    String::from_utf8(bytes).map_err(|e| {
        fetch_err(format!(
            "not UTF-8 text (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Line and column of the `syntax` statement, or line 1 when the file has none (proto2 default).
fn syntax_position(src: &str) -> (Option<usize>, Option<usize>) {
    for (i, line) in src.lines().enumerate() {
        if let Some(col) = line.find("syntax")
            && line.trim_start().starts_with("syntax")
        {
            return (Some(i + 1), Some(col + 1));
        }
    }
    (Some(1), Some(1))
}

/// Serves the listed files, then the Google well-known types, and records every other name asked
/// for so the caller can fetch it relative to the primary file and try again.
struct ProfileFiles {
    files: HashMap<String, String>,
    google: GoogleFileResolver,
    missing: Arc<Mutex<Vec<String>>>,
}

impl FileResolver for ProfileFiles {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        if let Some(src) = self.files.get(name) {
            return File::from_source(name, src);
        }
        // An import written with a longer or shorter path than the listed file's name.
        let suffix = format!("/{name}");
        if let Some((_, src)) = self
            .files
            .iter()
            .find(|(n, _)| n.ends_with(&suffix) || name.ends_with(&format!("/{n}")))
        {
            return File::from_source(name, src);
        }
        match self.google.open_file(name) {
            Err(e) if e.is_file_not_found() => {
                self.missing.lock().push(name.to_string());
                Err(e)
            }
            other => other,
        }
    }
}

fn compile_files(
    spec: &GrpcProfileSpec,
    resolver: &dyn Resolver,
    primary_link: &str,
    listed: &[String],
    sources: &mut HashMap<String, String>,
) -> Result<DescriptorPool, GrpcError> {
    loop {
        let missing = Arc::new(Mutex::new(Vec::new()));
        let files = ProfileFiles {
            files: sources.clone(),
            google: GoogleFileResolver::new(),
            missing: missing.clone(),
        };
        let mut compiler = protox::Compiler::with_file_resolver(files);
        compiler.include_imports(true);
        let result = listed
            .iter()
            .try_for_each(|name| compiler.open_file(name).map(|_| ()));
        let Err(err) = result else {
            return Ok(compiler.descriptor_pool());
        };
        let wanted: Vec<String> = std::mem::take(&mut *missing.lock());
        let new: Vec<String> = wanted
            .into_iter()
            .filter(|n| !sources.contains_key(n))
            .collect();
        if !err.is_file_not_found() || new.is_empty() {
            return Err(idl_error(&spec.name, &err, sources));
        }
        for name in new {
            if sources.len() >= MAX_IDL_FILES {
                return Err(GrpcError::Profile {
                    profile: spec.name.clone(),
                    reason: format!("more than {MAX_IDL_FILES} IDL files (imports included)"),
                });
            }
            // Not among the listed files: try relative to the primary file.
            match resolver
                .fetch(primary_link, &name)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
            {
                Some(text) => {
                    sources.insert(name, text);
                }
                None => return Err(idl_error(&spec.name, &err, sources)),
            }
        }
    }
}

/// Turns a protox error into file, line, column and reason.
fn idl_error(profile: &str, err: &protox::Error, sources: &HashMap<String, String>) -> GrpcError {
    use miette::Diagnostic;
    let file = err.file().unwrap_or("<idl>").to_string();
    let offset = err.labels().and_then(|mut l| l.next()).map(|l| l.offset());
    let (line, column) = match (offset, sources.get(&file)) {
        (Some(off), Some(src)) => {
            let before = &src.as_bytes()[..off.min(src.len())];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let col = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
            (Some(line), Some(col))
        }
        _ => (None, None),
    };
    let mut reason = err.to_string();
    if let Some(help) = err.help() {
        reason.push_str(&format!(" ({help})"));
    }
    GrpcError::Idl {
        profile: profile.into(),
        file,
        line,
        column,
        reason,
    }
}
