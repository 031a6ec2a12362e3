//! Reanalysis of the replay window (MuZero Reanalyse, Schrittwieser et al. 2021): before
//! training, positions drawn from the window's older iterations are searched again with the
//! network that is about to train, and their policy targets, root values and surprises are
//! replaced by the new search's. Targets made by an older, weaker network go stale while
//! their positions stay in the window; a new search of a position already paid for refreshes
//! them, at the cost of one self-play move's search each or more (it has no tree to reuse
//! and no cache hits: 1.7 times on a 2-core CPU). The games' results, which the value target
//! also learns, stay as they were played. A research setting, off in every preset
//! (docs/research/not-adopted.md).
//!
//! The positions are drawn with the run's seed and searched each with a generator of its own,
//! so a reanalysis is the same however many threads share it; nothing is written to disk (a
//! resumed training stage reanalyses again, to the same targets).

use std::time::Instant;

use anyhow::Result;
use rand::Rng;
use serde::Serialize;

use crate::alphazero::config::RunConfig;
use crate::alphazero::player::net_evaluator::NetEvaluator;
use crate::alphazero::selfplay::records::GameRecord;
use crate::core::progress::{self, Task};
use crate::core::rng::{item_seed, rng_from_seed, streams, Rng64};
use crate::core::threads::joined;
use crate::games::Game;
use crate::nn::{InferenceNet, Net};
use crate::search::mcts::{Leaf, LeafEvaluator, Selection, Tree};

/// What a reanalysis did.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Reanalysis {
    /// Positions searched again.
    pub positions: u64,
    pub seconds: f64,
}

/// A position of the window: its record and ply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ply {
    pub record: usize,
    pub ply: usize,
}

/// The new search's answer for one position.
#[derive(Clone, Debug, PartialEq)]
pub struct Searched {
    pub policy: Vec<f32>,
    pub root_value: f32,
}

/// The positions of `records[..older]` (the window's earlier iterations) that train with a
/// policy target: at or after their game's `trains_from`, searched in full (a playout cap's
/// cheap searches have no target to refresh).
pub fn candidates(records: &[GameRecord], older: usize, actions: usize) -> Vec<Ply> {
    let mut plies = Vec::new();
    for (i, r) in records.iter().enumerate().take(older) {
        for ply in r.trains_from as usize..r.moves.len() {
            let target = r.policies.get(ply * actions..(ply + 1) * actions);
            if target.is_some_and(|p| p.iter().any(|&x| x > 0.0)) {
                plies.push(Ply { record: i, ply });
            }
        }
    }
    plies
}

/// `count` of `candidates` (all when there are fewer), drawn uniformly without replacement
/// from `seed`, in the window's order.
pub fn draw(mut candidates: Vec<Ply>, count: usize, seed: u64) -> Vec<Ply> {
    let count = count.min(candidates.len());
    let mut rng = rng_from_seed(seed);
    for i in 0..count {
        let j = rng.random_range(i..candidates.len());
        candidates.swap(i, j);
    }
    candidates.truncate(count);
    candidates.sort_unstable();
    candidates
}

/// The position before ply `ply` of `record`: its moves up to there replayed (`None` for a
/// damaged record whose moves stop being legal before it).
fn position_at<G: Game>(record: &GameRecord, ply: usize) -> Option<G> {
    let mut pos = G::new();
    for &m in record.moves.get(..ply)? {
        if !pos.is_legal(m) {
            return None;
        }
        pos.play(m);
    }
    (pos.outcome().is_none()).then_some(pos)
}

/// Reanalyses `cfg.research.reanalyse_positions` positions of `records[..older]` with `net` before
/// iteration `iteration`'s training and writes the new targets into the records. The run's
/// reanalysis seed stream for that iteration draws the positions and seeds their searches;
/// `progress` shows them as a task.
pub fn reanalyse_window<G: Game>(
    cfg: &RunConfig,
    net: &Net,
    records: &mut [GameRecord],
    older: usize,
    iteration: u32,
    progress: bool,
) -> Result<Reanalysis> {
    let started = Instant::now();
    let seed = streams::REANALYSIS.seed(cfg.seed, iteration as u64);
    let a = G::NUM_ACTIONS;
    let picked = draw(
        candidates(records, older, a),
        cfg.research.reanalyse_positions as usize,
        seed,
    );
    let (plies, positions): (Vec<Ply>, Vec<G>) = picked
        .into_iter()
        .filter_map(|p| position_at::<G>(&records[p.record], p.ply).map(|pos| (p, pos)))
        .unzip();
    let show = progress && !positions.is_empty();
    let task = progress::task(positions.len() as u64, "positions", show);
    task.set_message(format!("reanalysis, iteration {iteration}"));
    let searched = search_in_parallel(cfg, net, &positions, seed, &task)?;
    drop(task);
    for (p, s) in plies.iter().zip(searched) {
        let r = &mut records[p.record];
        r.policies[p.ply * a..(p.ply + 1) * a].copy_from_slice(&s.policy);
        if let Some(v) = r.root_values.get_mut(p.ply) {
            *v = s.root_value;
        }
    }
    Ok(Reanalysis {
        positions: plies.len() as u64,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Searches `positions` on the network's device: on a CPU split over `cfg.workers` threads,
/// each with its own copy of the network (as self-play's workers); elsewhere on one.
/// Positions go in lockstep groups of `cfg.parallel_games`, the same groups however many
/// threads share them.
fn search_in_parallel<G: Game>(
    cfg: &RunConfig,
    net: &Net,
    positions: &[G],
    seed: u64,
    task: &Task,
) -> Result<Vec<Searched>> {
    let threads = if net.device() == tch::Device::Cpu {
        cfg.selfplay.workers.max(1)
    } else {
        1
    };
    // Whole lockstep groups a thread: a group's batches, and so its network's answers to
    // the last bit, are then the same however many threads there are.
    let group = cfg.selfplay.parallel_games.max(1);
    let part = positions.len().div_ceil(group).div_ceil(threads).max(1) * group;
    let nets = positions
        .chunks(part)
        .map(|_| InferenceNet::new(net))
        .collect::<Result<Vec<_>>>()?;
    let results: Vec<Result<Vec<Searched>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = positions
            .chunks(part)
            .zip(nets)
            .enumerate()
            .map(|(k, (chunk, n))| {
                let first = (k * part) as u64;
                scope.spawn(move || {
                    crate::nn::use_caller_threads();
                    let mut eval = NetEvaluator::new(n);
                    search_positions(cfg, &mut eval, chunk, first, seed, task)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| joined(h, "a reanalysis thread"))
            .collect()
    });
    let mut all = Vec::with_capacity(positions.len());
    for r in results {
        all.extend(r?);
    }
    Ok(all)
}

/// Searches each of `positions` as self-play searches a move in full (`cfg.sims`, the root
/// noised, `cfg.mcts`), `cfg.parallel_games` trees in lockstep so that the network sees full
/// batches. Position `k` is the window's `first + k`-th drawn, whose search draws from a
/// generator seeded by it. Each group done advances `task`.
pub fn search_positions<G: Game, E: LeafEvaluator<G>>(
    cfg: &RunConfig,
    eval: &mut E,
    positions: &[G],
    first: u64,
    seed: u64,
    task: &Task,
) -> Result<Vec<Searched>> {
    let mut out = Vec::with_capacity(positions.len());
    let group = cfg.selfplay.parallel_games.max(1);
    for (g, chunk) in positions.chunks(group).enumerate() {
        let mut trees: Vec<(Tree<G>, Rng64)> = chunk
            .iter()
            .enumerate()
            .map(|(k, pos)| {
                let index = first + (g * group + k) as u64;
                let mut tree = Tree::new(pos.clone(), cfg.mcts);
                tree.set_budget(cfg.selfplay.sims);
                (tree, rng_from_seed(item_seed(seed, index)))
            })
            .collect();
        search_lockstep(&mut trees, cfg.selfplay.sims, eval)?;
        task.inc(trees.len() as u64);
        out.extend(trees.iter().map(|(t, _)| Searched {
            policy: t.policy(),
            root_value: t.root_value(),
        }));
    }
    Ok(out)
}

/// Runs every tree to `sims` root visits, one leaf a tree per network call.
fn search_lockstep<G: Game, E: LeafEvaluator<G>>(
    trees: &mut [(Tree<G>, Rng64)],
    sims: u32,
    eval: &mut E,
) -> Result<()> {
    let a = G::NUM_ACTIONS;
    let mut leaves: Vec<(usize, Leaf<G>)> = Vec::with_capacity(trees.len());
    let mut positions: Vec<G> = Vec::with_capacity(trees.len());
    let mut policies = vec![0.0; trees.len() * a];
    let mut values = vec![0.0; trees.len()];
    loop {
        leaves.clear();
        positions.clear();
        for (i, (tree, rng)) in trees.iter_mut().enumerate() {
            while tree.root_visits() < sims {
                tree.noise_root_once(rng);
                match tree.select() {
                    Selection::Leaf(l) => {
                        positions.push(l.pos.clone());
                        leaves.push((i, l));
                        break;
                    }
                    Selection::Terminal => continue,
                    Selection::Collision => break,
                }
            }
        }
        // Every search complete (or, for a tree with nothing left to explore, stalled).
        if leaves.is_empty() {
            return Ok(());
        }
        eval.evaluate(&positions, &mut policies, &mut values)?;
        for (k, (i, l)) in leaves.iter().enumerate() {
            let (tree, rng) = &mut trees[*i];
            tree.complete(l, &policies[k * a..(k + 1) * a], values[k]);
            tree.noise_root_once(rng);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Connect4, GameKind};
    use crate::search::mcts::UniformEvaluator;

    fn record(moves: &[u8], trains_from: u32, targets: bool) -> GameRecord {
        let a = Connect4::NUM_ACTIONS;
        let p = if targets { 1.0 / a as f32 } else { 0.0 };
        GameRecord {
            moves: moves.to_vec(),
            policies: vec![p; moves.len() * a],
            root_values: vec![0.5; moves.len()],
            outcome: 0,
            trains_from,
            random_plies: 0,
        }
    }

    #[test]
    fn candidates_are_the_older_trained_plies_with_a_target() {
        let records = [
            record(&[3, 3, 2], 0, true),
            record(&[3, 4, 2, 1], 2, true),
            record(&[0, 1], 0, false),
            record(&[5, 5], 0, true),
        ];
        let at = |record, ply| Ply { record, ply };
        // The last record is the newest iteration's; the third has no policy targets.
        let c = candidates(&records, 3, Connect4::NUM_ACTIONS);
        assert_eq!(c, [at(0, 0), at(0, 1), at(0, 2), at(1, 2), at(1, 3)]);
    }

    #[test]
    fn a_draw_takes_distinct_positions_and_follows_the_seed() {
        let all: Vec<Ply> = (0..100).map(|i| Ply { record: i, ply: 0 }).collect();
        let a = draw(all.clone(), 30, 7);
        assert_eq!(a.len(), 30);
        assert!(a.windows(2).all(|w| w[0] < w[1]), "sorted and distinct");
        assert_eq!(a, draw(all.clone(), 30, 7));
        assert_ne!(a, draw(all.clone(), 30, 8));
        assert_eq!(draw(all.clone(), 500, 7), all);
    }

    #[test]
    fn a_searched_position_gets_the_searchs_policy_and_value() {
        let cfg = RunConfig::preset("tiny", GameKind::Connect4, false).unwrap();
        // The first player to move wins at once in column 4; the search sees it.
        let win = Connect4::parse_position("414141").unwrap();
        let quiet = Connect4::new();
        let silent = progress::task(2, "positions", false);
        let s =
            search_positions(&cfg, &mut UniformEvaluator, &[win, quiet], 0, 3, &silent).unwrap();
        assert_eq!(s.len(), 2);
        for x in &s {
            assert!((x.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        }
        let best = |p: &[f32]| (0..p.len()).max_by(|&i, &j| p[i].total_cmp(&p[j]));
        assert_eq!(best(&s[0].policy), Some(3));
        assert_eq!(s[0].root_value, 1.0);
        // The same seeds, the same searches, whichever group a position falls in.
        let again = search_positions(&cfg, &mut UniformEvaluator, &[quiet], 1, 3, &silent).unwrap();
        assert_eq!(again[0], s[1]);
    }

    #[test]
    fn positions_are_replayed_from_their_records() {
        let r = record(&[3, 3, 2], 0, true);
        let pos: Connect4 = position_at(&r, 2).unwrap();
        assert_eq!(pos, Connect4::parse_position("44").unwrap());
        assert!(position_at::<Connect4>(&r, 4).is_none());
    }
}
