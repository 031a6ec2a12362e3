//! `zero arena`: a match between two players.

use anyhow::Result;

use crate::arena::{play_match, MatchOptions};
use crate::games::GameKind;
use crate::players::{BuildContext, Playable, PlayerSpec};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The game.
    #[arg(long, value_enum, default_value_t = GameKind::Connect4)]
    game: GameKind,
    /// Player A (see `zero --help` for the list).
    a: PlayerSpec,
    /// Player B.
    b: PlayerSpec,
    /// Number of games; A moves first in every other game.
    #[arg(long, default_value_t = 100)]
    games: u64,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Threads (default: every core; 1 with a human player).
    #[arg(long)]
    threads: Option<usize>,
    /// Simulations per move for network players.
    #[arg(long)]
    sims: Option<u32>,
    /// Opening plies that network players choose by sampling, so their games differ.
    #[arg(long, default_value_t = 0)]
    random_plies: u32,
    /// Where `best` and `latest` are found.
    #[arg(long, default_value = "models")]
    models: std::path::PathBuf,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    if args.games == 0 {
        anyhow::bail!("--games must be at least 1");
    }
    crate::with_board_game!(args.game, G => run_for::<G>(&args))
}

fn run_for<G: Playable>(args: &Args) -> Result<()> {
    let ctx = BuildContext {
        models_dir: args.models.join(G::NAME),
        sims: args.sims,
        random_plies: args.random_plies,
        verbose: false,
    };
    // Build once up front so a bad spec fails before any game starts.
    args.a.build::<G>(&ctx)?;
    args.b.build::<G>(&ctx)?;
    let interactive = args.a.is_interactive() || args.b.is_interactive();
    let threads = if interactive {
        1
    } else {
        args.threads.unwrap_or_else(super::default_threads)
    };
    let opts = MatchOptions {
        games: args.games,
        seed: args.seed,
        threads,
        progress: !interactive && !args.json,
    };
    let result = play_match::<G, _, _>(
        &args.a.to_string(),
        &args.b.to_string(),
        || args.a.build::<G>(&ctx),
        || args.b.build::<G>(&ctx),
        &opts,
    )?;
    if args.json {
        super::print_json(&result)
    } else {
        print!("{}", result.table());
        Ok(())
    }
}
