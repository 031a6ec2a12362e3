//! Arguments shared by the pipeline's subcommands (cycle, selfplay, train, evaluate).

use std::path::PathBuf;

use anyhow::Result;

use crate::arena::AgentFactory;
use crate::catalog::Catalogued;
use crate::players::{BuildContext, PlayerSpec};

use crate::alphazero::config::{PlayoutCap, RunConfig};
use crate::alphazero::run::paths::RunPaths;
use crate::alphazero::run::state::{lock_run, open_run, RunLock};
use crate::core::limits::{at_most, MAX_GAMES, MAX_POSITIONS};
use crate::games::GameKind;
use crate::search::mcts::SearchKind;

#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    #[arg(long, value_enum, default_value_t = GameKind::Connect4)]
    pub game: GameKind,
    /// Settings preset: default (follows the device), cpu, gpu, long (cpu, 55 iterations; on a
    /// CPU without AMX, 2,000 Connect Four games an iteration, 1,200 in 32 bits), tiny.
    #[arg(long)]
    pub preset: Option<String>,
    /// Seed of every random choice of the run.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Also play `best` against this player every iteration (e.g. minimax:4 or solver).
    #[arg(long)]
    pub benchmark: Option<String>,
    /// The tree search of self-play and evaluation: puct (AlphaZero) or gumbel (Gumbel
    /// AlphaZero), with the preset's budget for it (Connect Four's cpu preset: gumbel, 16
    /// simulations x 3,000 games an iteration with AMX, 2,400 with bfloat16 vectors alone,
    /// 1,600 in 32 bits; puct, 64 x 400; its gpu preset: gumbel, 16 x 4,800 with a 5x128
    /// network over 24 workers; puct, 200 x 2,000 with a 6x128 network); the preset's when not
    /// given.
    #[arg(long)]
    pub search: Option<SearchKind>,
    /// Research: playout cap randomization (KataGo's). `FRACTION:SIMS` gives a random
    /// FRACTION of self-play moves the full search (noised, and a policy target) and the
    /// others a search of SIMS simulations (value target only); `off` searches every move
    /// fully. Off in every preset; a setting of the run, fixed when it starts.
    #[arg(long, hide = true, value_parser = parse_playout_cap, value_name = "FRACTION:SIMS")]
    pub playout_cap: Option<PlayoutCapArg>,
    /// Research: reanalysis (MuZero Reanalyse). Before each training stage, N positions drawn
    /// from the replay window's earlier iterations are searched again with the network about
    /// to train and train on the new search's policy and root value; 0 turns it off. Off in
    /// every preset; a setting of the run, fixed when it starts.
    #[arg(long, hide = true, value_name = "N")]
    pub reanalyse: Option<u64>,
    /// Games played together and written as one file (a chunk) instead of the preset's: the
    /// unit of work a cluster spreads (more chunks, more nodes busy; fewer games in lockstep,
    /// smaller network batches). A setting of the run, fixed when it starts.
    #[arg(long)]
    pub chunk_games: Option<u64>,
    /// Games against the benchmark player per iteration.
    #[arg(long, default_value_t = 20)]
    pub benchmark_games: u64,
    /// Where models live (`<models>/<game>/best.safetensors`, ...).
    #[arg(long, default_value = "models")]
    pub models: PathBuf,
    /// Where self-play records live (`<data>/<game>/iter-NNNN/`).
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    /// Print results as JSON lines.
    #[arg(long)]
    pub json: bool,
}

impl RunArgs {
    /// The run's paths and configuration (the saved one when resuming), and the lock that
    /// keeps other processes out of the run while it is held.
    pub fn open(&self) -> Result<(RunPaths, RunConfig, RunLock)> {
        // The command line's settings first: a mistyped preset must not leave directories.
        let (cfg, explicit) = self.settings()?;
        let paths = RunPaths::new(&self.models, &self.data, self.game.name());
        // Before anything is read or written: one process a run.
        let lock = lock_run(&paths)?;
        for pid in lock.stale_holders() {
            eprintln!(
                "note: process {pid} stopped without finishing its work on {}; resuming it",
                paths.models.display()
            );
        }
        let cfg = open_run(&paths, &cfg, explicit)?;
        Ok((paths, cfg, lock))
    }

    /// The settings the command line asks for (the preset's, changed by the options), and
    /// whether it asked for any; nothing is read or written.
    fn settings(&self) -> Result<(RunConfig, bool)> {
        let cuda = tch::Cuda::is_available();
        let mut cfg = RunConfig::preset_for_search(
            self.preset.as_deref().unwrap_or("default"),
            self.game,
            cuda,
            self.search,
        )?;
        if let Some(s) = self.seed {
            cfg.seed = s;
        }
        if let Some(b) = &self.benchmark {
            let _: PlayerSpec = b.parse()?;
            cfg.eval.benchmark = Some(b.clone());
            cfg.eval.benchmark_games =
                at_most("--benchmark-games", self.benchmark_games, MAX_GAMES)?;
        }
        if let Some(PlayoutCapArg(cap)) = self.playout_cap {
            cfg.research.playout_cap = cap;
        }
        if let Some(n) = self.reanalyse {
            cfg.research.reanalyse_positions = at_most("--reanalyse", n, MAX_POSITIONS)?;
        }
        if let Some(n) = self.chunk_games {
            anyhow::ensure!(n > 0, "--chunk-games must be at least 1");
            cfg.selfplay.chunk_games = at_most("--chunk-games", n, MAX_GAMES)?;
        }
        let explicit = self.preset.is_some()
            || self.seed.is_some()
            || self.benchmark.is_some()
            || self.search.is_some()
            || self.playout_cap.is_some()
            || self.reanalyse.is_some()
            || self.chunk_games.is_some();
        Ok((cfg, explicit))
    }

    /// The run's benchmark player, if it has one.
    pub fn benchmark_player<G: Catalogued>(
        &self,
        cfg: &RunConfig,
        paths: &RunPaths,
    ) -> Result<Option<BenchmarkPlayer<G>>> {
        let Some(spec) = &cfg.eval.benchmark else {
            return Ok(None);
        };
        let spec: PlayerSpec = spec.parse()?;
        let ctx = BuildContext {
            models_dir: paths.models.clone(),
            pretrained: crate::catalog::pretrained_model::<G>()?,
            ..BuildContext::default()
        };
        Ok(Some(BenchmarkPlayer {
            name: spec.to_string(),
            make: Box::new(move || spec.build::<G>(&ctx)),
        }))
    }
}

/// `--playout-cap`'s value: a cap, or none (`off`).
#[derive(Clone, Copy, Debug)]
pub struct PlayoutCapArg(pub Option<PlayoutCap>);

fn parse_playout_cap(s: &str) -> Result<PlayoutCapArg, String> {
    if s == "off" {
        return Ok(PlayoutCapArg(None));
    }
    let bad = || format!("'{s}' is not FRACTION:SIMS (e.g. 0.25:16) or off");
    let (fraction, sims) = s.split_once(':').ok_or_else(bad)?;
    let full_fraction: f64 = fraction.trim().parse().map_err(|_| bad())?;
    let fast_sims: u32 = sims.trim().parse().map_err(|_| bad())?;
    if !(full_fraction > 0.0 && full_fraction <= 1.0) {
        return Err(format!(
            "the share of full searches must be above 0 and at most 1, not {fraction}"
        ));
    }
    if fast_sims == 0 {
        return Err("the cheap searches need at least 1 simulation".to_string());
    }
    Ok(PlayoutCapArg(Some(PlayoutCap {
        full_fraction,
        fast_sims,
    })))
}

/// The fixed opponent `best` plays every iteration: its name and a factory for the match
/// threads.
pub struct BenchmarkPlayer<G> {
    name: String,
    make: Box<AgentFactory<'static, G>>,
}

impl<G> BenchmarkPlayer<G> {
    /// As the pipeline takes it.
    pub fn as_arg(&self) -> (&str, &AgentFactory<'static, G>) {
        (&self.name, self.make.as_ref())
    }
}
