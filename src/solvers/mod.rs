//! Perfect players: exact game-theoretic values by exhaustive search.

pub mod connect4;
pub mod connect4_book;
