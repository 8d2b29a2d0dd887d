//! Cron expressions as schedule files write them, turned into [`cron::Schedule`]s.
//!
//! The `cron` crate wants six or seven fields with seconds first
//! (`sec min hour day-of-month month day-of-week [year]`). People mostly write the classic
//! five-field form (`min hour day-of-month month day-of-week`), so a five-field expression gets
//! `0 ` prefixed (at second 0). `@hourly`, `@daily`, `@weekly`, `@monthly` and `@yearly` pass through.
//!
//! Day-of-week numbers are a trap: classic cron counts 0 (or 7) = Sunday, 1 = Monday .. 6 =
//! Saturday, while the `cron` crate counts 1 = Sunday .. 7 = Saturday and rejects 0. Read with the
//! crate's numbering, `0 9 * * 1` would silently fire on Sundays. freshet therefore reads
//! day-of-week numbers the classic way in every form and hands the crate day names
//! (`Mon-Fri`, `Sun`), which mean the same thing in both worlds.
//!
//! Unlike classic cron, when both day-of-month and day-of-week are restricted a time must match
//! both (the `cron` crate's rule). All times are UTC.

use std::collections::BTreeSet;
use std::str::FromStr;

use chrono::{TimeZone, Utc};

/// What a cron expression must look like, for error messages.
const FORMS: &str = "expected 5 fields (minute hour day month weekday, e.g. \"0 */6 * * *\"; \
                     \"0 \" is prefixed for seconds) or 6-7 fields with seconds first \
                     (e.g. \"0 0 */6 * * *\")";

/// Day names in classic order: index 0 = Sunday.
const DAY_NAMES: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/// Parses a cron expression in the five-, six- or seven-field form (see the module docs).
/// The error is one line that says which forms are accepted.
pub fn parse_cron(text: &str) -> Result<cron::Schedule, String> {
    let trimmed = text.trim();
    if trimmed.starts_with('@') {
        return cron::Schedule::from_str(trimmed)
            .map_err(|_| format!("`{trimmed}` is not a known shorthand: use @hourly, @daily, @weekly, @monthly or @yearly, or {FORMS}"));
    }
    let mut fields: Vec<String> = trimmed.split_whitespace().map(str::to_owned).collect();
    match fields.len() {
        5 => fields.insert(0, "0".to_owned()),
        6 | 7 => {}
        n => {
            return Err(format!(
                "cron expression `{trimmed}` has {n} fields: {FORMS}"
            ));
        }
    }
    in_range(&fields).map_err(|err| format!("bad cron expression `{trimmed}`: {err}; {FORMS}"))?;
    fields[5] = classic_day_of_week(&fields[5])
        .map_err(|err| format!("cron expression `{trimmed}`: {err}"))?;
    let schedule = cron::Schedule::from_str(&fields.join(" ")).map_err(|err| {
        let err = err.to_string().replace('\n', " ");
        format!("bad cron expression `{trimmed}`: {err}; {FORMS}")
    })?;
    // A schedule that never fires (e.g. 30 February) would silently disable what it drives.
    let origin = Utc.with_ymd_and_hms(2000, 1, 1, 0, 0, 0).single();
    if origin.is_some_and(|origin| schedule.after(&origin).next().is_none()) {
        return Err(format!("cron expression `{trimmed}` never fires"));
    }
    Ok(schedule)
}

/// The fields before day-of-week (seconds first), their names and the numbers they take.
const FIELD_RANGES: [(&str, u32, u32); 5] = [
    ("second", 0, 59),
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day of month", 1, 31),
    ("month", 1, 12),
];

/// Checks every number of the fields before day-of-week against its range (a step after `/`
/// is not a value). The `cron` crate checks them too, but its message for a minute of 61 was
/// "Minutes must be less than 59".
fn in_range(fields: &[String]) -> Result<(), String> {
    for (field, &(name, low, high)) in fields.iter().zip(FIELD_RANGES.iter()) {
        for item in field.split(',') {
            let base = item.split_once('/').map_or(item, |(base, _)| base);
            for end in base.split('-') {
                let Ok(n) = end.parse::<u64>() else {
                    continue;
                };
                if n < u64::from(low) || n > u64::from(high) {
                    return Err(format!("{name} {n} is out of range {low}-{high}"));
                }
            }
        }
    }
    Ok(())
}

/// Rewrites a day-of-week field read with classic numbering (0 or 7 = Sunday) into day names.
/// `*` and `?` pass through; names may be mixed with numbers.
fn classic_day_of_week(field: &str) -> Result<String, String> {
    if field == "*" || field == "?" {
        return Ok(field.to_owned());
    }
    let mut days = BTreeSet::new();
    for item in field.split(',') {
        let (base, step) = match item.split_once('/') {
            Some((base, step)) => {
                let step: usize =
                    step.parse().ok().filter(|&s| s > 0).ok_or_else(|| {
                        format!("day-of-week step `{step}` is not a positive number")
                    })?;
                (base, Some(step))
            }
            None => (item, None),
        };
        let (first, last) = if base == "*" || base == "?" {
            (0, 6)
        } else if let Some((a, b)) = base.split_once('-') {
            let (a, b) = (day_number(a)?, day_number(b)?);
            // 7 closes a range as Sunday (`1-7` = Monday through Sunday).
            let b = if b == 0 && a > 0 { 7 } else { b };
            if a > b {
                return Err(format!(
                    "day-of-week range `{base}` runs backwards (0 or 7 = Sunday, 1 = Monday .. 6 = Saturday)"
                ));
            }
            (a, b)
        } else {
            let a = day_number(base)?;
            (a, if step.is_some() { 6 } else { a })
        };
        for day in (first..=last).step_by(step.unwrap_or(1)) {
            days.insert(day % 7);
        }
    }
    Ok(days
        .into_iter()
        .map(|day| DAY_NAMES[day])
        .collect::<Vec<_>>()
        .join(","))
}

/// One day of the week, as a classic number (0-7) or a name, to 0 = Sunday .. 6 = Saturday
/// (7 stays 7 so that ranges can end on it).
fn day_number(text: &str) -> Result<usize, String> {
    if let Ok(n) = text.parse::<usize>() {
        return match n {
            0..=7 => Ok(n),
            _ => Err(format!(
                "day of week {n} is out of range: 0 or 7 = Sunday, 1 = Monday .. 6 = Saturday"
            )),
        };
    }
    let lower = text.to_ascii_lowercase();
    DAY_NAMES
        .iter()
        // `get`, not `[..3]`: a non-ASCII day name must be an error, not a slice panic.
        .position(|name| lower.get(..3) == Some(name.to_ascii_lowercase().as_str()))
        .filter(|_| is_day_name(&lower))
        .ok_or_else(|| format!("`{text}` is not a day of the week (use 0-7 or Sun..Sat)"))
}

/// True for the spellings of day names the `cron` crate accepts.
fn is_day_name(lower: &str) -> bool {
    matches!(
        lower,
        "sun"
            | "sunday"
            | "mon"
            | "monday"
            | "tue"
            | "tues"
            | "tuesday"
            | "wed"
            | "wednesday"
            | "thu"
            | "thurs"
            | "thursday"
            | "fri"
            | "friday"
            | "sat"
            | "saturday"
    )
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Datelike, Timelike, Weekday};

    use super::*;

    fn next_after(expr: &str, at: &str) -> DateTime<Utc> {
        let at: DateTime<Utc> = at.parse().unwrap();
        parse_cron(expr).unwrap().after(&at).next().unwrap()
    }

    #[test]
    fn a_non_ascii_day_of_week_is_an_error_not_a_panic() {
        // Found by tests/fuzz_parsers.rs: `lower[..3]` sliced inside a multi-byte character.
        for day in ["*😀", "😀5", "mé", "tué-fri"] {
            let err = parse_cron(&format!("0 0 * * {day}")).unwrap_err();
            assert!(err.contains("day of the week"), "{day}: {err}");
        }
    }

    #[test]
    fn six_field_form_as_the_design_writes_it() {
        let next = next_after("0 0 */6 * * *", "2026-11-21T07:30:00Z");
        assert_eq!(
            next,
            "2026-11-21T12:00:00Z".parse::<DateTime<Utc>>().unwrap()
        );
    }

    #[test]
    fn five_field_form_gets_seconds_prefixed() {
        let next = next_after("*/15 * * * *", "2026-11-21T07:31:10Z");
        assert_eq!((next.hour(), next.minute(), next.second()), (7, 45, 0));
    }

    #[test]
    fn seven_field_form_with_year() {
        let next = next_after("0 30 9 1 1 * 2030", "2026-11-21T00:00:00Z");
        assert_eq!(next.year(), 2030);
    }

    #[test]
    fn classic_day_numbers_mean_classic_days() {
        // 2026-11-21 is a Saturday.
        assert_eq!(
            next_after("0 9 * * 1", "2026-11-21T00:00:00Z").weekday(),
            Weekday::Mon
        );
        assert_eq!(
            next_after("0 9 * * 0", "2026-11-21T00:00:00Z").weekday(),
            Weekday::Sun
        );
        assert_eq!(
            next_after("0 9 * * 7", "2026-11-21T00:00:00Z").weekday(),
            Weekday::Sun
        );
        assert_eq!(
            next_after("0 0 9 * * 6", "2026-11-20T00:00:00Z").weekday(),
            Weekday::Sat
        );
        let weekdays = next_after("0 9 * * 1-5", "2026-11-21T00:00:00Z");
        assert_eq!(weekdays.weekday(), Weekday::Mon);
        let through_sunday = next_after("0 9 * * 6-7", "2026-11-21T10:00:00Z");
        assert_eq!(through_sunday.weekday(), Weekday::Sun);
        assert_eq!(
            next_after("0 9 * * Mon-Fri", "2026-11-21T00:00:00Z").weekday(),
            Weekday::Mon
        );
    }

    #[test]
    fn day_of_week_translation() {
        assert_eq!(classic_day_of_week("1-5").unwrap(), "Mon,Tue,Wed,Thu,Fri");
        assert_eq!(classic_day_of_week("0,6").unwrap(), "Sun,Sat");
        assert_eq!(classic_day_of_week("*/2").unwrap(), "Sun,Tue,Thu,Sat");
        assert_eq!(classic_day_of_week("1/3").unwrap(), "Mon,Thu");
        assert_eq!(classic_day_of_week("sat-7").unwrap(), "Sun,Sat");
        assert_eq!(classic_day_of_week("?").unwrap(), "?");
        assert!(
            classic_day_of_week("8")
                .unwrap_err()
                .contains("out of range")
        );
        assert!(
            classic_day_of_week("5-1")
                .unwrap_err()
                .contains("backwards")
        );
        assert!(
            classic_day_of_week("Funday")
                .unwrap_err()
                .contains("not a day")
        );
        assert!(classic_day_of_week("*/0").unwrap_err().contains("step"));
    }

    #[test]
    fn shorthands_pass_through() {
        let next = next_after("@daily", "2026-11-21T07:30:00Z");
        assert_eq!((next.day(), next.hour()), (22, 0));
        assert!(
            parse_cron("@fortnightly")
                .unwrap_err()
                .contains("shorthand")
        );
    }

    #[test]
    fn errors_name_the_accepted_forms() {
        let wrong_count = parse_cron("0 0 *").unwrap_err();
        assert!(wrong_count.contains("has 3 fields"), "{wrong_count}");
        assert!(wrong_count.contains("5 fields"), "{wrong_count}");
        let bad_minute = parse_cron("0 99 * * * *").unwrap_err();
        assert!(
            bad_minute.starts_with("bad cron expression"),
            "{bad_minute}"
        );
        assert!(bad_minute.contains("seconds first"), "{bad_minute}");
        assert!(!bad_minute.contains('\n'));
        // Each field's range, named as the five-field form writes it.
        for (expr, said) in [
            ("61 * * * *", "minute 61 is out of range 0-59"),
            ("0 24 * * *", "hour 24 is out of range 0-23"),
            ("0 0 0 0 * *", "day of month 0 is out of range 1-31"),
            ("0 0 1 1-13 *", "month 13 is out of range 1-12"),
            ("60 0 0 * * *", "second 60 is out of range 0-59"),
            ("5,70/5 * * * *", "minute 70 is out of range 0-59"),
        ] {
            let error = parse_cron(expr).unwrap_err();
            assert!(error.contains(said), "{expr}: {error}");
        }
        assert!(parse_cron("59 23 31 12 *").is_ok());
        assert!(parse_cron("*/59 0-23 1-31/2 Jan-Dec *").is_ok());
        assert!(
            parse_cron("0 0 0 30 2 *")
                .unwrap_err()
                .contains("never fires")
        );
    }
}
