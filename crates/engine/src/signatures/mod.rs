//! Attack signatures: our own database (`policies/signatures/*.sig`, embedded at build time), compiled
//! once into per-target literal prefilters, confirming regexes and tokenizer checks.
//!
//! One global database, compiled once; a policy selects signatures by id (a bitset computed from its
//! signature sets, server technologies and `signatures` entries) and filters the hits of [`SignatureDb::scan`].

pub(crate) mod db;
mod literals;
mod matcher;
mod memo;
mod prefilter;
mod search;
mod shape;
mod table;

pub(crate) use memo::same_bytes;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

pub use db::{DbError, SigDef, UnknownTarget, parse_targets};
use matcher::Selection;
pub use matcher::{CompileError, HeapUsage, REGEX_DFA_LIMIT, REGEX_SIZE_LIMIT};
pub(crate) use memo::with_memo;
pub use memo::{Memo, MemoUse};

/// The shipped database files, in id order.
const BUILTIN: &[&str] = &[
    include_str!("../../../../policies/signatures/sqli.sig"),
    include_str!("../../../../policies/signatures/sqli_syntax.sig"),
    include_str!("../../../../policies/signatures/xss.sig"),
    include_str!("../../../../policies/signatures/xss_script.sig"),
    include_str!("../../../../policies/signatures/command.sig"),
    include_str!("../../../../policies/signatures/command_shell.sig"),
    include_str!("../../../../policies/signatures/traversal.sig"),
    include_str!("../../../../policies/signatures/code.sig"),
    include_str!("../../../../policies/signatures/code_lang.sig"),
    include_str!("../../../../policies/signatures/code_indirect.sig"),
    include_str!("../../../../policies/signatures/other.sig"),
    include_str!("../../../../policies/signatures/protocol.sig"),
    include_str!("../../../../policies/signatures/ssrf_files.sig"),
];

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
    /// The name an uploaded file is to be stored under (a multipart part's `filename`, the
    /// `X-Filename` headers of raw uploads).
    Filename,
    /// A JSON key under an object key, written `parent.key` (`constructor.prototype`): the
    /// path a deep merge or a `set(obj, path, value)` writes along, which neither key shows
    /// alone.
    KeyPath,
    /// A cookie's name. The application reads it as it reads a parameter's name, so the
    /// `param-name` signatures apply, except those a record excludes (`-cookie-name`): a
    /// session id's name is what a session cookie is called, and the same name as a query or
    /// form parameter is the session-fixation technique.
    CookieName,
}

impl Target {
    /// Every target, in declaration order.
    pub const ALL: &'static [Target] = &[
        Target::Url,
        Target::QueryString,
        Target::ParamName,
        Target::ParamValue,
        Target::Header,
        Target::Cookie,
        Target::Body,
        Target::Json,
        Target::Xml,
        Target::Grpc,
        Target::Filename,
        Target::KeyPath,
        Target::CookieName,
    ];

    /// Position in [`Target::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Low,
    Medium,
    High,
}

impl Level {
    /// The policy spelling: `low`, `medium`, `high`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Low => "low",
            Level::Medium => "medium",
            Level::High => "high",
        }
    }
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
    /// The targets the signature applies to.
    pub targets: Vec<Target>,
    /// For header values: the header names (lower case) it applies to; empty = every header.
    pub headers: Vec<String>,
}

/// The signature set named after an attack type, if the declarative policy has one.
pub fn attack_type_set(attack_type: &str) -> Option<&'static str> {
    Some(match attack_type {
        "SQL-Injection" => "SQL Injection Signatures",
        "Cross Site Scripting (XSS)" => "Cross Site Scripting Signatures",
        "Command Execution" => "Command Execution Signatures",
        "OS Command Injection" => "OS Command Injection Signatures",
        "Path Traversal" => "Path Traversal Signatures",
        "Remote File Include" => "Remote File Include Signatures",
        "Server Side Code Injection" => "Server Side Code Injection Signatures",
        "XML External Entities (XXE)" => "XML External Entities (XXE) Signatures",
        "Server-Side Request Forgery (SSRF)" => "Server Side Request Forgery Signatures",
        "Predictable Resource Location" | "Vulnerability Scan" => "Vulnerability Scan Signatures",
        "HTTP Response Splitting"
        | "LDAP Injection"
        | "NoSQL Injection"
        | "Server-Side Includes"
        | "Mail Command Injection"
        | "HTTP Request Smuggling Attack"
        | "HTTP Parser Attack"
        | "Session Hijacking"
        | "Open Redirect"
        | "Injection Attempt"
        | "XPath Injection" => "Other Application Attacks Signatures",
        _ => return None,
    })
}

/// Every set a signature belongs to: its explicit sets plus those derived from its attack type,
/// accuracy and generality ("Generic Detection Signatures" = not specific to a server technology).
pub fn derived_sets(def: &SignatureInfo) -> Vec<String> {
    let mut sets: Vec<String> = Vec::new();
    let mut add = |s: &str| {
        if !sets.iter().any(|x| x == s) {
            sets.push(s.to_string());
        }
    };
    if let Some(s) = attack_type_set(&def.attack_type) {
        add(s);
    }
    match def.accuracy {
        Level::Low => add("Low Accuracy Signatures"),
        Level::Medium => add("Medium Accuracy Signatures"),
        Level::High => {
            add("High Accuracy Signatures");
        }
    }
    if def.systems.is_empty() {
        add("Generic Detection Signatures");
        if def.accuracy >= Level::Medium {
            add("Generic Detection Signatures (High/Medium Accuracy)");
        }
        if def.accuracy == Level::High {
            add("Generic Detection Signatures (High Accuracy)");
        }
    }
    for s in &def.sets {
        add(s);
    }
    sets
}

/// A database that failed to load.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Parse(#[from] DbError),
    #[error(transparent)]
    Compile(#[from] CompileError),
    #[error("duplicate signature id {0}")]
    Duplicate(u32),
}

/// The compiled signature database.
pub struct SignatureDb {
    signatures: Vec<SignatureInfo>,
    /// The database texts, kept (the shipped ones are in the binary) to parse again for
    /// [`Self::definitions`]: the definitions, examples included, are not kept after compiling,
    /// since scans never read them.
    sources: Vec<Cow<'static, str>>,
    defs: OnceLock<Vec<SigDef>>,
    by_id: HashMap<u32, usize>,
    matcher: matcher::Matcher,
    /// Tells this database's answers apart from another's in the scan memo.
    id: u64,
}

impl SignatureDb {
    /// The database shipped under `policies/signatures/`, compiled on first use.
    pub fn builtin() -> &'static SignatureDb {
        static DB: OnceLock<SignatureDb> = OnceLock::new();
        DB.get_or_init(|| {
            // The shipped files are checked by `builtin_database_loads` in CI; an error here is a build defect.
            let sources = BUILTIN.iter().map(|t| Cow::Borrowed(*t)).collect();
            SignatureDb::compile(sources).expect("shipped signature database is valid")
        })
    }

    /// Parses and compiles database texts (each in the `db` format).
    pub fn from_texts(texts: &[&str]) -> Result<SignatureDb, LoadError> {
        SignatureDb::compile(texts.iter().map(|t| Cow::Owned(t.to_string())).collect())
    }

    fn parse(sources: &[Cow<'static, str>]) -> Result<Vec<SigDef>, DbError> {
        let mut defs = Vec::new();
        for t in sources {
            defs.extend(db::parse(t)?);
        }
        Ok(defs)
    }

    fn compile(sources: Vec<Cow<'static, str>>) -> Result<SignatureDb, LoadError> {
        let defs = SignatureDb::parse(&sources)?;
        let mut by_id = HashMap::with_capacity(defs.len());
        for (i, d) in defs.iter().enumerate() {
            if by_id.insert(d.info.id, i).is_some() {
                return Err(LoadError::Duplicate(d.info.id));
            }
        }
        let matcher = matcher::Matcher::compile(&defs)?;
        let signatures = defs
            .iter()
            .map(|d| SignatureInfo {
                sets: derived_sets(&d.info),
                ..d.info.clone()
            })
            .collect();
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        Ok(SignatureDb {
            signatures,
            sources,
            defs: OnceLock::new(),
            by_id,
            matcher,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        })
    }

    pub fn signatures(&self) -> &[SignatureInfo] {
        &self.signatures
    }

    pub fn get(&self, id: u32) -> Option<&SignatureInfo> {
        self.by_id.get(&id).map(|&i| &self.signatures[i])
    }

    /// Ids of the signatures in the named set ("All Signatures" = every signature), in database order.
    pub fn ids_in_set<'a>(&'a self, set: &'a str) -> impl Iterator<Item = u32> + 'a {
        let all = set.eq_ignore_ascii_case("All Signatures");
        self.signatures
            .iter()
            .filter(move |s| all || s.sets.iter().any(|x| x.eq_ignore_ascii_case(set)))
            .map(|s| s.id)
    }

    /// Every set name some signature belongs to, plus "All Signatures", sorted.
    pub fn set_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .signatures
            .iter()
            .flat_map(|s| s.sets.iter().map(String::as_str))
            .chain(std::iter::once("All Signatures"))
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// What the compiled matchers hold on the heap.
    pub fn heap_usage(&self) -> HeapUsage {
        self.matcher.heap_usage()
    }

    /// The source definitions (with their positive/negative examples), in database order,
    /// parsed again from the texts on the first call (tests, `policy check` and the corpus
    /// tools ask; a running proxy does not).
    pub fn definitions(&self) -> &[SigDef] {
        self.defs.get_or_init(|| {
            // The same texts parsed when the database compiled: parsing is a pure function of them.
            SignatureDb::parse(&self.sources).expect("the database texts parsed at compile")
        })
    }

    /// Appends to `hits` the ids of every signature for `target` that matches `value`.
    /// `value` is decoded once by the caller (percent-decoding, JSON unescaping); the database applies
    /// its own transforms (case folding, entity decoding, comment removal) as each signature needs.
    /// For `Target::Header`, every header signature runs, whatever header names it is scoped to
    /// ([`Self::scan_header`] runs those of one header).
    pub fn scan(&self, target: Target, value: &[u8], hits: &mut Vec<u32>) {
        self.scan_selected(self.matcher.selection(target), value, hits, MemoUse::Off);
    }

    /// [`Self::scan`], answered from the memo `memo` allows when it holds `value` (see `memo`;
    /// `MemoUse::Off`: a plain scan). Not for secrets: whether a value was memoized shows in the time taken.
    pub fn scan_memoized(
        &self,
        memo: MemoUse<'_>,
        target: Target,
        value: &[u8],
        hits: &mut Vec<u32>,
    ) {
        self.scan_selected(self.matcher.selection(target), value, hits, memo);
    }

    /// [`Self::scan`] of the value of the header `name` (lower case): the `header` signatures
    /// scoped to no header name (`headers:`) or to this one. `memo` as [`Self::scan_memoized`].
    pub fn scan_header(&self, name: &str, value: &[u8], hits: &mut Vec<u32>, memo: MemoUse<'_>) {
        self.scan_selected(self.matcher.header_selection(name), value, hits, memo);
    }

    /// Whether [`Self::scan_memoized`] of `value` is known to find nothing without a scan: its
    /// bytes prove it, or the memo lent in `memo` holds it clean. `false` says nothing: the value
    /// is then scanned (most items of a document are settled here, at the cost of a look-up,
    /// rather than through the scan's own calls).
    #[inline]
    pub fn settled(&self, memo: MemoUse<'_>, target: Target, value: &[u8]) -> bool {
        let sel = self.matcher.selection(target);
        self.matcher.plainly_clean(sel, value)
            || match memo {
                MemoUse::Lent(m) => m.holds_clean(self.id, sel.index(), value),
                MemoUse::AtLookUp | MemoUse::Off => false,
            }
    }

    fn scan_selected(&self, sel: Selection, value: &[u8], hits: &mut Vec<u32>, memo: MemoUse<'_>) {
        if self.matcher.plainly_clean(sel, value) {
            return;
        }
        memo.scan(self.id, sel.index(), value, hits, |hits| {
            self.matcher.scan(sel, value, hits)
        });
    }

    /// Whether this thread's scan memo holds an answer for `value` scanned as `target` (for
    /// `Target::Header`, as any header's value).
    #[cfg(test)]
    pub(crate) fn memoizes(&self, target: Target, value: &[u8]) -> bool {
        let sels = self.matcher.selections_of(target);
        sels.into_iter()
            .any(|sel| memo::holds(self.id, sel.index(), value))
    }
}

#[cfg(test)]
mod tests;
