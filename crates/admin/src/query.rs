//! Collection query options: `$select`, `$filter` (an OData subset: `eq`, `ne`, `and`, `or`,
//! `not`, parentheses, `contains(f,'x')`, `startswith(f,'x')`, `*` wildcards in `eq` values,
//! `a/b` paths into nested objects), `$top`, `$skip`, `expandSubcollections`, `options`.
//! The query string is form-decoded, so `+` and `%20` both mean a space.

use serde_json::Value;

use super::error::{MgmtError, MgmtResult};

/// The parsed query of one request.
#[derive(Debug, Default)]
pub struct Query {
    pub select: Option<Vec<String>>,
    pub filter: Option<Filter>,
    pub top: Option<usize>,
    pub skip: usize,
    pub expand: bool,
    pub options: Option<String>,
    /// Parameters the generic engine does not use, for handlers (AS3 `async`, `show`).
    pub other: Vec<(String, String)>,
}

impl Query {
    pub fn parse(raw: Option<&str>) -> MgmtResult<Query> {
        let mut q = Query::default();
        let Some(raw) = raw else { return Ok(q) };
        for (k, v) in form_urlencoded::parse(raw.as_bytes()) {
            match k.as_ref() {
                "$select" => {
                    q.select = Some(
                        v.split(',')
                            .map(|s| s.trim().to_string())
                            .filter(|s| !s.is_empty())
                            .collect(),
                    )
                }
                "$filter" => q.filter = Some(Filter::parse(&v)?),
                "$top" => q.top = Some(number("$top", &v)?),
                "$skip" => q.skip = number("$skip", &v)?,
                "expandSubcollections" => q.expand = v.eq_ignore_ascii_case("true"),
                "options" => q.options = Some(v.into_owned()),
                _ => q.other.push((k.into_owned(), v.into_owned())),
            }
        }
        Ok(q)
    }

    /// Applies `$filter`, `$skip`, `$top` and `$select` to collection items.
    pub fn apply(&self, items: Vec<Value>) -> Vec<Value> {
        let it = items
            .into_iter()
            .filter(|v| self.filter.as_ref().is_none_or(|f| f.matches(v)))
            .skip(self.skip)
            .take(self.top.unwrap_or(usize::MAX));
        it.map(|v| self.project(v)).collect()
    }

    /// Applies `$select` to one object.
    pub fn project(&self, v: Value) -> Value {
        match (&self.select, v) {
            (Some(keys), Value::Object(m)) => {
                Value::Object(m.into_iter().filter(|(k, _)| keys.contains(k)).collect())
            }
            (_, v) => v,
        }
    }
}

fn number(what: &str, v: &str) -> MgmtResult<usize> {
    v.trim().parse().map_err(|_| {
        MgmtError::bad_request(format!(
            "Query parameter {what} must be a non-negative integer, got '{v}'."
        ))
    })
}

/// A parsed `$filter` expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    Or(Box<Filter>, Box<Filter>),
    And(Box<Filter>, Box<Filter>),
    Not(Box<Filter>),
    Eq(String, Lit),
    Ne(String, Lit),
    Contains(String, String),
    StartsWith(String, String),
}

/// A literal in a filter.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    Str(String),
    Num(f64),
    Bool(bool),
    Null,
}

/// Filters nest at most this deep (a hostile `((((...` cannot exhaust the stack).
const MAX_DEPTH: usize = 32;

impl Filter {
    pub fn parse(s: &str) -> MgmtResult<Filter> {
        let toks = tokenize(s)?;
        let mut p = Parser {
            toks,
            pos: 0,
            depth: 0,
        };
        let f = p.or()?;
        if p.pos != p.toks.len() {
            return Err(bad(s));
        }
        Ok(f)
    }

    pub fn matches(&self, v: &Value) -> bool {
        match self {
            Filter::Or(a, b) => a.matches(v) || b.matches(v),
            Filter::And(a, b) => a.matches(v) && b.matches(v),
            Filter::Not(a) => !a.matches(v),
            Filter::Eq(f, l) => lookup(v, f).is_some_and(|x| lit_eq(x, l)),
            Filter::Ne(f, l) => !lookup(v, f).is_some_and(|x| lit_eq(x, l)),
            Filter::Contains(f, s) => text(lookup(v, f)).is_some_and(|t| t.contains(s.as_str())),
            Filter::StartsWith(f, s) => {
                text(lookup(v, f)).is_some_and(|t| t.starts_with(s.as_str()))
            }
        }
    }
}

fn bad(s: &str) -> MgmtError {
    MgmtError::bad_request(format!("Invalid $filter expression: {s}"))
}

fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('/').try_fold(v, |cur, k| cur.get(k))
}

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

fn lit_eq(v: &Value, l: &Lit) -> bool {
    match (v, l) {
        (Value::String(s), Lit::Str(p)) => glob(p, s),
        (Value::Number(n), Lit::Num(x)) => n.as_f64() == Some(*x),
        (Value::Number(n), Lit::Str(p)) => glob(p, &n.to_string()),
        (Value::Bool(b), Lit::Bool(x)) => b == x,
        (Value::Bool(b), Lit::Str(p)) => glob(p, &b.to_string()),
        (Value::Null, Lit::Null) => true,
        _ => false,
    }
}

/// `*` matches any run of characters; everything else is literal.
pub fn glob(pattern: &str, s: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == s;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !s.starts_with(first) || s.len() < first.len() + last.len() || !s.ends_with(last) {
        return false;
    }
    let mut rest = &s[first.len()..s.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Str(String),
    Open,
    Close,
    Comma,
}

fn tokenize(s: &str) -> MgmtResult<Vec<Tok>> {
    let mut out = Vec::new();
    let mut it = s.chars().peekable();
    while let Some(&c) = it.peek() {
        match c {
            c if c.is_whitespace() => {
                it.next();
            }
            '(' | ')' | ',' => {
                it.next();
                out.push(match c {
                    '(' => Tok::Open,
                    ')' => Tok::Close,
                    _ => Tok::Comma,
                });
            }
            '\'' => {
                it.next();
                let mut lit = String::new();
                loop {
                    match it.next() {
                        Some('\'') if it.peek() == Some(&'\'') => {
                            it.next();
                            lit.push('\'');
                        }
                        Some('\'') => break,
                        Some(ch) => lit.push(ch),
                        None => return Err(bad(s)),
                    }
                }
                out.push(Tok::Str(lit));
            }
            _ => {
                let mut w = String::new();
                while let Some(&ch) = it.peek() {
                    if ch.is_whitespace() || matches!(ch, '(' | ')' | ',' | '\'') {
                        break;
                    }
                    w.push(ch);
                    it.next();
                }
                out.push(Tok::Word(w));
            }
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn err(&self) -> MgmtError {
        MgmtError::bad_request(format!(
            "Invalid $filter expression near token {}",
            self.pos + 1
        ))
    }
    fn peek_word(&self, w: &str) -> bool {
        matches!(self.toks.get(self.pos), Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w))
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    fn expect(&mut self, t: Tok) -> MgmtResult<()> {
        if self.next() == Some(t) {
            Ok(())
        } else {
            Err(self.err())
        }
    }
    fn or(&mut self) -> MgmtResult<Filter> {
        let mut l = self.and()?;
        while self.peek_word("or") {
            self.pos += 1;
            l = Filter::Or(Box::new(l), Box::new(self.and()?));
        }
        Ok(l)
    }
    fn and(&mut self) -> MgmtResult<Filter> {
        let mut l = self.unary()?;
        while self.peek_word("and") {
            self.pos += 1;
            l = Filter::And(Box::new(l), Box::new(self.unary()?));
        }
        Ok(l)
    }
    fn unary(&mut self) -> MgmtResult<Filter> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err());
        }
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }
    fn unary_inner(&mut self) -> MgmtResult<Filter> {
        if self.peek_word("not") {
            self.pos += 1;
            return Ok(Filter::Not(Box::new(self.unary()?)));
        }
        match self.next() {
            Some(Tok::Open) => {
                let f = self.or()?;
                self.expect(Tok::Close)?;
                Ok(f)
            }
            Some(Tok::Word(w)) if self.toks.get(self.pos) == Some(&Tok::Open) => {
                self.pos += 1;
                let field = match self.next() {
                    Some(Tok::Word(f)) => f,
                    _ => return Err(self.err()),
                };
                self.expect(Tok::Comma)?;
                let lit = match self.next() {
                    Some(Tok::Str(s)) => s,
                    _ => return Err(self.err()),
                };
                self.expect(Tok::Close)?;
                match w.to_ascii_lowercase().as_str() {
                    "contains" | "substringof" => Ok(Filter::Contains(field, lit)),
                    "startswith" => Ok(Filter::StartsWith(field, lit)),
                    _ => Err(self.err()),
                }
            }
            Some(Tok::Word(field)) => {
                let op = match self.next() {
                    Some(Tok::Word(op)) => op.to_ascii_lowercase(),
                    _ => return Err(self.err()),
                };
                let lit = match self.next() {
                    Some(Tok::Str(s)) => Lit::Str(s),
                    Some(Tok::Word(w)) => match w.as_str() {
                        "true" => Lit::Bool(true),
                        "false" => Lit::Bool(false),
                        "null" => Lit::Null,
                        n => Lit::Num(n.parse().map_err(|_| self.err())?),
                    },
                    _ => return Err(self.err()),
                };
                match op.as_str() {
                    "eq" => Ok(Filter::Eq(field, lit)),
                    "ne" => Ok(Filter::Ne(field, lit)),
                    _ => Err(self.err()),
                }
            }
            _ => Err(self.err()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn filters_select_top_skip() {
        let items = vec![
            json!({"name": "a1", "partition": "Common", "port": 80, "deviceReference": {"link": "https://x/machineid-resolver/abc"}}),
            json!({"name": "b2", "partition": "DMZ", "port": 443}),
            json!({"name": "a3", "partition": "Common", "port": 443}),
        ];
        let q = Query::parse(Some(
            "$filter=contains(name,'a')+and+partition+eq+'Common'&$select=name",
        ))
        .unwrap();
        assert_eq!(
            q.apply(items.clone()),
            vec![json!({"name": "a1"}), json!({"name": "a3"})]
        );
        let q = Query::parse(Some(
            "$filter=port%20eq%20443%20or%20name%20eq%20'a*'&$skip=1&$top=1",
        ))
        .unwrap();
        assert_eq!(q.apply(items.clone())[0]["name"], "b2");
        let q = Query::parse(Some(
            "$filter=deviceReference/link eq '*abc*' and not (partition ne 'Common')",
        ))
        .unwrap();
        assert_eq!(q.apply(items.clone()).len(), 1);
        let q = Query::parse(Some("$filter=startswith(name,'b')")).unwrap();
        assert_eq!(q.apply(items).len(), 1);
    }

    #[test]
    fn bad_filters_are_400_not_panics() {
        for f in [
            "name eq",
            "(name eq 'a'",
            "name like 'a'",
            "contains(name)",
            "'x",
            &"(".repeat(500),
        ] {
            let e = Filter::parse(f).unwrap_err();
            assert_eq!(e.status, 400, "{f}");
        }
        assert!(Query::parse(Some("$top=-1")).is_err());
    }

    #[test]
    fn glob_wildcards() {
        assert!(glob("*abc*", "xxabcyy"));
        assert!(glob("a*c", "abbc"));
        assert!(!glob("a*c", "ab"));
        assert!(glob("abc", "abc"));
        assert!(!glob("*a*a*", "a"));
    }
}
