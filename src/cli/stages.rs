//! `zero selfplay`, `zero train`, `zero evaluate`: one stage of the cycle for one iteration.
//! They run the same code as `zero cycle`, which is what most users want. Self-play and the
//! evaluation's match also run in shards (a range of game numbers), which is how a cluster
//! spreads them: see `scripts/zero-ray`.

use std::ops::Range;
use std::path::PathBuf;

use anyhow::{bail, Result};

use super::describe_stage;
use super::run_args::{BenchmarkPlayer, RunArgs};
use crate::alphazero::config::RunConfig;
use crate::alphazero::cycle::run_next_stage;
use crate::alphazero::eval_shards::{merge_shards, play_eval_shard, read_shard, write_shard};
use crate::alphazero::metrics::{drop_records_from, StageRecord};
use crate::alphazero::paths::RunPaths;
use crate::alphazero::stages::{stage_evaluate, stage_self_play, stage_train};
use crate::alphazero::state::{read_state, RunState, Stage};
use crate::arena::MatchResult;
use crate::players::Playable;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    run: RunArgs,
    /// The iteration (default: the run's current one).
    #[arg(long)]
    iteration: Option<u32>,
    /// Self-play or evaluation in a shard: only games FROM.. of the iteration (self-play:
    /// whole chunks, a multiple of the preset's chunk size). Needs --games-to.
    #[arg(long, value_name = "FROM", requires = "games_to")]
    games_from: Option<u64>,
    /// The end (exclusive) of the shard's games.
    #[arg(long, value_name = "TO", requires = "games_from")]
    games_to: Option<u64>,
    /// Evaluation in a shard: the file the shard's games go to (latest's value of each);
    /// nothing of the run is changed. Merge the shards with --merge.
    #[arg(long, value_name = "FILE", requires = "games_from")]
    shard_out: Option<PathBuf>,
    /// Evaluation from shards played elsewhere: these shard files, which must cover the
    /// match's games once each, decide the promotion as the match played here would.
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with = "games_from")]
    merge: Vec<PathBuf>,
    /// Also append the stage's record to the run's metrics and advance its state, as `zero
    /// cycle` does; only for the stage that comes next (a stage whose files are all there
    /// already, made by a cluster, only records).
    #[arg(long, conflicts_with = "games_from")]
    record: bool,
}

pub fn run(which: Stage, args: Args) -> Result<()> {
    crate::with_board_game!(args.run.game, G => run_for::<G>(which, &args))
}

impl Args {
    /// The shard's games, if it is one, after checking the options fit the stage.
    fn shard(&self, which: Stage) -> Result<Option<Range<u64>>> {
        if which != Stage::Evaluate && (self.shard_out.is_some() || !self.merge.is_empty()) {
            bail!("--shard-out and --merge are options of `zero evaluate`");
        }
        let Some((from, to)) = self.games_from.zip(self.games_to) else {
            return Ok(None);
        };
        match which {
            Stage::Train => bail!("training is one task: --games-from/--games-to do not apply"),
            Stage::Evaluate if self.shard_out.is_none() => {
                bail!("an evaluation shard needs --shard-out FILE for its games")
            }
            _ => Ok(Some(from..to)),
        }
    }
}

fn run_for<G: Playable>(which: Stage, args: &Args) -> Result<()> {
    let shard = args.shard(which)?;
    let (paths, cfg, _lock) = args.run.open()?;
    let iteration = match args.iteration {
        Some(0) => bail!("iterations are numbered from 1"),
        Some(i) => i,
        None => read_state(&paths)?.iteration,
    };
    let progress = !args.run.json;
    let played = merged_match::<G>(&cfg, iteration, &args.merge)?;
    if let (Stage::Evaluate, Some(games), Some(out)) = (which, &shard, &args.shard_out) {
        let shard = play_eval_shard::<G>(&cfg, &paths, iteration, games.clone(), progress)?;
        write_shard(out, &shard)?;
        return if args.run.json {
            super::print_json(&shard)
        } else {
            println!(
                "iteration {iteration}: evaluation games {}..{} played in {:.1} s, written to {}",
                shard.from,
                shard.to,
                shard.seconds,
                out.display()
            );
            Ok(())
        };
    }
    let record = if args.record {
        record_stage::<G>(
            args,
            &cfg,
            &paths,
            RunState {
                iteration,
                stage: which,
            },
            played,
        )?
    } else {
        stage_only::<G>(args, &cfg, &paths, which, iteration, shard, played)?
    };
    if args.run.json {
        super::print_json(&record)
    } else {
        println!("{}", describe_stage(&record));
        Ok(())
    }
}

/// The evaluation's match merged from the shard files `files`, if any are given.
fn merged_match<G: Playable>(
    cfg: &RunConfig,
    iteration: u32,
    files: &[PathBuf],
) -> Result<Option<MatchResult>> {
    if files.is_empty() {
        return Ok(None);
    }
    let shards = files
        .iter()
        .map(|f| read_shard(f))
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(merge_shards::<G>(cfg, iteration, shards)?))
}

/// Runs one stage (or a self-play shard) without touching the run's state or metrics.
fn stage_only<G: Playable>(
    args: &Args,
    cfg: &RunConfig,
    paths: &RunPaths,
    which: Stage,
    iteration: u32,
    shard: Option<Range<u64>>,
    played: Option<MatchResult>,
) -> Result<StageRecord> {
    let progress = !args.run.json;
    let started = std::time::Instant::now();
    Ok(match which {
        Stage::SelfPlay => StageRecord::selfplay(
            iteration,
            &stage_self_play::<G>(cfg, paths, iteration, shard, progress)?,
        ),
        Stage::Train => StageRecord::train(
            iteration,
            &stage_train::<G>(cfg, paths, iteration, progress)?,
        ),
        Stage::Evaluate => {
            let benchmark = args.run.benchmark_player::<G>(cfg, paths)?;
            let benchmark = benchmark.as_ref().map(BenchmarkPlayer::as_arg);
            let e = stage_evaluate::<G>(cfg, paths, iteration, benchmark, played, progress)?;
            StageRecord::evaluate(iteration, &e, started.elapsed().as_secs_f64())
        }
    })
}

/// Runs the stage `at` as the cycle does, recording it, if it is the run's next stage.
fn record_stage<G: Playable>(
    args: &Args,
    cfg: &RunConfig,
    paths: &RunPaths,
    at: RunState,
    played: Option<MatchResult>,
) -> Result<StageRecord> {
    let next = read_state(paths)?;
    if next != at {
        bail!(
            "--record records the run's next stage, which is {:?} of iteration {} (not {:?} of \
             iteration {})",
            next.stage,
            next.iteration,
            at.stage,
            at.iteration
        );
    }
    // Records of stages that a stopped process finished but did not get to count as done.
    drop_records_from(&paths.metrics(), next)?;
    let benchmark = args.run.benchmark_player::<G>(cfg, paths)?;
    let benchmark = benchmark.as_ref().map(BenchmarkPlayer::as_arg);
    let progress = !args.run.json;
    let (record, _) = run_next_stage::<G>(cfg, paths, at, benchmark, played, progress)?;
    Ok(record)
}
