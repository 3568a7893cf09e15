//! Object addressing: `~Partition~name`, `~Partition~subPath~name`, a bare `name` (partition
//! Common), a `/Partition/name` full path in a body, and the names we accept at all.

use super::error::{MgmtError, MgmtResult};

/// The longest name we accept (real systems allow 255 characters per object name).
pub const MAX_NAME: usize = 255;

/// A parsed object address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjName {
    pub partition: String,
    pub sub_path: Option<String>,
    pub name: String,
}

impl ObjName {
    pub fn common(name: &str) -> Self {
        ObjName {
            partition: "Common".into(),
            sub_path: None,
            name: name.into(),
        }
    }

    /// `/Common/name` or `/Common/app/name`.
    pub fn full_path(&self) -> String {
        match &self.sub_path {
            Some(s) => format!("/{}/{}/{}", self.partition, s, self.name),
            None => format!("/{}/{}", self.partition, self.name),
        }
    }

    /// The URI segment `~Common~name` (`~Common~app~name`).
    pub fn tilde(&self) -> String {
        self.full_path().replace('/', "~")
    }

    /// Parses a URI segment (already percent-decoded): `~P~name`, `~P~sub~name` or `name`.
    pub fn from_segment(seg: &str) -> MgmtResult<Self> {
        if let Some(rest) = seg.strip_prefix('~') {
            Self::from_parts(rest.split('~').collect(), seg)
        } else {
            check_name(seg)?;
            Ok(Self::common(seg))
        }
    }

    /// Parses a `name` given in a body: a bare name or a full path `/P/name`, with an optional
    /// explicit `partition` (and `subPath`).
    pub fn from_body(
        name: &str,
        partition: Option<&str>,
        sub_path: Option<&str>,
    ) -> MgmtResult<Self> {
        if let Some(rest) = name.strip_prefix('/') {
            return Self::from_parts(rest.split('/').collect(), name);
        }
        check_name(name)?;
        let partition = partition.unwrap_or("Common");
        check_name(partition)?;
        let sub_path = match sub_path {
            Some(s) if !s.is_empty() => {
                check_name(s)?;
                Some(s.to_string())
            }
            _ => None,
        };
        Ok(ObjName {
            partition: partition.to_string(),
            sub_path,
            name: name.to_string(),
        })
    }

    fn from_parts(parts: Vec<&str>, whole: &str) -> MgmtResult<Self> {
        let bad = || MgmtError::bad_request(format!("Invalid object name or path: {whole}"));
        let (partition, sub_path, name) = match parts.as_slice() {
            [p, n] => (*p, None, *n),
            [p, s, n] => (*p, Some(*s), *n),
            _ => return Err(bad()),
        };
        check_name(partition).map_err(|_| bad())?;
        check_name(name).map_err(|_| bad())?;
        if let Some(s) = sub_path {
            check_name(s).map_err(|_| bad())?;
        }
        Ok(ObjName {
            partition: partition.to_string(),
            sub_path: sub_path.map(str::to_string),
            name: name.to_string(),
        })
    }
}

/// A name we can store and address: 1..=255 printable characters, no `/`, `~`, `..`, `\`,
/// whitespace, quotes, braces or control characters (they would break addressing or tmsh text).
pub fn check_name(name: &str) -> MgmtResult<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name != "."
        && !name.contains("..")
        && name.chars().all(|c| {
            !c.is_control()
                && !c.is_whitespace()
                && !matches!(
                    c,
                    '/' | '~' | '\\' | '"' | '\'' | '{' | '}' | '?' | '#' | '*'
                )
        });
    if ok {
        Ok(())
    } else {
        Err(MgmtError::bad_request(format!(
            "01070022:3: The requested object name ({}) is invalid.",
            name.chars().take(MAX_NAME).collect::<String>()
        )))
    }
}

/// Normalises a reference to another object given as a name or full path (`p` → `/Common/p`).
pub fn full_path_of(reference: &str) -> MgmtResult<String> {
    Ok(ObjName::from_body(reference, None, None)?.full_path())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tilde_and_bare_names_address_the_same_object() {
        let a = ObjName::from_segment("~Common~p1").unwrap();
        let b = ObjName::from_segment("p1").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.full_path(), "/Common/p1");
        assert_eq!(a.tilde(), "~Common~p1");
        let c = ObjName::from_segment("~T1~app~p").unwrap();
        assert_eq!(c.full_path(), "/T1/app/p");
        assert_eq!(
            ObjName::from_body("/DMZ/x", None, None).unwrap().tilde(),
            "~DMZ~x"
        );
        assert_eq!(
            ObjName::from_body("x", Some("DMZ"), None)
                .unwrap()
                .full_path(),
            "/DMZ/x"
        );
    }

    #[test]
    fn hostile_names_are_refused() {
        for n in ["", "..", "a/../b", "a b", "x\u{0}", "~", "~A~b~c~d", "a\"b"] {
            assert!(ObjName::from_segment(n).is_err(), "{n:?}");
        }
        assert!(check_name(&"a".repeat(256)).is_err());
        assert!(check_name("10.0.0.1:80").is_ok());
        assert!(check_name("caf\u{e9}").is_ok());
    }
}
