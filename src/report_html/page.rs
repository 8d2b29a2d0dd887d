//! The HTML page around the plots: one self-contained document (inline CSS and SVG, no script,
//! no fonts or anything else fetched), readable on a phone (the SVGs scale down to a width where
//! their text stays legible, then scroll sideways, as wide tables do) and in print (a print
//! stylesheet: no navigation, no page break inside a figure).
//!
//! Every plot sits in `<figure id="plot-…" class="plot">`, the ids the browser test looks for.

use std::fmt::Write as _;

use super::gather::{ReportData, duration_text};
use super::plots::{self, Measure};
use crate::clock::ms_to_rfc3339;

const CSS: &str = r#"
:root { color-scheme: light; --ink: #1b1f23; --muted: #57606a; --line: #d0d7de; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 70rem; padding: 1rem; color: var(--ink);
       font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
h1 { font-size: 1.6rem; margin: 0.5rem 0; }
h2 { font-size: 1.25rem; margin: 2rem 0 0.5rem; border-bottom: 1px solid var(--line); }
p.note, figcaption { color: var(--muted); font-size: 0.9rem; }
nav ul { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; padding: 0; list-style: none; }
figure { margin: 0.5rem 0 1.5rem; overflow-x: auto; }
svg.chart { display: block; width: 100%; height: auto; min-width: 34rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
th, td { border-bottom: 1px solid var(--line); padding: 0.3rem 0.5rem; text-align: left;
         vertical-align: top; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.url { word-break: break-all; min-width: 12rem; }
dl.summary { display: grid; grid-template-columns: max-content 1fr; gap: 0.1rem 1rem; }
dl.summary dt { color: var(--muted); }
dl.summary dd { margin: 0; }
@media (max-width: 40rem) {
  body { padding: 0.5rem; font-size: 15px; }
  th, td { padding: 0.25rem; }
  td.url { min-width: 9rem; }
}
@media print {
  nav { display: none; }
  body { max-width: none; font-size: 10pt; }
  h2 { break-after: avoid; }
  figure, tr { break-inside: avoid; }
  .scroll, figure { overflow: visible; }
  svg.chart { min-width: 0; }
}
"#;

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

/// The sections: id, heading, what the reader sees.
const SECTIONS: [(&str, &str); 9] = [
    ("staleness-age", "Mean age of the copies over time"),
    ("staleness-share", "Share of the copies stale over time"),
    ("copy-ages", "How old the copies are now"),
    ("rates", "Learnt change rates against planned visits"),
    ("host-requests", "Checks per host against its limit"),
    ("budget", "Budget spent against budget, per site"),
    ("errors", "Errors by kind"),
    ("stalest", "The stalest copies, and why"),
    ("duplicates", "Duplicate classes"),
];

/// The whole page for `data`, read from `db`.
pub fn render(data: &ReportData, db: &str) -> anyhow::Result<String> {
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>freshet report: {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n\
         <header>\n<h1>freshet report</h1>\n",
        escape(db)
    );
    let _ = writeln!(
        html,
        "<dl class=\"summary\"><dt>database</dt><dd>{}</dd><dt>as of</dt><dd>{}</dd>\
         <dt>sites</dt><dd>{}</dd><dt>pages</dt><dd>{}</dd><dt>checks</dt><dd>{}</dd></dl>",
        escape(db),
        ms_to_rfc3339(data.now_ms),
        escape(&data.sites.join(", ")),
        data.pages,
        data.checks
    );
    if data.sites.is_empty() && data.pages == 0 && data.checks == 0 {
        html.push_str(
            "<p id=\"no-data\" class=\"note\">There is no data yet: run <code>freshet run</code> \
             (or <code>freshet demo</code>) with this database first.</p>\n",
        );
    }
    html.push_str("<nav><ul>");
    for (id, title) in SECTIONS {
        let _ = write!(html, "<li><a href=\"#{id}\">{title}</a></li>");
    }
    html.push_str("</ul></nav>\n</header>\n<main>\n");

    let truth = data.staleness.iter().any(|s| !s.truth.is_empty());
    let truth_note = if truth {
        " Beside it, the true figure that the demo's world recorded at the same instants."
    } else {
        " (A demo's database also holds the truth, drawn beside the estimate.)"
    };
    let age_note = format!(
        "freshet's estimate, sampled every 15 clock minutes while it ran: the importance-weighted \
         mean expected age of each site's copies.{truth_note}"
    );
    figure(
        &mut html,
        SECTIONS[0],
        plots::staleness(&data.staleness, Measure::MeanAge)?,
        &age_note,
    );
    let share_note = format!(
        "freshet's estimate: the weighted mean probability that a copy is stale.{truth_note}"
    );
    figure(
        &mut html,
        SECTIONS[1],
        plots::staleness(&data.staleness, Measure::ShareStale)?,
        &share_note,
    );
    figure(
        &mut html,
        SECTIONS[2],
        plots::copy_ages(&data.copy_ages_days)?,
        &format!(
            "Expected age now of each of the {} page copies freshet can judge (0 while current).",
            data.copy_ages_days.len()
        ),
    );
    figure(
        &mut html,
        SECTIONS[3],
        plots::rates(&data.rates)?,
        "One point per page: its estimated change rate and the visits per day the planner gives \
         it. The age-optimal plan visits fast-changing pages more, but not in proportion.",
    );
    let width = data.buckets.map_or(String::new(), |b| {
        duration_text(b.width_ms as f64 / 86_400_000.0)
    });
    figure(
        &mut html,
        SECTIONS[4],
        plots::checks(&data.host_checks, true, "hour", "host limit")?,
        &format!(
            "Checks recorded per host, per hour averaged over {width} buckets (log scale; empty \
             buckets are not drawn), against the host's politeness limit: a check is one request \
             of its URL; its redirect hops and the host's robots.txt reads come on top, so the \
             server counts a little more (`runs.requests` holds every request)."
        ),
    );
    figure(
        &mut html,
        SECTIONS[5],
        plots::checks(&data.site_checks, false, "day", "budget")?,
        &format!(
            "Checks recorded per site, per day averaged over {width} buckets, against the site's \
             requests_per_day."
        ),
    );
    figure(
        &mut html,
        SECTIONS[6],
        plots::errors(&data.errors)?,
        "Checks that failed (HTTP 4xx, 5xx, no response) and problems recorded in the errors \
         table, by where they happened.",
    );
    stalest_table(&mut html, data);
    duplicates_table(&mut html, data);
    html.push_str("</main>\n</body>\n</html>\n");
    Ok(html)
}

/// A section with a plot, or a line saying there is nothing to plot.
fn figure(html: &mut String, (id, title): (&str, &str), svg: Option<String>, note: &str) {
    let _ = write!(html, "<section id=\"{id}\">\n<h2>{title}</h2>\n");
    match svg {
        Some(svg) => {
            let _ = write!(
                html,
                "<figure id=\"plot-{id}\" class=\"plot\">\n{svg}\n<figcaption>{}</figcaption>\n\
                 </figure>\n",
                escape(note)
            );
        }
        None => {
            let _ = writeln!(
                html,
                "<p class=\"note empty\" id=\"empty-{id}\">No data yet for this plot.</p>"
            );
        }
    }
    html.push_str("</section>\n");
}

fn stalest_table(html: &mut String, data: &ReportData) {
    let (id, title) = SECTIONS[7];
    let _ = write!(html, "<section id=\"{id}\">\n<h2>{title}</h2>\n");
    if data.stalest.is_empty() {
        html.push_str("<p class=\"note empty\">No copy can be judged yet.</p>\n</section>\n");
        return;
    }
    html.push_str(
        "<div class=\"scroll\"><table id=\"table-stalest\">\n<thead><tr><th>URL</th><th>site</th>\
         <th>expected age</th><th>P(stale)</th><th>why</th></tr></thead>\n<tbody>\n",
    );
    for s in &data.stalest {
        let _ = writeln!(
            html,
            "<tr><td class=\"url\">{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{:.2}</td><td>{}</td></tr>",
            escape(&s.url),
            escape(&s.site),
            duration_text(s.expected_age_days),
            s.p_stale,
            escape(&s.why)
        );
    }
    html.push_str(
        "</tbody></table></div>\n<p class=\"note\">As <code>freshet explain URL</code> \
                   judges them: the expected age under the change-rate posterior, or the exact \
                   age when a newer version was announced.</p>\n</section>\n",
    );
}

fn duplicates_table(html: &mut String, data: &ReportData) {
    let (id, title) = SECTIONS[8];
    let _ = write!(html, "<section id=\"{id}\">\n<h2>{title}</h2>\n");
    if data.duplicates.is_empty() {
        html.push_str("<p class=\"note empty\">No duplicate class yet.</p>\n</section>\n");
        return;
    }
    html.push_str(
        "<div class=\"scroll\"><table id=\"table-duplicates\">\n<thead><tr><th>kind</th>\
         <th>canonical</th><th>members</th></tr></thead>\n<tbody>\n",
    );
    for d in &data.duplicates {
        let members: Vec<String> = d.members.iter().map(|m| escape(m)).collect();
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td class=\"url\">{}</td><td class=\"url\">{}</td></tr>",
            escape(d.kind),
            escape(d.canonical.as_deref().unwrap_or("-")),
            members.join("<br>")
        );
    }
    html.push_str("</tbody></table></div>\n</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_units() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(duration_text(10.0 / 86_400.0), "10 s");
        assert_eq!(duration_text(5.0 / 1440.0), "5 min");
        assert_eq!(duration_text(0.5), "12.0 h");
        assert_eq!(duration_text(3.26), "3.3 d");
    }

    #[test]
    fn an_empty_database_gives_a_page_that_says_so() {
        let html = render(&ReportData::default(), "x<y>.db").unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("id=\"no-data\""));
        assert!(html.contains("x&lt;y&gt;.db"));
        assert_eq!(html.matches("No data yet for this plot").count(), 7);
        assert!(!html.contains("<figure"));
        assert!(!html.contains("http://") && !html.contains("https://"));
        assert!(html.ends_with("</html>\n"));
    }
}
