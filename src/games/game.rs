//! The one state API of the two-player board games: [`Game`], its moves, sides and outcomes.

use std::fmt::Debug;
use std::hash::Hash;

use thiserror::Error;

use super::{Move, Moves, Symmetry};

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

/// The rules of a deterministic two-player, zero-sum, perfect-information game.
///
/// A value of the type is a position; it is cheap to clone (a few words), so search copies it
/// rather than undoing moves.
///
/// ```
/// use zero::games::{Connect4, Game, Outcome, Player};
///
/// // Columns are typed 1-7 and numbered 0-6 inside; the first player stacks four in column 4.
/// let mut pos = Connect4::parse_position("4545454").unwrap();
/// assert_eq!(pos.outcome(), Some(Outcome::Win(Player::First)));
/// assert!(pos.legal_moves().is_empty());
///
/// let mut pos = Connect4::new();
/// let m = pos.parse_move("4").unwrap();
/// pos.try_play(m).unwrap();
/// assert_eq!((pos.ply(), pos.to_move()), (1, Player::Second));
/// // A full column is refused with the legal moves in the message.
/// let full = Connect4::parse_position("444444").unwrap();
/// assert!(full.clone().try_play(3).is_err());
/// ```
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
    /// The legal moves; empty exactly when the game is over. In a game where a side that
    /// cannot place passes (Othello), it gets a single pass move while its opponent can move;
    /// in one where it loses (Domineering), the game is over.
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

    /// The cells of the line (or lines) that won the game, top row first in the indexing of
    /// [`Game::encode`]'s planes: what a board marks at the end. Empty while the game goes on,
    /// after a draw, and in games whose wins are not lines (the default).
    fn winning_cells(&self) -> Vec<usize> {
        Vec::new()
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

/// The moves from the start written one after another, as [`Game::parse_position`] reads them.
pub fn position_string<G: Game>(moves: &[Move]) -> String {
    let mut pos = G::new();
    let mut s = String::new();
    for &m in moves {
        s.push_str(&pos.format_move(m));
        pos.play(m);
    }
    s
}
