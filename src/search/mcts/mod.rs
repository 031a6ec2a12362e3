//! PUCT Monte Carlo tree search (AlphaZero), batched: a search hands out leaves to evaluate
//! (several at once with virtual loss), the caller evaluates them together with whatever
//! evaluator it has (a network, random rollouts, a uniform prior), then hands the results back.
//!
//! Values in the tree are stored from the view of the player who moved *into* a node, so a
//! parent picks the child with the highest `w / n`. Every move (an Othello pass too) switches
//! the side to move, so values just flip sign on the way up.
//!
//! Finished games met in the tree are exact, and so are the wins and losses they decide
//! (MCTS-solver, Winands et al. 2008): a node one of whose children wins for the player moving
//! into it is lost, a node all of whose children lose is won, each with the number of plies to
//! the end. A decided node is never searched again: reaching it backs up its exact value at
//! once, and the root plays its fastest proven win, avoids proven losses, and when every move
//! loses plays the slowest loss. Draws are not propagated: a drawn line keeps its searched
//! value, so that against a fallible opponent the search still prefers the draws it can hope
//! to win (proving them exactly cost half the wins against alpha-beta).
//!
//! The settings are in `config`, the tree's storage and proofs in `tree`, a simulation's walk
//! down and its backup in `select`, what is read at the root in `results`, and the leaf
//! evaluators and the [`search`] driver in `evaluators`.

mod config;
mod evaluators;
mod results;
mod select;
mod tree;

pub use config::{MctsConfig, PlaySearch, SearchKind};
pub use evaluators::{search, search_until, LeafEvaluator, RolloutEvaluator, UniformEvaluator};
pub use select::Selection;
pub use tree::{Leaf, Tree};
