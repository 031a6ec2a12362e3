//! Game rules. Every two-player board game implements [`Game`], the one state API that search,
//! solvers, the network encoder, players and the arena use (as OpenSpiel's `State`).
//! Blackjack is a single-agent environment with chance and lives apart, in [`blackjack`].
//!
//! The board games the program offers are the one list of [`board_game_list!`] below; their
//! facts beyond the rules (title, sides, board, exact solver, ...) are in [`crate::catalog`].
//! docs/add-a-game.md says how to add one.

pub mod blackjack;
pub mod connect4;
mod coords;
pub mod domineering;
mod game;
mod kind;
mod moves;
pub mod othello4;
mod perft;
mod symmetry;
mod tally;
pub mod tictactoe;

pub use connect4::Connect4;
pub use domineering::Domineering;
pub use game::{position_string, Game, GameError, Outcome, Player};
pub use kind::GameKind;
pub use moves::{Move, Moves};
pub use othello4::Othello4;
pub use perft::{perft, PerftRow};
pub use symmetry::{square_symmetries, Symmetry};
pub use tally::Tally;
pub use tictactoe::TicTacToe;

/// The board games, one line each as `module::Type` (the module of `src/games/`), in the order
/// the command line and the page list them. [`GameKind`], [`GameKind::ALL`],
/// [`crate::with_board_game!`] and [`crate::for_each_game!`] are made from this list, and
/// everything that offers a choice of game reads them.
#[doc(hidden)]
#[macro_export]
macro_rules! board_game_list {
    ($($rule:tt)*) => {
        $crate::board_game_rules! { [$($rule)*]
            connect4::Connect4,
            tictactoe::TicTacToe,
            othello4::Othello4,
            domineering::Domineering,
        }
    };
}
