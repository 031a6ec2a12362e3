//! `zero evalset`: builds Connect Four's evaluation set (`data/connect4/evalset.txt`, compiled
//! into the binary): positions drawn from Pascal Pons' six test files and from a run's
//! self-play games, every legal move valued exactly by the solver.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;

use super::game_arg::game_among;
use crate::alphazero::selfplay::records::{iterations_on_disk, read_iteration};
use crate::arena::connect4_evalset::{connect4_key, label_connect4, sample_lines, sample_selfplay};
use crate::arena::grading::CONNECT4_EVALSET_PATH;
use crate::core::files::write_atomic;
use crate::core::rng::SeedStream;
use crate::core::threads::default_threads;
use crate::games::{Connect4, Game, GameKind, Move};
use crate::players::default_solver_dir;
use crate::solvers::connect4::read_labelled_positions;

/// Pons' test files, from the end of the game to its beginning (the groups of the set).
const PONS_SETS: [&str; 6] = ["L3_R1", "L2_R1", "L2_R2", "L1_R1", "L1_R2", "L1_R3"];

/// Lines of each test file kept out of the set: `zero accuracy` is usually run on the first
/// 200, so those stay a held-out check.
const HELD_OUT_LINES: usize = 200;

/// Seeds of the draws, one stream per file and one for self-play.
const PONS_DRAW: SeedStream = SeedStream::new(0x9025);
const SELFPLAY_DRAW: SeedStream = SeedStream::new(0x5e1f);

/// A position to label: its group and the columns played.
type Item = (String, String);

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The game: only connect4's set is built ahead (the small games' are solved when needed).
    #[arg(long, value_parser = game_among(&[GameKind::Connect4]), default_value = "connect4")]
    game: GameKind,
    /// Positions drawn from each of Pons' six test files.
    #[arg(long, default_value_t = 100)]
    per_set: usize,
    /// Where Pons' test files are.
    #[arg(long, default_value = "tests/data/connect4")]
    pons: PathBuf,
    /// A run's self-play data directory (`data/connect4`) to draw positions from.
    #[arg(long, value_name = "DATA_DIR")]
    selfplay: Option<PathBuf>,
    /// Positions drawn from the self-play games.
    #[arg(long, default_value_t = 200)]
    selfplay_positions: usize,
    /// Self-play positions have at least this many stones: earlier ones take the solver
    /// minutes each without a deep opening book (one weak solve of a 5-stone position took
    /// 12 s on this machine, and a position needs one a move); Pons' L1 files cover them.
    #[arg(long, default_value_t = 8)]
    min_ply: usize,
    /// Seed of every draw.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where to write the set.
    #[arg(long, default_value = CONNECT4_EVALSET_PATH)]
    out: PathBuf,
    /// Where the solver's opening book and cache are [default: data/connect4 where it
    /// exists, else ~/.cache/zero/connect4].
    #[arg(long)]
    data: Option<PathBuf>,
    /// Solver threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Summary {
    out: String,
    positions: usize,
    groups: Vec<(String, usize)>,
    seconds: f64,
    threads: usize,
}

pub fn run(args: Args) -> Result<()> {
    let started = Instant::now();
    let (mut items, pons_keys) = pons_items(&args)?;
    if let Some(dir) = &args.selfplay {
        let games = selfplay_games(dir)?;
        let seed = SELFPLAY_DRAW.seed(args.seed, 0);
        let picked = sample_selfplay(
            &games,
            args.selfplay_positions,
            args.min_ply,
            &pons_keys,
            seed,
        );
        items.extend(picked.into_iter().map(|p| ("selfplay".to_string(), p)));
    }
    let threads = args.threads.unwrap_or_else(default_threads).max(1);
    let data = args.data.clone().unwrap_or_else(default_solver_dir);
    let set = label_connect4(&items, Some(&data), threads, !args.json)?;
    let seconds = started.elapsed().as_secs_f64();
    let groups: Vec<(String, usize)> = set
        .groups()
        .into_iter()
        .map(|g| {
            let n = set.entries.iter().filter(|e| e.group == g).count();
            (g, n)
        })
        .collect();
    write_atomic(
        &args.out,
        set.to_text(&header(&args, seconds, threads)).as_bytes(),
    )?;
    let summary = Summary {
        out: args.out.display().to_string(),
        positions: set.len(),
        groups,
        seconds,
        threads,
    };
    if args.json {
        return super::print_json(&summary);
    }
    let sizes: Vec<String> = summary
        .groups
        .iter()
        .map(|(g, n)| format!("{g} {n}"))
        .collect();
    println!(
        "{} positions ({}) solved in {:.1} s on {} threads, written to {}",
        summary.positions,
        sizes.join(", "),
        seconds,
        threads,
        summary.out
    );
    println!("rebuild zero (cargo build --release) to compile the new set in");
    Ok(())
}

/// The positions drawn from Pons' files as (group, position), and the keys of every position
/// of those files (self-play positions must not repeat them, nor the held-out lines).
fn pons_items(args: &Args) -> Result<(Vec<Item>, HashSet<u64>)> {
    let mut items = Vec::new();
    let mut keys = HashSet::new();
    for (k, name) in PONS_SETS.iter().enumerate() {
        let file = args.pons.join(format!("Test_{name}"));
        let lines = read_labelled_positions(&file)?;
        keys.extend(lines.iter().map(|(_, pos, _)| connect4_key(pos)));
        let texts: Vec<String> = lines.into_iter().map(|(s, _, _)| s).collect();
        let seed = PONS_DRAW.seed(args.seed, k as u64);
        for p in sample_lines(&texts, args.per_set, HELD_OUT_LINES, seed) {
            items.push((name.to_string(), p));
        }
    }
    Ok((items, keys))
}

/// The moves of every self-play game of every iteration in `dir`.
fn selfplay_games(dir: &Path) -> Result<Vec<Vec<Move>>> {
    if !dir.is_dir() {
        bail!(
            "cannot read the self-play directory {}: --selfplay names a run's folder of self-play games (data/connect4)",
            dir.display()
        );
    }
    let iterations = iterations_on_disk(dir)?;
    if iterations.is_empty() {
        bail!(
            "{} has no iter-NNNN directories of self-play games",
            dir.display()
        );
    }
    let mut games = Vec::new();
    for it in iterations {
        let records = read_iteration(dir, Connect4::NAME, Connect4::NUM_ACTIONS, it)?;
        games.extend(records.into_iter().map(|r| r.moves));
    }
    Ok(games)
}

/// The file's `#` lines: where the positions come from, how to make the file again, the cost.
fn header(args: &Args, seconds: f64, threads: usize) -> Vec<String> {
    let mut command = format!(
        "zero evalset --game connect4 --per-set {} --seed {}",
        args.per_set, args.seed
    );
    let mut lines = vec![
        "zero's Connect Four evaluation set: every legal move of every position valued exactly"
            .to_string(),
        "format: GROUP POSITION v1 ... v7, POSITION the columns played (1-7), vK the value of"
            .to_string(),
        "  column K for the side to move: W win, D draw, L loss (the solver's weak solve, with"
            .to_string(),
        "  the opening book), - a full column; a mistake is a move worse than the best one".to_string(),
        format!(
            "Pons' test files {}/Test_{{{}}}: {} positions each, drawn by seed from the lines after the first {}",
            args.pons.display(),
            PONS_SETS.join(","),
            args.per_set,
            HELD_OUT_LINES
        ),
    ];
    if let Some(dir) = &args.selfplay {
        command.push_str(&format!(
            " --selfplay {} --selfplay-positions {} --min-ply {}",
            dir.display(),
            args.selfplay_positions,
            args.min_ply
        ));
        lines.push(format!(
            "selfplay: {} positions of the self-play games in {} (every iteration), spread evenly over plies {}-41 by seed, no repeats (mirror images included), none of Pons' files",
            args.selfplay_positions,
            dir.display(),
            args.min_ply
        ));
        lines.push(
            "  (earlier plies are left to Pons' L1 files: with only a shallow opening book one weak solve of a 5-stone position took 12 s, and a position needs one a move)"
                .to_string(),
        );
    }
    lines.push(format!("command: {command}"));
    lines.push(format!("seed: {}", args.seed));
    lines.push(format!(
        "took: {seconds:.1} s on {threads} threads (zero {})",
        env!("CARGO_PKG_VERSION")
    ));
    lines
}
