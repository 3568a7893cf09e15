//! Domain names as the zone tool handles them: lower-case, fully qualified (trailing dot), checked
//! label by label (RFC 1035 lengths; letters, digits, `-`, `_`, and `*` as a whole leftmost label),
//! plus the reverse (`in-addr.arpa.` / `ip6.arpa.`) names of addresses.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why a name was rejected; the text is shown to API users.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid domain name \"{name}\": {reason}")]
pub struct NameError {
    pub name: String,
    pub reason: &'static str,
}

/// Normalises `raw` into a fully qualified lower-case name.
///
/// `@` is the origin. A name with a trailing dot is absolute. A name without one is taken as
/// absolute when it already ends with the origin (`www.example.com` in `example.com.`, the way
/// people type names into the zone tool), and as relative to the origin otherwise (`www`).
pub fn normalize(raw: &str, origin: Option<&str>) -> Result<String, NameError> {
    let err = |reason| NameError {
        name: raw.to_string(),
        reason,
    };
    let s = raw.trim();
    if s.is_empty() {
        return Err(err("empty name"));
    }
    let lower = s.to_ascii_lowercase();
    let full = if lower == "@" {
        origin
            .ok_or_else(|| err("`@` needs a zone origin"))?
            .to_string()
    } else if lower.ends_with('.') {
        lower
    } else {
        match origin {
            Some(".") => format!("{lower}."),
            Some(o) if lower == o.trim_end_matches('.') => format!("{lower}."),
            Some(o) if format!("{lower}.").ends_with(&format!(".{o}")) => format!("{lower}."),
            Some(o) => format!("{lower}.{o}"),
            None => format!("{lower}."),
        }
    };
    check(&full).map_err(err)?;
    Ok(full)
}

/// Checks a fully qualified, lower-cased name.
fn check(full: &str) -> Result<(), &'static str> {
    if full == "." {
        return Ok(());
    }
    if full.len() > 254 {
        return Err("longer than 253 characters");
    }
    let body = full.strip_suffix('.').ok_or("not fully qualified")?;
    for (i, label) in body.split('.').enumerate() {
        if label.is_empty() {
            return Err("empty label");
        }
        if label.len() > 63 {
            return Err("label longer than 63 characters");
        }
        if label == "*" {
            if i != 0 {
                return Err("`*` is only allowed as the leftmost label");
            }
            continue;
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err("labels may hold only letters, digits, `-` and `_`");
        }
    }
    Ok(())
}

/// Whether `name` is `zone` or below it (both fully qualified, lower case).
pub fn in_zone(name: &str, zone: &str) -> bool {
    zone == "." || name == zone || name.ends_with(&format!(".{zone}"))
}

/// The reverse-lookup name of an address: `4.3.2.1.in-addr.arpa.` or the nibble `ip6.arpa.` form.
pub fn reverse_name(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => reverse_v4(v4),
        IpAddr::V6(v6) => reverse_v6(v6),
    }
}

fn reverse_v4(ip: Ipv4Addr) -> String {
    let [a, b, c, d] = ip.octets();
    format!("{d}.{c}.{b}.{a}.in-addr.arpa.")
}

fn reverse_v6(ip: Ipv6Addr) -> String {
    let mut out = String::with_capacity(73);
    for byte in ip.octets().iter().rev() {
        out.push_str(&format!("{:x}.{:x}.", byte & 0x0f, byte >> 4));
    }
    out.push_str("ip6.arpa.");
    out
}

/// A view name that is not 1-64 characters of `[A-Za-z0-9_.-]`; the text is shown to API users.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid view name \"{view}\": use 1-64 letters, digits, `-`, `_` or `.`")]
pub struct ViewError {
    pub view: String,
}

/// Checks a view name (`external`, `internal`, ...): 1-64 characters of `[A-Za-z0-9_.-]`.
pub fn check_view(view: &str) -> Result<(), ViewError> {
    let ok = !view.is_empty()
        && view.len() <= 64
        && view
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(ViewError {
            view: view.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalised_and_checked() {
        let o = Some("example.com.");
        assert_eq!(
            normalize("WWW.Example.com.", o).unwrap(),
            "www.example.com."
        );
        assert_eq!(normalize("www", o).unwrap(), "www.example.com.");
        assert_eq!(normalize("www.example.com", o).unwrap(), "www.example.com.");
        assert_eq!(normalize("example.com", o).unwrap(), "example.com.");
        assert_eq!(normalize("@", o).unwrap(), "example.com.");
        assert_eq!(normalize("*.example.com.", o).unwrap(), "*.example.com.");
        assert!(normalize("a..b.", o).is_err());
        assert!(normalize("bad name!.", o).is_err());
        assert!(normalize("a.*.com.", o).is_err());
        assert!(normalize(&format!("{}.com.", "a".repeat(64)), o).is_err());
        assert!(normalize("", o).is_err());
    }

    #[test]
    fn reverse_names() {
        assert_eq!(
            reverse_name("10.0.0.1".parse().unwrap()),
            "1.0.0.10.in-addr.arpa."
        );
        let v6 = reverse_name("2001:db8::1".parse().unwrap());
        assert!(v6.starts_with("1.0.0.0.") && v6.ends_with(".8.b.d.0.1.0.0.2.ip6.arpa."));
        assert!(in_zone("1.0.0.10.in-addr.arpa.", "10.in-addr.arpa."));
        assert!(!in_zone("xexample.com.", "example.com."));
    }
}
