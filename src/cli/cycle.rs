//! `zero cycle`: self-play, training and evaluation in a loop, resumable.

use anyhow::Result;

use super::describe_stage;
use super::run_args::{BenchmarkPlayer, RunArgs};
use crate::alphazero::cycle::run_cycle;
use crate::alphazero::metrics::StageRecord;
use crate::players::Playable;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    run: RunArgs,
    /// Iterations to complete in all (a rerun continues from where the last one stopped).
    #[arg(long, default_value_t = 15)]
    iterations: u32,
}

pub fn run(args: Args) -> Result<()> {
    crate::with_board_game!(args.run.game, G => run_for::<G>(&args))
}

fn run_for<G: Playable>(args: &Args) -> Result<()> {
    let (paths, cfg, _lock) = args.run.open()?;
    let json = args.run.json;
    if !json {
        eprintln!(
            "zero cycle: {} with preset '{}' ({}, {} games x {} sims per iteration), {} iterations; \
             files in {} and {}",
            G::NAME,
            cfg.preset,
            cfg.arch,
            cfg.games,
            cfg.sims,
            args.iterations,
            paths.models.display(),
            paths.data.display()
        );
    }
    let started = std::time::Instant::now();
    let mut report = |record: &StageRecord| {
        if json {
            if let Ok(line) = serde_json::to_string(record) {
                println!("{line}");
            }
        } else {
            println!("{}", describe_stage(record));
        }
    };
    let benchmark = args.run.benchmark_player::<G>(&cfg, &paths)?;
    let benchmark = benchmark.as_ref().map(BenchmarkPlayer::as_arg);
    let state = run_cycle::<G>(&cfg, &paths, args.iterations, benchmark, !json, &mut report)?;
    if !json {
        let models = if args.run.models == std::path::Path::new("models") {
            String::new()
        } else {
            format!(" --models {}", args.run.models.display())
        };
        eprintln!(
            "done: {} iterations complete in {} ({:.1} min this run); play it with \
             `zero play --game {g} --against best{models}`, chart its progress with \
             `zero report --game {g}{models}`",
            state.iteration - 1,
            paths.models.display(),
            started.elapsed().as_secs_f64() / 60.0,
            g = G::NAME
        );
    }
    Ok(())
}
