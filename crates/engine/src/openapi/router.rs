//! The path matcher: templates compiled once into a per-segment trie. Each node has a hash map of
//! literal segments, a short list of affixed/multi-parameter segment patterns
//! (`{name}-{version}.zip`, `{base}...{head}`) and one single-parameter child; lookups try
//! literal, then pattern, then parameter, with backtracking, so the cost grows with the path
//! depth, not with the number of paths. Captured values come back positionally; each operation names them.

use super::operation::Operation;
use portcullis_support::InlineVec;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Deepest request path the matcher looks at (segments); deeper paths match nothing.
pub const MAX_SEGMENTS: usize = 64;

/// The values a lookup captured, in template order (borrowed from the path; no allocation for
/// up to 8).
pub(crate) type Caps<'p> = InlineVec<&'p str, 8>;

/// A small multiplicative hasher for literal segments: the tables are built from the spec (not
/// from requests), so SipHash's flooding resistance buys nothing on this hot path.
#[derive(Default, Clone, Copy)]
struct SegHasher(u64);

impl Hasher for SegHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type SegMap = HashMap<Box<str>, u32, BuildHasherDefault<SegHasher>>;

/// One piece of a segment pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Piece {
    Lit(Box<str>),
    Param,
}

#[derive(Debug, Default)]
struct TrieNode {
    literal: SegMap,
    patterns: Vec<(Vec<Piece>, u32)>,
    param: Option<u32>,
    leaf: Option<u32>,
}

/// The trie plus the leaves (one per distinct template shape).
#[derive(Debug, Default)]
pub(crate) struct Router {
    nodes: Vec<TrieNode>,
    pub leaves: Vec<Leaf>,
}

/// The operations reachable at one template shape.
#[derive(Debug, Default)]
pub(crate) struct Leaf {
    /// The template as first written, e.g. `/pets/{petId}`.
    pub template: String,
    /// (upper-case method, operation index)
    pub ops: Vec<(String, usize)>,
}

/// A request the spec does not document, as a guess at its template (for shadow-API reports).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undocumented {
    pub method: String,
    /// The matched template (wrong method) or the path with id-like segments replaced by `{id}`.
    pub template: String,
}

/// What [`super::CompiledApi::find`] returns.
#[derive(Debug)]
pub enum ApiMatch<'a, 'p> {
    /// No template matches the path (VIOL_URL).
    NoUrl(Undocumented),
    /// The path matches, the method is not declared for it (VIOL_METHOD).
    WrongMethod {
        allowed: Vec<&'a str>,
        undocumented: Undocumented,
    },
    /// The operation and its path parameters.
    Operation(OpMatch<'a, 'p>),
}

/// A matched operation with its path parameters (name, raw value as sent, borrowed from the path).
#[derive(Debug)]
pub struct OpMatch<'a, 'p> {
    pub op: &'a Operation,
    pub path_params: Vec<(&'a str, &'p str)>,
}

fn parse_segment(seg: &str) -> Option<Vec<Piece>> {
    if !seg.contains('{') {
        return None;
    }
    let mut pieces = Vec::new();
    let mut rest = seg;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            pieces.push(Piece::Lit(rest[..open].into()));
        }
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
        pieces.push(Piece::Param);
        rest = rest.get(close + 1..).unwrap_or("");
    }
    if !rest.is_empty() {
        pieces.push(Piece::Lit(rest.into()));
    }
    Some(pieces)
}

/// Parameter names of a template, in capture order.
pub(crate) fn template_params(template: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        names.push(rest[open + 1..open + close].to_string());
        rest = &rest[open + close + 1..];
    }
    names
}

pub(crate) fn segments(path: &str) -> impl Iterator<Item = &str> {
    let p = path.strip_prefix('/').unwrap_or(path);
    let p = p.strip_suffix('/').unwrap_or(p);
    p.split('/').filter(|_| !p.is_empty())
}

impl Router {
    /// Adds a template; returns its leaf index (templates of the same shape share a leaf).
    pub fn insert(&mut self, template: &str) -> usize {
        if self.nodes.is_empty() {
            self.nodes.push(TrieNode::default());
        }
        let mut at = 0usize;
        for seg in segments(template) {
            let next = match parse_segment(seg) {
                None => self.nodes[at].literal.get(seg).copied(),
                Some(ref p) if *p == [Piece::Param] => self.nodes[at].param,
                Some(ref p) => self.nodes[at]
                    .patterns
                    .iter()
                    .find(|(q, _)| q == p)
                    .map(|(_, n)| *n),
            };
            at = match next {
                Some(n) => n as usize,
                None => {
                    let id = self.nodes.len() as u32;
                    self.nodes.push(TrieNode::default());
                    match parse_segment(seg) {
                        None => {
                            self.nodes[at].literal.insert(seg.into(), id);
                        }
                        Some(p) if p == [Piece::Param] => self.nodes[at].param = Some(id),
                        Some(p) => {
                            let patterns = &mut self.nodes[at].patterns;
                            patterns.push((p, id));
                            // More literal characters first: the most specific pattern wins.
                            patterns.sort_by_key(|(p, _)| std::cmp::Reverse(lit_len(p)));
                        }
                    }
                    id as usize
                }
            };
        }
        match self.nodes[at].leaf {
            Some(l) => l as usize,
            None => {
                self.leaves.push(Leaf {
                    template: template.to_string(),
                    ops: Vec::new(),
                });
                let l = self.leaves.len() - 1;
                self.nodes[at].leaf = Some(l as u32);
                l
            }
        }
    }

    /// Finds the leaf for `path` (already stripped of the server prefix) and the captures.
    pub fn lookup<'p>(&self, path: &'p str, caps: &mut Caps<'p>) -> Option<usize> {
        if self.nodes.is_empty() {
            return None;
        }
        // The segments of `segments(path)`, taken one at a time while walking.
        let p = path.strip_prefix('/').unwrap_or(path);
        let p = p.strip_suffix('/').unwrap_or(p);
        let rest = (!p.is_empty()).then_some(p);
        self.walk(0, rest, 0, caps).map(|l| l as usize)
    }

    /// `rest`: the segments not consumed yet (`None`: none left); `depth`: how many were.
    fn walk<'p>(
        &self,
        node: usize,
        rest: Option<&'p str>,
        depth: usize,
        caps: &mut Caps<'p>,
    ) -> Option<u32> {
        let n = &self.nodes[node];
        let Some(rest) = rest else {
            return n.leaf;
        };
        if depth == MAX_SEGMENTS {
            // Deeper paths match nothing (a leaf needs every segment consumed).
            return None;
        }
        let (seg, rest) = match memchr::memchr(b'/', rest.as_bytes()) {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        let depth = depth + 1;
        if let Some(&child) = n.literal.get(seg)
            && let Some(l) = self.walk(child as usize, rest, depth, caps)
        {
            return Some(l);
        }
        for (pattern, child) in &n.patterns {
            let mark = caps.len();
            if match_pieces(pattern, seg, caps)
                && let Some(l) = self.walk(*child as usize, rest, depth, caps)
            {
                return Some(l);
            }
            caps.truncate(mark);
        }
        if let Some(child) = n.param
            && !seg.is_empty()
        {
            caps.push(seg);
            if let Some(l) = self.walk(child as usize, rest, depth, caps) {
                return Some(l);
            }
            caps.pop();
        }
        None
    }
}

fn lit_len(p: &[Piece]) -> usize {
    p.iter()
        .map(|x| if let Piece::Lit(l) = x { l.len() } else { 0 })
        .sum()
}

/// Matches a segment against pieces; each parameter takes at least one byte (shortest first).
fn match_pieces<'p>(pieces: &[Piece], seg: &'p str, caps: &mut Caps<'p>) -> bool {
    match pieces.split_first() {
        None => seg.is_empty(),
        Some((Piece::Lit(l), rest)) => seg
            .strip_prefix(&**l)
            .is_some_and(|s| match_pieces(rest, s, caps)),
        Some((Piece::Param, [])) => {
            caps.push(seg);
            !seg.is_empty()
        }
        Some((Piece::Param, rest)) => {
            let Some(Piece::Lit(next)) = rest.first() else {
                return false;
            };
            let mark = caps.len();
            for (i, _) in seg.match_indices(&**next).filter(|(i, _)| *i > 0) {
                caps.push(&seg[..i]);
                if match_pieces(rest, &seg[i..], caps) {
                    return true;
                }
                caps.truncate(mark);
            }
            false
        }
    }
}

/// Guesses a template for an undocumented path: numeric, UUID, long hex or long mixed
/// alphanumeric segments become `{id}`.
pub(crate) fn guess_template(path: &str) -> String {
    let mut out = String::new();
    for seg in segments(path) {
        out.push('/');
        let digits = seg.bytes().filter(u8::is_ascii_digit).count();
        let hex = seg.len() >= 16 && seg.bytes().all(|c| c.is_ascii_hexdigit() || c == b'-');
        let mixed = seg.len() >= 20 && digits > 0;
        if (!seg.is_empty() && digits == seg.len()) || hex || mixed {
            out.push_str("{id}");
        } else {
            out.push_str(seg);
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_beats_pattern_beats_param() {
        let mut r = Router::default();
        let a = r.insert("/repos/{owner}/{repo}");
        let b = r.insert("/repos/mine/{repo}");
        let c = r.insert("/files/{name}-{version}.zip");
        let d = r.insert("/files/{file}");
        let e = r.insert("/compare/{base}...{head}");
        let mut caps = Caps::new();
        assert_eq!(r.lookup("/repos/mine/x", &mut caps), Some(b));
        caps.clear();
        assert_eq!(r.lookup("/repos/other/x", &mut caps), Some(a));
        assert_eq!(&*caps, ["other", "x"]);
        caps.clear();
        assert_eq!(r.lookup("/files/tool-1.2.zip", &mut caps), Some(c));
        assert_eq!(&*caps, ["tool", "1.2"]);
        caps.clear();
        assert_eq!(r.lookup("/files/readme", &mut caps), Some(d));
        caps.clear();
        assert_eq!(r.lookup("/compare/main...dev", &mut caps), Some(e));
        assert_eq!(&*caps, ["main", "dev"]);
        caps.clear();
        assert_eq!(r.lookup("/repos/x", &mut caps), None);
        assert_eq!(r.lookup("/repos//x", &mut caps), None);
    }

    #[test]
    fn guesses_ids() {
        assert_eq!(
            guess_template("/users/42/orders/123e4567-e89b-12d3-a456-426614174000"),
            "/users/{id}/orders/{id}"
        );
        assert_eq!(guess_template("/"), "/");
    }
}
