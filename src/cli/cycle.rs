//! `zero cycle`: self-play, training and evaluation in a loop, resumable; with `--cluster`,
//! the same cycle on a Ray cluster through the driver `scripts/zero-ray`.

use std::path::PathBuf;

use anyhow::{Context, Result};

use super::describe_stage;
use super::run_args::{BenchmarkPlayer, RunArgs};
use crate::alphazero::config::presets::default_iterations;
use crate::alphazero::run::best::ensure_best;
use crate::alphazero::run::cycle::run_cycle;
use crate::alphazero::run::metrics::StageRecord;
use crate::catalog::Catalogued;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    run: RunArgs,
    /// Iterations to complete in all (a rerun continues from where the last one stopped); the
    /// run's preset's when not given: 55 for `long`, 15 for the others.
    #[arg(long)]
    iterations: Option<u32>,
    /// Run the cycle on the Ray cluster at this address (HOST:PORT, or `auto`) through
    /// `scripts/zero-ray`, which takes the same options; the files stay in --models/--data.
    #[arg(long, value_name = "ADDRESS")]
    cluster: Option<String>,
}

pub fn run(args: Args) -> Result<()> {
    if let Some(address) = &args.cluster {
        return exec_driver(address);
    }
    crate::with_board_game!(args.run.game, G => run_for::<G>(&args))
}

/// Replaces this process by the cluster driver, with this command's options and this binary
/// as the `zero` the cluster runs.
fn exec_driver(address: &str) -> Result<()> {
    use std::os::unix::process::CommandExt;
    let driver = std::env::var_os("ZERO_RAY_DRIVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/zero-ray"));
    let zero = std::env::current_exe().context("cannot find this program's path")?;
    let mut options = Vec::new();
    let mut given = std::env::args().skip_while(|a| a != "cycle").skip(1);
    while let Some(a) = given.next() {
        if a == "--cluster" {
            given.next();
        } else if !a.starts_with("--cluster=") {
            options.push(a);
        }
    }
    let err = std::process::Command::new(&driver)
        .arg("--address")
        .arg(address)
        .arg("--zero")
        .arg(zero)
        .args(options)
        .exec();
    Err(err).with_context(|| {
        format!(
            "cannot start the cluster driver {} (set ZERO_RAY_DRIVER to where scripts/zero-ray is)",
            driver.display()
        )
    })
}

fn run_for<G: Catalogued>(args: &Args) -> Result<()> {
    let (paths, cfg, _lock) = args.run.open()?;
    // The saved run's preset when resuming, so that a bare rerun finishes a `long` run.
    let iterations = args
        .iterations
        .unwrap_or_else(|| default_iterations(&cfg.preset));
    let json = args.run.json;
    if !json {
        eprintln!(
            "zero cycle: {} with preset '{}' ({}; {}; {} games x {} sims per iteration), {} \
             iterations; files in {} and {}",
            G::NAME,
            cfg.preset,
            cfg.net.arch,
            cfg.net.precision,
            cfg.selfplay.games,
            cfg.selfplay.sims,
            iterations,
            paths.models.display(),
            paths.data.display()
        );
    }
    // Generation 0 from the seed, before anything else (`--iterations 0` only sets a run up).
    ensure_best::<G>(&cfg, &paths)?;
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
    let state = run_cycle::<G>(&cfg, &paths, iterations, benchmark, !json, &mut report)?;
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
