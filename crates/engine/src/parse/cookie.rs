//! The `Cookie` request header: `name=value; name2=value2`. Malformed pairs (no name, no `=`, an
//! RFC 2109 `$` attribute) are reported, not dropped.

/// One cookie pair, or a malformed piece (`None` name) for VIOL_COOKIE_MALFORMED.
pub fn pairs(header: &[u8]) -> impl Iterator<Item = Result<(&[u8], &[u8]), &[u8]>> {
    header
        .split(|b| *b == b';')
        .map(trim)
        .filter(|p| !p.is_empty())
        .map(|p| match p.iter().position(|b| *b == b'=') {
            // `$Version`, `$Path`, `$Domain`: the attributes of RFC 2109 cookies, which no
            // client sends any more; servers that still honour them read the header in a way
            // a modern parser does not (quoted values spanning `;`).
            Some(0) => Err(p),
            Some(_) if p[0] == b'$' => Err(p),
            Some(i) => Ok((trim(&p[..i]), trim(&p[i + 1..]))),
            None => Err(p),
        })
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &s[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_flags_malformed() {
        let v: Vec<_> = pairs(b"a=1; b = 2 ;=x; junk").collect();
        assert_eq!(v[0], Ok((&b"a"[..], &b"1"[..])));
        assert_eq!(v[1], Ok((&b"b"[..], &b"2"[..])));
        assert!(v[2].is_err() && v[3].is_err());
        let v: Vec<_> = pairs(b"$Version=1; session=\"deadbeef; PHPSESSID=secret\"").collect();
        assert!(v[0].is_err() && v[1].is_ok());
    }
}
