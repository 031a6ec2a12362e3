//! `zero serve`: play and watch the games in a browser (the server is [`crate::serve`]).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Result};

use crate::players::default_solver_dir;
use crate::search::mcts::SearchKind;
use crate::serve::{self, ServeConfig};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The port to listen on (0: any free port, printed).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// The address to listen on. Anything but 127.0.0.1 lets other machines in, and the
    /// server has no authentication.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    host: IpAddr,
    /// Where models live (`<models>/<game>/best.safetensors`, ...); the training page shows
    /// the runs found there.
    #[arg(long, default_value = "models")]
    models: PathBuf,
    /// Where the Connect Four solver's opening book and cache live [default: data/connect4
    /// where it exists, else connect4 in the cache folder, ~/.cache/zero/connect4].
    #[arg(long)]
    data: Option<PathBuf>,
    /// Live games at most.
    #[arg(long, default_value_t = 100)]
    max_games: usize,
    /// Minutes after which an untouched game expires.
    #[arg(long, default_value_t = 30)]
    idle_minutes: u64,
    /// The most one move of Connect Four's `solver` may take, in seconds.
    #[arg(long, default_value_t = 600)]
    solver_seconds: u64,
    /// The most the perfect-play overlay may take for a position, in seconds.
    #[arg(long, default_value_t = 20.0)]
    analysis_seconds: f64,
    /// The tree search of network players: puct (AlphaZero) or gumbel (Gumbel AlphaZero).
    /// Default: the search each network's run trained with (its run.json; puct without one).
    #[arg(long)]
    search: Option<SearchKind>,
    /// Network players average the network over the game's symmetries (Connect Four: the
    /// position and its mirror image), at one evaluation per symmetry.
    #[arg(long)]
    symmetries: bool,
    /// Seed of the games that do not name one.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn run(args: Args) -> Result<()> {
    if !(args.analysis_seconds.is_finite() && args.analysis_seconds >= 0.0) {
        bail!("--analysis-seconds must be a number of seconds, 0 or more");
    }
    if args.max_games == 0 {
        bail!("--max-games must be at least 1");
    }
    let config = ServeConfig {
        models: args.models,
        solver_dir: args.data.unwrap_or_else(default_solver_dir),
        max_games: args.max_games,
        idle: Duration::from_secs(args.idle_minutes.max(1) * 60),
        solver_seconds: Duration::from_secs(args.solver_seconds.max(1)),
        analysis_seconds: args.analysis_seconds,
        seed: args.seed,
        search: args.search,
        symmetries: args.symmetries,
        ..ServeConfig::default()
    };
    // On stderr: the first line on stdout stays the address, which scripts read.
    for line in serve::inventory::startup_lines(&config) {
        eprintln!("zero serve: {line}");
    }
    if !args.host.is_loopback() {
        eprintln!(
            "zero serve: warning: listening on {}: anyone who can reach this address can use the \
             server, which has no authentication",
            args.host
        );
    }
    serve::run(config, SocketAddr::new(args.host, args.port), |addr| {
        println!("zero serve: http://{addr}/ (Ctrl-C to stop)");
    })?;
    eprintln!("zero serve: stopped.");
    Ok(())
}
