//! `zero report`: a run's progress per iteration as a table (or JSON) and an SVG chart.

use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use crate::alphazero::report::chart::svg;
use crate::alphazero::report::rows::{iteration_rows, IterationRow};
use crate::alphazero::report::table::table;
use crate::alphazero::run::metrics::read_metrics;
use crate::alphazero::run::paths::RunPaths;
use crate::alphazero::run::state::read_run_config;
use crate::core::files::write_atomic;
use crate::games::GameKind;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, value_enum, default_value_t = GameKind::Connect4)]
    game: GameKind,
    /// Where models live (the run's `metrics.jsonl` is in `<models>/<game>/`).
    #[arg(long, default_value = "models")]
    models: PathBuf,
    /// Where to write the chart (default: `<models>/<game>/report.svg`).
    #[arg(long)]
    svg: Option<PathBuf>,
    /// The chart's title (default: the game, the run's preset, network and seed, and the
    /// iterations and minutes it ran).
    #[arg(long)]
    title: Option<String>,
    /// Print the rows as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    game: String,
    metrics: String,
    svg: String,
    iterations: Vec<IterationRow>,
}

pub fn run(args: Args) -> Result<()> {
    // The report reads the run's models folder only (its settings and metrics), no records.
    let paths = RunPaths::new(&args.models, &args.models, args.game.name());
    let metrics = paths.metrics();
    let rows = iteration_rows(&read_metrics(&metrics)?);
    let chart = args.svg.unwrap_or_else(|| paths.models.join("report.svg"));
    let title = match args.title {
        Some(t) => t,
        None => default_title(args.game, &paths, &rows),
    };
    write_atomic(&chart, svg(&rows, &title).as_bytes())?;
    if args.json {
        return super::print_json(&Report {
            game: args.game.name().into(),
            metrics: metrics.display().to_string(),
            svg: chart.display().to_string(),
            iterations: rows,
        });
    }
    print!("{}", table(&rows));
    println!("chart: {}", chart.display());
    Ok(())
}

/// What the run was, from its settings (`run.json`), and how far it got: a title that still
/// means something once the chart is copied elsewhere (the models path it was drawn from
/// does not). The settings are left out when they cannot be read: a chart is still drawn.
fn default_title(game: GameKind, paths: &RunPaths, rows: &[IterationRow]) -> String {
    let mut title = format!("zero: {}", game.name());
    if let Ok(Some(cfg)) = read_run_config(paths) {
        title += &format!(
            ", {} preset ({}), seed {}",
            cfg.preset, cfg.net.arch, cfg.seed
        );
    }
    if let Some(last) = rows.last() {
        let plural = if last.iteration == 1 { "" } else { "s" };
        title += &format!(": {} iteration{plural}", last.iteration);
        if let Some(m) = last.minutes {
            title += &format!(" in {m:.1} min");
        }
    }
    title
}
