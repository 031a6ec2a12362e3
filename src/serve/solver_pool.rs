//! The Connect Four solvers the server shares: a few [`Oracle`]s (each a 32 MiB table, the
//! opening book and the cache of solved positions), lent to one search at a time, and the
//! `solver` player built on them. A game keeps no solver of its own, so a hundred games
//! against `solver` cost a few tables, not a hundred; every search has a deadline, so a
//! position too early in the game to solve in time gives an error instead of a thread that
//! never ends.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};
use rand::Rng;

use crate::agent::Agent;
use crate::core::rng::{rng_from_seed, Rng64};
use crate::games::{Connect4, Game, Move};
use crate::solvers::connect4::Position;
use crate::solvers::connect4_book::{Oracle, OutOfTime};

/// Table entries of each pooled solver: 2^22 (32 MiB), as the `solver` player's.
const TABLE_ENTRIES: usize = 1 << 22;

/// Solvers lent out one search at a time; at most `max` exist, made when first needed.
pub struct SolverPool {
    dir: PathBuf,
    max: usize,
    state: Mutex<PoolState>,
    returned: Condvar,
}

struct PoolState {
    free: Vec<Oracle>,
    made: usize,
}

fn lock(m: &Mutex<PoolState>) -> MutexGuard<'_, PoolState> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl SolverPool {
    /// A pool of at most `max` solvers using the book and cache in `dir`.
    pub fn new(dir: PathBuf, max: usize) -> SolverPool {
        SolverPool {
            dir,
            max: max.max(1),
            state: Mutex::new(PoolState {
                free: Vec::new(),
                made: 0,
            }),
            returned: Condvar::new(),
        }
    }

    /// Runs `work` with a solver whose searches stop at `deadline`; waits for one to be free
    /// until then. Fails with [`OutOfTime`] when the deadline passes first.
    pub fn with_oracle<T>(
        &self,
        deadline: Instant,
        work: impl FnOnce(&mut Oracle) -> Result<T>,
    ) -> Result<T> {
        let mut lent = Lent {
            pool: self,
            oracle: Some(self.borrow(deadline)?),
        };
        let oracle = lent
            .oracle
            .as_mut()
            .ok_or_else(|| anyhow!("no solver was lent"))?;
        oracle.set_deadline(Some(deadline));
        work(oracle)
    }

    fn borrow(&self, deadline: Instant) -> Result<Oracle> {
        let mut state = lock(&self.state);
        loop {
            if let Some(oracle) = state.free.pop() {
                return Ok(oracle);
            }
            if state.made < self.max {
                state.made += 1;
                drop(state);
                // Loading the book and cache takes a while: not under the lock.
                return Oracle::new(TABLE_ENTRIES, Some(&self.dir)).inspect_err(|_| {
                    lock(&self.state).made -= 1;
                });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(OutOfTime.into());
            }
            state = self
                .returned
                .wait_timeout(state, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

/// A lent solver: goes back to the pool when dropped, unless a panic left it half-updated,
/// in which case a new one will be made in its place.
struct Lent<'a> {
    pool: &'a SolverPool,
    oracle: Option<Oracle>,
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        let mut state = lock(&self.pool.state);
        match self.oracle.take() {
            Some(mut oracle) if !std::thread::panicking() => {
                oracle.set_deadline(None);
                state.free.push(oracle);
            }
            _ => state.made -= 1,
        }
        self.pool.returned.notify_one();
    }
}

/// The `solver` player on the shared pool: among the optimal moves (the fastest win, or the
/// slowest loss), one at random with its seeded generator.
pub struct PooledSolver {
    pool: Arc<SolverPool>,
    seconds: Duration,
    rng: Rng64,
}

impl PooledSolver {
    /// A player whose every move must be found within `seconds`.
    pub fn new(pool: Arc<SolverPool>, seconds: Duration) -> PooledSolver {
        PooledSolver {
            pool,
            seconds,
            rng: rng_from_seed(0),
        }
    }
}

impl Agent<Connect4> for PooledSolver {
    fn new_game(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
    }
    fn choose(&mut self, pos: &Connect4) -> Result<Move> {
        if pos.outcome().is_some() {
            bail!("no legal move: the game is over");
        }
        let deadline = Instant::now() + self.seconds;
        let found = self
            .pool
            .with_oracle(deadline, |o| o.best_moves(&Position::from_game(pos)));
        let (cols, _) = match found {
            Err(e) if e.is::<OutOfTime>() => bail!(
                "the solver could not find its move within {:.1} s: early positions take long \
                 without a deeper opening book (`zero solve --build-book 6` builds one)",
                self.seconds.as_secs_f64()
            ),
            other => other?,
        };
        Ok(cols[self.rng.random_range(0..cols.len())] as Move)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solvers_are_shared_and_bounded_in_time() {
        let dir = tempfile::tempdir().unwrap();
        let pool = Arc::new(SolverPool::new(dir.path().into(), 1));
        let mut player = PooledSolver::new(pool.clone(), Duration::from_secs(60));
        // Red to move wins at once in column 1.
        let pos = Connect4::parse_position("121212").unwrap();
        assert_eq!(player.choose(&pos).unwrap(), 0);
        // The empty board cannot be solved in 50 ms; the pool's one solver is still usable.
        let mut hurried = PooledSolver::new(pool.clone(), Duration::from_millis(50));
        let e = hurried.choose(&Connect4::new()).unwrap_err().to_string();
        assert!(e.contains("could not find its move within"), "{e}");
        assert_eq!(player.choose(&pos).unwrap(), 0);
        assert_eq!(lock(&pool.state).made, 1);
        // With its one solver lent out, a search waits no longer than its deadline.
        let soon = Instant::now() + Duration::from_millis(50);
        let e = pool
            .with_oracle(soon, |_| {
                pool.with_oracle(soon, |_| Ok(()))?;
                Ok(())
            })
            .unwrap_err();
        assert!(e.is::<OutOfTime>(), "{e}");
    }
}
