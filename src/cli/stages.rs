//! `zero selfplay`, `zero train`, `zero evaluate`: one stage of the cycle for one iteration.
//! They run the same code as `zero cycle`, which is what most users want.

use anyhow::Result;

use super::describe_stage;
use super::run_args::{BenchmarkPlayer, RunArgs};
use crate::alphazero::metrics::StageRecord;
use crate::alphazero::stages::{stage_evaluate, stage_self_play, stage_train};
use crate::alphazero::state::{read_state, Stage};
use crate::players::Playable;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    run: RunArgs,
    /// The iteration (default: the run's current one).
    #[arg(long)]
    iteration: Option<u32>,
}

pub fn run(which: Stage, args: Args) -> Result<()> {
    crate::with_board_game!(args.run.game, G => run_for::<G>(which, &args))
}

fn run_for<G: Playable>(which: Stage, args: &Args) -> Result<()> {
    let (paths, cfg, _lock) = args.run.open()?;
    let iteration = match args.iteration {
        Some(0) => anyhow::bail!("iterations are numbered from 1"),
        Some(i) => i,
        None => read_state(&paths)?.iteration,
    };
    let progress = !args.run.json;
    let started = std::time::Instant::now();
    let record = match which {
        Stage::SelfPlay => StageRecord::selfplay(
            iteration,
            &stage_self_play::<G>(&cfg, &paths, iteration, progress)?,
        ),
        Stage::Train => StageRecord::train(
            iteration,
            &stage_train::<G>(&cfg, &paths, iteration, progress)?,
        ),
        Stage::Evaluate => {
            let benchmark = args.run.benchmark_player::<G>(&cfg, &paths)?;
            let benchmark = benchmark.as_ref().map(BenchmarkPlayer::as_arg);
            let e = stage_evaluate::<G>(&cfg, &paths, iteration, benchmark, progress)?;
            StageRecord::evaluate(iteration, &e, started.elapsed().as_secs_f64())
        }
    };
    if args.run.json {
        super::print_json(&record)
    } else {
        println!("{}", describe_stage(&record));
        Ok(())
    }
}
