//! `zero accuracy`: a Connect Four player's mistake rate on solver-labelled positions.

use super::player_args::PlayerArgs;
use std::path::PathBuf;

use anyhow::Result;

use super::game_arg::game_among;
use crate::arena::accuracy::{accuracy, AccuracyResult, Mistake};
use crate::games::{Connect4, GameKind};
use crate::players::PlayerSpec;
use crate::search::mcts::SearchKind;
use crate::solvers::connect4::DEFAULT_TABLE_ENTRIES;
use crate::solvers::connect4_book::Oracle;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The game: only connect4 has solver-labelled test files.
    #[arg(long, value_parser = game_among(&[GameKind::Connect4]), default_value = "connect4")]
    game: GameKind,
    /// The player to grade.
    player: PlayerSpec,
    /// Files of `POSITION SCORE` lines (Pascal Pons' test sets, e.g. tests/data/connect4/Test_L2_R1).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Grade only the first N positions of each file.
    #[arg(long)]
    limit: Option<usize>,
    #[command(flatten)]
    net: PlayerArgs,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Also list every mistake: the position, the move played, its value and the position's
    /// (with --json, a `mistaken` array in each file's object).
    #[arg(long)]
    mistakes: bool,
    /// One JSON object per file.
    #[arg(long)]
    json: bool,
}

/// A file's result and the player's tree search (`null` for players without a network).
#[derive(serde::Serialize)]
struct Graded<'a> {
    #[serde(flatten)]
    result: &'a AccuracyResult,
    search: Option<SearchKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mistaken: Option<&'a [Mistake]>,
}

pub fn run(args: Args) -> Result<()> {
    let ctx = args.net.context::<Connect4>()?;
    // Every file is checked before any output, so a typo in the last one is not reported
    // after a table header (or minutes of grading).
    for file in &args.files {
        crate::solvers::connect4::read_labelled_positions(file)?;
    }
    let mut agent = args.player.build::<Connect4>(&ctx)?;
    // The solver's book and cache, where they live (`data/connect4` in a clone): answers
    // found once are not searched again by the next grading. Read before any output, so that
    // a damaged cache stops the command before a table starts.
    let solver_dir = Some(ctx.solver_dir.as_path()).filter(|d| d.is_dir());
    let mut oracle = Oracle::new(DEFAULT_TABLE_ENTRIES, solver_dir)?;
    let search = args.player.network_search(&ctx)?.map(|s| s.kind);
    if !args.json {
        if let Some(line) = args.player.describe_play(&ctx)? {
            println!("{line}");
        }
        println!(
            "{:<40} {:>9} {:>9} {:>13} {:>9} {:>9}",
            "file", "positions", "mistakes", "mistake rate", "searched", "seconds"
        );
    }
    for file in &args.files {
        let r = accuracy(
            agent.as_mut(),
            file,
            args.limit,
            args.seed,
            &mut oracle,
            !args.json,
        )?;
        if args.json {
            let mistaken = args.mistakes.then_some(r.mistaken.as_slice());
            super::print_json(&Graded {
                result: &r,
                search,
                mistaken,
            })?;
        } else {
            println!(
                "{:<40} {:>9} {:>9} {:>12.2}% {:>9} {:>9.1}",
                r.file,
                r.positions,
                r.mistakes,
                100.0 * r.mistake_rate,
                r.searched,
                r.seconds
            );
            if args.mistakes {
                for m in &r.mistaken {
                    println!(
                        "  {:<38} played {} ({}), the position is a {}",
                        m.position,
                        m.played,
                        super::value_word(m.played_value),
                        super::value_word(m.value)
                    );
                }
            }
        }
    }
    Ok(())
}
