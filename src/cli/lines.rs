//! `zero lines`: how a run's self-play played one line of moves, iteration by iteration: the
//! games through it and the move each chose next, with the first player's results
//! ([`crate::alphazero::research::line_count`]). Reads the run's records only: no network, no
//! solver.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::alphazero::research::line_count::{count_line, LineCount};
use crate::alphazero::selfplay::records::{iterations_on_disk, read_iteration};
use crate::games::{Game, GameKind};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The line: the moves from the start, as `zero play` writes them (Connect Four and
    /// tic-tac-toe: digits, e.g. 44444156; 4x4 Othello: moves apart, e.g. "b1 a1").
    line: String,
    #[arg(long, value_enum, default_value_t = GameKind::Connect4)]
    game: GameKind,
    /// Where the run's self-play games live.
    #[arg(long, default_value = "data")]
    data: PathBuf,
    /// Print one JSON object: every iteration's count.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    game: String,
    line: String,
    iterations: Vec<IterationCount>,
}

#[derive(Serialize)]
struct IterationCount {
    iteration: u32,
    #[serde(flatten)]
    count: LineCount,
    /// The next moves as the game writes them, in `count.next`'s order.
    next_moves: Vec<String>,
}

pub fn run(args: Args) -> Result<()> {
    crate::with_board_game!(args.game, G => run_for::<G>(&args))
}

fn run_for<G: Game>(args: &Args) -> Result<()> {
    let line = parse_line::<G>(&args.line)?;
    let data = args.data.join(G::NAME);
    let iterations = iterations_on_disk(&data)?;
    if iterations.is_empty() {
        bail!("no self-play games in {}", data.display());
    }
    let mut report = Report {
        game: G::NAME.into(),
        line: args.line.trim().into(),
        iterations: Vec::new(),
    };
    let mut after_line = G::new();
    for &m in &line {
        after_line.play(m);
    }
    for iteration in iterations {
        let games = read_iteration(&data, G::NAME, G::NUM_ACTIONS, iteration)?;
        let count = count_line(&games, &line);
        let next_moves = count
            .next
            .iter()
            .map(|m| after_line.format_move(m.action))
            .collect();
        report.iterations.push(IterationCount {
            iteration,
            count,
            next_moves,
        });
    }
    if args.json {
        return super::print_json(&report);
    }
    print!("{}", table(&report));
    Ok(())
}

/// The line's actions, each checked to be legal where it is played. Moves are split on
/// spaces or commas; a line without them is read a character a move.
fn parse_line<G: Game>(text: &str) -> Result<Vec<u8>> {
    let text = text.trim();
    let tokens: Vec<String> = if text.contains([' ', ',']) {
        text.split([' ', ','])
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect()
    } else {
        text.chars().map(String::from).collect()
    };
    let mut pos = G::new();
    let mut actions = Vec::with_capacity(tokens.len());
    for (i, token) in tokens.iter().enumerate() {
        let m = pos
            .parse_move(token)
            .with_context(|| format!("move {} ('{token}') of the line", i + 1))?;
        pos.try_play(m)
            .with_context(|| format!("move {} ('{token}') of the line", i + 1))?;
        actions.push(m);
    }
    Ok(actions)
}

/// A row an iteration: the games through the line, and each next move with its games and
/// the first player's wins-draws-losses.
fn table(r: &Report) -> String {
    let mut out = format!(
        "{}: self-play games through {} and the move they played next (first player's wins-draws-losses)\n",
        r.game,
        if r.line.is_empty() { "the start" } else { &r.line }
    );
    out.push_str("iter   games  through  next\n");
    for it in &r.iterations {
        let next: Vec<String> = it
            .count
            .next
            .iter()
            .zip(&it.next_moves)
            .map(|(m, name)| {
                format!(
                    "{name}: {} ({}-{}-{})",
                    m.games, m.first_wins, m.draws, m.first_losses
                )
            })
            .collect();
        let ended = if it.count.ended > 0 {
            format!("  ended there: {}", it.count.ended)
        } else {
            String::new()
        };
        let row = format!(
            "{:4} {:7} {:8}  {}{ended}",
            it.iteration,
            it.count.games,
            it.count.through,
            next.join(", ")
        );
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}
