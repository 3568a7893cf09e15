//! The compiled policy: immutable matchers built once from the validated model (by [`super::build`]),
//! shared by every request (`Send + Sync`, no locks), plus the per-request [`Scratch`]. The request
//! checks live in `checks/` (`head`, `params`, `body`, ...); rating and the decision in
//! `checks/rating.rs`.

use super::charset::{HeaderBytes, Table};
pub use super::entities::*;
use super::signature_selection::SigMap;
use crate::policy::decl::lenient::Limit;
use crate::policy::decl::model::Setting;
use crate::policy::decl::templates::TemplateId;
use crate::response::default_grpc_reply;
use crate::verdict::BlockReply;
use crate::violation::ViolationKind;

/// An immutable, shareable, compiled policy.
pub struct CompiledPolicy {
    /// Unique to this compilation (never 0): what the per-thread memo of clean header fields
    /// (`checks/field_memo.rs`) keys its entries with, so another policy never reads them.
    pub(in crate::policy) id: u64,
    pub(in crate::policy) name: String,
    pub(in crate::policy) template: TemplateId,
    pub(in crate::policy) blocking: bool,
    pub(in crate::policy) fold: bool,
    pub(in crate::policy) settings: Vec<Setting>,
    pub(in crate::policy) evasions: SubChecks,
    pub(in crate::policy) passes: u8,
    pub(in crate::policy) http_checks: SubChecks,
    pub(in crate::policy) max_headers: u64,
    pub(in crate::policy) max_params: u64,
    pub(in crate::policy) max_cookies: u64,
    pub(in crate::policy) max_header_len: Limit,
    pub(in crate::policy) max_cookie_len: Limit,
    pub(in crate::policy) urls: Vec<CompiledUrl>,
    pub(in crate::policy) methods: Vec<String>,
    pub(in crate::policy) params: Vec<CompiledParam>,
    pub(in crate::policy) headers: Vec<CompiledHeader>,
    pub(in crate::policy) cookies: Vec<CompiledCookie>,
    pub(in crate::policy) filetypes: Vec<CompiledFiletype>,
    /// Precompiled lookup of `filetypes`.
    pub(in crate::policy) index: Indexes,
    pub(in crate::policy) json: Vec<CompiledJson>,
    pub(in crate::policy) xml: Vec<CompiledXml>,
    pub(in crate::policy) header_bytes: HeaderBytes,
    /// The policy's URL character set (for URLs the OpenAPI spec matched).
    pub(in crate::policy) url_table: Table,
    pub(in crate::policy) reply: BlockReply,
    pub(in crate::policy) ajax_reply: Option<BlockReply>,
    pub(in crate::policy) grpc_reply: BlockReply,
    pub(in crate::policy) trust_xff: bool,
    pub(in crate::policy) xff_headers: Vec<String>,
    pub(in crate::policy) sigs: SigMap,
    pub(in crate::policy) sensitive: Vec<String>,
    pub(in crate::policy) body_limit: usize,
    pub(in crate::policy) allowed_codes: Vec<u16>,
    /// The linked OpenAPI spec (`open-api-files`), set by `load_with` after compiling.
    pub(in crate::policy) api: Option<std::sync::Arc<crate::openapi::CompiledApi>>,
    /// `grpc-profiles`, compiled by `policy::load` (they need the resolver).
    pub(in crate::policy) grpc_profiles: Vec<std::sync::Arc<crate::grpc::CompiledGrpcProfile>>,
    /// Meta-characters refused in gRPC string values (the parameter-value set).
    pub(in crate::policy) grpc_table: Table,
    /// `applicationLanguage`, for VIOL_ENCODING (`checks/encoding.rs`).
    pub(in crate::policy) charset: crate::policy::checks::encoding::Charset,
    /// Longest request (head + body) before VIOL_REQUEST_MAX_LENGTH (`checks/length.rs`).
    pub(in crate::policy) request_max_len: u64,
    /// The JSON profiles' schemas (`validationFiles`), by profile index (`checks/json_schema.rs`).
    pub(in crate::policy) json_schemas: Vec<Option<std::sync::Arc<crate::openapi::JsonSchema>>>,
}

/// A new [`CompiledPolicy::id`].
pub(in crate::policy) fn next_policy_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Most request-body bytes buffered for inspection (larger bodies are inspected up to this size).
pub const BODY_INSPECT_LIMIT: usize = 1 << 20;
/// Most parameters, parts or cookies examined per request.
pub const MAX_ITEMS: usize = 5000;

impl CompiledPolicy {
    /// A policy that allows everything (what a listener without a policy runs).
    pub fn allow_all(name: &str) -> Self {
        CompiledPolicy {
            id: next_policy_id(),
            api: None,
            name: name.to_string(),
            template: TemplateId::NginxBase,
            blocking: false,
            fold: false,
            settings: vec![Setting::default(); ViolationKind::ALL.len()],
            evasions: SubChecks::default(),
            passes: 2,
            http_checks: SubChecks::default(),
            max_headers: u64::MAX,
            max_params: u64::MAX,
            max_cookies: u64::MAX,
            max_header_len: Limit::Any,
            max_cookie_len: Limit::Any,
            urls: Vec::new(),
            methods: Vec::new(),
            params: Vec::new(),
            headers: Vec::new(),
            cookies: Vec::new(),
            filetypes: Vec::new(),
            index: Indexes::default(),
            json: Vec::new(),
            xml: Vec::new(),
            header_bytes: HeaderBytes::new(&Table::EMPTY),
            url_table: Table::EMPTY,
            reply: BlockReply::DefaultPage,
            ajax_reply: None,
            grpc_reply: default_grpc_reply(),
            trust_xff: false,
            xff_headers: Vec::new(),
            sigs: SigMap::default(),
            sensitive: Vec::new(),
            body_limit: 0,
            allowed_codes: Vec::new(),
            grpc_profiles: Vec::new(),
            grpc_table: Table::EMPTY,
            charset: crate::policy::checks::encoding::Charset::Unchecked,
            request_max_len: u64::MAX,
            json_schemas: Vec::new(),
        }
    }

    /// The template the policy was built on.
    pub fn template(&self) -> &'static str {
        self.template.name()
    }

    /// Whether the policy blocks (enforcementMode blocking).
    pub fn is_blocking(&self) -> bool {
        self.blocking
    }

    /// Number of signatures the policy enables.
    pub fn signatures_enabled(&self) -> usize {
        self.sigs.len()
    }
}
