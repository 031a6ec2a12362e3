//! The rules of Gumbel AlphaZero (Danihelka, Guez, Schrittwieser and Silver, "Policy
//! improvement by planning with Gumbel", ICLR 2022), as DeepMind's `mctx` implements them
//! (`qtransforms.py`, `seq_halving.py`, `action_selection.py`), over one node's children:
//!
//! - at the root, Gumbel-top-k sampling and sequential halving: simulation `s` goes to the
//!   best-scored child (Gumbel noise + logit + σ(completed Q)) among those with exactly
//!   `schedule[s]` visits, which visits the k best sampled moves, then the better half of them
//!   twice as often, and so on;
//! - inside the tree, the deterministic choice that makes the visits follow the improved policy;
//! - as the policy target, the improved policy softmax(logit + σ(completed Q)) over every legal
//!   move, visited or not, which improves on the prior even with very few simulations.
//!
//! Values are for the player choosing among the children, in [-1, 1].

use arrayvec::ArrayVec;

/// One child as the rules see it.
#[derive(Clone, Copy, Debug)]
pub struct ChildStats {
    /// The network's prior, renormalised over the legal moves.
    pub prior: f32,
    pub visits: u32,
    /// The mean value for the chooser, meaningful when visited or decided.
    pub q: f32,
    /// The value is exact (a finished game, or proven), visits or not.
    pub decided: bool,
}

/// A value per child.
pub type PerChild = ArrayVec<f32, 32>;

/// σ's visit offset: mctx's default for `qtransform_completed_by_mix_value`
/// (`maxvisit_init = 50`, values rescaled to [0, 1]).
const C_VISIT: f32 = 50.0;

/// σ's value scale by default: mctx's `value_scale = 0.1` (the paper used 1.0 for Go and
/// chess, with values normalised over the whole tree rather than over one node's children).
pub const DEFAULT_VALUE_SCALE: f32 = 0.1;

/// Whether `scale` is a value scale σ can use: above 0 and at most 100, so that σ stays finite
/// (mctx's 0.1; the paper's 1.0). A run's settings and the `run.json` a player reads are both
/// checked against it.
pub fn valid_value_scale(scale: f64) -> bool {
    scale > 0.0 && scale <= 100.0
}

/// A floor under priors, so that a logit is finite.
const MIN_PRIOR: f32 = 1e-12;

fn known(c: &ChildStats) -> bool {
    c.visits > 0 || c.decided
}

/// The log-prior of each child (the network's logits up to a constant, which no rule sees).
pub fn logits(children: &[ChildStats]) -> PerChild {
    children
        .iter()
        .map(|c| c.prior.max(MIN_PRIOR).ln())
        .collect()
}

/// σ(completed Q) of each child: a child's value where known, else the mixed value (the
/// network's value of the parent blended with the prior-weighted values of the known
/// children), rescaled to [0, 1] over the children and scaled by (50 + most visits) times
/// `value_scale`.
pub fn sigma_completed_q(children: &[ChildStats], raw_value: f32, value_scale: f32) -> PerChild {
    let visits: u32 = children.iter().map(|c| c.visits).sum();
    let (mut prior_sum, mut weighted_q) = (0.0f32, 0.0f32);
    for c in children.iter().filter(|c| known(c)) {
        prior_sum += c.prior.max(MIN_PRIOR);
        weighted_q += c.prior.max(MIN_PRIOR) * c.q;
    }
    let mixed = if prior_sum > 0.0 {
        (raw_value + visits as f32 * weighted_q / prior_sum) / (visits as f32 + 1.0)
    } else {
        raw_value
    };
    let completed: PerChild = children
        .iter()
        .map(|c| if known(c) { c.q } else { mixed })
        .collect();
    let lo = completed.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = completed.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let range = (hi - lo).max(1e-8);
    let most = children.iter().map(|c| c.visits).max().unwrap_or(0);
    let scale = (C_VISIT + most as f32) * value_scale;
    completed.iter().map(|q| scale * (q - lo) / range).collect()
}

/// softmax(logit + σ(completed Q)): the improved policy, the policy target of Gumbel
/// AlphaZero.
pub fn improved_policy(children: &[ChildStats], raw_value: f32, value_scale: f32) -> PerChild {
    let sigma = sigma_completed_q(children, raw_value, value_scale);
    let scores: PerChild = logits(children)
        .iter()
        .zip(&sigma)
        .map(|(l, s)| l + s)
        .collect();
    let top = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exp: PerChild = scores.iter().map(|s| (s - top).exp()).collect();
    let total: f32 = exp.iter().sum();
    exp.iter().map(|e| e / total).collect()
}

/// The child a simulation takes inside the tree: the one whose share of the visits lags its
/// improved policy most, argmax π'(a) - N(a) / (1 + ΣN).
pub fn interior_choice(children: &[ChildStats], raw_value: f32, value_scale: f32) -> usize {
    let policy = improved_policy(children, raw_value, value_scale);
    let visits: u32 = children.iter().map(|c| c.visits).sum();
    let mut best = (0, f32::NEG_INFINITY);
    for (i, (c, p)) in children.iter().zip(&policy).enumerate() {
        let score = p - c.visits as f32 / (1.0 + visits as f32);
        if score > best.1 {
            best = (i, score);
        }
    }
    best.0
}

/// Each root child's score for sequential halving: Gumbel noise + logit + σ(completed Q).
pub fn root_scores(
    children: &[ChildStats],
    gumbel: &[f32],
    raw_value: f32,
    value_scale: f32,
) -> PerChild {
    let sigma = sigma_completed_q(children, raw_value, value_scale);
    logits(children)
        .iter()
        .enumerate()
        .map(|(i, l)| gumbel.get(i).copied().unwrap_or(0.0) + l + sigma[i])
        .collect()
}

/// The child the root's simulation goes to: the best-scored among those with `visits` visits
/// (what the schedule asks for), or the best-scored among the least visited of the `considered`
/// best by noise and logit when none has exactly that many (a leaf still waiting, a reused
/// tree).
pub fn root_choice(
    children: &[ChildStats],
    gumbel: &[f32],
    raw_value: f32,
    value_scale: f32,
    visits: u32,
    considered: usize,
) -> usize {
    let scores = root_scores(children, gumbel, raw_value, value_scale);
    let argmax = |keep: &dyn Fn(usize) -> bool| {
        (0..children.len())
            .filter(|&i| keep(i))
            .max_by(|&a, &b| scores[a].total_cmp(&scores[b]))
    };
    if let Some(i) = argmax(&|i| children[i].visits == visits) {
        return i;
    }
    // The considered children: the top `considered` by noise and logit.
    let prior_scores: PerChild = logits(children)
        .iter()
        .enumerate()
        .map(|(i, l)| gumbel.get(i).copied().unwrap_or(0.0) + l)
        .collect();
    let mut order: ArrayVec<usize, 32> = (0..children.len()).collect();
    order.sort_by(|&a, &b| prior_scores[b].total_cmp(&prior_scores[a]));
    order.truncate(considered.max(1));
    let least = order.iter().map(|&i| children[i].visits).min().unwrap_or(0);
    argmax(&|i| order.contains(&i) && children[i].visits == least).unwrap_or(0)
}

/// Sequential halving's schedule for `budget` simulations over `considered` moves: entry `s`
/// is how many visits the child that simulation `s` goes to has before it (mctx's
/// `get_sequence_of_considered_visits`). Each of ⌈log2 k⌉ phases spends about an equal share
/// of the budget on the moves still in, and halves them.
pub fn halving_schedule(considered: usize, budget: u32) -> Vec<u32> {
    let n = budget as usize;
    if considered <= 1 {
        return (0..budget).collect();
    }
    let phases = (considered as f64).log2().ceil() as usize;
    let mut schedule = Vec::with_capacity(n);
    let mut visits = vec![0u32; considered];
    let mut remaining = considered;
    while schedule.len() < n {
        let extra = (n / (phases * remaining)).max(1);
        for _ in 0..extra {
            schedule.extend_from_slice(&visits[..remaining]);
            for v in &mut visits[..remaining] {
                *v += 1;
            }
        }
        remaining = (remaining / 2).max(2);
    }
    schedule.truncate(n);
    schedule
}

/// A draw from the standard Gumbel distribution, from a uniform draw in (0, 1).
pub fn gumbel_from_uniform(u: f64) -> f32 {
    let u = u.clamp(1e-12, 1.0 - 1e-12);
    -(-u.ln()).ln() as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn child(prior: f32, visits: u32, q: f32) -> ChildStats {
        ChildStats {
            prior,
            visits,
            q,
            decided: false,
        }
    }

    #[test]
    fn the_schedule_matches_mctx() {
        // mctx's get_sequence_of_considered_visits(4, 12) (computed by hand from its code):
        // 2 phases; 12 / (2 * 4) = 1 round over 4, then 12 / (2 * 2) = 3 rounds over 2, ...
        assert_eq!(
            halving_schedule(4, 12),
            [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
        );
        assert_eq!(halving_schedule(1, 3), [0, 1, 2]);
        // Every phase's entries are visits the moves still in actually have.
        let s = halving_schedule(7, 64);
        assert_eq!(s.len(), 64);
        assert_eq!(&s[..7], &[0; 7]);
    }

    #[test]
    fn the_improved_policy_moves_towards_better_values() {
        let kids = [child(0.5, 4, -0.5), child(0.3, 4, 0.8), child(0.2, 0, 0.0)];
        let p = improved_policy(&kids, 0.0, DEFAULT_VALUE_SCALE);
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(p[1] > 0.3 && p[0] < 0.5, "{p:?}");
        // With no visits at all the improved policy is the prior.
        let fresh = [child(0.5, 0, 0.0), child(0.3, 0, 0.0), child(0.2, 0, 0.0)];
        let p = improved_policy(&fresh, 0.3, DEFAULT_VALUE_SCALE);
        for (a, b) in p.iter().zip([0.5, 0.3, 0.2]) {
            assert!((a - b).abs() < 1e-5, "{p:?}");
        }
    }

    #[test]
    fn a_larger_value_scale_trusts_the_values_more() {
        // The better child by value has the smaller prior.
        let kids = [child(0.7, 3, -0.2), child(0.3, 3, 0.4)];
        let share = |scale| improved_policy(&kids, 0.0, scale)[1];
        let (low, mid, high) = (share(0.05), share(DEFAULT_VALUE_SCALE), share(0.25));
        assert!(
            0.3 < low && low < mid && mid < high && high < 1.0,
            "{low} {mid} {high}"
        );
        // σ is (50 + most visits) x scale x the value rescaled to [0, 1] over the children.
        let sigma = sigma_completed_q(&kids, 0.0, 0.25);
        assert!(
            (sigma[1] - 53.0 * 0.25).abs() < 1e-4 && sigma[0].abs() < 1e-6,
            "{sigma:?}"
        );
    }

    #[test]
    fn interior_choice_follows_the_improved_policy() {
        // Equal priors, one child clearly better: it gets the next visit...
        let kids = [child(0.5, 3, -0.2), child(0.5, 3, 0.6)];
        assert_eq!(interior_choice(&kids, 0.0, DEFAULT_VALUE_SCALE), 1);
        // ...and an unvisited child is tried once its share lags far enough.
        let kids = [child(0.5, 10, 0.1), child(0.5, 0, 0.0)];
        assert_eq!(interior_choice(&kids, 0.1, DEFAULT_VALUE_SCALE), 1);
    }

    #[test]
    fn root_choice_follows_the_schedule() {
        let kids = [child(0.6, 1, 0.0), child(0.3, 0, 0.0), child(0.1, 0, 0.0)];
        // Children with 0 visits asked for: the best of those by noise + logit.
        assert_eq!(
            root_choice(&kids, &[0.0; 3], 0.0, DEFAULT_VALUE_SCALE, 0, 3),
            1
        );
        // Noise can change the order.
        assert_eq!(
            root_choice(&kids, &[0.0, 0.0, 5.0], 0.0, DEFAULT_VALUE_SCALE, 0, 3),
            2
        );
        // None has 2 visits: the least visited of the considered.
        assert_eq!(
            root_choice(&kids, &[0.0; 3], 0.0, DEFAULT_VALUE_SCALE, 2, 1),
            0
        );
    }
}
