//! `zero arena`: a match between two players.

use super::player_args::PlayerArgs;
use anyhow::Result;

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::arena::{
    one_sided_bound, play_match_recorded, GameRecord, MatchOptions, MatchResult, OneSided,
};
use crate::catalog::Catalogued;
use crate::core::files::write_atomic;
use crate::core::limits::{at_most, MAX_GAMES, MAX_THREADS};
use crate::core::threads::default_threads;
use crate::games::GameKind;
use crate::players::{BuildContext, PlayerSpec};
use crate::search::mcts::SearchKind;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The game.
    #[arg(long, value_enum, default_value_t = GameKind::Connect4)]
    game: GameKind,
    /// Player A (see `zero --help` for the list).
    a: PlayerSpec,
    /// Player B.
    b: PlayerSpec,
    /// Number of games (at most 10,000,000); A moves first in every other game.
    #[arg(long, default_value_t = 100)]
    games: u64,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Threads (default: every core; 1 with a human player; at most 4,096).
    #[arg(long)]
    threads: Option<usize>,
    #[command(flatten)]
    net: PlayerArgs,
    /// Opening plies that network players choose by sampling, so their games differ.
    #[arg(long, default_value_t = 0)]
    random_plies: u32,
    /// Plies played uniformly at random before each pair of games, the same for both games of
    /// the pair, each player moving first in one (0: every game from the empty board).
    #[arg(long, default_value_t = 0)]
    opening_plies: u32,
    /// Also write every game to FILE, one JSON object a line: its number, who moved first,
    /// the opening's random plies, every move from the start, opening included (a Connect
    /// Four game is a position string for `zero solve`), and the result. FILE's folder is
    /// made if it is not there.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    if args.games == 0 {
        anyhow::bail!("--games must be at least 1");
    }
    at_most("--games", args.games, MAX_GAMES)?;
    if let Some(t) = args.threads {
        at_most("--threads", t as u64, MAX_THREADS)?;
    }
    crate::with_board_game!(args.game, G => run_for::<G>(&args))
}

fn run_for<G: Catalogued>(args: &Args) -> Result<()> {
    // An opening that long would reach the end of every game: the players would play none.
    if args.opening_plies as usize >= G::MAX_PLIES {
        anyhow::bail!(
            "--opening-plies {} is past the end of a {} game (at most {} plies): use fewer than {}",
            args.opening_plies,
            G::TITLE,
            G::MAX_PLIES,
            G::MAX_PLIES
        );
    }
    let ctx = BuildContext {
        random_plies: args.random_plies,
        ..args.net.context::<G>()?
    };
    // Build once up front so a bad spec fails before any game starts.
    args.a.build::<G>(&ctx)?;
    args.b.build::<G>(&ctx)?;
    if let Some(path) = &args.record {
        prepare_record_dir(path)?;
    }
    let searches = Searches {
        a_search: args.a.network_search(&ctx)?.map(|s| s.kind),
        b_search: args.b.network_search(&ctx)?.map(|s| s.kind),
    };
    if !args.json {
        for spec in [&args.a, &args.b] {
            if let Some(line) = spec.describe_play(&ctx)? {
                println!("{line}");
            }
        }
    }
    let interactive = args.a.is_interactive() || args.b.is_interactive();
    let threads = if interactive {
        1
    } else {
        args.threads.unwrap_or_else(default_threads)
    };
    let opts = MatchOptions {
        games: args.games,
        seed: args.seed,
        threads,
        progress: !interactive && !args.json,
        opening_plies: args.opening_plies,
    };
    let (result, games) = play_match_recorded::<G>(
        &args.a.to_string(),
        &args.b.to_string(),
        &|| args.a.build::<G>(&ctx),
        &|| args.b.build::<G>(&ctx),
        &opts,
    )?;
    if let Some(path) = &args.record {
        write_records(path, &games)?;
    }
    if args.json {
        let elo_one_sided = one_sided_bound(&result.total);
        super::print_json(&WithSearches {
            result,
            searches,
            elo_one_sided,
        })
    } else {
        print!("{}", match_table(&result));
        if let Some(path) = &args.record {
            println!("{} games written to {}", games.len(), path.display());
        }
        Ok(())
    }
}

/// The tree search of each network player (`null` for other players), in the JSON output.
#[derive(serde::Serialize)]
struct Searches {
    a_search: Option<SearchKind>,
    b_search: Option<SearchKind>,
}

#[derive(serde::Serialize)]
struct WithSearches {
    #[serde(flatten)]
    result: MatchResult,
    #[serde(flatten)]
    searches: Searches,
    /// Where A won or lost every game: the one-sided 95% bound (`{"at_least": 316.6}`), the
    /// honest figure then, for `elo` and `elo_ci95` are capped.
    #[serde(skip_serializing_if = "Option::is_none")]
    elo_one_sided: Option<OneSided>,
}

/// Makes FILE's folder if it is not there (as `zero qlearn --out` does), and fails before any
/// game is played if it cannot be made or FILE is a folder.
fn prepare_record_dir(path: &Path) -> Result<()> {
    anyhow::ensure!(
        !path.is_dir(),
        "cannot write the games to {}: it is a folder",
        path.display()
    );
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).with_context(|| {
                format!(
                    "cannot write the games to {}: cannot make the folder {}",
                    path.display(),
                    dir.display()
                )
            })
        }
        _ => Ok(()),
    }
}

/// The games as JSON lines, written whole or not at all.
fn write_records(path: &Path, games: &[GameRecord]) -> Result<()> {
    let mut text = String::new();
    for g in games {
        text.push_str(&serde_json::to_string(g)?);
        text.push('\n');
    }
    write_atomic(path, text.as_bytes())
        .with_context(|| format!("cannot write the games to {}", path.display()))
}

/// A match as a table in the style of the material: rows "A first", "A second", "total".
pub fn match_table(r: &MatchResult) -> String {
    let mut s = format!(
        "{}: {} (A) vs {} (B), {} games, {:.1} s\n",
        r.game, r.a, r.b, r.games, r.seconds
    );
    s.push_str(&format!(
        "{:<10} {:>16} {:>16} {:>16}\n",
        "", "wins", "losses", "draws"
    ));
    for (name, t) in [
        ("A first", &r.a_first),
        ("A second", &r.a_second),
        ("total", &r.total),
    ] {
        let n = t.games().max(1) as f64;
        let cell = |x: u64| format!("{x} ({:.1}%)", 100.0 * x as f64 / n);
        s.push_str(&format!(
            "{:<10} {:>16} {:>16} {:>16}\n",
            name,
            cell(t.wins),
            cell(t.losses),
            cell(t.draws)
        ));
    }
    match one_sided_bound(&r.total) {
        Some(OneSided::AtLeast(elo)) => s.push_str(&format!(
            "Elo A - B: at least {:+.0} (95% one-sided: A won every game)\n",
            elo
        )),
        Some(OneSided::AtMost(elo)) => s.push_str(&format!(
            "Elo A - B: at most {:+.0} (95% one-sided: A lost every game)\n",
            elo
        )),
        // `+ 0.0` turns a negative zero into a plain one for printing
        None => s.push_str(&format!(
            "Elo A - B: {:+.0} (95% interval {:+.0} .. {:+.0})\n",
            r.elo + 0.0,
            r.elo_ci95[0] + 0.0,
            r.elo_ci95[1] + 0.0
        )),
    }
    s
}
