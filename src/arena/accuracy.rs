//! Grading a Connect Four player the standard way: on positions labelled by the solver (Pascal
//! Pons' test files, `POSITION SCORE` a line), the share of moves that are mistakes, a mistake
//! being a move whose win/draw/loss value is worse than the position's.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;

use crate::agent::Agent;
use crate::core::progress;
use crate::core::rng::mix64;
use crate::games::{Connect4, Game, Outcome};
use crate::solvers::connect4::{read_labelled_positions, Position, Solver, DEFAULT_TABLE_ENTRIES};

#[derive(Clone, Debug, Serialize)]
pub struct AccuracyResult {
    pub file: String,
    pub positions: u64,
    pub mistakes: u64,
    pub mistake_rate: f64,
    pub seconds: f64,
}

/// The win/draw/loss value (1, 0, -1) of playing `col` in `pos`, for the player who plays it.
fn move_value(solver: &mut Solver, pos: &Connect4, col: u8) -> i32 {
    let mut child = *pos;
    child.play(col);
    match child.outcome() {
        Some(Outcome::Draw) => 0,
        Some(Outcome::Win(_)) => 1,
        None => -solver.solve_weak(&Position::from_game(&child)),
    }
}

/// Grades `agent` on the positions of `file` (the first `limit` if given).
pub fn accuracy(
    agent: &mut dyn Agent<Connect4>,
    file: &Path,
    limit: Option<usize>,
    seed: u64,
    progress: bool,
) -> Result<AccuracyResult> {
    let started = Instant::now();
    let mut positions = read_labelled_positions(file)?;
    if let Some(l) = limit {
        positions.truncate(l);
    }
    let mut solver = Solver::new(DEFAULT_TABLE_ENTRIES);
    let task = progress::task(positions.len() as u64, "positions", progress);
    let mut mistakes = 0;
    for (i, (_, pos, score)) in positions.iter().enumerate() {
        agent.new_game(mix64(seed ^ i as u64));
        let col = agent.choose(pos)?;
        if !pos.is_legal(col) {
            bail!("the player chose an illegal move in {}", file.display());
        }
        if move_value(&mut solver, pos, col) < score.signum() {
            mistakes += 1;
        }
        task.inc(1);
    }
    drop(task);
    let n = positions.len() as u64;
    Ok(AccuracyResult {
        file: file.display().to_string(),
        positions: n,
        mistakes,
        mistake_rate: mistakes as f64 / n.max(1) as f64,
        seconds: started.elapsed().as_secs_f64(),
    })
}
