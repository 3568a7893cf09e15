//! Shell-style wildcards of the policy format (`* ? [abc] [!abc] [a-e]`, not regexes), compiled once.
//! `*` spans `/` unless the entity says otherwise. Matching is iterative with one backtrack point,
//! so it is linear-ish and never recursive; `*`, `lit*`, `*lit` and plain literals (most entity
//! names) skip that loop.

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Lit(u8),
    Any,
    Star,
    Class { negate: bool, ranges: Vec<(u8, u8)> },
}

/// The common pattern shapes, matched without the general loop (same results).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Shape {
    /// `*`
    Star,
    /// `lit*`
    Prefix(Vec<u8>),
    /// `*lit`
    Suffix(Vec<u8>),
    /// `lit` (no wildcard at all)
    Literal(Vec<u8>),
    General,
}

/// A compiled wildcard pattern.
#[derive(Clone, Debug)]
pub struct Glob {
    toks: Vec<Tok>,
    star_slash: bool,
    fold: bool,
    literal_len: usize,
    shape: Shape,
}

impl Glob {
    pub fn new(pattern: &str, star_crosses_slash: bool, case_insensitive: bool) -> Glob {
        let p = pattern.as_bytes();
        let mut toks = Vec::new();
        let mut i = 0;
        while i < p.len() {
            match p[i] {
                b'*' => {
                    if toks.last() != Some(&Tok::Star) {
                        toks.push(Tok::Star);
                    }
                }
                b'?' => toks.push(Tok::Any),
                b'[' => {
                    if let Some((tok, next)) = class(p, i + 1, case_insensitive) {
                        toks.push(tok);
                        i = next;
                        continue;
                    }
                    toks.push(Tok::Lit(b'['));
                }
                c => toks.push(Tok::Lit(if case_insensitive {
                    c.to_ascii_lowercase()
                } else {
                    c
                })),
            }
            i += 1;
        }
        let literal_len = toks.iter().filter(|t| !matches!(t, Tok::Star)).count();
        let shape = shape(&toks);
        Glob {
            toks,
            star_slash: star_crosses_slash,
            fold: case_insensitive,
            literal_len,
            shape,
        }
    }

    /// Number of non-`*` tokens: longer patterns are more specific.
    pub fn specificity(&self) -> usize {
        self.literal_len
    }

    pub fn is_match(&self, s: &[u8]) -> bool {
        // What a `*` spans: anything, or no `/`.
        let spans = |t: &[u8]| self.star_slash || !t.contains(&b'/');
        match &self.shape {
            Shape::Star => spans(s),
            Shape::Prefix(l) => {
                s.len() >= l.len() && self.lit_eq(l, &s[..l.len()]) && spans(&s[l.len()..])
            }
            Shape::Suffix(l) => {
                let cut = s.len().wrapping_sub(l.len());
                s.len() >= l.len() && self.lit_eq(l, &s[cut..]) && spans(&s[..cut])
            }
            Shape::Literal(l) => self.lit_eq(l, s),
            Shape::General => self.general_match(s),
        }
    }

    /// `lit` (already lower-case when folding) equals `s`.
    fn lit_eq(&self, lit: &[u8], s: &[u8]) -> bool {
        if self.fold {
            lit.len() == s.len() && lit.iter().zip(s).all(|(l, c)| *l == c.to_ascii_lowercase())
        } else {
            lit == s
        }
    }

    fn general_match(&self, s: &[u8]) -> bool {
        let (mut ti, mut si) = (0usize, 0usize);
        let mut back: Option<(usize, usize)> = None;
        while si < s.len() {
            let c = if self.fold {
                s[si].to_ascii_lowercase()
            } else {
                s[si]
            };
            let step = match self.toks.get(ti) {
                Some(Tok::Star) => {
                    back = Some((ti, si));
                    ti += 1;
                    continue;
                }
                Some(Tok::Lit(l)) => *l == c,
                Some(Tok::Any) => true,
                Some(Tok::Class { negate, ranges }) => {
                    ranges.iter().any(|(a, b)| (*a..=*b).contains(&c)) != *negate
                }
                None => false,
            };
            if step {
                ti += 1;
                si += 1;
                continue;
            }
            match back {
                Some((bt, bs)) if self.star_slash || s[bs] != b'/' => {
                    back = Some((bt, bs + 1));
                    ti = bt + 1;
                    si = bs + 1;
                }
                _ => return false,
            }
        }
        self.toks[ti..].iter().all(|t| matches!(t, Tok::Star))
    }
}

fn shape(toks: &[Tok]) -> Shape {
    let lits = |t: &[Tok]| -> Option<Vec<u8>> {
        t.iter()
            .map(|t| match t {
                Tok::Lit(c) => Some(*c),
                _ => None,
            })
            .collect()
    };
    match toks {
        [Tok::Star] => Shape::Star,
        [rest @ .., Tok::Star] if !rest.is_empty() => {
            lits(rest).map_or(Shape::General, Shape::Prefix)
        }
        [Tok::Star, rest @ ..] if !rest.is_empty() => {
            lits(rest).map_or(Shape::General, Shape::Suffix)
        }
        _ => lits(toks).map_or(Shape::General, Shape::Literal),
    }
}

fn class(p: &[u8], mut i: usize, fold: bool) -> Option<(Tok, usize)> {
    let negate = matches!(p.get(i), Some(b'!') | Some(b'^'));
    if negate {
        i += 1;
    }
    let mut ranges = Vec::new();
    let start = i;
    while i < p.len() {
        if p[i] == b']' && i > start {
            return Some((Tok::Class { negate, ranges }, i + 1));
        }
        let a = p[i];
        let (lo, hi) = if p.get(i + 1) == Some(&b'-') && p.get(i + 2).is_some_and(|c| *c != b']') {
            i += 3;
            (a, p[i - 1])
        } else {
            i += 1;
            (a, a)
        };
        if fold {
            ranges.push((lo.to_ascii_lowercase(), hi.to_ascii_lowercase()));
            ranges.push((lo.to_ascii_uppercase(), hi.to_ascii_uppercase()));
        } else {
            ranges.push((lo, hi));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_wildcards() {
        let g = Glob::new("/api/*/item?.[jp][sn]*", true, false);
        assert!(g.is_match(b"/api/v1/item1.json"));
        assert!(g.is_match(b"/api/a/b/item2.png"));
        assert!(!g.is_match(b"/api/v1/item10.json"));
        assert!(Glob::new("*", true, false).is_match(b"/x/y"));
        assert!(!Glob::new("/a/*", false, false).is_match(b"/a/b/c"));
        assert!(Glob::new("/a/*", false, false).is_match(b"/a/b"));
        assert!(Glob::new("/[!a]x", true, false).is_match(b"/bx"));
        assert!(!Glob::new("/[!a]x", true, false).is_match(b"/ax"));
        assert!(Glob::new("/Admin*", true, true).is_match(b"/aDMIN/x"));
        assert!(Glob::new("[", true, false).is_match(b"["));
    }

    #[test]
    fn shapes_match_like_the_general_loop() {
        let patterns = [
            "*", "/api/*", "*.php", "/a/b", "", "*/x", "/x/", "A*", "*B", "ab", "a*b", "[ab]*",
        ];
        let inputs: [&[u8]; 14] = [
            b"",
            b"/",
            b"/api/",
            b"/api/x",
            b"/api/x/y",
            b"x.php",
            b"/d/x.PHP",
            b"/a/b",
            b"/A/B",
            b"a/x",
            b"/x",
            b"ab",
            b"AB",
            b"a/b",
        ];
        for p in patterns {
            for slash in [true, false] {
                for fold in [true, false] {
                    let g = Glob::new(p, slash, fold);
                    for s in inputs {
                        assert_eq!(
                            g.is_match(s),
                            g.general_match(s),
                            "{p:?} {s:?} {slash} {fold}"
                        );
                    }
                }
            }
        }
    }
}
