//! Monte Carlo control with exploring starts for Blackjack (Sutton & Barto, Figure 5.2):
//! every episode starts in a uniformly random decision state with a uniformly random first
//! action and then follows the greedy policy; action values are the running means of the
//! returns (every state of a Blackjack episode is new, so first-visit and every-visit agree).
//! Returns are whole numbers, so each mean is kept exactly as an integer sum and a count, and
//! the greedy comparison cross-multiplies instead of dividing.

use std::path::Path;

use anyhow::{Context, Result};

use crate::core::files::{ensure, write_atomic, Format};
use crate::games::blackjack::{dealer_final, Action, Deck, Hand, State, STATES};

use super::blackjack_dp::Values;

/// The MC-ES file: version 2 puts the learner inside the checked header of [`Format`].
pub const MCES: Format = Format {
    kind: "mces",
    version: 2,
    remedy: "train it again with `zero mces`",
};

/// The learner: action values, visit counts and the greedy policy.
#[derive(Clone, Debug)]
pub struct Mces {
    /// Sum of the returns that followed each state and action.
    pub sums: [[i64; 2]; STATES],
    pub counts: [[u64; 2]; STATES],
    pub policy: [Action; STATES],
    pub episodes: u64,
}

impl Default for Mces {
    fn default() -> Self {
        Self::new()
    }
}

/// One policy cell that differs from the optimal policy, with the exact value lost by it.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Difference {
    pub player_sum: u8,
    pub usable_ace: bool,
    /// 1 for an ace.
    pub dealer_card: u8,
    /// Exact optimal value minus the exact value of the learned action, both then optimal.
    pub gap: f64,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Record {
    episodes: u64,
    sums: Vec<[i64; 2]>,
    counts: Vec<[u64; 2]>,
    policy: Vec<Action>,
}

impl Mces {
    /// Zero values and the book's initial policy: stick on 20 and 21, hit otherwise.
    pub fn new() -> Self {
        let policy = std::array::from_fn(|i| {
            if State::from_index(i).player_sum >= 20 {
                Action::Stick
            } else {
                Action::Hit
            }
        });
        Mces {
            sums: [[0; 2]; STATES],
            counts: [[0; 2]; STATES],
            policy,
            episodes: 0,
        }
    }

    /// The action values: mean return after each state and action (0 before any visit).
    pub fn q(&self) -> [[f64; 2]; STATES] {
        std::array::from_fn(|s| {
            std::array::from_fn(|a| self.sums[s][a] as f64 / self.counts[s][a].max(1) as f64)
        })
    }

    /// Runs `episodes` episodes.
    pub fn train(&mut self, episodes: u64, deck: &mut Deck) {
        // a local deck stays in registers instead of being written back after every card
        let mut local = deck.clone();
        for _ in 0..episodes {
            self.episode(&mut local);
        }
        *deck = local;
        self.episodes += episodes;
    }

    #[inline]
    fn episode(&mut self, deck: &mut Deck) {
        let start = deck.below(2 * STATES as u32) as usize;
        let (mut s, mut a) = (start >> 1, start & 1);
        let first = State::from_index(s);
        let dealer_card = first.dealer_card;
        let mut hand = Hand {
            sum: first.player_sum,
            usable_ace: first.usable_ace,
        };
        // A hit raises the sum or uses up the usable ace, so an episode has at most 20 steps.
        let mut visited = [0u16; 24];
        let mut len = 0;
        let ret = loop {
            visited[len] = (2 * s + a) as u16;
            len += 1;
            if a == Action::Stick as usize {
                let dealer = dealer_final(dealer_card, deck);
                break if dealer > 21 || hand.sum > dealer {
                    1
                } else if hand.sum == dealer {
                    0
                } else {
                    -1
                };
            }
            hand = hand.with(deck.draw());
            if hand.is_bust() {
                break -1;
            }
            s = State {
                player_sum: hand.sum,
                usable_ace: hand.usable_ace,
                dealer_card,
            }
            .index();
            a = self.policy[s] as usize;
        };
        for &sa in &visited[..len] {
            let (s, a) = (sa as usize >> 1, sa as usize & 1);
            self.counts[s][a] += 1;
            self.sums[s][a] += ret;
            // mean(hit) vs mean(stick), cross-multiplied (a count of 0 gives a mean of 0)
            let (n, t) = (self.counts[s], self.sums[s]);
            let hit = t[1] as i128 * n[0].max(1) as i128;
            let stick = t[0] as i128 * n[1].max(1) as i128;
            if hit > stick {
                self.policy[s] = Action::Hit;
            } else if stick > hit {
                self.policy[s] = Action::Stick;
            }
        }
    }

    /// The cells where the policy differs from the optimal one, with their exact value gaps.
    pub fn differences(&self, optimal: &Values) -> Vec<Difference> {
        State::all()
            .filter(|s| self.policy[s.index()] != optimal.policy[s.index()])
            .map(|s| {
                let q = optimal.q[s.index()];
                Difference {
                    player_sum: s.player_sum,
                    usable_ace: s.usable_ace,
                    dealer_card: s.dealer_card,
                    gap: (q[0] - q[1]).abs(),
                }
            })
            .collect()
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let bytes = self
            .to_bytes()
            .with_context(|| format!("cannot encode {}", path.display()))?;
        write_atomic(path, &bytes)
    }

    /// The bytes of the file [`Mces::save`] writes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        MCES.encode_value(&Record {
            episodes: self.episodes,
            sums: self.sums.to_vec(),
            counts: self.counts.to_vec(),
            policy: self.policy.to_vec(),
        })
    }

    pub fn load(path: &Path) -> Result<Self> {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        Self::from_bytes(path, &bytes)
    }

    /// The learner in a file's bytes, checked as [`Mces::load`] checks it; `path` names the
    /// file in errors.
    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Self> {
        let r: Record = MCES.decode_value(path, bytes)?;
        let (Ok(sums), Ok(counts), Ok(policy)) = (
            <[[i64; 2]; STATES]>::try_from(r.sums),
            <[[u64; 2]; STATES]>::try_from(r.counts),
            <[Action; STATES]>::try_from(r.policy),
        ) else {
            return Err(MCES.corrupt(path, format!("it must hold {STATES} states")));
        };
        // Every return is -1, 0 or 1.
        ensure(
            &MCES,
            path,
            sums.iter()
                .flatten()
                .zip(counts.iter().flatten())
                .all(|(s, &n)| s.unsigned_abs() <= n),
            "a sum of returns is larger than its number of returns",
        )?;
        Ok(Mces {
            sums,
            counts,
            policy,
            episodes: r.episodes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tabular::qtable::tests::{assert_refused, damaged};

    #[test]
    fn mces_round_trips_and_damaged_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mces.bin");
        let mut learner = Mces::new();
        learner.train(2_000, &mut Deck::new(7));
        learner.save(&path).unwrap();
        let back = Mces::load(&path).unwrap();
        assert_eq!(
            (back.sums, back.counts, back.policy, back.episodes),
            (learner.sums, learner.counts, learner.policy, 2_000)
        );
        let good = std::fs::read(&path).unwrap();
        let mut cases = damaged(&good);
        cases[2].2 = "a c4-book file, not a mces file";
        assert_refused(&path, MCES.remedy, Mces::load, cases);
        // Contents no training makes.
        let encode = |r: &Record| MCES.encode(&postcard::to_allocvec(r).unwrap());
        let record = |sums: Vec<[i64; 2]>, counts: Vec<[u64; 2]>| Record {
            episodes: 1,
            sums,
            counts,
            policy: learner.policy.to_vec(),
        };
        let cases = vec![
            (
                "states",
                encode(&record(vec![[0; 2]; STATES - 1], vec![[0; 2]; STATES - 1])),
                "it must hold 200 states",
            ),
            (
                "sums",
                encode(&record(vec![[-3, 0]; STATES], vec![[2, 0]; STATES])),
                "a sum of returns is larger",
            ),
        ];
        assert_refused(&path, MCES.remedy, Mces::load, cases);
    }
}
