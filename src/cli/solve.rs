//! `zero solve`: the Connect Four perfect solver: one position (its score, the outcome in
//! words, every move's score), positions from stdin (`POSITION SCORE` per line, Pons' format),
//! a benchmark over a test file, or building the opening book.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::games::{Connect4, Game};
use crate::players::default_solver_dir;
use crate::solvers::connect4::{
    describe_score, read_labelled_positions, Position, Solver, DEFAULT_TABLE_ENTRIES,
};
use crate::solvers::connect4_book::{build_book, BookLevel, Oracle};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A position as the columns played, 1-7 (e.g. 4453); without one, positions are read from
    /// stdin, one a line, and printed back as `POSITION SCORE`.
    position: Option<String>,
    /// Only win, draw or loss (score 1, 0 or -1): much faster. Searched every time: the book
    /// and the cache hold exact scores, so a weak answer neither reads nor adds to them.
    #[arg(long)]
    weak: bool,
    /// Solve every position of a test file (lines `POSITION SCORE`) with a cleared table and no
    /// book, check every score and print the mean time and nodes per position.
    #[arg(long, value_name = "FILE")]
    bench: Option<PathBuf>,
    /// With --bench: only the first N positions.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Solve every position with at most DEPTH stones and write the opening book
    /// `book-DEPTH.bin` into the data directory.
    #[arg(long, value_name = "DEPTH")]
    build_book: Option<u32>,
    /// Where the opening book and the cache of solved positions live [default: data/connect4
    /// where it exists, else connect4 in the cache folder, ~/.cache/zero/connect4].
    #[arg(long)]
    data: Option<PathBuf>,
    /// Use neither the book nor the cache (and add nothing to the cache).
    #[arg(long)]
    no_cache: bool,
    /// Print one JSON object (one per line for stdin positions).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let data = args.data.clone().unwrap_or_else(default_solver_dir);
    if let Some(file) = &args.bench {
        return bench(&args, file);
    }
    if let Some(depth) = args.build_book {
        if depth > 12 {
            bail!("--build-book {depth}: books deeper than 12 stones would take days to build");
        }
        // A line a level on stderr: a long build is not silent without a terminal, and says
        // what an interrupted build had kept.
        let mut on_level = |l: &BookLevel| {
            eprintln!(
                "ply {}: {} positions in {:.1} s ({} already in the cache)",
                l.ply, l.positions, l.seconds, l.from_cache
            )
        };
        let r = build_book(
            depth,
            &data,
            DEFAULT_TABLE_ENTRIES,
            !args.json,
            &mut on_level,
        )?;
        if args.json {
            return super::print_json(&r);
        }
        println!(
            "book of depth {}: {} positions ({} from the cache), {} bytes, in {:.1} s ({} nodes), written to {}",
            r.depth, r.positions, r.from_cache, r.bytes, r.seconds, r.nodes, r.path
        );
        return Ok(());
    }
    if args.limit.is_some() {
        bail!("--limit only applies to --bench");
    }
    let dir = (!args.no_cache).then_some(data.as_path());
    let mut oracle = Oracle::new(DEFAULT_TABLE_ENTRIES, dir)?;
    match &args.position {
        Some(s) => solve_one(&args, &mut oracle, s),
        None => solve_stdin(&args, &mut oracle),
    }
}

/// Parses a position that is not over.
pub fn parse(s: &str) -> Result<Position> {
    let g = Connect4::parse_position(s)?;
    if g.outcome().is_some() {
        bail!("position '{}': the game is already over", s.trim());
    }
    Ok(Position::from_game(&g))
}

#[derive(Serialize)]
struct OneReport {
    position: String,
    score: i32,
    weak: bool,
    outcome: String,
    /// Score of each column 1-7, null where the column is full (strong solve only).
    moves: Option<Vec<Option<i32>>>,
    source: String,
    nodes: u64,
    us: f64,
}

fn solve_one(args: &Args, oracle: &mut Oracle, s: &str) -> Result<()> {
    let p = parse(s)?;
    let start = Instant::now();
    oracle.solver.reset_nodes();
    let (score, source, moves) = if args.weak {
        (oracle.solver.solve_weak(&p), "search".to_string(), None)
    } else {
        let (score, source) = oracle.solve(&p)?;
        let moves = oracle.move_scores(&p)?;
        (
            score,
            format!("{source:?}").to_lowercase(),
            Some(moves.to_vec()),
        )
    };
    let us = start.elapsed().as_secs_f64() * 1e6;
    let outcome = if args.weak {
        match score {
            1 => "the side to move wins".to_string(),
            -1 => "the side to move loses".to_string(),
            _ => "draw with best play".to_string(),
        }
    } else {
        describe_score(score, p.moves())
    };
    let report = OneReport {
        position: s.trim().to_string(),
        score,
        weak: args.weak,
        outcome,
        moves,
        source,
        nodes: oracle.solver.nodes(),
        us,
    };
    if args.json {
        return super::print_json(&report);
    }
    println!("position {}: score {}", report.position, report.score);
    println!("{}", report.outcome);
    if let Some(moves) = &report.moves {
        let cells: Vec<String> = moves
            .iter()
            .enumerate()
            .map(|(c, m)| match m {
                Some(v) => format!("{}:{v}", c + 1),
                None => format!("{}:full", c + 1),
            })
            .collect();
        println!("move scores (column:score) {}", cells.join(" "));
    }
    println!(
        "({} nodes, {:.0} µs, answer from {})",
        report.nodes, report.us, report.source
    );
    Ok(())
}

fn solve_stdin(args: &Args, oracle: &mut Oracle) -> Result<()> {
    let stdin = std::io::stdin();
    for (i, line) in stdin.lock().lines().enumerate() {
        let line = line.context("cannot read stdin")?;
        // Pons' files carry the score after the position; only the first word is read.
        let Some(text) = line.split_whitespace().next() else {
            continue;
        };
        let p = parse(text).with_context(|| format!("stdin line {}", i + 1))?;
        let score = if args.weak {
            oracle.solver.solve_weak(&p)
        } else {
            oracle.solve(&p)?.0
        };
        if args.json {
            super::print_json(&serde_json::json!({ "position": text, "score": score }))?;
        } else {
            println!("{text} {score}");
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct BenchReport {
    file: String,
    positions: usize,
    correct: usize,
    mean_us: f64,
    mean_nodes: f64,
    /// Processor time of this thread per position: unlike `mean_us`, it does not grow when
    /// other programs share the cores.
    mean_cpu_us: f64,
    weak: bool,
}

/// Processor time used by this thread so far, in seconds.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn bench(args: &Args, file: &Path) -> Result<()> {
    let mut cases: Vec<(String, Position, i32)> = read_labelled_positions(file)?
        .into_iter()
        .map(|(text, game, score)| (text, Position::from_game(&game), score))
        .collect();
    if let Some(n) = args.limit {
        cases.truncate(n);
    }
    if cases.is_empty() {
        bail!("{} holds no positions", file.display());
    }
    let mut solver = Solver::new(DEFAULT_TABLE_ENTRIES);
    let bar = super::progress_bar(cases.len() as u64, "positions", !args.json);
    let (mut correct, mut total_nodes, mut total_s, mut total_cpu) = (0usize, 0u64, 0f64, 0f64);
    let mut wrong = Vec::new();
    for (text, p, expected) in &cases {
        solver.clear_table();
        solver.reset_nodes();
        let cpu_start = thread_cpu_seconds();
        let start = Instant::now();
        let got = if args.weak {
            solver.solve_weak(p)
        } else {
            solver.solve(p)
        };
        total_s += start.elapsed().as_secs_f64();
        total_cpu += thread_cpu_seconds() - cpu_start;
        total_nodes += solver.nodes();
        let want = if args.weak {
            expected.signum()
        } else {
            *expected
        };
        if got == want {
            correct += 1;
        } else if wrong.len() < 5 {
            wrong.push(format!("{text}: expected {want}, solved {got}"));
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let n = cases.len();
    let report = BenchReport {
        file: file.display().to_string(),
        positions: n,
        correct,
        mean_us: total_s * 1e6 / n as f64,
        mean_nodes: total_nodes as f64 / n as f64,
        mean_cpu_us: total_cpu * 1e6 / n as f64,
        weak: args.weak,
    };
    if args.json {
        super::print_json(&report)?;
    } else {
        println!(
            "{}: {} positions, {} correct, mean {:.1} µs ({:.1} µs processor time), {:.1} nodes per position{}",
            report.file,
            n,
            correct,
            report.mean_us,
            report.mean_cpu_us,
            report.mean_nodes,
            if args.weak { " (weak)" } else { "" }
        );
    }
    if correct != n {
        bail!(
            "{} of {n} scores wrong, e.g. {}",
            n - correct,
            wrong.join("; ")
        );
    }
    Ok(())
}
