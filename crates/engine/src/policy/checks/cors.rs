//! Cross-origin requests (`urls[].html5CrossOriginRequestsEnforcement`, VIOL_CROSS_ORIGIN_REQUEST).
//!
//! With `enforcementMode: enforce`, a request to the URL that carries an `Origin` header must come
//! from the URL's own origin (the `Host` it was sent to) or from one of `crossDomainAllowedOrigin`
//! (`originName` with `*` matching one DNS label, `includeSubDomains`, `originProtocol` http, https
//! or http/https, `originPort` a number or `all`; a missing port is the scheme's default). Any other
//! origin, `Origin: null` included, raises VIOL_CROSS_ORIGIN_REQUEST (alarm by default). The
//! response-side settings (`allowOriginsEnforcementMode: replace-with`, `checkAllowedMethods`) are
//! accepted and not enforced: the engine does not rewrite responses. The violation belongs to the
//! URL entity (staged with it). URLs without the setting pay one `Option` test.

use crate::policy::PolicyError;
use crate::policy::compile::compiled::{CompiledPolicy, Scratch};
use crate::policy::compile::glob::Glob;
use crate::policy::decl;
use crate::violation::{Context, Violation, ViolationKind as K};

/// One allowed origin.
#[derive(Clone, Debug)]
pub struct AllowedOrigin {
    name: Glob,
    suffix: String,
    sub_domains: bool,
    http: bool,
    https: bool,
    /// `None`: every port.
    port: Option<u16>,
}

/// The compiled setting of one URL (only `enforce` compiles to anything).
#[derive(Clone, Debug)]
pub struct Cors {
    allowed: Vec<AllowedOrigin>,
}

/// Compiles `urls[i].html5CrossOriginRequestsEnforcement`.
pub(in crate::policy) fn compile(
    u: &decl::Url,
    i: usize,
) -> Result<Option<Box<Cors>>, PolicyError> {
    let Some(c) = &u.html5_cross_origin_requests_enforcement else {
        return Ok(None);
    };
    let path = format!("policy.urls[{i}].html5CrossOriginRequestsEnforcement");
    match c.enforcement_mode.as_deref().unwrap_or("disabled") {
        "disabled" => return Ok(None),
        "enforce" => {}
        other => {
            return Err(PolicyError::invalid(
                format!("{path}.enforcementMode"),
                format!("unknown value \"{other}\" (expected disabled or enforce)"),
            ));
        }
    }
    let mut allowed = Vec::new();
    for (j, o) in c.cross_domain_allowed_origin.iter().flatten().enumerate() {
        let at = format!("{path}.crossDomainAllowedOrigin[{j}]");
        let Some(name) = o.origin_name.as_deref().map(str::to_ascii_lowercase) else {
            return Err(PolicyError::invalid(format!("{at}.originName"), "missing"));
        };
        let (http, https) = match o.origin_protocol.as_deref().unwrap_or("http/https") {
            "http" => (true, false),
            "https" => (false, true),
            "http/https" => (true, true),
            other => {
                return Err(PolicyError::invalid(
                    format!("{at}.originProtocol"),
                    format!("unknown value \"{other}\" (expected http, https or http/https)"),
                ));
            }
        };
        let port = match o.origin_port.as_deref().unwrap_or("all") {
            "all" | "*" => None,
            p => Some(p.parse::<u16>().map_err(|_| {
                PolicyError::invalid(
                    format!("{at}.originPort"),
                    format!("\"{p}\" is not a port (expected 0 to 65535 or all)"),
                )
            })?),
        };
        allowed.push(AllowedOrigin {
            // `*` matches within one DNS label: labels are matched as path segments.
            name: Glob::new(&name.replace('.', "/"), false, true),
            suffix: format!(".{name}"),
            sub_domains: o.include_sub_domains.or(false),
            http,
            https,
            port,
        });
    }
    Ok(Some(Box::new(Cors { allowed })))
}

/// `scheme://host[:port]` → (https, host lower-cased, port).
fn parse_origin(origin: &str) -> Option<(bool, String, u16)> {
    let (scheme, rest) = origin.split_once("://")?;
    let https = match scheme.to_ascii_lowercase().as_str() {
        "https" => true,
        "http" => false,
        _ => return None,
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let default = if https { 443 } else { 80 };
    let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
        let (h, after) = v6.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => default,
            None => return None,
        };
        (format!("[{h}]"), port)
    } else {
        match rest.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().ok()?),
            None => (rest.to_string(), default),
        }
    };
    (!host.is_empty()).then(|| (https, host.to_ascii_lowercase(), port))
}

impl Cors {
    fn allows(&self, https: bool, host: &str, port: u16) -> bool {
        self.allowed.iter().any(|a| {
            (if https { a.https } else { a.http })
                && a.port.is_none_or(|p| p == port)
                && (a.name.is_match(host.replace('.', "/").as_bytes())
                    || (a.sub_domains && host.ends_with(a.suffix.as_str())))
        })
    }
}

impl CompiledPolicy {
    /// Headers phase, after the URL check: the `Origin` of a request to a URL that enforces CORS.
    pub(in crate::policy) fn check_cors(
        &self,
        head: &crate::RequestHead,
        tls: bool,
        s: &Scratch,
        out: &mut Vec<Violation>,
    ) {
        let Some(cors) = s
            .url
            .and_then(|i| self.urls.get(i))
            .and_then(|u| u.cors.as_deref())
        else {
            return;
        };
        let Some(origin) = head.headers.get(http::header::ORIGIN) else {
            return;
        };
        let text = origin.to_str().unwrap_or("").trim();
        let legal = match parse_origin(text) {
            Some((https, host, port)) => {
                let own = head
                    .headers
                    .get(http::header::HOST)
                    .and_then(|h| h.to_str().ok())
                    .or_else(|| head.uri.authority().map(|a| a.as_str()))
                    .and_then(|h| {
                        parse_origin(&format!("{}://{h}", if tls { "https" } else { "http" }))
                    });
                own.is_some_and(|o| o == (https, host.clone(), port))
                    || cors.allows(https, &host, port)
            }
            None => false,
        };
        if !legal {
            self.push(
                out,
                Violation::new(K::CrossOriginRequest, Context::Header)
                    .named("origin")
                    .snippet(text.as_bytes())
                    .detail("origin not allowed to share this URL's data"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_parse_with_default_ports() {
        assert_eq!(
            parse_origin("https://Foo.com"),
            Some((true, "foo.com".into(), 443))
        );
        assert_eq!(
            parse_origin("http://foo.com:8080"),
            Some((false, "foo.com".into(), 8080))
        );
        assert_eq!(
            parse_origin("http://[::1]:81"),
            Some((false, "[::1]".into(), 81))
        );
        assert_eq!(
            parse_origin("https://[::1]"),
            Some((true, "[::1]".into(), 443))
        );
        assert_eq!(parse_origin("null"), None);
        assert_eq!(parse_origin("ftp://foo.com"), None);
    }
}
