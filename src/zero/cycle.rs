//! The stages and the loop that runs them, resumably: `models/<game>/state.json` says which
//! stage of which iteration comes next, and is advanced only after a stage's files are safely
//! written. Self-play keeps its finished games across interruptions; a stage cut short is
//! simply run again.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::config::RunConfig;
use super::files::{append_line, write_atomic};
use super::selfplay::{self_play, SelfPlayStats};
use super::train::{load_window, train, Checkpointing, TrainStats};

/// Seconds between saves of an unfinished training stage (a crash loses at most this much;
/// Ctrl-C loses nothing).
const TRAIN_CHECKPOINT_SECONDS: f64 = 30.0;
use crate::arena::{play_match, MatchOptions, MatchResult};
use crate::games::mix64;
use crate::nn::{default_device, Net, Shape};
use crate::players::{Agent, BuildContext, Playable, PlayerSpec};

/// Where a run keeps its files.
#[derive(Clone, Debug)]
pub struct RunPaths {
    /// `models/<game>`: best, latest, state, config, metrics.
    pub models: PathBuf,
    /// `data/<game>`: self-play records.
    pub data: PathBuf,
}

impl RunPaths {
    pub fn new(models_root: &Path, data_root: &Path, game: &str) -> RunPaths {
        RunPaths {
            models: models_root.join(game),
            data: data_root.join(game),
        }
    }
    pub fn best(&self) -> PathBuf {
        self.models.join("best.safetensors")
    }
    pub fn latest(&self) -> PathBuf {
        self.models.join("latest.safetensors")
    }
    fn state(&self) -> PathBuf {
        self.models.join("state.json")
    }
    fn config(&self) -> PathBuf {
        self.models.join("run.json")
    }
    pub fn metrics(&self) -> PathBuf {
        self.models.join("metrics.jsonl")
    }
    /// The unfinished training stage's state (deleted when the stage ends).
    pub fn train_checkpoint(&self) -> PathBuf {
        self.models.join("train-checkpoint.safetensors")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    SelfPlay,
    Train,
    Evaluate,
}

/// The next stage to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunState {
    pub iteration: u32,
    pub stage: Stage,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(serde_json::from_str(&text).with_context(|| {
            format!("{} is corrupt; delete it to start over", path.display())
        })?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    write_atomic(path, serde_json::to_string_pretty(value)?.as_bytes())
}

/// Loads the run's saved configuration, or saves `cfg` as it for a new run. A resumed run
/// keeps its settings; asking for other ones is an error rather than a silent mix.
pub fn open_run(paths: &RunPaths, cfg: &RunConfig, explicit: bool) -> Result<RunConfig> {
    match read_json::<RunConfig>(&paths.config())? {
        Some(saved) if explicit && saved != *cfg => bail!(
            "{} holds a run with other settings (preset '{}'); resume it without --preset/--seed, \
             or use another --models/--data directory",
            paths.models.display(),
            saved.preset
        ),
        Some(saved) => Ok(saved),
        None => {
            write_json(&paths.config(), cfg)?;
            Ok(cfg.clone())
        }
    }
}

pub fn read_state(paths: &RunPaths) -> Result<RunState> {
    Ok(read_json(&paths.state())?.unwrap_or(RunState {
        iteration: 1,
        stage: Stage::SelfPlay,
    }))
}

fn write_state(paths: &RunPaths, state: RunState) -> Result<()> {
    write_json(&paths.state(), &state)
}

/// Creates the random generation-0 network as `best` (and `latest`) if there is none.
pub fn ensure_best<G: Playable>(cfg: &RunConfig, paths: &RunPaths) -> Result<()> {
    if paths.best().exists() {
        return Ok(());
    }
    let mut net = Net::new_seeded(
        G::NAME,
        cfg.arch,
        Shape::of::<G>(),
        default_device(),
        cfg.seed,
    )?;
    net.meta.config = serde_json::to_value(cfg)?;
    net.save(&paths.latest())?;
    net.save(&paths.best())?;
    Ok(())
}

pub fn stage_self_play<G: Playable>(
    cfg: &RunConfig,
    paths: &RunPaths,
    iteration: u32,
    progress: bool,
) -> Result<SelfPlayStats> {
    ensure_best::<G>(cfg, paths)?;
    let net = Net::load(&paths.best(), G::NAME, Shape::of::<G>(), default_device())?;
    self_play::<G>(cfg, net, iteration, &paths.data, progress)
}

pub fn stage_train<G: Playable>(
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
    let mut net = Net::load(&from, G::NAME, Shape::of::<G>(), default_device())?;
    let samples = load_window::<G>(cfg, &paths.data, iteration)?;
    tch::manual_seed(mix64(cfg.seed ^ iteration as u64) as i64);
    let checkpointing = Checkpointing {
        path: paths.train_checkpoint(),
        iteration,
        every_seconds: TRAIN_CHECKPOINT_SECONDS,
        stop_after: None,
    };
    let stats = train::<G>(
        cfg,
        &mut net,
        &samples,
        mix64(cfg.seed ^ 0x7a11 ^ iteration as u64),
        Some(&checkpointing),
        progress,
    )?;
    net.meta.iteration = iteration;
    net.save(&paths.latest())?;
    // The finished stage is in `latest`; its checkpoint is spent.
    let _ = std::fs::remove_file(paths.train_checkpoint());
    Ok(stats)
}

#[derive(Clone, Debug, Serialize)]
pub struct EvalStats {
    pub latest_vs_best: MatchResult,
    pub score: f64,
    pub promoted: bool,
    pub generation: u32,
    pub benchmark: Option<MatchResult>,
}

fn net_factory<'a, G: Playable>(
    path: &'a Path,
    sims: u32,
    random_plies: u32,
) -> impl Fn() -> Result<Box<dyn Agent<G>>> + Sync + 'a {
    move || {
        Ok(Box::new(crate::zero::agent::net_agent::<G>(
            path,
            sims,
            random_plies,
            false,
        )?) as Box<dyn Agent<G>>)
    }
}

pub fn stage_evaluate<G: Playable>(
    cfg: &RunConfig,
    paths: &RunPaths,
    iteration: u32,
    progress: bool,
) -> Result<EvalStats> {
    ensure_best::<G>(cfg, paths)?;
    if !paths.latest().exists() {
        bail!("no latest model to evaluate in {}", paths.models.display());
    }
    let opts = MatchOptions {
        games: cfg.eval_games.max(2),
        seed: mix64(cfg.seed ^ 0xe7a1 ^ iteration as u64),
        threads: crate::cli::default_threads(),
        progress,
    };
    let (latest, best) = (paths.latest(), paths.best());
    let result = play_match::<G, _, _>(
        "latest",
        "best",
        net_factory::<G>(&latest, cfg.eval_sims, cfg.eval_random_plies),
        net_factory::<G>(&best, cfg.eval_sims, cfg.eval_random_plies),
        &opts,
    )?;
    let score = result.total.score();
    let best_meta = Net::read_meta(&best)?;
    let promoted = score >= cfg.promote_threshold;
    let mut generation = best_meta.generation;
    if promoted {
        let mut net = Net::load(&latest, G::NAME, Shape::of::<G>(), default_device())?;
        generation += 1;
        net.meta.generation = generation;
        net.meta.iteration = iteration;
        net.save(&paths.best())?;
        // latest carries the same generation number from now on
        net.save(&paths.latest())?;
    }
    let benchmark = match &cfg.benchmark {
        Some(spec) if cfg.benchmark_games > 0 => {
            let spec: PlayerSpec = spec.parse()?;
            let ctx = BuildContext {
                models_dir: paths.models.clone(),
                ..BuildContext::default()
            };
            let opts = MatchOptions {
                games: cfg.benchmark_games,
                seed: mix64(cfg.seed ^ 0xbe4c ^ iteration as u64),
                ..opts
            };
            Some(play_match::<G, _, _>(
                "best",
                &spec.to_string(),
                net_factory::<G>(&best, cfg.eval_sims, cfg.eval_random_plies),
                || spec.build::<G>(&ctx),
                &opts,
            )?)
        }
        _ => None,
    };
    Ok(EvalStats {
        latest_vs_best: result,
        score,
        promoted,
        generation,
        benchmark,
    })
}

/// Runs the cycle until `iterations` iterations are complete, resuming where a previous run
/// stopped. Calls `report` with one JSON object per finished stage.
pub fn run_cycle<G: Playable>(
    cfg: &RunConfig,
    paths: &RunPaths,
    iterations: u32,
    progress: bool,
    report: &mut dyn FnMut(&serde_json::Value),
) -> Result<RunState> {
    let mut state = read_state(paths)?;
    while state.iteration <= iterations {
        let i = state.iteration;
        let started = std::time::Instant::now();
        let line = match state.stage {
            Stage::SelfPlay => {
                let s = stage_self_play::<G>(cfg, paths, i, progress)?;
                state.stage = Stage::Train;
                selfplay_report(i, &s)
            }
            Stage::Train => {
                let t = stage_train::<G>(cfg, paths, i, progress)?;
                state.stage = Stage::Evaluate;
                train_report(i, &t)
            }
            Stage::Evaluate => {
                let e = stage_evaluate::<G>(cfg, paths, i, progress)?;
                state = RunState {
                    iteration: i + 1,
                    stage: Stage::SelfPlay,
                };
                evaluate_report(i, &e, started.elapsed().as_secs_f64())?
            }
        };
        append_line(&paths.metrics(), &serde_json::to_string(&line)?)?;
        write_state(paths, state)?;
        report(&line);
    }
    Ok(state)
}

/// The JSON line of a finished self-play stage (metrics.jsonl, `--json`).
pub fn selfplay_report(iteration: u32, s: &SelfPlayStats) -> serde_json::Value {
    serde_json::json!({"iteration": iteration, "stage": "selfplay", "games": s.games,
        "positions": s.positions, "seconds": s.seconds,
        "positions_per_s": s.positions_per_s(), "nn_evals_per_s": s.nn_evals_per_s(),
        "mean_batch": s.mean_batch(), "cache_hit_rate": s.cache_hit_rate()})
}

/// The JSON line of a finished training stage.
pub fn train_report(iteration: u32, t: &TrainStats) -> serde_json::Value {
    serde_json::json!({"iteration": iteration, "stage": "train", "samples": t.samples,
        "steps": t.steps, "policy_loss": t.policy_loss, "value_loss": t.value_loss,
        "seconds": t.seconds})
}

/// The JSON line of a finished evaluation stage.
pub fn evaluate_report(iteration: u32, e: &EvalStats, seconds: f64) -> Result<serde_json::Value> {
    let mut v = serde_json::json!({"iteration": iteration, "stage": "evaluate",
        "score_vs_best": e.score, "promoted": e.promoted,
        "generation": e.generation, "latest_vs_best": e.latest_vs_best,
        "seconds": seconds});
    if let Some(b) = &e.benchmark {
        v["benchmark"] = serde_json::to_value(b)?;
    }
    Ok(v)
}
