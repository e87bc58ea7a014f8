//! The one duration grammar of every flag that takes a duration (`pair --timeout`,
//! `proxy --grace`, `gateway --request-timeout`, ...): one or more terms of a decimal number
//! and a unit, or a bare number of seconds.
//!
//! | unit | meaning |
//! |---|---|
//! | `us`, `µs` | microseconds |
//! | `ms` | milliseconds |
//! | `s` (or none, for a lone number) | seconds |
//! | `m`, `min` | minutes |
//! | `h` | hours |
//! | `d` | days |
//!
//! `500ms`, `30s`, `1.5` (seconds), `5m`, `1h`, `1h30m`, `2d`. Terms add up; spaces between
//! them are allowed. Negative numbers, unknown units and durations beyond `Duration`'s range
//! are errors.

use std::time::Duration;

/// Parses a duration (see the module docs for the grammar).
///
/// ```
/// use std::time::Duration;
/// use rpcscan_traffic::duration::parse_duration;
///
/// assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
/// assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
/// assert!(parse_duration("5 parsecs").is_err());
/// ```
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("{s:?} is not a duration (examples: 500ms, 30s, 5m, 1h, 1h30m)");
    let mut rest = s.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    let mut seconds = 0f64;
    let mut terms = 0;
    while !rest.is_empty() {
        let split = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let (number, after) = rest.split_at(split);
        // `.5` and `5.` are numbers, `.` is not.
        if !number.bytes().any(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let n: f64 = number.parse().map_err(|_| bad())?;
        let after = after.trim_start();
        let unit_len = after.find(|c: char| !c.is_alphabetic()).unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let scale = match unit {
            // A bare number is seconds, but only alone: `1h30` is a typo, not 1h + 30 s.
            "" if terms == 0 && after.trim().is_empty() => 1.0,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "d" => 86_400.0,
            _ => return Err(bad()),
        };
        seconds += n * scale;
        terms += 1;
        rest = after.trim_start();
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        #[rustfmt::skip]
        let cases: &[(&str, Option<Duration>)] = &[
            ("30s", Some(Duration::from_secs(30))),
            ("500ms", Some(Duration::from_millis(500))),
            ("250us", Some(Duration::from_micros(250))),
            ("250µs", Some(Duration::from_micros(250))),
            ("2m", Some(Duration::from_secs(120))),
            ("2min", Some(Duration::from_secs(120))),
            ("1h", Some(Duration::from_secs(3600))),
            ("2d", Some(Duration::from_secs(172_800))),
            ("1h30m", Some(Duration::from_secs(5400))),
            ("1h 30m 15s", Some(Duration::from_secs(5415))),
            ("1.5", Some(Duration::from_millis(1500))),
            (".5s", Some(Duration::from_millis(500))),
            (" 5s ", Some(Duration::from_secs(5))),
            ("0", Some(Duration::ZERO)),
            ("", None),
            (" ", None),
            ("s", None),
            (".s", None),
            ("1h30", None),
            ("5 parsecs", None),
            ("5x", None),
            ("-1s", None),
            ("1.2.3s", None),
            ("1e400h", None),
            ("99999999999999999999999d", None),
        ];
        for &(arg, want) in cases {
            assert_eq!(parse_duration(arg).ok(), want, "{arg:?}");
        }
    }
}
