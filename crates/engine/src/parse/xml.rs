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

/// Walks `doc`; `visit` gets text nodes and attribute values. Errors name the byte offset.
pub fn walk(
    doc: &[u8],
    max_depth: usize,
    mut visit: impl FnMut(&[u8]),
) -> Result<XmlFacts, String> {
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
                return Err(format!("text outside the root element at byte {i}"));
            }
            visit(text);
            i = end;
            continue;
        }
        let rest = &doc[i..];
        if rest.starts_with(b"<!--") {
            i += find(rest, b"-->").ok_or(format!("unterminated comment at byte {i}"))? + 3;
        } else if rest.starts_with(b"<![CDATA[") {
            let end = find(rest, b"]]>").ok_or(format!("unterminated CDATA at byte {i}"))?;
            facts.has_cdata = true;
            visit(&rest[9..end]);
            i += end + 3;
        } else if rest.starts_with(b"<?") {
            facts.has_pi = !rest.starts_with(b"<?xml ") || facts.elements > 0;
            i += find(rest, b"?>")
                .ok_or(format!("unterminated processing instruction at byte {i}"))?
                + 2;
        } else if rest.starts_with(b"<!DOCTYPE") || rest.starts_with(b"<!doctype") {
            facts.has_doctype = true;
            let end = doctype_end(rest).ok_or(format!("unterminated DOCTYPE at byte {i}"))?;
            let decl = &rest[..end];
            facts.has_external_ref |=
                find(decl, b"SYSTEM").is_some() || find(decl, b"PUBLIC").is_some();
            visit(decl);
            i += end + 1;
        } else if rest.starts_with(b"</") {
            let end = rest
                .iter()
                .position(|b| *b == b'>')
                .ok_or(format!("unterminated end tag at byte {i}"))?;
            let name = rest[2..end].trim_ascii();
            match stack.pop() {
                Some(open) if open == name => {}
                Some(open) => {
                    return Err(format!(
                        "end tag </{}> does not match <{}> at byte {i}",
                        String::from_utf8_lossy(name),
                        String::from_utf8_lossy(open)
                    ));
                }
                None => return Err(format!("unexpected end tag at byte {i}")),
            }
            root_closed = stack.is_empty();
            i += end + 1;
        } else {
            if root_closed {
                return Err(format!("second root element at byte {i}"));
            }
            let (name, self_closing, len) =
                start_tag(rest, &mut visit).map_err(|e| format!("{e} at byte {i}"))?;
            facts.elements += 1;
            if !self_closing {
                stack.push(name);
                facts.depth = facts.depth.max(stack.len());
                if stack.len() > max_depth {
                    return Err(format!("nesting deeper than {max_depth} at byte {i}"));
                }
            } else if stack.is_empty() {
                root_closed = true;
            }
            i += len;
        }
    }
    if let Some(open) = stack.last() {
        return Err(format!(
            "element <{}> is not closed",
            String::from_utf8_lossy(open)
        ));
    }
    if facts.elements == 0 {
        return Err("no root element".into());
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
) -> Result<(&'a [u8], bool, usize), String> {
    let mut i = 1;
    let start = i;
    while i < s.len() && is_name(s[i]) {
        i += 1;
    }
    if i == start || s[start].is_ascii_digit() || s[start] == b'-' {
        return Err("invalid element name".into());
    }
    let name = &s[start..i];
    loop {
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        match s.get(i) {
            None => return Err("unterminated start tag".into()),
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
                    return Err("attribute without a value".into());
                }
                i += 1;
                while i < s.len() && s[i].is_ascii_whitespace() {
                    i += 1;
                }
                let q = *s.get(i).ok_or("unterminated start tag")?;
                if q != b'"' && q != b'\'' {
                    return Err("unquoted attribute value".into());
                }
                let end = s[i + 1..]
                    .iter()
                    .position(|b| *b == q)
                    .ok_or("unterminated attribute value")?;
                let value = &s[i + 1..i + 1 + end];
                if value.contains(&b'<') {
                    return Err("'<' in an attribute value".into());
                }
                visit(value);
                i += end + 2;
            }
            Some(_) => return Err("invalid character in start tag".into()),
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
        assert!(walk(b"<a x=1/>", 10, |_| {}).is_err());
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
