//! Game rules. Every two-player board game implements [`Game`], the one state API that search,
//! solvers, the network encoder, players and the arena use (as OpenSpiel's `State`).
//! Blackjack is a single-agent environment with chance and lives apart, in [`blackjack`].

pub mod blackjack;
pub mod connect4;
pub mod othello4;
pub mod tictactoe;

use std::fmt::Debug;
use std::hash::Hash;

use arrayvec::ArrayVec;
use thiserror::Error;

pub use connect4::Connect4;
pub use othello4::Othello4;
pub use tictactoe::TicTacToe;

/// A move, as an index into the game's action space `0..NUM_ACTIONS` (the network's policy
/// vector uses the same indices). Games with a pass give it its own index.
pub type Move = u8;

/// The legal moves of a position; no game here has more than 17.
pub type Moves = ArrayVec<Move, 32>;

/// The two sides. `First` moves first (X in tic-tac-toe, Black in Othello, ● in Connect Four).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Player {
    First,
    Second,
}

impl Player {
    pub fn other(self) -> Player {
        match self {
            Player::First => Player::Second,
            Player::Second => Player::First,
        }
    }
    pub fn index(self) -> usize {
        match self {
            Player::First => 0,
            Player::Second => 1,
        }
    }
}

/// How a finished game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Win(Player),
    Draw,
}

impl Outcome {
    /// +1 win, 0 draw, -1 loss, from `player`'s view.
    pub fn value_for(self, player: Player) -> f32 {
        match self {
            Outcome::Draw => 0.0,
            Outcome::Win(p) if p == player => 1.0,
            Outcome::Win(_) => -1.0,
        }
    }
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum GameError {
    #[error("cannot parse move '{input}': {reason}")]
    BadMove { input: String, reason: String },
    #[error("illegal move {mv}: {reason}")]
    IllegalMove { mv: String, reason: String },
    #[error("cannot parse position '{input}': {reason}")]
    BadPosition { input: String, reason: String },
}

/// A board symmetry as permutations: board cell `i` goes to `cells[i]`, action `a` to
/// `actions[a]`. Used to augment training data (and optionally at inference).
#[derive(Clone, Debug)]
pub struct Symmetry {
    pub cells: Vec<usize>,
    pub actions: Vec<usize>,
}

impl Symmetry {
    /// Applies the symmetry to network input planes laid out `[plane][cell]`.
    pub fn apply_planes(&self, planes: &[f32], out: &mut [f32]) {
        let n = self.cells.len();
        for (p, chunk) in planes.chunks(n).enumerate() {
            for (i, &v) in chunk.iter().enumerate() {
                out[p * n + self.cells[i]] = v;
            }
        }
    }
    /// Applies the symmetry to a vector over actions (a policy).
    pub fn apply_policy(&self, policy: &[f32], out: &mut [f32]) {
        for (a, &v) in policy.iter().enumerate() {
            out[self.actions[a]] = v;
        }
    }
    /// The image of one action.
    pub fn apply_move(&self, m: Move) -> Move {
        self.actions[m as usize] as Move
    }
}

/// The rules of a deterministic two-player, zero-sum, perfect-information game.
///
/// A value of the type is a position; it is cheap to clone (a few words), so search copies it
/// rather than undoing moves.
pub trait Game: Clone + Debug + Send + Sync + PartialEq + Eq + Hash + 'static {
    /// The name used on the command line and in files (`connect4`, ...).
    const NAME: &'static str;
    /// Size of the action space (the policy vector).
    const NUM_ACTIONS: usize;
    /// Network input: planes of `HEIGHT x WIDTH`.
    const PLANES: usize = 3;
    const HEIGHT: usize;
    const WIDTH: usize;
    /// An upper bound on the number of plies of a game (for buffers and progress).
    const MAX_PLIES: usize;

    /// The starting position.
    fn new() -> Self;
    /// The side to move.
    fn to_move(&self) -> Player;
    /// Number of plies played from the start (a pass counts).
    fn ply(&self) -> usize;
    /// The legal moves; empty exactly when the game is over. A player who cannot move but whose
    /// opponent can gets a single pass move.
    fn legal_moves(&self) -> Moves;
    /// Whether `m` is legal here.
    fn is_legal(&self, m: Move) -> bool {
        self.legal_moves().contains(&m)
    }
    /// Plays a move known to be legal.
    fn play(&mut self, m: Move);
    /// The result, once the game is over.
    fn outcome(&self) -> Option<Outcome>;
    /// A hash of the position (side to move included) for caches and transposition tables.
    fn key(&self) -> u64;

    /// Writes the network input from the mover's view: plane 0 the mover's stones, plane 1 the
    /// opponent's, plane 2 all ones if the mover is `First` (so the net can tell sides apart).
    fn encode(&self, out: &mut [f32]);
    /// The symmetries of the rules (identity first).
    fn symmetries() -> Vec<Symmetry>;

    /// A heuristic value of a non-terminal position for the mover, roughly in [-1, 1], used by
    /// depth-limited alpha-beta at its horizon. Zero means "no idea".
    fn heuristic(&self) -> f32 {
        0.0
    }

    /// The board as a person reads it.
    fn display(&self) -> String;
    /// Parses a move the way a person types it (`4`, `b2`, `pass`).
    fn parse_move(&self, s: &str) -> Result<Move, GameError>;
    /// Formats a move the way `parse_move` reads it.
    fn format_move(&self, m: Move) -> String;
    /// Parses a position: a sequence of moves from the start (`4453` for Connect Four).
    fn parse_position(s: &str) -> Result<Self, GameError>;

    /// Plays `m` after checking it is legal.
    fn try_play(&mut self, m: Move) -> Result<(), GameError> {
        if let Some(o) = self.outcome() {
            return Err(GameError::IllegalMove {
                mv: self.format_move(m),
                reason: format!("the game is already over ({o:?})"),
            });
        }
        if !self.is_legal(m) {
            let legal: Vec<String> = self
                .legal_moves()
                .iter()
                .map(|&m| self.format_move(m))
                .collect();
            return Err(GameError::IllegalMove {
                mv: self.format_move(m),
                reason: format!("legal moves are {}", legal.join(" ")),
            });
        }
        self.play(m);
        Ok(())
    }

    /// The board's input size per plane.
    fn cells() -> usize {
        Self::HEIGHT * Self::WIDTH
    }
    /// The size of the network input.
    fn input_size() -> usize {
        Self::PLANES * Self::cells()
    }
}

/// The games on the command line.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum GameKind {
    #[value(name = "connect4")]
    Connect4,
    #[value(name = "tictactoe")]
    TicTacToe,
    #[value(name = "othello4")]
    Othello4,
    #[value(name = "blackjack")]
    Blackjack,
}

impl GameKind {
    pub fn name(self) -> &'static str {
        match self {
            GameKind::Connect4 => Connect4::NAME,
            GameKind::TicTacToe => TicTacToe::NAME,
            GameKind::Othello4 => Othello4::NAME,
            GameKind::Blackjack => "blackjack",
        }
    }
}

impl std::fmt::Display for GameKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Runs a generic function for a board game chosen at run time:
/// `with_board_game!(kind, G => body)` with `G` bound to the game type inside `body`.
/// Blackjack is not a board game and gives an error.
#[macro_export]
macro_rules! with_board_game {
    ($kind:expr, $g:ident => $body:expr) => {
        match $kind {
            $crate::games::GameKind::Connect4 => {
                type $g = $crate::games::Connect4;
                $body
            }
            $crate::games::GameKind::TicTacToe => {
                type $g = $crate::games::TicTacToe;
                $body
            }
            $crate::games::GameKind::Othello4 => {
                type $g = $crate::games::Othello4;
                $body
            }
            $crate::games::GameKind::Blackjack => Err(anyhow::anyhow!(
                "blackjack is a single-player game with chance: use `zero mces` / `zero blackjack`"
            )),
        }
    };
}

/// Mixes a 64-bit value (splitmix64 finaliser); used for position keys and seed derivation.
pub fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Permutations of a square board of side `n` under the dihedral group D4, as cell maps.
/// Order: identity, rot90, rot180, rot270, flip (mirror left-right), and the flips of the
/// rotations.
pub fn square_symmetries(n: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for flip in [false, true] {
        for rot in 0..4 {
            let mut map = vec![0; n * n];
            for r in 0..n {
                for c in 0..n {
                    let (mut rr, mut cc) = (r, c);
                    if flip {
                        cc = n - 1 - cc;
                    }
                    for _ in 0..rot {
                        let t = rr;
                        rr = cc;
                        cc = n - 1 - t;
                    }
                    map[r * n + c] = rr * n + cc;
                }
            }
            out.push(map);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn d4_has_eight_distinct_permutations() {
        let s = square_symmetries(3);
        assert_eq!(s.len(), 8);
        for (i, a) in s.iter().enumerate() {
            let mut sorted = a.clone();
            sorted.sort();
            assert_eq!(sorted, (0..9).collect::<Vec<_>>());
            for b in &s[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(s[0], (0..9).collect::<Vec<_>>());
    }
}

/// One row of a perft count: move sequences of length `ply` from the start (games stop at a
/// win; a pass is a ply) and the distinct positions they reach.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PerftRow {
    pub ply: usize,
    pub sequences: u64,
    pub positions: u64,
}

/// Counts sequences and distinct positions ply by ply, keeping one count per position so that
/// transpositions are expanded once.
pub fn perft<G: Game>(depth: usize) -> Vec<PerftRow> {
    let mut level: std::collections::HashMap<G, u64> = [(G::new(), 1)].into_iter().collect();
    let mut rows = Vec::new();
    for ply in 1..=depth {
        let mut next: std::collections::HashMap<G, u64> = std::collections::HashMap::new();
        for (pos, &count) in &level {
            for m in pos.legal_moves() {
                let mut child = pos.clone();
                child.play(m);
                *next.entry(child).or_insert(0) += count;
            }
        }
        rows.push(PerftRow {
            ply,
            sequences: next.values().sum(),
            positions: next.len() as u64,
        });
        level = next;
    }
    rows
}
