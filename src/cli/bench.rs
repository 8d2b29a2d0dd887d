//! `freshet bench`: the figures to read before sizing a deployment. Each part (`plan`, `run`,
//! `sitemap`, `dedup`) runs at every size given by `--pages` and prints a table with one column per size
//! (how each cost grows), or with `--json` one object keyed by part whose figures are numbers with
//! their unit in the key. Timings are printed, never asserted: this is the one place in freshet
//! that reads the wall clock (`std::time::Instant`) on purpose.

use std::io::Write;

use serde_json::{Map, Value};

use super::bench_figures::Figures;
use super::{bench_dedup, bench_plan, bench_run, bench_sitemap};

/// Arguments of `freshet bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// URLs each part runs on; several sizes, comma-separated (`1000000,10000000`), run one after
    /// the other and are printed side by side. The plan part plans this many URLs, the run part
    /// has this many known (and checks at most 20,000 of them), the sitemap part reads a sitemap
    /// listing this many, the dedup part indexes this many simhashes.
    #[arg(long, value_delimiter = ',', default_value = "1000000")]
    pub pages: Vec<usize>,
    /// Hosts the plan and run parts spread their URLs over (default: one host per 100 URLs; for
    /// the run part at most 2,000, each host holding two sockets open for a while).
    #[arg(long)]
    pub hosts: Option<usize>,
    /// Which part to run.
    #[arg(long, value_enum, default_value = "all")]
    pub only: Part,
    /// Print one JSON object keyed by part instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Run the run part on this PostgreSQL server instead of a SQLite file: a postgres:// URL of
    /// any database there whose user may create databases; each pass gets a new database, dropped
    /// afterwards.
    #[arg(long, value_name = "URL")]
    pub postgres: Option<String>,
}

/// `--only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// Every part.
    All,
    /// The planner: from-scratch planning and the incremental update after one observation.
    #[value(alias = "planner")]
    Plan,
    /// The real refresher against a loopback web: checks per second on a 90% 304 / 10% changed
    /// mix, and memory per known URL.
    Run,
    /// The sitemap reader against a raw quick-xml scan of the same bytes, and its memory.
    Sitemap,
    /// Extraction, fingerprints and near-duplicate lookup.
    Dedup,
}

/// Runs `freshet bench`; returns the exit code.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let sizes: Vec<usize> = args.pages.iter().map(|&p| p.max(1)).collect();
    let parts: Vec<Part> = match args.only {
        // The sitemap first: its peak memory is read before the planner has held gigabytes.
        Part::All => vec![Part::Sitemap, Part::Run, Part::Plan, Part::Dedup],
        one => vec![one],
    };
    let hosts = args.hosts;
    let postgres = args.postgres;
    let results = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
        let mut results: Vec<(Part, Vec<Figures>)> = Vec::new();
        for part in parts {
            let mut per_size = Vec::new();
            for &pages in &sizes {
                let default_hosts = match part {
                    Part::Run => (pages / 100).min(bench_run::DEFAULT_MAX_HOSTS),
                    _ => pages / 100,
                };
                let hosts = hosts.unwrap_or(default_hosts).clamp(1, pages);
                per_size.push(match part {
                    Part::Plan => bench_plan::run(pages, hosts)?,
                    Part::Run => bench_run::run(pages, hosts, postgres.as_deref())?,
                    Part::Sitemap => bench_sitemap::run(pages)?,
                    Part::Dedup => bench_dedup::run(pages),
                    Part::All => unreachable!("expanded above"),
                });
            }
            results.push((part, per_size));
        }
        Ok(results)
    })
    .await??;
    let mut out = super::output::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&as_json(&results))?)?;
    } else {
        write_table(&mut out, &args.pages, &results)?;
    }
    Ok(0)
}

fn part_name(part: Part) -> &'static str {
    match part {
        Part::All => "all",
        Part::Plan => "plan",
        Part::Run => "run",
        Part::Sitemap => "sitemap",
        Part::Dedup => "dedup",
    }
}

/// One object keyed by part; a part's value is its figures, or a list of them (one per size,
/// in `--pages` order) when several sizes ran.
fn as_json(results: &[(Part, Vec<Figures>)]) -> Value {
    let object = |figures: &Figures| {
        Value::Object(
            figures
                .iter()
                .map(|&(key, value)| (key.to_string(), number(value)))
                .collect(),
        )
    };
    let mut top = Map::new();
    for (part, per_size) in results {
        let value = match per_size.as_slice() {
            [one] => object(one),
            many => Value::Array(many.iter().map(object).collect()),
        };
        top.insert(part_name(*part).to_string(), value);
    }
    Value::Object(top)
}

/// A figure as a JSON number: whole numbers as integers.
fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9e15 {
        Value::from(value as i64)
    } else {
        serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
    }
}

/// The table: per part, one row per figure and one column per size.
fn write_table(
    out: &mut dyn Write,
    sizes: &[usize],
    results: &[(Part, Vec<Figures>)],
) -> std::io::Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    writeln!(out, "freshet bench on {cores} cores")?;
    for (part, per_size) in results {
        writeln!(out)?;
        write!(out, "{:<34}", part_name(*part))?;
        for size in sizes {
            write!(out, " {:>14}", format!("{size} URLs"))?;
        }
        writeln!(out)?;
        let Some(first) = per_size.first() else {
            continue;
        };
        for (row, &(key, _)) in first.iter().enumerate() {
            write!(out, "  {key:<32}")?;
            for figures in per_size {
                let cell = figures.get(row).map_or(String::new(), |&(_, v)| shown(v));
                write!(out, " {cell:>14}")?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

/// A figure for the table: whole numbers and large ones without decimals, others to four
/// significant digits.
fn shown(value: f64) -> String {
    if value == 0.0 || !value.is_finite() || value.abs() >= 1000.0 || value.fract() == 0.0 {
        return format!("{value:.0}");
    }
    let decimals = (3 - value.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{value:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_size_gives_objects_and_several_give_lists() {
        let figures: Figures = vec![("urls", 2000.0), ("seconds", 0.25)];
        let one = as_json(&[(Part::Plan, vec![figures.clone()])]);
        assert_eq!(one["plan"]["urls"], 2000);
        assert_eq!(one["plan"]["seconds"], 0.25);
        let two = as_json(&[(Part::Plan, vec![figures.clone(), figures])]);
        assert_eq!(two["plan"][1]["urls"], 2000);
        assert_eq!(shown(0.000123), "0.0001230");
        assert_eq!(shown(0.61181), "0.6118");
        assert_eq!(shown(12.5), "12.50");
    }
}
