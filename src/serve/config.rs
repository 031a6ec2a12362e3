//! The server's settings ([`ServeConfig`]) and their defaults.

use std::path::PathBuf;
use std::time::Duration;

use crate::players::default_solver_dir;
use crate::search::mcts::SearchKind;

/// The server's settings.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Where `best`, `latest` and named models live (`<models>/<game>/NAME.safetensors`), and
    /// the runs the training page shows.
    pub models: PathBuf,
    /// The exact solvers' files: Connect Four's opening book and cache.
    pub solver_dir: PathBuf,
    /// Live games at most.
    pub max_games: usize,
    /// A game untouched this long expires.
    pub idle: Duration,
    /// The most one move of a shared `solver` (Connect Four's) may take.
    pub solver_seconds: Duration,
    /// The most an engine-move request waits for the move (the engine goes on after that).
    pub engine_wait: Duration,
    /// The most the perfect-play overlay may take for one position.
    pub analysis_seconds: f64,
    /// Shared solvers of each game that shares them (Connect Four's: 32 MiB each).
    pub solvers: usize,
    /// Seeds of games that do not name one.
    pub seed: u64,
    /// The tree search of network players; `None`: the one each network's run trained with.
    pub search: Option<SearchKind>,
    /// Network players average the network over the game's symmetries.
    pub symmetries: bool,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            models: PathBuf::from("models"),
            solver_dir: default_solver_dir(),
            max_games: 100,
            idle: Duration::from_secs(30 * 60),
            solver_seconds: Duration::from_secs(600),
            engine_wait: Duration::from_secs(600),
            analysis_seconds: 20.0,
            solvers: crate::core::threads::default_threads().clamp(2, 4),
            seed: 0,
            search: None,
            symmetries: false,
        }
    }
}
