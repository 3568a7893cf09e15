//! Where outbound requests may go: the destination guard. Requests made on a remote user's
//! behalf (a controller pulling a policy's links) are checked against deny and allow lists of
//! networks *after* name resolution, and the connection goes to the address that was checked;
//! requests to operator-configured endpoints use [`Guard::open`]. The choice is the caller's.

use std::net::IpAddr;
use std::str::FromStr;

use serde::Deserialize;

/// Networks a request may not reach (`deny`, checked first) and, when not empty, the only
/// ones it may reach (`allow`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Guard {
    pub allow: Vec<Cidr>,
    pub deny: Vec<Cidr>,
}

impl Default for Guard {
    /// The deny list of [`DEFAULT_DENY`], no allow list: for requests made on a user's behalf.
    fn default() -> Self {
        Guard {
            allow: Vec::new(),
            deny: DEFAULT_DENY.iter().filter_map(|c| c.parse().ok()).collect(),
        }
    }
}

/// Link-local (where every cloud's metadata service lives), the other metadata addresses
/// (Alibaba, AWS over IPv6) and the "this host" network (and its IPv6 form, `::`).
pub const DEFAULT_DENY: &[&str] = &[
    "169.254.0.0/16",
    "fe80::/10",
    "100.100.100.200/32",
    "fd00:ec2::254/128",
    "0.0.0.0/8",
    "::/128",
];

/// A network: an address and a prefix length (`192.0.2.7`, `10.0.0.0/8`, `2001:db8::/32`), for
/// the guard's lists and for searches by client address. An IPv4-mapped IPv6 network
/// (`::ffff:10.0.0.0/104`) is held as the IPv4 network it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct Cidr {
    addr: IpAddr,
    len: u8,
}

/// Text that is not an address or a network; `Display` says what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not an address or network (a.b.c.d/n, x::y/n)")]
pub struct BadCidr(pub String);

impl FromStr for Cidr {
    type Err = BadCidr;
    fn from_str(s: &str) -> Result<Self, BadCidr> {
        let bad = || BadCidr(s.to_string());
        let (a, l) = s.split_once('/').unwrap_or((s, ""));
        let addr: IpAddr = a.trim().parse().map_err(|_| bad())?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let len = if l.is_empty() {
            max
        } else {
            l.trim().parse::<u8>().map_err(|_| bad())?
        };
        if len > max {
            return Err(bad());
        }
        // The prefix of a mapped network counts from the IPv4 part; a shorter one reaches past
        // the mapped range and stays IPv6.
        Ok(match addr {
            IpAddr::V6(v6) if len >= 96 && v6.to_ipv4_mapped().is_some() => Cidr {
                addr: addr.to_canonical(),
                len: len - 96,
            },
            _ => Cidr { addr, len },
        })
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl TryFrom<String> for Cidr {
    type Error = BadCidr;
    fn try_from(s: String) -> Result<Self, BadCidr> {
        s.parse()
    }
}

impl Cidr {
    pub fn contains(&self, ip: IpAddr) -> bool {
        fn prefix(bits: u128, width: u32, len: u8) -> u128 {
            if len == 0 {
                0
            } else {
                bits >> (width - u32::from(len))
            }
        }
        match (self.addr, ip.to_canonical()) {
            (IpAddr::V4(n), IpAddr::V4(i)) => {
                prefix(u32::from(n).into(), 32, self.len)
                    == prefix(u32::from(i).into(), 32, self.len)
            }
            (IpAddr::V6(n), IpAddr::V6(i)) => {
                prefix(u128::from(n), 128, self.len) == prefix(u128::from(i), 128, self.len)
            }
            _ => false,
        }
    }
}

impl Guard {
    /// No destination refused: for operator-configured endpoints (the billing endpoint, the
    /// controllers a central manager calls, access profiles' key and introspection URLs,
    /// `portcullis proxy`'s own policy links), which may well be private addresses.
    pub fn open() -> Guard {
        Guard {
            allow: Vec::new(),
            deny: Vec::new(),
        }
    }

    /// Why `ip` may not be contacted, if it may not. An IPv6 address that carries an IPv4 one
    /// (see [`embedded_ipv4`]) is checked as that IPv4 address too: a NAT64 gateway or 6to4
    /// relay would deliver the connection there.
    pub fn refusal(&self, ip: IpAddr) -> Option<String> {
        let ip = ip.to_canonical();
        let mut forms = vec![ip];
        if let IpAddr::V6(v6) = ip {
            forms.extend(embedded_ipv4(v6).into_iter().map(IpAddr::V4));
        }
        for form in &forms {
            if let Some(c) = self.deny.iter().find(|c| c.contains(*form)) {
                let via = if *form == ip {
                    String::new()
                } else {
                    format!(" (it carries {form})")
                };
                return Some(format!(
                    "destination {ip}{via} is refused (deny list entry {}/{})",
                    c.addr, c.len
                ));
            }
        }
        if !self.allow.is_empty()
            && !forms
                .iter()
                .all(|f| self.allow.iter().any(|c| c.contains(*f)))
        {
            return Some(format!("destination {ip} is not in the allow list"));
        }
        None
    }
}

/// The IPv4 addresses an IPv6 address carries, by every standard embedding: IPv4-mapped
/// (`::ffff:a.b.c.d`) and IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`), NAT64 (`64:ff9b::/96` and the local-use `64:ff9b:1::/48`, RFC 6052 layouts),
/// 6to4 (`2002:AABB:CCDD::/16`), Teredo (`2001::/32`: the server, and the client address
/// stored inverted) and ISATAP (interface id `0000:5efe` or `0200:5efe` under any prefix).
pub fn embedded_ipv4(ip: std::net::Ipv6Addr) -> Vec<std::net::Ipv4Addr> {
    use std::net::Ipv4Addr;
    let o = ip.octets();
    let v4 = |b: &[u8]| Ipv4Addr::new(b[0], b[1], b[2], b[3]);
    let seg = ip.segments();
    let mut out = Vec::new();
    // ::a.b.c.d (not :: or ::1), ::ffff:a.b.c.d, ::ffff:0:a.b.c.d
    if seg[..5] == [0; 5]
        && (seg[5] == 0xffff
            || (seg[5] == 0 && u32::from_be_bytes([o[12], o[13], o[14], o[15]]) > 1))
    {
        out.push(v4(&o[12..]));
    }
    if seg[..4] == [0, 0, 0, 0] && seg[4] == 0xffff && seg[5] == 0 {
        out.push(v4(&o[12..]));
    }
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        out.push(v4(&o[12..]));
    }
    if seg[..3] == [0x64, 0xff9b, 1] {
        // A /48 prefix: the IPv4 address is in octets 6-7 and 9-10 (octet 8 is reserved).
        out.push(Ipv4Addr::new(o[6], o[7], o[9], o[10]));
    }
    if seg[0] == 0x2002 {
        out.push(v4(&o[2..6]));
    }
    if seg[..2] == [0x2001, 0] {
        out.push(v4(&o[4..8]));
        out.push(Ipv4Addr::from(!u32::from_be_bytes([
            o[12], o[13], o[14], o[15],
        ])));
    }
    if matches!(seg[4], 0 | 0x0200) && seg[5] == 0x5efe {
        out.push(v4(&o[12..]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect(s)
    }

    #[test]
    fn networks_parse_contain_and_print() {
        let c: Cidr = "10.1.0.0/16".parse().unwrap();
        assert!(c.contains(ip("10.1.200.3")) && !c.contains(ip("10.2.0.1")));
        assert!(!c.contains(ip("::1")));
        let host: Cidr = "192.0.2.7".parse().unwrap();
        assert!(host.contains(ip("192.0.2.7")) && !host.contains(ip("192.0.2.8")));
        let all: Cidr = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains(ip("203.0.113.9")));
        let v6: Cidr = "2001:db8::/32".parse().unwrap();
        assert!(v6.contains(ip("2001:db8:1::5")));
        for bad in ["10.0.0.0/33", "host", "10.0.0.0/x", ""] {
            assert!(bad.parse::<Cidr>().is_err(), "{bad}");
        }
        assert_eq!(c.to_string(), "10.1.0.0/16");
    }

    #[test]
    fn a_mapped_network_is_its_ipv4_network() {
        let mapped: Cidr = "::ffff:10.0.0.0/104".parse().unwrap();
        assert_eq!(mapped, "10.0.0.0/8".parse().unwrap());
        let host: Cidr = "::ffff:10.0.0.1".parse().unwrap();
        assert!(host.contains(ip("10.0.0.1")) && host.contains(ip("::ffff:10.0.0.1")));
        assert!(!host.contains(ip("10.0.0.2")));
        let wide: Cidr = "::ffff:0:0/64".parse().unwrap();
        assert!(wide.contains(ip("::1")));
    }

    #[test]
    fn ssrf_to_metadata_through_an_ipv6_embedding_is_refused() {
        let cfg = Guard::default();
        for ip in [
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::169.254.169.254",
            "::169.254.169.254",
            "::ffff:169.254.169.254",
            "::ffff:0:169.254.169.254",
            "64:ff9b:1:a9fe:a9:fe00::",
            "2002:a9fe:a9fe::1",
            "2001:0:a9fe:a9fe::1",
            "2001:0:4136:e378:8000:63bf:5601:5601",
            "fe80::5efe:169.254.169.254",
            "2001:db8::200:5efe:a9fe:a9fe",
            "64:ff9b::6464:64c8",
            "::0.0.0.7",
            "::",
        ] {
            let ip: IpAddr = ip.parse().expect(ip);
            assert!(cfg.refusal(ip).is_some(), "{ip} allowed");
        }
        for ip in ["::1", "64:ff9b::808:808", "2002:808:808::1", "2001:db8::1"] {
            let ip: IpAddr = ip.parse().expect(ip);
            assert_eq!(cfg.refusal(ip), None, "{ip}");
        }
    }

    #[test]
    fn default_deny_list_refuses_link_local_and_metadata() {
        let cfg = Guard::default();
        for ip in [
            "169.254.169.254",
            "fe80::1",
            "::ffff:169.254.169.254",
            "100.100.100.200",
            "fd00:ec2::254",
            "0.0.0.0",
        ] {
            let ip: IpAddr = ip.parse().expect("ip");
            assert!(cfg.refusal(ip).is_some(), "{ip} allowed");
        }
        for ip in ["127.0.0.1", "10.1.2.3", "::1", "2001:db8::1"] {
            assert_eq!(cfg.refusal(ip.parse().expect("ip")), None, "{ip}");
        }
        let only = Guard {
            allow: vec!["10.0.0.0/8".parse().expect("cidr")],
            ..Guard::default()
        };
        assert!(only.refusal("10.9.9.9".parse().expect("ip")).is_none());
        assert!(only.refusal("127.0.0.1".parse().expect("ip")).is_some());
        for bad in ["10.0.0.0/33", "x/8", "::/129", ""] {
            assert!(bad.parse::<Cidr>().is_err(), "{bad}");
        }
        assert!(
            "0.0.0.0/0"
                .parse::<Cidr>()
                .expect("all")
                .contains("8.8.8.8".parse().expect("ip"))
        );
    }
}
