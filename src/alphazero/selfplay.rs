//! Self-play: workers (see [`super::worker`]) play games in lockstep; one inference thread owns
//! the network and serves their batches over channels; finished games are written in chunks as
//! they come, so an interrupted self-play keeps them and a resumed one plays only the rest.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use crossbeam_channel::{unbounded, Receiver};
use serde::Serialize;

use super::config::RunConfig;
use super::net_evaluator::NetEvaluator;
use super::records::{finished_games, write_chunk, GameRecord};
use super::worker::run_worker;
use crate::core::progress::{self, Task};
use crate::core::threads::panic_message;
use crate::games::Game;
use crate::nn::{InferenceServer, Net};

/// Finished games are written in chunks of at most this many...
const CHUNK_GAMES: usize = 64;
/// ...or after this long, so that an interruption loses little.
const CHUNK_SECONDS: u64 = 30;

/// What a self-play run did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SelfPlayStats {
    pub games: u64,
    pub positions: u64,
    pub seconds: f64,
    /// Positions sent to the network.
    pub nn_evals: u64,
    pub batches: u64,
    pub cache_hits: u64,
    /// Leaves that needed a value (network or cache).
    pub leaves: u64,
    /// Seconds the inference thread spent in forward passes.
    pub forward_seconds: f64,
    /// Batches of each size the network saw (index = size).
    #[serde(skip)]
    pub batch_sizes: Vec<u64>,
}

impl SelfPlayStats {
    pub fn positions_per_s(&self) -> f64 {
        self.positions as f64 / self.seconds.max(1e-9)
    }
    pub fn nn_evals_per_s(&self) -> f64 {
        self.nn_evals as f64 / self.seconds.max(1e-9)
    }
    pub fn mean_batch(&self) -> f64 {
        self.nn_evals as f64 / self.batches.max(1) as f64
    }
    pub fn cache_hit_rate(&self) -> f64 {
        self.cache_hits as f64 / self.leaves.max(1) as f64
    }
    pub(super) fn merge(&mut self, o: &SelfPlayStats) {
        self.positions += o.positions;
        self.nn_evals += o.nn_evals;
        self.batches += o.batches;
        self.cache_hits += o.cache_hits;
        self.leaves += o.leaves;
    }
}

/// Plays the missing games of an iteration with the network `net`, writing them in chunks
/// under `data_dir`. Returns the statistics of this run (games already on disk are skipped).
pub fn self_play<G: Game>(
    cfg: &RunConfig,
    net: Net,
    iteration: u32,
    data_dir: &Path,
    progress: bool,
) -> Result<SelfPlayStats> {
    let started = Instant::now();
    let already = finished_games(data_dir, G::NAME, G::NUM_ACTIONS, iteration)?;
    let todo: Vec<u64> = (0..cfg.games)
        .filter(|i| already.binary_search(i).is_err())
        .collect();
    let mut stats = SelfPlayStats::default();
    if todo.is_empty() {
        return Ok(stats);
    }
    let workers = cfg.workers.max(1);
    let server = InferenceServer::start(net, workers * cfg.parallel_games);
    let next = AtomicUsize::new(0);
    let next_game = || {
        let k = next.fetch_add(1, Ordering::Relaxed);
        todo.get(k).copied()
    };
    let (tx, rx) = unbounded::<(u64, GameRecord)>();
    let task = progress::task(todo.len() as u64, "games", progress);
    task.set_message(format!("self-play, iteration {iteration}"));
    let mut clients = Vec::new();
    for _ in 0..workers {
        clients.push(server.client()?);
    }
    let results: Vec<Result<SelfPlayStats>> = std::thread::scope(|scope| {
        let handles: Vec<_> = clients
            .into_iter()
            .map(|client| {
                let tx = tx.clone();
                let next_game = &next_game;
                scope.spawn(move || {
                    let mut eval = NetEvaluator::new(client);
                    run_worker::<G, _>(cfg, iteration, &mut eval, next_game, &tx)
                })
            })
            .collect();
        drop(tx);
        let written = write_as_they_come::<G>(&rx, data_dir, iteration, &task);
        let mut out: Vec<Result<SelfPlayStats>> = Vec::new();
        match written {
            Ok(games) => stats.games = games,
            Err(e) => out.push(Err(e)),
        }
        for h in handles {
            out.push(h.join().unwrap_or_else(|p| {
                Err(anyhow!(
                    "a self-play worker panicked: {}",
                    panic_message(p.as_ref())
                ))
            }));
        }
        out
    });
    drop(task);
    for r in results {
        stats.merge(&r?);
    }
    let inference = server.finish()?;
    stats.forward_seconds = inference.forward_seconds;
    stats.batch_sizes = inference.batch_sizes;
    // The inference thread merges the workers' batches: count what the network saw.
    stats.batches = inference.batches;
    stats.nn_evals = inference.positions;
    stats.seconds = started.elapsed().as_secs_f64();
    Ok(stats)
}

/// Receives finished games until every worker is done and writes them in chunks; returns how
/// many were written. After a failed write it keeps receiving (so the workers finish), writes
/// nothing more, and returns the error.
fn write_as_they_come<G: Game>(
    rx: &Receiver<(u64, GameRecord)>,
    data_dir: &Path,
    iteration: u32,
    task: &Task,
) -> Result<u64> {
    let (mut indices, mut records) = (Vec::new(), Vec::new());
    let mut last_write = Instant::now();
    let mut written = 0;
    let mut failure = None;
    let mut flush = |indices: &mut Vec<u64>, records: &mut Vec<GameRecord>| {
        if failure.is_none() && !records.is_empty() {
            match write_chunk(data_dir, G::NAME, iteration, indices, records) {
                Ok(()) => written += records.len() as u64,
                Err(e) => failure = Some(e),
            }
        }
        indices.clear();
        records.clear();
    };
    for (index, record) in rx.iter() {
        indices.push(index);
        records.push(record);
        task.inc(1);
        if records.len() >= CHUNK_GAMES || last_write.elapsed() > Duration::from_secs(CHUNK_SECONDS)
        {
            flush(&mut indices, &mut records);
            last_write = Instant::now();
        }
    }
    flush(&mut indices, &mut records);
    match failure {
        Some(e) => Err(e),
        None => Ok(written),
    }
}
