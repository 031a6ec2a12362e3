//! `zero`: AlphaZero-style self-play for small board games, with the classical opponents and
//! tabular baselines that measure it.
//!
//! The modules form layers; an import only ever points down (`scripts/check-layers` checks it
//! in CI):
//! 1. [`core`]: the seeded generator and seed streams, atomic files and checked binary
//!    formats, the progress sink, thread defaults. Knows nothing of games.
//! 2. [`games`]: the rules of every game behind one trait, [`games::Game`]; above it,
//!    [`agent`]: the one interface of every player, [`agent::Agent`].
//! 3. [`search`] (MCTS, alpha-beta), [`solvers`] (perfect play), [`tabular`] (Q-learning,
//!    Monte Carlo ES), [`nn`] (the network and batched inference): algorithms over games.
//! 4. [`arena`] (matches, Elo, grading on solver-labelled positions); above it, [`catalog`]
//!    (each board game's facts beyond its rules: title, sides, board, exact solver,
//!    evaluation set, presets); above that, [`alphazero`] (the self-play, training and
//!    evaluation pipeline).
//! 5. [`players`] (the player spec grammar that builds every kind of player); above it, [`cli`]
//!    (one thin file per subcommand: flags and printing) and [`serve`] (`zero serve`: the web
//!    server, its JSON API and the page that plays and watches games in a browser).

pub mod core;
pub mod games;

pub mod agent;

pub mod nn;
pub mod search;
pub mod solvers;
pub mod tabular;

pub mod arena;

pub mod catalog;

pub mod alphazero;

pub mod cli;
pub mod players;
pub mod serve;
