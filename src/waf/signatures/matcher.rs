//! The compiled matchers. Per [`Target`], one literal automaton (an aho-corasick DFA over every
//! literal of the target's signatures, ASCII case-insensitive) walked once per value with our own
//! loop, so every literal occurrence is seen with its position at the cost of one table lookup per
//! byte. A literal occurrence wakes its signatures; each is then settled as cheaply as proof allows
//! ([`super::gate`]): rejected when the value lacks a byte group its regex requires, confirmed by
//! running its regex anchored where the literal starts when every match begins with a literal, and
//! otherwise by running its regex over the value, once. Signatures without a literal run their
//! regex on every value their byte groups allow; tokenizer signatures (SQLi/XSS) are gated by
//! cheap checks of their own.
//!
//! A signature matches a view exactly when one of its literals occurs in it and its regex (if any)
//! matches it: the gates only skip work whose answer is already known.
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
use super::gate;
use crate::waf::injection;
use crate::waf::normalize::{self, ByteSet};

/// Compiled-program size limit of one confirming regex (bytes of the compiled NFA).
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Lazy-DFA cache limit of one confirming regex.
pub const REGEX_DFA_LIMIT: usize = 2 << 20;
/// Anchored confirmations of one signature per view before its regex is run once over the whole
/// view instead (a literal that occurs everywhere, such as a quote in a JSON text).
const MAX_ANCHORED_RUNS: u8 = 8;

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
    /// Every match starts with one of the signature's literals.
    anchored: bool,
}

impl Confirm {
    fn possible(&self, present: &ByteSet) -> bool {
        self.groups.iter().all(|g| g.intersects(present))
    }
}

/// One literal of a target's automaton.
struct Literal {
    len: usize,
    /// Signature indexes it wakes.
    sigs: Vec<usize>,
}

#[derive(Default)]
struct TargetMatcher {
    /// Every literal of the target (shared by the targets with the same literal list); pattern id
    /// indexes `literals`.
    ac: Option<Arc<DFA>>,
    literals: Vec<Literal>,
    /// Signatures with a regex and no literal.
    always: Vec<usize>,
    /// Tokenizer signatures: (signature index, engine).
    engines: Vec<(usize, Engine)>,
}

/// Per-signature flags: on the stack for databases of up to 256 signatures.
struct SigBits {
    inline: [u64; 4],
    heap: Vec<u64>,
}

impl SigBits {
    fn new(n: usize) -> SigBits {
        SigBits {
            inline: [0; 4],
            heap: if n > 256 {
                vec![0; n.div_ceil(64)]
            } else {
                Vec::new()
            },
        }
    }
    fn words(&self) -> &[u64] {
        if self.heap.is_empty() {
            &self.inline
        } else {
            &self.heap
        }
    }
    fn get(&self, i: usize) -> bool {
        self.words()[i / 64] & (1 << (i % 64)) != 0
    }
    fn set(&mut self, i: usize) {
        let w = if self.heap.is_empty() {
            &mut self.inline[..]
        } else {
            &mut self.heap[..]
        };
        w[i / 64] |= 1 << (i % 64);
    }
    /// The indexes set, in increasing order.
    fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words().iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(w * 64 + b)
            })
        })
    }
}

/// One view's progress: signatures settled for this view (rejected by a gate or confirmed over the
/// whole view) and the anchored runs spent per signature.
struct ViewState {
    settled: SigBits,
    anchored_runs: [u8; 256],
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
        let mut confirm = Vec::with_capacity(defs.len());
        for (i, d) in defs.iter().enumerate() {
            confirm.push(match &d.regex {
                Some(p) => {
                    let g = gate::analyse(p, &d.literals);
                    Confirm {
                        regex: Some(build_regex(d.id, p)?),
                        groups: g.groups,
                        // The anchored-run counters cover the first 256 signatures.
                        anchored: g.anchored && i < 256,
                    }
                }
                None => Confirm {
                    regex: None,
                    groups: Vec::new(),
                    anchored: false,
                },
            });
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
                            let folded = l.as_bytes().to_ascii_lowercase();
                            match lits.iter().position(|x| *x == folded) {
                                Some(k) if !tm.literals[k].sigs.contains(&i) => {
                                    tm.literals[k].sigs.push(i)
                                }
                                Some(_) => {}
                                None => {
                                    tm.literals.push(Literal {
                                        len: folded.len(),
                                        sigs: vec![i],
                                    });
                                    lits.push(folded);
                                }
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
        let mut matched = SigBits::new(self.ids.len());
        let present = ByteSet::of(value);
        self.scan_view(tm, value, &present, &mut matched);
        for view in normalize::inspection_views(value, &present, target == Target::Url) {
            self.scan_view(tm, &view, &ByteSet::of(&view), &mut matched);
        }
        hits.extend(matched.ones().map(|i| self.ids[i]));
    }

    fn scan_view(&self, tm: &TargetMatcher, view: &[u8], present: &ByteSet, matched: &mut SigBits) {
        let mut vs = ViewState {
            settled: SigBits::new(self.ids.len()),
            anchored_runs: [0; 256],
        };
        if let Some(ac) = &tm.ac {
            self.walk(ac, tm, view, present, matched, &mut vs);
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

    /// One pass of the literal automaton over `view`, settling the signatures it wakes.
    fn walk(
        &self,
        ac: &DFA,
        tm: &TargetMatcher,
        view: &[u8],
        present: &ByteSet,
        matched: &mut SigBits,
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
                let start = at + 1 - lit.len;
                for &i in &lit.sigs {
                    self.woken(i, view, start, present, matched, vs);
                }
            }
        }
    }

    /// A literal of signature `i` starts at `start` in `view`: settle what can be settled.
    fn woken(
        &self,
        i: usize,
        view: &[u8],
        start: usize,
        present: &ByteSet,
        matched: &mut SigBits,
        vs: &mut ViewState,
    ) {
        if matched.get(i) || vs.settled.get(i) {
            return;
        }
        let c = &self.confirm[i];
        let Some(re) = &c.regex else {
            matched.set(i);
            return;
        };
        if !c.possible(present) {
            vs.settled.set(i);
            return;
        }
        if c.anchored && vs.anchored_runs[i] < MAX_ANCHORED_RUNS {
            vs.anchored_runs[i] += 1;
            let input = Input::new(view)
                .range(start..)
                .anchored(Anchored::Yes)
                .earliest(true);
            if re.is_match(input) {
                matched.set(i);
            }
            return;
        }
        vs.settled.set(i);
        if re.is_match(view) {
            matched.set(i);
        }
    }
}
