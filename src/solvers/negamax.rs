//! An exact solver for games whose whole tree is too big to walk once per position (the
//! exhaustive solver's way) but whose proofs are small: negamax with alpha-beta over exact
//! scores (the scale of [`crate::search::score`]: `WIN - p` for a win at ply `p`), a
//! transposition table of score bounds, the history heuristic for move order, and a look for
//! a winning move before any search. Null-window searches settle the result first and then
//! how soon the game ends (as Pons' Connect Four solver does), so a won position is proved
//! with one search and its distance with a few more. It knows nothing of a game but its
//! rules: any [`Game`] can use it.

use std::marker::PhantomData;
use std::time::Instant;

use anyhow::{bail, Result};
use rand::Rng;

use super::connect4_book::OutOfTime;
use super::exact::{Exact, Solved};
use crate::agent::Agent;
use crate::core::rng::{mix64, rng_from_seed, Rng64};
use crate::games::{Game, Move, Moves, Outcome};
use crate::search::{plies_to_end, position_key, score_sign, terminal_score, WIN};

/// What a game may tell the solver beyond its rules, to cut its search.
pub trait Tactics: Game {
    /// The moves of `self` (not over) that end the game at once in the mover's favour.
    fn winning_moves(&self) -> Moves {
        let me = self.to_move();
        let wins = |&m: &Move| {
            let mut child = self.clone();
            child.play(m);
            child.outcome() == Some(Outcome::Win(me))
        };
        self.legal_moves().into_iter().filter(wins).collect()
    }
    /// When the mover of `self` has no winning move: the moves that keep the opponent from
    /// winning at its next move, if the game knows them (every other move must lose there;
    /// none at all means every move does, and a game that says so must be one where no move
    /// loses on the spot). `None`: not known, search them all.
    fn saving_moves(&self) -> Option<Moves> {
        None
    }
    /// How promising move `m` is before any search has said so (higher first): the game's
    /// rule of thumb, such as the centre first.
    fn prior(m: Move) -> u32 {
        let _ = m;
        0
    }
}

/// Nodes between two looks at the clock when a deadline is set.
const CLOCK_NODES: u64 = 1 << 10;
/// Marks a used table slot (a position key never sets the top bit: see `position_key`).
const USED: u64 = 1 << 63;

/// What the table knows of a position: its exact score lies in `lower..=upper`.
#[derive(Clone, Copy, Default)]
struct Entry {
    key: u64,
    lower: i32,
    upper: i32,
    best: Move,
}

/// The solver, with its table and move-order statistics kept from one position to the next.
pub struct NegamaxSolver<G: Tactics> {
    table: Vec<Entry>,
    /// How often each move (by side to move and action) refuted a position.
    history: Vec<u64>,
    nodes: u64,
    deadline: Option<Instant>,
    _game: PhantomData<G>,
}

impl<G: Tactics> NegamaxSolver<G> {
    /// A solver with a table of `entries` slots (rounded up to a power of two; 24 bytes each).
    pub fn new(entries: usize) -> Self {
        NegamaxSolver {
            table: vec![Entry::default(); entries.max(2).next_power_of_two()],
            history: vec![0; 2 * G::NUM_ACTIONS],
            nodes: 0,
            deadline: None,
            _game: PhantomData,
        }
    }
    /// Positions searched so far.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }
    /// Makes searches past `deadline` fail with [`OutOfTime`].
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    /// The exact score of `pos` for the side to move: `WIN - p` if it wins with the game
    /// ending at ply `p` (as soon as it can force), `-(WIN - p)` if it loses (as late as it
    /// can hold out), 0 for a draw.
    pub fn score(&mut self, pos: &G) -> Result<i32> {
        if pos.outcome().is_some() {
            return Ok(terminal_score(pos));
        }
        let v = self.bounded(pos, -1, 1)?;
        let soonest = WIN - pos.ply() as i32 - 1;
        let (mut lo, mut hi) = match v {
            0 => return Ok(0),
            v if v > 0 => (v, soonest),
            v => (-soonest, v),
        };
        while lo < hi {
            let mid = lo + (hi - lo + 1) / 2;
            let r = self.bounded(pos, mid - 1, mid)?;
            if r >= mid {
                lo = r;
            } else {
                hi = r;
            }
        }
        Ok(lo)
    }

    /// The sign of `pos`'s exact score: 1 the mover wins, 0 a draw, -1 it loses.
    pub fn result(&mut self, pos: &G) -> Result<i32> {
        Ok(self.bounded(pos, -1, 1)?.signum())
    }

    /// The moves of `pos` (not over) whose result is `pos`'s exact score.
    pub fn optimal_moves(&mut self, pos: &G) -> Result<Moves> {
        let s = self.score(pos)?;
        let mut best = Moves::new();
        for m in pos.legal_moves() {
            let mut child = pos.clone();
            child.play(m);
            // A child never scores below -s for its mover; the move is optimal if it reaches it.
            if self.bounded(&child, -s, -s + 1)? <= -s {
                best.push(m);
            }
        }
        Ok(best)
    }

    /// Alpha-beta on the exact score, failing soft: a result at most `alpha` is an upper
    /// bound of the score, at least `beta` a lower bound, and between them the score.
    pub fn bounded(&mut self, pos: &G, alpha: i32, beta: i32) -> Result<i32> {
        self.search(pos, alpha, beta).map_err(Into::into)
    }

    fn search(&mut self, pos: &G, mut alpha: i32, mut beta: i32) -> Result<i32, OutOfTime> {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return Ok(terminal_score(pos));
        }
        self.tick()?;
        // A game not over ends a ply from now at the soonest.
        let soonest = WIN - pos.ply() as i32 - 1;
        if let Some(&m) = pos.winning_moves().first() {
            self.store(pos, soonest, soonest, m);
            return Ok(soonest);
        }
        let moves = match pos.saving_moves() {
            // Every move lets the opponent win at once.
            Some(saving) if saving.is_empty() => return Ok(-(soonest - 1)),
            Some(saving) => saving,
            None => moves,
        };
        // Without a winning move the mover wins two plies from now at the soonest (in Othello
        // the opponent's last move may end the game in the mover's favour), and may lose at
        // once (its own last move may end the game against it).
        let (ceiling, floor) = (soonest - 1, -soonest);
        beta = beta.min(ceiling);
        alpha = alpha.max(floor);
        if alpha >= beta {
            return Ok(alpha);
        }
        let mut first = None;
        let e = self.table[self.slot(pos)];
        if e.key == position_key(pos) | USED {
            if e.lower >= beta || e.lower == e.upper {
                return Ok(e.lower);
            }
            if e.upper <= alpha {
                return Ok(e.upper);
            }
            (alpha, beta) = (alpha.max(e.lower), beta.min(e.upper));
            first = Some(e.best);
        }
        let (alpha0, side) = (alpha, pos.to_move().index() * G::NUM_ACTIONS);
        let order = self.order(&moves, first, side);
        let (mut best, mut best_move) = (i32::MIN, order[0]);
        for m in order {
            let mut child = pos.clone();
            child.play(m);
            let v = -self.search(&child, -beta, -alpha)?;
            if v > best {
                (best, best_move) = (v, m);
            }
            if v > alpha {
                alpha = v;
                if alpha >= beta {
                    let left = (G::MAX_PLIES.saturating_sub(pos.ply())) as u64;
                    self.history[side + m as usize] += left * left;
                    break;
                }
            }
        }
        let lower = if best > alpha0 { best } else { -WIN };
        let upper = if best < beta { best } else { WIN };
        self.store(pos, lower, upper, best_move);
        Ok(best)
    }

    /// The moves in the order to try them: the table's best first, then by history.
    fn order(&self, moves: &Moves, first: Option<Move>, side: usize) -> Moves {
        let mut order = moves.clone();
        order.sort_by_key(|&m| {
            let hinted = first == Some(m);
            let learned = self.history[side + m as usize];
            (!hinted, u64::MAX - learned, u32::MAX - G::prior(m))
        });
        order
    }

    fn tick(&mut self) -> Result<(), OutOfTime> {
        self.nodes += 1;
        match self.deadline {
            Some(d) if self.nodes.is_multiple_of(CLOCK_NODES) && Instant::now() >= d => {
                Err(OutOfTime)
            }
            _ => Ok(()),
        }
    }

    fn slot(&self, pos: &G) -> usize {
        mix64(position_key(pos)) as usize & (self.table.len() - 1)
    }

    /// Records `lower..=upper` for `pos`, narrowing what the slot knew of the same position.
    fn store(&mut self, pos: &G, lower: i32, upper: i32, best: Move) {
        let i = self.slot(pos);
        let key = position_key(pos) | USED;
        let e = &mut self.table[i];
        if e.key == key {
            e.lower = e.lower.max(lower);
            e.upper = e.upper.min(upper);
            e.best = best;
        } else {
            *e = Entry {
                key,
                lower,
                upper,
                best,
            };
        }
    }
}

/// Games too big for the exhaustive solver: alpha-beta with a table, each value solved weakly
/// (its sign only), each move exactly.
impl<G: Tactics> Exact<G> for NegamaxSolver<G> {
    fn value(&mut self, pos: &G) -> Result<i32> {
        self.result(pos)
    }
    fn move_results(&mut self, pos: &G) -> Vec<(Move, Option<Solved>)> {
        // Once the deadline has passed every further move is unknown.
        pos.legal_moves()
            .into_iter()
            .map(|m| {
                let mut child = pos.clone();
                child.play(m);
                let solved = self
                    .score(&child)
                    .ok()
                    .map(|v| (score_sign(-v), plies_to_end(pos, -v)));
                (m, solved)
            })
            .collect()
    }
    fn best_moves(&mut self, pos: &G) -> Result<Vec<Move>> {
        Ok(self.optimal_moves(pos)?.to_vec())
    }
    fn set_deadline(&mut self, deadline: Option<Instant>) {
        NegamaxSolver::set_deadline(self, deadline);
    }
}

/// The `solver` player on a [`NegamaxSolver`]: always a move of the best exact score (the
/// fastest win, else a draw, else the slowest loss), at random among those.
pub struct NegamaxAgent<G: Tactics> {
    solver: NegamaxSolver<G>,
    rng: Rng64,
}

impl<G: Tactics> NegamaxAgent<G> {
    pub fn new(entries: usize) -> Self {
        NegamaxAgent {
            solver: NegamaxSolver::new(entries),
            rng: rng_from_seed(0),
        }
    }
}

impl<G: Tactics> Agent<G> for NegamaxAgent<G> {
    fn new_game(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
    }
    fn choose(&mut self, pos: &G) -> Result<Move> {
        let best = self.solver.optimal_moves(pos)?;
        if best.is_empty() {
            bail!("no legal move: the game is over");
        }
        Ok(best[self.rng.random_range(0..best.len())])
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::games::{Othello4, TicTacToe};
    use crate::solvers::exhaustive::{best_moves, solve_value, SolveTable};

    impl Tactics for TicTacToe {}
    impl Tactics for Othello4 {}

    /// Every position reachable from `pos`, each once.
    fn reachable<G: Game>(pos: &G, seen: &mut HashSet<G>) {
        if !seen.insert(pos.clone()) {
            return;
        }
        for m in pos.legal_moves() {
            let mut child = pos.clone();
            child.play(m);
            reachable(&child, seen);
        }
    }

    /// Exact scores, results and optimal moves agree with the exhaustive solver's on `positions`.
    fn agrees<G: Tactics>(positions: &[G], entries: usize) {
        let (mut solver, mut table) = (NegamaxSolver::<G>::new(entries), SolveTable::new());
        for pos in positions {
            let truth = solve_value(pos, &mut table);
            let at = pos.display();
            assert_eq!(solver.score(pos).unwrap(), truth, "{at}");
            assert_eq!(solver.result(pos).unwrap(), truth.signum(), "{at}");
            if pos.outcome().is_none() {
                assert_eq!(
                    Exact::move_results(&mut solver, pos),
                    Exact::move_results(&mut table, pos),
                    "{at}"
                );
                let mut best = solver.optimal_moves(pos).unwrap().to_vec();
                best.sort();
                assert_eq!(best, best_moves(pos, &mut table).1.to_vec(), "{at}");
            }
        }
    }

    #[test]
    fn every_tictactoe_position_as_the_exhaustive_solver() {
        let mut seen = HashSet::new();
        reachable(&TicTacToe::new(), &mut seen);
        let positions: Vec<TicTacToe> = seen.into_iter().collect();
        assert_eq!(positions.len(), 5478);
        agrees(&positions, 1 << 12);
        // The player picks among the optimal moves.
        let (mut player, mut table) = (NegamaxAgent::<TicTacToe>::new(1 << 12), SolveTable::new());
        for (i, pos) in positions
            .iter()
            .filter(|p| p.outcome().is_none())
            .enumerate()
        {
            player.new_game(i as u64);
            let m = player.choose(pos).unwrap();
            assert!(
                best_moves(pos, &mut table).1.contains(&m),
                "{}",
                pos.display()
            );
        }
    }

    #[test]
    fn othello_positions_of_random_games_as_the_exhaustive_solver() {
        let mut rng = rng_from_seed(7);
        let mut positions = Vec::new();
        for _ in 0..40 {
            let mut pos = Othello4::new();
            while pos.outcome().is_none() {
                positions.push(pos);
                let moves = pos.legal_moves();
                pos.play(moves[rng.random_range(0..moves.len())]);
            }
        }
        // A small table, so that positions are also solved after their entries were lost.
        agrees(&positions, 1 << 8);
    }

    #[test]
    fn a_search_past_its_deadline_fails_and_the_next_one_completes() {
        let mut solver = NegamaxSolver::<Othello4>::new(1 << 16);
        solver.set_deadline(Some(Instant::now()));
        let e = solver.score(&Othello4::new()).unwrap_err();
        assert!(e.is::<OutOfTime>(), "{e}");
        solver.set_deadline(None);
        let mut table = SolveTable::new();
        let truth = solve_value(&Othello4::new(), &mut table);
        assert_eq!(solver.score(&Othello4::new()).unwrap(), truth);
    }
}
