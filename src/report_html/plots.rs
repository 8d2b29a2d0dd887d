//! The report's plots, drawn with plotters' SVG backend into strings (no files, no fonts: the
//! browser renders the `<text>` elements). Each function returns `None` when it has nothing to
//! draw, so the page can say so instead of showing empty axes.
//!
//! The SVGs keep their `viewBox` and lose their fixed size, so CSS scales them to the page's
//! width (phones, print). Series colours come from [`PALETTE`]; reference lines (limits, budgets,
//! "visits = changes") are grey or dashed, so they never read as data.

use plotters::coord::Shift;
use plotters::coord::ranged1d::SegmentValue;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::gather::{RateSeries, SiteStaleness};

/// Series colours (the Tableau 10 palette): site i's estimate is colour 2i, its truth 2i + 1.
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(0x1F, 0x77, 0xB4),
    RGBColor(0xFF, 0x7F, 0x0E),
    RGBColor(0x2C, 0xA0, 0x2C),
    RGBColor(0xD6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xBD),
    RGBColor(0x8C, 0x56, 0x4B),
    RGBColor(0xE3, 0x77, 0xC2),
    RGBColor(0x7F, 0x7F, 0x7F),
    RGBColor(0xBC, 0xBD, 0x22),
    RGBColor(0x17, 0xBE, 0xCF),
];

/// Reference lines.
const REFERENCE: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// Drawing size in SVG user units (the page scales it).
const SIZE: (u32, u32) = (800, 380);

type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Runs `draw` on a fresh white SVG and returns it, made responsive.
fn svg(
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> DrawResult,
) -> anyhow::Result<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| anyhow::anyhow!("plot background: {e}"))?;
        draw(&root).map_err(|e| anyhow::anyhow!("drawing a plot: {e}"))?;
        root.present()
            .map_err(|e| anyhow::anyhow!("finishing a plot: {e}"))?;
    }
    let fixed = format!("width=\"{}\" height=\"{}\" ", SIZE.0, SIZE.1);
    Ok(out.replacen(
        &fixed,
        "class=\"chart\" preserveAspectRatio=\"xMidYMid meet\" ",
        1,
    ))
}

/// Which staleness measure a plot shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Mean (expected) age of the copies, days.
    MeanAge,
    /// Share of the copies that are stale.
    ShareStale,
}

/// Per site over time: freshet's estimate and, for a demo's database, the truth.
pub fn staleness(sites: &[SiteStaleness], measure: Measure) -> anyhow::Result<Option<String>> {
    let pick = |p: &(f64, f64, f64)| match measure {
        Measure::MeanAge => (p.0, p.1),
        Measure::ShareStale => (p.0, p.2),
    };
    let all: Vec<(f64, f64)> = sites
        .iter()
        .flat_map(|s| s.estimated.iter().chain(&s.truth))
        .map(pick)
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    if all.is_empty() {
        return Ok(None);
    }
    let x_max = all.iter().map(|p| p.0).fold(0.0, f64::max).max(1e-3);
    let y_max = match measure {
        Measure::MeanAge => all.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-6) * 1.1,
        Measure::ShareStale => 1.0,
    };
    let y_desc = match measure {
        Measure::MeanAge => "mean age of the copies (days)",
        Measure::ShareStale => "share of the copies stale",
    };
    svg(|root| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
        chart
            .configure_mesh()
            .x_desc("days since the first sample")
            .y_desc(y_desc)
            .label_style(("sans-serif", 15))
            .draw()?;
        for (i, site) in sites.iter().enumerate() {
            for (series, truth) in [(&site.estimated, false), (&site.truth, true)] {
                if series.is_empty() {
                    continue;
                }
                let c = colour(2 * i + usize::from(truth));
                let width = if truth { 3 } else { 2 };
                let label = if truth { "true" } else { "estimated" };
                chart
                    .draw_series(LineSeries::new(
                        series.iter().map(pick),
                        c.stroke_width(width),
                    ))?
                    .label(format!("{} {label}", site.site))
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(width))
                    });
            }
        }
        legend(&mut chart)
    })
    .map(Some)
}

fn legend<'a, X, Y>(chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>) -> DrawResult
where
    X: plotters::coord::ranged1d::Ranged,
    Y: plotters::coord::ranged1d::Ranged,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(REFERENCE)
        .label_font(("sans-serif", 15))
        .draw()?;
    Ok(())
}

/// Bins of the copy-age histogram: upper bounds in days and labels.
pub const AGE_BINS: [(f64, &str); 7] = [
    (1.0 / 1440.0, "< 1 min"),
    (1.0 / 24.0, "1 min–1 h"),
    (0.25, "1–6 h"),
    (1.0, "6 h–1 d"),
    (3.0, "1–3 d"),
    (7.0, "3–7 d"),
    (f64::INFINITY, "> 7 d"),
];

/// How many ages fall in each of [`AGE_BINS`].
pub fn age_bin_counts(ages_days: &[f64]) -> [u32; AGE_BINS.len()] {
    let mut counts = [0; AGE_BINS.len()];
    for &age in ages_days.iter().filter(|a| !a.is_nan()) {
        let bin = AGE_BINS.iter().position(|(upper, _)| age < *upper);
        counts[bin.unwrap_or(AGE_BINS.len() - 1)] += 1;
    }
    counts
}

/// Histogram of the copies' expected ages now.
pub fn copy_ages(ages_days: &[f64]) -> anyhow::Result<Option<String>> {
    let counts = age_bin_counts(ages_days);
    let labels: Vec<String> = AGE_BINS.iter().map(|(_, l)| l.to_string()).collect();
    bars(
        &counts.map(|c| c as f64),
        &labels,
        "expected age of the copy",
        "copies",
        colour(0),
    )
}

/// Problems by kind.
pub fn errors(kinds: &[(String, i64)]) -> anyhow::Result<Option<String>> {
    let counts: Vec<f64> = kinds.iter().map(|(_, n)| *n as f64).collect();
    let labels: Vec<String> = kinds.iter().map(|(k, _)| k.clone()).collect();
    bars(&counts, &labels, "kind", "count", colour(3))
}

/// A bar chart of `counts` with a label under each bar; `None` when every count is 0.
fn bars(
    counts: &[f64],
    labels: &[String],
    x_desc: &str,
    y_desc: &str,
    fill: RGBColor,
) -> anyhow::Result<Option<String>> {
    if counts.iter().all(|&c| c <= 0.0) {
        return Ok(None);
    }
    let n = counts.len() as u32;
    let y_max = counts.iter().copied().fold(0.0, f64::max) * 1.1;
    svg(|root| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d((0u32..n - 1).into_segmented(), 0.0..y_max)?;
        let label_of = |v: &SegmentValue<u32>| match v {
            SegmentValue::CenterOf(i) => labels.get(*i as usize).cloned().unwrap_or_default(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(labels.len())
            .x_label_formatter(&label_of)
            // Counts: a tick between two integers has no label ("0, 0, 1, 1, 2" read as a
            // broken axis on a small count).
            .y_label_formatter(&|v| integer_label(*v))
            .x_desc(x_desc)
            .y_desc(y_desc)
            .label_style(("sans-serif", 15))
            .draw()?;
        // Rectangles in order, not plotters' `Histogram` (which iterates a hash map, so the
        // same data would give a different file each time); empty bins draw nothing.
        chart.draw_series(counts.iter().enumerate().filter(|(_, c)| **c > 0.0).map(
            |(i, &c)| {
                let i = i as u32;
                // The last bar ends at the axis's end (`Exact(n)` is out of range).
                let end = if i + 1 < n {
                    SegmentValue::Exact(i + 1)
                } else {
                    SegmentValue::Last
                };
                let mut bar =
                    Rectangle::new([(SegmentValue::Exact(i), 0.0), (end, c)], fill.filled());
                bar.set_margin(0, 0, 8, 8);
                bar
            },
        ))?;
        Ok(())
    })
    .map(Some)
}

/// Learnt change rate against planned visit rate per page, both per day, log axes.
pub fn rates(points: &[(f64, f64)]) -> anyhow::Result<Option<String>> {
    let points: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite() && *x > 0.0 && *y > 0.0)
        .collect();
    if points.is_empty() {
        return Ok(None);
    }
    let values = points.iter().flat_map(|&(x, y)| [x, y]);
    let lo = values.clone().fold(f64::INFINITY, f64::min) / 2.0;
    let hi = values.fold(0.0, f64::max) * 2.0;
    svg(|root| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d((lo..hi).log_scale(), (lo..hi).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("learnt change rate (per day)")
            .y_desc("planned visits per day")
            .x_label_formatter(&|v| compact(*v))
            .y_label_formatter(&|v| compact(*v))
            .label_style(("sans-serif", 15))
            .draw()?;
        chart
            .draw_series(LineSeries::new([(lo, lo), (hi, hi)], REFERENCE.mix(0.6)))?
            .label("visits = changes")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], REFERENCE));
        let c = colour(0);
        chart
            .draw_series(
                points
                    .iter()
                    .map(|&p| Circle::new(p, 4, c.mix(0.75).filled())),
            )?
            .label("a page")
            .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
        legend(&mut chart)
    })
    .map(Some)
}

/// Checks over time per series against each series' limit: per host and hour (log scale,
/// empty buckets left out), or per site and day (linear).
pub fn checks(
    series: &[RateSeries],
    log_y: bool,
    unit: &str,
    limit_label: &str,
) -> anyhow::Result<Option<String>> {
    let drawn: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| {
            s.points
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite() && (!log_y || *y > 0.0))
                .collect()
        })
        .collect();
    if drawn.iter().all(|points| points.iter().all(|p| p.1 <= 0.0)) {
        return Ok(None);
    }
    let x_max = drawn.iter().flatten().map(|p| p.0).fold(0.0, f64::max) * 1.02 + 1e-3;
    let values = drawn
        .iter()
        .flatten()
        .map(|p| p.1)
        .chain(series.iter().filter_map(|s| s.limit));
    let y_hi = values.clone().fold(0.0, f64::max) * if log_y { 3.0 } else { 1.15 };
    let y_lo = values.filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min) / 2.0;
    let y_desc = format!("checks per {unit}");
    svg(|root| {
        let mut builder = ChartBuilder::on(root);
        builder
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64);
        if log_y {
            let mut chart = builder.build_cartesian_2d(0.0..x_max, (y_lo..y_hi).log_scale())?;
            chart
                .configure_mesh()
                .x_desc("days since the first request")
                .y_desc(&y_desc)
                .y_label_formatter(&|v| compact(*v))
                .label_style(("sans-serif", 15))
                .draw()?;
            draw_rates(&mut chart, series, &drawn, x_max, limit_label)?;
            legend(&mut chart)
        } else {
            let mut chart = builder.build_cartesian_2d(0.0..x_max, 0.0..y_hi)?;
            chart
                .configure_mesh()
                .x_desc("days since the first request")
                .y_desc(&y_desc)
                .y_label_formatter(&|v| compact(*v))
                .label_style(("sans-serif", 15))
                .draw()?;
            draw_rates(&mut chart, series, &drawn, x_max, limit_label)?;
            legend(&mut chart)
        }
    })
    .map(Some)
}

fn draw_rates<'a, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
    series: &[RateSeries],
    drawn: &[Vec<(f64, f64)>],
    x_max: f64,
    limit_label: &str,
) -> DrawResult
where
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
{
    for (i, (s, points)) in series.iter().zip(drawn).enumerate() {
        let c = colour(i);
        chart
            .draw_series(LineSeries::new(points.iter().copied(), c.stroke_width(2)))?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
    }
    // One dashed line per distinct limit, so twenty hosts at one rate draw one line.
    let mut limits: Vec<f64> = series.iter().filter_map(|s| s.limit).collect();
    limits.sort_by(f64::total_cmp);
    limits.dedup();
    for limit in limits {
        chart
            .draw_series(DashedLineSeries::new(
                [(0.0, limit), (x_max, limit)],
                8,
                6,
                REFERENCE.stroke_width(2),
            ))?
            .label(format!("{limit_label}: {}", compact(limit)))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], REFERENCE));
    }
    Ok(())
}

/// A number in few characters: 3600, 2.5, 0.042, 0.001.
pub fn compact(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else if v >= 0.01 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A count's axis label: the integer, or nothing for a tick between two integers.
fn integer_label(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_fall_in_their_bins() {
        let day = 1.0;
        let counts = age_bin_counts(&[0.0, 0.5 / 1440.0, 0.1, 2.0 * day, 30.0, f64::NAN, 1.0]);
        assert_eq!(counts, [2, 0, 1, 0, 2, 0, 1]);
    }

    #[test]
    fn nothing_to_draw_is_none_and_data_draws_series() {
        assert_eq!(copy_ages(&[]).unwrap(), None);
        assert_eq!(rates(&[(0.0, 1.0)]).unwrap(), None);
        assert_eq!(errors(&[]).unwrap(), None);
        assert_eq!(staleness(&[], Measure::MeanAge).unwrap(), None);
        let svg = rates(&[(1.0, 2.0), (0.1, 0.5)]).unwrap().unwrap();
        assert!(svg.starts_with("<svg class=\"chart\""), "{}", &svg[..80]);
        assert!(svg.contains("viewBox=\"0 0 800 380\""));
        assert!(svg.matches("<circle").count() >= 2);
        let site = SiteStaleness {
            site: "s".into(),
            estimated: vec![(0.0, 0.1, 0.2), (1.0, 0.2, 0.3), (2.0, 0.1, 0.25)],
            truth: vec![(0.0, 0.12, 0.2), (1.0, 0.3, 0.4), (2.0, 0.1, 0.2)],
        };
        let svg = staleness(&[site], Measure::ShareStale).unwrap().unwrap();
        assert!(svg.contains("s estimated") && svg.contains("s true"));
        let bars = copy_ages(&[0.0, 2.0, 30.0]).unwrap().unwrap();
        assert_eq!(bars.matches("fill=\"#1F77B4\"").count(), 3, "{bars}");
        // One kind alone, and the last bin, are drawn with a positive width (a regression: the
        // browser refused a negative one).
        let one = errors(&[("check: HTTP 4xx".to_string(), 2)])
            .unwrap()
            .unwrap();
        // A count of 2 at most: its axis labels are 0, 1 and 2, each once.
        let labels: Vec<&str> = one
            .split("</text>")
            .filter_map(|piece| piece.rsplit('>').next().map(str::trim))
            .filter(|text| !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()))
            .collect();
        assert_eq!(labels, ["0", "1", "2"], "{one}");
        for svg in [&bars, &one] {
            assert!(
                !svg.contains("width=\"-") && !svg.contains("width=\"0\""),
                "{svg}"
            );
        }
    }
}
