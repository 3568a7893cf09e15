//! The compiled matchers: one overlapping aho-corasick literal prefilter per [`Target`], confirming
//! regexes run only on a literal hit, an always-run list for the few signatures without a literal, and the
//! tokenizer signatures (SQLi/XSS) gated by cheap byte checks.
//!
//! Imports: `aho-corasick`, `regex`, the parent module, `waf::injection`, `waf::normalize`.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::bytes::{Regex, RegexBuilder};

use super::Target;
use super::db::{Engine, SigDef};
use crate::waf::injection;
use crate::waf::normalize::{self, ByteSet};

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

/// One distinct symbol literal of a target (`;`, `..`, `{{`, `$(`), shared by the signatures using it.
struct Symbol {
    finder: memchr::memmem::Finder<'static>,
    /// The bytes of the literal: it can only occur in a value holding all of them.
    bytes: ByteSet,
    /// Signature indexes.
    sigs: Vec<usize>,
}

#[derive(Default)]
struct TargetMatcher {
    /// Literal prefilter (shared by the targets with the same literals); pattern index → the
    /// signatures with that literal in `pat_sigs`.
    ac: Option<AhoCorasick>,
    pat_sigs: Vec<Vec<usize>>,
    /// Literals without ASCII letters: found with memchr's SIMD substring search instead of the
    /// automaton, whose match loop they would flood; indexed by first byte (`by_first[b]`), so a
    /// value only pays for the symbols starting with a byte it holds.
    symbols: Vec<Symbol>,
    by_first: Vec<Vec<usize>>,
    /// The first bytes of `symbols`.
    first_bytes: ByteSet,
    /// Signatures with a regex and no literal.
    always_sig: Vec<usize>,
    /// Tokenizer signatures: (signature index, engine).
    engines: Vec<(usize, Engine)>,
}

impl TargetMatcher {
    fn add_symbol(&mut self, literal: &[u8], sig: usize) {
        if let Some(s) = self
            .symbols
            .iter_mut()
            .find(|s| s.finder.needle() == literal)
        {
            if !s.sigs.contains(&sig) {
                s.sigs.push(sig);
            }
            return;
        }
        let first = literal[0];
        self.first_bytes.insert(first);
        if self.by_first.is_empty() {
            self.by_first = vec![Vec::new(); 256];
        }
        self.by_first[usize::from(first)].push(self.symbols.len());
        self.symbols.push(Symbol {
            finder: memchr::memmem::Finder::new(literal).into_owned(),
            bytes: ByteSet::of(literal),
            sigs: vec![sig],
        });
    }
}

/// One bit per signature: on the stack for databases of up to 256 signatures.
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
    fn clear(&mut self) {
        self.inline = [0; 4];
        self.heap.iter_mut().for_each(|w| *w = 0);
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

/// Per-scan state: the signatures matched (over all views) and those whose regex already ran on
/// the current view.
struct ScanState {
    matched: SigBits,
    tried: SigBits,
}

/// All targets' matchers plus the per-signature confirming regexes.
pub struct Matcher {
    targets: Vec<TargetMatcher>,
    confirm: Vec<Option<Regex>>,
    ids: Vec<u32>,
}

fn build_regex(id: u32, pattern: &str) -> Result<Regex, CompileError> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .unicode(false)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_LIMIT)
        .build()
        .map_err(|e| CompileError {
            id,
            message: e.to_string(),
        })
}

impl Matcher {
    pub fn compile(defs: &[SigDef]) -> Result<Matcher, CompileError> {
        let mut confirm = Vec::with_capacity(defs.len());
        for d in defs {
            confirm.push(match &d.regex {
                Some(p) => Some(build_regex(d.id, p)?),
                None => None,
            });
        }
        let mut targets = Vec::with_capacity(Target::ALL.len());
        // Most targets share the same literal list: one automaton per distinct list.
        let mut built: Vec<(Vec<String>, AhoCorasick)> = Vec::new();
        for &t in Target::ALL {
            let mut tm = TargetMatcher::default();
            // Distinct literals (ASCII case folded, as the automaton matches them).
            let mut lits: Vec<String> = Vec::new();
            for (i, d) in defs.iter().enumerate() {
                if !d.targets.contains(&t) {
                    continue;
                }
                match d.engine {
                    Engine::Sqli | Engine::Xss => tm.engines.push((i, d.engine.clone())),
                    Engine::Pattern if d.literals.is_empty() => tm.always_sig.push(i),
                    Engine::Pattern => {
                        for l in &d.literals {
                            if !l.bytes().any(|b| b.is_ascii_alphabetic()) {
                                tm.add_symbol(l.as_bytes(), i);
                                continue;
                            }
                            let folded = l.to_ascii_lowercase();
                            match lits.iter().position(|x| *x == folded) {
                                Some(k) if !tm.pat_sigs[k].contains(&i) => tm.pat_sigs[k].push(i),
                                Some(_) => {}
                                None => {
                                    lits.push(folded);
                                    tm.pat_sigs.push(vec![i]);
                                }
                            }
                        }
                    }
                }
            }
            if !lits.is_empty() {
                if let Some((_, ac)) = built.iter().find(|(l, _)| *l == lits) {
                    tm.ac = Some(ac.clone());
                } else {
                    // A DFA: several times faster per byte than the NFA in overlapping search.
                    let ac = AhoCorasickBuilder::new()
                        .kind(Some(AhoCorasickKind::DFA))
                        .match_kind(MatchKind::Standard)
                        .ascii_case_insensitive(true)
                        .build(&lits)
                        .map_err(|e| CompileError {
                            id: 0,
                            message: format!("literal automaton: {e}"),
                        })?;
                    built.push((lits, ac.clone()));
                    tm.ac = Some(ac);
                }
            }
            targets.push(tm);
        }
        Ok(Matcher {
            targets,
            confirm,
            ids: defs.iter().map(|d| d.id).collect(),
        })
    }

    /// Pushes onto `hits` the ids of the signatures for `target` matching `value` (or its
    /// de-obfuscated variant), each at most once, in database order.
    pub fn scan(&self, target: Target, value: &[u8], hits: &mut Vec<u32>) {
        let Some(tm) = self.targets.get(target.index()) else {
            return;
        };
        let mut st = ScanState {
            matched: SigBits::new(self.ids.len()),
            tried: SigBits::new(self.ids.len()),
        };
        let present = ByteSet::of(value);
        self.scan_view(tm, value, &present, &mut st);
        for view in normalize::inspection_views(value, &present, target == Target::Url) {
            st.tried.clear();
            self.scan_view(tm, &view, &ByteSet::of(&view), &mut st);
        }
        hits.extend(st.matched.ones().map(|i| self.ids[i]));
    }

    fn confirm(&self, i: usize, view: &[u8], st: &mut ScanState) {
        if st.matched.get(i) || st.tried.get(i) {
            return;
        }
        st.tried.set(i);
        let hit = match &self.confirm[i] {
            Some(re) => re.is_match(view),
            None => true,
        };
        if hit {
            st.matched.set(i);
        }
    }

    fn scan_view(&self, tm: &TargetMatcher, view: &[u8], present: &ByteSet, st: &mut ScanState) {
        // A symbol literal is only searched for when all of its bytes occur, so most literals cost
        // nothing: only the symbols starting with a byte of the value are looked at.
        for first in present.and(&tm.first_bytes).iter() {
            for &k in &tm.by_first[usize::from(first)] {
                let sym = &tm.symbols[k];
                if !sym.bytes.is_subset(present) {
                    continue;
                }
                if sym.finder.needle().len() == 1 || sym.finder.find(view).is_some() {
                    for &i in &sym.sigs {
                        self.confirm(i, view, st);
                    }
                }
            }
        }
        if let Some(ac) = &tm.ac {
            for m in ac.find_overlapping_iter(view) {
                for &i in &tm.pat_sigs[m.pattern().as_usize()] {
                    self.confirm(i, view, st);
                }
            }
        }
        // Signatures without a literal: each is a single lazy-DFA pass that stops at the first match
        // (a `RegexSet` would have to find every pattern's match and is slower here).
        for &i in &tm.always_sig {
            if !st.matched.get(i) && self.confirm[i].as_ref().is_some_and(|re| re.is_match(view)) {
                st.matched.set(i);
            }
        }
        for (i, engine) in &tm.engines {
            if st.matched.get(*i) {
                continue;
            }
            let hit = match engine {
                Engine::Sqli => injection::is_sqli(view),
                Engine::Xss => injection::is_xss(view),
                Engine::Pattern => false,
            };
            if hit {
                st.matched.set(*i);
            }
        }
    }
}
