//! Training: a replay window over recent iterations, symmetry augmentation, loss = policy
//! cross-entropy + value MSE (+ L2 through weight decay), Adam with a cosine learning rate.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use rand::Rng;
use serde::Serialize;
use tch::{Kind, Reduction, Tensor};

use super::adam::Adam;
use super::config::RunConfig;
use super::position_averaging::average_duplicates;
use super::records::{read_iteration, GameRecord};
use crate::core::files::write_atomic;
use crate::core::progress;
use crate::core::rng::{mix64, rng_from_seed};
use crate::games::{Game, Player, Symmetry};
use crate::nn::tensors::{from_safetensors_bytes, to_safetensors_bytes};
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
    /// Running sums of the positions' weights when they are drawn unevenly (averaged
    /// duplicates, [`super::position_averaging`]); empty: every position is equally likely.
    pub cumulative_weights: Vec<f64>,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.values.len()
    }
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
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

/// Replays records into training positions. The value target mixes the game's result with
/// the search's root value (`mix` of the latter), both from the mover's view.
pub fn samples_from<G: Game>(records: &[GameRecord], mix: f32) -> Samples {
    let (isz, a) = (G::input_size(), G::NUM_ACTIONS);
    let mut s = Samples::default();
    for r in records {
        let mut pos = G::new();
        for (ply, &m) in r.moves.iter().enumerate() {
            if !pos.is_legal(m) {
                break;
            }
            let at = s.inputs.len();
            s.inputs.resize(at + isz, 0.0);
            pos.encode(&mut s.inputs[at..]);
            s.policies
                .extend_from_slice(&r.policies[ply * a..(ply + 1) * a]);
            let z = if pos.to_move() == Player::First {
                r.outcome as f32
            } else {
                -(r.outcome as f32)
            };
            let q = r.root_values.get(ply).copied().unwrap_or(z);
            s.values.push((1.0 - mix) * z + mix * q);
            pos.play(m);
        }
    }
    s
}

/// Loads the replay window ending at `iteration`.
pub fn load_window<G: Game>(cfg: &RunConfig, data_dir: &Path, iteration: u32) -> Result<Samples> {
    let first = iteration.saturating_sub(cfg.window.max(1) - 1).max(1);
    let mut records = Vec::new();
    for i in first..=iteration {
        records.extend(read_iteration(data_dir, G::NAME, G::NUM_ACTIONS, i)?);
    }
    if records.is_empty() {
        bail!(
            "no self-play games in {} for iterations {first}..={iteration}",
            data_dir.display()
        );
    }
    let samples = samples_from::<G>(&records, cfg.value_target_mix);
    Ok(if cfg.position_averaging {
        average_duplicates(&samples, G::input_size(), G::NUM_ACTIONS)
    } else {
        samples
    })
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct TrainStats {
    pub samples: usize,
    pub steps: u64,
    pub policy_loss: f64,
    pub value_loss: f64,
    pub seconds: f64,
}

/// Where and how often training saves its state, so that an interrupted stage resumes at the
/// step it reached instead of starting over.
#[derive(Clone, Debug)]
pub struct Checkpointing {
    /// The checkpoint file (`.safetensors`: weights, Adam's moments, step and running losses).
    pub path: PathBuf,
    /// Iteration the training belongs to: a checkpoint of another iteration is ignored.
    pub iteration: u32,
    /// Seconds between saves (a crash loses at most this much work; Ctrl-C loses none).
    pub every_seconds: f64,
    /// Stop with an error right after the save at this step (tests simulate an interruption).
    pub stop_after: Option<u64>,
}

/// Set by the Ctrl-C handler that training installs while it runs.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// While alive, Ctrl-C (SIGINT) asks training to save a checkpoint and stop; afterwards the
/// previous behaviour (terminate) is back. A process that ignores SIGINT (started by `nohup`,
/// or in the background by a non-interactive shell) goes on ignoring it: the guard then
/// installs nothing, so that such a run behaves the same in every stage.
struct InterruptGuard {
    /// The disposition to put back; `None` when nothing was installed.
    previous: Option<libc::sighandler_t>,
}

impl InterruptGuard {
    fn install() -> InterruptGuard {
        INTERRUPTED.store(false, Ordering::SeqCst);
        if sigint_ignored() {
            return InterruptGuard { previous: None };
        }
        let handler = on_interrupt as extern "C" fn(libc::c_int);
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        let previous = unsafe { libc::signal(libc::SIGINT, handler as libc::sighandler_t) };
        InterruptGuard {
            previous: Some(previous),
        }
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        if let Some(previous) = self.previous {
            // SAFETY: puts back the handler that was there before `install`.
            unsafe { libc::signal(libc::SIGINT, previous) };
        }
    }
}

/// Whether this process ignores SIGINT (asked without changing it).
fn sigint_ignored() -> bool {
    // SAFETY: a null new action only reads the current one into `current`.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGINT, std::ptr::null(), &mut current) == 0
            && current.sa_sigaction == libc::SIG_IGN
    }
}

/// Training progress that a checkpoint keeps.
#[derive(Default)]
struct Progress {
    step: u64,
    policy_avg: f64,
    value_avg: f64,
}

impl Progress {
    /// Counts a step and folds its losses into the running averages (the first step's losses
    /// start them).
    fn record(&mut self, policy_loss: f64, value_loss: f64) {
        let k = if self.step == 0 { 1.0 } else { 0.05 };
        self.policy_avg += k * (policy_loss - self.policy_avg);
        self.value_avg += k * (value_loss - self.value_avg);
        self.step += 1;
    }
}

fn save_checkpoint(ck: &Checkpointing, net: &Net, adam: &Adam, at: &Progress) -> Result<()> {
    let scalar = |x: f64| Tensor::f_from_slice(&[x]);
    let mut named: Vec<(String, Tensor)> = net
        .vs
        .variables()
        .into_iter()
        .map(|(n, t)| (format!("net.{n}"), t))
        .collect();
    for (((n, _), m), v) in adam.vars.iter().zip(&adam.m).zip(&adam.v) {
        named.push((format!("adam_m.{n}"), m.shallow_clone()));
        named.push((format!("adam_v.{n}"), v.shallow_clone()));
    }
    named.push(("state.iteration".into(), scalar(ck.iteration as f64)?));
    named.push(("state.step".into(), scalar(at.step as f64)?));
    named.push(("state.adam_t".into(), scalar(adam.t as f64)?));
    named.push(("state.policy_avg".into(), scalar(at.policy_avg)?));
    named.push(("state.value_avg".into(), scalar(at.value_avg)?));
    let bytes = to_safetensors_bytes(&named, None)
        .with_context(|| format!("cannot save the training checkpoint {}", ck.path.display()))?;
    write_atomic(&ck.path, &bytes)
}

/// Restores a checkpoint of this iteration into `net` and `adam`; `None` if there is none
/// (or it belongs to another iteration).
fn load_checkpoint(ck: &Checkpointing, net: &mut Net, adam: &mut Adam) -> Result<Option<Progress>> {
    if !ck.path.exists() {
        return Ok(None);
    }
    let bad = |why: &str| {
        anyhow!(
            "the training checkpoint {} is unusable ({why}); delete it to train this stage from the start",
            ck.path.display()
        )
    };
    let bytes =
        std::fs::read(&ck.path).with_context(|| format!("cannot read {}", ck.path.display()))?;
    let (named, _) = from_safetensors_bytes(&bytes).map_err(|e| bad(&e.to_string()))?;
    let map: HashMap<String, Tensor> = named.into_iter().collect();
    let scalar = |k: &str| -> Result<f64> {
        let t = map.get(k).ok_or_else(|| bad(&format!("no {k}")))?;
        t.f_double_value(&[0])
            .map_err(|e| bad(&format!("{k}: {e}")))
    };
    if scalar("state.iteration")? as u32 != ck.iteration {
        return Ok(None);
    }
    // Each tensor must be there with the shape it has here (a checkpoint of another network
    // shape is refused rather than broadcast into this one).
    let restore = |dst: &mut Tensor, key: String| -> Result<()> {
        let src = map.get(&key).ok_or_else(|| bad(&format!("no {key}")))?;
        if src.size() != dst.size() {
            return Err(bad(&format!(
                "{key} has shape {:?}, this network needs {:?}",
                src.size(),
                dst.size()
            )));
        }
        tch::no_grad(|| dst.f_copy_(src)).map_err(|e| bad(&e.to_string()))
    };
    for (n, mut t) in net.vs.variables() {
        restore(&mut t, format!("net.{n}"))?;
    }
    for (((n, _), m), v) in adam.vars.iter().zip(&mut adam.m).zip(&mut adam.v) {
        restore(m, format!("adam_m.{n}"))?;
        restore(v, format!("adam_v.{n}"))?;
    }
    adam.t = scalar("state.adam_t")? as u64;
    Ok(Some(Progress {
        step: scalar("state.step")? as u64,
        policy_avg: scalar("state.policy_avg")?,
        value_avg: scalar("state.value_avg")?,
    }))
}

/// A mini-batch: inputs, policy targets and value targets, flat, refilled at every step.
struct Batch {
    inputs: Vec<f32>,
    policies: Vec<f32>,
    values: Vec<f32>,
}

impl Batch {
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
    let progress = step as f64 / cfg.train_steps.max(1) as f64;
    cfg.learning_rate * (0.1 + 0.9 * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()))
}

/// One optimizer step on `batch` at learning rate `lr`; returns the policy loss (cross-entropy)
/// and the value loss (mean squared error) before the step. `policy_targets_missing`: some
/// positions may have no policy target (all zero).
fn train_step(
    net: &Net,
    adam: &mut Adam,
    batch: &Batch,
    lr: f64,
    policy_targets_missing: bool,
) -> Result<(f64, f64)> {
    let (s, device) = (net.meta.shape, net.device());
    let bs = batch.values.len() as i64;
    let xs = Tensor::f_from_slice(&batch.inputs)?
        .f_view([bs, s.planes as i64, s.height as i64, s.width as i64])?
        .f_to_device(device)?;
    let target_p = Tensor::f_from_slice(&batch.policies)?
        .f_view([bs, s.actions as i64])?
        .f_to_device(device)?;
    let target_v = Tensor::f_from_slice(&batch.values)?.f_to_device(device)?;
    let (logits, value) = net.forward(&xs, true)?;
    let cross_entropy = target_p
        .f_mul(&logits.f_log_softmax(-1, Kind::Float)?)?
        .f_sum_dim_intlist(-1, false, Kind::Float)?;
    let policy_loss = if policy_targets_missing {
        // Averaged over the positions that have a policy target: a playout cap's cheap
        // searches leave theirs all zero (they teach the value only).
        let with_target = target_p.f_sum(Kind::Float)?.f_clamp_min(1.0)?;
        cross_entropy.f_sum(Kind::Float)?.f_div(&with_target)?
    } else {
        cross_entropy.f_mean(Kind::Float)?
    }
    .f_neg()?;
    let value_loss = value.f_mse_loss(&target_v, Reduction::Mean)?;
    let loss = policy_loss.f_add(&value_loss)?;
    adam.zero_grad()?;
    loss.f_backward()?;
    adam.step(lr)?;
    Ok((
        policy_loss.f_double_value(&[])?,
        value_loss.f_double_value(&[])?,
    ))
}

/// Saves a checkpoint after Ctrl-C, at the step a test stops at, or when the last save is
/// `every_seconds` old (never after the last step: training is done then). After Ctrl-C or
/// the test's stop, returns the error to stop with.
fn maybe_checkpoint(
    ck: &Checkpointing,
    net: &Net,
    adam: &Adam,
    at: &Progress,
    steps: u64,
    last_save: &mut Instant,
) -> Result<Option<anyhow::Error>> {
    let interrupted = INTERRUPTED.load(Ordering::SeqCst);
    let stop = ck.stop_after == Some(at.step);
    let due = last_save.elapsed().as_secs_f64() >= ck.every_seconds;
    if !(interrupted || stop || due) || at.step >= steps {
        return Ok(None);
    }
    save_checkpoint(ck, net, adam, at)?;
    *last_save = Instant::now();
    Ok((interrupted || stop).then(|| {
        anyhow!(
            "training interrupted at step {} of {steps}; saved in {}: run the same command again to continue",
            at.step,
            ck.path.display()
        )
    }))
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
    let mut adam = Adam::new(net, cfg.weight_decay)?;
    let mut at = Progress::default();
    if let Some(ck) = checkpointing {
        if let Some(p) = load_checkpoint(ck, net, &mut adam)? {
            at = p;
        }
    }
    let first_step = at.step;
    let _guard = checkpointing.map(|_| InterruptGuard::install());
    let mut batch = Batch::new::<G>(cfg.batch_size.max(1));
    let task = progress::task(cfg.train_steps, "steps", progress);
    task.set_position(at.step);
    let mut last_save = Instant::now();
    while at.step < cfg.train_steps {
        let step = at.step;
        fill_batch::<G>(samples, &syms, seed, step, &mut batch);
        let lr = learning_rate_at(cfg, step);
        let (pl, vl) = train_step(net, &mut adam, &batch, lr, cfg.playout_cap.is_some())?;
        if !pl.is_finite() || !vl.is_finite() {
            bail!("training diverged at step {step} (loss is not finite)");
        }
        at.record(pl, vl);
        task.inc(1);
        if step.is_multiple_of(10) {
            task.set_message(format!(
                "policy loss {:.3}, value loss {:.3}",
                at.policy_avg, at.value_avg
            ));
        }
        if let Some(ck) = checkpointing {
            let stop = maybe_checkpoint(ck, net, &adam, &at, cfg.train_steps, &mut last_save)?;
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
        steps: cfg.train_steps,
        policy_loss: at.policy_avg,
        value_loss: at.value_avg,
        seconds: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::tictactoe::TicTacToe;

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
        }
    }

    #[test]
    fn samples_take_the_movers_view_and_mix_in_the_root_value() {
        // X takes the top row: the first player wins.
        let x_wins = record(&[0, 3, 1, 4, 2], 1, &[0.5, -0.2, 0.1, 0.3, 0.9]);
        // O takes the middle row; no root values were kept for the last two plies.
        let o_wins = record(&[0, 3, 1, 4, 8, 5], -1, &[0.0, 0.4, -0.6, 0.2]);
        let records = [x_wins, o_wins];

        let s = samples_from::<TicTacToe>(&records, 0.0);
        assert_eq!(s.len(), 11);
        assert_eq!(
            s.values,
            [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0]
        );
        let s = samples_from::<TicTacToe>(&records, 0.25);
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
        assert_eq!(samples_from::<TicTacToe>(&[broken], 0.5).len(), 1);
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
