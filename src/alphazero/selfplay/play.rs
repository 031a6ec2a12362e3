//! Self-play: workers (see [`super::worker`]) play games in lockstep and write them as they
//! finish, so an interrupted self-play keeps them and a resumed one plays only the rest.
//!
//! The games of an iteration are split into chunks of `chunk_games` consecutive numbers. One
//! worker plays a whole chunk, in lockstep, with an evaluation cache of its own, and the chunk
//! is written as one file when its last game ends: a chunk's games, and so the training that
//! reads them, are the same whichever worker played it, how many workers there were, and how
//! often the run was interrupted. On a CPU each worker owns a copy of the network and
//! evaluates on its own thread, so the workers keep every core busy; on a GPU one inference
//! thread owns the network and serves the workers' batches.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{bail, Result};
use crossbeam_channel::{unbounded, Receiver, Sender};

use super::records::{finished_games, write_chunk, GameRecord};
use super::stats::SelfPlayStats;
use super::worker::run_worker;
use crate::alphazero::config::RunConfig;
use crate::alphazero::player::net_evaluator::NetEvaluator;
use crate::core::progress::{self, Task};
use crate::core::threads::joined;
use crate::games::Game;
use crate::nn::{Evaluator, InferenceNet, InferenceServer, InferenceStats, Metered, Net};

/// The games of an iteration still to play, chunk by chunk (a chunk's missing games; chunks
/// already on disk are left out), among the games of `shard` (whole chunks) or all of them.
fn missing_chunks(cfg: &RunConfig, already: &[u64], shard: Option<&Range<u64>>) -> Vec<Vec<u64>> {
    let size = cfg.selfplay.chunk_games.max(1);
    let chunks = match shard {
        Some(r) => r.start / size..r.end.div_ceil(size),
        None => 0..cfg.selfplay.games.div_ceil(size),
    };
    chunks
        .map(|c| {
            (c * size..((c + 1) * size).min(cfg.selfplay.games))
                .filter(|i| already.binary_search(i).is_err())
                .collect::<Vec<u64>>()
        })
        .filter(|games| !games.is_empty())
        .collect()
}

/// Checks that `games` is a range of whole chunks of an iteration: a shard of self-play is
/// always the same chunks, so its files are the same wherever it is played.
pub fn check_shard(cfg: &RunConfig, games: &Range<u64>) -> Result<()> {
    let size = cfg.selfplay.chunk_games.max(1);
    let whole = |g: u64| g.is_multiple_of(size) || g == cfg.selfplay.games;
    if games.start >= games.end
        || games.end > cfg.selfplay.games
        || !whole(games.start)
        || !whole(games.end)
    {
        bail!(
            "self-play shards are whole chunks of {size} games among the iteration's {}: \
             --games-from and --games-to must be multiples of {size} (or {}), from < to; \
             {}..{} is not",
            cfg.selfplay.games,
            cfg.selfplay.games,
            games.start,
            games.end
        );
    }
    Ok(())
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
    self_play_shard::<G>(cfg, net, iteration, data_dir, None, progress)
}

/// [`self_play`] of the games of `shard` only (whole chunks, see [`check_shard`]), or of the
/// whole iteration.
pub fn self_play_shard<G: Game>(
    cfg: &RunConfig,
    net: Net,
    iteration: u32,
    data_dir: &Path,
    shard: Option<Range<u64>>,
    progress: bool,
) -> Result<SelfPlayStats> {
    let started = Instant::now();
    if let Some(games) = &shard {
        check_shard(cfg, games)?;
    }
    let already = finished_games(data_dir, G::NAME, G::NUM_ACTIONS, iteration)?;
    let chunks = missing_chunks(cfg, &already, shard.as_ref());
    if chunks.is_empty() {
        return Ok(SelfPlayStats::default());
    }
    let workers = cfg.selfplay.workers.max(1).min(chunks.len());
    let games: usize = chunks.iter().map(Vec::len).sum();
    let task = progress::task(games as u64, "games", progress);
    task.set_message(format!("self-play, iteration {iteration}"));
    let run = ChunkRun {
        cfg,
        iteration,
        chunks: &chunks,
        data_dir,
        task: &task,
    };
    let (mut stats, inference) = if net.device() == tch::Device::Cpu {
        // Each worker its own copy of the network, folded for inference.
        let nets = (0..workers)
            .map(|_| Ok(Metered::new(InferenceNet::new(&net)?)))
            .collect::<Result<Vec<_>>>()?;
        let (stats, nets) = run.play::<G, _>(nets)?;
        let mut inference = InferenceStats::default();
        for n in &nets {
            inference.merge(&n.stats);
        }
        (stats, inference)
    } else {
        // Each inference thread its own copy of the network and every n-th worker: one
        // thread's copying and host work between forwards left the GPU half idle.
        let n = cfg.inference_threads_for(workers);
        let max_batch = workers.div_ceil(n) * cfg.selfplay.parallel_games;
        let servers = (0..n)
            .map(|_| Ok(InferenceServer::start(InferenceNet::new(&net)?, max_batch)))
            .collect::<Result<Vec<_>>>()?;
        let clients = (0..workers)
            .map(|w| servers[w % n].client())
            .collect::<Result<Vec<_>>>()?;
        let (stats, clients) = run.play::<G, _>(clients)?;
        drop(clients);
        let mut inference = InferenceStats::default();
        for server in servers {
            inference.merge(&server.finish()?);
        }
        (
            SelfPlayStats {
                inference_threads: Some(n),
                ..stats
            },
            inference,
        )
    };
    drop(task);
    stats.forward_seconds = inference.forward_seconds;
    stats.batch_sizes = inference.batch_sizes;
    // What the network saw (the inference thread merges the workers' batches on a GPU).
    stats.batches = inference.batches;
    stats.nn_evals = inference.positions;
    stats.seconds = started.elapsed().as_secs_f64();
    Ok(stats)
}

/// The chunks of one self-play run and where their games go.
struct ChunkRun<'a> {
    cfg: &'a RunConfig,
    iteration: u32,
    chunks: &'a [Vec<u64>],
    data_dir: &'a Path,
    task: &'a Task,
}

impl ChunkRun<'_> {
    /// Plays every chunk, one worker thread for each evaluator, each worker taking the next
    /// chunk when it is done with one; returns the merged statistics and the evaluators.
    fn play<G: Game, E: Evaluator + Send>(
        &self,
        evaluators: Vec<E>,
    ) -> Result<(SelfPlayStats, Vec<E>)> {
        let next = AtomicUsize::new(0);
        let (tx, rx) = unbounded::<(u64, GameRecord)>();
        let (written, joined) = std::thread::scope(|scope| {
            let handles: Vec<_> = evaluators
                .into_iter()
                .map(|e| {
                    let (tx, next) = (tx.clone(), &next);
                    scope.spawn(move || self.worker::<G, E>(e, next, &tx))
                })
                .collect();
            drop(tx);
            let written = write_chunks::<G>(&rx, self);
            let joined: Vec<Result<(SelfPlayStats, E)>> = handles
                .into_iter()
                .map(|h| joined(h, "a self-play worker"))
                .collect();
            (written, joined)
        });
        let mut stats = SelfPlayStats::default();
        let mut evaluators = Vec::new();
        for j in joined {
            let (s, e) = j?;
            stats.merge(&s);
            evaluators.push(e);
        }
        stats.games = written?;
        Ok((stats, evaluators))
    }

    /// One worker: plays chunk after chunk until none is left.
    fn worker<G: Game, E: Evaluator>(
        &self,
        evaluator: E,
        next: &AtomicUsize,
        done: &Sender<(u64, GameRecord)>,
    ) -> Result<(SelfPlayStats, E)> {
        crate::nn::use_caller_threads();
        let mut eval = NetEvaluator::new(evaluator);
        let mut stats = SelfPlayStats::default();
        while let Some(games) = self.chunks.get(next.fetch_add(1, Ordering::Relaxed)) {
            let taken = AtomicUsize::new(0);
            let next_game = || games.get(taken.fetch_add(1, Ordering::Relaxed)).copied();
            let s = run_worker::<G, _>(self.cfg, self.iteration, &mut eval, &next_game, done)?;
            stats.merge(&s);
        }
        Ok((stats, eval.net))
    }
}

/// Receives finished games until every worker is done and writes each chunk once all its
/// games are in; returns how many games were written. After a failed write it keeps
/// receiving (so the workers finish), writes nothing more, and returns the error.
fn write_chunks<G: Game>(rx: &Receiver<(u64, GameRecord)>, run: &ChunkRun) -> Result<u64> {
    let size = run.cfg.selfplay.chunk_games.max(1);
    let expected: BTreeMap<u64, usize> = run
        .chunks
        .iter()
        .map(|games| (games[0] / size, games.len()))
        .collect();
    let mut pending: BTreeMap<u64, Vec<(u64, GameRecord)>> = BTreeMap::new();
    let mut written = 0;
    let mut failure = None;
    for (index, record) in rx.iter() {
        run.task.inc(1);
        let chunk = index / size;
        let games = pending.entry(chunk).or_default();
        games.push((index, record));
        if Some(&games.len()) != expected.get(&chunk) || failure.is_some() {
            continue;
        }
        let mut games = pending.remove(&chunk).unwrap_or_default();
        games.sort_by_key(|g| g.0);
        let (indices, records): (Vec<u64>, Vec<GameRecord>) = games.into_iter().unzip();
        match write_chunk(run.data_dir, G::NAME, run.iteration, &indices, &records) {
            Ok(()) => written += records.len() as u64,
            Err(e) => failure = Some(e),
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(written),
    }
}
