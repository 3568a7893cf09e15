//! A basic XML well-formedness walk: balanced tags, quoted attributes, comments, CDATA, processing
//! instructions and DOCTYPE, visiting text and attribute values. Depth and element counts are
//! bounded by the caller's limits; no entity is ever expanded.

/// Facts about a well-formed document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct XmlFacts {
    pub depth: usize,
    pub elements: usize,
    pub has_doctype: bool,
    pub has_external_ref: bool,
    pub has_cdata: bool,
    pub has_pi: bool,
}

/// A malformed XML document; the text (the violation's detail) names the byte offset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XmlError {
    #[error("{problem} at byte {at}")]
    At { problem: XmlProblem, at: usize },
    #[error("element <{name}> is not closed")]
    NotClosed { name: String },
    #[error("no root element")]
    NoRoot,
}

/// What is malformed at a byte offset of an XML document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XmlProblem {
    #[error("text outside the root element")]
    TextOutsideRoot,
    #[error("unterminated comment")]
    UnterminatedComment,
    #[error("unterminated CDATA")]
    UnterminatedCdata,
    #[error("unterminated processing instruction")]
    UnterminatedPi,
    #[error("unterminated DOCTYPE")]
    UnterminatedDoctype,
    #[error("unterminated end tag")]
    UnterminatedEndTag,
    #[error("end tag </{end}> does not match <{open}>")]
    Mismatch { end: String, open: String },
    #[error("unexpected end tag")]
    UnexpectedEndTag,
    #[error("second root element")]
    SecondRoot,
    #[error("nesting deeper than {max}")]
    TooDeep { max: usize },
    #[error("invalid element name")]
    InvalidName,
    #[error("unterminated start tag")]
    UnterminatedStartTag,
    #[error("attribute without a value")]
    AttributeWithoutValue,
    #[error("unquoted attribute value")]
    UnquotedValue,
    #[error("unterminated attribute value")]
    UnterminatedValue,
    #[error("'<' in an attribute value")]
    LtInValue,
    #[error("invalid character in start tag")]
    InvalidStartTagChar,
}

/// Walks `doc`; `visit` gets text nodes and attribute values. Errors name the byte offset.
pub fn walk(
    doc: &[u8],
    max_depth: usize,
    mut visit: impl FnMut(&[u8]),
) -> Result<XmlFacts, XmlError> {
    let at = |problem, at| XmlError::At { problem, at };
    let mut facts = XmlFacts::default();
    let mut stack: Vec<&[u8]> = Vec::new();
    let mut i = 0;
    let mut root_closed = false;
    while i < doc.len() {
        if doc[i] != b'<' {
            let end = doc[i..]
                .iter()
                .position(|b| *b == b'<')
                .map_or(doc.len(), |p| i + p);
            let text = &doc[i..end];
            if stack.is_empty() && !text.iter().all(u8::is_ascii_whitespace) {
                return Err(at(XmlProblem::TextOutsideRoot, i));
            }
            visit(text);
            i = end;
            continue;
        }
        let rest = &doc[i..];
        if rest.starts_with(b"<!--") {
            i += find(rest, b"-->").ok_or(at(XmlProblem::UnterminatedComment, i))? + 3;
        } else if rest.starts_with(b"<![CDATA[") {
            let end = find(rest, b"]]>").ok_or(at(XmlProblem::UnterminatedCdata, i))?;
            facts.has_cdata = true;
            visit(&rest[9..end]);
            i += end + 3;
        } else if rest.starts_with(b"<?") {
            facts.has_pi = !rest.starts_with(b"<?xml ") || facts.elements > 0;
            i += find(rest, b"?>").ok_or(at(XmlProblem::UnterminatedPi, i))? + 2;
        } else if rest.starts_with(b"<!DOCTYPE") || rest.starts_with(b"<!doctype") {
            facts.has_doctype = true;
            let end = doctype_end(rest).ok_or(at(XmlProblem::UnterminatedDoctype, i))?;
            let decl = &rest[..end];
            facts.has_external_ref |=
                find(decl, b"SYSTEM").is_some() || find(decl, b"PUBLIC").is_some();
            visit(decl);
            i += end + 1;
        } else if rest.starts_with(b"</") {
            let end = rest
                .iter()
                .position(|b| *b == b'>')
                .ok_or(at(XmlProblem::UnterminatedEndTag, i))?;
            let name = rest[2..end].trim_ascii();
            match stack.pop() {
                Some(open) if open == name => {}
                Some(open) => {
                    let problem = XmlProblem::Mismatch {
                        end: String::from_utf8_lossy(name).into_owned(),
                        open: String::from_utf8_lossy(open).into_owned(),
                    };
                    return Err(at(problem, i));
                }
                None => return Err(at(XmlProblem::UnexpectedEndTag, i)),
            }
            root_closed = stack.is_empty();
            i += end + 1;
        } else {
            if root_closed {
                return Err(at(XmlProblem::SecondRoot, i));
            }
            let (name, self_closing, len) = start_tag(rest, &mut visit).map_err(|p| at(p, i))?;
            facts.elements += 1;
            if !self_closing {
                stack.push(name);
                facts.depth = facts.depth.max(stack.len());
                if stack.len() > max_depth {
                    return Err(at(XmlProblem::TooDeep { max: max_depth }, i));
                }
            } else if stack.is_empty() {
                root_closed = true;
            }
            i += len;
        }
    }
    if let Some(open) = stack.last() {
        return Err(XmlError::NotClosed {
            name: String::from_utf8_lossy(open).into_owned(),
        });
    }
    if facts.elements == 0 {
        return Err(XmlError::NoRoot);
    }
    Ok(facts)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn doctype_end(s: &[u8]) -> Option<usize> {
    let mut depth = 0i32;
    for (i, b) in s.iter().enumerate() {
        match b {
            b'[' => depth += 1,
            b']' => depth -= 1,
            b'>' if depth <= 0 => return Some(i),
            _ => {}
        }
    }
    None
}

fn is_name(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':') || b >= 0x80
}

/// Parses `<name attr="v" ...>` at the start of `s`: (name, self-closing, length).
fn start_tag<'a>(
    s: &'a [u8],
    visit: &mut impl FnMut(&[u8]),
) -> Result<(&'a [u8], bool, usize), XmlProblem> {
    let mut i = 1;
    let start = i;
    while i < s.len() && is_name(s[i]) {
        i += 1;
    }
    if i == start || s[start].is_ascii_digit() || s[start] == b'-' {
        return Err(XmlProblem::InvalidName);
    }
    let name = &s[start..i];
    loop {
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        match s.get(i) {
            None => return Err(XmlProblem::UnterminatedStartTag),
            Some(b'>') => return Ok((name, false, i + 1)),
            Some(b'/') if s.get(i + 1) == Some(&b'>') => return Ok((name, true, i + 2)),
            Some(c) if is_name(*c) => {
                while i < s.len() && is_name(s[i]) {
                    i += 1;
                }
                while i < s.len() && s[i].is_ascii_whitespace() {
                    i += 1;
                }
                if s.get(i) != Some(&b'=') {
                    return Err(XmlProblem::AttributeWithoutValue);
                }
                i += 1;
                while i < s.len() && s[i].is_ascii_whitespace() {
                    i += 1;
                }
                let q = *s.get(i).ok_or(XmlProblem::UnterminatedStartTag)?;
                if q != b'"' && q != b'\'' {
                    return Err(XmlProblem::UnquotedValue);
                }
                let end = s[i + 1..]
                    .iter()
                    .position(|b| *b == q)
                    .ok_or(XmlProblem::UnterminatedValue)?;
                let value = &s[i + 1..i + 1 + end];
                if value.contains(&b'<') {
                    return Err(XmlProblem::LtInValue);
                }
                visit(value);
                i += end + 2;
            }
            Some(_) => return Err(XmlProblem::InvalidStartTagChar),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_and_not() {
        let mut texts = Vec::new();
        let f = walk(
            b"<?xml version=\"1.0\"?><a x='1'><b>hi</b><c/></a>",
            10,
            |t| texts.push(t.to_vec()),
        )
        .unwrap();
        assert_eq!(f.elements, 3);
        assert!(texts.contains(&b"hi".to_vec()) && texts.contains(&b"1".to_vec()));
        assert!(walk(b"<a><b></a></b>", 10, |_| {}).is_err());
        assert!(walk(b"<a>", 10, |_| {}).is_err());
        assert_eq!(
            walk(b"<a x=1/>", 10, |_| {}).map_err(|e| e.to_string()),
            Err("unquoted attribute value at byte 0".to_string())
        );
        assert!(walk(b"<a/><b/>", 10, |_| {}).is_err());
        let f = walk(
            b"<!DOCTYPE a [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><a>&x;</a>",
            10,
            |_| {},
        )
        .unwrap();
        assert!(f.has_doctype && f.has_external_ref);
        assert!(walk(b"<a><a><a></a></a></a>", 2, |_| {}).is_err());
    }
}
