//! Wall-clock helpers: microseconds since the epoch and ISO 8601 UTC strings
//! (`YYYY-MM-DDThh:mm:ssZ`), the timestamp forms of the REST objects.

use std::time::{SystemTime, UNIX_EPOCH};

/// Microseconds since the Unix epoch (`lastUpdateMicros` of the REST objects).
#[inline]
pub fn now_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// Seconds since the Unix epoch.
pub fn unix_seconds() -> u64 {
    now_micros() / 1_000_000
}

/// `YYYY-MM-DDThh:mm:ssZ` for a Unix time in seconds.
#[inline]
pub fn iso8601_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    let Ok(y4 @ 0..=9999) = u64::try_from(y) else {
        return format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60
        );
    };
    // Every security event carries one: the digits are put in place rather than formatted.
    let mut out = *b"0000-00-00T00:00:00Z";
    let mut put = |at: usize, width: usize, mut n: u64| {
        for i in (at..at + width).rev() {
            out[i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, 4, y4);
    put(5, 2, u64::from(m));
    put(8, 2, u64::from(d));
    put(11, 2, rem / 3600);
    put(14, 2, rem % 3600 / 60);
    put(17, 2, rem % 60);
    // ASCII digits and separators only: valid UTF-8 as it stands.
    String::from_utf8(out.to_vec()).unwrap_or_default()
}

/// Seconds since the epoch of `YYYY-MM-DDThh:mm[:ss][Z]` (UTC; also what an HTML
/// `datetime-local` field sends); None when it is not such a time.
pub fn parse_iso8601_utc(s: &str) -> Option<u64> {
    let s = s.trim().trim_end_matches('Z');
    let (date, time) = s.split_once(['T', ' '])?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (h, min) = (t.next()??, t.next()??);
    let sec = t.next().unwrap_or(Some(0))?;
    if !(1..=12).contains(&m)
        || !(1..=31).contains(&day)
        || h > 23
        || min > 59
        || sec > 60
        || y < 1970
    {
        return None;
    }
    let days = days_from_civil(y, m as u32, day as u32);
    u64::try_from(days * 86_400 + h * 3600 + min * 60 + sec).ok()
}

/// Howard Hinnant's civil-to-days algorithm (proleptic Gregorian calendar).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
#[inline]
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(iso8601_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601_utc(1_672_292_545), "2022-12-29T05:42:25Z");
        assert_eq!(iso8601_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso8601_utc(253_402_300_799), "9999-12-31T23:59:59Z");
        assert_eq!(iso8601_utc(253_402_300_800), "10000-01-01T00:00:00Z");
        for t in [0, 951_782_400, 1_672_292_545, 1_795_678_426] {
            assert_eq!(parse_iso8601_utc(&iso8601_utc(t)), Some(t));
        }
        assert_eq!(parse_iso8601_utc("2022-12-29T05:42"), Some(1_672_292_520));
        assert_eq!(parse_iso8601_utc("2022-13-29T05:42"), None);
        assert_eq!(parse_iso8601_utc("yesterday"), None);
    }
}
