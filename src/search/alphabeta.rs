//! Depth-limited negamax alpha-beta for any [`Game`]: iterative deepening, a transposition
//! table, and move ordering (the table's move, then killer moves, then the children's
//! heuristic near the root or the history table at the frontier). At the horizon it scores
//! positions with the game's `heuristic()`; finished games score exactly (see [`super`]).
//! At a depth that reaches every game end it is exact, and the `minimax:DEPTH` player.

use anyhow::{bail, Result};
use rand::Rng;

use super::{heuristic_score, position_key, terminal_score};
use crate::agent::Agent;
use crate::core::rng::{rng_from_seed, Rng64};
use crate::games::{Game, Move, Moves};

/// Larger than any score.
const INF: i32 = i32::MAX / 2;
const NO_MOVE: Move = Move::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    Exact,
    /// The value is at least the stored one (a beta cut-off).
    Lower,
    /// The value is at most the stored one (no move reached alpha).
    Upper,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    /// Entries of an earlier game count as empty, so clearing the table is free.
    generation: u32,
    value: i32,
    depth: u8,
    bound: Bound,
    best: Move,
}

const EMPTY: Entry = Entry {
    key: 0,
    generation: 0,
    value: 0,
    depth: 0,
    bound: Bound::Upper,
    best: NO_MOVE,
};

/// The result of a root search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootResult {
    /// The score of the position for the mover.
    pub value: i32,
    /// Every move that reaches `value`, in search order.
    pub best: Moves,
    /// The depth searched (the requested one, capped at the longest possible rest of the game).
    pub depth: u32,
}

/// An alpha-beta searcher with its tables, reused from move to move.
pub struct AlphaBeta<G: Game> {
    table: Vec<Entry>,
    generation: u32,
    /// Two killer moves per ply of the game (moves that caused a cut-off at that ply).
    killers: Vec<[Move; 2]>,
    /// Cut-off credit per move, for ordering where no better guide is cheap.
    history: Vec<u32>,
    /// Positions visited since the searcher was made (for speed figures).
    pub nodes: u64,
    _game: std::marker::PhantomData<G>,
}

impl<G: Game> AlphaBeta<G> {
    /// A searcher with a table of `2^table_bits` entries.
    pub fn new(table_bits: u32) -> Self {
        AlphaBeta {
            table: vec![EMPTY; 1 << table_bits],
            generation: 1,
            killers: vec![[NO_MOVE; 2]; G::MAX_PLIES + 1],
            history: vec![0; G::NUM_ACTIONS],
            nodes: 0,
            _game: std::marker::PhantomData,
        }
    }

    /// Forgets everything learnt, so a game's moves do not depend on earlier games.
    pub fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // After 2^32 games the stamps repeat: clear for real once.
            self.table.fill(EMPTY);
            self.generation = 1;
        }
        self.killers.fill([NO_MOVE; 2]);
        self.history.fill(0);
    }

    fn slot(&self, key: u64) -> usize {
        crate::core::rng::mix64(key) as usize & (self.table.len() - 1)
    }

    fn probe(&self, key: u64) -> Option<Entry> {
        let e = self.table[self.slot(key)];
        (e.generation == self.generation && e.key == key).then_some(e)
    }

    fn store(&mut self, key: u64, value: i32, depth: u32, bound: Bound, best: Move) {
        let slot = self.slot(key);
        self.table[slot] = Entry {
            key,
            generation: self.generation,
            value,
            depth: depth.min(u8::MAX as u32) as u8,
            bound,
            best,
        };
    }

    /// Searches `pos` to `depth` plies by iterative deepening and returns its score and every
    /// move that reaches it. `pos` must not be over.
    pub fn search(&mut self, pos: &G, depth: u32) -> RootResult {
        let rest = G::MAX_PLIES.saturating_sub(pos.ply()) as u32;
        let depth = depth.clamp(1, rest.max(1));
        let mut order: Moves = pos.legal_moves();
        let mut result = RootResult {
            value: 0,
            best: Moves::new(),
            depth,
        };
        for d in 1..=depth {
            result = self.root(pos, d, &order);
            // The best moves of this iteration lead the next.
            let rest: Moves = order
                .iter()
                .copied()
                .filter(|m| !result.best.contains(m))
                .collect();
            order = result.best.iter().copied().chain(rest).collect();
        }
        result
    }

    /// One root search at depth `d`: every move is searched with a window just below the best
    /// score so far, so every move that equals the best is found with its exact score.
    fn root(&mut self, pos: &G, d: u32, order: &Moves) -> RootResult {
        self.nodes += 1;
        let mut best_value = -INF;
        let mut best = Moves::new();
        for &m in order {
            let mut child = pos.clone();
            child.play(m);
            let alpha = if best.is_empty() {
                -INF
            } else {
                best_value - 1
            };
            let v = -self.negamax(&child, d - 1, -INF, -alpha);
            if v > best_value {
                best_value = v;
                best.clear();
                best.push(m);
            } else if v == best_value {
                best.push(m);
            }
        }
        if let Some(&first) = best.first() {
            self.store(position_key(pos), best_value, d, Bound::Exact, first);
        }
        RootResult {
            value: best_value,
            best,
            depth: d,
        }
    }

    /// Fail-soft negamax with alpha-beta: the exact score if it lies inside (alpha, beta), else
    /// a bound on the wrong side of the window.
    pub fn negamax(&mut self, pos: &G, depth: u32, mut alpha: i32, beta: i32) -> i32 {
        self.nodes += 1;
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return terminal_score(pos);
        }
        if depth == 0 {
            return heuristic_score(pos);
        }
        let key = position_key(pos);
        let mut tt_move = NO_MOVE;
        if let Some(e) = self.probe(key) {
            tt_move = e.best;
            if e.depth as u32 >= depth {
                let usable = match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => e.value >= beta,
                    Bound::Upper => e.value <= alpha,
                };
                if usable {
                    return e.value;
                }
            }
        }
        let ordered = self.order(pos, &moves, tt_move, depth);
        let alpha0 = alpha;
        let mut best_value = -INF;
        let mut best_move = ordered[0];
        for m in ordered {
            let mut child = pos.clone();
            child.play(m);
            let v = -self.negamax(&child, depth - 1, -beta, -alpha);
            if v > best_value {
                best_value = v;
                best_move = m;
            }
            alpha = alpha.max(v);
            if alpha >= beta {
                self.reward(pos.ply(), m, depth);
                break;
            }
        }
        let bound = if best_value <= alpha0 {
            Bound::Upper
        } else if best_value >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        };
        self.store(key, best_value, depth, bound, best_move);
        best_value
    }

    fn reward(&mut self, ply: usize, m: Move, depth: u32) {
        if let Some(k) = self.killers.get_mut(ply) {
            if k[0] != m {
                k[1] = k[0];
                k[0] = m;
            }
        }
        if let Some(h) = self.history.get_mut(m as usize) {
            *h = h.saturating_add(depth * depth);
        }
    }

    /// The moves in the order to search them.
    fn order(&self, pos: &G, moves: &Moves, tt_move: Move, depth: u32) -> Moves {
        let killers = self.killers.get(pos.ply()).copied().unwrap_or([NO_MOVE; 2]);
        let mut keyed: arrayvec::ArrayVec<(i64, Move), 32> = moves
            .iter()
            .map(|&m| {
                let key = if m == tt_move {
                    i64::MAX
                } else if m == killers[0] {
                    i64::MAX - 1
                } else if m == killers[1] {
                    i64::MAX - 2
                } else if depth >= 2 {
                    // Interior nodes are few: look at each child's static value.
                    let mut child = pos.clone();
                    child.play(m);
                    if child.legal_moves().is_empty() {
                        -terminal_score(&child) as i64
                    } else {
                        -heuristic_score(&child) as i64
                    }
                } else {
                    self.history.get(m as usize).copied().unwrap_or(0) as i64
                };
                (key, m)
            })
            .collect();
        // Stable, so equal keys keep the game's move order.
        keyed.sort_by_key(|k| std::cmp::Reverse(k.0));
        keyed.into_iter().map(|(_, m)| m).collect()
    }
}

/// The `minimax:DEPTH` player: alpha-beta to `DEPTH` plies, random among the best moves.
pub struct AlphaBetaAgent<G: Game> {
    search: AlphaBeta<G>,
    depth: u32,
    rng: Rng64,
}

impl<G: Game> AlphaBetaAgent<G> {
    pub fn new(depth: u32) -> Self {
        AlphaBetaAgent {
            search: AlphaBeta::new(18),
            depth,
            rng: rng_from_seed(0),
        }
    }
}

impl<G: Game> Agent<G> for AlphaBetaAgent<G> {
    fn new_game(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
        self.search.clear();
    }
    fn choose(&mut self, pos: &G) -> Result<Move> {
        if pos.legal_moves().is_empty() {
            bail!("no legal move: the game is over");
        }
        let result = self.search.search(pos, self.depth);
        if result.best.is_empty() {
            bail!("alpha-beta found no move");
        }
        Ok(result.best[self.rng.random_range(0..result.best.len())])
    }
}
