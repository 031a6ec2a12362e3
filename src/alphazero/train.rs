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

use super::config::RunConfig;
use super::records::{read_iteration, GameRecord};
use crate::core::progress;
use crate::core::rng::{mix64, rng_from_seed};
use crate::games::{Game, Player};
use crate::nn::Net;

/// Spreads step numbers over the seed space: 2^64 divided by the golden ratio, splitmix64's
/// increment.
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// Training positions: inputs, policy targets and value targets, flat.
pub struct Samples {
    pub inputs: Vec<f32>,
    pub policies: Vec<f32>,
    pub values: Vec<f32>,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.values.len()
    }
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// Replays records into training positions. The value target mixes the game's result with
/// the search's root value (`mix` of the latter), both from the mover's view.
pub fn samples_from<G: Game>(records: &[GameRecord], mix: f32) -> Samples {
    let (isz, a) = (G::input_size(), G::NUM_ACTIONS);
    let mut s = Samples {
        inputs: Vec::new(),
        policies: Vec::new(),
        values: Vec::new(),
    };
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
    Ok(samples_from::<G>(&records, cfg.value_target_mix))
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
/// previous behaviour (terminate) is back.
struct InterruptGuard {
    previous: libc::sighandler_t,
}

impl InterruptGuard {
    fn install() -> InterruptGuard {
        INTERRUPTED.store(false, Ordering::SeqCst);
        let handler = on_interrupt as extern "C" fn(libc::c_int);
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        let previous = unsafe { libc::signal(libc::SIGINT, handler as libc::sighandler_t) };
        InterruptGuard { previous }
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        // SAFETY: puts back the handler that was there before `install`.
        unsafe { libc::signal(libc::SIGINT, self.previous) };
    }
}

/// Adam (with L2 weight decay added to the gradient, as libtorch's `Adam`), written out so
/// that its moments can be saved in a checkpoint and training resumes exactly.
struct Adam {
    vars: Vec<(String, Tensor)>,
    m: Vec<Tensor>,
    v: Vec<Tensor>,
    t: u64,
    weight_decay: f64,
}

const BETA1: f64 = 0.9;
const BETA2: f64 = 0.999;
const EPS: f64 = 1e-8;

impl Adam {
    fn new(net: &Net, weight_decay: f64) -> Adam {
        let mut vars: Vec<(String, Tensor)> = net
            .vs
            .variables()
            .into_iter()
            .filter(|(_, t)| t.requires_grad())
            .collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        let m = vars.iter().map(|(_, t)| t.zeros_like()).collect();
        let v = vars.iter().map(|(_, t)| t.zeros_like()).collect();
        Adam {
            vars,
            m,
            v,
            t: 0,
            weight_decay,
        }
    }
    fn zero_grad(&mut self) {
        for (_, p) in self.vars.iter_mut() {
            p.zero_grad();
        }
    }
    fn step(&mut self, lr: f64) {
        self.t += 1;
        let bc1 = 1.0 - BETA1.powi(self.t as i32);
        let bc2 = 1.0 - BETA2.powi(self.t as i32);
        tch::no_grad(|| {
            for (((_, p), m), v) in self.vars.iter_mut().zip(&mut self.m).zip(&mut self.v) {
                let mut g = p.grad();
                if !g.defined() {
                    continue;
                }
                // In place where libtorch's own Adam is: few temporaries, few passes.
                if self.weight_decay != 0.0 {
                    let _ = g.g_add_(&(&*p * self.weight_decay));
                }
                let _ = m.lerp_(&g, 1.0 - BETA1);
                let _ = v.g_mul_scalar_(BETA2);
                let _ = v.addcmul_(&(&g * (1.0 - BETA2)), &g);
                let mut denom = v.sqrt();
                let _ = denom.g_div_scalar_(bc2.sqrt());
                let _ = denom.g_add_scalar_(EPS);
                let _ = p.addcdiv_(&(&*m * (-lr / bc1)), &denom);
            }
        });
    }
}

/// Training progress that a checkpoint keeps.
struct Progress {
    step: u64,
    policy_avg: f64,
    value_avg: f64,
}

fn save_checkpoint(ck: &Checkpointing, net: &Net, adam: &Adam, at: &Progress) -> Result<()> {
    let scalar = |x: f64| Tensor::from_slice(&[x]);
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
    named.push(("state.iteration".into(), scalar(ck.iteration as f64)));
    named.push(("state.step".into(), scalar(at.step as f64)));
    named.push(("state.adam_t".into(), scalar(adam.t as f64)));
    named.push(("state.policy_avg".into(), scalar(at.policy_avg)));
    named.push(("state.value_avg".into(), scalar(at.value_avg)));
    if let Some(dir) = ck.path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let tmp = ck.path.with_extension("tmp.safetensors");
    Tensor::write_safetensors(&named, &tmp)
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &ck.path)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), ck.path.display()))?;
    Ok(())
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
    let named = Tensor::read_safetensors(&ck.path).map_err(|e| bad(&e.to_string()))?;
    let map: HashMap<String, Tensor> = named.into_iter().collect();
    let scalar = |k: &str| -> Result<f64> {
        map.get(k)
            .map(|t| t.double_value(&[0]))
            .ok_or_else(|| bad(&format!("no {k}")))
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

/// Trains `net` in place for `cfg.train_steps` mini-batches drawn from `samples`, each position
/// under a random symmetry of the game. Step `k` draws its batch from a generator seeded by
/// `seed` and `k`, so a run resumed from a checkpoint trains exactly as an uninterrupted one.
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
    let (isz, a) = (G::input_size(), G::NUM_ACTIONS);
    let shape = net.meta.shape;
    let device = net.device();
    let syms = G::symmetries();
    let mut adam = Adam::new(net, cfg.weight_decay);
    let mut at = Progress {
        step: 0,
        policy_avg: 0.0,
        value_avg: 0.0,
    };
    if let Some(ck) = checkpointing {
        if let Some(p) = load_checkpoint(ck, net, &mut adam)? {
            at = p;
        }
    }
    let _guard = checkpointing.map(|_| InterruptGuard::install());
    let bs = cfg.batch_size.max(1);
    let mut xb = vec![0.0f32; bs * isz];
    let mut pb = vec![0.0f32; bs * a];
    let mut vb = vec![0.0f32; bs];
    let task = progress::task(cfg.train_steps, "steps", progress);
    task.set_position(at.step);
    let mut last_save = Instant::now();
    while at.step < cfg.train_steps {
        let step = at.step;
        let mut rng = rng_from_seed(mix64(seed ^ step.wrapping_mul(GOLDEN_GAMMA)));
        for b in 0..bs {
            let i = rng.random_range(0..samples.len());
            let sym = &syms[rng.random_range(0..syms.len())];
            sym.apply_planes(
                &samples.inputs[i * isz..(i + 1) * isz],
                &mut xb[b * isz..(b + 1) * isz],
            );
            sym.apply_policy(
                &samples.policies[i * a..(i + 1) * a],
                &mut pb[b * a..(b + 1) * a],
            );
            vb[b] = samples.values[i];
        }
        let progress_frac = step as f64 / cfg.train_steps.max(1) as f64;
        let lr = cfg.learning_rate
            * (0.1 + 0.9 * 0.5 * (1.0 + (std::f64::consts::PI * progress_frac).cos()));
        let xs = Tensor::from_slice(&xb)
            .view([
                bs as i64,
                shape.planes as i64,
                shape.height as i64,
                shape.width as i64,
            ])
            .to_device(device);
        let target_p = Tensor::from_slice(&pb)
            .view([bs as i64, a as i64])
            .to_device(device);
        let target_v = Tensor::from_slice(&vb).to_device(device);
        let (logits, value) = net.forward(&xs, true);
        let policy_loss = -(target_p * logits.log_softmax(-1, Kind::Float))
            .sum_dim_intlist(-1, false, Kind::Float)
            .mean(Kind::Float);
        let value_loss = value.mse_loss(&target_v, Reduction::Mean);
        let loss = &policy_loss + &value_loss;
        adam.zero_grad();
        loss.backward();
        adam.step(lr);
        let (pl, vl) = (policy_loss.double_value(&[]), value_loss.double_value(&[]));
        if !pl.is_finite() || !vl.is_finite() {
            bail!("training diverged at step {step} (loss is not finite)");
        }
        let k = if step == 0 { 1.0 } else { 0.05 };
        at.policy_avg += k * (pl - at.policy_avg);
        at.value_avg += k * (vl - at.value_avg);
        at.step += 1;
        task.inc(1);
        if step.is_multiple_of(10) {
            task.set_message(format!(
                "policy loss {:.3}, value loss {:.3}",
                at.policy_avg, at.value_avg
            ));
        }
        if let Some(ck) = checkpointing {
            let interrupted = INTERRUPTED.load(Ordering::SeqCst);
            let stop = ck.stop_after == Some(at.step);
            let due = last_save.elapsed().as_secs_f64() >= ck.every_seconds;
            if (interrupted || stop || due) && at.step < cfg.train_steps {
                save_checkpoint(ck, net, &adam, &at)?;
                last_save = Instant::now();
                if interrupted || stop {
                    task.abandon();
                    bail!(
                        "training interrupted at step {} of {}; saved in {}: run the same command again to continue",
                        at.step,
                        cfg.train_steps,
                        ck.path.display()
                    );
                }
            }
        }
    }
    drop(task);
    net.meta.training_steps += cfg.train_steps;
    Ok(TrainStats {
        samples: samples.len(),
        steps: cfg.train_steps,
        policy_loss: at.policy_avg,
        value_loss: at.value_avg,
        seconds: started.elapsed().as_secs_f64(),
    })
}
