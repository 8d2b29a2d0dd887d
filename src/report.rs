//! Report rendering: a table of named columns printed as aligned text, JSON (an array of objects
//! with the column names as keys, in column order) or CSV. The report commands build a
//! [`Report`]; nothing here knows about the database.

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
        let _ = writer.write_record(&self.columns);
        for row in &self.rows {
            let _ = writer.write_record(row.iter().map(plain));
        }
        String::from_utf8(writer.into_inner().unwrap_or_default()).unwrap_or_default()
    }

    fn to_table(&self) -> String {
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(plain).collect())
            .collect();
        let widths: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, name)| {
                cells
                    .iter()
                    .map(|r| r[i].chars().count())
                    .chain([name.len()])
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
        line(&mut out, &mut self.columns.iter().copied());
        for row in &cells {
            line(&mut out, &mut row.iter().map(String::as_str));
        }
        if self.rows.is_empty() {
            out.push_str("(no rows)\n");
        }
        out
    }
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
    fn table_aligns_columns() {
        let text = sample().render(Format::Table);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0].find("checks"), lines[1].find('3'));
    }
}
