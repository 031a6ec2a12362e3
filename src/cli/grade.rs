//! `zero grade`: a player's mistakes on the game's evaluation set, by group.

use super::player_args::PlayerArgs;

use anyhow::Result;
use serde::Serialize;

use crate::arena::grading::{grade, GradeResult};
use crate::catalog::Catalogued;
use crate::core::threads::default_threads;
use crate::games::GameKind;
use crate::players::PlayerSpec;
use crate::search::mcts::SearchKind;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, value_enum, default_value_t = GameKind::Connect4)]
    game: GameKind,
    /// The player to grade (see `zero --help` for the list).
    player: PlayerSpec,
    #[command(flatten)]
    net: PlayerArgs,
    /// Grade only this many positions, evenly spaced over the set.
    #[arg(long)]
    limit: Option<usize>,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Print the grade as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report<'a> {
    game: &'a str,
    player: String,
    sims: Option<u32>,
    /// The network player's tree search (`null` for players without a network).
    search: Option<SearchKind>,
    #[serde(flatten)]
    grade: GradeResult,
}

pub fn run(args: Args) -> Result<()> {
    if args.player.is_interactive() {
        anyhow::bail!("a person is not graded here: choose another player");
    }
    crate::with_board_game!(args.game, G => run_for::<G>(&args))
}

fn run_for<G: Catalogued>(args: &Args) -> Result<()> {
    let ctx = args.net.context::<G>()?;
    // Built once up front so a bad spec fails before the set is graded.
    args.player.build::<G>(&ctx)?;
    let mut set = G::eval_set()?;
    if let Some(n) = args.limit {
        set = set.subset(n);
    }
    let factory = || args.player.build::<G>(&ctx);
    let threads = args.threads.unwrap_or_else(default_threads);
    let r = grade::<G>(&factory, &set, threads, args.seed, !args.json)?;
    if args.json {
        return super::print_json(&Report {
            game: G::NAME,
            player: args.player.to_string(),
            sims: args.net.sims,
            search: args.player.network_search(&ctx)?.map(|s| s.kind),
            grade: r,
        });
    }
    if let Some(line) = args.player.describe_play(&ctx)? {
        println!("{line}");
    }
    println!("{}", table(&r));
    Ok(())
}

/// The grade as a table, a row per group and one for the whole.
pub fn table(r: &GradeResult) -> String {
    let mut s = format!(
        "{:<10} {:>9} {:>9} {:>13}\n",
        "group", "positions", "mistakes", "mistake rate"
    );
    let row = |name: &str, positions: u64, mistakes: u64, rate: f64| {
        format!(
            "{name:<10} {positions:>9} {mistakes:>9} {:>12.1}%\n",
            100.0 * rate
        )
    };
    for g in &r.groups {
        s.push_str(&row(&g.group, g.positions, g.mistakes, g.mistake_rate));
    }
    s.push_str(&row("all", r.positions, r.mistakes, r.mistake_rate));
    s.push_str(&format!("graded in {:.1} s", r.seconds));
    s
}
