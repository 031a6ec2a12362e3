//! The training stage: `latest` (or `best`, the first time) trained on the replay window and
//! saved as `latest`, resumably.

use anyhow::Result;

use super::samples::{window_records, window_samples};
use super::train::{train, Checkpointing, TrainStats};
use crate::alphazero::config::RunConfig;
use crate::alphazero::research::reanalyse::reanalyse_window;
use crate::alphazero::run::best::ensure_best;
use crate::alphazero::run::paths::RunPaths;
use crate::core::rng::streams;
use crate::games::Game;
use crate::nn::{default_device, training_threads, Net, Shape, TorchThreads};

/// Seconds between saves of an unfinished training stage (a crash loses at most this much;
/// Ctrl-C loses nothing).
const TRAIN_CHECKPOINT_SECONDS: f64 = 30.0;

pub fn stage_train<G: Game>(
    cfg: &RunConfig,
    paths: &RunPaths,
    iteration: u32,
    progress: bool,
) -> Result<TrainStats> {
    ensure_best::<G>(cfg, paths)?;
    let from = if paths.latest().exists() {
        paths.latest()
    } else {
        paths.best()
    };
    let mut net = Net::load(&from, G::NAME, Shape::of::<G>(), default_device())?
        .with_precision(cfg.net.precision);
    let trained_before = net.meta.iteration == iteration;
    let mut window = window_records::<G>(cfg, &paths.data, iteration)?;
    // Before the threads go to training: the searches run as self-play's do. Not for a
    // network this stage trained already (training is then a no-op).
    let reanalysis = (cfg.research.reanalyse_positions > 0 && !trained_before)
        .then(|| {
            let records = &mut window.records;
            reanalyse_window::<G>(cfg, &net, records, window.older, iteration, progress)
        })
        .transpose()?;
    let samples = window_samples::<G>(cfg, &window.records);
    drop(window);
    // Nothing else runs while the network trains: every core goes to libtorch, unless its
    // steps are too small to share.
    let threads = training_threads(&net.meta.arch, Shape::of::<G>(), cfg.train.batch_size);
    let _threads = TorchThreads::set(threads);
    let checkpointing = Checkpointing {
        path: paths.train_checkpoint(),
        iteration,
        every_seconds: TRAIN_CHECKPOINT_SECONDS,
        stop_after: None,
    };
    // Training reads its rate from the settings: this iteration's, after any drop.
    let mut cfg_now = cfg.clone();
    cfg_now.train.learning_rate = cfg.learning_rate_of(iteration);
    let mut stats = train::<G>(
        &cfg_now,
        &mut net,
        &samples,
        streams::TRAINING_BATCHES.seed(cfg.seed, iteration as u64),
        Some(&checkpointing),
        progress,
    )?;
    stats.reanalysis = reanalysis;
    // A process that saved this stage's network and died before the run moved on left
    // `latest` trained already (the checkpoint then made `train` a no-op): count it once.
    if !trained_before {
        net.meta.training_steps += cfg.train.steps;
    }
    net.meta.iteration = iteration;
    net.save(&paths.latest())?;
    Ok(stats)
}
