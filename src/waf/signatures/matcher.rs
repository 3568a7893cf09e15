//! The compiled matchers: one overlapping aho-corasick literal prefilter per [`Target`], confirming
//! regexes run only on a literal hit, an always-run list for the few signatures without a literal, and the
//! tokenizer signatures (SQLi/XSS) gated by cheap byte checks.
//!
//! Imports: `aho-corasick`, `regex`, the parent module, `waf::injection`, `waf::normalize`.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::bytes::{Regex, RegexBuilder};

use super::Target;
use super::db::{Engine, SigDef};
use crate::waf::injection;
use crate::waf::normalize;

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

#[derive(Default)]
struct TargetMatcher {
    /// Literal prefilter; pattern index → signature index in `pat_sig`.
    ac: Option<AhoCorasick>,
    pat_sig: Vec<usize>,
    /// Literals without ASCII letters (`;`, `..`, `{{`, `$(`): found with memchr's SIMD substring
    /// search instead of the automaton, whose match loop they would flood. (finder, signature index).
    symbols: Vec<(memchr::memmem::Finder<'static>, usize)>,
    /// Signatures with a regex and no literal.
    always_sig: Vec<usize>,
    /// Tokenizer signatures: (signature index, engine).
    engines: Vec<(usize, Engine)>,
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
        for &t in Target::ALL {
            let mut tm = TargetMatcher::default();
            let mut lits: Vec<&str> = Vec::new();
            for (i, d) in defs.iter().enumerate() {
                if !d.targets.contains(&t) {
                    continue;
                }
                match d.engine {
                    Engine::Sqli | Engine::Xss => tm.engines.push((i, d.engine.clone())),
                    Engine::Pattern if d.literals.is_empty() => tm.always_sig.push(i),
                    Engine::Pattern => {
                        for l in &d.literals {
                            if l.bytes().any(|b| b.is_ascii_alphabetic()) {
                                lits.push(l);
                                tm.pat_sig.push(i);
                            } else {
                                let f = memchr::memmem::Finder::new(l.as_bytes()).into_owned();
                                tm.symbols.push((f, i));
                            }
                        }
                    }
                }
            }
            if !lits.is_empty() {
                let ac = AhoCorasickBuilder::new()
                    .match_kind(MatchKind::Standard)
                    .ascii_case_insensitive(true)
                    .build(&lits)
                    .map_err(|e| CompileError {
                        id: 0,
                        message: format!("literal automaton: {e}"),
                    })?;
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

    /// Pushes onto `hits` the ids of the signatures for `target` matching `value` (or its
    /// de-obfuscated variant), each at most once, in database order.
    pub fn scan(&self, target: Target, value: &[u8], hits: &mut Vec<u32>) {
        let Some(tm) = self.targets.get(target.index()) else {
            return;
        };
        let mut matched = vec![false; self.ids.len()];
        self.scan_view(tm, value, &mut matched);
        for view in normalize::inspection_views(value, target == Target::Url) {
            self.scan_view(tm, &view, &mut matched);
        }
        for (i, m) in matched.iter().enumerate() {
            if *m {
                hits.push(self.ids[i]);
            }
        }
    }

    fn confirm(&self, i: usize, view: &[u8], matched: &mut [bool], tried: &mut [bool]) {
        if matched[i] || tried[i] {
            return;
        }
        tried[i] = true;
        matched[i] = match &self.confirm[i] {
            Some(re) => re.is_match(view),
            None => true,
        };
    }

    fn scan_view(&self, tm: &TargetMatcher, view: &[u8], matched: &mut [bool]) {
        let mut tried = vec![false; matched.len()];
        // One pass records which bytes occur; a symbol literal is only searched for when all of its
        // bytes do, so most literals cost a table lookup instead of a pass over the value.
        let mut present = [false; 256];
        for &b in view {
            present[usize::from(b)] = true;
        }
        for (finder, i) in &tm.symbols {
            if matched[*i] || tried[*i] || !finder.needle().iter().all(|&b| present[usize::from(b)])
            {
                continue;
            }
            if finder.needle().len() == 1 || finder.find(view).is_some() {
                self.confirm(*i, view, matched, &mut tried);
            }
        }
        if let Some(ac) = &tm.ac {
            for m in ac.find_overlapping_iter(view) {
                let i = tm.pat_sig[m.pattern().as_usize()];
                self.confirm(i, view, matched, &mut tried);
            }
        }
        // Signatures without a literal: each is a single lazy-DFA pass that stops at the first match
        // (a `RegexSet` would have to find every pattern's match and is slower here).
        for &i in &tm.always_sig {
            if !matched[i] {
                matched[i] = self.confirm[i].as_ref().is_some_and(|re| re.is_match(view));
            }
        }
        for (i, engine) in &tm.engines {
            if matched[*i] {
                continue;
            }
            matched[*i] = match engine {
                Engine::Sqli => injection::is_sqli(view),
                Engine::Xss => injection::is_xss(view),
                Engine::Pattern => false,
            };
        }
    }
}
