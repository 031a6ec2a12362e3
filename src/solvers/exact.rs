//! One interface to the exact solvers, [`Exact`]: the exact value of a position, the result
//! of each of its moves and its optimal moves. The arena's grading, `zero targets` and the
//! server's perfect-play overlay and `solver` player all read a game's solver through it; a
//! game's facts ([`crate::catalog::Catalogued::exact`]) say which solver it has: the
//! exhaustive one of the small games unless it names another (Connect Four's book-backed
//! [`Oracle`], or the alpha-beta [`super::negamax::NegamaxSolver`], which implements it in
//! its own file).

use std::time::Instant;

use anyhow::Result;

use super::connect4::{stones_to_end, Position};
use super::connect4_book::Oracle;
use super::exhaustive::{best_moves, solve_value, SolveTable};
use crate::core::stop::Stop;
use crate::games::{Connect4, Game, Move};
use crate::search::{plies_to_end, score_sign};

/// A solved move: -1, 0 or 1 for the mover if it plays it, and plies until the game ends with
/// best play (this move included) for a decided one.
pub type Solved = (i32, Option<u32>);

/// An exact solver of game `G`, with whatever it keeps between positions (tables, a book).
pub trait Exact<G: Game>: Send {
    /// The exact value of `pos` for the side to move: positive a win, 0 a draw, negative a
    /// loss (only the sign is promised).
    fn value(&mut self, pos: &G) -> Result<i32>;
    /// Each legal move of `pos` (not over) with its result; `None` for a move not solved
    /// before the deadline.
    fn move_results(&mut self, pos: &G) -> Vec<(Move, Option<Solved>)>;
    /// The optimal moves of `pos` (not over): the fastest wins, else the draws, else the
    /// slowest losses.
    fn best_moves(&mut self, pos: &G) -> Result<Vec<Move>>;
    /// Makes searches stop at `deadline` (never, with `None`): a search past it fails with
    /// [`crate::solvers::connect4_book::OutOfTime`]. Solvers that always finish fast ignore it.
    fn set_deadline(&mut self, _deadline: Option<Instant>) {}
    /// Makes searches also stop once `stop` is raised, failing as at the deadline (`None`:
    /// no flag). Solvers that always finish fast ignore it.
    fn set_stop(&mut self, _stop: Option<Stop>) {}
}

/// The small games: the whole tree below a position, each position solved once.
impl<G: Game> Exact<G> for SolveTable {
    fn value(&mut self, pos: &G) -> Result<i32> {
        Ok(solve_value(pos, self))
    }
    fn move_results(&mut self, pos: &G) -> Vec<(Move, Option<Solved>)> {
        pos.legal_moves()
            .into_iter()
            .map(|m| {
                let mut child = pos.clone();
                child.play(m);
                let v = -solve_value(&child, self);
                (m, Some((score_sign(v), plies_to_end(pos, v))))
            })
            .collect()
    }
    fn best_moves(&mut self, pos: &G) -> Result<Vec<Move>> {
        Ok(best_moves(pos, self).1.to_vec())
    }
}

/// Connect Four: Pons' solver with the opening book and the cache; a value is solved weakly
/// (its sign only), a move exactly.
impl Exact<Connect4> for Oracle {
    fn value(&mut self, pos: &Connect4) -> Result<i32> {
        Ok(self.solve_weak(&Position::from_game(pos))?.0)
    }
    fn move_results(&mut self, pos: &Connect4) -> Vec<(Move, Option<Solved>)> {
        let p = Position::from_game(pos);
        // Once the deadline has passed, each further move is still looked up in the book
        // and the cache, and only those found there are known.
        pos.legal_moves()
            .into_iter()
            .map(|m| {
                let solved = self
                    .move_score(&p, m as usize)
                    .ok()
                    .map(|s| (s.signum(), stones_to_end(s, p.moves())));
                (m, solved)
            })
            .collect()
    }
    fn best_moves(&mut self, pos: &Connect4) -> Result<Vec<Move>> {
        let (cols, _) = Oracle::best_moves(self, &Position::from_game(pos))?;
        Ok(cols.into_iter().map(|c| c as Move).collect())
    }
    fn set_deadline(&mut self, deadline: Option<Instant>) {
        Oracle::set_deadline(self, deadline);
    }
    fn set_stop(&mut self, stop: Option<Stop>) {
        Oracle::set_stop(self, stop);
    }
}
