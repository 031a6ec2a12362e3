//! Self-play: many games in lockstep per worker, so each step sends the network one full batch
//! (one leaf per game), with an evaluation cache keyed by position and tree reuse between
//! moves. One inference thread owns the network; workers talk to it over channels.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use crossbeam_channel::unbounded;
use serde::Serialize;

use super::config::RunConfig;
use super::net_evaluator::NetEvaluator;
use super::records::{finished_games, write_chunk, GameRecord};
use crate::core::progress;
use crate::core::rng::{mix64, rng_from_seed, Rng64};
use crate::games::{Game, Player};
use crate::nn::{InferenceServer, Net};
use crate::search::mcts::{Leaf, LeafEvaluator, Selection, Tree};

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
    fn merge(&mut self, o: &SelfPlayStats) {
        self.positions += o.positions;
        self.nn_evals += o.nn_evals;
        self.batches += o.batches;
        self.cache_hits += o.cache_hits;
        self.leaves += o.leaves;
    }
}

/// An evaluation cache keyed by the position's key. Cleared when full: the simplest policy
/// that bounds memory, and within one self-play run old entries are rarely useful again.
struct EvalCache {
    map: HashMap<u64, (Box<[f32]>, f32)>,
    capacity: usize,
}

impl EvalCache {
    fn get(&self, key: u64) -> Option<&(Box<[f32]>, f32)> {
        self.map.get(&key)
    }
    fn insert(&mut self, key: u64, policy: &[f32], value: f32) {
        if self.map.len() >= self.capacity {
            self.map.clear();
        }
        self.map.insert(key, (policy.into(), value));
    }
}

struct Slot<G: Game> {
    index: u64,
    tree: Tree<G>,
    rng: Rng64,
    noised: bool,
    record: GameRecord,
}

/// The seed of game `index` of an iteration: games are reproducible whichever worker plays them.
pub fn game_seed(seed: u64, iteration: u32, index: u64) -> u64 {
    mix64(mix64(seed ^ ((iteration as u64) << 40)) ^ index)
}

/// Plays games in lockstep until `next_game` has none left, sending finished records to `done`.
pub fn run_worker<G: Game, E: LeafEvaluator<G>>(
    cfg: &RunConfig,
    iteration: u32,
    eval: &mut E,
    next_game: &(dyn Fn() -> Option<u64> + Sync),
    done: &crossbeam_channel::Sender<(u64, GameRecord)>,
) -> Result<SelfPlayStats> {
    let a = G::NUM_ACTIONS;
    let new_slot = |index: u64| Slot {
        index,
        tree: Tree::new(G::new(), cfg.mcts),
        rng: rng_from_seed(game_seed(cfg.seed, iteration, index)),
        noised: false,
        record: GameRecord::default(),
    };
    let mut slots: Vec<Slot<G>> = Vec::new();
    while slots.len() < cfg.parallel_games {
        match next_game() {
            Some(i) => slots.push(new_slot(i)),
            None => break,
        }
    }
    let mut cache = EvalCache {
        map: HashMap::new(),
        capacity: 1 << 20,
    };
    let mut stats = SelfPlayStats::default();
    let mut leaves: Vec<Leaf<G>> = Vec::new();
    let mut owners: Vec<usize> = Vec::new();
    let mut positions: Vec<G> = Vec::new();
    let mut policies = vec![0.0; cfg.parallel_games * a];
    let mut values = vec![0.0; cfg.parallel_games];
    while !slots.is_empty() {
        leaves.clear();
        owners.clear();
        positions.clear();
        for (si, s) in slots.iter_mut().enumerate() {
            while s.tree.root_visits() < cfg.sims {
                if !s.noised && s.tree.root_expanded() {
                    s.tree.add_root_noise(&mut s.rng);
                    s.noised = true;
                }
                match s.tree.select() {
                    Selection::Leaf(l) => {
                        stats.leaves += 1;
                        if let Some((p, v)) = cache.get(l.pos.key()) {
                            stats.cache_hits += 1;
                            s.tree.complete(&l, p, *v);
                            continue;
                        }
                        positions.push(l.pos.clone());
                        leaves.push(l);
                        owners.push(si);
                        break;
                    }
                    Selection::Terminal => continue,
                    Selection::Collision => break,
                }
            }
        }
        if !positions.is_empty() {
            eval.evaluate(&positions, &mut policies, &mut values)?;
            stats.nn_evals += positions.len() as u64;
            stats.batches += 1;
            for (i, l) in leaves.iter().enumerate() {
                let p = &policies[i * a..(i + 1) * a];
                cache.insert(l.pos.key(), p, values[i]);
                let s = &mut slots[owners[i]];
                s.tree.complete(l, p, values[i]);
                if !s.noised && s.tree.root_expanded() {
                    s.tree.add_root_noise(&mut s.rng);
                    s.noised = true;
                }
            }
        }
        // Move in every game whose search is complete.
        let mut i = 0;
        while i < slots.len() {
            let s = &mut slots[i];
            if s.tree.root_visits() < cfg.sims {
                i += 1;
                continue;
            }
            let ply = s.tree.root_pos().ply() as u32;
            let temperature = if ply < cfg.temperature_plies {
                1.0
            } else {
                0.0
            };
            let m = s.tree.pick_move(temperature, &mut s.rng)?;
            s.record.moves.push(m);
            s.record.policies.extend(s.tree.policy());
            s.record.root_values.push(s.tree.root_value());
            stats.positions += 1;
            s.tree.advance(m);
            s.noised = false;
            if let Some(outcome) = s.tree.root_pos().outcome() {
                s.record.outcome = outcome.value_for(Player::First) as i8;
                let finished = std::mem::take(&mut s.record);
                done.send((s.index, finished))
                    .map_err(|_| anyhow!("self-play results were no longer collected"))?;
                match next_game() {
                    Some(n) => {
                        slots[i] = new_slot(n);
                        i += 1;
                    }
                    None => {
                        slots.swap_remove(i);
                    }
                }
            } else {
                i += 1;
            }
        }
    }
    Ok(stats)
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
        // Collect finished games and write them in chunks as they come.
        let (mut indices, mut records) = (Vec::new(), Vec::new());
        let mut last_write = Instant::now();
        let mut write_error = None;
        for (index, record) in rx.iter() {
            indices.push(index);
            records.push(record);
            task.inc(1);
            if records.len() >= 64 || last_write.elapsed() > Duration::from_secs(30) {
                if let Err(e) = write_chunk(data_dir, G::NAME, iteration, &indices, &records) {
                    write_error = Some(e);
                }
                stats.games += records.len() as u64;
                indices.clear();
                records.clear();
                last_write = Instant::now();
            }
        }
        if !records.is_empty() {
            if let Err(e) = write_chunk(data_dir, G::NAME, iteration, &indices, &records) {
                write_error = Some(e);
            }
            stats.games += records.len() as u64;
        }
        let mut out: Vec<Result<SelfPlayStats>> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("a self-play worker panicked")))
            })
            .collect();
        if let Some(e) = write_error {
            out.push(Err(e));
        }
        out
    });
    drop(task);
    for r in results {
        stats.merge(&r?);
    }
    let inference = server.finish();
    stats.forward_seconds = inference.forward_seconds;
    stats.batch_sizes = inference.batch_sizes;
    // The inference thread merges the workers' batches: count what the network saw.
    stats.batches = inference.batches;
    stats.nn_evals = inference.positions;
    stats.seconds = started.elapsed().as_secs_f64();
    Ok(stats)
}
