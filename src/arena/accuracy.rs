//! Grading a Connect Four player the standard way: on positions labelled by the solver (Pascal
//! Pons' test files, `POSITION SCORE` a line), the share of moves that are mistakes, a mistake
//! being a move whose win/draw/loss value is worse than the position's.
//!
//! The chosen moves' values come from the solver's book and cache where they are known (a
//! directory such as `data/connect4`, shared with the `solver` player), and what a search finds
//! is added to the cache: grading another network on the same set mostly chooses moves already
//! solved, and Begin-Hard's positions take about a second and a half each to solve.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;

use crate::agent::Agent;
use crate::core::progress;
use crate::core::rng::mix64;
use crate::games::{Connect4, Game, Outcome};
use crate::solvers::connect4::{read_labelled_positions, Position};
use crate::solvers::connect4_book::{Oracle, Source};

#[derive(Clone, Debug, Serialize)]
pub struct AccuracyResult {
    pub file: String,
    pub positions: u64,
    pub mistakes: u64,
    pub mistake_rate: f64,
    /// Chosen moves whose value needed a search (the others came from the book or the cache).
    pub searched: u64,
    pub seconds: f64,
    /// Each mistake, in the file's order (printed only when asked: `zero accuracy --mistakes`).
    #[serde(skip)]
    pub mistaken: Vec<Mistake>,
}

/// One mistake: the position as its file names it, the move played (Pons' column, 1-7) and the
/// win/draw/loss values (1, 0, -1, for the player to move) of that move and of the position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mistake {
    pub position: String,
    pub played: String,
    pub played_value: i32,
    pub value: i32,
}

/// The win/draw/loss value (1, 0, -1) of playing `col` in `pos`, for the player who plays it,
/// and whether it took a search.
fn move_value(oracle: &mut Oracle, pos: &Connect4, col: u8) -> Result<(i32, bool)> {
    let mut child = *pos;
    child.play(col);
    Ok(match child.outcome() {
        Some(Outcome::Draw) => (0, false),
        Some(Outcome::Win(_)) => (1, false),
        None => {
            let (value, source) = oracle.solve_weak(&Position::from_game(&child))?;
            (-value, source == Source::Search)
        }
    })
}

/// Grades `agent` on the positions of `file` (the first `limit` if given), the chosen moves'
/// values from `oracle` (one for every file graded, so the book and cache are read once).
pub fn accuracy(
    agent: &mut dyn Agent<Connect4>,
    file: &Path,
    limit: Option<usize>,
    seed: u64,
    oracle: &mut Oracle,
    progress: bool,
) -> Result<AccuracyResult> {
    let started = Instant::now();
    let mut positions = read_labelled_positions(file)?;
    if let Some(l) = limit {
        positions.truncate(l);
    }
    let task = progress::task(positions.len() as u64, "positions", progress);
    let (mut mistaken, mut searched) = (Vec::new(), 0);
    for (i, (line, pos, score)) in positions.iter().enumerate() {
        agent.new_game(mix64(seed ^ i as u64));
        let col = agent.choose(pos)?;
        if !pos.is_legal(col) {
            bail!("the player chose an illegal move in {}", file.display());
        }
        let (value, search) = move_value(oracle, pos, col)?;
        if value < score.signum() {
            mistaken.push(Mistake {
                position: line.clone(),
                played: pos.format_move(col),
                played_value: value,
                value: score.signum(),
            });
        }
        searched += u64::from(search);
        task.inc(1);
    }
    drop(task);
    let n = positions.len() as u64;
    let mistakes = mistaken.len() as u64;
    Ok(AccuracyResult {
        file: file.display().to_string(),
        positions: n,
        mistakes,
        mistake_rate: mistakes as f64 / n.max(1) as f64,
        searched,
        seconds: started.elapsed().as_secs_f64(),
        mistaken,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Move;
    use crate::solvers::connect4::DEFAULT_TABLE_ENTRIES;

    /// The leftmost legal column: right on some positions, a mistake on others.
    struct Leftmost;
    impl Agent<Connect4> for Leftmost {
        fn choose(&mut self, pos: &Connect4) -> Result<Move> {
            let legal = pos.legal_moves();
            legal
                .first()
                .copied()
                .ok_or_else(|| anyhow::anyhow!("game over"))
        }
    }

    #[test]
    fn a_second_grading_answers_from_the_cache_with_the_same_figures() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/connect4/Test_L2_R1");
        let dir = tempfile::tempdir().unwrap();
        let grade = |dir: Option<&Path>| {
            let mut oracle = Oracle::new(DEFAULT_TABLE_ENTRIES, dir)?;
            accuracy(&mut Leftmost, &file, Some(40), 0, &mut oracle, false)
        };
        let plain = grade(None).unwrap();
        let first = grade(Some(dir.path())).unwrap();
        let second = grade(Some(dir.path())).unwrap();
        assert!(plain.mistakes > 0 && plain.mistakes < 40, "{plain:?}");
        // Each mistake listed: the leftmost column, worse than the position's value.
        assert_eq!(plain.mistaken.len() as u64, plain.mistakes);
        for m in &plain.mistaken {
            assert!(m.played_value < m.value, "{m:?}");
            let pos = Connect4::parse_position(&m.position).unwrap();
            assert_eq!(m.played, pos.format_move(pos.legal_moves()[0]), "{m:?}");
        }
        assert_eq!(first.mistaken, plain.mistaken);
        assert_eq!(
            (first.mistakes, second.mistakes),
            (plain.mistakes, plain.mistakes)
        );
        assert!(first.searched > 0, "{first:?}");
        assert_eq!(second.searched, 0, "{second:?}");
    }
}
