//! Policy surprise weighting (KataGo's g170 run; "Policy Surprise Weighting" in KataGo's
//! docs/KataGoMethods.md): positions whose search target the network found surprising are drawn more
//! often in training.
//!
//! Self-play records, for each ply, the KL divergence from the root's prior to the policy
//! target ([`kl_divergence`]): how much the search taught at that position. Training then
//! gives each position weight `(1 - share) + share * s / mean_s`, `s` its surprise and
//! `mean_s` its game's mean ([`relative_surprises`], [`weigh_by_surprise`]): half of a game's
//! weight (share 0.5, KataGo's) spread evenly, the other half by surprise. A game's positions
//! keep their total weight; within it, the positions where search overturned the prior come
//! up more often, at full gradient (not importance-corrected: the policy only has to rank the
//! moves worth searching, and biasing rare good moves upward is harmless).

use super::samples::Samples;

/// KL(target || prior) in nats, over the moves the target gives mass; a prior below 1e-6 is
/// taken as 1e-6, so that a move the network all but ruled out counts as very surprising
/// rather than infinitely. 0 for a missing target (all zero).
pub fn kl_divergence(target: &[f32], prior: &[f32]) -> f32 {
    let kl: f32 = target
        .iter()
        .zip(prior)
        .filter(|(&t, _)| t > 0.0)
        .map(|(&t, &p)| t * (t / p.max(1e-6)).ln())
        .sum();
    kl.max(0.0)
}

/// Each surprise over its game's mean among `trained` plies that have a policy target
/// (`has_target`): 1 on average over them, 1 for plies without a target and for a game
/// whose surprises are all 0 or were not recorded (`surprises` empty: records from before
/// the setting).
pub fn relative_surprises(surprises: &[f32], has_target: &[bool]) -> Vec<f32> {
    let n = has_target.len();
    if surprises.len() != n {
        return vec![1.0; n];
    }
    let (sum, count) = surprises
        .iter()
        .zip(has_target)
        .filter(|(_, &t)| t)
        .fold((0.0f64, 0usize), |(s, c), (&x, _)| {
            (s + f64::from(x), c + 1)
        });
    if count == 0 || sum <= 0.0 {
        return vec![1.0; n];
    }
    let mean = sum / count as f64;
    surprises
        .iter()
        .zip(has_target)
        .map(|(&s, &t)| if t { (f64::from(s) / mean) as f32 } else { 1.0 })
        .collect()
}

/// Multiplies each position's drawing weight (1 each when the samples have none) by
/// `(1 - share) + share * relative surprise`; `share` 0 leaves the samples as they are.
pub fn weigh_by_surprise(samples: &mut Samples, share: f64) {
    if share <= 0.0 || samples.is_empty() {
        return;
    }
    let mut total = 0.0;
    let weights = samples.weights();
    let surprises = (0..samples.len()).map(|i| samples.surprises.get(i).copied().unwrap_or(1.0));
    samples.cumulative_weights = weights
        .iter()
        .zip(surprises)
        .map(|(w, s)| {
            total += w * ((1.0 - share) + share * f64::from(s));
            total
        })
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kl_divergence_is_zero_for_the_prior_itself_and_grows_with_surprise() {
        let prior = [0.5, 0.25, 0.25, 0.0];
        assert_eq!(kl_divergence(&prior, &prior), 0.0);
        // All the mass on a move of prior 1/4: ln 4.
        let kl = kl_divergence(&[0.0, 1.0, 0.0, 0.0], &prior);
        assert!((kl - 4f32.ln()).abs() < 1e-6);
        // A move of prior 0 is 1e-6, not infinity.
        let kl = kl_divergence(&[0.0, 0.0, 0.0, 1.0], &prior);
        assert!((kl - 1e6f32.ln()).abs() < 1e-3);
        // No target: nothing learned.
        assert_eq!(kl_divergence(&[0.0; 4], &prior), 0.0);
    }

    #[test]
    fn relative_surprises_average_one_over_the_plies_with_a_target() {
        let r = relative_surprises(&[1.0, 3.0, 9.0, 0.0], &[true, true, false, true]);
        // Mean over the three with a target: 4 / 3.
        assert_eq!(r, [0.75, 2.25, 1.0, 0.0]);
        // Not recorded, or nothing surprising: even.
        assert_eq!(relative_surprises(&[], &[true, true]), [1.0, 1.0]);
        assert_eq!(relative_surprises(&[0.0, 0.0], &[true, true]), [1.0, 1.0]);
    }

    #[test]
    fn weights_mix_an_even_share_with_the_surprise_and_keep_earlier_weights() {
        let mut s = Samples {
            values: vec![0.0; 3],
            surprises: vec![0.0, 1.0, 2.0],
            ..Samples::default()
        };
        weigh_by_surprise(&mut s, 0.0);
        assert!(s.cumulative_weights.is_empty());
        weigh_by_surprise(&mut s, 0.5);
        assert_eq!(s.weights(), [0.5, 1.0, 1.5]);
        // Weights already there (position averaging's) are multiplied.
        s.cumulative_weights = vec![2.0, 3.0, 7.0];
        weigh_by_surprise(&mut s, 1.0);
        assert_eq!(s.weights(), [0.0, 1.0, 8.0]);
    }
}
