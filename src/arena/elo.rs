//! Elo difference from a tally of games, with a 95% interval; and where one side won every
//! game, the honest figure: a one-sided bound.

use serde::Serialize;

use crate::games::Tally;

/// The confidence of the one-sided bound.
pub const ONE_SIDED_CONFIDENCE: f64 = 0.95;

/// What a match that one side won every game of says of the Elo difference: a bound on one
/// side only, for no number of games won makes it infinite.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OneSided {
    /// A won every game: A - B is at least this.
    AtLeast(f64),
    /// A lost every game: A - B is at most this.
    AtMost(f64),
}

/// The one-sided 95% bound of a match that A won or lost every game of (none otherwise): the
/// exact binomial (Clopper-Pearson) bound, the win rate `p` at which winning all `n` games has
/// a chance of 5% (`p^n = 0.05`).
pub fn one_sided_bound(t: &Tally) -> Option<OneSided> {
    let n = t.games();
    if n == 0 {
        return None;
    }
    let p = (1.0 - ONE_SIDED_CONFIDENCE).powf(1.0 / n as f64);
    if t.wins == n {
        Some(OneSided::AtLeast(elo_of(p)))
    } else if t.losses == n {
        Some(OneSided::AtMost(elo_of(1.0 - p)))
    } else {
        None
    }
}

fn elo_of(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// Elo difference and its 95% interval from the per-game scores' standard error. Scores of 0
/// or 1 are capped at half a game from the edge, so that the figures stay finite (and say
/// little: [`one_sided_bound`] is the figure to show then).
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(one_sided_bound(&even), None);
    }

    /// The win rate at Elo difference `elo`.
    fn rate(elo: f64) -> f64 {
        1.0 / (1.0 + 10f64.powf(-elo / 400.0))
    }

    #[test]
    fn a_match_won_or_lost_whole_gives_the_exact_one_sided_bound() {
        let won = Tally {
            wins: 20,
            losses: 0,
            draws: 0,
        };
        let Some(OneSided::AtLeast(bound)) = one_sided_bound(&won) else {
            panic!("no lower bound for 20-0");
        };
        // At the bound, 20 wins in 20 games has a chance of 5%.
        assert!((rate(bound).powi(20) - 0.05).abs() < 1e-9, "{bound}");
        assert!((bound - 316.6).abs() < 0.5, "{bound}");
        let lost = Tally {
            wins: 0,
            losses: 20,
            draws: 0,
        };
        let Some(OneSided::AtMost(upper)) = one_sided_bound(&lost) else {
            panic!("no upper bound for 0-20");
        };
        assert!((upper + bound).abs() < 1e-9, "{upper} {bound}");
        // One draw is not a whole match won.
        let drawn = Tally {
            wins: 19,
            losses: 0,
            draws: 1,
        };
        assert_eq!(one_sided_bound(&drawn), None);
    }
}
