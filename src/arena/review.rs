//! Grading played Connect Four games with the solver (`zero review`): every move that threw
//! away a win or a draw, so a match's losses can be traced to the positions that decided them.
//!
//! Why: against the solver, `best` loses the same few games over and over; the game records of
//! `zero arena --record` and this review showed that most of them turn on one move in the
//! opening, which no tally of wins and losses can show.

use std::collections::HashMap;

use anyhow::{bail, Result};
use serde::Serialize;

use crate::games::connect4::{HEIGHT, WIDTH};
use crate::games::{Connect4, Game};
use crate::solvers::connect4::{Position, Solver};

/// A move that made its player's result worse with perfect play from then on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mistake {
    /// The move's number in the game, 1 for the first (random opening plies included).
    pub move_number: usize,
    /// The position before the move, as columns played (Pons' notation).
    pub position: String,
    /// The column played, 1-7.
    pub played: usize,
    /// The mover's result with perfect play before and after the move: 1 win, 0 draw, -1 loss.
    pub before: i32,
    pub after: i32,
    /// The columns that kept `before`.
    pub best: Vec<usize>,
}

/// Weak solving (win, draw or loss) with the results of positions seen before remembered, so
/// the many games of a match that share their openings are solved once.
pub struct Grader {
    solver: Solver,
    known: HashMap<(u64, bool), i32>,
}

impl Grader {
    /// `solver` should carry an opening book: the first plies of a game are the hardest to solve.
    pub fn new(solver: Solver) -> Grader {
        Grader {
            solver,
            known: HashMap::new(),
        }
    }

    /// The result for the side to move of a position that is not over: 1, 0 or -1.
    fn value(&mut self, p: &Position) -> i32 {
        let key = p.canonical_key();
        if let Some(&v) = self.known.get(&key) {
            return v;
        }
        let v = self.solver.solve_weak(p).signum();
        self.known.insert(key, v);
        v
    }

    /// The mover's result after playing `col` (legal) in `p` (not over).
    fn move_value(&mut self, p: &Position, col: usize) -> i32 {
        if p.is_winning_move(col) {
            return 1;
        }
        let mut child = *p;
        child.play_col(col);
        if child.moves() as usize == WIDTH * HEIGHT {
            return 0;
        }
        -self.value(&child)
    }

    /// Every mistake in the game `line` (columns 1-7 from the empty board), leaving out its
    /// first `skip` plies (an opening the players did not choose).
    pub fn mistakes(&mut self, line: &str, skip: usize) -> Result<Vec<Mistake>> {
        let mut p = Position::from_game(&Connect4::new());
        let mut found = Vec::new();
        let mut before_move = String::new();
        for (ply, c) in line.chars().enumerate() {
            let col = match c.to_digit(10) {
                Some(d @ 1..=7) => d as usize - 1,
                _ => bail!("'{c}' at move {} of {line} is not a column 1-7", ply + 1),
            };
            if !p.can_play(col) {
                bail!("column {c} at move {} of {line} is full", ply + 1);
            }
            if ply >= skip {
                let before = self.value(&p);
                let after = self.move_value(&p, col);
                if after < before {
                    let best = (0..WIDTH)
                        .filter(|&m| p.can_play(m) && self.move_value(&p, m) == before)
                        .map(|m| m + 1)
                        .collect();
                    found.push(Mistake {
                        move_number: ply + 1,
                        position: before_move.clone(),
                        played: col + 1,
                        before,
                        after,
                        best,
                    });
                }
            }
            if p.is_winning_move(col) {
                if ply + 1 != line.len() {
                    bail!("{line} goes on after a win at move {}", ply + 1);
                }
                break;
            }
            p.play_col(col);
            before_move.push(c);
        }
        Ok(found)
    }
}
