//! The compiled matchers. Per [`Target`], one literal automaton (an aho-corasick DFA, ASCII
//! case-insensitive) holding every literal of the target's signatures and every *anchor* of their
//! regexes (literals each match starts with, proved by [`super::gate`]), walked once per view with
//! our own loop so every occurrence is seen with its position at one table lookup per byte.
//!
//! The walk records which signatures have a literal in the view and where anchored signatures may
//! start. Each signature with a literal is then settled as cheaply as proof allows: rejected when
//! the view lacks a byte group its regex requires, confirmed by running its regex anchored at the
//! recorded places (and at the start of the view when a `^` branch allows it), or, with no anchors
//! or too many places, by one run over the whole view. Signatures without a literal run their regex
//! on every view their byte groups allow; tokenizer signatures (SQLi/XSS) have gates of their own.
//!
//! A signature matches a view exactly when one of its literals occurs in it and its regex (if any)
//! matches it: the gates and anchors only skip work whose answer is already known
//! (`examples/detect_corpus --dump` shows it scan by scan).
//!
//! Imports: `aho-corasick`, `regex-automata`, the parent module, `gate`, `waf::injection`,
//! `waf::normalize`.

use std::sync::Arc;

use aho_corasick::automaton::Automaton;
use aho_corasick::dfa::DFA;
use aho_corasick::{MatchKind, StartKind};
use regex_automata::meta::{self, Regex};
use regex_automata::{Anchored, Input};

use super::Target;
use super::db::{Engine, SigDef};
use super::gate::{self, Anchors, AtStart};
use crate::waf::injection;
use crate::waf::normalize::{self, ByteSet};

/// Compiled-program size limit of one confirming regex (bytes of the compiled NFA).
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Lazy-DFA cache limit of one confirming regex.
pub const REGEX_DFA_LIMIT: usize = 2 << 20;
/// Anchored confirmations of one signature per view before its regex is run once over the whole
/// view instead (a literal that occurs everywhere, such as a quote in a JSON text).
const MAX_ANCHORED_RUNS: usize = 8;
// Anchor records hold 16-bit signature indexes.
const _: () = assert!(MAX_SIGNATURES <= 1 << 16);

/// A compile error naming the signature.
#[derive(Debug, thiserror::Error)]
#[error("signature {id}: {message}")]
pub struct CompileError {
    pub id: u32,
    pub message: String,
}

/// How one signature is confirmed once a literal of it occurs.
struct Confirm {
    /// None: the literal occurrence is the match.
    regex: Option<Regex>,
    /// Every match holds a byte of each group.
    groups: Vec<ByteSet>,
    /// Every match starts with one of the signature's anchor literals (in the automaton) or, when
    /// one of its `first` literals starts the view, at the start ...
    anchored: bool,
    /// ... or at the start of the view, whatever it starts with.
    at_start: bool,
}

impl Confirm {
    fn possible(&self, present: &ByteSet) -> bool {
        self.groups.iter().all(|g| g.intersects(present))
    }
}

/// One literal of a target's automaton: a literal of some signatures (its presence is required)
/// and an anchor of others (their matches may start where it occurs), or both.
#[derive(Default)]
struct Literal {
    len: usize,
    /// Signatures it is a literal of.
    of: Vec<usize>,
    /// Signatures whose regex may match starting where it occurs.
    anchors: Vec<usize>,
    /// Signatures whose regex may match through a `^` when it occurs at the start of the view.
    first: Vec<usize>,
}

#[derive(Default)]
struct TargetMatcher {
    /// Every literal and anchor of the target (shared by the targets with the same list); pattern
    /// id indexes `literals`.
    ac: Option<Arc<DFA>>,
    literals: Vec<Literal>,
    /// Signatures with a regex and no literal.
    always: Vec<usize>,
    /// Tokenizer signatures: (signature index, engine).
    engines: Vec<(usize, Engine)>,
}

impl TargetMatcher {
    /// The automaton pattern for `lit` (ASCII case folded), added when new.
    fn literal(&mut self, lits: &mut Vec<Vec<u8>>, lit: &[u8]) -> &mut Literal {
        let folded = lit.to_ascii_lowercase();
        let k = match lits.iter().position(|x| *x == folded) {
            Some(k) => k,
            None => {
                self.literals.push(Literal {
                    len: folded.len(),
                    ..Literal::default()
                });
                lits.push(folded);
                lits.len() - 1
            }
        };
        &mut self.literals[k]
    }
}

/// Most signatures a database may hold (per-scan flags are fixed-size bitsets on the stack).
pub const MAX_SIGNATURES: usize = 256;

/// One flag per signature.
#[derive(Clone, Copy, Default)]
struct SigBits([u64; MAX_SIGNATURES / 64]);

impl SigBits {
    fn get(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    /// The indexes set, in increasing order.
    fn ones(self) -> impl Iterator<Item = usize> {
        let mut words = self.0;
        let mut w = 0;
        std::iter::from_fn(move || {
            while w < words.len() {
                if words[w] != 0 {
                    let b = words[w].trailing_zeros() as usize;
                    words[w] &= words[w] - 1;
                    return Some(w * 64 + b);
                }
                w += 1;
            }
            None
        })
    }
}

/// Anchors recorded per view before signatures fall back to one run over the whole view.
const MAX_ANCHOR_HITS: usize = 32;

/// One view's walk: the signatures whose literal occurs, where anchored signatures may match,
/// those to run over the whole view (too many anchors), and those whose byte groups the view
/// lacks (their anchors are not recorded).
struct ViewState {
    present: SigBits,
    whole: SigBits,
    checked: SigBits,
    impossible: SigBits,
    anchors: [(u16, u32); MAX_ANCHOR_HITS],
    anchor_len: usize,
    runs: [u8; MAX_SIGNATURES],
}

/// All targets' matchers plus the per-signature confirmations.
pub struct Matcher {
    targets: Vec<TargetMatcher>,
    confirm: Vec<Confirm>,
    ids: Vec<u32>,
}

fn build_regex(id: u32, pattern: &str) -> Result<Regex, CompileError> {
    Regex::builder()
        .syntax(gate::syntax_config())
        .configure(
            meta::Config::new()
                .utf8_empty(false)
                .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
                .onepass_size_limit(Some(REGEX_SIZE_LIMIT))
                .hybrid_cache_capacity(REGEX_DFA_LIMIT)
                .dfa_size_limit(Some(REGEX_DFA_LIMIT)),
        )
        .build(pattern)
        .map_err(|e| CompileError {
            id,
            message: e.to_string(),
        })
}

fn build_automaton(lits: &[Vec<u8>]) -> Result<DFA, CompileError> {
    DFA::builder()
        .match_kind(MatchKind::Standard)
        .start_kind(StartKind::Unanchored)
        .ascii_case_insensitive(true)
        .prefilter(false)
        .build(lits)
        .map_err(|e| CompileError {
            id: 0,
            message: format!("literal automaton: {e}"),
        })
}

impl Matcher {
    pub fn compile(defs: &[SigDef]) -> Result<Matcher, CompileError> {
        if defs.len() > MAX_SIGNATURES {
            return Err(CompileError {
                id: defs[MAX_SIGNATURES].id,
                message: format!(
                    "the database holds {} signatures, at most {MAX_SIGNATURES} are supported",
                    defs.len()
                ),
            });
        }
        let mut confirm = Vec::with_capacity(defs.len());
        let mut anchors = Vec::with_capacity(defs.len());
        let mut firsts = Vec::with_capacity(defs.len());
        for d in defs {
            let (c, a) = match &d.regex {
                Some(p) => {
                    let g = gate::analyse(p);
                    let a = g.anchors.filter(|_| !d.literals.is_empty());
                    let c = Confirm {
                        regex: Some(build_regex(d.id, p)?),
                        groups: g.groups,
                        anchored: a.is_some(),
                        at_start: a
                            .as_ref()
                            .is_some_and(|a| matches!(a.at_start, AtStart::Always)),
                    };
                    (c, a)
                }
                None => (
                    Confirm {
                        regex: None,
                        groups: Vec::new(),
                        anchored: false,
                        at_start: false,
                    },
                    None,
                ),
            };
            confirm.push(c);
            let (literals, first) = match a {
                Some(Anchors {
                    literals,
                    at_start: AtStart::When(first),
                }) => (literals, first),
                Some(a) => (a.literals, Vec::new()),
                None => (Vec::new(), Vec::new()),
            };
            anchors.push(literals);
            firsts.push(first);
        }
        let mut targets = Vec::with_capacity(Target::ALL.len());
        // Most targets share the same literal list: one automaton per distinct list.
        let mut built: Vec<(Vec<Vec<u8>>, Arc<DFA>)> = Vec::new();
        for &t in Target::ALL {
            let mut tm = TargetMatcher::default();
            // Distinct literals, ASCII case folded as the automaton matches them.
            let mut lits: Vec<Vec<u8>> = Vec::new();
            for (i, d) in defs.iter().enumerate() {
                if !d.targets.contains(&t) {
                    continue;
                }
                match d.engine {
                    Engine::Sqli | Engine::Xss => tm.engines.push((i, d.engine.clone())),
                    Engine::Pattern if d.literals.is_empty() => tm.always.push(i),
                    Engine::Pattern => {
                        for l in &d.literals {
                            let lit = tm.literal(&mut lits, l.as_bytes());
                            if !lit.of.contains(&i) {
                                lit.of.push(i);
                            }
                        }
                        for a in &anchors[i] {
                            let lit = tm.literal(&mut lits, a);
                            if !lit.anchors.contains(&i) {
                                lit.anchors.push(i);
                            }
                        }
                        for f in &firsts[i] {
                            let lit = tm.literal(&mut lits, f);
                            if !lit.first.contains(&i) {
                                lit.first.push(i);
                            }
                        }
                    }
                }
            }
            if !lits.is_empty() {
                let ac = match built.iter().find(|(l, _)| *l == lits) {
                    Some((_, ac)) => ac.clone(),
                    None => {
                        let ac = Arc::new(build_automaton(&lits)?);
                        built.push((lits, ac.clone()));
                        ac
                    }
                };
                tm.ac = Some(ac);
            }
            targets.push(tm);
        }
        Ok(Matcher {
            targets,
            confirm,
            ids: defs.iter().map(|d| d.id).collect(),
        })
    }

    /// Pushes onto `hits` the ids of the signatures for `target` matching `value` (or one of its
    /// inspection views), each at most once, in database order.
    pub fn scan(&self, target: Target, value: &[u8], hits: &mut Vec<u32>) {
        let Some(tm) = self.targets.get(target.index()) else {
            return;
        };
        let mut matched = SigBits::default();
        let present = ByteSet::of(value);
        self.scan_view(tm, value, &present, &mut matched);
        for view in normalize::inspection_views(value, &present, target == Target::Url) {
            self.scan_view(tm, &view, &ByteSet::of(&view), &mut matched);
        }
        hits.extend(matched.ones().map(|i| self.ids[i]));
    }

    fn scan_view(&self, tm: &TargetMatcher, view: &[u8], present: &ByteSet, matched: &mut SigBits) {
        if let Some(ac) = &tm.ac {
            let mut vs = ViewState {
                present: SigBits::default(),
                whole: SigBits::default(),
                checked: SigBits::default(),
                impossible: SigBits::default(),
                anchors: [(0, 0); MAX_ANCHOR_HITS],
                anchor_len: 0,
                runs: [0; MAX_SIGNATURES],
            };
            self.walk(ac, tm, view, present, &mut vs);
            for i in vs.present.ones() {
                if !matched.get(i) && self.confirmed(i, view, present, &vs) {
                    matched.set(i);
                }
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
        let starts = vs.anchors[..vs.anchor_len]
            .iter()
            .filter(|(s, _)| usize::from(*s) == i)
            .map(|&(_, start)| start as usize);
        c.at_start
            .then_some(0)
            .into_iter()
            .chain(starts)
            .any(|start| {
                let input = Input::new(view)
                    .range(start..)
                    .anchored(Anchored::Yes)
                    .earliest(true);
                re.is_match(input)
            })
    }
}

impl Matcher {
    /// One pass of the literal automaton over `view`: which signatures have a literal in it, and
    /// where anchored signatures may start.
    fn walk(
        &self,
        ac: &DFA,
        tm: &TargetMatcher,
        view: &[u8],
        present: &ByteSet,
        vs: &mut ViewState,
    ) {
        let Ok(mut sid) = ac.start_state(aho_corasick::Anchored::No) else {
            return;
        };
        for (at, &b) in view.iter().enumerate() {
            sid = ac.next_state(aho_corasick::Anchored::No, sid, b);
            if !ac.is_special(sid) {
                continue;
            }
            if ac.is_dead(sid) {
                return;
            }
            for k in 0..ac.match_len(sid) {
                let lit = &tm.literals[ac.match_pattern(sid, k).as_usize()];
                for &i in &lit.of {
                    vs.present.set(i);
                }
                let start = at + 1 - lit.len;
                for &i in &lit.anchors {
                    self.anchor(i, start, present, vs);
                }
                if start == 0 {
                    for &i in &lit.first {
                        self.anchor(i, 0, present, vs);
                    }
                }
            }
        }
    }

    /// A match of signature `i` may start at `start`: record it, unless the view cannot match
    /// (checked once per view) or holds too many such places.
    fn anchor(&self, i: usize, start: usize, present: &ByteSet, vs: &mut ViewState) {
        if vs.whole.get(i) || vs.impossible.get(i) {
            return;
        }
        if !vs.checked.get(i) {
            vs.checked.set(i);
            if !self.confirm[i].possible(present) {
                vs.impossible.set(i);
                return;
            }
        }
        let runs = &mut vs.runs[i];
        match u32::try_from(start) {
            Ok(start)
                if usize::from(*runs) < MAX_ANCHORED_RUNS && vs.anchor_len < MAX_ANCHOR_HITS =>
            {
                *runs += 1;
                vs.anchors[vs.anchor_len] = (i as u16, start);
                vs.anchor_len += 1;
            }
            _ => vs.whole.set(i),
        }
    }
}
