//! Value targets that lean on later searches instead of the game's end. A self-play game
//! samples its moves, so the result of a position's game is the result of the moves that were
//! drawn after it, which for a position with few stones are many: measured on the default
//! run's iteration 15, the result is wrong (by the solver) for about 40% of the positions with
//! 4-10 stones (docs/ablations.md). A bootstrapped target replaces the rest of the game, or
//! part of it, with the search's root value of a later position:
//! - [`ValueBootstrap::Greedy`]: AlphaZero with greedy backups (Willemsen, Baier and Kaisers,
//!   "Value targets in off-policy AlphaZero", 2021): the result counts only while every move
//!   played from the position on was the search's best; at the first move that was not, the
//!   target is that position's root value;
//! - [`ValueBootstrap::Lambda`]: the λ-return over the later positions' root values, with the
//!   result at the end (TD(λ)).

use serde::{Deserialize, Serialize};

/// How a training position's value target looks past its position ([`bootstrapped_returns`]);
/// absent in the presets: the target is the game's result.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueBootstrap {
    /// The result until the first move that was not the search's best, there its root value.
    Greedy,
    /// The λ-return: each later ply's root value weighs `(1 - λ) λ^(k-1)` at `k` plies on,
    /// the result what remains. 1 is the result alone, 0 the next position's root value.
    Lambda(f32),
}

/// One game's plies as [`bootstrapped_returns`] reads them.
pub struct GamePlies<'a> {
    /// The moves played.
    pub moves: &'a [u8],
    /// Each ply's policy target, `num_actions` a ply; all zero where a ply has none.
    pub policies: &'a [f32],
    pub num_actions: usize,
    /// Each ply's root value for its mover.
    pub root_values: &'a [f32],
    /// The result for each ply's mover (alternating in sign: ±1 or 0).
    pub results: &'a [f32],
}

/// For each ply, the value target from its mover's view that replaces the game's result.
pub fn bootstrapped_returns(game: &GamePlies, how: ValueBootstrap) -> Vec<f32> {
    let n = game.moves.len();
    let root = |ply: usize| game.root_values.get(ply).copied();
    let mut out = vec![0.0; n];
    // Walking back from the last ply, the next ply's return is the mover's opponent's.
    for ply in (0..n).rev() {
        let later = match ply + 1 < n {
            true => Some(-out[ply + 1]),
            false => None,
        };
        let result = game.results[ply];
        out[ply] = match how {
            ValueBootstrap::Greedy => match was_best(game, ply) {
                true => later.unwrap_or(result),
                false => root(ply).unwrap_or(result),
            },
            ValueBootstrap::Lambda(lambda) => match (later, root(ply + 1)) {
                (Some(later), Some(next_root)) => (1.0 - lambda) * -next_root + lambda * later,
                _ => result,
            },
        };
    }
    out
}

/// Whether a ply's move had the highest probability in its policy target (the search's best
/// after its improvement); a ply without a target counts as best, having nothing to say.
fn was_best(game: &GamePlies, ply: usize) -> bool {
    let a = game.num_actions;
    let Some(policy) = game.policies.get(ply * a..(ply + 1) * a) else {
        return true;
    };
    let best = policy.iter().copied().fold(0.0f32, f32::max);
    let played = policy.get(game.moves[ply] as usize).copied().unwrap_or(0.0);
    best <= 0.0 || played >= best - 1e-6
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three plies of a two-action game; the first mover wins. The middle ply's move is not
    /// its policy's best.
    fn game<'a>(policies: &'a [f32], roots: &'a [f32]) -> GamePlies<'a> {
        GamePlies {
            moves: &[0, 1, 0],
            policies,
            num_actions: 2,
            root_values: roots,
            results: &[1.0, -1.0, 1.0],
        }
    }

    #[test]
    fn greedy_backup_stops_at_the_first_move_that_was_not_the_best() {
        let policies = [0.9, 0.1, 0.8, 0.2, 0.6, 0.4];
        let roots = [0.5, 0.3, 0.7];
        let r = bootstrapped_returns(&game(&policies, &roots), ValueBootstrap::Greedy);
        // Ply 2 played its best and ended the game: the result. Ply 1 did not: its root
        // value. Ply 0 played its best: ply 1's return from its own mover's view.
        assert_eq!(r, vec![-0.3, 0.3, 1.0]);
    }

    #[test]
    fn greedy_backup_with_only_best_moves_is_the_result() {
        let policies = [0.9, 0.1, 0.2, 0.8, 0.6, 0.4];
        let roots = [0.5, 0.3, 0.7];
        let r = bootstrapped_returns(&game(&policies, &roots), ValueBootstrap::Greedy);
        assert_eq!(r, vec![1.0, -1.0, 1.0]);
    }

    #[test]
    fn a_ply_without_a_policy_target_counts_as_best() {
        let policies = [0.0; 6];
        let roots = [0.5, 0.3, 0.7];
        let r = bootstrapped_returns(&game(&policies, &roots), ValueBootstrap::Greedy);
        assert_eq!(r, vec![1.0, -1.0, 1.0]);
    }

    #[test]
    fn lambda_return_matches_its_sum() {
        let policies = [0.0; 6];
        let roots = [0.5, 0.3, 0.7];
        let l = 0.8f32;
        let r = bootstrapped_returns(&game(&policies, &roots), ValueBootstrap::Lambda(l));
        // Ply 0: (1-λ)·(-q1) + (1-λ)λ·q2 + λ²·z, z = 1 for the first mover.
        let ply0 = (1.0 - l) * -0.3 + (1.0 - l) * l * 0.7 + l * l * 1.0;
        let ply1 = (1.0 - l) * -0.7 - l;
        let close = |a: f32, b: f32| (a - b).abs() < 1e-6;
        assert!(
            close(r[0], ply0) && close(r[1], ply1) && close(r[2], 1.0),
            "{r:?}"
        );
    }

    #[test]
    fn lambda_one_is_the_result_and_zero_the_next_root_value() {
        let policies = [0.0; 6];
        let roots = [0.5, 0.3, 0.7];
        let one = bootstrapped_returns(&game(&policies, &roots), ValueBootstrap::Lambda(1.0));
        assert_eq!(one, vec![1.0, -1.0, 1.0]);
        let zero = bootstrapped_returns(&game(&policies, &roots), ValueBootstrap::Lambda(0.0));
        assert_eq!(zero, vec![-0.3, -0.7, 1.0]);
    }
}
