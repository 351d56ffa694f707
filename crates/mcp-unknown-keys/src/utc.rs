//! A moment as its UTC calendar date and time of day, for the timestamps
//! the tool writes: RFC 3339 `ts` in the proxy's log, and the names of
//! wrap's backups. No time zone database: UTC needs none.

use std::time::{SystemTime, UNIX_EPOCH};

/// A moment in UTC, to the millisecond (moments before 1970 read as 1970).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Utc {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u64,
    pub minute: u64,
    pub second: u64,
    pub millis: u32,
}

impl Utc {
    /// `time` in UTC.
    pub fn of(time: SystemTime) -> Utc {
        let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
        let seconds = since.as_secs();
        let (year, month, day) = civil_from_days((seconds / 86_400) as i64);
        let of_day = seconds % 86_400;
        Utc {
            year,
            month,
            day,
            hour: of_day / 3600,
            minute: of_day / 60 % 60,
            second: of_day % 60,
            millis: since.subsec_millis(),
        }
    }
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn moments_are_read_as_utc_dates_and_times() {
        let at = |seconds: u64, millis: u64| {
            let utc = Utc::of(UNIX_EPOCH + Duration::from_secs(seconds) + Duration::from_millis(millis));
            (
                utc.year, utc.month, utc.day, utc.hour, utc.minute, utc.second, utc.millis,
            )
        };
        assert_eq!(at(0, 0), (1970, 1, 1, 0, 0, 0, 0));
        assert_eq!(at(951_782_400, 7), (2000, 2, 29, 0, 0, 0, 7));
        assert_eq!(at(1_767_225_599, 0), (2025, 12, 31, 23, 59, 59, 0));
        assert_eq!(at(4_107_542_399, 999), (2100, 2, 28, 23, 59, 59, 999));
        assert_eq!(at(4_107_542_400, 0), (2100, 3, 1, 0, 0, 0, 0));
        assert_eq!(Utc::of(UNIX_EPOCH - Duration::from_secs(5)), Utc::of(UNIX_EPOCH));
    }
}
