//! A run's progress from its `metrics.jsonl`: one row per iteration (self-play, training,
//! evaluation and benchmark figures), printed as a table or JSON and drawn as an SVG chart of
//! the training losses and the match scores.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::Value;

/// The figures of one iteration; a stage that has not run yet leaves its fields empty.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IterationRow {
    pub iteration: u32,
    pub games: Option<u64>,
    pub positions: Option<u64>,
    pub selfplay_seconds: Option<f64>,
    pub policy_loss: Option<f64>,
    pub value_loss: Option<f64>,
    pub train_seconds: Option<f64>,
    /// Latest's score against best (draws count half).
    pub score_vs_best: Option<f64>,
    pub promoted: Option<bool>,
    /// Best's generation after the evaluation.
    pub generation: Option<u32>,
    /// The benchmark player, and best's score and wins/losses/draws against it.
    pub benchmark: Option<String>,
    pub benchmark_score: Option<f64>,
    pub benchmark_wld: Option<[u64; 3]>,
}

fn wld(v: &Value) -> Option<[u64; 3]> {
    let t = v.get("total")?;
    Some([
        t.get("wins")?.as_u64()?,
        t.get("losses")?.as_u64()?,
        t.get("draws")?.as_u64()?,
    ])
}

fn score(wld: [u64; 3]) -> Option<f64> {
    let n = wld.iter().sum::<u64>();
    (n > 0).then(|| (wld[0] as f64 + 0.5 * wld[2] as f64) / n as f64)
}

/// Reads `metrics.jsonl` into one row per iteration, in order.
pub fn read_metrics(path: &Path) -> Result<Vec<IterationRow>> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read {} (run `zero cycle` first, or give the right --models)",
            path.display()
        )
    })?;
    let mut rows: BTreeMap<u32, IterationRow> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .with_context(|| format!("{} line {}: not JSON", path.display(), n + 1))?;
        let Some(iteration) = v.get("iteration").and_then(Value::as_u64) else {
            bail!("{} line {}: no iteration", path.display(), n + 1);
        };
        let row = rows.entry(iteration as u32).or_default();
        row.iteration = iteration as u32;
        let f = |k: &str| v.get(k).and_then(Value::as_f64);
        match v.get("stage").and_then(Value::as_str) {
            Some("selfplay") => {
                row.games = v.get("games").and_then(Value::as_u64);
                row.positions = v.get("positions").and_then(Value::as_u64);
                row.selfplay_seconds = f("seconds");
            }
            Some("train") => {
                row.policy_loss = f("policy_loss");
                row.value_loss = f("value_loss");
                row.train_seconds = f("seconds");
            }
            Some("evaluate") => {
                row.score_vs_best = f("score_vs_best");
                row.promoted = v.get("promoted").and_then(Value::as_bool);
                row.generation = v
                    .get("generation")
                    .and_then(Value::as_u64)
                    .map(|g| g as u32);
                if let Some(b) = v.get("benchmark") {
                    row.benchmark = b.get("b").and_then(Value::as_str).map(String::from);
                    row.benchmark_wld = wld(b);
                    row.benchmark_score = row.benchmark_wld.and_then(score);
                }
            }
            other => bail!(
                "{} line {}: unknown stage {:?}",
                path.display(),
                n + 1,
                other.unwrap_or("(none)")
            ),
        }
    }
    Ok(rows.into_values().collect())
}

/// The rows as a text table.
pub fn table(rows: &[IterationRow]) -> String {
    let opt = |x: Option<f64>, digits: usize| match x {
        Some(v) => format!("{v:.digits$}"),
        None => "-".into(),
    };
    let pct = |x: Option<f64>| match x {
        Some(v) => format!("{:.1}%", 100.0 * v),
        None => "-".into(),
    };
    let mut s = format!(
        "{:>4} {:>9} {:>8} {:>8} {:>8} {:>11} {:>5} {:>12} {:>9}\n",
        "iter", "positions", "policy", "value", "vs best", "promoted", "gen", "benchmark", "W-L-D"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:>4} {:>9} {:>8} {:>8} {:>8} {:>11} {:>5} {:>12} {:>9}",
            r.iteration,
            r.positions.map_or("-".into(), |p| p.to_string()),
            opt(r.policy_loss, 3),
            opt(r.value_loss, 3),
            pct(r.score_vs_best),
            match r.promoted {
                Some(true) => "promoted",
                Some(false) => "kept best",
                None => "-",
            },
            r.generation.map_or("-".into(), |g| g.to_string()),
            pct(r.benchmark_score),
            r.benchmark_wld
                .map_or("-".into(), |[w, l, d]| format!("{w}-{l}-{d}")),
        );
    }
    s
}

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

#[cfg(test)]
mod tests {
    use super::*;

    const METRICS: &str = r#"{"iteration":1,"stage":"selfplay","games":4,"positions":30,"seconds":0.5}
{"iteration":1,"stage":"train","policy_loss":2.0,"value_loss":0.5,"seconds":1.0,"steps":10,"samples":30}
{"iteration":1,"stage":"evaluate","score_vs_best":0.6,"promoted":true,"generation":1,"benchmark":{"b":"minimax:4","total":{"wins":3,"losses":1,"draws":0}}}
{"iteration":2,"stage":"selfplay","games":4,"positions":28,"seconds":0.5}
"#;

    #[test]
    fn rows_gather_each_iteration_and_the_chart_draws_them() {
        let dir = std::env::temp_dir().join(format!("zero-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("metrics.jsonl");
        std::fs::write(&path, METRICS).unwrap();
        let rows = read_metrics(&path).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].policy_loss, Some(2.0));
        assert_eq!(rows[0].benchmark_wld, Some([3, 1, 0]));
        assert_eq!(rows[0].benchmark_score, Some(0.75));
        assert_eq!(rows[1].positions, Some(28));
        assert_eq!(rows[1].policy_loss, None);
        let t = table(&rows);
        assert!(t.contains("75.0%") && t.contains("3-1-0"), "{t}");
        let s = svg(&rows, "connect4 <run>");
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("best vs minimax:4") && s.contains("&lt;run&gt;"));
        // policy, value, latest-vs-best and benchmark: one point each for iteration 1
        assert_eq!(s.matches("<polyline").count(), 4);

        std::fs::write(&path, "{\"iteration\":1,\"stage\":\"dance\"}\n").unwrap();
        let e = read_metrics(&path).unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("dance"), "{e}");
        std::fs::write(&path, "not json\n").unwrap();
        assert!(read_metrics(&path)
            .unwrap_err()
            .to_string()
            .contains("not JSON"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
