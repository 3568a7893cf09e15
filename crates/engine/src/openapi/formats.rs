//! The `format` keywords a WAF enforces: int32/int64/float/double ranges and the string formats
//! date, date-time, uuid, email, ipv4, ipv6, byte (base64). Other formats are annotations.

use std::net::{Ipv4Addr, Ipv6Addr};

use portcullis_support::is_uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    None,
    Int32,
    Int64,
    Float,
    Double,
    Date,
    DateTime,
    Uuid,
    Email,
    Ipv4,
    Ipv6,
    Byte,
}

impl Format {
    pub fn parse(s: &str) -> Format {
        match s {
            "int32" => Format::Int32,
            "int64" => Format::Int64,
            "float" => Format::Float,
            "double" => Format::Double,
            "date" => Format::Date,
            "date-time" => Format::DateTime,
            "uuid" => Format::Uuid,
            "email" => Format::Email,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            "byte" => Format::Byte,
            _ => Format::None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::None => "",
            Format::Int32 => "int32",
            Format::Int64 => "int64",
            Format::Float => "float",
            Format::Double => "double",
            Format::Date => "date",
            Format::DateTime => "date-time",
            Format::Uuid => "uuid",
            Format::Email => "email",
            Format::Ipv4 => "ipv4",
            Format::Ipv6 => "ipv6",
            Format::Byte => "byte",
        }
    }

    /// Whether a number satisfies the format (integer ranges).
    pub fn number_ok(self, n: &serde_json::Number) -> bool {
        match self {
            Format::Int32 => n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
            Format::Int64 => n.as_i64().is_some(),
            Format::Float => n
                .as_f64()
                .is_some_and(|f| f.is_finite() && f.abs() <= f32::MAX as f64),
            _ => true,
        }
    }

    /// Whether a string satisfies the format.
    pub fn string_ok(self, s: &str) -> bool {
        match self {
            Format::Date => is_date(s),
            Format::DateTime => is_date_time(s),
            Format::Uuid => is_uuid(s),
            Format::Email => is_email(s),
            Format::Ipv4 => s.parse::<Ipv4Addr>().is_ok(),
            Format::Ipv6 => s.parse::<Ipv6Addr>().is_ok(),
            Format::Byte => is_base64(s),
            _ => true,
        }
    }
}

fn digits(s: &[u8]) -> Option<u32> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0, |a, d| a * 10 + u32::from(d - b'0')))
}

/// RFC 3339 full-date: `YYYY-MM-DD` with a real day of month.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (digits(&b[..4]), digits(&b[5..7]), digits(&b[8..])) else {
        return false;
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
fn is_date_time(s: &str) -> bool {
    if s.len() < 20 || !s.is_char_boundary(10) || !is_date(&s[..10]) {
        return false;
    }
    let b = s.as_bytes();
    if !matches!(b[10], b'T' | b't' | b' ') || b[13] != b':' || b[16] != b':' {
        return false;
    }
    let (Some(h), Some(mi), Some(se)) =
        (digits(&b[11..13]), digits(&b[14..16]), digits(&b[17..19]))
    else {
        return false;
    };
    if h > 23 || mi > 59 || se > 60 {
        return false;
    }
    let mut rest = &b[19..];
    if rest.first() == Some(&b'.') {
        let n = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &rest[1 + n..];
    }
    match rest {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            digits(&[*h1, *h2]).is_some_and(|h| h < 24)
                && digits(&[*m1, *m2]).is_some_and(|m| m < 60)
        }
        _ => false,
    }
}

fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    !local.is_empty()
        && local.len() <= 64
        && !local.contains(char::is_whitespace)
        && !domain.is_empty()
        && domain.split('.').count() >= 2
        && domain
            .split('.')
            .all(|l| !l.is_empty() && l.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-'))
}

fn is_base64(s: &str) -> bool {
    let b = s.as_bytes();
    let body = b
        .strip_suffix(b"==")
        .or_else(|| b.strip_suffix(b"="))
        .unwrap_or(b);
    b.len().is_multiple_of(4)
        && body
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_formats() {
        let ok = [
            (Format::Date, "2024-02-29"),
            (Format::DateTime, "2024-02-29T23:59:59.123+02:00"),
            (Format::DateTime, "2024-01-01T00:00:00Z"),
            (Format::Uuid, "123e4567-e89b-12d3-a456-426614174000"),
            (Format::Email, "a.b@example.com"),
            (Format::Ipv4, "10.0.0.1"),
            (Format::Ipv6, "::1"),
            (Format::Byte, "aGVsbG8="),
        ];
        for (f, s) in ok {
            assert!(f.string_ok(s), "{f:?} should accept {s}");
        }
        let bad = [
            (Format::Date, "2023-02-29"),
            (Format::Date, "2023-13-01"),
            (Format::DateTime, "2024-01-01 25:00:00Z"),
            (Format::DateTime, "2024-01-01T00:00:00"),
            (Format::Uuid, "123e4567-e89b-12d3-a456-42661417400g"),
            (Format::Email, "nobody"),
            (Format::Ipv4, "300.1.1.1"),
            (Format::Ipv6, "1::2::3"),
            (Format::Byte, "abc"),
        ];
        for (f, s) in bad {
            assert!(!f.string_ok(s), "{f:?} should reject {s}");
        }
    }

    #[test]
    fn integer_ranges() {
        assert!(Format::Int32.number_ok(&2147483647.into()));
        assert!(!Format::Int32.number_ok(&2147483648i64.into()));
        assert!(!Format::Int64.number_ok(&u64::MAX.into()));
    }
}
