//! The network as a player: where it meets the search, with search, alone (`--sims 0`), and
//! the search it plays with.

pub mod net_evaluator;
pub mod net_player;
pub mod policy_player;
pub mod trained_search;
