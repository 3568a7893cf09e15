//! The `policy-builder` settings of a policy that the learning honours, with the format's
//! defaults: `learningMode` (`manual`; `automatic` applies suggestions that reach 100, `disabled`
//! learns nothing), `learnOnlyFromNonBotTraffic` (true), `trustAllIps` (false) and the sources a
//! `whitelist-ips` entry marks `trustedByPolicyBuilder`, and the evidence
//! `trustedTrafficLoosen` / `untrustedTrafficLoosen` ask for (`differentSources` 1 / 20,
//! `minHoursBetweenSamples` 0 / 1, `maxDaysBetweenSamples` 7). Also which clients count as bots.

use std::net::IpAddr;

use serde_json::{Map, Value};

/// How a policy learns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Automatic,
    Manual,
    Disabled,
}

/// The evidence one kind of traffic (trusted or not) needs before a suggestion reaches 100.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Loosen {
    pub different_sources: u64,
    pub min_hours: f64,
    pub max_days: f64,
}

/// A trusted address range (`whitelist-ips` with `trustedByPolicyBuilder`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Range {
    addr: IpAddr,
    mask: IpAddr,
}

/// What the learning reads from a policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub mode: Mode,
    pub non_bot_only: bool,
    pub trust_all: bool,
    trusted: Vec<Range>,
    pub trusted_loosen: Loosen,
    pub untrusted_loosen: Loosen,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            mode: Mode::Manual,
            non_bot_only: true,
            trust_all: false,
            trusted: Vec::new(),
            trusted_loosen: Loosen {
                different_sources: 1,
                min_hours: 0.0,
                max_days: 7.0,
            },
            untrusted_loosen: Loosen {
                different_sources: 20,
                min_hours: 1.0,
                max_days: 7.0,
            },
        }
    }
}

fn flag(v: Option<&Value>) -> Option<bool> {
    match v? {
        Value::Bool(b) => Some(*b),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn number(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn loosen(v: Option<&Value>, default: Loosen) -> Loosen {
    let g = |k: &str| v.and_then(|v| v.get(k));
    Loosen {
        different_sources: number(g("differentSources"))
            .map_or(default.different_sources, |n| n.max(1.0) as u64),
        min_hours: number(g("minHoursBetweenSamples")).map_or(default.min_hours, |n| n.max(0.0)),
        max_days: number(g("maxDaysBetweenSamples")).map_or(default.max_days, |n| n.max(0.0)),
    }
}

/// A dotted mask (`255.255.255.0`) or a prefix length (`24`) as a mask of `addr`'s family.
fn mask_of(addr: IpAddr, mask: Option<&str>) -> Option<IpAddr> {
    let full = match addr {
        IpAddr::V4(_) => IpAddr::from([255u8; 4]),
        IpAddr::V6(_) => IpAddr::from([255u8; 16]),
    };
    let Some(m) = mask.map(str::trim).filter(|m| !m.is_empty()) else {
        return Some(full);
    };
    if let Ok(ip) = m.parse::<IpAddr>() {
        return (ip.is_ipv4() == addr.is_ipv4()).then_some(ip);
    }
    let bits: u32 = m.trim_start_matches('/').parse().ok()?;
    match addr {
        IpAddr::V4(_) if bits <= 32 => Some(IpAddr::from(
            (u32::MAX.checked_shl(32 - bits).unwrap_or(0)).to_be_bytes(),
        )),
        IpAddr::V6(_) if bits <= 128 => Some(IpAddr::from(
            (u128::MAX.checked_shl(128 - bits).unwrap_or(0)).to_be_bytes(),
        )),
        _ => None,
    }
}

fn masked(ip: IpAddr, mask: IpAddr) -> Option<Vec<u8>> {
    let (a, m): (Vec<u8>, Vec<u8>) = match (ip, mask) {
        (IpAddr::V4(a), IpAddr::V4(m)) => (a.octets().to_vec(), m.octets().to_vec()),
        (IpAddr::V6(a), IpAddr::V6(m)) => (a.octets().to_vec(), m.octets().to_vec()),
        _ => return None,
    };
    Some(a.iter().zip(m).map(|(a, m)| a & m).collect())
}

impl Settings {
    /// The settings of a merged policy body (the `policy` object with its template).
    pub fn of(policy: &Map<String, Value>) -> Settings {
        let d = Settings::default();
        let pb = policy.get("policy-builder");
        let g = |k: &str| pb.and_then(|p| p.get(k));
        let mode = match g("learningMode").and_then(Value::as_str) {
            Some("automatic") => Mode::Automatic,
            Some("disabled") => Mode::Disabled,
            _ => Mode::Manual,
        };
        let trusted = policy
            .get("whitelist-ips")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|w| flag(w.get("trustedByPolicyBuilder")) == Some(true))
            .filter_map(|w| {
                let addr: IpAddr = w.get("ipAddress")?.as_str()?.trim().parse().ok()?;
                let mask = mask_of(addr, w.get("ipMask").and_then(Value::as_str))?;
                Some(Range { addr, mask })
            })
            .collect();
        Settings {
            mode,
            non_bot_only: flag(g("learnOnlyFromNonBotTraffic")).unwrap_or(d.non_bot_only),
            trust_all: flag(g("trustAllIps")).unwrap_or(d.trust_all),
            trusted,
            trusted_loosen: loosen(g("trustedTrafficLoosen"), d.trusted_loosen),
            untrusted_loosen: loosen(g("untrustedTrafficLoosen"), d.untrusted_loosen),
        }
    }

    /// Whether the policy builder trusts traffic from `client`.
    pub fn trusts(&self, client: &str) -> bool {
        if self.trust_all {
            return true;
        }
        let Ok(ip) = client.parse::<IpAddr>() else {
            return false;
        };
        self.trusted
            .iter()
            .any(|r| masked(ip, r.mask).is_some_and(|a| Some(a) == masked(r.addr, r.mask)))
    }
}

/// Clients that announce an automated tool, or none at all, in `User-Agent`: what
/// `learnOnlyFromNonBotTraffic` keeps out of the learning. Browsers and mobile apps name
/// themselves; scripts and scanners either send nothing or their library's name.
const BOT_MARKERS: &[&str] = &[
    "bot",
    "crawler",
    "spider",
    "curl/",
    "wget/",
    "python-requests",
    "python-urllib",
    "aiohttp",
    "go-http-client",
    "java/",
    "apache-httpclient",
    "libwww-perl",
    "lwp-",
    "httpclient",
    "okhttp",
    "node-fetch",
    "axios/",
    "postmanruntime",
    "insomnia",
    "sqlmap",
    "nikto",
    "nmap",
    "masscan",
    "zgrab",
    "nuclei",
    "dirbuster",
    "gobuster",
    "wfuzz",
    "ffuf",
    "acunetix",
    "nessus",
    "openvas",
    "burp",
    "zap/",
    "havij",
    "arachni",
    "w3af",
    "scrapy",
    "headlesschrome",
    "phantomjs",
];

/// Whether a request with this `User-Agent` (None: the header was absent) comes from a bot.
pub fn is_bot(user_agent: Option<&str>) -> bool {
    let Some(ua) = user_agent.map(str::trim).filter(|u| !u.is_empty()) else {
        return true;
    };
    let ua = ua.to_ascii_lowercase();
    BOT_MARKERS.iter().any(|m| ua.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_defaults_and_trusted_sources() {
        let d = Settings::of(&Map::new());
        assert_eq!(d, Settings::default());
        assert!(!d.trusts("10.0.0.1"));
        let p = json!({"policy-builder": {"learningMode": "automatic", "learnOnlyFromNonBotTraffic": "false",
                "untrustedTrafficLoosen": {"differentSources": 3, "minHoursBetweenSamples": 0}},
            "whitelist-ips": [
                {"ipAddress": "10.1.0.0", "ipMask": "255.255.0.0", "trustedByPolicyBuilder": true},
                {"ipAddress": "2001:db8::", "ipMask": "32", "trustedByPolicyBuilder": "true"},
                {"ipAddress": "192.0.2.9", "trustedByPolicyBuilder": false}]});
        let s = Settings::of(p.as_object().unwrap());
        assert_eq!(s.mode, Mode::Automatic);
        assert!(!s.non_bot_only);
        assert_eq!(s.untrusted_loosen.different_sources, 3);
        assert_eq!(s.untrusted_loosen.min_hours, 0.0);
        assert!(s.trusts("10.1.200.3"));
        assert!(!s.trusts("10.2.0.1"));
        assert!(s.trusts("2001:db8:1::5"));
        assert!(!s.trusts("192.0.2.9"));
        assert!(!s.trusts("not an address"));
    }

    #[test]
    fn bots_by_user_agent() {
        assert!(is_bot(None));
        assert!(is_bot(Some(" ")));
        assert!(is_bot(Some("curl/8.5.0")));
        assert!(is_bot(Some("python-requests/2.32")));
        assert!(is_bot(Some("Mozilla/5.0 (compatible; Googlebot/2.1)")));
        assert!(is_bot(Some("sqlmap/1.8")));
        assert!(!is_bot(Some(
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"
        )));
    }
}
