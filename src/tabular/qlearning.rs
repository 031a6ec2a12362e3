//! Tabular Q-learning for two-player games, with a correct two-player update.
//!
//! Against a fixed opponent (random or any player) the learner's next state is the position
//! after the opponent's reply, when the learner is to move again (or the end of the game):
//! `Q(s,a) += α (r + γ max_a' Q(s',a') - Q(s,a))`. In self-play one table holds the values
//! of both sides from the mover's view, and the target of a move is the negamax one:
//! `r` if the move ends the game, else `-γ max_a' Q(s',a')` with `s'` the opponent's position.
//! Nothing looks ahead on a copy of the game that changes what is really played.
//!
//! The `expected` target replaces `max_a' Q(s',a')` in self-play by its expectation under the
//! ε-greedy behaviour, `(1-ε) max + ε mean` (expected SARSA): the values are then those of the
//! game against a fallible opponent rather than a perfect one, which is what lets the losing
//! side of a lost game (Black in 4x4 Othello) still prefer the moves a weak player answers
//! badly; with the `max` target every losing move is worth the same -1.

use anyhow::{bail, Result};
use rand::Rng;

use crate::agent::Agent;
use crate::core::rng::item_seed;
use crate::core::rng::{rng_from_seed, Rng64};
use crate::games::{Game, Move, Moves, Player, Tally};

use super::qtable::{QGame, QTable};

/// Who the learner plays against.
pub enum Opponent<G: Game> {
    /// Uniformly random legal moves (from the trainer's generator).
    Random,
    /// Itself: both sides learn into one table.
    SelfPlay,
    /// Any other player.
    Player(Box<dyn Agent<G>>),
}

/// Which side the learner takes against a fixed opponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    First,
    Second,
    /// First in even episodes, second in odd ones.
    Both,
}

/// How self-play values the opponent's position after a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// Q-learning: the opponent's best value (negamax).
    Max,
    /// Expected SARSA: the opponent's value under its ε-greedy behaviour.
    Expected,
}

/// Hyper-parameters; the step size and the exploration rate go linearly from their start to
/// their final value over the episodes.
#[derive(Clone, Debug)]
pub struct Config {
    pub episodes: u64,
    pub alpha: f32,
    pub alpha_final: f32,
    pub gamma: f32,
    pub epsilon: f32,
    pub epsilon_final: f32,
    pub side: Side,
    /// The self-play target (against a fixed opponent the target is always the max).
    pub target: Target,
    pub seed: u64,
}

impl Config {
    pub fn check(&self) -> Result<()> {
        if self.episodes == 0 {
            bail!("--episodes must be at least 1");
        }
        for (name, v) in [
            ("--alpha", self.alpha),
            ("--alpha-final", self.alpha_final),
            ("--gamma", self.gamma),
            ("--epsilon", self.epsilon),
            ("--epsilon-final", self.epsilon_final),
        ] {
            if !(0.0..=1.0).contains(&v) {
                bail!("{name} must lie in [0, 1] (got {v})");
            }
        }
        Ok(())
    }
}

/// The learner and its table.
pub struct Trainer<G: QGame> {
    table: QTable<G>,
    config: Config,
    opponent: Opponent<G>,
    rng: Rng64,
    done: u64,
}

impl<G: QGame> Trainer<G> {
    pub fn new(config: Config, opponent: Opponent<G>) -> Result<Self> {
        config.check()?;
        Ok(Trainer {
            table: G::new_table(),
            rng: rng_from_seed(config.seed),
            config,
            opponent,
            done: 0,
        })
    }

    pub fn table(&self) -> &QTable<G> {
        &self.table
    }

    pub fn into_table(self) -> QTable<G> {
        self.table
    }

    /// Episodes played so far.
    pub fn episodes_done(&self) -> u64 {
        self.done
    }

    /// The step size and exploration rate of the next episode.
    pub fn schedule(&self) -> (f32, f32) {
        let c = &self.config;
        let t = self.done as f32 / c.episodes.max(1) as f32;
        (
            c.alpha + (c.alpha_final - c.alpha) * t,
            c.epsilon + (c.epsilon_final - c.epsilon) * t,
        )
    }

    /// Plays the next `n` episodes (not beyond the configured number); returns the results of
    /// the learner in them (in self-play, of the first player).
    pub fn run(&mut self, n: u64) -> Result<Tally> {
        let mut tally = Tally::default();
        let end = (self.done + n).min(self.config.episodes);
        while self.done < end {
            let (alpha, epsilon) = self.schedule();
            let value = match self.opponent {
                Opponent::SelfPlay => self.self_play_episode(alpha, epsilon),
                _ => {
                    let side = match self.config.side {
                        Side::First => Player::First,
                        Side::Second => Player::Second,
                        Side::Both if self.done.is_multiple_of(2) => Player::First,
                        Side::Both => Player::Second,
                    };
                    self.episode_against(side, alpha, epsilon)?
                }
            };
            tally.add(value);
            self.done += 1;
        }
        Ok(tally)
    }

    /// ε-greedy: a random legal move with probability ε, else a move of highest value (ties
    /// broken at random, so unexplored positions are tried evenly).
    #[inline]
    fn choose(&mut self, pos: &G, moves: &Moves, epsilon: f32) -> Move {
        if epsilon > 0.0 && self.rng.random::<f32>() < epsilon {
            return moves[self.rng.random_range(0..moves.len())];
        }
        let Some(row) = self.table.row(pos) else {
            return moves[self.rng.random_range(0..moves.len())];
        };
        let values = self.table.values(row);
        let (mut best, mut best_value, mut ties) = (moves[0], f32::NEG_INFINITY, 0u32);
        for &m in moves {
            let v = values[m as usize];
            if v > best_value {
                (best, best_value, ties) = (m, v, 1);
            } else if v == best_value {
                ties += 1;
                if self.rng.random_range(0..ties) == 0 {
                    best = m;
                }
            }
        }
        best
    }

    /// `max_a Q(pos, a)` over the legal moves, 0 for a position never reached.
    #[inline]
    fn max_value(&self, pos: &G, moves: &Moves) -> f32 {
        match self.table.row(pos) {
            None => 0.0,
            Some(row) => {
                let values = self.table.values(row);
                moves
                    .iter()
                    .map(|&m| values[m as usize])
                    .fold(f32::NEG_INFINITY, f32::max)
            }
        }
    }

    /// The value of `pos` to its mover under the self-play target.
    #[inline]
    fn target_value(&self, pos: &G, moves: &Moves, epsilon: f32) -> f32 {
        let max = self.max_value(pos, moves);
        match (self.config.target, self.table.row(pos)) {
            (Target::Expected, Some(row)) => {
                let values = self.table.values(row);
                let mean =
                    moves.iter().map(|&m| values[m as usize]).sum::<f32>() / moves.len() as f32;
                (1.0 - epsilon) * max + epsilon * mean
            }
            _ => max,
        }
    }

    #[inline]
    fn update(&mut self, row: usize, m: Move, target: f32, alpha: f32) {
        let q = self.table.value_mut(row, m);
        *q += alpha * (target - *q);
    }

    fn self_play_episode(&mut self, alpha: f32, epsilon: f32) -> f32 {
        let gamma = self.config.gamma;
        let mut pos = G::new();
        let mut moves = pos.legal_moves();
        loop {
            let m = self.choose(&pos, &moves, epsilon);
            let row = self.table.row_mut(&pos);
            let mover = pos.to_move();
            pos.play(m);
            if let Some(o) = pos.outcome() {
                self.update(row, m, o.value_for(mover), alpha);
                return o.value_for(Player::First);
            }
            moves = pos.legal_moves();
            let target = -gamma * self.target_value(&pos, &moves, epsilon);
            self.update(row, m, target, alpha);
        }
    }

    fn episode_against(&mut self, side: Player, alpha: f32, epsilon: f32) -> Result<f32> {
        let gamma = self.config.gamma;
        let mut pos = G::new();
        if let Opponent::Player(agent) = &mut self.opponent {
            agent.new_game(item_seed(self.config.seed, self.done));
        }
        // the learner's last move, waiting for the position it next moves in
        let mut pending: Option<(usize, Move)> = None;
        loop {
            if let Some(o) = pos.outcome() {
                let r = o.value_for(side);
                if let Some((row, m)) = pending {
                    self.update(row, m, r, alpha);
                }
                if let Opponent::Player(agent) = &mut self.opponent {
                    agent.game_over(&pos);
                }
                return Ok(r);
            }
            let moves = pos.legal_moves();
            let m = if pos.to_move() == side {
                if let Some((row, m)) = pending {
                    let target = gamma * self.max_value(&pos, &moves);
                    self.update(row, m, target, alpha);
                }
                let m = self.choose(&pos, &moves, epsilon);
                pending = Some((self.table.row_mut(&pos), m));
                m
            } else {
                match &mut self.opponent {
                    Opponent::Player(agent) => {
                        let m = agent.choose(&pos)?;
                        if !moves.contains(&m) {
                            bail!(
                                "the opponent chose the illegal move {} in\n{}",
                                pos.format_move(m),
                                pos.display()
                            );
                        }
                        m
                    }
                    _ => moves[self.rng.random_range(0..moves.len())],
                }
            };
            if let Opponent::Player(agent) = &mut self.opponent {
                agent.observe(&pos, m);
            }
            pos.play(m);
        }
    }
}
