//! A run's figures as `zero report` and `zero serve`'s training page show them: the rows of
//! [`super::rows`] as a text table, then the last grade by group of the evaluation set.

use std::fmt::Write as _;

use super::rows::IterationRow;
use crate::arena::grading::GroupResult;

/// The rows as a text table, then the last grade by group of the evaluation set. Columns that
/// no row fills are left out: the training-only heads' losses of a network without them, the
/// match of latest against best in a run that plays none (a line under the table says so), the
/// benchmark in a run without one.
pub fn table(rows: &[IterationRow]) -> String {
    if rows.is_empty() {
        return "no stage of an iteration recorded yet\n".into();
    }
    let any = |has: fn(&IterationRow) -> bool| rows.iter().any(has);
    let matches = any(|r| r.score_vs_best.is_some());
    let columns: Vec<Column> = [
        (true, Column::new("iter", 4, |r| r.iteration.to_string())),
        (true, Column::new("minutes", 7, |r| fixed(r.minutes, 1))),
        (true, Column::new("positions", 9, |r| whole(r.positions))),
        (true, Column::new("1st/draw/2nd", 12, selfplay_results)),
        (true, Column::new("policy", 8, |r| fixed(r.policy_loss, 3))),
        (true, Column::new("value", 8, |r| fixed(r.value_loss, 3))),
        (
            matches,
            Column::new("vs best", 8, |r| percent(r.score_vs_best)),
        ),
        (matches, Column::new("promoted", 11, promotion)),
        (matches, Column::new("gen", 5, |r| whole(r.generation))),
        (
            any(|r| r.benchmark_score.is_some()),
            Column::new("benchmark", 12, |r| percent(r.benchmark_score)),
        ),
        (
            any(|r| r.benchmark_wld.is_some()),
            Column::new("W-L-D", 9, |r| {
                r.benchmark_wld
                    .map_or("-".into(), |[w, l, d]| format!("{w}-{l}-{d}"))
            }),
        ),
        (
            true,
            Column::new("net err", 9, |r| percent(r.net_mistake_rate)),
        ),
        (
            true,
            Column::new("search err", 10, |r| percent(r.search_mistake_rate)),
        ),
    ]
    .into_iter()
    .filter_map(|(shown, column)| shown.then_some(column))
    .collect();
    let line = |cell: &dyn Fn(&Column) -> String| {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| format!("{:>width$}", cell(c), width = c.width))
            .collect();
        cells.join(" ") + "\n"
    };
    let mut s = line(&|c| c.header.to_string());
    for r in rows {
        s.push_str(&line(&|c| (c.cell)(r)));
    }
    if !matches && any(|r| r.promoted == Some(true)) {
        s.push_str("no match of latest against best: latest became best every iteration\n");
    }
    let graded = |r: &&IterationRow| r.net_groups.is_some() || r.search_groups.is_some();
    if let Some(last) = rows.iter().rev().find(graded) {
        s.push_str(&groups_table(last));
    }
    s
}

/// A column of [`table`]: its header, its width, and what it shows of a row.
struct Column {
    header: &'static str,
    width: usize,
    cell: fn(&IterationRow) -> String,
}

impl Column {
    fn new(header: &'static str, width: usize, cell: fn(&IterationRow) -> String) -> Column {
        Column {
            header,
            width,
            cell,
        }
    }
}

/// `x` with `digits` decimals, `-` where the row has none.
fn fixed(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// A share as a percentage with one decimal, `-` where the row has none.
fn percent(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{:.1}%", 100.0 * v))
}

/// A count, `-` where the row has none.
fn whole(x: Option<impl std::fmt::Display>) -> String {
    x.map_or("-".into(), |v| v.to_string())
}

/// How the self-play games ended, first player's wins / draws / second player's wins in %.
fn selfplay_results(r: &IterationRow) -> String {
    r.selfplay_results.map_or("-".into(), |g| {
        let [first, draw, second] = g.percentages();
        format!("{first}/{draw}/{second}%")
    })
}

/// What the evaluation did with latest: promoted after a match, kept best, or promoted with
/// no match played.
fn promotion(r: &IterationRow) -> String {
    match (r.promoted, r.score_vs_best) {
        (Some(true), None) => "no match",
        (Some(true), Some(_)) => "promoted",
        (Some(false), _) => "kept best",
        (None, _) => "-",
    }
    .into()
}

/// One iteration's mistake rates by group of the evaluation set.
fn groups_table(row: &IterationRow) -> String {
    let mut s = format!(
        "\nmistakes of best on the evaluation set after iteration {}, by group:\n{:<10} {:>18} {:>18}\n",
        row.iteration, "group", "network alone", "with search"
    );
    let mut names: Vec<&str> = Vec::new();
    for g in row.net_groups.iter().chain(&row.search_groups).flatten() {
        if !names.contains(&g.group.as_str()) {
            names.push(&g.group);
        }
    }
    for name in names {
        let _ = writeln!(
            s,
            "{name:<10} {:>18} {:>18}",
            group_cell(row.net_groups.as_deref(), name),
            group_cell(row.search_groups.as_deref(), name)
        );
    }
    s
}

/// A group's mistake rate and size, `-` where it was not graded.
fn group_cell(groups: Option<&[GroupResult]>, name: &str) -> String {
    match groups.and_then(|gs| gs.iter().find(|g| g.group == name)) {
        Some(g) => format!("{:.1}% of {}", 100.0 * g.mistake_rate, g.positions),
        None => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alphazero::report::chart::svg;
    use crate::alphazero::report::rows::iteration_rows;
    use crate::alphazero::run::metrics::{read_metrics, StageRecord};

    /// A metrics log as the cycle writes it: self-play games won 2, drawn 1, lost 1 by the first
    /// player and a benchmark match of 3-1-0 in iteration 1,
    /// iteration 2 stopped after self-play.
    fn metrics() -> String {
        let tally =
            |w: u64, l: u64, d: u64| serde_json::json!({"wins": w, "losses": l, "draws": d});
        let result = |b: &str, w, l, d| {
            serde_json::json!({"game": "connect4", "a": "best", "b": b, "games": w + l + d,
                "a_first": tally(w, l, d), "a_second": tally(0, 0, 0), "total": tally(w, l, d),
                "elo": 0.0, "elo_ci95": [0.0, 0.0], "seconds": 1.0})
        };
        let selfplay = |i: u32, positions: u64| {
            let mut line = serde_json::json!({"stage": "selfplay", "iteration": i, "games": 4,
                "positions": positions, "seconds": 0.5, "positions_per_s": 60.0,
                "nn_evals_per_s": 100.0, "mean_batch": 4.0, "cache_hit_rate": 0.1});
            // Iteration 2's record is an older one, without the games' results.
            if i == 1 {
                line["results"] = serde_json::json!({"first_player_wins": 2, "draws": 1,
                    "second_player_wins": 1});
            }
            line
        };
        let lines = [
            selfplay(1, 30),
            serde_json::json!({"stage": "train", "iteration": 1, "samples": 30, "steps": 10,
                "policy_loss": 2.0, "value_loss": 0.5, "seconds": 1.0}),
            serde_json::json!({"stage": "evaluate", "iteration": 1, "score_vs_best": 0.6,
                "promoted": true, "generation": 1, "latest_vs_best": result("best", 3, 2, 0),
                "benchmark": result("minimax:4", 3, 1, 0), "seconds": 2.0}),
            selfplay(2, 28),
        ];
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    #[test]
    fn rows_gather_each_iteration_and_the_chart_draws_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.jsonl");
        std::fs::write(&path, metrics()).unwrap();
        let records = read_metrics(&path).unwrap();
        assert!(matches!(records[2], StageRecord::Evaluate(_)));
        // What is read is what the cycle would write.
        let again: String = records
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        std::fs::write(&path, &again).unwrap();
        assert_eq!(read_metrics(&path).unwrap(), records);
        let rows = iteration_rows(&records);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].policy_loss, Some(2.0));
        assert_eq!(rows[0].benchmark_wld, Some([3, 1, 0]));
        assert_eq!(rows[0].benchmark_score, Some(0.75));
        assert_eq!(rows[1].positions, Some(28));
        assert_eq!(rows[1].policy_loss, None);
        let t = table(&rows);
        assert!(t.contains("75.0%") && t.contains("3-1-0"), "{t}");
        assert!(t.contains("50/25/25%"), "{t}");
        let s = svg(&rows, "connect4 <run>");
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("best vs minimax:4") && s.contains("&lt;run&gt;"));
        // policy, value, latest-vs-best and benchmark: one point each for iteration 1
        assert_eq!(s.matches("<polyline").count(), 4);
    }

    #[test]
    fn losses_of_heads_no_longer_built_in_an_old_log_are_read_past() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.jsonl");
        let old = metrics().replace(
            "\"value_loss\":0.5",
            "\"value_loss\":0.5,\"opponent_policy_loss\":1.234",
        );
        assert_ne!(old, metrics());
        std::fs::write(&path, old).unwrap();
        let rows = iteration_rows(&read_metrics(&path).unwrap());
        assert_eq!(rows[0].value_loss, Some(0.5));
        let t = table(&rows);
        assert!(!t.contains("1.234") && !t.contains("opp pol"), "{t}");
    }

    #[test]
    fn a_run_without_a_match_or_a_benchmark_gets_no_columns_for_them() {
        let rows: Vec<IterationRow> = (1..=2)
            .map(|i| IterationRow {
                iteration: i,
                policy_loss: Some(1.5),
                value_loss: Some(0.3),
                promoted: Some(true),
                generation: Some(i),
                net_mistake_rate: Some(0.1),
                ..IterationRow::default()
            })
            .collect();
        let t = table(&rows);
        let header = t.lines().next().unwrap();
        for absent in ["vs best", "promoted", "gen", "benchmark", "W-L-D"] {
            assert!(!header.contains(absent), "{t}");
        }
        assert!(header.ends_with("net err search err"), "{t}");
        assert!(
            t.lines().nth(1).unwrap().ends_with("10.0%          -"),
            "{t}"
        );
        assert!(t.contains("no match of latest against best"), "{t}");
        // With a match, its columns and no such line.
        let mut gated = rows.clone();
        gated[1].score_vs_best = Some(0.6);
        let t = table(&gated);
        assert!(t.lines().next().unwrap().contains("vs best"), "{t}");
        assert!(t.contains("60.0%") && !t.contains("no match of"), "{t}");
        assert_eq!(table(&[]), "no stage of an iteration recorded yet\n");
    }

    #[test]
    fn grades_show_in_the_table_and_chart_and_old_logs_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.jsonl");
        let grade = |rate: f64| {
            serde_json::json!({"positions": 10, "mistakes": (rate * 10.0) as u64,
                "mistake_rate": rate, "set_positions": 800, "seconds": 0.5,
                "groups": [{"group": "L3_R1", "positions": 10,
                    "mistakes": (rate * 10.0) as u64, "mistake_rate": rate}]})
        };
        let mut text = metrics();
        let evaluate = |i: u32, net: f64, search: f64| {
            serde_json::json!({"stage": "evaluate", "iteration": i, "score_vs_best": 0.5,
                "promoted": false, "generation": 1,
                "latest_vs_best": serde_json::from_str::<serde_json::Value>(
                    text_line(&metrics(), 2)).unwrap()["latest_vs_best"],
                "seconds": 30.0, "grade_net": grade(net), "grade_search": grade(search),
                "grade_seconds": 1.0})
        };
        text.push_str(&format!("{}\n", evaluate(2, 0.3, 0.2)));
        std::fs::write(&path, &text).unwrap();
        let rows = iteration_rows(&read_metrics(&path).unwrap());
        // Iteration 1's log has no grades (an older run), iteration 2's has.
        assert_eq!(rows[0].net_mistake_rate, None);
        assert_eq!(rows[1].net_mistake_rate, Some(0.3));
        assert_eq!(rows[1].search_mistake_rate, Some(0.2));
        // Minutes: 0.5 + 1 + 2 s by the end of iteration 1, then 0.5 + 30 s more.
        assert_eq!(rows[0].minutes, Some(3.5 / 60.0));
        assert_eq!(rows[1].minutes, Some(34.0 / 60.0));
        let t = table(&rows);
        assert!(
            t.contains("30.0%") && t.contains("20.0%") && t.contains("after iteration 2"),
            "{t}"
        );
        assert!(t.contains("L3_R1") && t.contains("30.0% of 10"), "{t}");
        let s = svg(&rows, "run");
        assert!(s.contains("minutes of the run") && s.contains("with search"));
        // four as before, plus network and search against iterations and against minutes
        assert_eq!(s.matches("<polyline").count(), 8);
    }

    fn text_line(text: &str, n: usize) -> &str {
        text.lines().nth(n).unwrap()
    }

    #[test]
    fn a_bad_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.jsonl");
        let good = metrics();
        let first = good.lines().next().unwrap();
        for bad in [
            "{\"iteration\":1,\"stage\":\"dance\"}".to_string(),
            "not json".to_string(),
            first[..first.len() / 2].to_string(),
        ] {
            std::fs::write(&path, format!("{first}\n{bad}\n")).unwrap();
            let e = format!("{:#}", read_metrics(&path).unwrap_err());
            assert!(e.contains("line 2") && e.contains("metrics.jsonl"), "{e}");
        }
        let e = read_metrics(&dir.path().join("none.jsonl")).unwrap_err();
        assert!(e.to_string().contains("zero cycle"), "{e}");
    }
}
