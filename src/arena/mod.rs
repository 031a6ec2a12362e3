//! Measuring players: the match runner every evaluation uses (N games between two players,
//! alternating who moves first, spread over threads, with a deterministic result for a given
//! seed), Elo from a tally ([`elo`]), and grading a player on solver-labelled positions:
//! Pons' test files ([`accuracy`]) and the evaluation set of every stage of a game
//! ([`grading`]; Connect Four's is built by [`connect4_evalset`]).
//!
//! ```
//! use zero::agent::{Agent, RandomAgent};
//! use zero::arena::{play_match, MatchOptions};
//! use zero::games::TicTacToe;
//! use zero::solvers::exhaustive::SolverAgent;
//!
//! let solver = || -> anyhow::Result<Box<dyn Agent<TicTacToe>>> {
//!     Ok(Box::new(SolverAgent::<TicTacToe>::new()))
//! };
//! let random = || -> anyhow::Result<Box<dyn Agent<TicTacToe>>> { Ok(Box::new(RandomAgent::new())) };
//! let opts = MatchOptions { games: 20, seed: 1, threads: 2, progress: false, opening_plies: 0 };
//! let result = play_match("solver", "random", &solver, &random, &opts).unwrap();
//! // Perfect play never loses tic-tac-toe.
//! assert_eq!(result.total.losses, 0);
//! assert_eq!(result.total.games(), 20);
//! ```

pub mod accuracy;
pub mod connect4_evalset;
pub mod elo;
pub mod grading;
pub mod openings;
pub mod review;

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};

use crate::agent::Agent;
use crate::core::progress;
use crate::core::rng::{item_seed, streams};
use crate::games::{Game, Move, Outcome, Player, Tally};

pub use elo::{elo_with_interval, one_sided_bound, OneSided};

/// The result of a match, from A's view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchResult {
    pub game: String,
    pub a: String,
    pub b: String,
    pub games: u64,
    pub a_first: Tally,
    pub a_second: Tally,
    pub total: Tally,
    /// Elo difference A minus B (scores of 0 or 1 are capped at half a game from the edge).
    pub elo: f64,
    pub elo_ci95: [f64; 2],
    pub seconds: f64,
}

/// Plays one game; returns the outcome and the moves.
pub fn play_game<G: Game>(
    first: &mut dyn Agent<G>,
    second: &mut dyn Agent<G>,
    start: &G,
) -> Result<(Outcome, Vec<Move>)> {
    let mut pos = start.clone();
    let mut moves = Vec::new();
    while pos.outcome().is_none() {
        let m = match pos.to_move() {
            Player::First => first.choose(&pos)?,
            Player::Second => second.choose(&pos)?,
        };
        if !pos.is_legal(m) {
            return Err(anyhow!(
                "a player chose the illegal move {} in\n{}",
                pos.format_move(m),
                pos.display()
            ));
        }
        first.observe(&pos, m);
        second.observe(&pos, m);
        pos.play(m);
        moves.push(m);
    }
    first.game_over(&pos);
    second.game_over(&pos);
    let outcome = pos.outcome().ok_or_else(|| anyhow!("game did not end"))?;
    Ok((outcome, moves))
}

/// Options of a match.
#[derive(Clone, Debug)]
pub struct MatchOptions {
    pub games: u64,
    pub seed: u64,
    pub threads: usize,
    /// Show the match's progress (through the installed progress sink).
    pub progress: bool,
    /// Random plies before each pair of games, the same for both ([`openings`]); 0: every
    /// game from the empty board.
    pub opening_plies: u32,
}

/// Builds a fresh player for one of the match's threads.
pub type AgentFactory<'a, G> = dyn Fn() -> Result<Box<dyn Agent<G>>> + Sync + 'a;

/// Game `i` of a match: A moves first in even-numbered games, and each player's seed follows
/// the match seed and `i` alone, so the result does not depend on which thread plays it.
fn play_match_game<G: Game>(
    a: &mut dyn Agent<G>,
    b: &mut dyn Agent<G>,
    opts: &MatchOptions,
    i: usize,
) -> Result<MatchGame> {
    let game_seed = item_seed(opts.seed, i as u64);
    a.new_game(streams::PLAYER_A.seed(game_seed, 0));
    b.new_game(streams::PLAYER_B.seed(game_seed, 0));
    let (start, opening) = openings::opening_moves::<G>(opts.seed, i as u64, opts.opening_plies);
    let a_first = i.is_multiple_of(2);
    let (outcome, moves) = if a_first {
        play_game(a, b, &start)?
    } else {
        play_game(b, a, &start)?
    };
    Ok(MatchGame {
        a_first,
        outcome,
        opening,
        moves,
    })
}

/// A game of a match as it was played.
struct MatchGame {
    a_first: bool,
    outcome: Outcome,
    /// The random plies before the players' first move ([`MatchOptions::opening_plies`]).
    opening: Vec<Move>,
    moves: Vec<Move>,
}

impl MatchGame {
    fn a_value(&self) -> f32 {
        let a_side = if self.a_first {
            Player::First
        } else {
            Player::Second
        };
        self.outcome.value_for(a_side)
    }
}

/// A's value of games `games` of the match (their numbers, so a shard of a match played
/// anywhere gives what the whole match gives for those games), played by `opts.threads`
/// threads.
pub fn play_match_games<G: Game>(
    make_a: &AgentFactory<G>,
    make_b: &AgentFactory<G>,
    games: Range<u64>,
    opts: &MatchOptions,
) -> Result<Vec<f32>> {
    let played = play_games(make_a, make_b, games, opts)?;
    Ok(played.iter().map(MatchGame::a_value).collect())
}

fn play_games<G: Game>(
    make_a: &AgentFactory<G>,
    make_b: &AgentFactory<G>,
    games: Range<u64>,
    opts: &MatchOptions,
) -> Result<Vec<MatchGame>> {
    let n = games.end.saturating_sub(games.start);
    let task = progress::task(n, "games", opts.progress);
    let players = || -> Result<_> { Ok((make_a()?, make_b()?)) };
    let first = games.start as usize;
    for_each_item(n as usize, opts.threads, &task, players, |(a, b), i| {
        play_match_game(a.as_mut(), b.as_mut(), opts, first + i)
    })
}

/// Runs `work(state, i)` for every `i` in `0..n` on `threads` threads, each with its own state
/// from `make` (its players, a solver), each taking the next item not yet taken until none is
/// left or one of them fails; returns the results in item order. An item's result must not
/// depend on the thread that does it (seed it from `i`), so the whole is deterministic.
pub(crate) fn for_each_item<S, T: Send>(
    n: usize,
    threads: usize,
    task: &progress::Task,
    make: impl Fn() -> Result<S> + Sync,
    work: impl Fn(&mut S, usize) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    let next = AtomicUsize::new(0);
    let failed = Mutex::new(None::<anyhow::Error>);
    let thread = || -> Result<()> {
        crate::nn::use_caller_threads();
        let mut state = make()?;
        loop {
            if failed.lock().map(|f| f.is_some()).unwrap_or(true) {
                return Ok(());
            }
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return Ok(());
            }
            let value = work(&mut state, i)?;
            if let Ok(mut r) = results.lock() {
                r[i] = Some(value);
            }
            task.inc(1);
        }
    };
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, n.max(1)) {
            scope.spawn(|| {
                if let Err(e) = thread() {
                    if let Ok(mut f) = failed.lock() {
                        f.get_or_insert(e);
                    }
                }
            });
        }
    });
    let poisoned = || anyhow!("a worker thread panicked");
    if let Some(e) = failed.into_inner().map_err(|_| poisoned())? {
        return Err(e);
    }
    let results = results.into_inner().map_err(|_| poisoned())?;
    results
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.ok_or_else(|| anyhow!("item {i} was not done")))
        .collect()
}

/// Plays `opts.games` games, A first in even-numbered games. `make_a` and `make_b` build a
/// player for each thread.
pub fn play_match<G: Game>(
    a_name: &str,
    b_name: &str,
    make_a: &AgentFactory<G>,
    make_b: &AgentFactory<G>,
    opts: &MatchOptions,
) -> Result<MatchResult> {
    Ok(play_match_recorded(a_name, b_name, make_a, make_b, opts)?.0)
}

/// [`play_match`], and every game as it was played, game 0 first.
pub fn play_match_recorded<G: Game>(
    a_name: &str,
    b_name: &str,
    make_a: &AgentFactory<G>,
    make_b: &AgentFactory<G>,
    opts: &MatchOptions,
) -> Result<(MatchResult, Vec<GameRecord>)> {
    let started = Instant::now();
    let played = play_games(make_a, make_b, 0..opts.games, opts)?;
    let seconds = started.elapsed().as_secs_f64();
    let values: Vec<f32> = played.iter().map(MatchGame::a_value).collect();
    let result = match_result::<G>(a_name, b_name, &values, seconds);
    let records = played
        .iter()
        .enumerate()
        .map(|(i, g)| GameRecord::new::<G>(i as u64, a_name, b_name, g))
        .collect();
    Ok((result, records))
}

/// One game of a match in the game's own notation (`zero arena --record`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// The game's name (`connect4`, ...), as in [`MatchResult::game`].
    pub game: String,
    /// The game's number in the match; A moves first in even-numbered games.
    pub number: u64,
    pub first: String,
    pub second: String,
    /// The random plies before the players' first move.
    pub opening: String,
    /// Every move from the start, the opening's random plies included (a version 1 record's
    /// moves start after the opening: read them with [`GameRecord::line`]). Joined without
    /// spaces where every move is one character, so a Connect Four game is a Pons position
    /// string (`zero solve` reads its prefixes), else with spaces.
    pub moves: String,
    /// `1-0` (the first player won), `0-1` or `1/2-1/2`.
    pub result: String,
    /// 2 since `moves` holds the opening too; absent (1) in records written before.
    #[serde(default = "first_version")]
    pub version: u32,
}

/// The version of records written now.
const RECORD_VERSION: u32 = 2;

fn first_version() -> u32 {
    1
}

impl GameRecord {
    fn new<G: Game>(number: u64, a_name: &str, b_name: &str, played: &MatchGame) -> GameRecord {
        let (first, second) = if played.a_first {
            (a_name, b_name)
        } else {
            (b_name, a_name)
        };
        let mut pos = G::new();
        let names: Vec<String> = played
            .opening
            .iter()
            .chain(&played.moves)
            .map(|&m| {
                let name = pos.format_move(m);
                pos.play(m);
                name
            })
            .collect();
        let sep = if names.iter().all(|n| n.chars().count() == 1) {
            ""
        } else {
            " "
        };
        let result = match played.outcome {
            Outcome::Win(Player::First) => "1-0",
            Outcome::Win(Player::Second) => "0-1",
            Outcome::Draw => "1/2-1/2",
        };
        GameRecord {
            game: G::NAME.to_string(),
            number,
            first: first.to_string(),
            second: second.to_string(),
            opening: names[..played.opening.len()].join(sep),
            moves: names.join(sep),
            result: result.to_string(),
            version: RECORD_VERSION,
        }
    }

    /// Every move from the start, opening included, whichever version wrote the record.
    pub fn line(&self) -> String {
        if self.version >= 2 || self.opening.is_empty() {
            return self.moves.clone();
        }
        match (one_char_moves(&self.opening), self.moves.is_empty()) {
            (_, true) => self.opening.clone(),
            (true, false) if one_char_moves(&self.moves) => {
                format!("{}{}", self.opening, self.moves)
            }
            _ => format!("{} {}", self.opening, self.moves),
        }
    }

    /// The plies of the random opening.
    pub fn opening_plies(&self) -> usize {
        if one_char_moves(&self.opening) {
            self.opening.chars().count()
        } else {
            self.opening.split_whitespace().count()
        }
    }
}

/// Whether moves were joined without spaces: the games whose moves are one character each
/// name them by digits (Connect Four's columns, tic-tac-toe's cells).
fn one_char_moves(joined: &str) -> bool {
    joined.chars().all(|c| c.is_ascii_digit())
}

/// The result of a match from A's value of each of its games, game 0 first.
pub fn match_result<G: Game>(
    a_name: &str,
    b_name: &str,
    values: &[f32],
    seconds: f64,
) -> MatchResult {
    let (mut a_first, mut a_second) = (Tally::default(), Tally::default());
    for (i, &v) in values.iter().enumerate() {
        if i % 2 == 0 {
            a_first.add(v);
        } else {
            a_second.add(v);
        }
    }
    let total = a_first.merged(&a_second);
    let (elo, elo_ci95) = elo_with_interval(&total);
    MatchResult {
        game: G::NAME.to_string(),
        a: a_name.to_string(),
        b: b_name.to_string(),
        games: values.len() as u64,
        a_first,
        a_second,
        total,
        elo,
        elo_ci95,
        seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::RandomAgent;
    use crate::games::TicTacToe;

    fn random_match(seed: u64, threads: usize) -> MatchResult {
        let make = || -> Result<Box<dyn Agent<TicTacToe>>> { Ok(Box::new(RandomAgent::new())) };
        let opts = MatchOptions {
            games: 20_000,
            seed,
            threads,
            progress: false,
            opening_plies: 0,
        };
        play_match("random", "random", &make, &make, &opts).unwrap()
    }

    #[test]
    fn random_tictactoe_matches_known_rates_and_is_reproducible() {
        let r = random_match(1, 2);
        // Exact figures for uniformly random play: first player wins 58.49%, draws 12.70%.
        let first_wins = r.a_first.wins + r.a_second.losses;
        let rate = first_wins as f64 / r.games as f64;
        assert!((rate - 0.585).abs() < 0.015, "first player won {rate}");
        let draws = r.total.draws as f64 / r.games as f64;
        assert!((draws - 0.127).abs() < 0.01, "draws {draws}");
        // same seed, same result, whatever the number of threads
        let again = random_match(1, 1);
        assert_eq!(r.total, again.total);
        assert_eq!(r.a_first, again.a_first);
        assert_ne!(random_match(2, 2).a_first, r.a_first);
    }

    #[test]
    fn a_failing_player_fails_the_match() {
        struct Broken;
        impl Agent<TicTacToe> for Broken {
            fn choose(&mut self, _: &TicTacToe) -> Result<Move> {
                Err(anyhow!("broken on purpose"))
            }
        }
        let random = || -> Result<Box<dyn Agent<TicTacToe>>> { Ok(Box::new(RandomAgent::new())) };
        let broken = || -> Result<Box<dyn Agent<TicTacToe>>> { Ok(Box::new(Broken)) };
        let opts = MatchOptions {
            games: 10,
            seed: 0,
            threads: 2,
            progress: false,
            opening_plies: 0,
        };
        let e = play_match("r", "b", &random, &broken, &opts).unwrap_err();
        assert!(e.to_string().contains("broken on purpose"), "{e}");
    }

    #[test]
    fn perfect_players_split_every_pair_of_a_match_with_openings() {
        use crate::solvers::exhaustive::SolverAgent;
        let solver = || -> anyhow::Result<Box<dyn Agent<TicTacToe>>> {
            Ok(Box::new(SolverAgent::<TicTacToe>::new()))
        };
        let opts = MatchOptions {
            games: 200,
            seed: 9,
            threads: 2,
            progress: false,
            opening_plies: 2,
        };
        let r = play_match("a", "b", &solver, &solver, &opts).unwrap();
        // Each opening's value is the same from either side: a pair is a win and a loss, or
        // two draws. Some random openings are lost (unlike the empty board, a draw).
        assert_eq!(r.total.wins, r.total.losses);
        assert!(r.total.wins > 10, "{:?}", r.total);
        assert_eq!(r.total.games(), 200);
    }
}
