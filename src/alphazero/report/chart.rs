//! The SVG chart of a run: training losses on top, match scores below, against the iteration;
//! then, for a run that grades `best`, its mistake rate on the evaluation set against the
//! iteration and against the run's wall-clock minutes.

use std::fmt::Write as _;

use super::rows::IterationRow;

/// A line of the chart: its legend, colour and (x, value) points.
type Series<'a> = (&'a str, &'a str, Vec<(f64, f64)>);

/// One panel of the chart, its series drawn against its x axis.
struct Panel<'a> {
    title: &'a str,
    y_max: f64,
    x: XAxis,
    series: Vec<Series<'a>>,
}

/// A panel's x axis: its name, range and the distance between labels.
#[derive(Clone, Copy)]
struct XAxis {
    label: &'static str,
    min: f64,
    max: f64,
    step: f64,
}

impl XAxis {
    /// Iterations 1 to `last`, at most about 15 labels.
    fn iterations(last: f64) -> XAxis {
        let last = last.max(2.0);
        XAxis {
            label: "iteration",
            min: 1.0,
            max: last,
            step: (last / 15.0).ceil().max(1.0),
        }
    }
    /// Minutes from 0 to `last`, labelled at a round step (1, 2, 5, 10, ... minutes).
    fn minutes(last: f64) -> XAxis {
        let last = last.max(1.0);
        let step = [1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 240.0, 480.0]
            .into_iter()
            .find(|s| last / s <= 12.0)
            .unwrap_or(960.0);
        XAxis {
            label: "minutes of the run (wall clock, end of the iteration's evaluation)",
            min: 0.0,
            max: last,
            step,
        }
    }
}

const WIDTH: f64 = 760.0;
const PANEL_HEIGHT: f64 = 260.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 40.0;

fn draw_panel(svg: &mut String, panel: &Panel, y0: f64) {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = PANEL_HEIGHT - TOP - BOTTOM;
    let axis = panel.x;
    let x = |v: f64| LEFT + plot_w * (v - axis.min) / (axis.max - axis.min).max(1e-9);
    let y = |v: f64| y0 + TOP + plot_h * (1.0 - (v / panel.y_max).clamp(0.0, 1.0));
    let _ = writeln!(
        svg,
        r#"<text x="{LEFT}" y="{}" font-size="15" font-weight="bold">{}</text>"#,
        y0 + 22.0,
        panel.title
    );
    // grid and y labels
    for k in 0..=4 {
        let v = panel.y_max * k as f64 / 4.0;
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{v:.2}</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            y(v) + 4.0,
            yy = y(v)
        );
    }
    // x labels
    let mut tick = axis.min;
    while tick <= axis.max + 1e-9 {
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">{tick}</text>"#,
            x(tick),
            y0 + PANEL_HEIGHT - BOTTOM + 16.0
        );
        tick += axis.step;
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        y0 + PANEL_HEIGHT - 6.0,
        axis.label
    );
    // A series with no points (a run without a benchmark opponent) gets no legend either.
    let drawn = panel
        .series
        .iter()
        .filter(|(_, _, points)| !points.is_empty());
    for (k, (name, colour, points)) in drawn.enumerate() {
        let pts: Vec<String> = points
            .iter()
            .map(|&(i, v)| format!("{:.1},{:.1}", x(i), y(v)))
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#,
            pts.join(" ")
        );
        for &(i, v) in points {
            let _ = writeln!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{colour}"/>"#,
                x(i),
                y(v)
            );
        }
        let ly = y0 + TOP + 14.0 + 20.0 * k as f64;
        let lx = WIDTH - RIGHT + 16.0;
        let _ = writeln!(
            svg,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="3"/><text x="{}" y="{}" font-size="12">{name}</text>"#,
            lx + 22.0,
            lx + 28.0,
            ly + 4.0
        );
    }
}

/// The chart: training losses on top, match scores below (if there are any), then the mistake
/// rates if graded.
pub fn svg(rows: &[IterationRow], title: &str) -> String {
    let pts = |f: &dyn Fn(&IterationRow) -> Option<f64>| -> Vec<(f64, f64)> {
        rows.iter()
            .filter_map(|r| f(r).map(|v| (r.iteration as f64, v)))
            .collect()
    };
    let policy = pts(&|r| r.policy_loss);
    let value = pts(&|r| r.value_loss);
    let loss_max = policy
        .iter()
        .chain(&value)
        .map(|p| p.1)
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.1;
    let benchmark_name = rows
        .iter()
        .find_map(|r| r.benchmark.clone())
        .map(|b| format!("best vs {b}"))
        .unwrap_or_else(|| "benchmark".into());
    let iterations = XAxis::iterations(rows.iter().map(|r| r.iteration).max().unwrap_or(1) as f64);
    let mut panels = vec![Panel {
        title: "training loss",
        y_max: loss_max,
        x: iterations,
        series: vec![
            ("policy loss", "#1f77b4", policy),
            ("value loss", "#ff7f0e", value),
        ],
    }];
    let scores = Panel {
        title: "score (draws count half)",
        y_max: 1.0,
        x: iterations,
        series: vec![
            ("latest vs best", "#2ca02c", pts(&|r| r.score_vs_best)),
            (&benchmark_name, "#d62728", pts(&|r| r.benchmark_score)),
        ],
    };
    // A run without the match and without a benchmark has no scores to draw.
    if scores
        .series
        .iter()
        .any(|(_, _, points)| !points.is_empty())
    {
        panels.push(scores);
    }
    panels.extend(mistake_panels(rows, iterations));
    let height = 30.0 + PANEL_HEIGHT * panels.len() as f64;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="{LEFT}" y="20" font-size="16">{}</text>
"#,
        escape(title)
    );
    for (k, p) in panels.iter().enumerate() {
        draw_panel(&mut s, p, 30.0 + PANEL_HEIGHT * k as f64);
    }
    s.push_str("</svg>\n");
    s
}

/// Best's mistake rate on the evaluation set (network alone, with search) against the
/// iteration and against the run's wall-clock minutes; none for a run that does not grade.
fn mistake_panels(rows: &[IterationRow], iterations: XAxis) -> Vec<Panel<'static>> {
    let by = |x: &dyn Fn(&IterationRow) -> Option<f64>,
              y: &dyn Fn(&IterationRow) -> Option<f64>| {
        rows.iter()
            .filter_map(|r| Some((x(r)?, y(r)?)))
            .collect::<Vec<_>>()
    };
    let iteration = |r: &IterationRow| Some(r.iteration as f64);
    let minutes = |r: &IterationRow| r.minutes;
    let net = |r: &IterationRow| r.net_mistake_rate;
    let search = |r: &IterationRow| r.search_mistake_rate;
    let y_max = rows
        .iter()
        .flat_map(|r| [r.net_mistake_rate, r.search_mistake_rate])
        .flatten()
        .fold(0.0f64, f64::max);
    if rows
        .iter()
        .all(|r| r.net_mistake_rate.is_none() && r.search_mistake_rate.is_none())
    {
        return Vec::new();
    }
    let last_minute = rows.iter().filter_map(|r| r.minutes).fold(0.0f64, f64::max);
    [
        (
            "mistakes of best on the evaluation set (share of moves), by iteration",
            iterations,
            &iteration as &dyn Fn(&IterationRow) -> Option<f64>,
        ),
        (
            "the same mistakes, by minute of the run",
            XAxis::minutes(last_minute),
            &minutes,
        ),
    ]
    .into_iter()
    .map(|(title, axis, x)| Panel {
        title,
        y_max: (y_max * 1.1).max(0.05),
        x: axis,
        series: vec![
            ("network alone", "#9467bd", by(x, &net)),
            ("with search", "#8c564b", by(x, &search)),
        ],
    })
    .collect()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_without_a_benchmark_has_no_benchmark_line_or_legend() {
        let row = |iteration: u32| IterationRow {
            iteration,
            policy_loss: Some(1.0),
            value_loss: Some(0.3),
            score_vs_best: Some(0.6),
            net_mistake_rate: Some(0.1),
            search_mistake_rate: Some(0.05),
            minutes: Some(iteration as f64),
            ..IterationRow::default()
        };
        let s = svg(&[row(1), row(2)], "run");
        assert!(!s.contains("benchmark") && !s.contains("best vs"), "{s}");
        // losses (2), latest vs best (1), mistakes by iteration and by minute (2 each)
        assert_eq!(s.matches("<polyline").count(), 7);
        assert_eq!(s.matches(r#"stroke-width="3"/>"#).count(), 7);
        assert!(s.contains("by iteration") && s.contains("by minute of the run"));
    }
}
