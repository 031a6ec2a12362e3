//! `zero report`: a run's progress per iteration as a table (or JSON) and an SVG chart.

use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use crate::alphazero::chart::svg;
use crate::alphazero::metrics::{iteration_rows, read_metrics, IterationRow};
use crate::alphazero::report::table;
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
    let dir = args.models.join(args.game.name());
    let metrics = dir.join("metrics.jsonl");
    let rows = iteration_rows(&read_metrics(&metrics)?);
    let chart = args.svg.unwrap_or_else(|| dir.join("report.svg"));
    let title = format!("zero: {} run in {}", args.game.name(), dir.display());
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
