//! An IP address as text, as `Display` writes it: the client address of every connection and of
//! every security event. An IPv4 address (the common case) is written without going through the
//! formatter's padding machinery.

use std::net::IpAddr;

/// `ip` as `Display` writes it.
#[inline]
pub fn ip_text(ip: IpAddr) -> String {
    let IpAddr::V4(v4) = ip else {
        return ip.to_string();
    };
    let mut out = String::with_capacity(15);
    for (i, octet) in v4.octets().into_iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        if octet >= 100 {
            out.push(char::from(b'0' + octet / 100));
        }
        if octet >= 10 {
            out.push(char::from(b'0' + octet / 10 % 10));
        }
        out.push(char::from(b'0' + octet % 10));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_read_as_display_writes_them() {
        for ip in [
            "0.0.0.0",
            "127.0.0.1",
            "192.0.2.10",
            "255.255.255.255",
            "10.100.9.99",
            "::1",
            "2001:db8::8a2e:370:7334",
            "::ffff:192.0.2.1",
        ] {
            let ip: IpAddr = ip.parse().expect("ip");
            assert_eq!(ip_text(ip), ip.to_string());
        }
    }
}
