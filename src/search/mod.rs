//! Search: PUCT Monte Carlo tree search ([`mcts`]) and the player built on it ([`agent`]),
//! depth-limited alpha-beta ([`alphabeta`]), the hand-written tic-tac-toe rules ([`rules`]), and
//! the integer score scale that alpha-beta shares with the exact solvers ([`score`]).

pub mod agent;
pub mod alphabeta;
pub mod gumbel;
pub mod mcts;
pub mod rules;
pub mod score;

pub use score::{
    heuristic_score, outcome_score, plies_to_end, position_key, score_sign, terminal_score,
    DECIDED, HEURISTIC_SCALE, WIN,
};
