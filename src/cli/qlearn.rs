//! `zero qlearn`: tabular Q-learning for tic-tac-toe and 4x4 Othello, ending with the greedy
//! policy's exact expected score against a random player next to the best possible one.
//!
//! Recipes that reach the targets (seconds each):
//! `zero qlearn --game tictactoe --opponent random --side second --episodes 500000` (≥ 99% of
//! the best score against random), `zero qlearn --game tictactoe --opponent self
//! --episodes 100000` (never loses, either side), and `zero qlearn --game othello4 --opponent
//! self --target expected --epsilon 0.3 --epsilon-final 0.1 --episodes 1000000` (White wins
//! against every opponent; Black wins 94.9% against random, the best possible).

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;

use super::game_arg::game_among;
use crate::catalog::Catalogued;
use crate::games::{GameKind, Othello4, TicTacToe};
use crate::players::{BuildContext, PlayerSpec};
use crate::tabular::exact::{grade, BySide};
use crate::tabular::qlearning::{Config, Opponent, Side, Target, Trainer};
use crate::tabular::qtable::QGame;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The game: a table of every position is for the small games only.
    #[arg(
        long,
        value_parser = game_among(&[GameKind::TicTacToe, GameKind::Othello4]),
        default_value = "tictactoe"
    )]
    game: GameKind,
    #[arg(long, default_value_t = 500_000)]
    episodes: u64,
    /// `random`, `self` (self-play, negamax targets) or any player spec (`minimax:3`, ...).
    #[arg(long, default_value = "random")]
    opponent: OpponentSpec,
    /// The learner's side against a fixed opponent (ignored in self-play).
    #[arg(long, value_enum, default_value_t = Side::Both)]
    side: Side,
    /// Self-play target: `max` (Q-learning, negamax) or `expected` (the opponent's value under
    /// its ε-greedy play).
    #[arg(long, value_enum, default_value_t = Target::Max)]
    target: Target,
    /// Step size at the start ...
    #[arg(long, default_value_t = 0.5)]
    alpha: f32,
    /// ... and at the end (linear in between).
    #[arg(long, default_value_t = 0.01)]
    alpha_final: f32,
    /// Discount per move of the learner.
    #[arg(long, default_value_t = 1.0)]
    gamma: f32,
    /// Exploration rate at the start ...
    #[arg(long, default_value_t = 0.3)]
    epsilon: f32,
    /// ... and at the end (linear in between).
    #[arg(long, default_value_t = 0.0)]
    epsilon_final: f32,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where to save the Q-table (default models/<game>/qtable.bin).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Log the training results every this many episodes (default: a tenth of them).
    #[arg(long)]
    log_every: Option<u64>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Debug)]
enum OpponentSpec {
    Random,
    SelfPlay,
    Player(PlayerSpec),
}

impl FromStr for OpponentSpec {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "random" => Ok(OpponentSpec::Random),
            "self" => Ok(OpponentSpec::SelfPlay),
            _ => Ok(OpponentSpec::Player(s.parse()?)),
        }
    }
}

impl std::fmt::Display for OpponentSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpponentSpec::Random => write!(f, "random"),
            OpponentSpec::SelfPlay => write!(f, "self"),
            OpponentSpec::Player(p) => write!(f, "{p}"),
        }
    }
}

pub fn run(args: Args) -> Result<()> {
    match args.game {
        GameKind::TicTacToe => run_for::<TicTacToe>(&args),
        GameKind::Othello4 => run_for::<Othello4>(&args),
        other => bail!(
            "Q-learning keeps a table of every position: it is for tictactoe and othello4, not {other}"
        ),
    }
}

fn run_for<G: QGame + Catalogued>(args: &Args) -> Result<()> {
    let config = Config {
        episodes: args.episodes,
        alpha: args.alpha,
        alpha_final: args.alpha_final,
        gamma: args.gamma,
        epsilon: args.epsilon,
        epsilon_final: args.epsilon_final,
        side: args.side,
        target: args.target,
        seed: args.seed,
    };
    let opponent = match &args.opponent {
        OpponentSpec::Random => Opponent::Random,
        OpponentSpec::SelfPlay => Opponent::SelfPlay,
        OpponentSpec::Player(spec) => Opponent::Player(spec.build::<G>(&BuildContext::default())?),
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("models").join(G::NAME).join("qtable.bin"));
    let mut trainer = Trainer::<G>::new(config, opponent)?;
    let started = Instant::now();
    train_with_progress(&mut trainer, args)?;
    let seconds = started.elapsed().as_secs_f64();
    let table = trainer.into_table();
    table.save(&out)?;
    let grades = grade(&table);
    if args.json {
        #[derive(Serialize)]
        struct Out<'a> {
            game: &'static str,
            episodes: u64,
            seconds: f64,
            vs_random: BySide<f64>,
            ceiling: BySide<f64>,
            win_rate_vs_random: BySide<f64>,
            worst_case: BySide<i8>,
            positions: usize,
            opponent: String,
            out: &'a std::path::Path,
        }
        return super::print_json(&Out {
            game: G::NAME,
            episodes: args.episodes,
            seconds,
            vs_random: grades.vs_random,
            ceiling: grades.ceiling,
            win_rate_vs_random: grades.win_rate_vs_random,
            worst_case: grades.worst_case,
            positions: table.len(),
            opponent: args.opponent.to_string(),
            out: &out,
        });
    }
    println!(
        "{} episodes against {} in {seconds:.3} s ({:.3} µs an episode); {} positions in the table, saved to {}",
        args.episodes,
        args.opponent,
        seconds * 1e6 / args.episodes as f64,
        table.len(),
        out.display()
    );
    print!("{}", grades.table());
    Ok(())
}

/// Runs the trainer's episodes under a progress bar, and every `--log-every` episodes (a
/// tenth of them by default) prints the learner's results since the last line (not with
/// `--json`).
fn train_with_progress<G: QGame + Catalogued>(trainer: &mut Trainer<G>, args: &Args) -> Result<()> {
    let log_every = args.log_every.unwrap_or((args.episodes / 10).max(1)).max(1);
    let bar = super::progress_bar(args.episodes, "episodes", !args.json);
    let whose = match args.opponent {
        OpponentSpec::SelfPlay => "first player",
        _ => "learner",
    };
    let mut since_log = crate::games::Tally::default();
    while trainer.episodes_done() < args.episodes {
        let (alpha, epsilon) = trainer.schedule();
        // small chunks keep the bar moving; the clock includes them
        let chunk = (log_every - trainer.episodes_done() % log_every).min(4096);
        let t = trainer.run(chunk)?;
        since_log = crate::games::Tally {
            wins: since_log.wins + t.wins,
            losses: since_log.losses + t.losses,
            draws: since_log.draws + t.draws,
        };
        bar.inc(chunk);
        if trainer.episodes_done().is_multiple_of(log_every)
            || trainer.episodes_done() == args.episodes
        {
            if !args.json {
                let n = since_log.games().max(1) as f64;
                let line = format!(
                    "episodes {:>10}: {whose} wins {:5.1}% draws {:5.1}% losses {:5.1}% (α {alpha:.3}, ε {epsilon:.3})",
                    trainer.episodes_done(),
                    100.0 * since_log.wins as f64 / n,
                    100.0 * since_log.draws as f64 / n,
                    100.0 * since_log.losses as f64 / n,
                );
                // printed past the bar, and also when stderr is not a terminal
                bar.suspend(|| eprintln!("{line}"));
            }
            since_log = crate::games::Tally::default();
        }
    }
    bar.finish_and_clear();
    Ok(())
}
