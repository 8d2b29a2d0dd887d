//! Date parsing for sitemaps (W3C datetime) and feeds (RFC 822 / RFC 2822 and its relatives).
//!
//! - [`parse_w3c`]: the W3C profile of ISO 8601 that sitemaps.org requires for `<lastmod>`:
//!   `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, or a date with `Thh:mm[:ss[.s]]` and a zone (`Z`, `±hh:mm`,
//!   `±hhmm`). A missing zone is read as UTC; a space instead of `T` is accepted (feeds write it).
//! - [`parse_rfc822`]: RSS `pubDate` style, `[Weekday,] DD Mon YYYY hh:mm[:ss] ZONE`, with
//!   two-digit years (00–49 = 20xx, RFC 2822 §4.3), full month names, US zone names, `GMT±hh:mm`,
//!   and the asctime / JavaScript orders (`Sun Jan  4 16:29:06 2004`). A time without a zone is
//!   refused (which hour was meant is unknown); a bare date is midnight UTC.
//! - [`parse_any`]: the lenient reader for hints: W3C, then RFC 822, then RFC 822 with a missing
//!   zone read as UTC.
//!
//! Pure: no clock. Out-of-range fields (hour 25, day 99, offset -99:99) give `None`, never a panic.

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveTime, TimeZone, Utc};

/// Parses a W3C datetime (sitemaps.org `<lastmod>`, Atom dates). `None` if it is not one.
pub fn parse_w3c(input: &str) -> Option<DateTime<Utc>> {
    let s = input.trim();
    let b = s.as_bytes();
    let year = digits(b, 0, 4)?;
    let (mut month, mut day, mut i) = (1, 1, 4);
    if b.get(i) == Some(&b'-') {
        month = digits(b, i + 1, 2)?;
        i += 3;
        if b.get(i) == Some(&b'-') {
            day = digits(b, i + 1, 2)?;
            i += 3;
        }
    }
    let date = NaiveDate::from_ymd_opt(year as i32, month, day)?;
    if i == b.len() {
        return Some(Utc.from_utc_datetime(&date.and_time(NaiveTime::MIN)));
    }
    if !matches!(b[i], b'T' | b't' | b' ') || i + 1 == b.len() {
        return None;
    }
    i += 1;
    let hour = digits(b, i, 2)?;
    if b.get(i + 2) != Some(&b':') {
        return None;
    }
    let minute = digits(b, i + 3, 2)?;
    i += 5;
    let (mut second, mut nanos) = (0, 0);
    if b.get(i) == Some(&b':') {
        second = digits(b, i + 1, 2)?;
        i += 3;
        if b.get(i) == Some(&b'.') {
            let start = i + 1;
            let end = start + b[start..].iter().take_while(|c| c.is_ascii_digit()).count();
            if end == start {
                return None;
            }
            // Keep nanosecond precision at most: the first nine digits.
            let frac = &s[start..end.min(start + 9)];
            nanos = frac.parse::<u32>().ok()? * 10u32.pow(9 - frac.len() as u32);
            i = end;
        }
    }
    let time = NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)?;
    let rest = s[i..].trim_start();
    let offset = if rest.is_empty() || rest == "Z" || rest == "z" {
        0
    } else {
        numeric_offset(rest)?
    };
    let local = date.and_time(time);
    let fixed = FixedOffset::east_opt(offset)?;
    Some(
        fixed
            .from_local_datetime(&local)
            .single()?
            .with_timezone(&Utc),
    )
}

/// Parses an RFC 822 / RFC 2822 date as feeds write them. `None` if it is not one, or if it has a
/// time but no zone.
pub fn parse_rfc822(input: &str) -> Option<DateTime<Utc>> {
    rfc822(input, false)
}

/// Parses any date a sitemap or feed may hold: W3C first, then RFC 822, then RFC 822 with a
/// missing zone read as UTC.
pub fn parse_any(input: &str) -> Option<DateTime<Utc>> {
    parse_w3c(input)
        .or_else(|| rfc822(input, false))
        .or_else(|| rfc822(input, true))
}

/// The RFC 822 family reader; `zone_optional` reads a zone-less time as UTC.
fn rfc822(input: &str, zone_optional: bool) -> Option<DateTime<Utc>> {
    let cleaned = input.trim().replace(',', " ");
    let mut tokens = cleaned.split_whitespace().peekable();
    if tokens.peek().is_some_and(|t| weekday(t)) {
        tokens.next();
    }
    let (mut day, mut month, mut year) = (None, None, None);
    let (mut time, mut offset) = (None, None);
    for token in tokens {
        if offset.is_some() {
            // Only a trailing comment or a year (asctime with zone: `... +0000 2012`) may follow.
            if token.starts_with('(') {
                break;
            }
            if year.is_none() && token.len() == 4 && token.bytes().all(|c| c.is_ascii_digit()) {
                year = Some(token.parse::<i32>().ok()?);
                continue;
            }
            return None;
        }
        if token.bytes().all(|c| c.is_ascii_digit()) {
            if day.is_none() && token.len() <= 2 && year.is_none() {
                day = Some(token.parse::<u32>().ok()?);
            } else if year.is_none() && (token.len() == 4 || token.len() == 2) {
                year = Some(expand_year(token)?);
            } else {
                return None;
            }
        } else if let Some(m) = month_number(token).filter(|_| month.is_none()) {
            month = Some(m);
        } else if token.contains(':') && time.is_none() && token.as_bytes()[0].is_ascii_digit() {
            time = Some(clock_time(token)?);
        } else if time.is_some() || (day.is_some() && month.is_some() && year.is_some()) {
            offset = Some(zone_offset(token)?);
        } else {
            return None;
        }
    }
    let date = NaiveDate::from_ymd_opt(year?, month?, day?)?;
    let offset = match (time, offset) {
        (_, Some(o)) => o,
        (None, None) => 0,
        (Some(_), None) if zone_optional => 0,
        (Some(_), None) => return None,
    };
    let local = date.and_time(time.unwrap_or(NaiveTime::MIN));
    let fixed = FixedOffset::east_opt(offset)?;
    Some(
        fixed
            .from_local_datetime(&local)
            .single()?
            .with_timezone(&Utc),
    )
}

/// `n` ASCII digits at `at`, as a number.
fn digits(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let part = b.get(at..at + n)?;
    if !part.iter().all(u8::is_ascii_digit) {
        return None;
    }
    part.iter()
        .try_fold(0u32, |acc, &c| Some(acc * 10 + (c - b'0') as u32))
}

/// `+hh:mm`, `-hhmm` or `+hh` as seconds east of UTC; hours ≤ 23 and minutes ≤ 59.
fn numeric_offset(s: &str) -> Option<i32> {
    let b = s.as_bytes();
    let sign = match b.first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (hours, minutes) = match b.len() {
        3 => (digits(b, 1, 2)?, 0),
        5 => (digits(b, 1, 2)?, digits(b, 3, 2)?),
        6 if b[3] == b':' => (digits(b, 1, 2)?, digits(b, 4, 2)?),
        _ => return None,
    };
    if hours > 23 || minutes > 59 {
        return None;
    }
    Some(sign * (hours * 3600 + minutes * 60) as i32)
}

/// A zone token: numeric, `GMT`/`UT`/`UTC`/`Z`, `Etc/GMT`, `GMT±hh:mm`, or a North American or
/// central European abbreviation.
fn zone_offset(token: &str) -> Option<i32> {
    let upper = token.to_ascii_uppercase();
    let name = upper.strip_prefix("ETC/").unwrap_or(&upper);
    for prefix in ["GMT", "UTC", "UT"] {
        if let Some(rest) = name.strip_prefix(prefix)
            && (rest.starts_with('+') || rest.starts_with('-'))
        {
            return numeric_offset(rest);
        }
    }
    if token.starts_with('+') || token.starts_with('-') {
        return numeric_offset(token);
    }
    let hours = match name {
        "GMT" | "UT" | "UTC" | "Z" | "WET" => 0,
        "BST" | "CET" | "MET" | "WEST" => 1,
        "CEST" | "MEST" | "EET" => 2,
        "EEST" => 3,
        "AT" | "AST" | "EDT" => -4,
        "ET" | "EST" | "CDT" => -5,
        "CT" | "CST" | "MDT" => -6,
        "MT" | "MST" | "PDT" => -7,
        "PT" | "PST" => -8,
        _ => return None,
    };
    Some(hours * 3600)
}

/// `h:m[:s]` with 1–2 digit parts.
fn clock_time(token: &str) -> Option<NaiveTime> {
    let parts: Vec<&str> = token.split(':').collect();
    if !(2..=3).contains(&parts.len())
        || parts
            .iter()
            .any(|p| p.is_empty() || p.len() > 2 || !p.bytes().all(|c| c.is_ascii_digit()))
    {
        return None;
    }
    let n = |i: usize| parts.get(i).map_or(Some(0), |p| p.parse::<u32>().ok());
    NaiveTime::from_hms_opt(n(0)?, n(1)?, n(2)?)
}

/// A four-digit year as is; two digits per RFC 2822 §4.3 (00–49 = 2000s, 50–99 = 1900s).
fn expand_year(token: &str) -> Option<i32> {
    let y: i32 = token.parse().ok()?;
    Some(match token.len() {
        2 if y < 50 => 2000 + y,
        2 => 1900 + y,
        _ => y,
    })
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const FULL_MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// 1–12 for an English month name (abbreviated, full, or `Sept`).
fn month_number(token: &str) -> Option<u32> {
    let t = token.trim_end_matches('.').to_ascii_lowercase();
    if t == "sept" {
        return Some(9);
    }
    MONTHS
        .iter()
        .zip(FULL_MONTHS)
        .position(|(short, full)| t == *short || t == full)
        .map(|i| i as u32 + 1)
}

/// Whether `token` is an English weekday name (abbreviated or full).
fn weekday(token: &str) -> bool {
    let t = token.to_ascii_lowercase();
    ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
        .iter()
        .any(|d| {
            t.starts_with(d)
                && (t.len() == 3
                    || t.ends_with("day")
                    || t == "tues"
                    || t == "thur"
                    || t == "thurs")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iso(d: Option<DateTime<Utc>>) -> Option<String> {
        d.map(|d| d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
    }

    #[test]
    fn w3c_forms() {
        assert_eq!(iso(parse_w3c("2014")).unwrap(), "2014-01-01T00:00:00.000Z");
        assert_eq!(
            iso(parse_w3c("1997-07-16T19:20:30.45+01:00")).unwrap(),
            "1997-07-16T18:20:30.450Z"
        );
        assert_eq!(
            iso(parse_w3c("2004-07-08 23:56:58 -00:20")).unwrap(),
            "2004-07-09T00:16:58.000Z"
        );
        for bad in [
            "blah",
            "22013",
            "2013-01-27-01",
            "2003-12-31T25:14:55Z",
            "2013-01-28T11:30:00-06:00Textra",
            "9999-12-31T23:59:59-99:99",
            "2014-06-03T",
            "",
        ] {
            assert_eq!(parse_w3c(bad), None, "{bad}");
        }
    }

    #[test]
    fn rfc822_forms() {
        assert_eq!(
            iso(parse_rfc822("Thu, 05 Jan 17 13:34:52 +0100")).unwrap(),
            "2017-01-05T12:34:52.000Z"
        );
        assert_eq!(
            iso(parse_rfc822("Wed, 19 Feb 2012 22:40:00 GMT-01:01")).unwrap(),
            "2012-02-19T23:41:00.000Z"
        );
        assert_eq!(parse_rfc822("05 Jan 17 13:34:55"), None);
        assert_eq!(
            iso(parse_any("05 Jan 17 13:34:55")).unwrap(),
            "2017-01-05T13:34:55.000Z"
        );
        assert_eq!(
            iso(parse_any("Sun Jul 15 01:16:00 +0000 2012")).unwrap(),
            "2012-07-15T01:16:00.000Z"
        );
        for bad in [
            "",
            "incorrect",
            "Sun, 99 Jun 2009 12:00:00 GMT",
            "Sun, 16 Dec 2012 1:2:3:4 GMT",
            "Sun, 16 Dec 2012 11:47:32 +zz:00",
        ] {
            assert_eq!(parse_any(bad), None, "{bad}");
        }
    }
}
