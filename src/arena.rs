//! The match runner every evaluation uses: N games between two players, alternating who moves
//! first, spread over threads, with a deterministic result for a given seed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{anyhow, Result};
use serde::Serialize;

use crate::games::{mix64, Game, Move, Outcome, Player};
use crate::players::Agent;

/// Wins, losses and draws from one player's view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub wins: u64,
    pub losses: u64,
    pub draws: u64,
}

impl Tally {
    pub fn games(&self) -> u64 {
        self.wins + self.losses + self.draws
    }
    /// Score with draws as half a win, in [0, 1].
    pub fn score(&self) -> f64 {
        if self.games() == 0 {
            return 0.5;
        }
        (self.wins as f64 + 0.5 * self.draws as f64) / self.games() as f64
    }
    pub fn add(&mut self, value: f32) {
        if value > 0.0 {
            self.wins += 1;
        } else if value < 0.0 {
            self.losses += 1;
        } else {
            self.draws += 1;
        }
    }
    fn merged(&self, o: &Tally) -> Tally {
        Tally {
            wins: self.wins + o.wins,
            losses: self.losses + o.losses,
            draws: self.draws + o.draws,
        }
    }
}

/// The result of a match, from A's view.
#[derive(Clone, Debug, Serialize)]
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

fn elo_of(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// Elo difference and its 95% interval from the per-game scores' standard error.
pub fn elo_with_interval(t: &Tally) -> (f64, [f64; 2]) {
    let n = t.games().max(1) as f64;
    let edge = 0.5 / n;
    let s = t.score().clamp(edge, 1.0 - edge);
    let raw = t.score();
    let var = (t.wins as f64 * (1.0 - raw).powi(2)
        + t.draws as f64 * (0.5 - raw).powi(2)
        + t.losses as f64 * raw.powi(2))
        / n;
    let se = (var / n).sqrt();
    let lo = (s - 1.96 * se).clamp(edge, 1.0 - edge);
    let hi = (s + 1.96 * se).clamp(edge, 1.0 - edge);
    (elo_of(s), [elo_of(lo), elo_of(hi)])
}

impl MatchResult {
    /// The table in the style of the material: rows "A first", "A second", "total".
    pub fn table(&self) -> String {
        let mut s = format!(
            "{}: {} (A) vs {} (B), {} games, {:.1} s\n",
            self.game, self.a, self.b, self.games, self.seconds
        );
        s.push_str(&format!(
            "{:<10} {:>16} {:>16} {:>16}\n",
            "", "wins", "losses", "draws"
        ));
        for (name, t) in [
            ("A first", &self.a_first),
            ("A second", &self.a_second),
            ("total", &self.total),
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
        // `+ 0.0` turns a negative zero into a plain one for printing
        s.push_str(&format!(
            "Elo A - B: {:+.0} (95% interval {:+.0} .. {:+.0})\n",
            self.elo + 0.0,
            self.elo_ci95[0] + 0.0,
            self.elo_ci95[1] + 0.0
        ));
        s
    }
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
        let mover = pos.to_move();
        let m = match mover {
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
    pub progress: bool,
}

/// Plays `opts.games` games, A first in even-numbered games. `make_a` and `make_b` build a
/// player for each thread.
pub fn play_match<G, FA, FB>(
    a_name: &str,
    b_name: &str,
    make_a: FA,
    make_b: FB,
    opts: &MatchOptions,
) -> Result<MatchResult>
where
    G: Game,
    FA: Fn() -> Result<Box<dyn Agent<G>>> + Sync,
    FB: Fn() -> Result<Box<dyn Agent<G>>> + Sync,
{
    let started = Instant::now();
    let n = opts.games as usize;
    // A's value of game i, filled in by whichever thread plays it.
    let results: Mutex<Vec<Option<f32>>> = Mutex::new(vec![None; n]);
    let next = AtomicUsize::new(0);
    let bar = crate::cli::progress_bar(opts.games, "games", opts.progress);
    let threads = opts.threads.clamp(1, n.max(1));
    let errors: Mutex<Vec<anyhow::Error>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let run = || -> Result<()> {
                    let mut a = make_a()?;
                    let mut b = make_b()?;
                    loop {
                        if !errors.lock().map(|e| e.is_empty()).unwrap_or(false) {
                            return Ok(());
                        }
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n {
                            return Ok(());
                        }
                        let game_seed = mix64(opts.seed ^ mix64(i as u64));
                        a.new_game(mix64(game_seed ^ 0xa));
                        b.new_game(mix64(game_seed ^ 0xb));
                        let a_first = i.is_multiple_of(2);
                        let (outcome, _) = if a_first {
                            play_game(a.as_mut(), b.as_mut(), &G::new())?
                        } else {
                            play_game(b.as_mut(), a.as_mut(), &G::new())?
                        };
                        let a_side = if a_first {
                            Player::First
                        } else {
                            Player::Second
                        };
                        if let Ok(mut r) = results.lock() {
                            r[i] = Some(outcome.value_for(a_side));
                        }
                        bar.inc(1);
                    }
                };
                if let Err(e) = run() {
                    if let Ok(mut errs) = errors.lock() {
                        errs.push(e);
                    }
                }
            });
        }
    });
    bar.finish_and_clear();
    let mut errors = errors
        .into_inner()
        .map_err(|_| anyhow!("a match thread panicked"))?;
    if let Some(e) = errors.drain(..).next() {
        return Err(e);
    }
    let results = results
        .into_inner()
        .map_err(|_| anyhow!("a match thread panicked"))?;
    let (mut a_first, mut a_second) = (Tally::default(), Tally::default());
    for (i, r) in results.iter().enumerate() {
        let v = r.ok_or_else(|| anyhow!("game {i} was not played"))?;
        if i % 2 == 0 {
            a_first.add(v);
        } else {
            a_second.add(v);
        }
    }
    let total = a_first.merged(&a_second);
    let (elo, elo_ci95) = elo_with_interval(&total);
    Ok(MatchResult {
        game: G::NAME.to_string(),
        a: a_name.to_string(),
        b: b_name.to_string(),
        games: opts.games,
        a_first,
        a_second,
        total,
        elo,
        elo_ci95,
        seconds: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::TicTacToe;
    use crate::players::RandomAgent;

    fn random_match(seed: u64, threads: usize) -> MatchResult {
        let make = || -> Result<Box<dyn Agent<TicTacToe>>> { Ok(Box::new(RandomAgent::new())) };
        let opts = MatchOptions {
            games: 20_000,
            seed,
            threads,
            progress: false,
        };
        play_match("random", "random", make, make, &opts).unwrap()
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
    fn elo_is_zero_at_even_and_finite_at_extremes() {
        let even = Tally {
            wins: 10,
            losses: 10,
            draws: 0,
        };
        assert!(elo_with_interval(&even).0.abs() < 1e-9);
        let all = Tally {
            wins: 100,
            losses: 0,
            draws: 0,
        };
        let (e, ci) = elo_with_interval(&all);
        assert!(e.is_finite() && e > 500.0 && ci[0] <= e && e <= ci[1]);
    }
}
