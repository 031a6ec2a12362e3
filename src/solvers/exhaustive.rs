//! The exact solver of the small games (tic-tac-toe, 4x4 Othello, and Connect Four positions
//! near the end): a full negamax over every reachable position, each solved once thanks to a
//! table of exact scores. Tic-tac-toe has 5,478 positions and 4x4 Othello about 75,000, so a
//! whole game solves in a few milliseconds.

use std::collections::HashMap;

use anyhow::{bail, Result};
use rand::Rng;

use crate::agent::Agent;
use crate::core::rng::{rng_from_seed, Rng64};
use crate::games::{Game, Move, Moves};
use crate::search::{position_key, score_sign, terminal_score};

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

/// How often the opponent model of [`SolverAgent`] plays a uniformly random move instead of
/// a correct one. Small, so that the model still expects mostly correct play, yet large
/// enough that a line with many ways to go wrong beats a line with none.
pub const OPPONENT_ERROR_RATE: f64 = 0.25;

/// The `solver` player: always a move of the best game-theoretic result (win, draw, loss).
/// Among those it prefers the move that gives a fallible opponent the best chance to go
/// wrong: the expected result (1 win, 1/2 draw, 0 loss) against an opponent that plays a
/// correct move, the worst for us, with probability `1 - ε` and a uniformly random move
/// with probability `ε` ([`OPPONENT_ERROR_RATE`]). In a won position every winning move
/// expects 1, so the fastest win decides; in a lost one (4x4 Othello as Black, a loss
/// against perfect play) it sets the most traps instead of merely dragging the game out.
/// Remaining ties: the fastest win or slowest loss, then at random.
pub struct SolverAgent<G: Game> {
    table: SolveTable,
    /// Expected results against the opponent model, by position key and whether the
    /// solver is the side to move.
    expected: HashMap<(u64, bool), f64>,
    error_rate: f64,
    rng: Rng64,
    _game: std::marker::PhantomData<G>,
}

impl<G: Game> SolverAgent<G> {
    pub fn new() -> Self {
        SolverAgent {
            table: SolveTable::new(),
            expected: HashMap::new(),
            error_rate: OPPONENT_ERROR_RATE,
            rng: rng_from_seed(0),
            _game: std::marker::PhantomData,
        }
    }

    /// Every move of `pos` with its child and exact score from the mover's view, and the best
    /// result (sign) among them.
    fn scored_moves(&mut self, pos: &G) -> (i32, Vec<(Move, G, i32)>) {
        let scored: Vec<(Move, G, i32)> = pos
            .legal_moves()
            .into_iter()
            .map(|m| {
                let mut child = pos.clone();
                child.play(m);
                let v = -solve_value(&child, &mut self.table);
                (m, child, v)
            })
            .collect();
        let best = scored.iter().map(|s| score_sign(s.2)).max().unwrap_or(0);
        (best, scored)
    }

    /// The expected result for the solver (1 win, 1/2 draw, 0 loss) at `pos`, where `mine`
    /// says whether the solver is to move, under the opponent model above.
    fn expected_result(&mut self, pos: &G, mine: bool) -> f64 {
        let key = (position_key(pos), mine);
        if let Some(&e) = self.expected.get(&key) {
            return e;
        }
        let (best_sign, scored) = self.scored_moves(pos);
        if scored.is_empty() {
            let for_mover = 0.5 + 0.5 * score_sign(terminal_score(pos)) as f64;
            return if mine { for_mover } else { 1.0 - for_mover };
        }
        // The solver weighs only its correct moves; the opponent's random moves are all of them.
        let mut best_correct = if mine { 0.0f64 } else { 1.0f64 };
        let mut total = 0.0;
        for (_, child, v) in &scored {
            let correct = score_sign(*v) == best_sign;
            if mine && !correct {
                continue;
            }
            let e = self.expected_result(child, (child.to_move() == pos.to_move()) == mine);
            total += e;
            if correct {
                best_correct = if mine {
                    best_correct.max(e)
                } else {
                    best_correct.min(e)
                };
            }
        }
        let e = if mine {
            best_correct
        } else {
            let random = total / scored.len() as f64;
            (1.0 - self.error_rate) * best_correct + self.error_rate * random
        };
        self.expected.insert(key, e);
        e
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
        let (best_sign, scored) = self.scored_moves(pos);
        if scored.is_empty() {
            bail!("no legal move: the game is over");
        }
        // (expected result, exact score) of each correct move; the best of both, in order
        let ranked: Vec<(Move, f64, i32)> = scored
            .iter()
            .filter(|(_, _, v)| score_sign(*v) == best_sign)
            .map(|(m, child, v)| {
                let mine = child.to_move() == pos.to_move();
                (*m, self.expected_result(child, mine), *v)
            })
            .collect();
        let top_expected = ranked.iter().map(|r| r.1).fold(f64::MIN, f64::max);
        let near = |e: f64| e >= top_expected - 1e-9;
        let top_score = ranked
            .iter()
            .filter(|r| near(r.1))
            .map(|r| r.2)
            .max()
            .unwrap_or(0);
        let best: Vec<Move> = ranked
            .iter()
            .filter(|r| near(r.1) && r.2 == top_score)
            .map(|r| r.0)
            .collect();
        Ok(best[self.rng.random_range(0..best.len())])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::TicTacToe;

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
