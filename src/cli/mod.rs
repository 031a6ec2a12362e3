//! The command line: one file per subcommand, each a thin layer over the library.

mod accuracy;
mod arena;
mod bench;
mod bench_serve;
mod blackjack;
mod cycle;
mod evalset;
mod game_arg;
mod grade;
mod info;
mod lines;
mod mces;
mod output;
mod perft;
mod play;
mod player_args;
mod qlearn;
mod report;
mod review;
mod run_args;
mod serve;
mod solve;
mod stages;
mod targets;
mod terminal_board;

use clap::{Parser, Subcommand};

use crate::alphazero::run::state::Stage;
use crate::core::progress;
use crate::games::GameKind;
use crate::players::Quit;
use output::ProgressBars;
pub use output::{describe_stage, print_json, progress_bar, value_word};

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
    /// Grade recorded Connect Four games (`arena --record`) move by move with the solver.
    Review(review::Args),
    /// Count move sequences and distinct positions ply by ply.
    Perft(perft::Args),
    /// Play a game in the terminal against a player.
    Play(play::Args),
    /// Speed benchmarks (self-play, search).
    #[command(subcommand)]
    Bench(bench::Bench),
    /// Self-play, training and evaluation in a loop (resumable).
    Cycle(cycle::Args),
    /// Self-play games with the best network (one iteration's worth).
    Selfplay(stages::Args),
    /// Train the latest network on the replay window.
    Train(stages::Args),
    /// Play latest against best and promote it if it wins.
    Evaluate(stages::Args),
    /// Tabular Q-learning for tic-tac-toe and 4x4 Othello, graded exactly against random play.
    Qlearn(qlearn::Args),
    /// Monte Carlo control with exploring starts for Blackjack.
    Mces(mces::Args),
    /// Blackjack: the exact optimal policy, and evaluation of a policy.
    Blackjack(blackjack::Args),
    /// A player's mistake rate on solver-labelled Connect Four positions.
    Accuracy(accuracy::Args),
    /// A player's mistakes on the game's evaluation set (exact values of every move), by group.
    Grade(grade::Args),
    /// Build Connect Four's evaluation set from Pons' test files and self-play games.
    Evalset(evalset::Args),
    /// Solve Connect Four positions exactly; benchmark the solver; build its opening book.
    Solve(solve::Args),
    /// Research: how right a run's value targets are: an iteration's self-play positions, by
    /// plies played, against their exact values (the solver only grades here). Hidden from
    /// the everyday help.
    #[command(hide = true)]
    Targets(targets::Args),
    /// Research: how a run's self-play played one line of moves, iteration by iteration: the
    /// games through it and the move each chose next, with its results. Hidden from the
    /// everyday help.
    #[command(hide = true)]
    Lines(lines::Args),
    /// A run's progress per iteration: a table (or JSON) and an SVG chart of losses and scores.
    Report(report::Args),
    /// Play and watch the games in a browser: a local web server and its JSON API.
    Serve(serve::Args),
}

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    restore_default_sigpipe();
    keep_freed_memory();
    let cli = Cli::parse();
    progress::install(Box::new(ProgressBars));
    set_torch_threads();
    let result = match cli.command {
        Command::Info(a) => info::run(a),
        Command::Arena(a) => arena::run(a),
        Command::Review(a) => review::run(a),
        Command::Perft(a) => perft::run(a),
        Command::Play(a) => play::run(a),
        Command::Cycle(a) => cycle::run(a),
        Command::Bench(b) => bench::run(b),
        Command::Selfplay(a) => stages::run(Stage::SelfPlay, a),
        Command::Train(a) => stages::run(Stage::Train, a),
        Command::Evaluate(a) => stages::run(Stage::Evaluate, a),
        Command::Qlearn(a) => qlearn::run(a),
        Command::Mces(a) => mces::run(a),
        Command::Report(a) => report::run(a),
        Command::Blackjack(a) => blackjack::run(a),
        Command::Solve(a) => solve::run(a),
        Command::Accuracy(a) => accuracy::run(a),
        Command::Targets(a) => targets::run(a),
        Command::Lines(a) => lines::run(a),
        Command::Grade(a) => grade::run(a),
        Command::Evalset(a) => evalset::run(a),
        Command::Serve(a) => serve::run(a),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            // A person typed `quit`: what they asked for, not a failure.
            if e.is::<Quit>() {
                eprintln!("zero: stopped.");
                return 0;
            }
            eprintln!("zero: error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            1
        }
    }
}

/// Makes a closed stdout end the program quietly, as it does other Unix tools
/// (`zero blackjack optimal | head`): Rust ignores SIGPIPE, so printing would panic instead.
fn restore_default_sigpipe() {
    // SAFETY: puts back the default action of a signal, before any thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// glibc's allocator gives the top of its heap back to the system as soon as 128 KiB of it
/// are free, and puts every block from 128 KiB up in pages of its own. Training allocates and
/// frees the same tensors at every step, so each step faulted those pages in again. Keeping
/// up to 256 MiB free on the heap and serving blocks of up to 32 MiB from it (glibc's largest)
/// makes a training step faster (docs/decisions.md, "The allocator keeps freed memory"). A
/// user's own `GLIBC_TUNABLES` for the allocator win: then this leaves it alone.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let tuned = std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("glibc.malloc."));
        if !tuned {
            // SAFETY: mallopt only sets the allocator's parameters, under its own lock.
            unsafe {
                libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
                libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
            }
        }
    }
}

/// libtorch's threads for each thread that evaluates (`nn::caller_threads`: one on a CPU),
/// unless `ZERO_TORCH_THREADS` says otherwise; the main thread takes them too.
fn set_torch_threads() {
    let n = std::env::var("ZERO_TORCH_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0);
    if let Some(n) = n {
        crate::nn::set_caller_threads(n);
    }
    crate::nn::use_caller_threads();
}

/// The games as clap lists and parses them (the library's `GameKind` knows nothing of clap).
impl clap::ValueEnum for GameKind {
    fn value_variants<'a>() -> &'a [Self] {
        &GameKind::ALL
    }
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()))
    }
}
