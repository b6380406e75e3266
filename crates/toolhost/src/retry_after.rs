//! HTTP `Retry-After` values (RFC 9110 §10.2.3): a number of seconds, or an HTTP date.
//!
//! A handler that fails on a 429 or 503 from `fetch` or axios carries the server's
//! `Retry-After` header; the engine waits that long before the next attempt (still
//! capped by `maxDelay`, see [`crate::retry`]).

use crate::clock::{SystemTime, UNIX_EPOCH};

const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/// Milliseconds to wait for a `Retry-After` value read at `now`: `"120"` is two minutes,
/// an HTTP date is the time until then (0 once it has passed). `None` for anything else.
pub fn retry_after_ms(value: &str, now: SystemTime) -> Option<u64> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(value.parse::<u64>().map_or(u64::MAX, |s| s.saturating_mul(1000)));
    }
    let at = http_date_ms(value)?;
    let now = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i128);
    Some((at - now).clamp(0, i128::from(u64::MAX)) as u64)
}

/// Milliseconds since the epoch of an HTTP date in any of its three forms:
/// `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate), `Sunday, 06-Nov-94 08:49:37 GMT`
/// (RFC 850) and `Sun Nov  6 08:49:37 1994` (asctime).
fn http_date_ms(value: &str) -> Option<i128> {
    let words: Vec<&str> = value.split([' ', ',', '-']).filter(|w| !w.is_empty()).collect();
    let month = |w: &str| MONTHS.iter().position(|m| w.eq_ignore_ascii_case(m)).map(|i| i as u32 + 1);
    let (day, month, year, time) = match words.as_slice() {
        // IMF-fixdate and RFC 850: weekday, day, month, year, time, GMT
        [_, day, mon, year, time, "GMT"] => {
            let year: i64 = year.parse().ok()?;
            // RFC 850's two-digit year: the one within 50 years of now, as RFC 9110 asks
            // (this reads 00-69 as 20xx, 70-99 as 19xx).
            let year = if year < 100 { if year < 70 { 2000 + year } else { 1900 + year } } else { year };
            (day.parse::<u32>().ok()?, month(mon)?, year, *time)
        }
        // asctime: weekday, month, day, time, year
        [_, mon, day, time, year] => (day.parse::<u32>().ok()?, month(mon)?, year.parse().ok()?, *time),
        _ => return None,
    };
    let hms: Vec<u32> = time.split(':').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    let [h, m, s] = hms.as_slice() else { return None };
    if !(1..=31).contains(&day) || *h > 23 || *m > 59 || *s > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(((i128::from(days) * 86_400) + i128::from(h * 3600 + m * 60 + s)) * 1000)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`, the inverse of [`crate::timestamp`]'s `civil_from_days`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// 1994-11-06 08:49:37 UTC.
    fn at_1994() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(784_111_777)
    }

    #[test]
    fn seconds_are_read_as_seconds() {
        assert_eq!(retry_after_ms("120", at_1994()), Some(120_000));
        assert_eq!(retry_after_ms(" 0 ", at_1994()), Some(0));
        assert_eq!(retry_after_ms("99999999999999999999999", at_1994()), Some(u64::MAX));
        for bad in ["", "-1", "1.5", "soon", "12s"] {
            assert_eq!(retry_after_ms(bad, at_1994()), None, "{bad:?}");
        }
    }

    #[test]
    fn http_dates_in_each_form_are_the_time_until_then() {
        let now = at_1994() - Duration::from_secs(30);
        for date in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            assert_eq!(retry_after_ms(date, now), Some(30_000), "{date}");
        }
        assert_eq!(retry_after_ms("Sun, 06 Nov 1994 08:49:37 GMT", at_1994() + Duration::from_secs(5)), Some(0), "a date passed");
        assert_eq!(retry_after_ms("Sun, 32 Nov 1994 08:49:37 GMT", now), None);
        assert_eq!(retry_after_ms("Sun, 06 Nov 1994 08:49:37 PST", now), None);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }
}
