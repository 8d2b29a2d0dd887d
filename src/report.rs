//! Report rendering: a table of named columns printed as aligned text, JSON (an array of objects
//! with the column names as keys, in column order) or CSV. The report commands build a
//! [`Report`]; nothing here knows about the database.
//!
//! Durations: a column whose name ends in `_days` holds days as a number in JSON (machines keep
//! one unit), and in the table and CSV, which people read, a value in the unit that fits it
//! (`45 s`, `3.2 min`, `1.5 h`, `2.1 d`) under the name without `_days`: a copy refreshed every
//! few minutes must not read `0`.

use std::fmt::Write as _;

use serde_json::{Map, Value};

/// Output formats of the report commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns for people.
    #[default]
    Table,
    /// An array of objects.
    Json,
    /// RFC 4180 CSV with a header row.
    Csv,
}

/// Rows of named columns.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Column names (snake_case: they are the JSON keys and the CSV header).
    pub columns: Vec<&'static str>,
    /// Rows, each with one value per column.
    pub rows: Vec<Vec<Value>>,
}

impl Report {
    /// An empty report with these columns.
    pub fn new(columns: &[&'static str]) -> Self {
        Report {
            columns: columns.to_vec(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; it must have one value per column.
    pub fn push(&mut self, row: Vec<Value>) {
        debug_assert_eq!(row.len(), self.columns.len());
        self.rows.push(row);
    }

    /// Renders in `format`.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Table => self.to_table(),
            Format::Json => self.to_json(),
            Format::Csv => self.to_csv(),
        }
    }

    fn objects(&self) -> Vec<Value> {
        self.rows
            .iter()
            .map(|row| {
                let object: Map<String, Value> = self
                    .columns
                    .iter()
                    .zip(row)
                    .map(|(name, value)| (name.to_string(), value.clone()))
                    .collect();
                Value::Object(object)
            })
            .collect()
    }

    fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.objects()).unwrap_or_default();
        text.push('\n');
        text
    }

    fn to_csv(&self) -> String {
        let mut writer = csv::Writer::from_writer(Vec::new());
        let _ = writer.write_record(self.columns.iter().map(|c| human_name(c)));
        for row in &self.rows {
            let _ = writer.write_record(self.columns.iter().zip(row).map(|(c, v)| cell(c, v)));
        }
        String::from_utf8(writer.into_inner().unwrap_or_default()).unwrap_or_default()
    }

    fn to_table(&self) -> String {
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                self.columns
                    .iter()
                    .zip(r)
                    .map(|(c, v)| cell(c, v))
                    .collect()
            })
            .collect();
        let widths: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, name)| {
                cells
                    .iter()
                    .map(|r| r[i].chars().count())
                    .chain([human_name(name).len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        let line = |out: &mut String, values: &mut dyn Iterator<Item = &str>| {
            let mut first = true;
            for (value, width) in values.zip(&widths) {
                if !first {
                    out.push_str("  ");
                }
                first = false;
                let _ = write!(out, "{value:<width$}");
            }
            while out.ends_with(' ') {
                out.pop();
            }
            out.push('\n');
        };
        line(&mut out, &mut self.columns.iter().map(|c| human_name(c)));
        for row in &cells {
            line(&mut out, &mut row.iter().map(String::as_str));
        }
        if self.rows.is_empty() {
            out.push_str("(no rows)\n");
        }
        out
    }
}

/// A column's name for people: a `_days` column carries its unit in each value.
fn human_name(column: &str) -> &str {
    column.strip_suffix("_days").unwrap_or(column)
}

/// A value as text for people, in its column: days in the unit that fits, else [`plain`].
fn cell(column: &str, value: &Value) -> String {
    match value.as_f64() {
        Some(days) if column.ends_with("_days") => human_days(days),
        _ => plain(value),
    }
}

/// A duration given in days, in the unit that fits it: seconds under a minute, minutes under an
/// hour, hours under a day, else days; three significant figures below 10 of the unit, one
/// decimal above (`0.0864 s`, `3.2 min`, `1.5 h`, `2.1 d`, `324.0 d`).
pub fn human_days(days: f64) -> String {
    if !days.is_finite() {
        return String::new();
    }
    if days == 0.0 {
        return "0 s".to_string();
    }
    let sign = if days < 0.0 { "-" } else { "" };
    let seconds = days.abs() * 86_400.0;
    let (value, unit) = if seconds < 60.0 {
        (seconds, "s")
    } else if seconds < 3_600.0 {
        (seconds / 60.0, "min")
    } else if seconds < 86_400.0 {
        (seconds / 3_600.0, "h")
    } else {
        (seconds / 86_400.0, "d")
    };
    let decimals = if value >= 1.0 {
        1
    } else {
        // Three significant figures: 0.0864 s, not 0.1 s nor 0.
        (2 - value.log10().floor() as i32).clamp(1, 9) as usize
    };
    format!("{sign}{value:.decimals$} {unit}")
}

/// A value as plain text: strings unquoted, null empty, floats with at most 4 decimals.
fn plain(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap_or(0.0);
            let text = format!("{x:.4}");
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        }
        other => other.to_string(),
    }
}

/// A float as a JSON value (null when not finite).
pub fn float(x: Option<f64>) -> Value {
    x.filter(|v| v.is_finite())
        .map(Value::from)
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Report {
        let mut report = Report::new(&["url", "checks", "rate"]);
        report.push(vec![json!("http://a/x,y"), json!(3), json!(0.12345)]);
        report.push(vec![json!("http://b/"), json!(10), Value::Null]);
        report
    }

    #[test]
    fn json_keeps_column_order_and_types() {
        let text = sample().render(Format::Json);
        let parsed: Vec<Value> = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed[0]["checks"], json!(3));
        assert!(parsed[1]["rate"].is_null());
        assert!(text.find("\"url\"").unwrap() < text.find("\"checks\"").unwrap());
    }

    #[test]
    fn csv_quotes_commas() {
        let text = sample().render(Format::Csv);
        assert_eq!(text.lines().next(), Some("url,checks,rate"));
        assert_eq!(text.lines().nth(1), Some("\"http://a/x,y\",3,0.1235"));
    }

    #[test]
    fn durations_read_in_the_unit_that_fits() {
        assert_eq!(human_days(3.2 / 1440.0), "3.2 min");
        assert_eq!(human_days(1.5 / 24.0), "1.5 h");
        assert_eq!(human_days(2.1), "2.1 d");
        assert_eq!(human_days(45.0 / 86_400.0), "45.0 s");
        // A copy refreshed every few minutes: the JSON's 1e-6 days is not 0 for people.
        assert_eq!(human_days(1e-6), "0.0864 s");
        assert_eq!(human_days(0.0), "0 s");
        assert_eq!(human_days(-2.0 / 24.0), "-2.0 h");
    }

    #[test]
    fn day_columns_carry_units_in_table_and_csv_and_stay_days_in_json() {
        let mut report = Report::new(&["url", "expected_age_days"]);
        report.push(vec![json!("http://a/"), json!(5e-6)]);
        report.push(vec![json!("http://b/"), json!(3.0 / 1440.0)]);
        let table = report.render(Format::Table);
        assert!(table.lines().next().unwrap().ends_with("expected_age"));
        assert!(table.contains("0.432 s"), "{table}");
        assert!(table.contains("3.0 min"), "{table}");
        let csv = report.render(Format::Csv);
        assert_eq!(csv.lines().next(), Some("url,expected_age"));
        assert_eq!(csv.lines().nth(1), Some("http://a/,0.432 s"));
        let json: Vec<Value> = serde_json::from_str(&report.render(Format::Json)).unwrap();
        assert_eq!(json[0]["expected_age_days"], json!(5e-6));
    }

    #[test]
    fn table_aligns_columns() {
        let text = sample().render(Format::Table);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0].find("checks"), lines[1].find('3'));
    }
}
