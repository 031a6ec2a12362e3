//! Wins, losses and draws: how a series of games went for one player.

use serde::{Deserialize, Serialize};

/// Wins, losses and draws from one player's view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub wins: u64,
    pub losses: u64,
    pub draws: u64,
}

impl Tally {
    pub fn games(&self) -> u64 {
        self.wins + self.losses + self.draws
    }
    /// Score with draws as half a win, in [0, 1] (0.5 before any game).
    pub fn score(&self) -> f64 {
        if self.games() == 0 {
            return 0.5;
        }
        (self.wins as f64 + 0.5 * self.draws as f64) / self.games() as f64
    }
    /// Counts one game by its value for the player: positive a win, negative a loss.
    pub fn add(&mut self, value: f32) {
        if value > 0.0 {
            self.wins += 1;
        } else if value < 0.0 {
            self.losses += 1;
        } else {
            self.draws += 1;
        }
    }
    pub fn merged(&self, o: &Tally) -> Tally {
        Tally {
            wins: self.wins + o.wins,
            losses: self.losses + o.losses,
            draws: self.draws + o.draws,
        }
    }
}
