//! Training: a replay window over recent iterations, symmetry augmentation, loss = policy
//! cross-entropy + value MSE (+ L2 through weight decay), Adam with a cosine learning rate.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Result};
use rand::Rng;
use serde::Serialize;
use tch::{nn::OptimizerConfig, Kind, Reduction, Tensor};

use super::config::RunConfig;
use super::records::{read_iteration, GameRecord};
use crate::games::{Game, Player};
use crate::nn::Net;
use crate::players::rng_from_seed;

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
        records.extend(read_iteration(data_dir, G::NAME, i)?);
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

/// Trains `net` in place for `cfg.train_steps` mini-batches drawn from `samples`, each position
/// under a random symmetry of the game.
pub fn train<G: Game>(
    cfg: &RunConfig,
    net: &mut Net,
    samples: &Samples,
    seed: u64,
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
    let mut rng = rng_from_seed(seed);
    let mut opt = tch::nn::Adam::default()
        .wd(cfg.weight_decay)
        .build(&net.vs, cfg.learning_rate)?;
    let bs = cfg.batch_size.max(1);
    let mut xb = vec![0.0f32; bs * isz];
    let mut pb = vec![0.0f32; bs * a];
    let mut vb = vec![0.0f32; bs];
    let bar = crate::cli::progress_bar(cfg.train_steps, "steps", progress);
    let (mut pl_avg, mut vl_avg) = (0.0f64, 0.0f64);
    for step in 0..cfg.train_steps {
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
        opt.set_lr(lr);
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
        opt.backward_step(&loss);
        let (pl, vl) = (policy_loss.double_value(&[]), value_loss.double_value(&[]));
        if !pl.is_finite() || !vl.is_finite() {
            bail!("training diverged at step {step} (loss is not finite)");
        }
        let k = if step == 0 { 1.0 } else { 0.05 };
        pl_avg += k * (pl - pl_avg);
        vl_avg += k * (vl - vl_avg);
        bar.inc(1);
        if step % 10 == 0 {
            bar.set_message(format!("policy loss {pl_avg:.3}, value loss {vl_avg:.3}"));
        }
    }
    bar.finish_and_clear();
    net.meta.training_steps += cfg.train_steps;
    Ok(TrainStats {
        samples: samples.len(),
        steps: cfg.train_steps,
        policy_loss: pl_avg,
        value_loss: vl_avg,
        seconds: started.elapsed().as_secs_f64(),
    })
}
