//! `zero selfplay`, `zero train`, `zero evaluate`: one stage of the cycle for one iteration.
//! They run the same code as `zero cycle`, which is what most users want.

use anyhow::Result;

use super::run_args::RunArgs;
use crate::players::Playable;
use crate::zero::cycle::{read_state, stage_evaluate, stage_self_play, stage_train};

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
    let line = match which {
        Which::SelfPlay => {
            let s = stage_self_play::<G>(&cfg, &paths, iteration, progress)?;
            serde_json::json!({"iteration": iteration, "stage": "selfplay", "games": s.games,
                "positions": s.positions, "seconds": s.seconds,
                "positions_per_s": s.positions_per_s(), "nn_evals_per_s": s.nn_evals_per_s(),
                "mean_batch": s.mean_batch(), "cache_hit_rate": s.cache_hit_rate()})
        }
        Which::Train => {
            let t = stage_train::<G>(&cfg, &paths, iteration, progress)?;
            serde_json::to_value(&t)?
        }
        Which::Evaluate => {
            let e = stage_evaluate::<G>(&cfg, &paths, iteration, progress)?;
            serde_json::json!({"iteration": iteration, "stage": "evaluate", "score_vs_best": e.score,
                "promoted": e.promoted, "generation": e.generation,
                "latest_vs_best": e.latest_vs_best, "benchmark": e.benchmark})
        }
    };
    if args.run.json {
        println!("{line}");
    } else {
        println!("{}", super::describe_stage(&line));
    }
    Ok(())
}
