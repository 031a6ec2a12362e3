//! Training positions from self-play records: the replay window's games, each trained ply's
//! input with its policy target (the search's), value target (the game's result mixed with
//! the search's root value, or bootstrapped from later searches) and the auxiliary heads'
//! targets, weighted by policy surprise or averaged over duplicates when the run asks.

use std::path::Path;

use anyhow::{bail, Result};
use rand::Rng;

use super::config::RunConfig;
use super::policy_surprise::{relative_surprises, weigh_by_surprise};
use super::position_averaging::average_duplicates;
use super::records::{read_iteration, GameRecord};
use super::value_bootstrap::{bootstrapped_returns, GamePlies, ValueBootstrap};
use crate::games::Game;

/// Training positions: inputs, policy targets and value targets, flat.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    pub inputs: Vec<f32>,
    pub policies: Vec<f32>,
    pub values: Vec<f32>,
    /// Final-board targets, one plane a position ([`Game::occupancy`] of the game's last
    /// position from the mover's view); empty when not asked for.
    pub boards: Vec<f32>,
    /// Opponent-policy targets, `actions` a position: the next position's policy target
    /// (all zero after a game's last move, or where that position has none); empty when not
    /// asked for.
    pub opponent_policies: Vec<f32>,
    /// Running sums of the positions' weights when they are drawn unevenly (averaged
    /// duplicates, [`super::position_averaging`]; policy surprise,
    /// [`super::policy_surprise`]); empty: every position is equally likely.
    pub cumulative_weights: Vec<f64>,
    /// Each position's policy surprise over its game's mean
    /// ([`super::policy_surprise::relative_surprises`]); empty: 1 each.
    pub surprises: Vec<f32>,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.values.len()
    }
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
    /// Each position's drawing weight (1 each when the positions have none).
    pub fn weights(&self) -> Vec<f64> {
        if self.cumulative_weights.is_empty() {
            return vec![1.0; self.len()];
        }
        let mut before = 0.0;
        let diff = |c: &f64| {
            let w = c - before;
            before = *c;
            w
        };
        self.cumulative_weights.iter().map(diff).collect()
    }
    /// A position drawn at random, by weight when the positions have weights. Not empty.
    pub(super) fn draw(&self, rng: &mut impl Rng) -> usize {
        match self.cumulative_weights.last() {
            None => rng.random_range(0..self.len()),
            Some(&total) => {
                let x = rng.random::<f64>() * total;
                let i = self.cumulative_weights.partition_point(|&c| c <= x);
                i.min(self.len() - 1)
            }
        }
    }
}

/// What a training position's value target is.
#[derive(Clone, Copy, Debug)]
pub struct ValueTarget {
    /// Weight of the search's root value; the rest is the game's result.
    pub mix: f32,
    /// The root value alone before a game's last random opening ply
    /// ([`super::config::RunConfig::random_opening_search_value`]).
    pub search_in_random_opening: bool,
    /// A forked game's plies before its `trains_from` train, with the root value alone
    /// ([`super::config::RunConfig::fork_line_search_value`]); without it they are skipped.
    pub search_before_fork: bool,
    /// What replaces the game's result in the target ([`ValueBootstrap`]); none: the result.
    pub bootstrap: Option<ValueBootstrap>,
    /// The result's weight falls by this factor a ply before the game's end
    /// ([`super::config::RunConfig::value_discount`]); 1: the result whole at every ply.
    pub discount: f32,
}

impl ValueTarget {
    /// `mix` of root value and the game's result at every ply, nothing else.
    pub fn mixed(mix: f32) -> ValueTarget {
        ValueTarget {
            mix,
            search_in_random_opening: false,
            search_before_fork: false,
            bootstrap: None,
            discount: 1.0,
        }
    }
}

/// The targets of training-only heads that positions get besides their policy and value.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeadTargets {
    /// The game's final board as seen by the position's mover.
    pub boards: bool,
    /// The next position's policy target.
    pub opponent_policies: bool,
}

impl HeadTargets {
    /// The targets `arch`'s heads train on.
    pub fn of(arch: &crate::nn::Arch) -> HeadTargets {
        HeadTargets {
            boards: arch.has_board_head(),
            opponent_policies: arch.has_opponent_policy_head(),
        }
    }
}

/// [`samples_with`] the value target `mix` of root value and result everywhere, final-board
/// targets when `boards` says, opponent-policy targets always.
pub fn samples_from<G: Game>(records: &[GameRecord], mix: f32, boards: bool) -> Samples {
    let target = ValueTarget::mixed(mix);
    let heads = HeadTargets {
        boards,
        opponent_policies: true,
    };
    samples_with::<G>(records, target, heads)
}

/// Replays records into training positions, each with its [`value_targets`] and the `heads`'
/// targets asked for. A record's plies before its `trains_from` are replayed, not trained on,
/// unless `target.search_before_fork` says.
/// Each position's surprise is taken relative to its game's ([`relative_surprises`]).
pub fn samples_with<G: Game>(
    records: &[GameRecord],
    target: ValueTarget,
    heads: HeadTargets,
) -> Samples {
    let (isz, a, cells) = (G::input_size(), G::NUM_ACTIONS, G::cells());
    let mut s = Samples::default();
    for r in records {
        // A damaged record's end is the position before its first illegal move, where the
        // replay below stops too.
        let end = heads.boards.then(|| replay_legal::<G>(&r.moves).0);
        let values = value_targets(r, target, a);
        let mut pos = G::new();
        let mut trained = Vec::new();
        for (ply, &m) in r.moves.iter().enumerate() {
            if !pos.is_legal(m) {
                break;
            }
            if (ply as u32) < r.trains_from && !target.search_before_fork {
                pos.play(m);
                continue;
            }
            trained.push(ply);
            let at = s.inputs.len();
            s.inputs.resize(at + isz, 0.0);
            pos.encode(&mut s.inputs[at..]);
            s.policies
                .extend_from_slice(&r.policies[ply * a..(ply + 1) * a]);
            if heads.opponent_policies {
                match r.policies.get((ply + 1) * a..(ply + 2) * a) {
                    Some(reply) if ply + 1 < r.moves.len() => {
                        s.opponent_policies.extend_from_slice(reply)
                    }
                    _ => s.opponent_policies.extend(std::iter::repeat_n(0.0, a)),
                }
            }
            s.values.push(values[ply]);
            if let Some(end) = &end {
                let at = s.boards.len();
                s.boards.resize(at + cells, 0.0);
                end.occupancy(pos.to_move(), &mut s.boards[at..]);
            }
            pos.play(m);
        }
        let has_target: Vec<bool> = trained
            .iter()
            .map(|&ply| r.policies[ply * a..(ply + 1) * a].iter().any(|&p| p > 0.0))
            .collect();
        let surprises: Vec<f32> = match r.surprises.len() == r.moves.len() {
            true => trained.iter().map(|&ply| r.surprises[ply]).collect(),
            false => Vec::new(),
        };
        s.surprises
            .extend(relative_surprises(&surprises, &has_target));
    }
    s
}

/// Each ply's value target for its mover: the game's result (or its bootstrapped return,
/// `target.bootstrap`) mixed with the search's root value, `target.mix` of the latter; before
/// a game's last random opening ply, and before a forked game's `trains_from`, it can be the
/// root value alone, since the result is then that of a game that went on at random or left
/// the line. Movers alternate from the first player at ply 0 in
/// every game (a pass is a move: tests/conformance.rs).
pub fn value_targets(r: &GameRecord, target: ValueTarget, num_actions: usize) -> Vec<f32> {
    let results = discounted(ply_results(r), target.discount);
    let returns = match target.bootstrap {
        None => results.clone(),
        Some(how) => {
            let plies = GamePlies {
                moves: &r.moves,
                policies: &r.policies,
                num_actions,
                root_values: &r.root_values,
                results: &results,
            };
            bootstrapped_returns(&plies, how)
        }
    };
    let target_at = |ply: usize| {
        let q = r.root_values.get(ply).copied().unwrap_or(results[ply]);
        let random_after = (ply as u32) < r.random_plies;
        let forked_after = (ply as u32) < r.trains_from;
        let search_alone = (target.search_in_random_opening && random_after)
            || (target.search_before_fork && forked_after);
        let mix = if search_alone { 1.0 } else { target.mix };
        (1.0 - mix) * returns[ply] + mix * q
    };
    (0..r.moves.len()).map(target_at).collect()
}

/// Each ply's result times `discount` to the power of the plies after it: the last ply's
/// whole, a ply `k` before it `discount^k` of it. A draw stays 0 and a win or loss keeps its
/// sign, so the discount orders only results of one kind: a quicker win above a slower one,
/// a slower loss above a quicker one.
fn discounted(mut results: Vec<f32>, discount: f32) -> Vec<f32> {
    if discount < 1.0 {
        let mut weight = 1.0;
        for r in results.iter_mut().rev() {
            *r *= weight;
            weight *= discount;
        }
    }
    results
}

/// The game's result for each ply's mover.
pub fn ply_results(r: &GameRecord) -> Vec<f32> {
    let first = r.outcome as f32;
    let at = |ply: usize| match ply % 2 {
        0 => first,
        _ => -first,
    };
    (0..r.moves.len()).map(at).collect()
}

/// The position after the moves of `moves` that come before the first illegal one, and
/// whether there was none (a damaged record has one).
pub fn replay_legal<G: Game>(moves: &[u8]) -> (G, bool) {
    let mut pos = G::new();
    for &m in moves {
        if !pos.is_legal(m) {
            return (pos, false);
        }
        pos.play(m);
    }
    (pos, true)
}

/// The self-play games of a replay window, oldest first.
pub struct WindowRecords {
    pub records: Vec<GameRecord>,
    /// How many of them come from iterations before the window's last.
    pub older: usize,
}

/// Reads the games of the replay window ending at `iteration`.
pub fn window_records<G: Game>(
    cfg: &RunConfig,
    data_dir: &Path,
    iteration: u32,
) -> Result<WindowRecords> {
    let first = iteration.saturating_sub(cfg.window.max(1) - 1).max(1);
    let mut records = Vec::new();
    let mut older = 0;
    for i in first..=iteration {
        if i == iteration {
            older = records.len();
        }
        records.extend(read_iteration(data_dir, G::NAME, G::NUM_ACTIONS, i)?);
    }
    if records.is_empty() {
        bail!(
            "no self-play games in {} for iterations {first}..={iteration}",
            data_dir.display()
        );
    }
    Ok(WindowRecords { records, older })
}

/// The value target of the run's settings.
pub fn value_target(cfg: &RunConfig) -> ValueTarget {
    ValueTarget {
        mix: cfg.value_target_mix,
        search_in_random_opening: cfg.random_opening_search_value,
        search_before_fork: cfg.fork_line_search_value,
        bootstrap: cfg.value_bootstrap,
        discount: cfg.value_discount.unwrap_or(1.0),
    }
}

/// The training positions of a window's games, averaged and weighed as the run says.
pub fn window_samples<G: Game>(cfg: &RunConfig, records: &[GameRecord]) -> Samples {
    let samples = samples_with::<G>(records, value_target(cfg), HeadTargets::of(&cfg.arch));
    let mut samples = if cfg.position_averaging {
        average_duplicates(&samples, G::input_size(), G::NUM_ACTIONS, G::cells())
    } else {
        samples
    };
    weigh_by_surprise(&mut samples, cfg.policy_surprise_share);
    samples
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::core::rng::rng_from_seed;
    use crate::games::tictactoe::TicTacToe;

    /// A record of `moves` with a one-hot policy on each move played.
    pub(in crate::alphazero) fn record(
        moves: &[u8],
        outcome: i8,
        root_values: &[f32],
    ) -> GameRecord {
        let a = TicTacToe::NUM_ACTIONS;
        let mut policies = vec![0.0; moves.len() * a];
        for (ply, &m) in moves.iter().enumerate() {
            policies[ply * a + m as usize] = 1.0;
        }
        GameRecord {
            moves: moves.to_vec(),
            policies,
            root_values: root_values.to_vec(),
            outcome,
            trains_from: 0,
            surprises: Vec::new(),
            random_plies: 0,
        }
    }

    #[test]
    fn samples_take_the_movers_view_and_mix_in_the_root_value() {
        // X takes the top row: the first player wins.
        let x_wins = record(&[0, 3, 1, 4, 2], 1, &[0.5, -0.2, 0.1, 0.3, 0.9]);
        // O takes the middle row; no root values were kept for the last two plies.
        let o_wins = record(&[0, 3, 1, 4, 8, 5], -1, &[0.0, 0.4, -0.6, 0.2]);
        let records = [x_wins, o_wins];

        let s = samples_from::<TicTacToe>(&records, 0.0, false);
        assert_eq!(s.len(), 11);
        assert_eq!(
            s.values,
            [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0]
        );
        let s = samples_from::<TicTacToe>(&records, 0.25, false);
        let mixed = |z: f32, q: f32| 0.75 * z + 0.25 * q;
        let expected = [
            mixed(1.0, 0.5),
            mixed(-1.0, -0.2),
            mixed(1.0, 0.1),
            mixed(-1.0, 0.3),
            mixed(1.0, 0.9),
            mixed(-1.0, 0.0),
            mixed(1.0, 0.4),
            mixed(-1.0, -0.6),
            mixed(1.0, 0.2),
            // No root value: the result alone.
            -1.0,
            1.0,
        ];
        assert_eq!(s.values, expected);

        // Inputs are the positions before each move; policies are the search's, ply by ply.
        let (isz, a) = (TicTacToe::input_size(), TicTacToe::NUM_ACTIONS);
        let mut pos = TicTacToe::new();
        let mut encoded = vec![0.0; isz];
        for (i, &m) in records[0].moves.iter().enumerate() {
            pos.encode(&mut encoded);
            assert_eq!(&s.inputs[i * isz..(i + 1) * isz], &encoded[..]);
            assert_eq!(s.policies[i * a + m as usize], 1.0);
            pos.play(m);
        }

        // A record stops at its first illegal move.
        let broken = record(&[4, 4, 0], 0, &[]);
        assert_eq!(samples_from::<TicTacToe>(&[broken], 0.5, false).len(), 1);
    }

    #[test]
    fn positions_before_the_last_random_ply_can_learn_the_root_value_alone() {
        // X takes the top row after two random plies.
        let x_wins = GameRecord {
            random_plies: 2,
            ..record(&[0, 3, 1, 4, 2], 1, &[0.5, -0.2, 0.1, 0.3, 0.9])
        };
        let mixed = |z: f32, q: f32| 0.75 * z + 0.25 * q;
        let everywhere = [
            mixed(1.0, 0.5),
            mixed(-1.0, -0.2),
            mixed(1.0, 0.1),
            mixed(-1.0, 0.3),
            mixed(1.0, 0.9),
        ];
        let records = std::slice::from_ref(&x_wins);
        // Off: the record's random plies change nothing.
        let s = samples_from::<TicTacToe>(records, 0.25, false);
        assert_eq!(s.values, everywhere);
        let target = ValueTarget {
            search_in_random_opening: true,
            ..ValueTarget::mixed(0.25)
        };
        let s = samples_with::<TicTacToe>(records, target, HeadTargets::default());
        assert_eq!(s.values[..2], [0.5, -0.2]);
        assert_eq!(s.values[2..], everywhere[2..]);
        // Policies are trained from every ply all the same.
        assert_eq!(
            s.policies,
            samples_from::<TicTacToe>(records, 0.0, false).policies
        );
    }

    #[test]
    fn a_forked_games_line_trains_on_the_root_value_alone_when_asked() {
        // X takes the top row; the game forked at ply 1 (O's random move), so it trains from 2.
        let forked = GameRecord {
            trains_from: 2,
            ..record(&[0, 3, 1, 4, 2], 1, &[0.5, -0.2, 0.1, 0.3, 0.9])
        };
        let (a, isz) = (TicTacToe::NUM_ACTIONS, TicTacToe::input_size());
        let records = std::slice::from_ref(&forked);
        let mixed = |z: f32, q: f32| 0.75 * z + 0.25 * q;
        // Off: plies 0 and 1 are replayed, not trained.
        let off = samples_from::<TicTacToe>(records, 0.25, false);
        assert_eq!(
            off.values,
            [mixed(1.0, 0.1), mixed(-1.0, 0.3), mixed(1.0, 0.9)]
        );
        let target = ValueTarget {
            search_before_fork: true,
            ..ValueTarget::mixed(0.25)
        };
        let on = samples_with::<TicTacToe>(records, target, HeadTargets::default());
        // Plies 0 and 1 train too, their value the root value alone; the rest as before.
        assert_eq!(on.len(), 5);
        assert_eq!(on.values[..2], [0.5, -0.2]);
        assert_eq!(on.values[2..], off.values[..]);
        // Their policy targets are their searches', their inputs the positions replayed.
        assert_eq!(on.policies[..2 * a], forked.policies[..2 * a]);
        assert_eq!(on.policies[2 * a..], off.policies[..]);
        assert_eq!(on.inputs[2 * isz..], off.inputs[..]);
    }

    #[test]
    fn a_discounted_result_shrinks_with_the_plies_to_the_end_and_keeps_its_sign() {
        // X takes the top row at ply 4: the last ply's result whole, each ply before it
        // halved once more; the root value's share as without the discount.
        let x_wins = record(&[0, 3, 1, 4, 2], 1, &[0.5, -0.2, 0.1, 0.3, 0.9]);
        let mixed = |z: f32, q: f32| 0.75 * z + 0.25 * q;
        let target = ValueTarget {
            discount: 0.5,
            ..ValueTarget::mixed(0.25)
        };
        let records = std::slice::from_ref(&x_wins);
        let s = samples_with::<TicTacToe>(records, target, HeadTargets::default());
        let expected = [
            mixed(0.0625, 0.5),
            mixed(-0.125, -0.2),
            mixed(0.25, 0.1),
            mixed(-0.5, 0.3),
            mixed(1.0, 0.9),
        ];
        assert_eq!(s.values, expected);
        // A discount of 1 is no discount; a draw's targets are its root values' share alone.
        let whole = ValueTarget {
            discount: 1.0,
            ..ValueTarget::mixed(0.25)
        };
        assert_eq!(
            samples_with::<TicTacToe>(records, whole, HeadTargets::default()).values,
            samples_from::<TicTacToe>(records, 0.25, false).values
        );
        let drawn = record(&[0, 3, 1, 4, 2], 0, &[0.4; 5]);
        let s = samples_with::<TicTacToe>(&[drawn], target, HeadTargets::default());
        assert_eq!(s.values, [0.25 * 0.4; 5]);
    }

    #[test]
    fn a_greedy_backup_takes_the_root_value_where_a_move_was_not_the_best() {
        // X takes the top row; O's first move (ply 1) was not its search's best.
        let mut x_wins = record(&[0, 3, 1, 4, 2], 1, &[0.5, -0.2, 0.1, 0.3, 0.9]);
        let a = TicTacToe::NUM_ACTIONS;
        x_wins.policies[a + 3] = 0.4;
        x_wins.policies[a + 8] = 0.6;
        let records = std::slice::from_ref(&x_wins);
        let target = ValueTarget {
            bootstrap: Some(ValueBootstrap::Greedy),
            ..ValueTarget::mixed(0.0)
        };
        // Plies 2-4 played their best to the end: the result. Ply 1: its root value; ply 0,
        // whose move was its best: ply 1's, from X's view.
        let s = samples_with::<TicTacToe>(records, target, HeadTargets::default());
        assert_eq!(s.values, [0.2, -0.2, 1.0, -1.0, 1.0]);
        // Mixed with each position's own root value as the result is.
        let target = ValueTarget { mix: 0.5, ..target };
        let s = samples_with::<TicTacToe>(records, target, HeadTargets::default());
        let expected = [0.35, -0.2, 0.55, -0.35, 0.95];
        let close = s
            .values
            .iter()
            .zip(expected)
            .all(|(v, e)| (v - e).abs() < 1e-6);
        assert!(close, "{:?}", s.values);
    }

    #[test]
    fn surprises_are_relative_to_their_games_trained_plies_and_weigh_the_draws() {
        // A forked game training from ply 2 (surprises 4 and 2 there, mean 3), a game whose
        // third ply had a cheap search (no policy target), and one from before surprises.
        let forked = GameRecord {
            trains_from: 2,
            surprises: vec![9.0, 9.0, 4.0, 2.0],
            ..record(&[0, 3, 1, 4], 0, &[])
        };
        let mut capped = GameRecord {
            surprises: vec![1.0, 3.0, 0.0],
            ..record(&[0, 3, 1], 0, &[])
        };
        capped.policies[2 * TicTacToe::NUM_ACTIONS + 1] = 0.0;
        let old = record(&[4, 0], 0, &[]);
        let mut s = samples_from::<TicTacToe>(&[forked, capped, old], 0.0, false);
        let third = 1.0 / 3.0;
        let expected = [4.0 * third, 2.0 * third, 0.5, 1.5, 1.0, 1.0, 1.0];
        assert_eq!(s.surprises.len(), expected.len());
        for (got, want) in s.surprises.iter().zip(expected) {
            assert!((got - want).abs() < 1e-6, "{:?}", s.surprises);
        }
        // Half of each game's weight by surprise: drawn in proportion to 0.5 + 0.5 * s.
        weigh_by_surprise(&mut s, 0.5);
        let draws = 70_000;
        let mut counts = [0usize; 7];
        let mut rng = rng_from_seed(3);
        (0..draws).for_each(|_| counts[s.draw(&mut rng)] += 1);
        let total: f64 = expected.iter().map(|&x| 0.5 + 0.5 * f64::from(x)).sum();
        for (&n, &x) in counts.iter().zip(&expected) {
            let want = (0.5 + 0.5 * f64::from(x)) / total;
            let got = n as f64 / draws as f64;
            assert!((got - want).abs() < 0.01, "{counts:?}");
        }
    }

    #[test]
    fn final_board_targets_are_the_last_position_from_each_movers_view() {
        // X takes the top row (cells 0 1 2), O holds 3 and 4.
        let x_wins = record(&[0, 3, 1, 4, 2], 1, &[]);
        let s = samples_from::<TicTacToe>(std::slice::from_ref(&x_wins), 0.0, true);
        let x_view = [1.0, 1.0, 1.0, -1.0, -1.0, 0.0, 0.0, 0.0, 0.0];
        let o_view = x_view.map(|v: f32| -v);
        let cells = TicTacToe::cells();
        assert_eq!(s.boards.len(), 5 * cells);
        for ply in 0..5 {
            let expected = if ply % 2 == 0 { x_view } else { o_view };
            assert_eq!(
                &s.boards[ply * cells..(ply + 1) * cells],
                &expected[..],
                "ply {ply}"
            );
        }
        // Not asked for: none.
        assert!(samples_from::<TicTacToe>(&[x_wins], 0.0, false)
            .boards
            .is_empty());
        // A damaged record's target is the position before its first illegal move.
        let broken = record(&[4, 0, 4], 0, &[]);
        let s = samples_from::<TicTacToe>(&[broken], 0.0, true);
        let mut after_two = vec![0.0; cells];
        after_two[4] = 1.0;
        after_two[0] = -1.0;
        assert_eq!(&s.boards[..cells], &after_two[..]);
    }

    #[test]
    fn an_opponent_policy_target_is_the_next_positions_policy_target() {
        let x_wins = record(&[0, 3, 1, 4, 2], 1, &[]);
        let s = samples_from::<TicTacToe>(std::slice::from_ref(&x_wins), 0.0, false);
        let a = TicTacToe::NUM_ACTIONS;
        assert_eq!(s.opponent_policies.len(), 5 * a);
        for ply in 0..4 {
            let next = &x_wins.policies[(ply + 1) * a..(ply + 2) * a];
            assert_eq!(
                &s.opponent_policies[ply * a..(ply + 1) * a],
                next,
                "ply {ply}"
            );
        }
        // After the last move nobody replies.
        assert!(s.opponent_policies[4 * a..].iter().all(|&p| p == 0.0));
    }

    #[test]
    fn positions_are_drawn_by_weight_when_they_have_weights() {
        let mut s = Samples {
            values: vec![0.0; 3],
            ..Samples::default()
        };
        let counts = |s: &Samples| {
            let mut rng = rng_from_seed(7);
            let mut counts = [0u32; 3];
            for _ in 0..30_000 {
                counts[s.draw(&mut rng)] += 1;
            }
            counts
        };
        // Evenly without weights; weights 1, 0, 2: never the second, the third twice as often.
        assert!(counts(&s).iter().all(|&c| (9_000..11_000).contains(&c)));
        s.cumulative_weights = vec![1.0, 1.0, 3.0];
        let [first, second, third] = counts(&s);
        assert_eq!(second, 0);
        assert!((9_000..11_000).contains(&first), "{first}");
        assert!((19_000..21_000).contains(&third), "{third}");
    }
}
