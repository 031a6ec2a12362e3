//! Search: PUCT Monte Carlo tree search (`mcts`).

pub mod mcts;
