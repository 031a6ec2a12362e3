//! `zero selfplay`, `zero train`, `zero evaluate`: one stage of the cycle for one iteration.
//! They run the same code as `zero cycle`, which is what most users want. Self-play and the
//! evaluation's match also run in shards (a range of game numbers), which is how a cluster
//! spreads them: see `scripts/zero-ray`.

use std::ops::Range;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use super::describe_stage;
use super::run_args::{BenchmarkPlayer, RunArgs};
use crate::alphazero::config::RunConfig;
use crate::alphazero::evaluation::shards::{
    merge_shards, play_eval_shard, read_shard, write_shard,
};
use crate::alphazero::evaluation::stage::stage_evaluate;
use crate::alphazero::run::cycle::{run_next_stage, FromShards};
use crate::alphazero::run::metrics::{drop_records_from, StageRecord};
use crate::alphazero::run::paths::RunPaths;
use crate::alphazero::run::state::{read_state, RunState, Stage};
use crate::alphazero::selfplay::stage::stage_self_play;
use crate::alphazero::selfplay::stats::SelfPlayStats;
use crate::alphazero::training::stage::stage_train;
use crate::catalog::Catalogued;
use crate::core::files::parse_json;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    run: RunArgs,
    /// The iteration (default: the run's current one).
    #[arg(long)]
    iteration: Option<u32>,
    /// Self-play or evaluation in a shard: only games FROM.. of the iteration (self-play:
    /// whole chunks, a multiple of the run's chunk size). Needs --games-to.
    #[arg(long, value_name = "FROM", requires = "games_to")]
    games_from: Option<u64>,
    /// The end (exclusive) of the shard's games.
    #[arg(long, value_name = "TO", requires = "games_from")]
    games_to: Option<u64>,
    /// Evaluation in a shard: the file the shard's games go to (latest's value of each);
    /// nothing of the run is changed. Merge the shards with --merge.
    #[arg(long, value_name = "FILE", requires = "games_from")]
    shard_out: Option<PathBuf>,
    /// Shards played elsewhere. Evaluation: these shard files, which must cover the match's
    /// games once each, decide the promotion as the match played here would. Self-play: the
    /// shards' JSON output (`--games-from ... --json`), whose figures the record adds up (their
    /// games are the chunks already in --data).
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
        if which != Stage::Evaluate && self.shard_out.is_some() {
            bail!("--shard-out is an option of `zero evaluate`");
        }
        if which == Stage::Train && !self.merge.is_empty() {
            bail!("training is one task: --merge does not apply");
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

fn run_for<G: Catalogued>(which: Stage, args: &Args) -> Result<()> {
    let shard = args.shard(which)?;
    let (paths, cfg, _lock) = args.run.open()?;
    let iteration = match args.iteration {
        Some(0) => bail!("iterations are numbered from 1"),
        Some(i) => i,
        None => read_state(&paths)?.iteration,
    };
    let progress = !args.run.json;
    let shards = from_shards::<G>(&cfg, which, iteration, &args.merge)?;
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
    if let (Stage::SelfPlay, Some(games)) = (which, &shard) {
        let games = Some(games.clone());
        let stats = stage_self_play::<G>(&cfg, &paths, iteration, games, None, progress)?;
        return if args.run.json {
            // The raw figures, which `--merge` adds up.
            super::print_json(&stats)
        } else {
            println!(
                "{}",
                describe_stage(&StageRecord::selfplay(iteration, &stats))
            );
            Ok(())
        };
    }
    let record = if args.record {
        let at = RunState {
            iteration,
            stage: which,
        };
        record_stage::<G>(args, &cfg, &paths, at, shards)?
    } else {
        stage_only::<G>(args, &cfg, &paths, which, iteration, shards)?
    };
    if args.run.json {
        super::print_json(&record)
    } else {
        println!("{}", describe_stage(&record));
        Ok(())
    }
}

/// What the shard files `files` bring to the stage: the evaluation's match merged, or the
/// self-play shards' figures added up.
fn from_shards<G: Catalogued>(
    cfg: &RunConfig,
    which: Stage,
    iteration: u32,
    files: &[PathBuf],
) -> Result<FromShards> {
    let mut shards = FromShards::default();
    if files.is_empty() {
        return Ok(shards);
    }
    if which == Stage::Evaluate {
        let read = files.iter().map(|f| read_shard(f));
        let read = read.collect::<Result<Vec<_>>>()?;
        shards.evaluation = Some(merge_shards::<G>(cfg, iteration, read)?);
    } else {
        let mut total = SelfPlayStats::default();
        for f in files {
            let bytes = std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?;
            total.add_shards(&parse_json::<SelfPlayStats>(f, &bytes)?);
        }
        shards.selfplay = Some(total);
    }
    Ok(shards)
}

/// Runs one stage (or a self-play shard) without touching the run's state or metrics.
fn stage_only<G: Catalogued>(
    args: &Args,
    cfg: &RunConfig,
    paths: &RunPaths,
    which: Stage,
    iteration: u32,
    shards: FromShards,
) -> Result<StageRecord> {
    let progress = !args.run.json;
    let started = std::time::Instant::now();
    Ok(match which {
        Stage::SelfPlay => StageRecord::selfplay(
            iteration,
            &stage_self_play::<G>(
                cfg,
                paths,
                iteration,
                None,
                shards.selfplay.as_ref(),
                progress,
            )?,
        ),
        Stage::Train => StageRecord::train(
            iteration,
            &stage_train::<G>(cfg, paths, iteration, progress)?,
        ),
        Stage::Evaluate => {
            let benchmark = args.run.benchmark_player::<G>(cfg, paths)?;
            let benchmark = benchmark.as_ref().map(BenchmarkPlayer::as_arg);
            let e = stage_evaluate::<G>(
                cfg,
                paths,
                iteration,
                benchmark,
                shards.evaluation,
                progress,
            )?;
            StageRecord::evaluate(iteration, &e, started.elapsed().as_secs_f64())
        }
    })
}

/// Runs the stage `at` as the cycle does, recording it, if it is the run's next stage.
fn record_stage<G: Catalogued>(
    args: &Args,
    cfg: &RunConfig,
    paths: &RunPaths,
    at: RunState,
    shards: FromShards,
) -> Result<StageRecord> {
    let next = read_state(paths)?;
    if next != at {
        bail!(
            "--record records the run's next stage, which is `zero {}` of iteration {} (not \
             `zero {}` of iteration {})",
            command(next.stage),
            next.iteration,
            command(at.stage),
            at.iteration
        );
    }
    // Records of stages that a stopped process finished but did not get to count as done.
    drop_records_from(&paths.metrics(), next)?;
    let benchmark = args.run.benchmark_player::<G>(cfg, paths)?;
    let benchmark = benchmark.as_ref().map(BenchmarkPlayer::as_arg);
    let progress = !args.run.json;
    let (record, _) = run_next_stage::<G>(cfg, paths, at, benchmark, shards, progress)?;
    Ok(record)
}

/// The command that runs a stage.
fn command(stage: Stage) -> &'static str {
    match stage {
        Stage::SelfPlay => "selfplay",
        Stage::Train => "train",
        Stage::Evaluate => "evaluate",
    }
}
