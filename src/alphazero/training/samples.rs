//! Training positions from self-play records: the replay window's games, each trained ply's
//! input with its policy target (the search's) and value target (the game's result mixed with
//! the search's root value).

use std::path::Path;

use anyhow::{bail, Result};
use rand::Rng;

use crate::alphazero::config::RunConfig;
use crate::alphazero::selfplay::records::{read_iteration, GameRecord};
use crate::games::Game;

/// Training positions: inputs, policy targets and value targets, flat.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    pub inputs: Vec<f32>,
    pub policies: Vec<f32>,
    pub values: Vec<f32>,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.values.len()
    }
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
    /// A position drawn uniformly at random. Not empty.
    pub(super) fn draw(&self, rng: &mut impl Rng) -> usize {
        rng.random_range(0..self.len())
    }
}

/// Replays records into training positions, each with its [`value_targets`] of `mix`. A
/// record's plies before its `trains_from` (a forked game's line) are replayed, not trained on.
pub fn samples_from<G: Game>(records: &[GameRecord], mix: f32) -> Samples {
    let (isz, a) = (G::input_size(), G::NUM_ACTIONS);
    let mut s = Samples::default();
    for r in records {
        let values = value_targets(r, mix);
        let mut pos = G::new();
        for (ply, &m) in r.moves.iter().enumerate() {
            // A damaged record's replay stops before its first illegal move.
            if !pos.is_legal(m) {
                break;
            }
            if (ply as u32) >= r.trains_from {
                let at = s.inputs.len();
                s.inputs.resize(at + isz, 0.0);
                pos.encode(&mut s.inputs[at..]);
                s.policies
                    .extend_from_slice(&r.policies[ply * a..(ply + 1) * a]);
                s.values.push(values[ply]);
            }
            pos.play(m);
        }
    }
    s
}

/// Each ply's value target for its mover: the game's result mixed with the search's root
/// value, `mix` of the latter (the result alone where no root value was kept). Movers
/// alternate from the first player at ply 0 in every game (a pass is a move:
/// tests/conformance.rs).
pub fn value_targets(r: &GameRecord, mix: f32) -> Vec<f32> {
    let results = ply_results(r);
    let target_at = |ply: usize| {
        let q = r.root_values.get(ply).copied().unwrap_or(results[ply]);
        (1.0 - mix) * results[ply] + mix * q
    };
    (0..r.moves.len()).map(target_at).collect()
}

/// The game's result for each ply's mover.
pub fn ply_results(r: &GameRecord) -> Vec<f32> {
    let first = r.outcome as f32;
    let at = |ply: usize| match ply % 2 {
        0 => first,
        _ => -first,
    };
    (0..r.moves.len()).map(at).collect()
}

/// The position after the moves of `moves` that come before the first illegal one, and
/// whether there was none (a damaged record has one).
pub fn replay_legal<G: Game>(moves: &[u8]) -> (G, bool) {
    let mut pos = G::new();
    for &m in moves {
        if !pos.is_legal(m) {
            return (pos, false);
        }
        pos.play(m);
    }
    (pos, true)
}

/// The self-play games of a replay window, oldest first.
pub struct WindowRecords {
    pub records: Vec<GameRecord>,
    /// How many of them come from iterations before the window's last.
    pub older: usize,
}

/// Reads the games of the replay window ending at `iteration`.
pub fn window_records<G: Game>(
    cfg: &RunConfig,
    data_dir: &Path,
    iteration: u32,
) -> Result<WindowRecords> {
    let first = iteration.saturating_sub(cfg.train.window.max(1) - 1).max(1);
    let mut records = Vec::new();
    let mut older = 0;
    for i in first..=iteration {
        if i == iteration {
            older = records.len();
        }
        records.extend(read_iteration(data_dir, G::NAME, G::NUM_ACTIONS, i)?);
    }
    if records.is_empty() {
        bail!(
            "no self-play games in {} for iterations {first}..={iteration}",
            data_dir.display()
        );
    }
    Ok(WindowRecords { records, older })
}

/// The training positions of a window's games, with the run's value target.
pub fn window_samples<G: Game>(cfg: &RunConfig, records: &[GameRecord]) -> Samples {
    samples_from::<G>(records, cfg.train.value_target_mix)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::games::tictactoe::TicTacToe;

    /// A record of `moves` with a one-hot policy on each move played.
    pub(in crate::alphazero) fn record(
        moves: &[u8],
        outcome: i8,
        root_values: &[f32],
    ) -> GameRecord {
        let a = TicTacToe::NUM_ACTIONS;
        let mut policies = vec![0.0; moves.len() * a];
        for (ply, &m) in moves.iter().enumerate() {
            policies[ply * a + m as usize] = 1.0;
        }
        GameRecord {
            moves: moves.to_vec(),
            policies,
            root_values: root_values.to_vec(),
            outcome,
            trains_from: 0,
            random_plies: 0,
        }
    }

    #[test]
    fn samples_take_the_movers_view_and_mix_in_the_root_value() {
        // X takes the top row: the first player wins.
        let x_wins = record(&[0, 3, 1, 4, 2], 1, &[0.5, -0.2, 0.1, 0.3, 0.9]);
        // O takes the middle row; no root values were kept for the last two plies.
        let o_wins = record(&[0, 3, 1, 4, 8, 5], -1, &[0.0, 0.4, -0.6, 0.2]);
        let records = [x_wins, o_wins];

        let s = samples_from::<TicTacToe>(&records, 0.0);
        assert_eq!(s.len(), 11);
        assert_eq!(
            s.values,
            [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0]
        );
        let s = samples_from::<TicTacToe>(&records, 0.25);
        let mixed = |z: f32, q: f32| 0.75 * z + 0.25 * q;
        let expected = [
            mixed(1.0, 0.5),
            mixed(-1.0, -0.2),
            mixed(1.0, 0.1),
            mixed(-1.0, 0.3),
            mixed(1.0, 0.9),
            mixed(-1.0, 0.0),
            mixed(1.0, 0.4),
            mixed(-1.0, -0.6),
            mixed(1.0, 0.2),
            // No root value: the result alone.
            -1.0,
            1.0,
        ];
        assert_eq!(s.values, expected);

        // Inputs are the positions before each move; policies are the search's, ply by ply.
        let (isz, a) = (TicTacToe::input_size(), TicTacToe::NUM_ACTIONS);
        let mut pos = TicTacToe::new();
        let mut encoded = vec![0.0; isz];
        for (i, &m) in records[0].moves.iter().enumerate() {
            pos.encode(&mut encoded);
            assert_eq!(&s.inputs[i * isz..(i + 1) * isz], &encoded[..]);
            assert_eq!(s.policies[i * a + m as usize], 1.0);
            pos.play(m);
        }

        // A record stops at its first illegal move.
        let broken = record(&[4, 4, 0], 0, &[]);
        assert_eq!(samples_from::<TicTacToe>(&[broken], 0.5).len(), 1);
    }

    #[test]
    fn a_forked_game_trains_only_after_its_fork() {
        // X takes the top row; the game left its main line at ply 1, so it trains from ply 2.
        let forked = GameRecord {
            trains_from: 2,
            ..record(&[0, 3, 1, 4, 2], 1, &[0.5, -0.2, 0.1, 0.3, 0.9])
        };
        let s = samples_from::<TicTacToe>(std::slice::from_ref(&forked), 0.25);
        let mixed = |z: f32, q: f32| 0.75 * z + 0.25 * q;
        assert_eq!(
            s.values,
            [mixed(1.0, 0.1), mixed(-1.0, 0.3), mixed(1.0, 0.9)]
        );
        // Its first trained input is the position after the two plies of the line.
        let (isz, mut pos) = (TicTacToe::input_size(), TicTacToe::new());
        pos.play(0);
        pos.play(3);
        let mut encoded = vec![0.0; isz];
        pos.encode(&mut encoded);
        assert_eq!(&s.inputs[..isz], &encoded[..]);
    }
}
