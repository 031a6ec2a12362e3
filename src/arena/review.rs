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
use crate::games::{Connect4, Game, Move};
use crate::solvers::connect4::{Position, Solver};
use crate::solvers::connect4_book::OutOfTime;
use crate::solvers::exact::Exact;

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

/// A mistake in a game of any kind, graded by the game's exact solver: what [`Grader`] finds
/// in Connect Four, with moves written as the game writes them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GameMistake {
    /// The move's number in the game, 1 for the first (given opening plies included).
    pub move_number: usize,
    /// 0 if the first side made it, 1 the second.
    pub side: u8,
    /// The position before the move: the moves from the start.
    pub position: String,
    pub played: String,
    /// The mover's result with perfect play before and after the move: 1 win, 0 draw, -1 loss.
    pub before: i32,
    pub after: i32,
    /// The moves that kept `before`.
    pub best: Vec<String>,
}

/// The verdict on a game: its mistakes, and how far the grading got.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GameVerdict {
    pub mistakes: Vec<GameMistake>,
    /// Moves graded, from the first after the opening; all of them when `complete`.
    pub graded: usize,
    /// Whether every move after the opening was graded (the solver may run out of time).
    pub complete: bool,
}

/// Every mistake in the game `moves` (legal, from the start), leaving out its first `skip`
/// plies, graded by `exact` as [`Grader`] grades Connect Four. When the solver runs out of
/// time ([`OutOfTime`]) the verdict so far comes back, marked incomplete.
pub fn game_mistakes<G: Game>(
    exact: &mut dyn Exact<G>,
    moves: &[Move],
    skip: usize,
) -> Result<GameVerdict> {
    let mut known: HashMap<u64, i32> = HashMap::new();
    let mut verdict = GameVerdict {
        mistakes: Vec::new(),
        graded: 0,
        complete: false,
    };
    let (mut pos, mut line) = (G::new(), String::new());
    for (ply, &m) in moves.iter().enumerate() {
        if !pos.is_legal(m) {
            bail!("move {} of the game is not legal", ply + 1);
        }
        if ply >= skip {
            match grade_move(exact, &mut known, &pos, m) {
                Ok(Some((before, after, best))) => verdict.mistakes.push(GameMistake {
                    move_number: ply + 1,
                    side: pos.to_move().index() as u8,
                    position: line.clone(),
                    played: pos.format_move(m),
                    before,
                    after,
                    best: best.into_iter().map(|b| pos.format_move(b)).collect(),
                }),
                Ok(None) => {}
                Err(e) if e.is::<OutOfTime>() => return Ok(verdict),
                Err(e) => return Err(e),
            }
            verdict.graded += 1;
        }
        line.push_str(&pos.format_move(m));
        pos.play(m);
    }
    verdict.complete = true;
    Ok(verdict)
}

/// A graded move: `None` if it kept the mover's result, else the result before and after and
/// the moves that kept it.
type Graded = Option<(i32, i32, Vec<Move>)>;

fn grade_move<G: Game>(
    exact: &mut dyn Exact<G>,
    known: &mut HashMap<u64, i32>,
    pos: &G,
    m: Move,
) -> Result<Graded> {
    let mut value = |p: &G| -> Result<i32> {
        if let Some(&v) = known.get(&p.key()) {
            return Ok(v);
        }
        let v = exact.value(p)?.signum();
        known.insert(p.key(), v);
        Ok(v)
    };
    let before = value(pos)?;
    let mut move_value = |m: Move| -> Result<i32> {
        let mut child = pos.clone();
        child.play(m);
        match child.outcome() {
            Some(o) => Ok(o.value_for(pos.to_move()) as i32),
            None => Ok(-value(&child)?),
        }
    };
    let after = move_value(m)?;
    if after >= before {
        return Ok(None);
    }
    let mut best = Vec::new();
    for other in pos.legal_moves() {
        if move_value(other)? == before {
            best.push(other);
        }
    }
    Ok(Some((before, after, best)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rng::rng_from_seed;
    use crate::games::TicTacToe;
    use crate::solvers::connect4::DEFAULT_TABLE_ENTRIES;
    use crate::solvers::connect4_book::Oracle;
    use crate::solvers::exhaustive::SolveTable;
    use rand::Rng;

    /// The moves of `start` (a position of `G`), then random moves to the end.
    fn random_game<G: Game>(start: &str, seed: u64) -> Vec<Move> {
        let mut pos = G::new();
        let mut moves = Vec::new();
        for c in start.chars() {
            let m = pos.parse_move(&c.to_string()).unwrap();
            moves.push(m);
            pos.play(m);
        }
        let mut rng = rng_from_seed(seed);
        while pos.outcome().is_none() {
            let legal = pos.legal_moves();
            let m = legal[rng.random_range(0..legal.len())];
            moves.push(m);
            pos.play(m);
        }
        moves
    }

    #[test]
    fn any_game_is_graded_as_zero_review_grades_connect_four() {
        let mut oracle = Oracle::new(DEFAULT_TABLE_ENTRIES, None).unwrap();
        let mut grader = Grader::new(Solver::new(DEFAULT_TABLE_ENTRIES));
        let mut found = 0;
        // Pons' position Test_L3_R1 (37 stones), played on at random: late enough in the
        // game to solve at once without the opening book.
        let start = "2252576253462244111563365343671351441";
        for seed in 0..6 {
            let moves = random_game::<Connect4>(start, seed);
            let skip = start.len() - 4;
            let line: String = moves.iter().map(|m| (m + 1).to_string()).collect();
            let theirs = grader.mistakes(&line, skip).unwrap();
            let ours = game_mistakes::<Connect4>(&mut oracle, &moves, skip).unwrap();
            assert!(ours.complete && ours.graded == moves.len() - skip);
            let ours: Vec<_> = ours
                .mistakes
                .iter()
                .map(|m| {
                    let best = m.best.iter().map(|b| b.parse().unwrap()).collect();
                    (
                        m.move_number,
                        m.position.clone(),
                        m.played.parse().unwrap(),
                        m.before,
                        m.after,
                        best,
                    )
                })
                .collect();
            let theirs: Vec<(usize, String, usize, i32, i32, Vec<usize>)> = theirs
                .into_iter()
                .map(|m| {
                    (
                        m.move_number,
                        m.position,
                        m.played,
                        m.before,
                        m.after,
                        m.best,
                    )
                })
                .collect();
            assert_eq!(ours, theirs, "{line}");
            found += ours.len();
        }
        assert!(found > 0, "random games make mistakes");
    }

    #[test]
    fn a_thrown_away_tic_tac_toe_win_is_a_mistake() {
        // X 1, O 2, X 5, O 9: X wins with 4 or 7 (each makes two threats at once); 3 makes
        // one, and O holds the draw.
        let moves: Vec<Move> = [1, 2, 5, 9, 3].iter().map(|c| c - 1).collect();
        let mut table = SolveTable::new();
        let v = game_mistakes::<TicTacToe>(&mut table, &moves, 0).unwrap();
        assert!(v.complete && v.graded == 5);
        // O's 2 already lost (X forks); then X's 3 gives the win away.
        let last = v.mistakes.last().unwrap();
        assert_eq!(
            (last.move_number, last.side, last.played.as_str()),
            (5, 0, "3")
        );
        assert_eq!((last.before, last.position.as_str()), (1, "1259"));
        assert!(last.best.contains(&"4".to_string()) && last.best.contains(&"7".to_string()));
        // Given plies are not graded.
        let v = game_mistakes::<TicTacToe>(&mut table, &moves, 5).unwrap();
        assert!(v.complete && v.graded == 0 && v.mistakes.is_empty());
    }
}
