//! A URL with its password masked, for logs and metric labels (`redis://u:***@host`,
//! `postgres://u:***@db/events`).

/// `url` with the password of its userinfo replaced by `***`.
pub fn redact_url(url: &str) -> String {
    match (url.split_once("://"), url.rfind('@')) {
        (Some((scheme, rest)), Some(at)) if at > scheme.len() => {
            let userinfo = &rest[..at - scheme.len() - 3];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{scheme}://{user}:***@{}", &url[at + 1..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(redact_url("redis://h:6379/0"), "redis://h:6379/0");
        assert_eq!(
            redact_url("rediss://u:secret@h:6380/1"),
            "rediss://u:***@h:6380/1"
        );
        assert_eq!(redact_url("redis://:p@w@h"), "redis://:***@h");
        assert_eq!(redact_url("postgres://cm@db/e"), "postgres://cm@db/e");
        assert_eq!(
            redact_url("postgres://cm:pw@db:5432/events?sslmode=prefer"),
            "postgres://cm:***@db:5432/events?sslmode=prefer"
        );
    }
}
