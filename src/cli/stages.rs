//! `zero selfplay`, `zero train`, `zero evaluate`: one stage of the cycle for one iteration.
//! They run the same code as `zero cycle`, which is what most users want.

use anyhow::Result;

use super::run_args::RunArgs;
use crate::players::Playable;
use crate::zero::cycle::{
    evaluate_report, read_state, selfplay_report, stage_evaluate, stage_self_play, stage_train,
    train_report,
};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    run: RunArgs,
    /// The iteration (default: the run's current one).
    #[arg(long)]
    iteration: Option<u32>,
}

#[derive(Clone, Copy)]
pub enum Which {
    SelfPlay,
    Train,
    Evaluate,
}

pub fn run(which: Which, args: Args) -> Result<()> {
    crate::with_board_game!(args.run.game, G => run_for::<G>(which, &args))
}

fn run_for<G: Playable>(which: Which, args: &Args) -> Result<()> {
    let (paths, cfg) = args.run.open()?;
    let iteration = match args.iteration {
        Some(0) => anyhow::bail!("iterations are numbered from 1"),
        Some(i) => i,
        None => read_state(&paths)?.iteration,
    };
    let progress = !args.run.json;
    let started = std::time::Instant::now();
    let line = match which {
        Which::SelfPlay => selfplay_report(
            iteration,
            &stage_self_play::<G>(&cfg, &paths, iteration, progress)?,
        ),
        Which::Train => train_report(
            iteration,
            &stage_train::<G>(&cfg, &paths, iteration, progress)?,
        ),
        Which::Evaluate => {
            let e = stage_evaluate::<G>(&cfg, &paths, iteration, progress)?;
            evaluate_report(iteration, &e, started.elapsed().as_secs_f64())?
        }
    };
    if args.run.json {
        println!("{line}");
    } else {
        println!("{}", super::describe_stage(&line));
    }
    Ok(())
}
