//! Quantities written as text in schedule files: durations (`"30s"`, `"1h30m"`), sizes
//! (`"10MB"`, `"512KiB"`) and request rates (`"1/s"`, `"0.5/s"`, `"30/min"`, `"1/5s"`).
//!
//! Pure parsers: each returns the typed value or a one-line message saying what was expected.

use std::fmt;
use std::time::Duration;

/// The longest gap a `host_rate` may set between two requests to a host: a year.
const LONGEST_HOST_INTERVAL: Duration = Duration::from_secs(365 * 86_400);

/// A politeness limit: at most `requests` requests per `per`, for every host of a site.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostRate {
    /// How many requests are allowed in one period (positive, may be fractional: `0.5/s`).
    pub requests: f64,
    /// The length of the period.
    pub per: Duration,
}

impl HostRate {
    /// The shortest allowed gap between two requests to one host: `per / requests`.
    pub fn min_interval(&self) -> Duration {
        self.per.div_f64(self.requests)
    }

    /// The limit as requests per second.
    pub fn per_second(&self) -> f64 {
        self.requests / self.per.as_secs_f64()
    }

    /// Parses `"N/unit"` or `"N/duration"`: `"1/s"`, `"0.5/s"`, `"30/min"`, `"100/h"`, `"1/5s"`.
    pub fn parse(text: &str) -> Result<HostRate, String> {
        const EXPECTED: &str = "expected requests per period like \"1/s\", \"0.5/s\", \"30/min\", \
                                \"100/h\" or \"1/5s\"";
        let Some((count, per)) = text.split_once('/') else {
            return Err(format!("`{text}` is not a rate: {EXPECTED}"));
        };
        let requests: f64 = count
            .trim()
            .parse()
            .map_err(|_| format!("`{}` is not a number: {EXPECTED}", count.trim()))?;
        if !requests.is_finite() {
            return Err(format!(
                "`{}` is not a finite number: {EXPECTED}",
                count.trim()
            ));
        }
        if requests <= 0.0 {
            return Err(format!("the request count must be positive: {EXPECTED}"));
        }
        let per = per.trim();
        let per = match unit_seconds(per) {
            Some(seconds) => Duration::from_secs_f64(seconds),
            None => {
                parse_duration(per).map_err(|_| format!("`{per}` is not a period: {EXPECTED}"))?
            }
        };
        if per.is_zero() {
            return Err(format!("the period must be longer than zero: {EXPECTED}"));
        }
        // Checked before `min_interval`, whose division would not fit a Duration for a count
        // like `1e-300`.
        if per.as_secs_f64() / requests > LONGEST_HOST_INTERVAL.as_secs_f64() {
            return Err(format!(
                "`{text}` is less than one request a year, the longest gap a host may ask"
            ));
        }
        let rate = HostRate { requests, per };
        if rate.min_interval() < Duration::from_micros(1) {
            return Err(format!(
                "`{text}` is more than a million requests per second"
            ));
        }
        Ok(rate)
    }
}

impl fmt::Display for HostRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let per = match self.per.as_millis() {
            1000 => "s".to_owned(),
            60_000 => "min".to_owned(),
            3_600_000 => "h".to_owned(),
            86_400_000 => "d".to_owned(),
            _ => format_duration(self.per),
        };
        write!(f, "{}/{per}", self.requests)
    }
}

/// Seconds in one named time unit, for durations and rates.
fn unit_seconds(unit: &str) -> Option<f64> {
    Some(match unit {
        "ms" | "msec" | "millisecond" | "milliseconds" => 0.001,
        "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
        "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3600.0,
        "d" | "day" | "days" => 86_400.0,
        "w" | "week" | "weeks" => 604_800.0,
        _ => return None,
    })
}

/// Parses a duration: one or more `<number><unit>` parts, e.g. `"30s"`, `"1.5h"`, `"1h 30m"`,
/// `"500ms"`. Units: ms, s, m/min, h, d, w.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    const EXPECTED: &str = "expected a duration like \"30s\", \"15min\", \"2h\" or \"1h30m\"";
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(format!("empty duration: {EXPECTED}"));
    }
    let mut seconds = 0.0;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_end);
        let value: f64 = number
            .parse()
            .map_err(|_| format!("`{text}` is not a duration: {EXPECTED}"))?;
        let after = after.trim_start();
        let unit_end = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_end);
        if unit.is_empty() {
            return Err(format!("`{text}` has no unit: {EXPECTED}"));
        }
        let Some(unit) = unit_seconds(&unit.to_ascii_lowercase()) else {
            return Err(format!("`{unit}` is not a time unit: {EXPECTED}"));
        };
        seconds += value * unit;
        rest = after.trim_start();
    }
    // Ten years is far beyond any sensible setting and keeps Duration arithmetic safe.
    if !seconds.is_finite() || seconds > 10.0 * 365.0 * 86_400.0 {
        return Err(format!("`{text}` is longer than ten years"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Formats a duration the way schedule files write it (`"30s"`, `"2h"`, `"1500ms"`).
pub fn format_duration(duration: Duration) -> String {
    let ms = duration.as_millis();
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("min", 60_000),
        ("s", 1000),
    ] {
        if ms >= size && ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// Parses a size in bytes: `"10MB"`, `"512KiB"`, `"1.5GB"`, `"2000B"`. KB/MB/GB are powers of
/// 1000, KiB/MiB/GiB powers of 1024; units are case-insensitive.
pub fn parse_size(text: &str) -> Result<u64, String> {
    const EXPECTED: &str = "expected a size like \"10MB\", \"512KiB\" or \"2GB\"";
    let trimmed = text.trim();
    let number_end = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(number_end);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size: {EXPECTED}"))?;
    let multiplier: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "b" => 1.0,
        "kb" | "k" => 1e3,
        "mb" | "m" => 1e6,
        "gb" | "g" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "" => return Err(format!("`{text}` has no unit: {EXPECTED}")),
        other => return Err(format!("`{other}` is not a size unit: {EXPECTED}")),
    };
    let bytes = value * multiplier;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(format!("`{text}` is too large"));
    }
    Ok(bytes.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_every_unit_and_compound() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("15min"), Ok(Duration::from_secs(900)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1h 30 min"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1d"), Ok(Duration::from_secs(86_400)));
        assert_eq!(
            parse_duration("2 weeks"),
            Ok(Duration::from_secs(1_209_600))
        );
    }

    #[test]
    fn bad_durations_say_what_is_wrong() {
        assert!(parse_duration("30").unwrap_err().contains("no unit"));
        assert!(
            parse_duration("30 parsecs")
                .unwrap_err()
                .contains("not a time unit")
        );
        assert!(parse_duration("").unwrap_err().contains("empty"));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("1..5s").is_err());
        assert!(parse_duration("20y").is_err());
        assert!(parse_duration("99999d").unwrap_err().contains("ten years"));
    }

    #[test]
    fn rates_with_units_decimals_and_periods() {
        let one = HostRate::parse("1/s").unwrap();
        assert_eq!(one.min_interval(), Duration::from_secs(1));
        let half = HostRate::parse("0.5/s").unwrap();
        assert_eq!(half.min_interval(), Duration::from_secs(2));
        let per_min = HostRate::parse("30/min").unwrap();
        assert_eq!(per_min.min_interval(), Duration::from_secs(2));
        let per_hour = HostRate::parse("100 / h").unwrap();
        assert_eq!(per_hour.min_interval(), Duration::from_millis(36_000));
        let every_five = HostRate::parse("1/5s").unwrap();
        assert_eq!(every_five.min_interval(), Duration::from_secs(5));
        assert!((HostRate::parse("4/s").unwrap().per_second() - 4.0).abs() < 1e-12);
        assert_eq!(
            HostRate::parse("2/d").unwrap().per,
            Duration::from_secs(86_400)
        );
    }

    #[test]
    fn bad_rates_are_refused() {
        assert!(HostRate::parse("1").unwrap_err().contains("not a rate"));
        assert!(
            HostRate::parse("fast/s")
                .unwrap_err()
                .contains("not a number")
        );
        assert!(HostRate::parse("0/s").unwrap_err().contains("positive"));
        assert!(HostRate::parse("-1/s").unwrap_err().contains("positive"));
        assert!(
            HostRate::parse("1/fortnight")
                .unwrap_err()
                .contains("not a period")
        );
        assert!(
            HostRate::parse("1/0s")
                .unwrap_err()
                .contains("longer than zero")
        );
        assert!(HostRate::parse("1e9/s").unwrap_err().contains("million"));
        assert!(HostRate::parse("NaN/s").is_err());
        // Past f64's range is not "not positive" (an adversarial user was told so).
        for huge in ["1e400/s", "inf/s"] {
            let error = HostRate::parse(huge).unwrap_err();
            assert!(error.contains("not a finite number"), "{huge}: {error}");
        }
        // A count so small that the gap would not fit a Duration is refused, not a panic.
        for tiny in ["1e-300/s", "0.00000000000000000001/s", "1/400d"] {
            let error = HostRate::parse(tiny).unwrap_err();
            assert!(error.contains("one request a year"), "{tiny}: {error}");
        }
        assert!(HostRate::parse("1/9w").is_ok());
    }

    #[test]
    fn sizes_decimal_and_binary() {
        assert_eq!(parse_size("10MB"), Ok(10_000_000));
        assert_eq!(parse_size("10 mb"), Ok(10_000_000));
        assert_eq!(parse_size("512KiB"), Ok(524_288));
        assert_eq!(parse_size("1.5GB"), Ok(1_500_000_000));
        assert_eq!(parse_size("2000B"), Ok(2000));
        assert!(parse_size("10").unwrap_err().contains("no unit"));
        assert!(
            parse_size("10 furlongs")
                .unwrap_err()
                .contains("not a size unit")
        );
        assert!(parse_size("big").is_err());
    }

    #[test]
    fn durations_format_back() {
        assert_eq!(format_duration(Duration::from_secs(7200)), "2h");
        assert_eq!(format_duration(Duration::from_secs(90)), "90s");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(HostRate::parse("1/s").unwrap().to_string(), "1/s");
        assert_eq!(HostRate::parse("0.5/min").unwrap().to_string(), "0.5/min");
        assert_eq!(HostRate::parse("1/5s").unwrap().to_string(), "1/5s");
    }
}
