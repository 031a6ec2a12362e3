//! What a search found, read at the root: its value and children, the policy target, and the
//! move to play (by visits, or by Gumbel's rules), proven wins and losses first.

use anyhow::{bail, Result};
use arrayvec::ArrayVec;
use rand::Rng;

use super::config::SearchKind;
use super::tree::{Node, Tree, EXPANDED, UNDECIDED};
use crate::core::rng::Rng64;
use crate::games::{Game, Move};
use crate::search::gumbel;

impl<G: Game> Tree<G> {
    pub fn root_pos(&self) -> &G {
        &self.root_pos
    }

    /// Visits of the root (simulations so far, reused ones included).
    pub fn root_visits(&self) -> u32 {
        self.nodes[0].visits
    }

    pub fn root_expanded(&self) -> bool {
        self.nodes[0].state == EXPANDED
    }

    /// The root's value for the side to move there, in [-1, 1] (exact when it is decided).
    pub fn root_value(&self) -> f32 {
        let r = &self.nodes[0];
        if r.proven != UNDECIDED {
            -(r.proven as f32)
        } else if r.visits == 0 {
            0.0
        } else {
            -r.value_sum / r.visits as f32
        }
    }

    /// The root's exact value for the side to move there, once the search has proven it.
    pub fn root_decided(&self) -> Option<f32> {
        let r = &self.nodes[0];
        (r.proven != UNDECIDED).then(|| -(r.proven as f32))
    }

    /// (move, visits, value for the mover, prior) of each root child; a decided child's value
    /// is its exact one.
    pub fn root_children(&self) -> Vec<(Move, u32, f32, f32)> {
        let r = &self.nodes[0];
        (0..r.n_children as usize)
            .map(|i| {
                let c = &self.nodes[r.first_child as usize + i];
                let q = if c.proven != UNDECIDED {
                    c.proven as f32
                } else if c.visits > 0 {
                    c.value_sum / c.visits as f32
                } else {
                    f32::NAN
                };
                (c.mv, c.visits, q, c.prior)
            })
            .collect()
    }

    /// The root's priors over all actions (0 for illegal ones; with PUCT's Dirichlet noise
    /// once it is mixed in).
    pub fn root_priors(&self) -> Vec<f32> {
        let mut p = vec![0.0; G::NUM_ACTIONS];
        let r = &self.nodes[0];
        let first = r.first_child as usize;
        for c in &self.nodes[first..first + r.n_children as usize] {
            p[c.mv as usize] = c.prior;
        }
        p
    }

    /// Whether the search proved a root move winning.
    fn root_wins(&self) -> bool {
        let r = &self.nodes[0];
        let first = r.first_child as usize;
        self.nodes[first..first + r.n_children as usize]
            .iter()
            .any(|c| c.proven == 1)
    }

    /// The root moves worth playing, each with its weight: the fastest proven wins if there are
    /// any (weighted by visits plus one, so each counts), else the moves not proven lost (by
    /// visits), else the slowest losses.
    fn root_choices(&self) -> ArrayVec<(Move, u32), 32> {
        let r = &self.nodes[0];
        let kids =
            &self.nodes[r.first_child as usize..(r.first_child + r.n_children as u32) as usize];
        let fastest_win = kids.iter().filter(|c| c.proven == 1).map(|c| c.end).min();
        let slowest_loss = kids.iter().map(|c| c.end).max().unwrap_or(0);
        let pick = |keep: &dyn Fn(&Node) -> bool, extra: u32| -> ArrayVec<(Move, u32), 32> {
            kids.iter()
                .filter(|c| keep(c))
                .map(|c| (c.mv, c.visits + extra))
                .collect()
        };
        if let Some(end) = fastest_win {
            return pick(&|c| c.proven == 1 && c.end == end, 1);
        }
        let open = pick(&|c| c.proven != -1, 0);
        if !open.is_empty() {
            return open;
        }
        pick(&|c| c.end == slowest_loss, 1)
    }

    /// The search's policy at the root, over all actions: the visit distribution over the moves
    /// worth playing ([`Tree::root_choices`]), uniform when none has visits.
    pub fn policy(&self) -> Vec<f32> {
        let mut p = vec![0.0; G::NUM_ACTIONS];
        let choices = self.root_choices();
        if self.config.search == SearchKind::Gumbel && self.root_expanded() && !self.root_wins() {
            // The improved policy over the moves not proven lost.
            let kids = self.child_stats(0);
            let improved = gumbel::improved_policy(
                &kids,
                self.nodes[0].raw_value,
                self.config.gumbel_value_scale,
            );
            let r = &self.nodes[0];
            let mut total = 0.0;
            for (i, q) in improved.iter().enumerate() {
                let m = self.nodes[r.first_child as usize + i].mv;
                if choices.iter().any(|c| c.0 == m) {
                    p[m as usize] = *q;
                    total += *q;
                }
            }
            if total > 0.0 {
                p.iter_mut().for_each(|x| *x /= total);
                return p;
            }
        }
        let total: u32 = choices.iter().map(|k| k.1).sum();
        for &(m, w) in &choices {
            p[m as usize] = if total == 0 {
                1.0 / choices.len() as f32
            } else {
                w as f32 / total as f32
            };
        }
        p
    }

    /// Picks a move among the moves worth playing ([`Tree::root_choices`]) by visit count:
    /// sampled in proportion to visits when `temperature` is 1, the most visited (ties at
    /// random) when it is 0.
    pub fn pick_move(&self, temperature: f32, rng: &mut Rng64) -> Result<Move> {
        let choices = self.root_choices();
        if choices.is_empty() {
            bail!("no legal move at the root");
        }
        if self.config.search == SearchKind::Gumbel && !self.root_wins() {
            return Ok(self.gumbel_move(temperature, &choices, rng));
        }
        if temperature > 0.0 {
            let total: u32 = choices.iter().map(|k| k.1).sum();
            if total > 0 {
                let mut x = rng.random_range(0..total);
                for &(m, w) in &choices {
                    if x < w {
                        return Ok(m);
                    }
                    x -= w;
                }
            }
        }
        let most = choices.iter().map(|k| k.1).max().unwrap_or(0);
        let best: ArrayVec<Move, 32> = choices
            .iter()
            .filter(|k| k.1 == most)
            .map(|k| k.0)
            .collect();
        Ok(best[rng.random_range(0..best.len())])
    }
}

impl<G: Game> Tree<G> {
    /// Gumbel's move among `choices` (the moves not proven lost): a draw from the improved
    /// policy when `temperature` is positive, else the best-scored of the most visited.
    fn gumbel_move(&self, temperature: f32, choices: &[(Move, u32)], rng: &mut Rng64) -> Move {
        let allowed = |m: Move| choices.iter().any(|c| c.0 == m);
        let r = &self.nodes[0];
        let first = r.first_child as usize;
        let kids = self.child_stats(0);
        let moves: ArrayVec<Move, 32> = (0..kids.len()).map(|i| self.nodes[first + i].mv).collect();
        if temperature > 0.0 {
            let policy =
                gumbel::improved_policy(&kids, r.raw_value, self.config.gumbel_value_scale);
            let total: f32 = (0..kids.len())
                .filter(|&i| allowed(moves[i]))
                .map(|i| policy[i])
                .sum();
            let mut x = rng.random::<f32>() * total;
            for i in (0..kids.len()).filter(|&i| allowed(moves[i])) {
                if x < policy[i] {
                    return moves[i];
                }
                x -= policy[i];
            }
        }
        let scores = gumbel::root_scores(
            &kids,
            &self.root_gumbel,
            r.raw_value,
            self.config.gumbel_value_scale,
        );
        let most = (0..kids.len())
            .filter(|&i| allowed(moves[i]))
            .map(|i| kids[i].visits)
            .max()
            .unwrap_or(0);
        (0..kids.len())
            .filter(|&i| allowed(moves[i]) && kids[i].visits == most)
            .max_by(|&a, &b| scores[a].total_cmp(&scores[b]))
            .map(|i| moves[i])
            .unwrap_or(choices[0].0)
    }
}
