//! A perfect Connect Four solver after Pascal Pons (http://blog.gamesolver.org), laid out as
//! his solver is, one concept a file:
//!
//! - `position`: the bitboard pair of his design, the cells where a side would complete four
//!   (its threats), the moves that do not lose at once, and keys up to mirror symmetry.
//! - `table`: the transposition table. After ideas of ChristopheSteininger/c4 it keys
//!   positions up to mirror symmetry and holds two-entry buckets (one kept by the work behind
//!   it, one always replaced), each entry with a lower and an upper bound and the move that
//!   last cut off.
//! - `move_order`: the order children are searched in: the table's move first, then by the
//!   threats a move creates, then centre first.
//! - `solver`: negamax with null windows inside Pons' score-narrowing loop, pruning of moves
//!   that lose at once, an optional opening book ([`ScoreSource`]) and, on top of Pons, probing
//!   the children in the table before searching any (enhanced transposition cutoff).
//! - `score`: the score scale, and what a score means in words.
//! - `labelled`: reading Pons' `POSITION SCORE` test sets.
//!
//! Scores follow Pons: 0 for a draw; if the side to move wins with its k-th stone (all its
//! stones counted, the winning one included) the score is 22 - k, and -(22 - k) if it loses to
//! the opponent's k-th stone.

mod labelled;
mod move_order;
mod position;
mod score;
mod solver;
mod table;

pub use labelled::{parse_labelled_positions, read_labelled_positions};
pub use position::Position;
pub use score::{describe_score, possible_scores, stones_to_end, MAX_SCORE, MIN_SCORE};
pub use solver::{ScoreSource, Solver};
pub use table::DEFAULT_TABLE_ENTRIES;
