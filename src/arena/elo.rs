//! Elo difference from a tally of games, with a 95% interval.

use crate::games::Tally;

fn elo_of(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// Elo difference and its 95% interval from the per-game scores' standard error. Scores of 0
/// or 1 are capped at half a game from the edge, so that the figures stay finite.
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
    }
}
