//! The search: Pons' negamax with alpha-beta, run with null windows inside his score-narrowing
//! loop (`Solver::solve_range`). One call of `negamax` goes through named steps, each of which
//! may settle the score early: the immediate outcome, bounds from how soon the game can end,
//! the opening book, the transposition table, the children's table entries (enhanced
//! transposition cutoff), and only then the search of the children in order.

use std::ops::ControlFlow;
use std::time::Instant;

use super::move_order::{Move, MoveList};
use super::position::{orient, Position};
use super::score::CELLS;
use super::table::{work_of, Table};
use crate::core::stop::Stop;
use crate::games::connect4::WIDTH;

/// Known exact scores consulted inside the search (an opening book): canonical key to score,
/// for positions of at most `max_moves` stones.
pub trait ScoreSource {
    fn max_moves(&self) -> i32;
    fn score(&self, canonical_key: u64) -> Option<i32>;
}

/// A solver with its own table and node counter.
pub struct Solver {
    table: Table,
    nodes: u64,

    book: Option<Box<dyn ScoreSource + Send>>,
    /// Searches stop once past it (a server bounds the time a request may take).
    deadline: Option<Instant>,
    /// Whether a search stopped at the deadline; its score means nothing then.
    timed_out: bool,
    /// Raised: searches stop as at the deadline (a person asked for the move now).
    stop: Option<Stop>,
}

/// The deadline is looked at once every this many nodes (plus one): a clock read per node
/// would cost more than the node, while a few thousand nodes take well under a millisecond.
const DEADLINE_CHECK_MASK: u64 = (1 << 12) - 1;

/// The alpha-beta window of one `negamax` call, narrowed as bounds on the score come in.
#[derive(Clone, Copy)]
struct Window {
    alpha: i32,
    beta: i32,
}

impl Window {
    /// Raises alpha to `lower`, a lower bound on the score. Breaks with the score to return
    /// when that closes the window (a fail-high: the score is at least `lower` >= beta).
    #[inline]
    fn raise_alpha(&mut self, lower: i32) -> ControlFlow<i32> {
        if self.alpha < lower {
            self.alpha = lower;
            if self.alpha >= self.beta {
                return ControlFlow::Break(self.alpha);
            }
        }
        ControlFlow::Continue(())
    }
    /// Lowers beta to `upper`, an upper bound on the score. Breaks with the score to return
    /// when that closes the window (a fail-low: the score is at most `upper` <= alpha).
    #[inline]
    fn lower_beta(&mut self, upper: i32) -> ControlFlow<i32> {
        if self.beta > upper {
            self.beta = upper;
            if self.alpha >= self.beta {
                return ControlFlow::Break(self.beta);
            }
        }
        ControlFlow::Continue(())
    }
}

/// What the steps of one `negamax` call share.
struct Node<'a> {
    p: &'a Position,
    /// The canonical key, and whether it is the mirror image's.
    key: u64,
    mirrored: bool,
    /// The node counter after counting this node: the work below it is measured from here.
    nodes_before: u64,
}

/// The first step: the moves worth searching (those that do not hand the opponent a win at
/// once), or the score when those settle it.
#[inline]
fn immediate_outcome(p: &Position, opponent_threats: u64) -> ControlFlow<i32, u64> {
    let next = p.non_losing_moves(opponent_threats);
    if next == 0 {
        // Every move lets the opponent win with its next stone.
        return ControlFlow::Break(-(CELLS - p.moves()) / 2);
    }
    if p.moves() >= CELLS - 2 {
        // Two cells left: the mover cannot win with its stone, and has one that does not let
        // the opponent win with the last.
        return ControlFlow::Break(0);
    }
    ControlFlow::Continue(next)
}

/// Bounds from how soon the game can end, and whether a side can still make four at all.
#[inline]
fn bound_by_reach(p: &Position, w: &mut Window) -> ControlFlow<i32> {
    // The opponent cannot win with its next stone (the moves left avoid that), so the worst is
    // losing to the one after.
    w.raise_alpha(-(CELLS - 2 - p.moves()) / 2)?;
    // We cannot win with this stone (negamax is not called then), at best with the next; and
    // not at all when no four fits even with every empty cell ours.
    let best = if p.can_ever_win() {
        (CELLS - 1 - p.moves()) / 2
    } else {
        0
    };
    w.lower_beta(best)?;
    // Likewise the opponent: if it can never make four, we do not lose.
    if !p.opponent_can_ever_win() {
        w.raise_alpha(0)?;
    }
    ControlFlow::Continue(())
}

impl Solver {
    pub fn new(table_entries: usize) -> Solver {
        Solver {
            table: Table::new(table_entries),
            nodes: 0,
            book: None,
            deadline: None,
            timed_out: false,
            stop: None,
        }
    }
    /// Makes searches also stop once `stop` is raised (looked at with the deadline), as if
    /// the deadline had passed; `None` forgets the flag.
    pub fn set_stop(&mut self, stop: Option<Stop>) {
        self.stop = stop;
    }
    /// Makes searches stop at `deadline` (never, with `None`). A search that stops returns a
    /// meaningless score: look at [`Solver::timed_out`] after each call.
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
        self.timed_out = false;
    }
    /// Whether a search stopped at the deadline since it was set.
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }
    /// Consults `book` for every position with few enough stones.
    pub fn set_book(&mut self, book: Box<dyn ScoreSource + Send>) {
        self.book = Some(book);
    }
    /// Nodes searched since the last reset.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }
    pub fn reset_nodes(&mut self) {
        self.nodes = 0;
    }
    pub fn clear_table(&mut self) {
        self.table.clear();
    }

    /// Negamax with alpha-beta for a position where the side to move cannot win at once.
    /// Returns v: if v <= alpha the score is at most v, if v >= beta at least v, else exactly v.
    fn negamax(&mut self, p: &Position, alpha: i32, beta: i32) -> i32 {
        debug_assert!(alpha < beta);
        debug_assert!(!p.can_win_next());
        // A step that settles the score breaks out with it; otherwise the children's search
        // gives it.
        match self.search_node(p, Window { alpha, beta }) {
            ControlFlow::Break(score) | ControlFlow::Continue(score) => score,
        }
    }

    /// `negamax`'s steps in order, cheapest and most likely to settle the score first.
    #[inline]
    fn search_node(&mut self, p: &Position, mut w: Window) -> ControlFlow<i32, i32> {
        self.nodes += 1;
        if self.nodes & DEADLINE_CHECK_MASK == 0 {
            self.check_deadline();
        }
        if self.timed_out {
            // Unwind at once: every node on the way up stops here too.
            return ControlFlow::Break(w.alpha);
        }
        let (key, mirrored) = p.canonical_key();
        // Start loading the bucket now: the checks before the probe hide the memory latency.
        self.table.prefetch(key);
        let node = Node {
            p,
            key,
            mirrored,
            nodes_before: self.nodes,
        };

        let opponent_threats = p.opponent_winning_cells();
        let candidates = immediate_outcome(p, opponent_threats)?;
        bound_by_reach(p, &mut w)?;
        self.probe_book(p, key)?;
        let table_move = self.probe_table(&node, &mut w)?;
        let mut moves = MoveList::new();
        moves.order(p, candidates, opponent_threats, table_move);
        let moves = moves.as_slice();
        let known_bad = self.probe_children(&node, moves, w)?;
        ControlFlow::Continue(self.search_children(&node, moves, &known_bad, w))
    }

    #[cold]
    fn check_deadline(&mut self) {
        if self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.stop.as_ref().is_some_and(Stop::is_raised)
        {
            self.timed_out = true;
        }
    }

    /// The opening book's exact score, for positions it covers.
    #[inline]
    fn probe_book(&self, p: &Position, key: u64) -> ControlFlow<i32> {
        if let Some(book) = &self.book {
            if p.moves() <= book.max_moves() {
                if let Some(score) = book.score(key) {
                    return ControlFlow::Break(score);
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Narrows the window to the table's bounds; continues with the move that last cut off
    /// here, in this position's orientation.
    #[inline]
    fn probe_table(&self, node: &Node, w: &mut Window) -> ControlFlow<i32, Option<usize>> {
        let Some(e) = self.table.get(node.key) else {
            return ControlFlow::Continue(None);
        };
        w.raise_alpha(e.lower())?;
        w.lower_beta(e.upper())?;
        ControlFlow::Continue(e.best_move().map(|col| orient(col, node.mirrored)))
    }

    /// Enhanced transposition cutoff: a child the table already shows good enough (its upper
    /// bound, from our side, at least beta) ends the search before any child is searched. A
    /// child shown no better than alpha is marked to be skipped: it stays so as alpha rises.
    /// A lone move is searched anyway, so its entry is not worth looking up here.
    #[inline]
    fn probe_children(
        &mut self,
        node: &Node,
        moves: &[Move],
        w: Window,
    ) -> ControlFlow<i32, [bool; WIDTH]> {
        let mut known_bad = [false; WIDTH];
        if moves.len() > 1 {
            // Fetch every child's bucket at once rather than one cache miss after another.
            let mut child_keys = [0u64; WIDTH];
            for (k, m) in child_keys.iter_mut().zip(moves) {
                let mut child = *node.p;
                child.play_cell(m.cell);
                *k = child.canonical_key().0;
                self.table.prefetch(*k);
            }
            for (i, (&child_key, m)) in child_keys.iter().zip(moves).enumerate() {
                if let Some(e) = self.table.get(child_key) {
                    let score = -e.upper();
                    if score >= w.beta {
                        // Found without searching: no work to weigh it by.
                        let col = orient(m.col, node.mirrored);
                        self.table.put_lower(node.key, score, col, 0);
                        return ControlFlow::Break(score);
                    }
                    known_bad[i] = -e.lower() <= w.alpha;
                }
            }
        }
        ControlFlow::Continue(known_bad)
    }

    /// Searches the children in order, raising alpha, until one cuts off (the score is at
    /// least beta) or none is left (the score is at most the final alpha); records which in
    /// the table.
    #[inline]
    fn search_children(
        &mut self,
        node: &Node,
        moves: &[Move],
        known_bad: &[bool; WIDTH],
        mut w: Window,
    ) -> i32 {
        for (m, &bad) in moves.iter().zip(known_bad) {
            if bad {
                continue;
            }
            let mut child = *node.p;
            child.play_cell(m.cell);
            let score = -self.negamax(&child, -w.beta, -w.alpha);
            if score >= w.beta {
                let work = self.work_since(node);
                let col = orient(m.col, node.mirrored);
                self.table.put_lower(node.key, score, col, work);
                return score;
            }
            if score > w.alpha {
                w.alpha = score;
            }
        }
        let work = self.work_since(node);
        self.table.put_upper(node.key, w.alpha, work);
        w.alpha
    }

    /// The work the search below `node` took, for the table's replacement.
    #[inline]
    fn work_since(&self, node: &Node) -> u64 {
        work_of(self.nodes - node.nodes_before + 1)
    }

    /// The exact score if it lies in `[lo, hi]`; otherwise `lo` when it is at most `lo`, `hi`
    /// when it is at least `hi`. Pons' loop: null-window searches that halve the interval,
    /// probing near 0 first (most positions are close calls).
    pub fn solve_range(&mut self, p: &Position, lo: i32, hi: i32) -> i32 {
        if p.can_win_next() {
            return p.win_now_score().clamp(lo, hi);
        }
        // At worst the opponent wins with its next stone; at best we win with our next.
        let mut min = (-(CELLS - p.moves()) / 2).max(lo);
        let mut max = ((CELLS + 1 - p.moves()) / 2).min(hi);
        while min < max {
            let mut med = min + (max - min) / 2;
            if med <= 0 && min / 2 < med {
                med = min / 2;
            } else if med >= 0 && max / 2 > med {
                med = max / 2;
            }
            // Is the score above med?
            let r = self.negamax(p, med, med + 1);
            if self.timed_out {
                // The bounds stored while unwinding are as meaningless as the score.
                self.table.clear();
                break;
            }
            if r <= med {
                max = r;
            } else {
                min = r;
            }
        }
        // A search may return a bound beyond the window (below `lo` or above `hi`).
        min.clamp(lo, hi)
    }

    /// The exact score of a position that is not over.
    pub fn solve(&mut self, p: &Position) -> i32 {
        // Bounds beyond every score, halved so that `solve_range`'s arithmetic cannot overflow.
        self.solve_range(p, i32::MIN / 2, i32::MAX / 2)
    }

    /// -1, 0 or 1: whether the side to move loses, draws or wins.
    pub fn solve_weak(&mut self, p: &Position) -> i32 {
        self.solve_range(p, -1, 1)
    }

    /// The exact score of playing `col` (legal) in a position that is not over, from the view
    /// of the side playing it.
    pub fn move_score(&mut self, p: &Position, col: usize) -> i32 {
        if p.is_winning_move(col) {
            return p.win_now_score();
        }
        let mut child = *p;
        child.play_col(col);
        -self.solve(&child)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Connect4, Game};

    fn pos(s: &str) -> Position {
        Position::from_game(&Connect4::parse_position(s).unwrap())
    }

    #[test]
    fn small_scores() {
        let mut s = Solver::new(1 << 18);
        assert_eq!(s.solve(&pos("4455")), 18);
        assert_eq!(s.solve(&pos("44455554221")), -15);
        assert_eq!(s.solve_weak(&pos("44455554221")), -1);
        assert_eq!(s.solve_range(&pos("4455"), -3, 5), 5);
    }

    struct OneScore(u64, i32);
    impl ScoreSource for OneScore {
        fn max_moves(&self) -> i32 {
            4
        }
        fn score(&self, canonical_key: u64) -> Option<i32> {
            (canonical_key == self.0).then_some(self.1)
        }
    }

    #[test]
    fn the_book_is_believed() {
        // A book that (falsely) scores the position a draw is taken at its word.
        let p = pos("4455");
        let mut s = Solver::new(1 << 18);
        s.set_book(Box::new(OneScore(p.canonical_key().0, 0)));
        assert_eq!(s.solve(&p), 0);
    }
}
