//! Perfect players: exact game-theoretic values. [`exhaustive`] searches the whole tree of the
//! small games (tic-tac-toe, 4x4 Othello); [`connect4`] is a Pons-style solver with its opening
//! book and cache in [`connect4_book`].

pub mod connect4;
pub mod connect4_book;
pub mod exhaustive;
