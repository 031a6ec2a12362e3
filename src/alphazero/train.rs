//! Training: mini-batches of the replay window's positions ([`super::samples`]), each under a
//! random symmetry of the game; loss = policy cross-entropy + value loss (squared error, or
//! cross-entropy for a win/draw/loss head) + the auxiliary heads' losses (+ L2 through weight
//! decay); Adam with a cosine learning rate; a checkpoint to resume from
//! ([`super::train_checkpoint`]) and, when the run asks, the weights' average
//! ([`super::weight_average`]).

use std::time::Instant;

use anyhow::{bail, Result};
use rand::Rng;
use serde::Serialize;
use tch::{Kind, Reduction, TchError, Tensor};

use super::adam::{Adam, WeightDecay};
use super::config::RunConfig;
use super::reanalyse::Reanalysis;
use super::samples::Samples;
pub use super::train_checkpoint::Checkpointing;
use super::train_checkpoint::{
    carry_moments, load_checkpoint, maybe_checkpoint, save_checkpoint, InterruptGuard, Losses,
    Progress, TrainerState,
};
use super::weight_average::WeightAverage;
use crate::core::progress;
use crate::core::rng::{mix64, rng_from_seed};
use crate::games::{Game, Symmetry};
use crate::nn::Net;

/// Spreads step numbers over the seed space: 2^64 divided by the golden ratio, splitmix64's
/// increment.
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

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
    /// The soft-policy loss (cross-entropy), for a network with that head.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soft_policy_loss: Option<f64>,
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
    soft_policy: Option<Tensor>,
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
    /// Times the soft-policy loss counts in the total (`soft_policy_loss_weight`).
    soft_policy_weight: f64,
}

impl LossSettings {
    fn of(cfg: &RunConfig) -> LossSettings {
        LossSettings {
            policy_targets_missing: cfg.playout_cap.is_some(),
            value_weight: f64::from(cfg.value_loss_weight),
            board_weight: f64::from(cfg.board_loss_weight),
            opponent_policy_weight: f64::from(cfg.opponent_policy_loss_weight),
            soft_policy_weight: f64::from(cfg.soft_policy_loss_weight),
        }
    }
}

/// Policy cross-entropy + value mean squared error, or for a network with a win/draw/loss
/// value head its cross-entropy ([`wdl_cross_entropy`]; the squared error of its expected
/// result is still the value loss reported, so that runs compare), counted `value_weight`
/// times (+ the final-board mean squared error a cell, counted `board_weight` times, and the
/// opponent-policy cross-entropy, counted `opponent_policy_weight` times, when the batch has
/// those targets; + the soft-policy cross-entropy, counted `soft_policy_weight` times, for a
/// network with that head).
fn loss_terms(net: &Net, t: &BatchTensors, settings: LossSettings) -> Result<LossTerms> {
    let soft_head = net.meta.arch.has_soft_policy_head();
    let training_heads = t.boards.is_some() || t.opponent_policies.is_some() || soft_head;
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
    let soft_policy = match heads.soft_policy {
        Some(logits) => {
            // Cheap searches' all-zero targets stay zero, and teach nothing here either.
            let target = soft_policy_target(&t.policies)?;
            let loss = policy_cross_entropy_where_targeted(&logits, &target)?;
            total = total.f_add(&loss.f_mul_scalar(settings.soft_policy_weight)?)?;
            Some(loss)
        }
        None => None,
    };
    Ok(LossTerms {
        total,
        policy,
        value,
        board,
        opponent_policy,
        soft_policy,
    })
}

/// The power the soft-policy target raises the policy target to: KataGo's temperature of 4.
const SOFT_POLICY_POWER: f64 = 0.25;

/// The soft-policy targets `[n, actions]` of policy targets: each raised to the power 1/4 and
/// normalised again (KataGo's auxiliary soft-policy target), so that a move the search gave
/// 1% weighs about a third of one it gave 60%, not a sixtieth. An all-zero target stays zero.
fn soft_policy_target(policies: &Tensor) -> Result<Tensor, TchError> {
    let soft = policies
        .f_clamp_min(0.0)?
        .f_pow_tensor_scalar(SOFT_POLICY_POWER)?;
    let sums = soft
        .f_sum_dim_intlist(-1, true, Kind::Float)?
        .f_clamp_min(f64::from(f32::MIN_POSITIVE))?;
    soft.f_div(&sums)
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
            soft_policy: or_zero(&self.soft_policy)?,
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
    let heads = auxiliary_heads::<G>(net, samples)?;
    let (mut state, mut at) = start_or_resume(cfg, net, checkpointing)?;
    let first_step = at.step;
    let _guard = checkpointing.map(|_| InterruptGuard::install());
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
            task.set_message(losses_line(&at, heads));
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
        board_loss: heads.boards.then_some(at.board_avg),
        opponent_policy_loss: heads.opponent.then_some(at.opponent_policy_avg),
        soft_policy_loss: heads.soft.then_some(at.soft_policy_avg),
        reanalysis: None,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The training-only heads a network has, whose losses training reports.
#[derive(Clone, Copy)]
struct AuxiliaryHeads {
    boards: bool,
    opponent: bool,
    soft: bool,
}

/// The training-only heads `net` has; an error when it has a final-board or opponent-policy
/// head and the positions have no targets for it (the soft-policy head's come from the policy
/// targets).
fn auxiliary_heads<G: Game>(net: &Net, samples: &Samples) -> Result<AuxiliaryHeads> {
    let boards = net.has_board_head();
    if boards && samples.boards.len() != samples.len() * G::cells() {
        bail!("the network has a final-board head, and the positions have no final-board targets");
    }
    let opponent = net.meta.arch.has_opponent_policy_head();
    if opponent && samples.opponent_policies.len() != samples.len() * G::NUM_ACTIONS {
        bail!("the network has an opponent-policy head, and the positions have no targets for it");
    }
    let soft = net.meta.arch.has_soft_policy_head();
    Ok(AuxiliaryHeads {
        boards,
        opponent,
        soft,
    })
}

/// The optimizer (and weight average) and the step to train from: the checkpoint's when it
/// holds this iteration's training (then `net` gets its weights too), else fresh ones, with
/// Adam's moments from the last iteration's checkpoint when the run carries them.
fn start_or_resume(
    cfg: &RunConfig,
    net: &mut Net,
    checkpointing: Option<&Checkpointing>,
) -> Result<(TrainerState, Progress)> {
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
    Ok((state, at))
}

/// The progress bar's line: the running losses of the heads the network has.
fn losses_line(at: &Progress, heads: AuxiliaryHeads) -> String {
    let board = match heads.boards {
        true => format!(", board loss {:.3}", at.board_avg),
        false => String::new(),
    };
    let opponent = match heads.opponent {
        true => format!(", opponent-policy loss {:.3}", at.opponent_policy_avg),
        false => String::new(),
    };
    let soft = match heads.soft {
        true => format!(", soft-policy loss {:.3}", at.soft_policy_avg),
        false => String::new(),
    };
    format!(
        "policy loss {:.3}, value loss {:.3}{board}{opponent}{soft}",
        at.policy_avg, at.value_avg
    )
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
    use crate::alphazero::records::GameRecord;
    use crate::alphazero::samples::samples_from;
    use crate::alphazero::samples::tests::record;
    use crate::games::tictactoe::TicTacToe;
    use crate::games::Player;

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
            soft_policy_head: false,
            line_threats: false,
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

    /// The soft-policy head's cross-entropy on `samples` against their soft targets.
    fn soft_policy_error(net: &Net, samples: &Samples) -> f64 {
        let n = samples.len() as i64;
        let xs = Tensor::from_slice(&samples.inputs).view([n, 3, 3, 3]);
        let logits = net.forward_heads(&xs, false, true).unwrap().soft_policy;
        let policies = Tensor::from_slice(&samples.policies).view([n, 9]);
        let target = soft_policy_target(&policies).unwrap();
        policy_cross_entropy_where_targeted(&logits.unwrap(), &target)
            .unwrap()
            .double_value(&[])
    }

    #[test]
    fn a_soft_policy_target_is_the_target_to_the_power_a_quarter_normalised() {
        let targets =
            Tensor::from_slice(&[0.6f32, 0.36, 0.03, 0.01, 0.0, 0.0, 0.0, 0.0]).view([2, 4]);
        let soft = soft_policy_target(&targets).unwrap();
        let got: Vec<f32> = Vec::try_from(soft.view([-1])).unwrap();
        let roots = [0.6f64, 0.36, 0.03, 0.01].map(|p| p.powf(0.25));
        let sum: f64 = roots.iter().sum();
        for (g, r) in got[..4].iter().zip(roots) {
            assert!((f64::from(*g) - r / sum).abs() < 1e-6, "{got:?}");
        }
        // 60% and 1% become about 37% and 13%: the ranking of the weak moves now weighs.
        assert!(
            (got[0] - 0.369).abs() < 1e-3 && (got[3] - 0.132).abs() < 1e-3,
            "{got:?}"
        );
        // A cheap search's all-zero target stays zero (no target), not NaN.
        assert_eq!(&got[4..], &[0.0; 4]);
        // A one-hot target is its own soft target.
        let one_hot = Tensor::from_slice(&[0.0f32, 1.0, 0.0]).view([1, 3]);
        assert!(soft_policy_target(&one_hot).unwrap().equal(&one_hot));
    }

    /// What training a training-only head taught: its error (by `error`) on the positions
    /// before and after, the training's figures, the network, and one position's input.
    struct HeadTrained {
        before: f64,
        after: f64,
        stats: TrainStats,
        net: Net,
        xs: Tensor,
    }

    /// Trains a network of `cfg.arch` (a 1x16 residual network with a training-only head) on
    /// random tic-tac-toe games, after checking that the head, made last, leaves the other
    /// weights as a network's without it.
    fn train_a_training_only_head(
        cfg: &crate::alphazero::config::RunConfig,
        error: fn(&Net, &Samples) -> f64,
    ) -> HeadTrained {
        let samples = samples_from::<TicTacToe>(&random_games(200, 5), 0.0, false);
        let shape = crate::nn::Shape::of::<TicTacToe>();
        let new = |arch| Net::new_seeded("tictactoe", arch, shape, tch::Device::Cpu, 3).unwrap();
        let (mut net, plain) = (new(cfg.arch), new(resnet_1x16(false, false)));
        let xs = Tensor::from_slice(&samples.inputs[..27]).view([1, 3, 3, 3]);
        let (p, v) = net.forward(&xs, false).unwrap();
        let (q, w) = plain.forward(&xs, false).unwrap();
        assert!(p.equal(&q) && v.equal(&w));
        let before = error(&net, &samples);
        let stats = train::<TicTacToe>(cfg, &mut net, &samples, 1, None, false).unwrap();
        let after = error(&net, &samples);
        HeadTrained {
            before,
            after,
            stats,
            net,
            xs,
        }
    }

    #[test]
    fn training_teaches_the_soft_policy_head_and_play_never_sees_it() {
        use crate::alphazero::config::RunConfig;
        use crate::games::GameKind;
        let mut cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
        cfg.train_steps = 600;
        cfg.arch = resnet_1x16(false, false).with_soft_policy_head();
        let t = train_a_training_only_head(&cfg, soft_policy_error);
        let (before, after) = (t.before, t.after);
        let reported = t.stats.soft_policy_loss.unwrap();
        assert!(reported.is_finite() && reported < before, "{reported}");
        assert_eq!(
            (t.stats.board_loss, t.stats.opponent_policy_loss),
            (None, None)
        );
        assert!(
            after < 0.9 * before,
            "soft-policy cross-entropy {before:.3} -> {after:.3}"
        );
        let heads = t.net.forward_heads(&t.xs, false, false).unwrap();
        assert!(heads.soft_policy.is_none());
        // Its weights are counted in the network's size, which a model file is checked against.
        let shape = crate::nn::Shape::of::<TicTacToe>();
        let numbers = t
            .net
            .vs
            .variables()
            .values()
            .map(|v| v.numel() as i64)
            .sum();
        assert_eq!(cfg.arch.numbers(shape), Some(numbers));
    }

    #[test]
    fn training_teaches_the_opponent_policy_head_and_play_never_sees_it() {
        use crate::alphazero::config::RunConfig;
        use crate::games::GameKind;
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
            soft_policy_head: false,
            line_threats: false,
        };
        let t = train_a_training_only_head(&cfg, opponent_policy_error);
        let (before, after) = (t.before, t.after);
        let reported = t.stats.opponent_policy_loss.unwrap();
        assert!(reported.is_finite() && reported < before, "{reported}");
        assert_eq!(t.stats.board_loss, None);
        // Random replies: the best is about uniform over the empty cells but one.
        assert!(
            after < 0.9 * before,
            "opponent-policy cross-entropy {before:.3} -> {after:.3}"
        );
        let heads = t.net.forward_heads(&t.xs, false, false).unwrap();
        assert!(heads.opponent_policy.is_none());
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
}
