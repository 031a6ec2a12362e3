//! `zero`: AlphaZero-style self-play for small board games, with the classical opponents and
//! tabular baselines that measure it.
//!
//! Layout: [`games`] (rules, one trait), [`search`] (MCTS, alpha-beta), [`solvers`] (perfect
//! play), [`nn`] (network, batched inference), [`zero`] (self-play, training, evaluation,
//! cycle), [`tabular`] (Q-learning, Monte Carlo ES), [`players`] (player specs), [`arena`]
//! (matches), [`cli`] (one file per subcommand).

pub mod arena;
pub mod cli;
pub mod games;
pub mod nn;
pub mod players;
pub mod search;
pub mod solvers;
pub mod tabular;
pub mod zero;
