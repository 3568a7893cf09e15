//! The compiled matchers: one literal automaton for the whole database ([`super::literals`]),
//! holding every signature literal and every *anchor* of the regexes (literals each match starts
//! with, proved by [`super::prefilter`]), and per signature its confirming regex and byte groups.
//!
//! A walk of the automaton records which signatures of the view's target have a literal in the
//! view and where anchored signatures may start. Each signature with a literal is then settled as cheaply as proof allows: rejected when
//! the view lacks a byte group its regex requires, confirmed by running its regex anchored at the
//! recorded places (and at the start of the view when a `^` branch allows it), or, with no anchors
//! or too many places, by one run over the whole view. Signatures without a literal run their regex
//! on every view their byte groups allow; tokenizer signatures (SQLi/XSS) have pre-checks of their own.
//!
//! A value without any occurrence, one-byte literal, view or tokenizer candidate (most values of a
//! request) stops there: nothing of the database can match it.
//!
//! A signature matches a view exactly when one of its literals occurs in it and its regex (if any)
//! matches it: the gates and anchors only skip work whose answer is already known
//! (`examples/detect_corpus --dump` shows it scan by scan).

use std::sync::OnceLock;

use regex_automata::meta::{self, Regex};
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::{Anchored, Input};

use super::Target;
use super::db::{Engine, SigDef};
use super::literals::{self, Literals, MAX_SIGNATURES, Occurrences, SigBits, ViewState};
use super::prefilter::{self, Anchors, AtStart, PLAIN_ALPHABETS};
use super::shape;
use crate::injection;
use crate::normalize::{self, ByteSet};

/// Compiled-program size limit of one confirming regex (bytes of the compiled NFA).
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Lazy-DFA cache limit of one confirming regex.
pub const REGEX_DFA_LIMIT: usize = 2 << 20;

/// A compile error naming the signature.
#[derive(Debug, thiserror::Error)]
#[error("signature {id}: {message}")]
pub struct CompileError {
    pub id: u32,
    pub message: String,
}

/// What the compiled matchers hold on the heap, in bytes ([`Matcher::heap_usage`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct HeapUsage {
    /// The literal automaton's transition table.
    pub literal_table: usize,
    /// What each literal means (its signatures and anchors).
    pub literal_entries: usize,
    /// The confirming regexes compiled so far (per-thread search caches not included).
    pub regexes: usize,
    /// How many signatures have a confirming regex.
    pub regex_count: usize,
    /// How many of them have been compiled (each is, the first time a scan needs it).
    pub regexes_compiled: usize,
    /// The per-target and per-header selections.
    pub selections: usize,
}

/// How one signature is confirmed once a literal of it occurs.
struct Confirm {
    /// None: the literal occurrence is the match.
    regex: Option<LazyRegex>,
    /// Every match holds a byte of each group.
    groups: Vec<ByteSet>,
    /// Every match starts with one of the signature's anchors (in the automaton) or, when one of
    /// its `first` literals starts the view, at the start ...
    anchored: bool,
    /// ... or at the start of the view, whatever it starts with.
    at_start: bool,
}

impl Confirm {
    fn possible(&self, present: &ByteSet) -> bool {
        self.groups.iter().all(|g| g.intersects(present))
    }
}

/// Which signatures a scan runs: a target's, or a header value's by the header's name
/// ([`Matcher::selection`], [`Matcher::header_selection`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection(usize);

impl Selection {
    /// A number telling selections apart (in the scan memo).
    pub fn index(self) -> usize {
        self.0
    }
}

/// Which of a target's signatures a [`TargetMatcher`] holds.
#[derive(Clone, Copy)]
enum Scope<'a> {
    All,
    /// Those scoped to no header name.
    Unscoped,
    /// Those scoped to no header name or to this one.
    Header(&'a String),
}

/// What each target inspects.
#[derive(Default)]
struct TargetMatcher {
    /// Signatures matched through the literal automaton.
    literal_sigs: SigBits,
    /// Signatures with a regex and no literal.
    always: Vec<usize>,
    /// Tokenizer signatures: (signature index, engine).
    engines: Vec<(usize, Engine)>,
    /// For each of [`PLAIN_ALPHABETS`]: no signature of the target matches a value of its bytes
    /// alone shorter than this, and such a value has no inspection views.
    plain_below: [usize; PLAIN_ALPHABETS.len()],
    /// For each length below the largest of `plain_below`, how many of the first
    /// [`PLAIN_ALPHABETS`] a value of that length may be made of and be settled by `plain_below`
    /// ([`prefilter::plain_alphabets`]).
    plain_alphabets: Vec<u8>,
}

/// The literal automaton plus the per-signature confirmations and per-target selections.
pub struct Matcher {
    literals: Literals,
    /// Per [`Selection`]: one per target, in [`Target::ALL`] order, then the header values of
    /// headers no signature is scoped to, then one per name in `scoped_headers`.
    targets: Vec<TargetMatcher>,
    /// The header names signatures are scoped to (`headers:`), lower case.
    scoped_headers: Vec<String>,
    confirm: Vec<Confirm>,
    ids: Vec<u32>,
    /// Per signature: the value shapes its matches do not count in (`unless:`).
    unless: Vec<u8>,
}

/// A confirming regex, compiled the first time a scan needs it. Most signatures' literals never
/// occur in ordinary traffic, so most regexes never run, and a compiled one holds its NFAs and
/// prefilters for the life of the process. The pattern is checked when the database compiles
/// ([`check_pattern`]), so a database with a bad pattern is still refused as a whole.
struct LazyRegex {
    pattern: Box<str>,
    /// None when the build failed although the check passed (the check builds the same NFAs
    /// with the same limits, so this is not expected): the signature then fails closed, its
    /// literal occurrence counting as the match, rather than a scan panicking.
    compiled: OnceLock<Option<Regex>>,
}

impl LazyRegex {
    fn checked(id: u32, pattern: &str) -> Result<LazyRegex, CompileError> {
        check_pattern(pattern).map_err(|message| CompileError { id, message })?;
        Ok(LazyRegex {
            pattern: pattern.into(),
            compiled: OnceLock::new(),
        })
    }

    #[inline]
    fn is_match<'h>(&self, input: impl Into<Input<'h>>) -> bool {
        let compiled = self.compiled.get_or_init(|| build_regex(&self.pattern));
        compiled.as_ref().is_none_or(|re| re.is_match(input))
    }

    /// The compiled regex, if a scan has needed it yet.
    fn compiled(&self) -> Option<&Regex> {
        self.compiled.get()?.as_ref()
    }
}

/// The meta regex's settings: `is_match` only, so no capture groups beyond the implicit one
/// and no one-pass DFA (which exists to report groups); both only cost memory here.
fn regex_config() -> meta::Config {
    meta::Config::new()
        .utf8_empty(false)
        .which_captures(WhichCaptures::Implicit)
        .onepass(false)
        .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
        .hybrid_cache_capacity(REGEX_DFA_LIMIT)
        .dfa_size_limit(Some(REGEX_DFA_LIMIT))
}

fn build_regex(pattern: &str) -> Option<Regex> {
    Regex::builder()
        .syntax(prefilter::syntax_config())
        .configure(regex_config())
        .build(pattern)
        .ok()
}

/// What building `pattern`'s regex would refuse: its syntax, and the size limit of the two NFAs
/// the build compiles (forward, and reverse for the lazy DFA), compiled here as the build does
/// and dropped.
fn check_pattern(pattern: &str) -> Result<(), String> {
    let config = regex_config();
    let nfa = |reverse: bool| {
        let captures = if reverse {
            WhichCaptures::None
        } else {
            config.get_which_captures()
        };
        thompson::Compiler::new()
            .syntax(prefilter::syntax_config())
            .configure(
                thompson::Config::new()
                    .utf8(config.get_utf8_empty())
                    .nfa_size_limit(config.get_nfa_size_limit())
                    .shrink(false)
                    .which_captures(captures)
                    .reverse(reverse),
            )
            .build(pattern)
            .map(drop)
            .map_err(|e| e.to_string())
    };
    nfa(false)?;
    nfa(true)?;
    Ok(())
}

impl Matcher {
    pub fn compile(defs: &[SigDef]) -> Result<Matcher, CompileError> {
        if defs.len() > MAX_SIGNATURES {
            return Err(CompileError {
                id: defs[MAX_SIGNATURES].info.id,
                message: format!(
                    "the database holds {} signatures, at most {MAX_SIGNATURES} are supported",
                    defs.len()
                ),
            });
        }
        let mut confirm = Vec::with_capacity(defs.len());
        let mut shortest = Vec::with_capacity(defs.len());
        let mut lits = literals::Builder::default();
        for (i, d) in defs.iter().enumerate() {
            let mut c = Confirm {
                regex: None,
                groups: Vec::new(),
                anchored: false,
                at_start: false,
            };
            let gate = d.regex.as_deref().map(prefilter::analyse);
            // A regex whose every match starts at the value's start, with one of its `first`
            // literals (`^\s*[;|]…`), is woken by that literal starting a view, not by its own
            // literals wherever they occur (the `;` of every `User-Agent`).
            let start_only = !d.literals.is_empty()
                && gate.as_ref().is_some_and(|g| {
                    g.anchors.as_ref().is_some_and(|a| {
                        a.literals.is_empty() && matches!(a.at_start, AtStart::When(_))
                    })
                });
            if d.engine == Engine::Pattern && !start_only {
                for l in &d.literals {
                    lits.literal(i, l);
                }
            }
            // A literal-only signature matches where one of its literals occurs.
            shortest.push(prefilter::shortest_literal(&d.literals));
            if let (Some(p), Some(g)) = (&d.regex, gate) {
                shortest[i] = g.shortest;
                c.regex = Some(LazyRegex::checked(d.info.id, p)?);
                c.groups = g.groups;
                if let Some(Anchors { literals, at_start }) = g.anchors
                    && !d.literals.is_empty()
                {
                    c.anchored = true;
                    for a in &literals {
                        lits.anchor(i, a);
                    }
                    match at_start {
                        AtStart::Never => {}
                        AtStart::When(first) => first.iter().for_each(|f| lits.first(i, f)),
                        AtStart::Always => c.at_start = true,
                    }
                }
            }
            confirm.push(c);
        }
        let mut scoped_headers: Vec<String> = Vec::new();
        for h in defs.iter().flat_map(|d| &d.info.headers) {
            if !scoped_headers.contains(h) {
                scoped_headers.push(h.clone());
            }
        }
        // A signature scoped to some header names says nothing of the others' values: a
        // header's value is scanned with the unscoped signatures and those of its name only.
        let header_scopes = std::iter::once(Scope::Unscoped)
            .chain(scoped_headers.iter().map(Scope::Header))
            .map(|scope| (Target::Header, scope));
        let targets = Target::ALL
            .iter()
            .map(|t| (*t, Scope::All))
            .chain(header_scopes)
            .map(|(t, scope)| {
                let t = &t;
                let in_scope = |d: &SigDef| match scope {
                    Scope::All => true,
                    Scope::Unscoped => d.info.headers.is_empty(),
                    Scope::Header(name) => {
                        d.info.headers.is_empty() || d.info.headers.contains(name)
                    }
                };
                let url = *t == Target::Url;
                let mut tm = TargetMatcher {
                    plain_below: PLAIN_ALPHABETS.map(|a| normalize::views_free_below(&a, url)),
                    ..TargetMatcher::default()
                };
                for (i, d) in defs
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| d.info.targets.contains(t) && in_scope(d))
                {
                    let free_below: [usize; PLAIN_ALPHABETS.len()] = match d.engine {
                        Engine::Sqli => {
                            tm.engines.push((i, Engine::Sqli));
                            PLAIN_ALPHABETS.map(|a| injection::sql_free_below(&a))
                        }
                        Engine::Xss => {
                            tm.engines.push((i, Engine::Xss));
                            PLAIN_ALPHABETS.map(|a| injection::xss_free_below(&a))
                        }
                        Engine::Pattern => {
                            if d.literals.is_empty() {
                                tm.always.push(i);
                            } else {
                                tm.literal_sigs.set(i);
                            }
                            shortest[i].map(|len| len.unwrap_or(usize::MAX))
                        }
                    };
                    for (below, free) in tm.plain_below.iter_mut().zip(free_below) {
                        *below = (*below).min(free);
                    }
                }
                tm.plain_alphabets = prefilter::plain_alphabets(&tm.plain_below);
                tm
            })
            .collect();
        Ok(Matcher {
            literals: lits.build().map_err(|e| CompileError {
                id: 0,
                message: format!("literal automaton: {e}"),
            })?,
            targets,
            scoped_headers,
            confirm,
            ids: defs.iter().map(|d| d.info.id).collect(),
            unless: defs.iter().map(|d| d.unless).collect(),
        })
    }

    /// What the compiled matchers hold on the heap (a measure for docs/limits.md, "Memory").
    pub fn heap_usage(&self) -> HeapUsage {
        let (literal_table, literal_entries) = self.literals.heap_bytes();
        let regexes = self.confirm.iter().filter_map(|c| c.regex.as_ref());
        let compiled = regexes.clone().filter_map(LazyRegex::compiled);
        HeapUsage {
            literal_table,
            literal_entries,
            regexes: compiled.clone().map(Regex::memory_usage).sum(),
            regex_count: regexes.count(),
            regexes_compiled: compiled.count(),
            selections: self
                .targets
                .iter()
                .map(|t| {
                    size_of::<TargetMatcher>()
                        + t.always.capacity() * size_of::<usize>()
                        + t.engines.capacity() * size_of::<(usize, Engine)>()
                })
                .sum(),
        }
    }

    /// Whether `value`'s bytes alone prove that nothing for `target` matches it (so [`Self::scan`]
    /// would find nothing): it is made of one of the plain alphabets and shorter than any match
    /// of the target's signatures spelt with that alphabet. Most parameter names and many values
    /// are such (`q`, `id`, `20`, `en`), and are settled for the cost of one pass over a few bytes.
    #[inline]
    pub fn plainly_clean(&self, sel: Selection, value: &[u8]) -> bool {
        let Some(tm) = self.targets.get(sel.0) else {
            return true;
        };
        // The alphabets a value of its length may use, found by its length, spare a pass over
        // the bytes of a value that is not plain enough past its first byte that is not.
        tm.plain_alphabets
            .get(value.len())
            .is_some_and(|&alphabets| {
                alphabets > 0 && prefilter::within_alphabets(value, alphabets)
            })
    }

    /// Pushes onto `hits` the ids of the signatures for `target` matching `value` (or one of its
    /// inspection views), each at most once, in database order.
    pub fn scan(&self, sel: Selection, value: &[u8], hits: &mut Vec<u32>) {
        let Some(tm) = self.targets.get(sel.0) else {
            return;
        };
        let present = ByteSet::of(value);
        let url = sel.0 == Target::Url.index();
        let views = normalize::inspection_views(value, &present, url);
        let mut found = Occurrences::default();
        self.literals.occurrences(value, &mut found);
        if found.is_empty() && views.is_empty() && self.quiet(tm, value, &present) {
            return;
        }
        let mut matched = SigBits::default();
        self.scan_view(tm, value, &present, &found, &mut matched);
        for view in views {
            found.clear();
            self.literals.occurrences(&view, &mut found);
            self.scan_view(tm, &view, &ByteSet::of(&view), &found, &mut matched);
        }
        // The shapes of the value are judged only when a match depends on them.
        let mut value_shapes = None;
        let query = sel.0 == Target::QueryString.index();
        for i in matched.ones() {
            let unless = self.unless[i];
            let exempt = unless != 0
                && (*value_shapes.get_or_insert_with(|| shape::shapes(value)) & unless != 0
                    // A query string, or a value that carries a page's address with its
                    // query (a `Referer`, a return address): its pairs are that page's
                    // parameters.
                    || (query || shape::carries_query(value))
                        && self.only_in_shaped_pairs(tm, i, value, unless));
            if !exempt {
                hits.push(self.ids[i]);
            }
        }
    }

    /// For a whole query string or form body that signature `i` matched: whether only values
    /// of its `unless` shapes hold the match (the string without them no longer matches).
    fn only_in_shaped_pairs(&self, tm: &TargetMatcher, i: usize, value: &[u8], unless: u8) -> bool {
        let Some(rest) = shape::without_shaped_pairs(value, unless) else {
            return false;
        };
        let present = ByteSet::of(&rest);
        let mut found = Occurrences::default();
        let mut matched = SigBits::default();
        self.literals.occurrences(&rest, &mut found);
        self.scan_view(tm, &rest, &present, &found, &mut matched);
        for view in normalize::inspection_views(&rest, &present, false) {
            found.clear();
            self.literals.occurrences(&view, &mut found);
            self.scan_view(tm, &view, &ByteSet::of(&view), &found, &mut matched);
        }
        !matched.get(i)
    }

    /// The signatures of `target`.
    pub fn selection(&self, target: Target) -> Selection {
        Selection(target.index())
    }

    /// The signatures of the `header` target that apply to a header named `name` (lower case):
    /// those scoped to no header, and those scoped to `name`.
    pub fn header_selection(&self, name: &str) -> Selection {
        let scoped = self.scoped_headers.iter().position(|h| h == name);
        Selection(Target::ALL.len() + scoped.map_or(0, |k| k + 1))
    }

    /// Every selection that scans `target`'s values.
    #[cfg(test)]
    pub fn selections_of(&self, target: Target) -> Vec<Selection> {
        let mut all = vec![self.selection(target)];
        if target == Target::Header {
            all.extend((Target::ALL.len()..self.targets.len()).map(Selection));
        }
        all
    }

    /// Each selection's `plain_below`, one bound per plain alphabet.
    #[cfg(test)]
    pub fn plain_bounds(&self) -> Vec<[usize; PLAIN_ALPHABETS.len()]> {
        self.targets.iter().map(|tm| tm.plain_below).collect()
    }

    /// For a value without occurrences of the automaton's patterns and without views: whether
    /// nothing else can match it either (no one-byte literal, no signature without literals, no
    /// tokenizer candidate). Most values of a request are such: this skips the rest of the scan.
    fn quiet(&self, tm: &TargetMatcher, value: &[u8], present: &ByteSet) -> bool {
        tm.always.is_empty()
            && !self.literals.has_one_byte(present)
            && tm.engines.iter().all(|(_, engine)| match engine {
                Engine::Sqli => !injection::sqli_candidate(value, present),
                Engine::Xss => !injection::xss_candidate(value, present),
                Engine::Pattern => true,
            })
    }

    fn scan_view(
        &self,
        tm: &TargetMatcher,
        view: &[u8],
        present: &ByteSet,
        found: &Occurrences,
        matched: &mut SigBits,
    ) {
        let mut vs = ViewState::new();
        let possible = |i: usize| self.confirm[i].possible(present);
        self.literals
            .apply(view, present, found, &tm.literal_sigs, possible, &mut vs);
        for i in vs.present.ones() {
            if !matched.get(i) && self.confirmed(i, view, present, &vs) {
                matched.set(i);
            }
        }
        for &i in &tm.always {
            let c = &self.confirm[i];
            if !matched.get(i)
                && c.possible(present)
                && c.regex.as_ref().is_some_and(|re| re.is_match(view))
            {
                matched.set(i);
            }
        }
        for (i, engine) in &tm.engines {
            if matched.get(*i) {
                continue;
            }
            let hit = match engine {
                Engine::Sqli => injection::is_sqli(view, present),
                Engine::Xss => injection::is_xss(view, present),
                Engine::Pattern => false,
            };
            if hit {
                matched.set(*i);
            }
        }
    }

    /// Signature `i`, one of whose literals occurs in `view`: does its regex match?
    fn confirmed(&self, i: usize, view: &[u8], present: &ByteSet, vs: &ViewState) -> bool {
        let c = &self.confirm[i];
        let Some(re) = &c.regex else {
            return true;
        };
        if !c.possible(present) {
            return false;
        }
        if !c.anchored || vs.whole.get(i) {
            return re.is_match(view);
        }
        c.at_start
            .then_some(0)
            .into_iter()
            .chain(vs.anchors_of(i))
            .any(|start| {
                let input = Input::new(view)
                    .range(start..)
                    .anchored(Anchored::Yes)
                    .earliest(true);
                re.is_match(input)
            })
    }
}
