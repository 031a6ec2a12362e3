//! `zero review`: the Connect Four games of `zero arena --record` graded move by move with the
//! solver: each game's mistakes, and per player how many games it spoiled and where.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::arena::review::{Grader, Mistake};
use crate::arena::GameRecord;
use crate::games::{Connect4, Game};
use crate::players::default_solver_dir;
use crate::solvers::connect4::{Solver, DEFAULT_TABLE_ENTRIES};
use crate::solvers::connect4_book::Book;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Games written by `zero arena --game connect4 ... --record FILE`.
    file: PathBuf,
    /// Where the solver's opening book is (the book built into the binary where the folder
    /// has none) [default: data/connect4 where it exists, else ~/.cache/zero/connect4].
    #[arg(long)]
    data: Option<PathBuf>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct GameReview {
    number: u64,
    first: String,
    second: String,
    result: String,
    mistakes: Vec<NamedMistake>,
}

/// A mistake and the name of the player who made it.
#[derive(Serialize)]
struct NamedMistake {
    player: String,
    #[serde(flatten)]
    mistake: Mistake,
}

#[derive(Serialize, Default)]
struct PlayerSummary {
    games: usize,
    /// Games in which it made at least one mistake.
    games_with_mistakes: usize,
    mistakes: usize,
    /// The number of its first mistaken move in each game that has one, earliest first.
    first_mistake_moves: Vec<usize>,
    /// Its first mistakes grouped by position and move, most games first: where a player
    /// loses the thread again and again (against a deterministic opponent, a few do).
    frequent_first_mistakes: Vec<FirstMistake>,
}

/// A first mistake made in `games` games: at `position`, column `played`.
#[derive(Serialize, Debug, PartialEq)]
struct FirstMistake {
    position: String,
    played: usize,
    games: usize,
}

/// How many of a player's most frequent first mistakes the table lists.
const FREQUENT_SHOWN: usize = 5;

#[derive(Serialize)]
struct Review {
    games: Vec<GameReview>,
    players: BTreeMap<String, PlayerSummary>,
}

pub fn run(args: Args) -> Result<()> {
    let records = read_records(&args.file)?;
    let mut solver = Solver::new(DEFAULT_TABLE_ENTRIES);
    // Without a book in the folder the one built in stands in: the first plies of a game are
    // the hardest to solve.
    let (book, _) = Book::load_or_built_in(&args.data.clone().unwrap_or_else(default_solver_dir))?;
    solver.set_book(Box::new(book));
    let mut grader = Grader::new(solver);
    let mut games = Vec::new();
    for r in records {
        let mistakes = grader
            .mistakes(&r.line(), r.opening_plies())
            .with_context(|| format!("game {} of {}", r.number, args.file.display()))?;
        let named = mistakes
            .into_iter()
            .map(|m| {
                let name = if m.move_number % 2 == 1 {
                    &r.first
                } else {
                    &r.second
                };
                NamedMistake {
                    player: name.clone(),
                    mistake: m,
                }
            })
            .collect();
        games.push(GameReview {
            number: r.number,
            first: r.first,
            second: r.second,
            result: r.result,
            mistakes: named,
        });
    }
    let review = Review {
        players: summarize(&games),
        games,
    };
    if args.json {
        return super::print_json(&review);
    }
    print!("{}", review_table(&review));
    Ok(())
}

/// The records of FILE, with the line of any that cannot be read.
fn read_records(path: &Path) -> Result<Vec<GameRecord>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the games in {}", path.display()))?;
    let records: Vec<GameRecord> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let at = || format!("{} line {}", path.display(), i + 1);
            let r: GameRecord = serde_json::from_str(l)
                .with_context(|| format!("{}: not a game of `zero arena --record`", at()))?;
            anyhow::ensure!(
                r.game == Connect4::NAME,
                "{}: a game of {}; zero review grades Connect Four games only",
                at(),
                r.game
            );
            Ok(r)
        })
        .collect::<Result<_>>()?;
    anyhow::ensure!(!records.is_empty(), "no games in {}", path.display());
    Ok(records)
}

fn summarize(games: &[GameReview]) -> BTreeMap<String, PlayerSummary> {
    let mut players: BTreeMap<String, PlayerSummary> = BTreeMap::new();
    for g in games {
        for (side, name) in [(0, &g.first), (1, &g.second)] {
            let s = players.entry(name.clone()).or_default();
            s.games += 1;
            let own: Vec<&Mistake> = g
                .mistakes
                .iter()
                .map(|n| &n.mistake)
                .filter(|m| (m.move_number + 1) % 2 == side)
                .collect();
            if let Some(first) = own.first() {
                s.games_with_mistakes += 1;
                s.first_mistake_moves.push(first.move_number);
                s.count_first_mistake(first);
            }
            s.mistakes += own.len();
        }
    }
    for s in players.values_mut() {
        s.first_mistake_moves.sort_unstable();
        // Most games first; equal counts in position order.
        s.frequent_first_mistakes.sort_by(|a, b| {
            (b.games, &a.position, a.played).cmp(&(a.games, &b.position, b.played))
        });
    }
    players
}

impl PlayerSummary {
    /// One more game whose first mistake of this player's was `m`.
    fn count_first_mistake(&mut self, m: &Mistake) {
        let same = |f: &&mut FirstMistake| f.position == m.position && f.played == m.played;
        match self.frequent_first_mistakes.iter_mut().find(same) {
            Some(f) => f.games += 1,
            None => self.frequent_first_mistakes.push(FirstMistake {
                position: m.position.clone(),
                played: m.played,
                games: 1,
            }),
        }
    }
}

fn review_table(r: &Review) -> String {
    let value = super::value_word;
    let mut s = String::new();
    for g in &r.games {
        s.push_str(&format!(
            "game {} ({} first, {} second): {}\n",
            g.number, g.first, g.second, g.result
        ));
        for NamedMistake { player, mistake: m } in &g.mistakes {
            let best: Vec<String> = m.best.iter().map(|c| c.to_string()).collect();
            s.push_str(&format!(
                "  move {:>2} {}: at '{}' played {}, {} to {} ({} kept the {})\n",
                m.move_number,
                player,
                m.position,
                m.played,
                value(m.before),
                value(m.after),
                best.join(", "),
                value(m.before)
            ));
        }
    }
    let width = r.players.keys().map(|n| n.len()).max().unwrap_or(0).max(6);
    s.push_str(&format!(
        "\n{:<width$}  games  with mistakes  mistakes  first mistake at move\n",
        "player"
    ));
    for (name, p) in &r.players {
        let moves: Vec<String> = p
            .first_mistake_moves
            .iter()
            .map(|x| x.to_string())
            .collect();
        s.push_str(&format!(
            "{:<width$}  {:>5}  {:>13}  {:>8}  {}\n",
            name,
            p.games,
            p.games_with_mistakes,
            p.mistakes,
            moves.join(" ")
        ));
    }
    for (name, p) in &r.players {
        if p.frequent_first_mistakes.is_empty() {
            continue;
        }
        let shown: Vec<String> = p
            .frequent_first_mistakes
            .iter()
            .take(FREQUENT_SHOWN)
            .map(|f| format!("at '{}' played {} ({})", f.position, f.played, f.games))
            .collect();
        s.push_str(&format!(
            "\nfirst mistakes of {name}, most games first: {}\n",
            shown.join("; ")
        ));
    }
    s
}
