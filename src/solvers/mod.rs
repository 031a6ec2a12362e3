//! Perfect players: exact game-theoretic values. [`exhaustive`] searches the whole tree of the
//! small games (tic-tac-toe, 4x4 Othello); [`connect4`] is a Pons-style solver with its opening
//! book and cache in [`connect4_book`]; [`negamax`] is alpha-beta with a table over any game,
//! for trees too big to walk whole but with small proofs; [`exact`] is the one interface every
//! consumer reads them through.
//!
//! ```
//! use zero::games::{Connect4, Game};
//! use zero::solvers::connect4::{Position, Solver};
//!
//! // Pascal Pons' score: positive, the side to move wins; the larger, the sooner.
//! let pos = Connect4::parse_position("2252576253462244111563365343671351441").unwrap();
//! let mut solver = Solver::new(1 << 16);
//! assert_eq!(solver.solve(&Position::from_game(&pos)), -1);
//! ```

pub mod connect4;
pub mod connect4_book;
pub mod exact;
pub mod exhaustive;
pub mod negamax;
