//! One simulation's two halves: the walk down to a leaf (PUCT, or Gumbel's rules, with virtual
//! loss so that concurrent leaves spread out, and the root's noise), and the leaf's expansion
//! with its value backed up.

use arrayvec::ArrayVec;
use rand::Rng;
use rand_distr::{Distribution, Gamma};

use super::config::SearchKind;
use super::tree::{exact, Leaf, Node, Path, Tree, EXPANDED, PENDING, TERMINAL, UNDECIDED};
use crate::core::rng::Rng64;
use crate::games::Game;
use crate::search::gumbel;

/// Dirichlet alpha times the number of legal moves, when the configuration sets no alpha.
const DIRICHLET_TOTAL: f32 = 10.0;

/// Virtual loss added on the way down so that concurrent leaves spread out.
const VIRTUAL_LOSS: f32 = 1.0;

/// What one step of selection found.
// Boxing the leaf would allocate once per simulation, in the hot loop.
#[allow(clippy::large_enum_variant)]
pub enum Selection<G> {
    /// A position to evaluate.
    Leaf(Leaf<G>),
    /// A finished game was reached and backed up at once.
    Terminal,
    /// The path ran into a leaf already waiting for evaluation; nothing changed.
    Collision,
}

impl<G: Game> Tree<G> {
    /// Mixes Dirichlet noise into the root priors once the root is expanded, once per root:
    /// call it after every batch of completed leaves. Does nothing when the configuration has
    /// no noise (and then draws nothing from `rng`).
    pub fn noise_root_once(&mut self, rng: &mut Rng64) {
        if !self.root_noised && self.root_expanded() {
            match self.config.search {
                SearchKind::Puct => self.add_root_noise(rng),
                SearchKind::Gumbel => self.draw_root_gumbel(rng),
            }
            self.root_noised = true;
        }
    }

    /// Gumbel: draws the root children's noise (none when the scale is 0) and plans the
    /// sequential halving of the budget.
    fn draw_root_gumbel(&mut self, rng: &mut Rng64) {
        let n = self.nodes[0].n_children as usize;
        let scale = self.config.gumbel_scale;
        self.root_gumbel = (0..n)
            .map(|_| {
                if scale > 0.0 {
                    scale * gumbel::gumbel_from_uniform(rng.random::<f64>())
                } else {
                    0.0
                }
            })
            .collect();
        self.schedule.clear();
    }

    /// Gumbel's choice at `idx`: sequential halving at the root, the improved policy below.
    fn gumbel_child(&mut self, idx: u32) -> u32 {
        let kids = self.child_stats(idx as usize);
        let node = self.nodes[idx as usize];
        let pick = if idx == 0 {
            let considered = (self.config.gumbel_considered as usize).clamp(1, kids.len());
            if self.schedule.is_empty() {
                let budget = self.budget.max(node.visits + 1);
                self.schedule = gumbel::halving_schedule(considered, budget);
            }
            // The root's own expansion was its first visit, not a simulation of the plan.
            let sim = (node.visits.saturating_sub(1) as usize).min(self.schedule.len() - 1);
            gumbel::root_choice(
                &kids,
                &self.root_gumbel,
                node.raw_value,
                self.config.gumbel_value_scale,
                self.schedule[sim],
                considered,
            )
        } else {
            gumbel::interior_choice(&kids, node.raw_value, self.config.gumbel_value_scale)
        };
        node.first_child + pick as u32
    }

    /// Mixes Dirichlet noise into the root priors (the root must be expanded).
    fn add_root_noise(&mut self, rng: &mut Rng64) {
        let cfg = self.config;
        let root = self.nodes[0];
        let n = root.n_children as usize;
        if cfg.noise_fraction <= 0.0 || n < 2 || root.state != EXPANDED {
            return;
        }
        let alpha = if cfg.dirichlet_alpha > 0.0 {
            cfg.dirichlet_alpha
        } else {
            // The noise's total concentration stays 10 whatever the branching, as in
            // AlphaZero's choices (0.3 for chess's ~30 moves, 0.03 for Go's ~360) and KataGo's
            // scaling by legal moves: a 3-move and a 7-move root are perturbed alike.
            DIRICHLET_TOTAL / n as f32
        };
        let Ok(gamma) = Gamma::new(alpha as f64, 1.0) else {
            return;
        };
        let mut noise: ArrayVec<f64, 32> = (0..n).map(|_| gamma.sample(rng)).collect();
        let sum: f64 = noise.iter().sum();
        if sum <= 0.0 {
            return;
        }
        for x in noise.iter_mut() {
            *x /= sum;
        }
        let f = cfg.noise_fraction;
        for (i, x) in noise.iter().enumerate() {
            let c = &mut self.nodes[root.first_child as usize + i];
            c.prior = (1.0 - f) * c.prior + f * *x as f32;
        }
    }

    /// Walks down by PUCT to a leaf, adding virtual loss along the way. A decided node on the
    /// way (a finished game, or a proven one) ends the walk and backs up its exact value.
    pub fn select(&mut self) -> Selection<G> {
        let mut path = Path::new();
        let mut pos = self.root_pos.clone();
        let mut idx = 0u32;
        loop {
            path.push(idx);
            let node = self.nodes[idx as usize];
            if node.proven != UNDECIDED {
                self.apply_virtual_loss(&path);
                self.backup(&path, node.proven as f32);
                return Selection::Terminal;
            }
            match node.state {
                EXPANDED if node.n_children > 0 => {
                    idx = match self.config.search {
                        SearchKind::Puct => self.best_child(idx),
                        SearchKind::Gumbel => self.gumbel_child(idx),
                    };
                    pos.play(self.nodes[idx as usize].mv);
                    if path.is_full() {
                        // Cannot happen for these games (a path is at most one node a ply).
                        return Selection::Collision;
                    }
                }
                PENDING => return Selection::Collision,
                _ => {
                    // UNEXPANDED (or expanded with no children, which cannot happen)
                    if let Some(outcome) = pos.outcome() {
                        // The player who moved into this node is the one not to move now.
                        let v = outcome.value_for(pos.to_move().other());
                        let n = &mut self.nodes[idx as usize];
                        n.state = TERMINAL;
                        n.proven = exact(v);
                        self.apply_virtual_loss(&path);
                        self.backup(&path, v);
                        self.propagate_proof(&path);
                        return Selection::Terminal;
                    }
                    self.nodes[idx as usize].state = PENDING;
                    self.apply_virtual_loss(&path);
                    return Selection::Leaf(Leaf { pos, path });
                }
            }
        }
    }

    fn best_child(&self, idx: u32) -> u32 {
        let node = &self.nodes[idx as usize];
        let cfg = &self.config;
        let sqrt_n = (node.visits.max(1) as f32).sqrt();
        // The parent's value for its mover, for first-play urgency.
        let parent_q = if node.visits > 0 {
            -node.value_sum / node.visits as f32
        } else {
            0.0
        };
        let fpu = parent_q - cfg.fpu_reduction;
        let first = node.first_child as usize;
        let mut best = first;
        let mut best_score = f32::NEG_INFINITY;
        for i in first..first + node.n_children as usize {
            let c = &self.nodes[i];
            let q = if c.proven != UNDECIDED {
                c.proven as f32
            } else if c.visits > 0 {
                c.value_sum / c.visits as f32
            } else {
                fpu
            };
            let score = q + cfg.c_puct * c.prior * sqrt_n / (1.0 + c.visits as f32);
            if score > best_score {
                best_score = score;
                best = i;
            }
        }
        best as u32
    }

    fn apply_virtual_loss(&mut self, path: &Path) {
        for &i in path {
            let n = &mut self.nodes[i as usize];
            n.visits += 1;
            n.value_sum -= VIRTUAL_LOSS;
        }
    }

    /// Backs up `value` (for the player who moved into the last node of `path`), removing the
    /// virtual loss added on the way down.
    fn backup(&mut self, path: &Path, value: f32) {
        let mut v = value;
        for &i in path.iter().rev() {
            self.nodes[i as usize].value_sum += v + VIRTUAL_LOSS;
            v = -v;
        }
    }

    /// Expands an evaluated leaf with `policy` (over all actions; renormalised over the legal
    /// moves) and backs up `value` (for the side to move at the leaf). Children that end the
    /// game are marked decided at once, so a win in one is seen without a simulation, and a
    /// leaf they decide backs up its exact value instead of the evaluator's.
    pub fn complete(&mut self, leaf: &Leaf<G>, policy: &[f32], value: f32) {
        let Some(&idx) = leaf.path.last() else {
            return;
        };
        let moves = leaf.pos.legal_moves();
        let first = self.nodes.len() as u32;
        let total: f32 = moves.iter().map(|&m| policy[m as usize].max(0.0)).sum();
        let mover = leaf.pos.to_move();
        for &m in &moves {
            let p = if total > 0.0 {
                policy[m as usize].max(0.0) / total
            } else {
                1.0 / moves.len() as f32
            };
            let mut node = Node::new(m, p);
            let mut child = leaf.pos.clone();
            child.play(m);
            if let Some(outcome) = child.outcome() {
                node.state = TERMINAL;
                node.proven = exact(outcome.value_for(mover));
            }
            self.nodes.push(node);
        }
        let n = &mut self.nodes[idx as usize];
        n.first_child = first;
        n.n_children = moves.len() as u8;
        n.state = EXPANDED;
        n.raw_value = value;
        match self.proof_from_children(idx as usize) {
            Some((proven, end)) => {
                self.nodes[idx as usize].proven = proven;
                self.nodes[idx as usize].end = end;
                self.backup(&leaf.path, proven as f32);
                self.propagate_proof(&leaf.path);
            }
            None => self.backup(&leaf.path, -value),
        }
    }
}
