//! Wall-clock time as UTC calendar fields, for the names of session folders and the `time` of
//! audit records.
//!
//! tetherd needs only two fixed formats, so it converts days since the Unix epoch to a civil date
//! itself (Howard Hinnant's `civil_from_days`) rather than taking on a date crate.

use std::time::{SystemTime, UNIX_EPOCH};

const MILLIS_PER_DAY: i64 = 86_400_000;

/// A point in time broken down into UTC calendar fields (proleptic Gregorian calendar).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtcTime {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub millisecond: u32,
}

impl UtcTime {
    /// The fields of `time`, truncated to the millisecond.
    pub fn from_system_time(time: SystemTime) -> Self {
        let millis = match time.duration_since(UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
            // A clock set before 1970 is wrong, but its time is still written as what it says.
            Err(before) => i64::try_from(before.duration().as_millis()).map_or(i64::MIN, |millis| -millis),
        };
        Self::from_unix_millis(millis)
    }

    /// The fields of the instant `millis` milliseconds after (or, negative, before) the epoch.
    pub fn from_unix_millis(millis: i64) -> Self {
        let days = millis.div_euclid(MILLIS_PER_DAY);
        // In 0..MILLIS_PER_DAY, so every field below fits in a u32.
        let of_day = millis.rem_euclid(MILLIS_PER_DAY) as u32;
        let (year, month, day) = civil_from_days(days);
        Self {
            year,
            month,
            day,
            hour: of_day / 3_600_000,
            minute: of_day / 60_000 % 60,
            second: of_day / 1000 % 60,
            millisecond: of_day % 1000,
        }
    }

    /// RFC 3339 in UTC with milliseconds: `2026-11-22T06:13:00.123Z`.
    pub fn rfc3339_millis(&self) -> String {
        let Self { year, month, day, hour, minute, second, millisecond } = self;
        format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millisecond:03}Z")
    }

    /// A compact stamp for file names that sorts by time: `20261122-061300`.
    pub fn compact(&self) -> String {
        let Self { year, month, day, hour, minute, second, .. } = self;
        format!("{year:04}{month:02}{day:02}-{hour:02}{minute:02}{second:02}")
    }
}

/// The (year, month 1-12, day 1-31) of the day `days` after 1970-01-01.
///
/// The algorithm counts in 400-year eras starting on 1 March, so that the leap day falls at the
/// end of its year and every era has the same length (146 097 days).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let shifted = days + 719_468; // Days from 0000-03-01 to 1970-01-01.
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097); // 0..=146_096
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365; // 0..=399
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100); // 0..=365
    let month_from_march = (5 * day_of_year + 2) / 153; // 0..=11, March is 0.
    // Both are small and positive by construction.
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = (if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 }) as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use expect_test::expect;

    use super::*;

    #[test]
    fn days_map_to_the_right_dates_across_leap_years_and_centuries() {
        // The calendar's first and last day, the epoch and the day before it, and the end of
        // February in years that are leap years (2000: divisible by 400, 2024) or not (1900 and
        // 2100: divisible by 100 only, 2023).
        let dates =
            [-719_162, -25_567, -25_508, -1, 0, 11_016, 11_017, 19_417, 19_782, 20_779, 47_540, 47_541, 2_932_896]
                .map(|days| {
                    let (year, month, day) = civil_from_days(days);
                    format!("{year:04}-{month:02}-{day:02} {days}")
                })
                .join("\n");
        expect![[r#"
            0001-01-01 -719162
            1900-01-01 -25567
            1900-03-01 -25508
            1969-12-31 -1
            1970-01-01 0
            2000-02-29 11016
            2000-03-01 11017
            2023-03-01 19417
            2024-02-29 19782
            2026-11-22 20779
            2100-02-28 47540
            2100-03-01 47541
            9999-12-31 2932896"#]]
        .assert_eq(&dates);
    }

    #[test]
    fn every_day_follows_the_one_before() {
        // From 1899 to 2101: each day is the next day of the calendar, whatever the month length.
        let month_length = |year: i64, month: u32| match month {
            2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let mut previous = civil_from_days(-26_000);
        for days in -25_999..48_000 {
            let (year, month, day) = previous;
            let expected = if day < month_length(year, month) {
                (year, month, day + 1)
            } else if month < 12 {
                (year, month + 1, 1)
            } else {
                (year + 1, 1, 1)
            };
            let date = civil_from_days(days);
            assert_eq!(date, expected, "day {days}");
            previous = date;
        }
    }

    #[test]
    fn times_are_formatted_in_utc_with_milliseconds() {
        let at = |millis: i64| UtcTime::from_unix_millis(millis);
        assert_eq!(at(1_795_327_980_123).rfc3339_millis(), "2026-11-22T06:13:00.123Z");
        assert_eq!(at(1_795_327_980_123).compact(), "20261122-061300");
        assert_eq!(at(0).rfc3339_millis(), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_868_799_999).rfc3339_millis(), "2000-02-29T23:59:59.999Z");
        assert_eq!(at(-1).rfc3339_millis(), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn system_times_are_truncated_to_the_millisecond() {
        let time = UNIX_EPOCH + Duration::from_nanos(1_795_327_980_123_999_999);
        assert_eq!(UtcTime::from_system_time(time).rfc3339_millis(), "2026-11-22T06:13:00.123Z");
        let before = UNIX_EPOCH - Duration::from_millis(1500);
        assert_eq!(UtcTime::from_system_time(before).rfc3339_millis(), "1969-12-31T23:59:58.500Z");
    }
}
