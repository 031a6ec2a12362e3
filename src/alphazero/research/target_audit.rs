//! How right a run's value targets are: training positions drawn from an iteration's
//! self-play games, each with its game's result, its search's root value and the value target
//! training gives it ([`value_targets`]), set beside the position's exact value, by how many
//! plies were played. A diagnostic (`zero targets`): the exact values come from a solver that
//! only grades here, never a training target.
//!
//! A value is read as a win above 1/3, a loss below -1/3 and a draw between. A game's result
//! is right or wrong for each position; what the network learns is its average over many
//! games, so a share of wrong results says how noisy a target is, and the network's own value
//! on the same positions (when a network is given) says what it made of them.

use std::collections::{HashMap, HashSet};

use anyhow::Result;
use rand::seq::SliceRandom;
use serde::Serialize;

use crate::alphazero::selfplay::records::GameRecord;
use crate::alphazero::training::samples::{ply_results, replay_legal, value_targets};
use crate::arena::for_each_item;
use crate::core::progress;
use crate::core::rng::rng_from_seed;
use crate::games::Game;

/// The groups of positions, by plies played (first, last).
pub const PLY_GROUPS: [(u32, u32); 5] = [(0, 3), (4, 6), (7, 10), (11, 16), (17, u32::MAX)];

/// A training position and the values that training and the search gave it, for its mover.
#[derive(Clone, Debug)]
pub struct AuditedPosition<G> {
    pub position: G,
    /// Index into [`PLY_GROUPS`].
    pub group: usize,
    pub result: f32,
    pub root_value: f32,
    pub target: f32,
}

/// How far some values are from the exact ones.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Disagreement {
    /// The share (0 to 1) read as another result than the exact one.
    pub wrong: f64,
    /// The mean squared distance from the exact value (1, 0 or -1).
    pub squared_error: f64,
}

/// One group's audit.
#[derive(Clone, Debug, Serialize)]
pub struct GroupAudit {
    /// Plies played, as `first-last` (`17+` for the last group).
    pub plies: String,
    pub positions: usize,
    /// How many of them are won, drawn and lost for their mover.
    pub exact_win_draw_loss: [usize; 3],
    pub result: Disagreement,
    pub root_value: Disagreement,
    /// The value target training gives the position.
    pub target: Disagreement,
    /// The network's value, when one was given.
    pub network: Option<Disagreement>,
}

/// Up to `per_group` distinct training positions of each group from `records`, drawn at random
/// by `seed` (a position that several games reached counts once, with the first drawn).
pub fn draw_positions<G: Game>(
    records: &[GameRecord],
    mix: f32,
    per_group: usize,
    seed: u64,
) -> Vec<AuditedPosition<G>> {
    let mut candidates: Vec<(usize, usize)> = records
        .iter()
        .enumerate()
        .flat_map(|(g, r)| (r.trains_from as usize..r.moves.len()).map(move |ply| (g, ply)))
        .collect();
    candidates.shuffle(&mut rng_from_seed(seed));
    let mut taken = [0usize; PLY_GROUPS.len()];
    let mut seen = HashSet::new();
    // Each record's results and value targets by ply, computed once for all the positions
    // drawn from it.
    let mut targets_of: HashMap<usize, (Vec<f32>, Vec<f32>)> = HashMap::new();
    let mut out = Vec::new();
    for (g, ply) in candidates {
        let Some(group) = group_of(ply as u32) else {
            continue;
        };
        if taken[group] >= per_group {
            continue;
        }
        let r = &records[g];
        // A damaged record (an illegal move before `ply`) has no position there.
        let (position, legal) = replay_legal::<G>(&r.moves[..ply]);
        if !legal || !seen.insert(position.key()) || position.outcome().is_some() {
            continue;
        }
        taken[group] += 1;
        let (results, targets) = targets_of
            .entry(g)
            .or_insert_with(|| (ply_results(r), value_targets(r, mix)));
        out.push(AuditedPosition {
            position,
            group,
            result: results[ply],
            root_value: r.root_values.get(ply).copied().unwrap_or(0.0),
            target: targets[ply],
        });
        if taken.iter().all(|&t| t >= per_group) {
            break;
        }
    }
    out
}

/// The group of a position `ply` plies in.
fn group_of(ply: u32) -> Option<usize> {
    PLY_GROUPS
        .iter()
        .position(|&(first, last)| (first..=last).contains(&ply))
}

/// The exact value of each position for its mover (1, 0 or -1), on `threads` threads with an
/// exact player each from `make`.
pub fn exact_values<G: Game, S>(
    positions: &[AuditedPosition<G>],
    threads: usize,
    show_progress: bool,
    make: impl Fn() -> Result<S> + Sync,
    exact: impl Fn(&mut S, &G) -> Result<i32> + Sync,
) -> Result<Vec<i32>> {
    let task = progress::task(positions.len() as u64, "positions", show_progress);
    for_each_item(positions.len(), threads, &task, make, |solver, i| {
        Ok(exact(solver, &positions[i].position)?.signum())
    })
}

/// Each group's audit; `network` holds the network's value of each position, if one was asked.
pub fn audit<G>(
    positions: &[AuditedPosition<G>],
    exact: &[i32],
    network: Option<&[f32]>,
) -> Vec<GroupAudit> {
    let mut out = Vec::new();
    for (group, &(first, last)) in PLY_GROUPS.iter().enumerate() {
        let members: Vec<usize> = (0..positions.len())
            .filter(|&i| positions[i].group == group)
            .collect();
        if members.is_empty() {
            continue;
        }
        let against = |value: &dyn Fn(usize) -> f32| {
            disagreement(members.iter().map(|&i| (value(i), exact[i])))
        };
        let count = |v: i32| members.iter().filter(|&&i| exact[i] == v).count();
        out.push(GroupAudit {
            plies: match last {
                u32::MAX => format!("{first}+"),
                _ => format!("{first}-{last}"),
            },
            positions: members.len(),
            exact_win_draw_loss: [count(1), count(0), count(-1)],
            result: against(&|i| positions[i].result),
            root_value: against(&|i| positions[i].root_value),
            target: against(&|i| positions[i].target),
            network: network.map(|values| against(&|i| values[i])),
        });
    }
    out
}

/// How far `(value, exact)` pairs are apart. Not empty.
fn disagreement(pairs: impl Iterator<Item = (f32, i32)>) -> Disagreement {
    let (mut n, mut wrong, mut squares) = (0usize, 0usize, 0.0f64);
    for (value, exact) in pairs {
        n += 1;
        wrong += usize::from(read_as_result(value) != exact);
        squares += (value as f64 - exact as f64).powi(2);
    }
    let n = n.max(1) as f64;
    Disagreement {
        wrong: wrong as f64 / n,
        squared_error: squares / n,
    }
}

/// A value read as a result: a win above 1/3, a loss below -1/3, a draw between.
fn read_as_result(value: f32) -> i32 {
    if value > 1.0 / 3.0 {
        1
    } else if value < -1.0 / 3.0 {
        -1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::TicTacToe;

    fn record(moves: &[u8], outcome: i8, root_values: Vec<f32>) -> GameRecord {
        GameRecord {
            moves: moves.to_vec(),
            policies: vec![0.0; moves.len() * TicTacToe::NUM_ACTIONS],
            root_values,
            outcome,
            trains_from: 0,
            random_plies: 0,
        }
    }

    #[test]
    fn draws_each_distinct_position_once_with_its_movers_values() {
        // X takes the top row: 0, 3, 1, 4, 2. Twice, so every position repeats.
        let game = record(&[0, 3, 1, 4, 2], 1, vec![0.1, -0.2, 0.3, -0.4, 0.5]);
        let records = vec![game.clone(), game];
        let drawn = draw_positions::<TicTacToe>(&records, 0.0, 10, 7);
        assert_eq!(drawn.len(), 5, "five distinct positions");
        let mut by_ply: Vec<_> = drawn.iter().map(|p| (p.position.ply(), p)).collect();
        by_ply.sort_by_key(|k| k.0);
        let results: Vec<f32> = by_ply.iter().map(|k| k.1.result).collect();
        assert_eq!(results, vec![1.0, -1.0, 1.0, -1.0, 1.0]);
        let roots: Vec<f32> = by_ply.iter().map(|k| k.1.root_value).collect();
        assert_eq!(roots, vec![0.1, -0.2, 0.3, -0.4, 0.5]);
        let groups: Vec<usize> = by_ply.iter().map(|k| k.1.group).collect();
        assert_eq!(groups, vec![0, 0, 0, 0, 1]);
    }

    #[test]
    fn a_group_takes_at_most_its_share() {
        let records = vec![record(&[0, 3, 1, 4, 2], 1, vec![0.0; 5])];
        let drawn = draw_positions::<TicTacToe>(&records, 0.0, 2, 0);
        assert_eq!(drawn.iter().filter(|p| p.group == 0).count(), 2);
        assert_eq!(drawn.iter().filter(|p| p.group == 1).count(), 1);
    }

    #[test]
    fn a_damaged_record_gives_only_the_positions_before_its_illegal_move() {
        // The fourth move replays cell 0, taken at the first: positions after it are skipped.
        let records = vec![record(&[0, 3, 1, 0, 2], 1, vec![0.0; 5])];
        let drawn = draw_positions::<TicTacToe>(&records, 0.0, 10, 3);
        let mut plies: Vec<usize> = drawn.iter().map(|p| p.position.ply()).collect();
        plies.sort_unstable();
        assert_eq!(plies, vec![0, 1, 2, 3]);
    }

    #[test]
    fn audit_counts_wrong_readings_and_squared_errors() {
        let records = vec![record(&[0, 3, 1, 4], 0, vec![0.9, 0.0, -0.2, 0.5])];
        let drawn = draw_positions::<TicTacToe>(&records, 0.0, 10, 0);
        // Say every position is won for its mover: the drawn result (0) is wrong everywhere;
        // the root values 0.9 and 0.5 read as wins.
        let exact = vec![1; drawn.len()];
        let network = vec![1.0; drawn.len()];
        let groups = audit(&drawn, &exact, Some(&network));
        assert_eq!(groups.len(), 1);
        let g = &groups[0];
        assert_eq!((g.plies.as_str(), g.positions), ("0-3", 4));
        assert_eq!(g.exact_win_draw_loss, [4, 0, 0]);
        assert_eq!(g.result.wrong, 1.0);
        assert_eq!(g.result.squared_error, 1.0);
        assert_eq!(g.root_value.wrong, 0.5);
        let squares = [0.1f64, 1.0, 1.2, 0.5].iter().map(|d| d * d).sum::<f64>() / 4.0;
        assert!((g.root_value.squared_error - squares).abs() < 1e-6);
        assert_eq!(g.network, Some(Disagreement::default()));
    }

    #[test]
    fn a_value_reads_as_a_result_by_thirds() {
        let read: Vec<i32> = [0.34, 0.33, -0.33, -0.34, 1.0, -1.0]
            .iter()
            .map(|&v| read_as_result(v))
            .collect();
        assert_eq!(read, vec![1, 0, 0, -1, 1, -1]);
    }
}
