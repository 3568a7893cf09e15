//! Attack signatures (SCAFFOLD: the interface; the database and matchers come with issue 3).
//!
//! One global database, compiled once; a policy selects signatures by id (a bitset computed from its
//! signature sets, server technologies and `signatures` entries) and filters the hits of [`SignatureDb::scan`].

use std::sync::OnceLock;

/// Where in the request a value was found; signatures declare which targets they apply to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// The decoded URL path.
    Url,
    /// The raw query string as a whole.
    QueryString,
    /// A parameter name (query, form, JSON key).
    ParamName,
    /// A parameter value (query, form, multipart, path segment).
    ParamValue,
    /// A header value (name given separately).
    Header,
    /// A cookie value.
    Cookie,
    /// A request body not parsed into parameters.
    Body,
    /// A JSON string value or key.
    Json,
    /// XML text, attribute values and the prolog/doctype.
    Xml,
    /// A string field of a gRPC message.
    Grpc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Low,
    Medium,
    High,
}

/// What a policy needs to know about one signature to select it.
#[derive(Clone, Debug)]
pub struct SignatureInfo {
    pub id: u32,
    pub name: String,
    pub attack_type: String,
    pub accuracy: Level,
    pub risk: Level,
    /// Server technologies (systems) the signature is specific to; empty = general.
    pub systems: Vec<String>,
    /// Signature-set names it belongs to (besides the implicit "All Signatures").
    pub sets: Vec<String>,
}

/// The compiled signature database.
pub struct SignatureDb {
    signatures: Vec<SignatureInfo>,
}

impl SignatureDb {
    /// The database shipped under `policies/signatures/`, compiled on first use.
    pub fn builtin() -> &'static SignatureDb {
        static DB: OnceLock<SignatureDb> = OnceLock::new();
        DB.get_or_init(|| SignatureDb {
            signatures: Vec::new(),
        })
    }

    pub fn signatures(&self) -> &[SignatureInfo] {
        &self.signatures
    }

    pub fn get(&self, id: u32) -> Option<&SignatureInfo> {
        self.signatures.iter().find(|s| s.id == id)
    }

    /// Appends to `hits` the ids of every signature for `target` that matches `value`.
    /// `value` is decoded once by the caller (percent-decoding, JSON unescaping); the database applies
    /// its own transforms (case folding, entity decoding, comment removal) as each signature needs.
    pub fn scan(&self, _target: Target, _value: &[u8], _hits: &mut Vec<u32>) {}
}
