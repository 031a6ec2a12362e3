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

/// When a solver's work asked for by a request must end: after `seconds` (at most `limit`),
/// `default` seconds when the request does not say; a negative or non-finite number is refused.
pub fn analysis_deadline(
    seconds: Option<f64>,
    default: f64,
    limit: f64,
) -> Result<std::time::Instant, ApiError> {
    let seconds = match seconds {
        None => default,
        Some(s) if s.is_finite() && s >= 0.0 => s.min(limit),
        Some(s) => {
            return Err(ApiError::bad(format!(
                "seconds={s}: give a number of seconds from 0 to {limit}"
            )))
        }
    };
    Ok(std::time::Instant::now() + std::time::Duration::from_secs_f64(seconds))
}
