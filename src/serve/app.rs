//! What every request of the server shares ([`App`]: the settings, the live games, the
//! engines and solvers, the perfect-play cache), and [`blocking`], which runs engine work off
//! the async threads.

use std::sync::Arc;

use super::engine::Engines;
use super::errors::ApiError;
use super::perfect::PerfectCache;
use super::sessions::Sessions;
use super::solver_pool::SharedSolvers;
use super::ServeConfig;

/// What every request shares.
pub struct App {
    pub config: ServeConfig,
    pub sessions: Sessions,
    pub engines: Engines,
    pub perfect: PerfectCache,
    /// Perfect-play analyses and reviews running at once: each holds a blocking thread (and
    /// waits for a solver) for up to its time bound, so a client asking for many cannot take
    /// them all.
    pub analyses: tokio::sync::Semaphore,
}

/// Analyses at once, for each shared solver.
const ANALYSES_PER_SOLVER: usize = 4;

impl App {
    pub fn new(config: ServeConfig) -> App {
        let solvers = Arc::new(SharedSolvers::new(
            config.solver_dir.clone(),
            config.solvers,
        ));
        App {
            sessions: Sessions::new(config.max_games, config.idle, config.seed),
            engines: Engines::new(
                config.models.clone(),
                config.search,
                config.symmetries,
                solvers,
                config.solver_seconds,
            ),
            perfect: PerfectCache::default(),
            analyses: tokio::sync::Semaphore::new(config.solvers.max(1) * ANALYSES_PER_SOLVER),
            config,
        }
    }
}

/// Runs `work` on a blocking thread.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::internal(format!("a worker thread failed: {e}")))?
}
