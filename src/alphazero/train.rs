//! Training: a replay window over recent iterations, symmetry augmentation, loss = policy
//! cross-entropy + value MSE (+ the final-board MSE for a network with that head, + L2 through
//! weight decay), Adam with a cosine learning rate.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Result};
use rand::Rng;
use serde::Serialize;
use tch::{Kind, Reduction, TchError, Tensor};

use super::adam::{Adam, WeightDecay};
use super::config::RunConfig;
use super::policy_surprise::{relative_surprises, weigh_by_surprise};
use super::position_averaging::average_duplicates;
use super::reanalyse::Reanalysis;
use super::records::{read_iteration, GameRecord};
pub use super::train_checkpoint::Checkpointing;
use super::train_checkpoint::{
    carry_moments, load_checkpoint, maybe_checkpoint, save_checkpoint, InterruptGuard, Losses,
    Progress, TrainerState,
};
use super::value_bootstrap::{bootstrapped_returns, GamePlies, ValueBootstrap};
use super::weight_average::WeightAverage;
use crate::core::progress;
use crate::core::rng::{mix64, rng_from_seed};
use crate::games::{Game, Symmetry};
use crate::nn::Net;

/// Spreads step numbers over the seed space: 2^64 divided by the golden ratio, splitmix64's
/// increment.
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

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
    fn draw(&self, rng: &mut impl Rng) -> usize {
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
}

impl ValueTarget {
    /// `mix` of root value and the game's result at every ply, nothing else.
    pub fn mixed(mix: f32) -> ValueTarget {
        ValueTarget {
            mix,
            search_in_random_opening: false,
            search_before_fork: false,
            bootstrap: None,
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
    let results = ply_results(r);
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

#[derive(Clone, Debug, Default, Serialize)]
pub struct TrainStats {
    pub samples: usize,
    pub steps: u64,
    pub policy_loss: f64,
    pub value_loss: f64,
    /// The final-board loss (mean squared error a cell), for a network with that head.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board_loss: Option<f64>,
    /// The opponent-policy loss (cross-entropy), for a network with that head.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opponent_policy_loss: Option<f64>,
    /// The window's positions searched again before training ([`super::reanalyse`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reanalysis: Option<Reanalysis>,
    pub seconds: f64,
}

/// A mini-batch: inputs, policy targets, value targets, final-board and opponent-policy
/// targets (each empty for a network without that head), flat, refilled at every step.
struct Batch {
    inputs: Vec<f32>,
    policies: Vec<f32>,
    values: Vec<f32>,
    boards: Vec<f32>,
    opponent_policies: Vec<f32>,
}

impl Batch {
    /// A batch of `size` positions for `net`'s heads.
    fn new<G: Game>(size: usize, net: &Net) -> Batch {
        let sized = |has: bool, each: usize| vec![0.0; if has { size * each } else { 0 }];
        let arch = &net.meta.arch;
        Batch {
            inputs: vec![0.0; size * G::input_size()],
            policies: vec![0.0; size * G::NUM_ACTIONS],
            values: vec![0.0; size],
            boards: sized(arch.has_board_head(), G::cells()),
            opponent_policies: sized(arch.has_opponent_policy_head(), G::NUM_ACTIONS),
        }
    }
}

/// Fills `batch` with step `step`'s positions: drawn from `samples` by a generator seeded by
/// `seed` and `step` alone, each under a random symmetry of the game.
fn fill_batch<G: Game>(
    samples: &Samples,
    syms: &[Symmetry],
    seed: u64,
    step: u64,
    batch: &mut Batch,
) {
    let (isz, a, cells) = (G::input_size(), G::NUM_ACTIONS, G::cells());
    let mut rng = rng_from_seed(mix64(seed ^ step.wrapping_mul(GOLDEN_GAMMA)));
    for b in 0..batch.values.len() {
        let i = samples.draw(&mut rng);
        let sym = &syms[rng.random_range(0..syms.len())];
        sym.apply_planes(
            &samples.inputs[i * isz..(i + 1) * isz],
            &mut batch.inputs[b * isz..(b + 1) * isz],
        );
        sym.apply_policy(
            &samples.policies[i * a..(i + 1) * a],
            &mut batch.policies[b * a..(b + 1) * a],
        );
        batch.values[b] = samples.values[i];
        if !batch.boards.is_empty() {
            sym.apply_planes(
                &samples.boards[i * cells..(i + 1) * cells],
                &mut batch.boards[b * cells..(b + 1) * cells],
            );
        }
        if !batch.opponent_policies.is_empty() {
            sym.apply_policy(
                &samples.opponent_policies[i * a..(i + 1) * a],
                &mut batch.opponent_policies[b * a..(b + 1) * a],
            );
        }
    }
}

/// The learning rate at `step`: a cosine from `cfg.learning_rate` down to a tenth of it at the
/// last step.
fn learning_rate_at(cfg: &RunConfig, step: u64) -> f64 {
    let progress = step as f64 / cfg.train_steps.max(1) as f64;
    cfg.learning_rate * (0.1 + 0.9 * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()))
}

/// A batch's inputs and targets as tensors on the network's device.
struct BatchTensors {
    inputs: Tensor,
    policies: Tensor,
    values: Tensor,
    boards: Option<Tensor>,
    opponent_policies: Option<Tensor>,
}

fn batch_tensors(net: &Net, batch: &Batch) -> Result<BatchTensors> {
    let (s, device) = (net.meta.shape, net.device());
    let bs = batch.values.len() as i64;
    let inputs = Tensor::f_from_slice(&batch.inputs)?
        .f_view([bs, s.planes as i64, s.height as i64, s.width as i64])?
        .f_to_device(device)?;
    let policies = Tensor::f_from_slice(&batch.policies)?
        .f_view([bs, s.actions as i64])?
        .f_to_device(device)?;
    let values = Tensor::f_from_slice(&batch.values)?.f_to_device(device)?;
    let boards = match batch.boards.is_empty() {
        true => None,
        false => Some(
            Tensor::f_from_slice(&batch.boards)?
                .f_view([bs, (s.height * s.width) as i64])?
                .f_to_device(device)?,
        ),
    };
    let opponent_policies = match batch.opponent_policies.is_empty() {
        true => None,
        false => Some(
            Tensor::f_from_slice(&batch.opponent_policies)?
                .f_view([bs, s.actions as i64])?
                .f_to_device(device)?,
        ),
    };
    Ok(BatchTensors {
        inputs,
        policies,
        values,
        boards,
        opponent_policies,
    })
}

/// The forward pass's loss terms: the total to minimise, and its parts.
struct LossTerms {
    total: Tensor,
    policy: Tensor,
    value: Tensor,
    board: Option<Tensor>,
    opponent_policy: Option<Tensor>,
}

/// The run's weight decay: added to the gradient (L2, as libtorch's Adam), or decoupled
/// from it (AdamW) when `decoupled_weight_decay` is set.
fn weight_decay(cfg: &RunConfig) -> WeightDecay {
    match cfg.decoupled_weight_decay {
        true => WeightDecay::Decoupled(cfg.weight_decay),
        false => WeightDecay::L2(cfg.weight_decay),
    }
}

/// How a run's settings shape the training loss.
#[derive(Clone, Copy, Debug)]
struct LossSettings {
    /// Some positions may have no policy target (all zero): a playout cap's cheap searches.
    policy_targets_missing: bool,
    /// Times the value loss counts in the total (`value_loss_weight`).
    value_weight: f64,
    /// Times the final-board loss counts in the total (`board_loss_weight`).
    board_weight: f64,
    /// Times the opponent-policy loss counts in the total (`opponent_policy_loss_weight`).
    opponent_policy_weight: f64,
}

impl LossSettings {
    fn of(cfg: &RunConfig) -> LossSettings {
        LossSettings {
            policy_targets_missing: cfg.playout_cap.is_some(),
            value_weight: f64::from(cfg.value_loss_weight),
            board_weight: f64::from(cfg.board_loss_weight),
            opponent_policy_weight: f64::from(cfg.opponent_policy_loss_weight),
        }
    }
}

/// Policy cross-entropy + value mean squared error, or for a network with a win/draw/loss
/// value head its cross-entropy ([`wdl_cross_entropy`]; the squared error of its expected
/// result is still the value loss reported, so that runs compare), counted `value_weight`
/// times (+ the final-board mean squared error a cell, counted `board_weight` times, and the
/// opponent-policy cross-entropy, counted `opponent_policy_weight` times, when the batch has
/// those targets).
fn loss_terms(net: &Net, t: &BatchTensors, settings: LossSettings) -> Result<LossTerms> {
    let training_heads = t.boards.is_some() || t.opponent_policies.is_some();
    let heads = net.forward_heads(&t.inputs, true, training_heads)?;
    let policy = if settings.policy_targets_missing {
        policy_cross_entropy_where_targeted(&heads.policy, &t.policies)?
    } else {
        policy_cross_entropy(&heads.policy, &t.policies)?.f_mean(Kind::Float)?
    };
    let value = heads.value.f_mse_loss(&t.values, Reduction::Mean)?;
    let value_loss = match &heads.value_logits {
        Some(logits) => wdl_cross_entropy(logits, &t.values)?,
        None => value.shallow_clone(),
    };
    let mut total = policy.f_add(&value_loss.f_mul_scalar(settings.value_weight)?)?;
    let board = match (heads.board, &t.boards) {
        (Some(board), Some(target)) => {
            let loss = board.f_mse_loss(target, Reduction::Mean)?;
            total = total.f_add(&loss.f_mul_scalar(settings.board_weight)?)?;
            Some(loss)
        }
        _ => None,
    };
    let opponent_policy = match (heads.opponent_policy, &t.opponent_policies) {
        (Some(logits), Some(target)) => {
            // A game's last position, and a playout cap's cheap searches, leave no target.
            let loss = policy_cross_entropy_where_targeted(&logits, target)?;
            total = total.f_add(&loss.f_mul_scalar(settings.opponent_policy_weight)?)?;
            Some(loss)
        }
        _ => None,
    };
    Ok(LossTerms {
        total,
        policy,
        value,
        board,
        opponent_policy,
    })
}

/// Each position's cross-entropy `[n]` of policy logits `[n, actions]` against targets.
fn policy_cross_entropy(logits: &Tensor, targets: &Tensor) -> Result<Tensor, TchError> {
    targets
        .f_mul(&logits.f_log_softmax(-1, Kind::Float)?)?
        .f_sum_dim_intlist(-1, false, Kind::Float)?
        .f_neg()
}

/// The policy cross-entropy averaged over the positions that have a target: all-zero targets
/// (a playout cap's cheap searches, a game's end for the opponent's policy) teach nothing.
fn policy_cross_entropy_where_targeted(
    logits: &Tensor,
    targets: &Tensor,
) -> Result<Tensor, TchError> {
    let with_target = targets.f_sum(Kind::Float)?.f_clamp_min(1.0)?;
    policy_cross_entropy(logits, targets)?
        .f_sum(Kind::Float)?
        .f_div(&with_target)
}

/// The mean cross-entropy of win/draw/loss logits `[n, 3]` against value targets `[n]` in
/// [-1, 1], each target taken as the distribution with its expected result and the most draw:
/// win max(v, 0), draw 1 - |v|, loss max(-v, 0). A game's result alone is its outcome, one-hot;
/// the search's root value mixed in (`value_target_mix`) moves some of the mass towards a draw
/// or the other outcome, as it moves the scalar target.
fn wdl_cross_entropy(logits: &Tensor, targets: &Tensor) -> Result<Tensor, TchError> {
    let win = targets.f_clamp_min(0.0)?;
    let loss = targets.f_neg()?.f_clamp_min(0.0)?;
    let draw = targets.f_abs()?.f_neg()?.f_add_scalar(1.0)?;
    Tensor::f_stack(&[win, draw, loss], 1)?
        .f_mul(&logits.f_log_softmax(-1, Kind::Float)?)?
        .f_sum_dim_intlist(-1, false, Kind::Float)?
        .f_mean(Kind::Float)?
        .f_neg()
}

impl LossTerms {
    /// The losses as numbers (an absent head's 0).
    fn values(&self) -> Result<Losses> {
        let or_zero = |t: &Option<Tensor>| t.as_ref().map_or(Ok(0.0), |t| t.f_double_value(&[]));
        Ok(Losses {
            policy: self.policy.f_double_value(&[])?,
            value: self.value.f_double_value(&[])?,
            board: or_zero(&self.board)?,
            opponent_policy: or_zero(&self.opponent_policy)?,
        })
    }
}

/// One optimizer step on `batch` at learning rate `lr`; returns the losses before the step
/// (see [`loss_terms`]).
fn train_step(
    net: &Net,
    adam: &mut Adam,
    batch: &Batch,
    lr: f64,
    settings: LossSettings,
) -> Result<Losses> {
    let tensors = batch_tensors(net, batch)?;
    let terms = loss_terms(net, &tensors, settings)?;
    adam.zero_grad()?;
    terms.total.f_backward()?;
    adam.step(lr)?;
    terms.values()
}

/// Trains `net` in place for `cfg.train_steps` mini-batches drawn from `samples`, each position
/// under a random symmetry of the game. Step `k` draws its batch from a generator seeded by
/// `seed` and `k`, so a run resumed from a checkpoint trains exactly as an uninterrupted one;
/// a checkpoint of the finished training (saved at the end) makes a second call a no-op that
/// returns the same weights and losses. The network's description is the caller's to update.
pub fn train<G: Game>(
    cfg: &RunConfig,
    net: &mut Net,
    samples: &Samples,
    seed: u64,
    checkpointing: Option<&Checkpointing>,
    progress: bool,
) -> Result<TrainStats> {
    if samples.is_empty() {
        bail!("nothing to train on");
    }
    let started = Instant::now();
    let syms = G::symmetries();
    let mut state = TrainerState {
        adam: Adam::new(net, weight_decay(cfg))?,
        average: WeightAverage::new(net, cfg.weight_average_steps)?,
    };
    let mut at = Progress::default();
    if let Some(ck) = checkpointing {
        match load_checkpoint(ck, net, &mut state)? {
            Some(p) => at = p,
            None if cfg.carry_adam_moments => _ = carry_moments(ck, &mut state.adam)?,
            None => {}
        }
    }
    let first_step = at.step;
    let _guard = checkpointing.map(|_| InterruptGuard::install());
    let boards = net.has_board_head();
    if boards && samples.boards.len() != samples.len() * G::cells() {
        bail!("the network has a final-board head, and the positions have no final-board targets");
    }
    let opponent = net.meta.arch.has_opponent_policy_head();
    if opponent && samples.opponent_policies.len() != samples.len() * G::NUM_ACTIONS {
        bail!("the network has an opponent-policy head, and the positions have no targets for it");
    }
    let mut batch = Batch::new::<G>(cfg.batch_size.max(1), net);
    let loss_settings = LossSettings::of(cfg);
    let task = progress::task(cfg.train_steps, "steps", progress);
    task.set_position(at.step);
    let mut last_save = Instant::now();
    while at.step < cfg.train_steps {
        let step = at.step;
        fill_batch::<G>(samples, &syms, seed, step, &mut batch);
        let lr = learning_rate_at(cfg, step);
        let losses = train_step(net, &mut state.adam, &batch, lr, loss_settings)?;
        if !losses.are_finite() {
            bail!("training diverged at step {step} (loss is not finite)");
        }
        if let Some(average) = &mut state.average {
            average.update(net)?;
        }
        at.record(losses);
        task.inc(1);
        if step.is_multiple_of(10) {
            let board = match boards {
                true => format!(", board loss {:.3}", at.board_avg),
                false => String::new(),
            };
            let opponent = match opponent {
                true => format!(", opponent-policy loss {:.3}", at.opponent_policy_avg),
                false => String::new(),
            };
            task.set_message(format!(
                "policy loss {:.3}, value loss {:.3}{board}{opponent}",
                at.policy_avg, at.value_avg
            ));
        }
        if let Some(ck) = checkpointing {
            let stop = maybe_checkpoint(ck, net, &state, &at, cfg.train_steps, &mut last_save)?;
            if let Some(e) = stop {
                task.abandon();
                return Err(e);
            }
        }
    }
    drop(task);
    // The finished stage's network is the average; a call that found the stage finished
    // already has it from the checkpoint.
    if let (Some(average), true) = (&state.average, at.step > first_step) {
        average.copy_into(net)?;
    }
    if let Some(ck) = checkpointing {
        // The finished stage's checkpoint stays until the next iteration's replaces it: a
        // process that dies after saving the trained network but before the run moves on
        // finds the stage done here, instead of training the trained network again.
        if at.step > first_step {
            save_checkpoint(ck, net, &state, &at)?;
        }
    }
    Ok(TrainStats {
        samples: samples.len(),
        steps: cfg.train_steps,
        policy_loss: at.policy_avg,
        value_loss: at.value_avg,
        board_loss: boards.then_some(at.board_avg),
        opponent_policy_loss: opponent.then_some(at.opponent_policy_avg),
        reanalysis: None,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Seconds that training steps spent in each phase, summed over the steps timed.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StepTimes {
    pub steps: u64,
    /// Drawing the positions (symmetries included) and making tensors of them.
    pub batch: f64,
    /// The forward pass and the losses.
    pub forward: f64,
    /// Gradients (clearing the last step's first).
    pub backward: f64,
    /// Adam's update.
    pub optimizer: f64,
}

impl StepTimes {
    pub fn total(&self) -> f64 {
        self.batch + self.forward + self.backward + self.optimizer
    }
}

/// Times `steps` training steps of `net` on `samples`, phase by phase (the same steps as
/// [`train`], at its first learning rate), after `warmup` untimed ones: what `zero bench train`
/// reports.
pub fn time_steps<G: Game>(
    cfg: &RunConfig,
    net: &mut Net,
    samples: &Samples,
    warmup: u64,
    steps: u64,
) -> Result<StepTimes> {
    if samples.is_empty() {
        bail!("nothing to train on");
    }
    let syms = G::symmetries();
    let mut adam = Adam::new(net, weight_decay(cfg))?;
    let mut batch = Batch::new::<G>(cfg.batch_size.max(1), net);
    let loss_settings = LossSettings::of(cfg);
    let mut times = StepTimes::default();
    for step in 0..warmup + steps {
        let timed = step >= warmup;
        let mut clock = Instant::now();
        let mut lap = |slot: &mut f64| {
            if timed {
                *slot += clock.elapsed().as_secs_f64();
            }
            clock = Instant::now();
        };
        fill_batch::<G>(samples, &syms, cfg.seed, step, &mut batch);
        let tensors = batch_tensors(net, &batch)?;
        lap(&mut times.batch);
        let terms = loss_terms(net, &tensors, loss_settings)?;
        let losses = terms.values()?;
        lap(&mut times.forward);
        adam.zero_grad()?;
        terms.total.f_backward()?;
        lap(&mut times.backward);
        adam.step(cfg.learning_rate)?;
        lap(&mut times.optimizer);
        if !losses.are_finite() {
            bail!("training diverged at step {step} (loss is not finite)");
        }
    }
    times.steps = steps;
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::tictactoe::TicTacToe;
    use crate::games::Player;

    /// A record of `moves` with a one-hot policy on each move played.
    fn record(moves: &[u8], outcome: i8, root_values: &[f32]) -> GameRecord {
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

    /// Random tic-tac-toe games as records, one-hot policies on the moves played.
    fn random_games(n: usize, seed: u64) -> Vec<GameRecord> {
        let mut rng = rng_from_seed(seed);
        (0..n)
            .map(|_| {
                let (mut pos, mut moves) = (TicTacToe::new(), Vec::new());
                while pos.outcome().is_none() {
                    let legal = pos.legal_moves();
                    let m = legal[rng.random_range(0..legal.len())];
                    moves.push(m);
                    pos.play(m);
                }
                let outcome = match pos.outcome() {
                    Some(crate::games::Outcome::Win(Player::First)) => 1,
                    Some(crate::games::Outcome::Win(Player::Second)) => -1,
                    _ => 0,
                };
                record(&moves, outcome, &[])
            })
            .collect()
    }

    /// The mean squared error of the final-board head on `samples`.
    fn board_error(net: &Net, samples: &Samples) -> f64 {
        let n = samples.len() as i64;
        let xs = Tensor::from_slice(&samples.inputs).view([n, 3, 3, 3]);
        let board = net.forward_heads(&xs, false, true).unwrap().board;
        let target = Tensor::from_slice(&samples.boards).view([n, 9]);
        board
            .unwrap()
            .mse_loss(&target, Reduction::Mean)
            .double_value(&[])
    }

    /// A 1x16 residual network with or without the final-board head and the win/draw/loss
    /// value head.
    fn resnet_1x16(board_head: bool, wdl: bool) -> crate::nn::Arch {
        crate::nn::Arch::Resnet {
            blocks: 1,
            filters: 16,
            value_channels: 1,
            board_head,
            wdl,
            squeeze_excite: false,
            opponent_policy_head: false,
        }
    }

    #[test]
    fn training_teaches_the_final_board_head() {
        use crate::alphazero::config::RunConfig;
        use crate::games::GameKind;
        use crate::nn::{Arch, Shape};
        let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
        cfg.train_steps = 150;
        cfg.arch = resnet_1x16(true, false);
        let samples = samples_from::<TicTacToe>(&random_games(200, 5), 0.0, true);
        let shape = Shape::of::<TicTacToe>();
        let new = |arch| Net::new_seeded("tictactoe", arch, shape, tch::Device::Cpu, 3).unwrap();
        let mut net = new(cfg.arch);
        let before = board_error(&net, &samples);
        let stats = train::<TicTacToe>(&cfg, &mut net, &samples, 1, None, false).unwrap();
        let after = board_error(&net, &samples);
        assert!(
            after < 0.7 * before,
            "board error {before:.3} -> {after:.3}"
        );
        assert!(stats.board_loss.is_some_and(|l| l.is_finite()));

        // Without the head: no board loss; the head without targets is refused.
        let mut plain = new(Arch::resnet(1, 16));
        let stats = train::<TicTacToe>(&cfg, &mut plain, &samples, 1, None, false).unwrap();
        assert_eq!(stats.board_loss, None);
        let no_targets = samples_from::<TicTacToe>(&random_games(5, 6), 0.0, false);
        let e = train::<TicTacToe>(&cfg, &mut net, &no_targets, 1, None, false).unwrap_err();
        assert!(e.to_string().contains("no final-board targets"), "{e}");
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

    /// The opponent-policy head's cross-entropy on `samples` (positions with a target).
    fn opponent_policy_error(net: &Net, samples: &Samples) -> f64 {
        let n = samples.len() as i64;
        let xs = Tensor::from_slice(&samples.inputs).view([n, 3, 3, 3]);
        let logits = net.forward_heads(&xs, false, true).unwrap().opponent_policy;
        let target = Tensor::from_slice(&samples.opponent_policies).view([n, 9]);
        policy_cross_entropy_where_targeted(&logits.unwrap(), &target)
            .unwrap()
            .double_value(&[])
    }

    #[test]
    fn training_teaches_the_opponent_policy_head_and_play_never_sees_it() {
        use crate::alphazero::config::RunConfig;
        use crate::games::GameKind;
        use crate::nn::Shape;
        let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
        cfg.train_steps = 600;
        cfg.opponent_policy_loss_weight = 1.0;
        cfg.arch = crate::nn::Arch::Resnet {
            blocks: 1,
            filters: 16,
            value_channels: 1,
            board_head: false,
            wdl: false,
            squeeze_excite: false,
            opponent_policy_head: true,
        };
        let samples = samples_from::<TicTacToe>(&random_games(200, 5), 0.0, false);
        let shape = Shape::of::<TicTacToe>();
        let mut net = Net::new_seeded("tictactoe", cfg.arch, shape, tch::Device::Cpu, 3).unwrap();
        let plain = Net::new_seeded(
            "tictactoe",
            resnet_1x16(false, false),
            shape,
            tch::Device::Cpu,
            3,
        )
        .unwrap();
        // Made last: the other weights start as a network's without the head.
        let xs = Tensor::from_slice(&samples.inputs[..27]).view([1, 3, 3, 3]);
        let (p, v) = net.forward(&xs, false).unwrap();
        let (q, w) = plain.forward(&xs, false).unwrap();
        assert!(p.equal(&q) && v.equal(&w));
        let before = opponent_policy_error(&net, &samples);
        let stats = train::<TicTacToe>(&cfg, &mut net, &samples, 1, None, false).unwrap();
        let after = opponent_policy_error(&net, &samples);
        let reported = stats.opponent_policy_loss.unwrap();
        assert!(reported.is_finite() && reported < before, "{reported}");
        assert_eq!(stats.board_loss, None);
        // Random replies: the best is about uniform over the empty cells but one.
        assert!(
            after < 0.9 * before,
            "opponent-policy cross-entropy {before:.3} -> {after:.3}"
        );
        assert!(net
            .forward_heads(&xs, false, false)
            .unwrap()
            .opponent_policy
            .is_none());
    }

    #[test]
    fn a_value_target_is_the_outcome_distribution_with_its_expectation_and_the_most_draw() {
        let ce = |logits: &[f32], v: f32| {
            let logits = Tensor::from_slice(logits).view([1, 3]);
            wdl_cross_entropy(&logits, &Tensor::from_slice(&[v]))
                .unwrap()
                .double_value(&[])
        };
        let ln = |p: [f32; 3]| p.map(|x| x.max(1e-12).ln());
        // Results alone: one-hot win, draw, loss; a logit vector sure of it costs nothing.
        assert!(ce(&ln([1.0, 0.0, 0.0]), 1.0) < 1e-6);
        assert!(ce(&ln([0.0, 1.0, 0.0]), 0.0) < 1e-6);
        assert!(ce(&ln([0.0, 0.0, 1.0]), -1.0) < 1e-6);
        // 0.5: half win, half draw, whose entropy is the least it can cost.
        let half = ce(&ln([0.5, 0.5, 0.0]), 0.5);
        assert!((half - 2f64.ln()).abs() < 1e-5, "{half}");
        assert!(ce(&[0.0, 0.0, 0.0], 0.5) > half);
        assert!(ce(&ln([0.75, 0.0, 0.25]), 0.5) > half);
    }

    #[test]
    fn training_teaches_a_win_draw_loss_value_head() {
        use crate::alphazero::config::RunConfig;
        use crate::games::GameKind;
        use crate::nn::{Arch, Shape};
        let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
        cfg.train_steps = 60;
        let arch = resnet_1x16(false, true);
        let samples = samples_from::<TicTacToe>(&random_games(200, 5), 0.0, false);
        let shape = Shape::of::<TicTacToe>();
        let mut net = Net::new_seeded("tictactoe", arch, shape, tch::Device::Cpu, 3).unwrap();
        let (_, before) = losses(&net, &samples);
        let stats = train::<TicTacToe>(&cfg, &mut net, &samples, 1, None, false).unwrap();
        let (_, after) = losses(&net, &samples);
        let scalar_arch = Arch::resnet(1, 16);
        let mut scalar = Net::new_seeded("tictactoe", scalar_arch, shape, tch::Device::Cpu, 3);
        let scalar = scalar.as_mut().unwrap();
        train::<TicTacToe>(&cfg, scalar, &samples, 1, None, false).unwrap();
        let (_, scalar_after) = losses(scalar, &samples);
        // Trained by cross-entropy, the squared error of its expected result falls about as
        // far as the scalar head's, trained on that error (0.849 -> 0.768 against 0.751 when
        // written); training reports that error, not the cross-entropy.
        assert!(
            after < 0.93 * before && after < 1.05 * scalar_after,
            "value loss {before:.3} -> {after:.3}, scalar head {scalar_after:.3}"
        );
        assert!(stats.value_loss.is_finite() && stats.value_loss < before);
    }

    #[test]
    fn the_value_loss_counts_value_loss_weight_times_in_the_total() {
        use crate::alphazero::config::RunConfig;
        use crate::games::GameKind;
        use crate::nn::Shape;
        let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
        let samples = samples_from::<TicTacToe>(&random_games(50, 7), 0.0, false);
        let shape = Shape::of::<TicTacToe>();
        for wdl in [false, true] {
            let arch = resnet_1x16(false, wdl);
            let net = Net::new_seeded("tictactoe", arch, shape, tch::Device::Cpu, 3).unwrap();
            let mut batch = Batch::new::<TicTacToe>(cfg.batch_size, &net);
            fill_batch::<TicTacToe>(&samples, &TicTacToe::symmetries(), 1, 0, &mut batch);
            let tensors = batch_tensors(&net, &batch).unwrap();
            let mut total_beyond_policy = |weight: f32| {
                cfg.value_loss_weight = weight;
                let terms = loss_terms(&net, &tensors, LossSettings::of(&cfg)).unwrap();
                let total = terms.total.double_value(&[]);
                total - terms.policy.double_value(&[])
            };
            let (once, three_times) = (total_beyond_policy(1.0), total_beyond_policy(3.0));
            assert!(once > 0.01, "value loss {once}");
            assert!(
                (three_times - 3.0 * once).abs() < 1e-4 * once,
                "{once} {three_times}"
            );
        }
    }

    /// The policy and value losses of `net` on `samples`, in 32-bit floats.
    fn losses(net: &Net, samples: &Samples) -> (f64, f64) {
        let n = samples.len() as i64;
        let xs = Tensor::from_slice(&samples.inputs).view([n, 3, 3, 3]);
        let (logits, value) = net.forward(&xs, false).unwrap();
        let target_p = Tensor::from_slice(&samples.policies).view([n, 9]);
        let policy = -(target_p * logits.log_softmax(-1, Kind::Float))
            .sum_dim_intlist(-1, false, Kind::Float)
            .mean(Kind::Float);
        let target_v = Tensor::from_slice(&samples.values);
        let value = value.mse_loss(&target_v, Reduction::Mean);
        (policy.double_value(&[]), value.double_value(&[]))
    }

    #[test]
    fn a_network_computing_in_bfloat16_trains_its_32_bit_weights_as_far_as_in_32_bits() {
        use crate::alphazero::config::RunConfig;
        use crate::games::GameKind;
        use crate::nn::{Arch, Precision, Shape};
        let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
        cfg.train_steps = 150;
        let samples = samples_from::<TicTacToe>(&random_games(200, 5), 0.0, false);
        let shape = Shape::of::<TicTacToe>();
        let trained = |precision| {
            let arch = Arch::resnet(1, 16);
            let mut net = Net::new_seeded("tictactoe", arch, shape, tch::Device::Cpu, 3)
                .unwrap()
                .with_precision(precision);
            train::<TicTacToe>(&cfg, &mut net, &samples, 1, None, false).unwrap();
            assert!(net.vs.variables().values().all(|t| t.kind() == Kind::Float));
            net.with_precision(Precision::F32)
        };
        let untrained =
            Net::new_seeded("tictactoe", Arch::resnet(1, 16), shape, tch::Device::Cpu, 3);
        let (_, value_before) = losses(&untrained.unwrap(), &samples);
        let (policy32, value32) = losses(&trained(Precision::F32), &samples);
        let (policy16, value16) = losses(&trained(Precision::Bf16), &samples);
        // Random games: the value head has something to learn (the policy of random moves
        // is near its floor from the start).
        assert!(
            value16 < 0.85 * value_before,
            "value loss {value_before:.3} -> {value16:.3}"
        );
        assert!(
            (policy16 - policy32).abs() < 0.03 * policy32
                && (value16 - value32).abs() < 0.05 * value32,
            "bfloat16 {policy16:.4} / {value16:.4}, 32 bits {policy32:.4} / {value32:.4}"
        );
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
