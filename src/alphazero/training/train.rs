//! Training: mini-batches of the replay window's positions ([`super::samples`]), each under a
//! random symmetry of the game; loss = policy cross-entropy + value loss (squared error, or
//! cross-entropy for a win/draw/loss head) (+ L2 through weight decay); Adam with a cosine
//! learning rate; a checkpoint to resume from ([`super::checkpoint`]).

use std::time::Instant;

use anyhow::{bail, Result};
use rand::Rng;
use serde::Serialize;
use tch::{Kind, Reduction, TchError, Tensor};

use super::adam::Adam;
pub use super::checkpoint::Checkpointing;
use super::checkpoint::{
    load_checkpoint, maybe_checkpoint, save_checkpoint, InterruptGuard, Losses, Progress,
};
use super::samples::Samples;
use crate::alphazero::config::RunConfig;
use crate::alphazero::research::reanalyse::Reanalysis;
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
    /// The window's positions searched again before training
    /// ([`crate::alphazero::research::reanalyse`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reanalysis: Option<Reanalysis>,
    pub seconds: f64,
}

/// A mini-batch: inputs, policy targets and value targets, flat, refilled at every step.
struct Batch {
    inputs: Vec<f32>,
    policies: Vec<f32>,
    values: Vec<f32>,
}

impl Batch {
    /// A batch of `size` positions.
    fn new<G: Game>(size: usize) -> Batch {
        Batch {
            inputs: vec![0.0; size * G::input_size()],
            policies: vec![0.0; size * G::NUM_ACTIONS],
            values: vec![0.0; size],
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
    let (isz, a) = (G::input_size(), G::NUM_ACTIONS);
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
    }
}

/// The learning rate at `step`: a cosine from `cfg.learning_rate` down to a tenth of it at the
/// last step.
fn learning_rate_at(cfg: &RunConfig, step: u64) -> f64 {
    let progress = step as f64 / cfg.train.steps.max(1) as f64;
    cfg.train.learning_rate * (0.1 + 0.9 * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()))
}

/// A batch's inputs and targets as tensors on the network's device.
struct BatchTensors {
    inputs: Tensor,
    policies: Tensor,
    values: Tensor,
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
    Ok(BatchTensors {
        inputs,
        policies,
        values,
    })
}

/// The forward pass's loss terms: the total to minimise, and its parts.
struct LossTerms {
    total: Tensor,
    policy: Tensor,
    value: Tensor,
}

/// Policy cross-entropy + value mean squared error, or for a network with a win/draw/loss
/// value head its cross-entropy ([`wdl_cross_entropy`]; the squared error of its expected
/// result is still the value loss reported, so that runs compare). Where some positions have
/// no policy target (`policy_targets_missing`: a research playout cap's cheap searches), the
/// policy's cross-entropy averages over those that have one.
fn loss_terms(net: &Net, t: &BatchTensors, policy_targets_missing: bool) -> Result<LossTerms> {
    let heads = net.forward_heads(&t.inputs, true)?;
    let policy = if policy_targets_missing {
        policy_cross_entropy_where_targeted(&heads.policy, &t.policies)?
    } else {
        policy_cross_entropy(&heads.policy, &t.policies)?.f_mean(Kind::Float)?
    };
    let value = heads.value.f_mse_loss(&t.values, Reduction::Mean)?;
    let value_loss = match &heads.value_logits {
        Some(logits) => wdl_cross_entropy(logits, &t.values)?,
        None => value.shallow_clone(),
    };
    let total = policy.f_add(&value_loss)?;
    Ok(LossTerms {
        total,
        policy,
        value,
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
/// (a playout cap's cheap searches) teach nothing.
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
    /// The losses as numbers.
    fn values(&self) -> Result<Losses> {
        Ok(Losses {
            policy: self.policy.f_double_value(&[])?,
            value: self.value.f_double_value(&[])?,
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
    policy_targets_missing: bool,
) -> Result<Losses> {
    let tensors = batch_tensors(net, batch)?;
    let terms = loss_terms(net, &tensors, policy_targets_missing)?;
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
    let (mut adam, mut at) = start_or_resume(cfg, net, checkpointing)?;
    let first_step = at.step;
    let _guard = checkpointing.map(|_| InterruptGuard::install());
    let mut batch = Batch::new::<G>(cfg.train.batch_size.max(1));
    let targets_missing = cfg.research.playout_cap.is_some();
    let task = progress::task(cfg.train.steps, "steps", progress);
    task.set_position(at.step);
    let mut last_save = Instant::now();
    while at.step < cfg.train.steps {
        let step = at.step;
        fill_batch::<G>(samples, &syms, seed, step, &mut batch);
        let lr = learning_rate_at(cfg, step);
        let losses = train_step(net, &mut adam, &batch, lr, targets_missing)?;
        if !losses.are_finite() {
            bail!("training diverged at step {step} (loss is not finite)");
        }
        at.record(losses);
        task.inc(1);
        if step.is_multiple_of(10) {
            task.set_message(losses_line(&at));
        }
        if let Some(ck) = checkpointing {
            let stop = maybe_checkpoint(ck, net, &adam, &at, cfg.train.steps, &mut last_save)?;
            if let Some(e) = stop {
                task.abandon();
                return Err(e);
            }
        }
    }
    drop(task);
    if let Some(ck) = checkpointing {
        // The finished stage's checkpoint stays until the next iteration's replaces it: a
        // process that dies after saving the trained network but before the run moves on
        // finds the stage done here, instead of training the trained network again.
        if at.step > first_step {
            save_checkpoint(ck, net, &adam, &at)?;
        }
    }
    Ok(TrainStats {
        samples: samples.len(),
        steps: cfg.train.steps,
        policy_loss: at.policy_avg,
        value_loss: at.value_avg,
        reanalysis: None,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The optimizer and the step to train from: the checkpoint's when it holds this iteration's
/// training (then `net` gets its weights too), else a fresh Adam from step 0.
fn start_or_resume(
    cfg: &RunConfig,
    net: &mut Net,
    checkpointing: Option<&Checkpointing>,
) -> Result<(Adam, Progress)> {
    let mut adam = Adam::new(net, cfg.train.weight_decay)?;
    let mut at = Progress::default();
    if let Some(ck) = checkpointing {
        if let Some(p) = load_checkpoint(ck, net, &mut adam)? {
            at = p;
        }
    }
    Ok((adam, at))
}

/// The progress bar's line: the running losses.
fn losses_line(at: &Progress) -> String {
    format!(
        "policy loss {:.3}, value loss {:.3}",
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
    let mut adam = Adam::new(net, cfg.train.weight_decay)?;
    let mut batch = Batch::new::<G>(cfg.train.batch_size.max(1));
    let targets_missing = cfg.research.playout_cap.is_some();
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
        let terms = loss_terms(net, &tensors, targets_missing)?;
        let losses = terms.values()?;
        lap(&mut times.forward);
        adam.zero_grad()?;
        terms.total.f_backward()?;
        lap(&mut times.backward);
        adam.step(cfg.train.learning_rate)?;
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
    use crate::alphazero::selfplay::records::GameRecord;
    use crate::alphazero::training::samples::samples_from;
    use crate::alphazero::training::samples::tests::record;
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
        cfg.train.steps = 60;
        let arch = Arch::resnet(1, 16).with_wdl_head();
        let samples = samples_from::<TicTacToe>(&random_games(200, 5), 0.0);
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
    fn the_total_loss_is_the_policy_loss_and_the_value_heads_own() {
        use crate::alphazero::config::RunConfig;
        use crate::games::GameKind;
        use crate::nn::{Arch, Shape};
        let cfg = RunConfig::preset("tiny", GameKind::TicTacToe, false).unwrap();
        let samples = samples_from::<TicTacToe>(&random_games(50, 7), 0.0);
        let shape = Shape::of::<TicTacToe>();
        for arch in [Arch::resnet(1, 16), Arch::resnet(1, 16).with_wdl_head()] {
            let net = Net::new_seeded("tictactoe", arch, shape, tch::Device::Cpu, 3).unwrap();
            let mut batch = Batch::new::<TicTacToe>(cfg.train.batch_size);
            fill_batch::<TicTacToe>(&samples, &TicTacToe::symmetries(), 1, 0, &mut batch);
            let tensors = batch_tensors(&net, &batch).unwrap();
            let terms = loss_terms(&net, &tensors, false).unwrap();
            let beyond_policy = terms.total.double_value(&[]) - terms.policy.double_value(&[]);
            let value = terms.value.double_value(&[]);
            match arch.has_wdl_head() {
                // The squared error is what the scalar head trains on.
                false => assert!((beyond_policy - value).abs() < 1e-6, "{beyond_policy}"),
                // The win/draw/loss head trains on its cross-entropy, reported as the error.
                true => assert!((beyond_policy - value).abs() > 1e-3, "{beyond_policy}"),
            }
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
        cfg.train.steps = 150;
        let samples = samples_from::<TicTacToe>(&random_games(200, 5), 0.0);
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
