//! The exact solver of the small games (tic-tac-toe, 4x4 Othello, and Connect Four positions
//! near the end): a full negamax over every reachable position, each solved once thanks to a
//! table of exact scores. Tic-tac-toe has 5,478 positions and 4x4 Othello about 75,000, so a
//! whole game solves in a few milliseconds.

use std::collections::HashMap;

use anyhow::{bail, Result};
use rand::Rng;

use super::{position_key, terminal_score};
use crate::games::{Game, Move, Moves};
use crate::players::{rng_from_seed, Agent, Rng64};

/// Exact scores of solved positions (the score scale of [`super`]), by position key.
#[derive(Clone, Debug, Default)]
pub struct SolveTable {
    scores: HashMap<u64, i32>,
}

impl SolveTable {
    pub fn new() -> Self {
        SolveTable::default()
    }
    /// Number of positions solved so far.
    pub fn len(&self) -> usize {
        self.scores.len()
    }
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }
}

/// The exact score of `pos` for the side to move: `WIN - p` if the mover wins with the game
/// ending at ply `p` (as fast as it can force), `-(WIN - p)` if it loses (as late as it can
/// hold out), 0 for a draw; see [`super::score_sign`] and [`super::plies_to_end`].
pub fn solve_value<G: Game>(pos: &G, table: &mut SolveTable) -> i32 {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return terminal_score(pos);
    }
    let key = position_key(pos);
    if let Some(&v) = table.scores.get(&key) {
        return v;
    }
    let mut best = i32::MIN;
    for m in moves {
        let mut child = pos.clone();
        child.play(m);
        best = best.max(-solve_value(&child, table));
    }
    table.scores.insert(key, best);
    best
}

/// The exact score of `pos` and every move that keeps it (the fastest wins, the slowest
/// losses); no move if the game is over.
pub fn best_moves<G: Game>(pos: &G, table: &mut SolveTable) -> (i32, Moves) {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return (terminal_score(pos), Moves::new());
    }
    let mut best_value = i32::MIN;
    let mut best = Moves::new();
    for m in moves {
        let mut child = pos.clone();
        child.play(m);
        let v = -solve_value(&child, table);
        if v > best_value {
            best_value = v;
            best.clear();
        }
        if v == best_value {
            best.push(m);
        }
    }
    (best_value, best)
}

/// The `solver` player: a move of the best exact score, at random among equals. Its table
/// keeps exact scores only, so keeping it from game to game changes no move.
pub struct SolverAgent<G: Game> {
    table: SolveTable,
    rng: Rng64,
    _game: std::marker::PhantomData<G>,
}

impl<G: Game> SolverAgent<G> {
    pub fn new() -> Self {
        SolverAgent {
            table: SolveTable::new(),
            rng: rng_from_seed(0),
            _game: std::marker::PhantomData,
        }
    }
}

impl<G: Game> Default for SolverAgent<G> {
    fn default() -> Self {
        Self::new()
    }
}

impl<G: Game> Agent<G> for SolverAgent<G> {
    fn new_game(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
    }
    fn choose(&mut self, pos: &G) -> Result<Move> {
        let (_, best) = best_moves(pos, &mut self.table);
        if best.is_empty() {
            bail!("no legal move: the game is over");
        }
        Ok(best[self.rng.random_range(0..best.len())])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::TicTacToe;
    use crate::search::score_sign;

    #[test]
    fn tictactoe_is_a_draw() {
        let mut table = SolveTable::new();
        assert_eq!(score_sign(solve_value(&TicTacToe::new(), &mut table)), 0);
        // X in the centre, O on an edge: X wins
        let p = TicTacToe::parse_position("52").unwrap();
        assert_eq!(score_sign(solve_value(&p, &mut table)), 1);
        // ... and O answering in a corner holds the draw
        let p = TicTacToe::parse_position("51").unwrap();
        assert_eq!(score_sign(solve_value(&p, &mut table)), 0);
    }
}
