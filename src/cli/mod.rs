//! The command line: one file per subcommand, each a thin layer over the library.

mod arena;
mod cycle;
mod info;
mod perft;
mod play;
mod solve;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Parser, Debug)]
#[command(
    name = "zero",
    version,
    about = "AlphaZero-style self-play for small board games, with classical opponents and tabular baselines",
    after_help = "Players (for arena, play, ...): random, human, rules, minimax:DEPTH, solver, mcts:SIMS, best, latest, model:PATH, ql:PATH"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Version, libtorch version and location, and whether CUDA is available.
    Info(info::Args),
    /// Play a match between two players and print wins, losses, draws and Elo.
    Arena(arena::Args),
    /// Count move sequences and distinct positions ply by ply.
    Perft(perft::Args),
    /// Play a game in the terminal against a player.
    Play(play::Args),
    /// Self-play, training and evaluation in a loop.
    Cycle(cycle::Args),
    /// Solve Connect Four positions exactly; benchmark the solver; build its opening book.
    Solve(solve::Args),
}

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info(a) => info::run(a),
        Command::Arena(a) => arena::run(a),
        Command::Perft(a) => perft::run(a),
        Command::Play(a) => play::run(a),
        Command::Cycle(a) => cycle::run(a),
        Command::Solve(a) => solve::run(a),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            if e.is::<crate::players::Quit>() {
                eprintln!("zero: stopped.");
                return 130;
            }
            eprintln!("zero: error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            1
        }
    }
}

/// A progress bar on stderr, hidden when `show` is false or stderr is not a terminal.
pub fn progress_bar(len: u64, unit: &str, show: bool) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    let template = format!(
        "{{spinner}} [{{elapsed_precise}}] {{bar:40}} {{pos}}/{{len}} {unit} ({{per_sec}}, eta {{eta}}) {{msg}}"
    );
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Prints a serializable value as one JSON line.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string(value)?);
    Ok(())
}

/// The number of threads to use by default: every core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
