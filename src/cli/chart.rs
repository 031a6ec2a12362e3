//! The SVG chart of a run: training losses on top, match scores below, against the iteration.

use std::fmt::Write as _;

use crate::alphazero::metrics::IterationRow;

/// A line of the chart: its legend, colour and (iteration, value) points.
type Series<'a> = (&'a str, &'a str, Vec<(f64, f64)>);

/// One panel of the chart, its series drawn against a shared x axis.
struct Panel<'a> {
    title: &'a str,
    y_max: f64,
    series: Vec<Series<'a>>,
}

const WIDTH: f64 = 760.0;
const PANEL_HEIGHT: f64 = 260.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 40.0;

fn draw_panel(svg: &mut String, panel: &Panel, y0: f64, x_max: f64) {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = PANEL_HEIGHT - TOP - BOTTOM;
    let x = |i: f64| LEFT + plot_w * (i - 1.0) / (x_max - 1.0).max(1.0);
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
    let step = ((x_max / 15.0).ceil() as usize).max(1);
    for i in (1..=x_max as usize).step_by(step) {
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">{i}</text>"#,
            x(i as f64),
            y0 + PANEL_HEIGHT - BOTTOM + 16.0
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">iteration</text>"#,
        LEFT + plot_w / 2.0,
        y0 + PANEL_HEIGHT - 6.0
    );
    for (k, (name, colour, points)) in panel.series.iter().enumerate() {
        if !points.is_empty() {
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

/// The chart: training losses on top, match scores below.
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
    let panels = [
        Panel {
            title: "training loss",
            y_max: loss_max,
            series: vec![
                ("policy loss", "#1f77b4", policy),
                ("value loss", "#ff7f0e", value),
            ],
        },
        Panel {
            title: "score (draws count half)",
            y_max: 1.0,
            series: vec![
                ("latest vs best", "#2ca02c", pts(&|r| r.score_vs_best)),
                (&benchmark_name, "#d62728", pts(&|r| r.benchmark_score)),
            ],
        },
    ];
    let x_max = rows.iter().map(|r| r.iteration).max().unwrap_or(1).max(2) as f64;
    let height = 30.0 + PANEL_HEIGHT * panels.len() as f64;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="{LEFT}" y="20" font-size="16">{}</text>
"#,
        escape(title)
    );
    for (k, p) in panels.iter().enumerate() {
        draw_panel(&mut s, p, 30.0 + PANEL_HEIGHT * k as f64, x_max);
    }
    s.push_str("</svg>\n");
    s
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
