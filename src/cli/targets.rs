//! `zero targets`: how right a run's value targets are, by plies played, against the exact
//! values ([`crate::alphazero::research::target_audit`]; a diagnostic: the solver grades, never
//! teaches).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::alphazero::config::RunConfig;
use crate::alphazero::player::net_evaluator::NetEvaluator;
use crate::alphazero::research::target_audit::{
    audit, draw_positions, exact_values, AuditedPosition, Disagreement, GroupAudit,
};
use crate::alphazero::run::paths::RunPaths;
use crate::alphazero::run::state::read_run_config;
use crate::alphazero::selfplay::records::{iterations_on_disk, read_iteration};
use crate::catalog::Catalogued;
use crate::core::threads::default_threads;
use crate::games::{Game, GameKind};
use crate::nn::{default_device, InferenceNet, Net, Shape};
use crate::players::default_solver_dir;
use crate::search::mcts::LeafEvaluator;
use crate::solvers::exact::Exact;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, value_enum, default_value_t = GameKind::Connect4)]
    game: GameKind,
    /// Where the run's networks and settings live.
    #[arg(long, default_value = "models")]
    models: PathBuf,
    /// Where the run's self-play games live.
    #[arg(long, default_value = "data")]
    data: PathBuf,
    /// The iteration whose self-play games are read (default: the last one with games).
    #[arg(long)]
    iteration: Option<u32>,
    /// Positions drawn from each group of plies played.
    #[arg(long, default_value_t = 100)]
    positions: usize,
    /// Also grade this network's value on the same positions: best, latest or none.
    #[arg(long, default_value = "best")]
    network: String,
    /// Seed of the positions' draw.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where the Connect Four solver keeps its opening book and cache [default: data/connect4,
    /// used when it exists; without the book a position of a few stones takes minutes].
    #[arg(long, value_name = "DIR")]
    solver_data: Option<PathBuf>,
    /// Threads for the solver (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Print the audit as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    game: String,
    iteration: u32,
    games: usize,
    network: Option<String>,
    seconds: f64,
    groups: Vec<GroupAudit>,
}

pub fn run(args: Args) -> Result<()> {
    crate::with_board_game!(args.game, G => run_for::<G>(&args))
}

fn run_for<G: Catalogued>(args: &Args) -> Result<()> {
    let started = std::time::Instant::now();
    if args.positions == 0 {
        bail!("--positions 0: draw at least one position a group");
    }
    let paths = RunPaths::new(&args.models, &args.data, G::NAME);
    let Some(cfg) = read_run_config(&paths)? else {
        bail!(
            "no run in {}: `zero cycle` starts one there",
            paths.models.display()
        );
    };
    let network = network_path(&args.network, &paths)?;
    let solver_dir = solver_dir(args)?;
    let solver_dir = solver_dir.as_deref();
    let iteration = match args.iteration {
        Some(i) => i,
        None => last_iteration(&paths.data)?,
    };
    let records = read_iteration(&paths.data, G::NAME, G::NUM_ACTIONS, iteration)?;
    if records.is_empty() {
        bail!(
            "no self-play games for iteration {iteration} in {}",
            paths.data.display()
        );
    }
    let drawn = draw_positions::<G>(
        &records,
        cfg.train.value_target_mix,
        args.positions,
        args.seed,
    );
    let net_values = match &network {
        Some(path) => Some(network_values(path, &cfg, &drawn)?),
        None => None,
    };
    let threads = args.threads.unwrap_or_else(default_threads);
    let exact = exact_values(
        &drawn,
        threads,
        !args.json,
        || G::exact(solver_dir),
        |solver: &mut Box<dyn Exact<G>>, pos: &G| solver.value(pos),
    )?;
    let report = Report {
        game: G::NAME.into(),
        iteration,
        games: records.len(),
        network: network.map(|p| p.display().to_string()),
        seconds: started.elapsed().as_secs_f64(),
        groups: audit(&drawn, &exact, net_values.as_deref()),
    };
    if args.json {
        return super::print_json(&report);
    }
    print!("{}", table(&report));
    Ok(())
}

/// The network file `--network` names; none for `none`.
fn network_path(choice: &str, paths: &RunPaths) -> Result<Option<PathBuf>> {
    Ok(match choice {
        "none" => None,
        "best" => Some(paths.best()),
        "latest" => Some(paths.latest()),
        other => bail!("--network {other}: choose best, latest or none"),
    })
}

/// The Connect Four solver's folder: `--solver-data`, which must exist, or the default one
/// ([`default_solver_dir`]).
fn solver_dir(args: &Args) -> Result<Option<PathBuf>> {
    Ok(match &args.solver_data {
        Some(dir) if !dir.is_dir() => bail!("--solver-data {}: no such directory", dir.display()),
        Some(dir) => Some(dir.clone()),
        None => Some(default_solver_dir()),
    })
}

/// The network's value of each drawn position, for its mover.
fn network_values<G: Game>(
    path: &Path,
    cfg: &RunConfig,
    drawn: &[AuditedPosition<G>],
) -> Result<Vec<f32>> {
    let net = Net::load(path, G::NAME, Shape::of::<G>(), default_device())?
        .with_precision(cfg.net.precision);
    let mut eval = NetEvaluator::new(InferenceNet::new(&net)?);
    let positions: Vec<G> = drawn.iter().map(|p| p.position.clone()).collect();
    let mut policies = vec![0.0; positions.len() * G::NUM_ACTIONS];
    let mut values = vec![0.0; positions.len()];
    LeafEvaluator::<G>::evaluate(&mut eval, &positions, &mut policies, &mut values)?;
    Ok(values)
}

/// The last iteration with a folder of self-play games in `data`.
fn last_iteration(data: &Path) -> Result<u32> {
    let last = iterations_on_disk(data)?.last().copied();
    last.with_context(|| format!("no self-play games in {}", data.display()))
}

/// The audit as a table: a row a group of plies; each source's cell, the share of its values
/// read as another result than the exact one and their mean squared error.
fn table(r: &Report) -> String {
    let mut out = format!(
        "{}: value targets of iteration {} ({} games) against the exact values\n",
        r.game, r.iteration, r.games
    );
    let network = r.network.is_some();
    out += &format!(
        "{:<6} {:>9} {:>11} {:>12} {:>12} {:>12}{}\n",
        "plies",
        "positions",
        "exact W/D/L",
        "result",
        "root value",
        "target",
        if network {
            format!(" {:>12}", "network")
        } else {
            String::new()
        }
    );
    let cell = |x: &Disagreement| format!("{:>4.0}% / {:.2}", 100.0 * x.wrong, x.squared_error);
    for g in &r.groups {
        let [w, d, l] = g.exact_win_draw_loss;
        out += &format!(
            "{:<6} {:>9} {:>11} {:>12} {:>12} {:>12}{}\n",
            g.plies,
            g.positions,
            format!("{w}/{d}/{l}"),
            cell(&g.result),
            cell(&g.root_value),
            cell(&g.target),
            g.network
                .as_ref()
                .map(|n| format!(" {:>12}", cell(n)))
                .unwrap_or_default()
        );
    }
    out += "each cell: wrong (a value above 1/3 read as a win, below -1/3 as a loss, a draw \
            between) / mean squared error from the exact 1, 0 or -1\n";
    if let Some(n) = &r.network {
        out += &format!("network: {n}\n");
    }
    out += &format!("{:.1} s\n", r.seconds);
    out
}
