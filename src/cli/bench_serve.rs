//! `zero bench serve`: the web server under load, on loopback. A server starts in this
//! process; many clients each play a whole game through the API at once, for a few rounds;
//! games finished, errors, time and this process's resident memory before and after each
//! round are printed.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use anyhow::{bail, Result};

use crate::games::GameKind;
use crate::serve::load::{run_load, LoadPlan};
use crate::serve::{resident_kib, ServeConfig, Server};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, value_enum, default_value_t = GameKind::TicTacToe)]
    game: GameKind,
    /// The engine the clients play against (any player spec the API takes).
    #[arg(long, default_value = "mcts:200")]
    against: String,
    /// Simulations a move of network players.
    #[arg(long)]
    sims: Option<u32>,
    /// Clients playing at once, one game each a round.
    #[arg(long, default_value_t = 50)]
    clients: usize,
    /// Rounds of games (memory is read after each).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Where the server finds models.
    #[arg(long, default_value = "models")]
    models: PathBuf,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let config = ServeConfig {
        models: args.models.clone(),
        max_games: args.clients.max(1),
        ..ServeConfig::default()
    };
    let server = Server::start(config, SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))?;
    let plan = LoadPlan {
        clients: args.clients,
        rounds: args.rounds,
        game: args.game,
        opponent: args.against.clone(),
        sims: args.sims,
        seed: args.seed,
    };
    let report = run_load(server.addr(), &plan, resident_kib);
    server.stop()?;
    if args.json {
        super::print_json(&report)?;
    } else {
        let mib =
            |k: Option<u64>| k.map_or("?".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0));
        println!(
            "{} clients, {} against {}; resident memory before: {}",
            report.clients,
            report.game,
            report.opponent,
            mib(report.rss_kib_before)
        );
        for r in &report.rounds {
            println!(
                "round {}: {} games finished, {} moves, {} errors in {:.2} s; resident memory after: {}",
                r.round, r.games_finished, r.moves, r.errors, r.seconds, mib(r.rss_kib_after)
            );
            if let Some(e) = &r.first_error {
                println!("  first error: {e}");
            }
        }
    }
    if report.errors() > 0 {
        bail!("{} of the games failed", report.errors());
    }
    Ok(())
}
