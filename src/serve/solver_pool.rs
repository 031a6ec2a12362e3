//! The exact solvers the server shares, for the games whose solvers are dear
//! ([`Catalogued::SHARED_SOLVERS`]: Connect Four's, each a 32 MiB table, the opening book and
//! the cache of solved positions): a few of them a game, lent to one search at a time
//! ([`SolverPool`]), and the `solver` player built on them ([`PooledSolver`]). A game keeps no
//! solver of its own, so a hundred games against `solver` cost a few tables, not a hundred;
//! every search has a deadline, so a position too early in the game to solve in time gives an
//! error instead of a thread that never ends.

use std::any::Any;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};
use rand::Rng;

use crate::agent::Agent;
use crate::catalog::Catalogued;
use crate::core::rng::{rng_from_seed, Rng64};
use crate::core::stop::Stop;
use crate::games::{GameKind, Move};
use crate::search::alphabeta::AlphaBetaAgent;
use crate::solvers::connect4_book::OutOfTime;
use crate::solvers::exact::Exact;

/// The pools of every game that shares its solvers, each made when first needed.
pub struct SharedSolvers {
    dir: PathBuf,
    max: usize,
    pools: Mutex<HashMap<GameKind, Arc<dyn Any + Send + Sync>>>,
}

impl SharedSolvers {
    /// At most `max` solvers a game, using the book and cache in `dir`.
    pub fn new(dir: PathBuf, max: usize) -> SharedSolvers {
        SharedSolvers {
            dir,
            max,
            pools: Mutex::new(HashMap::new()),
        }
    }

    /// The pool of game `G`.
    pub fn pool<G: Catalogued>(&self) -> Result<Arc<SolverPool<G>>> {
        let kind = GameKind::of::<G>().ok_or_else(|| anyhow!("{} is not in the list", G::NAME))?;
        let pool = lock(&self.pools)
            .entry(kind)
            .or_insert_with(|| Arc::new(SolverPool::<G>::new(self.dir.clone(), self.max)))
            .clone();
        pool.downcast::<SolverPool<G>>()
            .map_err(|_| anyhow!("the solver pool of {} is of another game", G::NAME))
    }
}

/// Solvers of game `G` lent out one search at a time; at most `max` exist, made when first
/// needed.
pub struct SolverPool<G: Catalogued> {
    dir: PathBuf,
    max: usize,
    state: Mutex<PoolState<G>>,
    returned: Condvar,
}

struct PoolState<G: Catalogued> {
    free: Vec<Box<dyn Exact<G>>>,
    made: usize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<G: Catalogued> SolverPool<G> {
    /// A pool of at most `max` solvers using the book and cache in `dir`.
    pub fn new(dir: PathBuf, max: usize) -> SolverPool<G> {
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
    pub fn with_solver<T>(
        &self,
        deadline: Instant,
        work: impl FnOnce(&mut dyn Exact<G>) -> Result<T>,
    ) -> Result<T> {
        self.with_solver_until(deadline, None, work)
    }

    /// [`Self::with_solver`], also ending (waiting or searching) once `stop` is raised, with
    /// [`OutOfTime`] as at the deadline.
    pub fn with_solver_until<T>(
        &self,
        deadline: Instant,
        stop: Option<&Stop>,
        work: impl FnOnce(&mut dyn Exact<G>) -> Result<T>,
    ) -> Result<T> {
        let mut lent = Lent {
            pool: self,
            solver: Some(self.borrow(deadline, stop)?),
        };
        let solver = lent
            .solver
            .as_mut()
            .ok_or_else(|| anyhow!("no solver was lent"))?;
        solver.set_deadline(Some(deadline));
        solver.set_stop(stop.cloned());
        work(solver.as_mut())
    }

    fn borrow(&self, deadline: Instant, stop: Option<&Stop>) -> Result<Box<dyn Exact<G>>> {
        let mut state = lock(&self.state);
        loop {
            if stop.is_some_and(Stop::is_raised) {
                return Err(OutOfTime.into());
            }
            if let Some(solver) = state.free.pop() {
                return Ok(solver);
            }
            if state.made < self.max {
                state.made += 1;
                drop(state);
                // Loading the book and cache takes a while: not under the lock.
                return G::exact(Some(&self.dir)).inspect_err(|_| {
                    lock(&self.state).made -= 1;
                });
            }
            let mut left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(OutOfTime.into());
            }
            if stop.is_some() {
                // A raised flag wakes no one: look at it every little while.
                left = left.min(STOP_POLL);
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
struct Lent<'a, G: Catalogued> {
    pool: &'a SolverPool<G>,
    solver: Option<Box<dyn Exact<G>>>,
}

impl<G: Catalogued> Drop for Lent<'_, G> {
    fn drop(&mut self) {
        let mut state = lock(&self.pool.state);
        match self.solver.take() {
            Some(mut solver) if !std::thread::panicking() => {
                solver.set_deadline(None);
                solver.set_stop(None);
                state.free.push(solver);
            }
            _ => state.made -= 1,
        }
        self.pool.returned.notify_one();
    }
}

/// How often a search waiting for a solver looks at its stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);

/// The depth of the quick alpha-beta search that moves for a solver stopped by a person.
pub const STOPPED_SOLVER_DEPTH: u32 = 6;

/// The `solver` player on the shared pool: among the optimal moves (the fastest win, or the
/// slowest loss), one at random with its seeded generator. Stopped (its [`Stop`] raised), it
/// gives up the solve and plays the move of a quick alpha-beta search
/// ([`STOPPED_SOLVER_DEPTH`] plies) instead, the best it can do at once.
pub struct PooledSolver<G: Catalogued> {
    pool: Arc<SolverPool<G>>,
    seconds: Duration,
    rng: Rng64,
    stop: Option<Stop>,
}

impl<G: Catalogued> PooledSolver<G> {
    /// A player whose every move must be found within `seconds`.
    pub fn new(pool: Arc<SolverPool<G>>, seconds: Duration) -> PooledSolver<G> {
        PooledSolver {
            pool,
            seconds,
            rng: rng_from_seed(0),
            stop: None,
        }
    }

    /// The quick search's move, for a solve a person stopped.
    fn quick_move(&mut self, pos: &G) -> Result<Move> {
        let mut quick = AlphaBetaAgent::<G>::new(STOPPED_SOLVER_DEPTH);
        quick.new_game(self.rng.random());
        quick.choose(pos)
    }
}

impl<G: Catalogued> Agent<G> for PooledSolver<G> {
    fn new_game(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
    }
    fn choose(&mut self, pos: &G) -> Result<Move> {
        if pos.outcome().is_some() {
            bail!("no legal move: the game is over");
        }
        let deadline = Instant::now() + self.seconds;
        let stop = self.stop.clone();
        let found = self
            .pool
            .with_solver_until(deadline, stop.as_ref(), |s| s.best_moves(pos));
        let moves = match found {
            Err(e) if e.is::<OutOfTime>() && stop.as_ref().is_some_and(Stop::is_raised) => {
                return self.quick_move(pos)
            }
            Err(e) if e.is::<OutOfTime>() => bail!(
                "the solver could not find its move within {:.1} s: {}",
                self.seconds.as_secs_f64(),
                G::SOLVER_NOTE
            ),
            other => other?,
        };
        Ok(moves[self.rng.random_range(0..moves.len())])
    }
    fn set_stop(&mut self, stop: Stop) {
        self.stop = Some(stop);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Connect4, Game};

    #[test]
    fn solvers_are_shared_and_bounded_in_time() {
        let dir = tempfile::tempdir().unwrap();
        let shared = SharedSolvers::new(dir.path().into(), 1);
        let pool = shared.pool::<Connect4>().unwrap();
        assert!(Arc::ptr_eq(&pool, &shared.pool::<Connect4>().unwrap()));
        let mut player = PooledSolver::new(pool.clone(), Duration::from_secs(60));
        // Red to move wins at once in column 1.
        let pos = Connect4::parse_position("121212").unwrap();
        assert_eq!(player.choose(&pos).unwrap(), 0);
        // Five stones, past the opening book built in, cannot be solved in 50 ms; the pool's one
        // solver is still usable.
        let mut hurried = PooledSolver::new(pool.clone(), Duration::from_millis(50));
        let early = Connect4::parse_position("44444").unwrap();
        let e = hurried.choose(&early).unwrap_err().to_string();
        assert!(e.contains("could not find its move within"), "{e}");
        assert!(e.contains("--build-book"), "{e}");
        assert_eq!(player.choose(&pos).unwrap(), 0);
        assert_eq!(lock(&pool.state).made, 1);
        // With its one solver lent out, a search waits no longer than its deadline.
        let soon = Instant::now() + Duration::from_millis(50);
        let e = pool
            .with_solver(soon, |_| {
                pool.with_solver(soon, |_| Ok(()))?;
                Ok(())
            })
            .unwrap_err();
        assert!(e.is::<OutOfTime>(), "{e}");
    }

    #[test]
    fn a_stopped_solver_moves_at_once_with_a_quick_search() {
        let dir = tempfile::tempdir().unwrap();
        let shared = SharedSolvers::new(dir.path().into(), 1);
        let pool = shared.pool::<Connect4>().unwrap();
        let mut player = PooledSolver::new(pool.clone(), Duration::from_secs(600));
        let stop = Stop::new();
        player.set_stop(stop.clone());
        // The empty board takes hours to solve without a book; stopped, it still moves, and
        // the alpha-beta fallback is the same move for the same seed.
        stop.raise();
        player.new_game(5);
        let m = player.choose(&Connect4::new()).unwrap();
        assert!(Connect4::new().is_legal(m));
        player.new_game(5);
        assert_eq!(player.choose(&Connect4::new()).unwrap(), m);
        // Cleared, it solves again: the win at once in column 1.
        stop.clear();
        let pos = Connect4::parse_position("121212").unwrap();
        assert_eq!(player.choose(&pos).unwrap(), 0);
        assert_eq!(lock(&pool.state).made, 1);
    }
}
