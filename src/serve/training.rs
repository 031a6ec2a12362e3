//! The training page's figures: for each game with a run under the models directory, the
//! table and chart of `zero report`, built by the same code ([`crate::alphazero::report::table`],
//! [`crate::alphazero::report::chart`]).

use std::path::Path;

use serde::Serialize;

use super::errors::ApiError;
use crate::alphazero::report::chart::svg;
use crate::alphazero::report::rows::{iteration_rows, IterationRow};
use crate::alphazero::report::table::table;
use crate::alphazero::run::metrics::read_metrics;
use crate::games::GameKind;

#[derive(Serialize)]
pub struct Runs {
    pub runs: Vec<Run>,
}

/// One game's run.
#[derive(Serialize)]
pub struct Run {
    pub game: &'static str,
    pub iterations: usize,
    /// `zero report`'s table.
    pub table: String,
    /// Where its chart is (`/api/training/<game>/chart.svg`).
    pub chart: String,
    pub rows: Vec<IterationRow>,
    /// Why the run's log could not be read, if it could not.
    pub error: Option<String>,
}

/// The runs under `models`: every game whose directory holds a `metrics.jsonl`.
pub fn runs(models: &Path) -> Runs {
    let runs = GameKind::ALL
        .into_iter()
        .filter(|kind| models.join(kind.name()).join("metrics.jsonl").is_file())
        .map(|kind| match rows(models, kind) {
            Ok(rows) => Run {
                game: kind.name(),
                iterations: rows.len(),
                table: table(&rows),
                chart: format!("/api/training/{}/chart.svg", kind.name()),
                rows,
                error: None,
            },
            Err(e) => Run {
                game: kind.name(),
                iterations: 0,
                table: String::new(),
                chart: String::new(),
                rows: Vec::new(),
                error: Some(e.message),
            },
        })
        .collect();
    Runs { runs }
}

fn rows(models: &Path, kind: GameKind) -> Result<Vec<IterationRow>, ApiError> {
    let path = models.join(kind.name()).join("metrics.jsonl");
    let records = read_metrics(&path).map_err(|e| ApiError::not_found(format!("{e:#}")))?;
    Ok(iteration_rows(&records))
}

/// The chart of `game`'s run, as `zero report` draws it.
pub fn chart(models: &Path, game: GameKind) -> Result<String, ApiError> {
    let rows = rows(models, game)?;
    Ok(svg(&rows, &format!("zero: {game} run")))
}
