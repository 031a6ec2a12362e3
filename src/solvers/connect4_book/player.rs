//! The `solver` player: perfect play, with the book and cache of a directory.

use std::path::PathBuf;

use anyhow::{bail, Result};
use rand::Rng;

use super::Oracle;
use crate::agent::Agent;
use crate::core::rng::{rng_from_seed, Rng64};
use crate::games::{Connect4, Game, Move};
use crate::solvers::connect4::Position;

/// Table entries of the `solver` player: 2^22 (32 MiB), several players may run at once.
const PLAYER_TABLE_ENTRIES: usize = 1 << 22;

/// The perfect player: among the optimal moves (the fastest win, or the slowest loss), one at
/// random with its seeded generator. Uses the book and cache in the directory it is given.
pub struct SolverAgent {
    oracle: Option<Oracle>,
    dir: PathBuf,
    rng: Rng64,
}

impl SolverAgent {
    pub fn new(dir: impl Into<PathBuf>) -> SolverAgent {
        SolverAgent {
            oracle: None,
            dir: dir.into(),
            rng: rng_from_seed(0),
        }
    }
}

impl Agent<Connect4> for SolverAgent {
    fn new_game(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
    }
    fn choose(&mut self, pos: &Connect4) -> Result<Move> {
        if pos.outcome().is_some() {
            bail!("no legal move: the game is over");
        }
        // The table and files are loaded on the first move, not when the player is built.
        if self.oracle.is_none() {
            self.oracle = Some(Oracle::new(PLAYER_TABLE_ENTRIES, Some(&self.dir))?);
        }
        let Some(oracle) = self.oracle.as_mut() else {
            bail!("the solver could not start");
        };
        let (cols, _) = oracle.best_moves(&Position::from_game(pos))?;
        Ok(cols[self.rng.random_range(0..cols.len())] as Move)
    }
}
