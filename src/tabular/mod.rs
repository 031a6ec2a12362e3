//! Tabular baselines: Q-learning for tic-tac-toe and 4x4 Othello with exact grading by full
//! game-tree search, and Monte Carlo with exploring starts for Blackjack checked against the
//! exact optimum by dynamic programming.

pub mod blackjack_dp;
pub mod exact;
pub mod mces;
pub mod qlearning;
pub mod qtable;

/// The simplest fraction within `1e-13` of `x` with a denominator of at most 10^6, if any
/// (exact game values against a random player are such fractions).
pub fn as_fraction(x: f64) -> Option<(i64, i64)> {
    // Stern-Brocot descent via continued fractions.
    let (mut h0, mut h1, mut k0, mut k1) = (0i64, 1i64, 1i64, 0i64);
    let mut y = x;
    for _ in 0..64 {
        let a = y.floor();
        if a.abs() > 1e12 {
            return None;
        }
        let ai = a as i64;
        let (h2, k2) = (ai * h1 + h0, ai * k1 + k0);
        if k2 > 1_000_000 {
            return None;
        }
        if (h2 as f64 / k2 as f64 - x).abs() < 1e-13 {
            return Some((h2, k2));
        }
        (h0, h1, k0, k1) = (h1, h2, k1, k2);
        let frac = y - a;
        if frac < 1e-15 {
            return None;
        }
        y = 1.0 / frac;
    }
    None
}

/// `x` as `0.123456 (a/b)` when it is a small fraction, else the decimal alone.
pub fn show_exact(x: f64) -> String {
    match as_fraction(x) {
        Some((n, 1)) => format!("{x:.6} ({n})"),
        Some((n, d)) => format!("{x:.6} ({n}/{d})"),
        None => format!("{x:.6}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_are_recovered() {
        assert_eq!(as_fraction(191.0 / 192.0), Some((191, 192)));
        assert_eq!(as_fraction(874.0 / 945.0), Some((874, 945)));
        assert_eq!(as_fraction(-3.0 / 7.0), Some((-3, 7)));
        assert_eq!(as_fraction(1.0), Some((1, 1)));
        assert_eq!(as_fraction(std::f64::consts::PI), None);
    }
}
