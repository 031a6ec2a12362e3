//! Game rules. Every two-player board game implements [`Game`], the one state API that search,
//! solvers, the network encoder, players and the arena use (as OpenSpiel's `State`).
//! Blackjack is a single-agent environment with chance and lives apart, in [`blackjack`].

pub mod blackjack;
pub mod connect4;
mod game;
mod kind;
pub mod othello4;
mod perft;
mod symmetry;
mod tally;
pub mod tictactoe;

pub use connect4::Connect4;
pub use game::{Game, GameError, Move, Moves, Outcome, Player};
pub use kind::GameKind;
pub use othello4::Othello4;
pub use perft::{perft, PerftRow};
pub use symmetry::{square_symmetries, Symmetry};
pub use tally::Tally;
pub use tictactoe::TicTacToe;
