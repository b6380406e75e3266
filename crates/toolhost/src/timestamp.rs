//! Hand-written ISO 8601 timestamps (UTC, millisecond precision).
//!
//! [`iso8601_millis`] formats a [`SystemTime`] without a date library,
//! using Howard Hinnant's `civil_from_days` algorithm on the proleptic
//! Gregorian calendar.

use crate::clock::{SystemTime, UNIX_EPOCH};

const MILLIS_PER_DAY: i128 = 86_400_000;

/// Format `t` as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC). Sub-millisecond parts
/// are floored, also before the epoch. Years outside 0000..=9999 use the
/// ISO 8601 expanded form with sign and six digits (`+010000-...`), as
/// JavaScript's `toISOString` does.
pub fn iso8601_millis(t: SystemTime) -> String {
    let mut out = String::with_capacity(24);
    push_iso8601_millis(&mut out, t);
    out
}

/// [`iso8601_millis`], appended to `out` (a metadata stamp goes straight into the wire).
pub fn push_iso8601_millis(out: &mut String, t: SystemTime) {
    let millis: i128 = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i128,
        Err(before) => {
            let d = before.duration();
            let partial = i128::from(d.subsec_nanos() % 1_000_000 != 0);
            -(d.as_millis() as i128 + partial)
        }
    };
    let days = millis.div_euclid(MILLIS_PER_DAY) as i64;
    let ms_of_day = millis.rem_euclid(MILLIS_PER_DAY) as u64;
    let (year, month, day) = civil_from_days(days);
    let (hour, min) = (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60);
    let (sec, ms) = (ms_of_day / 1000 % 60, ms_of_day % 1000);
    if !(0..=9999).contains(&year) {
        use std::fmt::Write as _;
        let _ = write!(out, "{year:+07}-{month:02}-{day:02}T{hour:02}:{min:02}:{sec:02}.{ms:03}Z");
        return;
    }
    // The common case, written digit by digit (it stamps every result with `metadata`).
    let mut stamp = *b"0000-00-00T00:00:00.000Z";
    let mut put = |at: usize, width: usize, mut n: u64| {
        for i in (at..at + width).rev() {
            stamp[i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, 4, year as u64);
    put(5, 2, u64::from(month));
    put(8, 2, u64::from(day));
    put(11, 2, hour);
    put(14, 2, min);
    put(17, 2, sec);
    put(20, 3, ms);
    out.push_str(std::str::from_utf8(&stamp).expect("ASCII digits"));
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day).
/// Howard Hinnant's `civil_from_days`, eras of 400 years from 0000-03-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era, [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365], from March 1
    let mp = (5 * doy + 2) / 153; // [0, 11], March = 0
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at_millis(ms: i64) -> SystemTime {
        if ms >= 0 {
            UNIX_EPOCH + Duration::from_millis(ms as u64)
        } else {
            UNIX_EPOCH - Duration::from_millis(ms.unsigned_abs())
        }
    }

    #[test]
    fn iso8601_known_instants() {
        assert_eq!(iso8601_millis(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            iso8601_millis(at_millis(951_827_696_789)),
            "2000-02-29T12:34:56.789Z"
        );
        assert_eq!(
            iso8601_millis(at_millis(1_795_219_200_000)),
            "2026-11-21T00:00:00.000Z"
        );
        assert_eq!(
            iso8601_millis(at_millis(1_795_305_599_999)),
            "2026-11-21T23:59:59.999Z"
        );
        assert_eq!(
            iso8601_millis(at_millis(4_107_542_400_000)),
            "2100-03-01T00:00:00.000Z"
        );
        // Sub-millisecond parts are floored.
        let t = UNIX_EPOCH + Duration::from_nanos(1_999_999);
        assert_eq!(iso8601_millis(t), "1970-01-01T00:00:00.001Z");
    }

    #[test]
    fn iso8601_before_epoch_and_far_future() {
        assert_eq!(iso8601_millis(at_millis(-1)), "1969-12-31T23:59:59.999Z");
        assert_eq!(
            iso8601_millis(UNIX_EPOCH - Duration::from_micros(500)),
            "1969-12-31T23:59:59.999Z"
        );
        assert_eq!(
            iso8601_millis(at_millis(-2_208_988_800_000)),
            "1900-01-01T00:00:00.000Z"
        );
        let y10k = UNIX_EPOCH + Duration::from_secs(253_402_300_800);
        assert_eq!(iso8601_millis(y10k), "+010000-01-01T00:00:00.000Z");
    }

    #[test]
    fn iso8601_matches_day_by_day_walk() {
        // Every day from 1970 to 2100 against a naive calendar walk.
        let (mut y, mut m, mut d) = (1970i64, 1u32, 1u32);
        for days in 0..47_482i64 {
            let expected = format!("{y:04}-{m:02}-{d:02}T00:00:00.000Z");
            assert_eq!(iso8601_millis(at_millis(days * 86_400_000)), expected);
            let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
            let len = [
                31,
                if leap { 29 } else { 28 },
                31,
                30,
                31,
                30,
                31,
                31,
                30,
                31,
                30,
                31,
            ][m as usize - 1];
            d += 1;
            if d > len {
                (d, m) = (1, m + 1);
                if m > 12 {
                    (m, y) = (1, y + 1);
                }
            }
        }
    }
}
