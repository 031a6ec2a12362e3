//! Position averaging (AlphaZero.jl's `use_position_averaging` with its `LOG_WEIGHT`): a
//! position met n times in the replay window becomes one training sample whose targets are
//! the averages of its n occurrences', drawn with weight 1 + log2(n) instead of n times.
//!
//! Why: a Connect Four run's window holds each opening position thousands of times (only
//! 33-50% of an iteration's positions are distinct), each with the result of one game as its
//! value target. Averaged, their target is the mean result from there (less noise), and they
//! stop taking most of the batches from the positions met once.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use super::samples::Samples;

/// A position's input planes as a hash key, compared bit for bit.
struct Planes<'a>(&'a [f32]);

impl Hash for Planes<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for v in self.0 {
            state.write_u32(v.to_bits());
        }
    }
}

impl PartialEq for Planes<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(other.0)
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }
}

impl Eq for Planes<'_> {}

/// The sums over one position's occurrences.
struct Sums {
    policy: Vec<f32>,
    /// Occurrences with a policy target (playout cap randomization leaves some without).
    with_policy: u32,
    value: f32,
    /// Final-board targets (empty when the samples have none).
    board: Vec<f32>,
    /// Opponent-policy targets (empty when the samples have none).
    opponent_policy: Vec<f32>,
    /// Occurrences with an opponent-policy target (none after a game's last move).
    with_opponent_policy: u32,
    /// Relative policy surprises ([`Samples::surprises`]).
    surprise: f32,
    count: u32,
}

/// `samples` (`input_size` inputs and `actions` policy entries a position) with each distinct
/// position once, in order of first occurrence: policy target (and opponent-policy target) the
/// mean of its occurrences' that have one, value target (and final-board target, if any) the
/// mean of theirs, weight 1 + log2(n), relative policy surprise the mean of theirs. `cells`:
/// the size of a final-board target.
pub fn average_duplicates(
    samples: &Samples,
    input_size: usize,
    actions: usize,
    cells: usize,
) -> Samples {
    let cells = if samples.boards.is_empty() { 0 } else { cells };
    let replies = if samples.opponent_policies.is_empty() {
        0
    } else {
        actions
    };
    let mut index: HashMap<Planes, usize> = HashMap::new();
    let mut sums: Vec<Sums> = Vec::new();
    let mut first: Vec<usize> = Vec::new();
    for i in 0..samples.len() {
        let planes = Planes(&samples.inputs[i * input_size..(i + 1) * input_size]);
        let at = *index.entry(planes).or_insert_with(|| {
            first.push(i);
            sums.push(Sums {
                policy: vec![0.0; actions],
                with_policy: 0,
                value: 0.0,
                board: vec![0.0; cells],
                opponent_policy: vec![0.0; replies],
                with_opponent_policy: 0,
                surprise: 0.0,
                count: 0,
            });
            sums.len() - 1
        });
        let s = &mut sums[at];
        let policy = &samples.policies[i * actions..(i + 1) * actions];
        if policy.iter().any(|&p| p > 0.0) {
            s.policy.iter_mut().zip(policy).for_each(|(t, p)| *t += p);
            s.with_policy += 1;
        }
        s.value += samples.values[i];
        let board = &samples.boards[i * cells..(i + 1) * cells];
        s.board.iter_mut().zip(board).for_each(|(t, b)| *t += b);
        let reply = &samples.opponent_policies[i * replies..(i + 1) * replies];
        if reply.iter().any(|&p| p > 0.0) {
            s.opponent_policy
                .iter_mut()
                .zip(reply)
                .for_each(|(t, p)| *t += p);
            s.with_opponent_policy += 1;
        }
        s.surprise += samples.surprises.get(i).copied().unwrap_or(1.0);
        s.count += 1;
    }
    let mut out = Samples::default();
    let mut total = 0.0;
    for (s, &i) in sums.iter().zip(&first) {
        out.inputs
            .extend_from_slice(&samples.inputs[i * input_size..(i + 1) * input_size]);
        let n = s.with_policy.max(1) as f32;
        out.policies.extend(s.policy.iter().map(|p| p / n));
        out.values.push(s.value / s.count as f32);
        out.boards
            .extend(s.board.iter().map(|b| b / s.count as f32));
        let n = s.with_opponent_policy.max(1) as f32;
        out.opponent_policies
            .extend(s.opponent_policy.iter().map(|p| p / n));
        out.surprises.push(s.surprise / s.count as f32);
        total += 1.0 + f64::from(s.count).log2();
        out.cumulative_weights.push(total);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alphazero::records::GameRecord;
    use crate::alphazero::samples::samples_from;
    use crate::games::tictactoe::TicTacToe;
    use crate::games::Game;

    const A: usize = TicTacToe::NUM_ACTIONS;

    /// A record of `moves` with a one-hot policy on each move played, or none at `no_policy`.
    fn record(moves: &[u8], outcome: i8, no_policy: Option<usize>) -> GameRecord {
        let mut policies = vec![0.0; moves.len() * A];
        for (ply, &m) in moves.iter().enumerate() {
            if no_policy != Some(ply) {
                policies[ply * A + m as usize] = 1.0;
            }
        }
        GameRecord {
            moves: moves.to_vec(),
            policies,
            root_values: Vec::new(),
            outcome,
            trains_from: 0,
            surprises: Vec::new(),
            random_plies: 0,
        }
    }

    fn average(records: &[GameRecord]) -> Samples {
        let s = samples_from::<TicTacToe>(records, 0.0, false);
        average_duplicates(&s, TicTacToe::input_size(), A, TicTacToe::cells())
    }

    #[test]
    fn shared_positions_become_one_sample_with_mean_targets_and_log_weight() {
        // The same four moves, then X wins at 2 in one game and O wins after 8, 5 in the other.
        let x_wins = record(&[0, 3, 1, 4, 2], 1, None);
        let o_wins = record(&[0, 3, 1, 4, 8, 5], -1, None);
        let s = average(&[x_wins.clone(), o_wins.clone()]);
        // Five positions in common (the empty board to the one after 0 3 1 4), one of O's own.
        assert_eq!(s.len(), 6);
        assert_eq!(s.values, [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(s.cumulative_weights, [2.0, 4.0, 6.0, 8.0, 10.0, 11.0]);
        // The first moves were the same in both games; at ply 4 one played 2, the other 8.
        assert_eq!(s.policies[0], 1.0);
        assert_eq!(s.policies[4 * A + 2], 0.5);
        assert_eq!(s.policies[4 * A + 8], 0.5);
        assert_eq!(s.policies[5 * A + 5], 1.0);
        // Inputs are the positions themselves, in order of first occurrence.
        let plain = samples_from::<TicTacToe>(&[o_wins], 0.0, false);
        assert_eq!(s.inputs, plain.inputs);

        // Three times the same game: one sample a position, weight 1 + log2(3).
        let s = average(&[x_wins.clone(), x_wins.clone(), x_wins]);
        assert_eq!(s.len(), 5);
        assert_eq!(s.values, [1.0, -1.0, 1.0, -1.0, 1.0]);
        let w = 1.0 + 3f64.log2();
        assert!((s.cumulative_weights[4] - 5.0 * w).abs() < 1e-9);
    }

    #[test]
    fn final_board_targets_are_averaged_too() {
        // X wins on the top row in one game, O on the middle row in the other.
        let games = [
            record(&[0, 3, 1, 4, 2], 1, None),
            record(&[0, 3, 1, 4, 8, 5], -1, None),
        ];
        let s = samples_from::<TicTacToe>(&games, 0.0, true);
        let s = average_duplicates(&s, TicTacToe::input_size(), A, TicTacToe::cells());
        assert_eq!(s.boards.len(), 6 * 9);
        // The empty board (X to move): X's 0 1 2 in the first game, 0 1 8 in the second; O's 3 4
        // in the first, 3 4 5 in the second.
        let mean = [1.0, 1.0, 0.5, -1.0, -1.0, -0.5, 0.0, 0.0, 0.5];
        assert_eq!(&s.boards[..9], &mean);
        // O's own last position keeps the second game's board, from O's view.
        assert_eq!(
            &s.boards[45..],
            &[-1.0, -1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, -1.0]
        );
    }

    #[test]
    fn occurrences_without_a_policy_target_do_not_dilute_the_others() {
        // Playout cap randomization: the second game's first move had a cheap search.
        let s = average(&[record(&[4, 0], 0, None), record(&[4, 1], 0, Some(0))]);
        assert_eq!(s.policies[4], 1.0);
        // No occurrence with a target: none after averaging either.
        let s = average(&[record(&[4], 0, Some(0)), record(&[4], 0, Some(0))]);
        assert!(s.policies.iter().all(|&p| p == 0.0));
    }
}
