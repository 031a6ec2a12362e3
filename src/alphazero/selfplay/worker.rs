//! One self-play worker: many games in lockstep, so that each step sends the network one full
//! batch (one leaf per game), with an evaluation cache keyed by position and tree reuse
//! between moves. A game's randomness comes from its own generator, seeded by the run's seed,
//! the iteration and the game's index, so a game is the same whichever worker plays it.

use std::collections::HashMap;

use anyhow::{anyhow, Result};
use crossbeam_channel::Sender;
use rand::Rng;

use super::records::GameRecord;
use super::stats::SelfPlayStats;
use crate::alphazero::config::{ForkMove, RunConfig};
use crate::core::rng::{mix64, rng_from_seed, Rng64};
use crate::games::{Game, Player};
use crate::search::mcts::{Leaf, LeafEvaluator, Selection, Tree};

/// Evaluations a worker's cache holds before it starts over: about 100 MB for Connect Four.
const CACHE_CAPACITY: usize = 1 << 20;

/// An evaluation cache keyed by the position's key. Cleared when full: the simplest policy
/// that bounds memory, and within one self-play run old entries are rarely useful again.
struct EvalCache {
    map: HashMap<u64, (Box<[f32]>, f32)>,
}

impl EvalCache {
    fn get(&self, key: u64) -> Option<&(Box<[f32]>, f32)> {
        self.map.get(&key)
    }
    fn insert(&mut self, key: u64, policy: &[f32], value: f32) {
        if self.map.len() >= CACHE_CAPACITY {
            self.map.clear();
        }
        self.map.insert(key, (policy.into(), value));
    }
}

/// A game in progress.
struct Slot<G: Game> {
    index: u64,
    tree: Tree<G>,
    rng: Rng64,
    record: GameRecord,
    /// The current move's search: simulations, and whether it is a full one (noised, and a
    /// policy target) rather than a playout cap's cheap one.
    sims: u32,
    full: bool,
    /// The plies this game opens with at random.
    random_plies: u32,
    /// The ply at which this game leaves its main line, if it is a forked one.
    fork_ply: Option<u32>,
}

impl<G: Game> Slot<G> {
    /// Chooses the search of the move to come: the full one, or under a research playout cap
    /// ([`crate::alphazero::config::PlayoutCap`]) a draw from the game's own generator, so the
    /// game stays the same whoever plays it.
    fn plan_search(&mut self, cfg: &RunConfig) {
        (self.sims, self.full) = match cfg.research.playout_cap {
            None => (cfg.selfplay.sims, true),
            Some(cap) if self.rng.random::<f64>() < cap.full_fraction => (cfg.selfplay.sims, true),
            Some(cap) => (cap.fast_sims.max(1), false),
        };
        self.tree.set_budget(self.sims);
    }

    /// Noise goes into full searches only: a cheap search plays as well as it can.
    fn noise_root(&mut self) {
        if self.full {
            self.tree.noise_root_once(&mut self.rng);
        }
    }
}

/// The ply at which the game seeded `seed` leaves its main line, if it is one of the run's
/// `fork_share` of forked games. From the seed, like the opening, so that the games that are
/// not forked stay as they were without forks.
fn fork_ply(cfg: &RunConfig, seed: u64) -> Option<u32> {
    if cfg.selfplay.fork_plies == 0 {
        return None;
    }
    let draw = mix64(seed ^ FORK_SALT);
    (unit_draw(draw) < cfg.selfplay.fork_share)
        .then(|| (mix64(draw) % cfg.selfplay.fork_plies as u64) as u32)
}

/// Separates the fork's draw from the other uses of a game's seed.
const FORK_SALT: u64 = 0x5f0e_c4a2_b1d3_9e67;

/// A uniform number in [0, 1) from 64 random bits.
fn unit_draw(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// The fork's move: one of the legal moves other than the searched one (that one when it is
/// the only move), uniformly or, with [`ForkMove::Policy`] (and in [`ForkMove::Mixed`]'s
/// share of the forks drawn by the policy), in proportion to `policy` (the search's, indexed
/// by move), uniformly again when none of them has any weight there.
fn fork_move<G: Game>(pos: &G, searched: u8, how: ForkMove, policy: &[f32], rng: &mut Rng64) -> u8 {
    let others: Vec<u8> = pos
        .legal_moves()
        .into_iter()
        .filter(|&m| m != searched)
        .collect();
    if others.is_empty() {
        return searched;
    }
    let by_policy = match how {
        ForkMove::Uniform => false,
        ForkMove::Policy => true,
        ForkMove::Mixed(uniform_share) => rng.random::<f64>() >= uniform_share,
    };
    let weight = |m: u8| policy.get(m as usize).copied().unwrap_or(0.0).max(0.0);
    let total: f32 = others.iter().map(|&m| weight(m)).sum();
    if by_policy && total > 0.0 {
        let mut x = rng.random::<f32>() * total;
        for &m in &others {
            if weight(m) > 0.0 && x < weight(m) {
                return m;
            }
            x -= weight(m);
        }
        // Rounding left a sliver past the last weight: the last move with weight takes it.
        if let Some(&m) = others.iter().rev().find(|&&m| weight(m) > 0.0) {
            return m;
        }
    }
    others[rng.random_range(0..others.len())]
}

/// The seed of game `index` of an iteration: games are reproducible whichever worker plays them.
pub fn game_seed(seed: u64, iteration: u32, index: u64) -> u64 {
    mix64(mix64(seed ^ ((iteration as u64) << 40)) ^ index)
}

/// The leaves of one lockstep step waiting for the network, and whose they are.
struct Batch<G: Game> {
    leaves: Vec<Leaf<G>>,
    positions: Vec<G>,
    /// The slot of each leaf.
    owners: Vec<usize>,
    policies: Vec<f32>,
    values: Vec<f32>,
}

struct Worker<'a, G: Game, E: LeafEvaluator<G>> {
    cfg: &'a RunConfig,
    iteration: u32,
    eval: &'a mut E,
    cache: EvalCache,
    slots: Vec<Slot<G>>,
    batch: Batch<G>,
    stats: SelfPlayStats,
}

impl<G: Game, E: LeafEvaluator<G>> Worker<'_, G, E> {
    fn new_slot(&self, index: u64) -> Slot<G> {
        let seed = game_seed(self.cfg.seed, self.iteration, index);
        let fork_ply = fork_ply(self.cfg, seed);
        let mut slot = Slot {
            index,
            tree: Tree::new(G::new(), self.cfg.mcts),
            rng: rng_from_seed(seed),
            record: GameRecord::default(),
            sims: self.cfg.selfplay.sims,
            full: true,
            // A forked game leaves the main line: it does not open at random.
            random_plies: if fork_ply.is_some() {
                0
            } else {
                self.cfg.selfplay.random_opening_plies
            },
            fork_ply,
        };
        slot.record.random_plies = slot.random_plies;
        slot.plan_search(self.cfg);
        slot
    }

    /// Searches every game until it needs the network (its leaf joins the batch), its search
    /// is complete, or it runs into a leaf already waiting. Cached positions are completed at
    /// once.
    fn collect_leaves(&mut self) {
        let b = &mut self.batch;
        b.leaves.clear();
        b.positions.clear();
        b.owners.clear();
        for (si, s) in self.slots.iter_mut().enumerate() {
            while s.tree.root_visits() < s.sims {
                s.noise_root();
                match s.tree.select() {
                    Selection::Leaf(l) => {
                        self.stats.leaves += 1;
                        if let Some((p, v)) = self.cache.get(l.pos.key()) {
                            self.stats.cache_hits += 1;
                            s.tree.complete(&l, p, *v);
                            continue;
                        }
                        b.positions.push(l.pos.clone());
                        b.leaves.push(l);
                        b.owners.push(si);
                        break;
                    }
                    Selection::Terminal => continue,
                    Selection::Collision => break,
                }
            }
        }
    }

    /// Evaluates the batch in one call and hands each game its leaf's answer.
    fn evaluate_batch(&mut self) -> Result<()> {
        let a = G::NUM_ACTIONS;
        let b = &mut self.batch;
        if b.positions.is_empty() {
            return Ok(());
        }
        self.eval
            .evaluate(&b.positions, &mut b.policies, &mut b.values)?;
        self.stats.nn_evals += b.positions.len() as u64;
        self.stats.batches += 1;
        for (i, l) in b.leaves.iter().enumerate() {
            let p = &b.policies[i * a..(i + 1) * a];
            self.cache.insert(l.pos.key(), p, b.values[i]);
            let s = &mut self.slots[b.owners[i]];
            s.tree.complete(l, p, b.values[i]);
            s.noise_root();
        }
        Ok(())
    }

    /// Plays the searched move of a game whose search is complete; returns the finished
    /// record if that move ended the game.
    fn play_move(&mut self, i: usize) -> Result<Option<GameRecord>> {
        let s = &mut self.slots[i];
        let ply = s.tree.root_pos().ply() as u32;
        let temperature = if ply < self.cfg.selfplay.temperature_plies {
            1.0
        } else {
            0.0
        };
        let m = if ply < s.random_plies {
            // The search still ran: its policy is this position's target all the same.
            let moves = s.tree.root_pos().legal_moves();
            moves[s.rng.random_range(0..moves.len())]
        } else {
            let searched = s.tree.pick_move(temperature, &mut s.rng)?;
            if s.fork_ply == Some(ply) {
                // The positions up to here would learn the result of a game that left the line.
                s.record.trains_from = ply + 1;
                let policy = match self.cfg.selfplay.fork_move {
                    ForkMove::Uniform => Vec::new(),
                    ForkMove::Policy | ForkMove::Mixed(_) => s.tree.policy(),
                };
                fork_move(
                    s.tree.root_pos(),
                    searched,
                    self.cfg.selfplay.fork_move,
                    &policy,
                    &mut s.rng,
                )
            } else {
                searched
            }
        };
        s.record.moves.push(m);
        if s.full {
            s.record.policies.extend(s.tree.policy());
        } else {
            // No policy target: training learns only the value from this position.
            s.record
                .policies
                .extend(std::iter::repeat_n(0.0, G::NUM_ACTIONS));
        }
        s.record.root_values.push(s.tree.root_value());
        self.stats.positions += 1;
        s.tree.advance(m);
        s.plan_search(self.cfg);
        Ok(s.tree.root_pos().outcome().map(|outcome| {
            s.record.outcome = outcome.value_for(Player::First) as i8;
            std::mem::take(&mut s.record)
        }))
    }

    /// Moves in every game whose search is complete; a finished game is sent to `done` and
    /// its slot takes the next game, or goes away when there is none.
    fn advance_games(
        &mut self,
        next_game: &(dyn Fn() -> Option<u64> + Sync),
        done: &Sender<(u64, GameRecord)>,
    ) -> Result<()> {
        let mut i = 0;
        while i < self.slots.len() {
            if self.slots[i].tree.root_visits() < self.slots[i].sims {
                i += 1;
                continue;
            }
            let Some(finished) = self.play_move(i)? else {
                i += 1;
                continue;
            };
            done.send((self.slots[i].index, finished))
                .map_err(|_| anyhow!("self-play results were no longer collected"))?;
            match next_game() {
                Some(n) => {
                    self.slots[i] = self.new_slot(n);
                    i += 1;
                }
                None => {
                    self.slots.swap_remove(i);
                }
            }
        }
        Ok(())
    }
}

/// Plays games in lockstep until `next_game` has none left, sending finished records to `done`.
pub fn run_worker<G: Game, E: LeafEvaluator<G>>(
    cfg: &RunConfig,
    iteration: u32,
    eval: &mut E,
    next_game: &(dyn Fn() -> Option<u64> + Sync),
    done: &Sender<(u64, GameRecord)>,
) -> Result<SelfPlayStats> {
    let mut w = Worker {
        cfg,
        iteration,
        eval,
        cache: EvalCache {
            map: HashMap::new(),
        },
        slots: Vec::new(),
        batch: Batch {
            leaves: Vec::new(),
            positions: Vec::new(),
            owners: Vec::new(),
            policies: vec![0.0; cfg.selfplay.parallel_games * G::NUM_ACTIONS],
            values: vec![0.0; cfg.selfplay.parallel_games],
        },
        stats: SelfPlayStats::default(),
    };
    while w.slots.len() < cfg.selfplay.parallel_games {
        match next_game() {
            Some(i) => {
                let slot = w.new_slot(i);
                w.slots.push(slot);
            }
            None => break,
        }
    }
    while !w.slots.is_empty() {
        w.collect_leaves();
        w.evaluate_batch()?;
        w.advance_games(next_game, done)?;
    }
    Ok(w.stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::GameKind;

    #[test]
    fn a_share_of_the_games_forks_at_plies_spread_below_the_limit() {
        let mut cfg = RunConfig::preset("tiny", GameKind::Connect4, false).unwrap();
        let forks = |cfg: &RunConfig| -> Vec<u32> {
            (0..10_000)
                .filter_map(|i| fork_ply(cfg, game_seed(3, 1, i)))
                .collect()
        };
        // Off by default, and without plies to fork at.
        assert!(forks(&cfg).is_empty());
        cfg.selfplay.fork_share = 0.25;
        assert!(forks(&cfg).is_empty());
        cfg.selfplay.fork_plies = 10;
        let plies = forks(&cfg);
        assert!((2_300..2_700).contains(&plies.len()), "{}", plies.len());
        let mut per_ply = [0; 10];
        plies.iter().for_each(|&p| per_ply[p as usize] += 1);
        assert!(
            per_ply.iter().all(|&n| (180..330).contains(&n)),
            "{per_ply:?}"
        );
        cfg.selfplay.fork_share = 1.0;
        assert_eq!(forks(&cfg).len(), 10_000);
    }

    #[test]
    fn a_playout_cap_cheapens_a_share_of_the_moves_and_noises_only_the_full_ones() {
        use crate::alphazero::config::PlayoutCap;
        use crate::games::connect4::Connect4;
        let mut cfg = RunConfig::preset("tiny", GameKind::Connect4, false).unwrap();
        cfg.research.playout_cap = Some(PlayoutCap {
            full_fraction: 0.5,
            fast_sims: 3,
        });
        let mut slot = Slot {
            index: 0,
            tree: Tree::new(Connect4::new(), cfg.mcts),
            rng: rng_from_seed(1),
            record: GameRecord::default(),
            sims: 0,
            full: false,
            random_plies: 0,
            fork_ply: None,
        };
        let plans: Vec<(u32, bool)> = (0..40)
            .map(|_| {
                slot.plan_search(&cfg);
                (slot.sims, slot.full)
            })
            .collect();
        for &(sims, full) in &plans {
            assert_eq!(sims, if full { cfg.selfplay.sims } else { 3 });
        }
        let full = plans.iter().filter(|p| p.1).count();
        assert!((10..30).contains(&full), "{full} of 40 full");
        // Without a cap every search is full.
        cfg.research.playout_cap = None;
        slot.plan_search(&cfg);
        assert_eq!((slot.sims, slot.full), (cfg.selfplay.sims, true));
    }

    #[test]
    fn a_fork_plays_another_legal_move_than_the_searched_one() {
        use crate::games::connect4::Connect4;
        let mut rng = rng_from_seed(5);
        let mut pos = Connect4::new();
        let uniform =
            |pos: &Connect4, rng: &mut Rng64| fork_move(pos, 3, ForkMove::Uniform, &[], rng);
        let played: std::collections::HashSet<u8> =
            (0..200).map(|_| uniform(&pos, &mut rng)).collect();
        assert_eq!(played, [0, 1, 2, 4, 5, 6].into());
        // Column 0 full: neither it nor the searched move is played.
        for _ in 0..6 {
            pos.play(0);
        }
        assert!((0..100).all(|_| ![0, 3].contains(&uniform(&pos, &mut rng))));
    }

    #[test]
    fn a_policy_fork_plays_the_other_moves_in_proportion_to_the_policy() {
        use crate::games::connect4::Connect4;
        let mut rng = rng_from_seed(9);
        let pos = Connect4::new();
        // The searched move 3 has most of the policy; of the rest 2 has three times 4's weight.
        let policy = [0.0, 0.0, 0.15, 0.8, 0.05, 0.0, 0.0];
        let mut counts = [0u32; 7];
        for _ in 0..4000 {
            counts[fork_move(&pos, 3, ForkMove::Policy, &policy, &mut rng) as usize] += 1;
        }
        assert_eq!(counts[0] + counts[1] + counts[3] + counts[5] + counts[6], 0);
        assert!((2850..3150).contains(&counts[2]), "{counts:?}");
        assert_eq!(counts[2] + counts[4], 4000);
        // No weight off the searched move: uniformly among the others, as without a policy.
        let only_searched = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
        let played: std::collections::HashSet<u8> = (0..200)
            .map(|_| fork_move(&pos, 3, ForkMove::Policy, &only_searched, &mut rng))
            .collect();
        assert_eq!(played, [0, 1, 2, 4, 5, 6].into());
        // Mixed: a quarter of the forks uniform (1/24 to each of the six others), the rest by
        // the policy: 2 gets 3/4 x 3/4 + 1/24 of them, 0 only its uniform 1/24.
        let mut counts = [0u32; 7];
        for _ in 0..12_000 {
            counts[fork_move(&pos, 3, ForkMove::Mixed(0.25), &policy, &mut rng) as usize] += 1;
        }
        assert_eq!(counts[3], 0);
        let expected_2 = 12_000.0 * (0.75 * 0.75 + 0.25 / 6.0);
        assert!((counts[2] as f64 - expected_2).abs() < 300.0, "{counts:?}");
        assert!((350..650).contains(&counts[0]), "{counts:?}");
    }
}
