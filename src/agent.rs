//! Something that picks moves: [`Agent`], the one interface every player implements (random,
//! rules, alpha-beta, solvers, tree search with or without a network, Q-tables, a person), and
//! what a searching player can say about its last move ([`Analysis`]).

use anyhow::{bail, Result};
use rand::Rng;
use serde::Serialize;

use crate::core::rng::{rng_from_seed, Rng64};
use crate::core::stop::Stop;
use crate::games::{Game, Move};

/// Something that picks moves in a game.
pub trait Agent<G: Game>: Send {
    /// Starts a new game; `seed` is derived from the match seed and the game's index, so a
    /// match gives the same result however its games are spread over threads.
    fn new_game(&mut self, _seed: u64) {}
    /// Picks a legal move in a position that is not over.
    fn choose(&mut self, pos: &G) -> Result<Move>;
    /// Told of every move played (its own and the opponent's), e.g. for tree reuse.
    fn observe(&mut self, _before: &G, _m: Move) {}
    /// Told the final position.
    fn game_over(&mut self, _pos: &G) {}
    /// What the player thought of its last choice, if it searches.
    fn analysis(&self) -> Option<Analysis> {
        None
    }
    /// Hands the player a flag to look at while it chooses: once raised, a player that can
    /// stop early moves at once with what it has (a tree search its best move so far); one
    /// that cannot ignores it and finishes as usual.
    fn set_stop(&mut self, _stop: Stop) {}
}

/// A searching player's view of the position it last moved in.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Analysis {
    /// The position's value for the mover, in [-1, 1].
    pub value: f32,
    /// Simulations behind the figures.
    pub visits: u32,
    /// The moves searched, most visited first: the move and its share of the visits.
    pub moves: Vec<(Move, f32)>,
}

/// Plays uniformly at random among the legal moves.
pub struct RandomAgent {
    rng: Rng64,
}

impl RandomAgent {
    pub fn new() -> Self {
        RandomAgent {
            rng: rng_from_seed(0),
        }
    }
}

impl Default for RandomAgent {
    fn default() -> Self {
        Self::new()
    }
}

impl<G: Game> Agent<G> for RandomAgent {
    fn new_game(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
    }
    fn choose(&mut self, pos: &G) -> Result<Move> {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            bail!("no legal move: the game is over");
        }
        Ok(moves[self.rng.random_range(0..moves.len())])
    }
}
