//! PUCT Monte Carlo tree search (AlphaZero), batched: a search hands out leaves to evaluate
//! (several at once with virtual loss), the caller evaluates them together with whatever
//! evaluator it has (a network, random rollouts, a uniform prior), then hands the results back.
//!
//! Values in the tree are stored from the view of the player who moved *into* a node, so a
//! parent picks the child with the highest `w / n`. Every move (an Othello pass too) switches
//! the side to move, so values just flip sign on the way up.
//!
//! Finished games met in the tree are exact, and so are the wins and losses they decide
//! (MCTS-solver, Winands et al. 2008): a node one of whose children wins for the player moving
//! into it is lost, a node all of whose children lose is won, each with the number of plies to
//! the end. A decided node is never searched again: reaching it backs up its exact value at
//! once, and the root plays its fastest proven win, avoids proven losses, and when every move
//! loses plays the slowest loss. Draws are not propagated: a drawn line keeps its searched
//! value, so that against a fallible opponent the search still prefers the draws it can hope
//! to win (proving them exactly cost half the wins against alpha-beta).

use anyhow::{bail, Result};
use arrayvec::ArrayVec;
use rand::Rng;
use rand_distr::{Distribution, Gamma};

use super::gumbel::{self, ChildStats, PerChild};
use crate::core::rng::{rng_from_seed, Rng64};
use crate::games::{Game, Move};

/// How a simulation chooses among a node's children.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchKind {
    /// AlphaZero's PUCT, Dirichlet noise at the root, visit counts as the policy target.
    #[default]
    Puct,
    /// Gumbel AlphaZero: sequential halving at the root, the improved policy inside the tree
    /// and as the policy target (see [`super::gumbel`]).
    Gumbel,
}

impl std::fmt::Display for SearchKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SearchKind::Puct => "puct",
            SearchKind::Gumbel => "gumbel",
        })
    }
}

impl std::str::FromStr for SearchKind {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "puct" => Ok(SearchKind::Puct),
            "gumbel" => Ok(SearchKind::Gumbel),
            other => Err(format!("unknown search '{other}': puct or gumbel")),
        }
    }
}

/// The search a network player plays with: which one, and for Gumbel's the value scale of σ
/// its network was trained with (its policy learned targets of that scale, so it plays with it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlaySearch {
    pub kind: SearchKind,
    pub gumbel_value_scale: f32,
}

impl PlaySearch {
    /// `kind` with its default settings.
    pub fn new(kind: SearchKind) -> PlaySearch {
        PlaySearch {
            kind,
            gumbel_value_scale: default_value_scale(),
        }
    }

    /// The search settings of play: these, and no noise.
    pub fn config(self) -> MctsConfig {
        MctsConfig {
            search: self.kind,
            gumbel_value_scale: self.gumbel_value_scale,
            ..MctsConfig::default()
        }
    }
}

impl Default for PlaySearch {
    fn default() -> Self {
        PlaySearch::new(SearchKind::default())
    }
}

impl std::fmt::Display for PlaySearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.kind.fmt(f)
    }
}

fn default_considered() -> u32 {
    16
}

fn default_value_scale() -> f32 {
    gumbel::DEFAULT_VALUE_SCALE
}

/// Search settings.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MctsConfig {
    /// Exploration constant of PUCT.
    pub c_puct: f32,
    /// First-play urgency: an unvisited child is valued at the parent's value minus this.
    pub fpu_reduction: f32,
    /// Dirichlet noise mixed into the root priors (0 to turn it off, as in play).
    pub noise_fraction: f32,
    /// Dirichlet alpha; 0 picks 10 / (number of legal moves), scaling with branching.
    pub dirichlet_alpha: f32,
    /// PUCT or Gumbel.
    #[serde(default)]
    pub search: SearchKind,
    /// Gumbel: the scale of the root's Gumbel noise (1 in self-play, where it samples the
    /// move; 0 in play, for the best move).
    #[serde(default)]
    pub gumbel_scale: f32,
    /// Gumbel: root moves considered (the k of Gumbel-top-k).
    #[serde(default = "default_considered")]
    pub gumbel_considered: u32,
    /// Gumbel: the scale of σ(completed Q), how far the search's values move the improved
    /// policy (search and policy target) away from the prior: mctx's `value_scale`, 0.1 in
    /// runs from before the setting.
    #[serde(default = "default_value_scale")]
    pub gumbel_value_scale: f32,
}

impl Default for MctsConfig {
    fn default() -> Self {
        MctsConfig {
            c_puct: 1.5,
            fpu_reduction: 0.25,
            noise_fraction: 0.0,
            dirichlet_alpha: 0.0,
            search: SearchKind::Puct,
            gumbel_scale: 0.0,
            gumbel_considered: default_considered(),
            gumbel_value_scale: default_value_scale(),
        }
    }
}

const UNEXPANDED: u8 = 0;
const EXPANDED: u8 = 1;
const TERMINAL: u8 = 2;
const PENDING: u8 = 3;

/// Dirichlet alpha times the number of legal moves, when the configuration sets no alpha.
const DIRICHLET_TOTAL: f32 = 10.0;

/// Batches in a row that found no leaf to evaluate before a search gives up: only a tree whose
/// every line ends in a finished game (or waits on a pending leaf) does that so long.
const MAX_STALLED_BATCHES: u32 = 1000;

/// Virtual loss added on the way down so that concurrent leaves spread out.
const VIRTUAL_LOSS: f32 = 1.0;

#[derive(Clone, Copy, Debug)]
struct Node {
    first_child: u32,
    n_children: u8,
    mv: Move,
    state: u8,
    visits: u32,
    /// Sum of values from the view of the player who moved into this node.
    value_sum: f32,
    prior: f32,
    /// For a decided node (a finished game, or one proven from its children): its exact
    /// value for the player who moved into it, -1, 0 or 1; [`UNDECIDED`] otherwise.
    proven: i8,
    /// For a decided node: the plies to the end of the game along the proof.
    end: u8,
    /// The evaluator's value of an expanded node, for the side to move there (Gumbel's
    /// completed values start from it).
    raw_value: f32,
}

/// `Node::proven` of a node whose value is not known exactly.
const UNDECIDED: i8 = i8::MIN;

impl Node {
    fn new(mv: Move, prior: f32) -> Node {
        Node {
            first_child: 0,
            n_children: 0,
            mv,
            state: UNEXPANDED,
            visits: 0,
            value_sum: 0.0,
            prior,
            proven: UNDECIDED,
            end: 0,
            raw_value: 0.0,
        }
    }
}

/// The path from the root to a leaf (node indices), at most one node a ply.
type Path = ArrayVec<u32, 64>;

/// A leaf waiting for evaluation: the caller evaluates `pos` and calls [`Tree::complete`].
#[derive(Clone, Debug)]
pub struct Leaf<G> {
    pub pos: G,
    path: Path,
}

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

/// A search tree over positions of `G`, with reuse between moves.
pub struct Tree<G: Game> {
    nodes: Vec<Node>,
    root_pos: G,
    config: MctsConfig,
    /// Whether the current root's priors have had their noise (once a root, in self-play).
    root_noised: bool,
    /// Simulations a search of this tree runs (Gumbel's sequential halving plans by it).
    budget: u32,
    /// Gumbel: the root children's noise, and sequential halving's schedule.
    root_gumbel: PerChild,
    schedule: Vec<u32>,
}

impl<G: Game> Tree<G> {
    pub fn new(pos: G, config: MctsConfig) -> Tree<G> {
        let mut nodes = Vec::with_capacity(1024);
        nodes.push(Node::new(0, 1.0));
        Tree {
            nodes,
            root_pos: pos,
            config,
            root_noised: false,
            budget: 0,
            root_gumbel: PerChild::new(),
            schedule: Vec::new(),
        }
    }

    /// Sets the simulations a search runs, for a search that plans its budget (Gumbel).
    pub fn set_budget(&mut self, sims: u32) {
        if self.budget != sims {
            self.budget = sims;
            self.schedule.clear();
        }
    }

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

    /// The stats Gumbel's rules see of `idx`'s children, values for the player choosing.
    fn child_stats(&self, idx: usize) -> ArrayVec<ChildStats, 32> {
        let node = &self.nodes[idx];
        let first = node.first_child as usize;
        self.nodes[first..first + node.n_children as usize]
            .iter()
            .map(|c| ChildStats {
                prior: c.prior,
                visits: c.visits,
                q: if c.proven != UNDECIDED {
                    c.proven as f32
                } else if c.visits > 0 {
                    c.value_sum / c.visits as f32
                } else {
                    0.0
                },
                decided: c.proven != UNDECIDED,
            })
            .collect()
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

    /// After the last node of `path` was decided, decides its ancestors that it settles: a
    /// node is lost for the player who moved into it when one of its children wins for the
    /// player moving into that child, and won when all its children lose.
    fn propagate_proof(&mut self, path: &Path) {
        for k in (1..path.len()).rev() {
            let parent = path[k - 1] as usize;
            let Some((value, end)) = self.proof_from_children(parent) else {
                return;
            };
            self.nodes[parent].proven = value;
            self.nodes[parent].end = end;
        }
    }

    /// The exact value of `idx` for the player who moved into it and the plies to the end,
    /// if its children settle it: lost by the fastest winning child, or won by the slowest
    /// of children that all lose.
    fn proof_from_children(&self, idx: usize) -> Option<(i8, u8)> {
        let node = &self.nodes[idx];
        if node.state != EXPANDED || node.n_children == 0 {
            return None;
        }
        let first = node.first_child as usize;
        let children = &self.nodes[first..first + node.n_children as usize];
        // One child that wins is enough, whatever the others.
        if let Some(end) = children
            .iter()
            .filter(|c| c.proven == 1)
            .map(|c| c.end)
            .min()
        {
            return Some((-1, end.saturating_add(1)));
        }
        if children.iter().all(|c| c.proven == -1) {
            let end = children.iter().map(|c| c.end).max().unwrap_or(0);
            return Some((1, end.saturating_add(1)));
        }
        None
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

    /// Makes `m` the root, keeping its subtree (tree reuse).
    pub fn advance(&mut self, m: Move) {
        let mut next = self.root_pos.clone();
        next.play(m);
        let root = self.nodes[0];
        let child = (0..root.n_children as usize)
            .map(|i| root.first_child as usize + i)
            .find(|&i| self.nodes[i].mv == m);
        // Gumbel's sequential halving plans its simulations from zero visits: no reuse (the
        // self-play cache still answers the positions the old subtree had evaluated).
        let reusable = |c: usize| {
            self.config.search == SearchKind::Puct
                && (self.nodes[c].state == EXPANDED || self.nodes[c].state == TERMINAL)
        };
        match child {
            Some(c) if reusable(c) => {
                self.nodes = compact(&self.nodes, c);
            }
            _ => {
                self.nodes.clear();
                self.nodes.push(Node::new(0, 1.0));
            }
        }
        self.root_pos = next;
        self.new_root();
    }

    /// Forgets what belonged to the previous root: its noise and plan.
    fn new_root(&mut self) {
        self.root_noised = false;
        self.root_gumbel.clear();
        self.schedule.clear();
    }

    /// Starts over at `pos`.
    pub fn reset(&mut self, pos: G) {
        self.nodes.clear();
        self.nodes.push(Node::new(0, 1.0));
        self.root_pos = pos;
        self.new_root();
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

/// An exact game value (-1.0, 0.0 or 1.0) as a decided node's `proven`. Not `f32::signum`,
/// which makes a draw's 0.0 a win.
fn exact(v: f32) -> i8 {
    if v > 0.0 {
        1
    } else if v < 0.0 {
        -1
    } else {
        0
    }
}

/// Copies the subtree under `root` into a fresh node array with `root` at index 0.
fn compact(nodes: &[Node], root: usize) -> Vec<Node> {
    let mut out = Vec::with_capacity(nodes.len());
    let mut r = nodes[root];
    r.mv = 0;
    out.push(r);
    // Breadth first: each node's children stay contiguous.
    let mut i = 0;
    while i < out.len() {
        let n = out[i];
        if n.n_children > 0 && n.state == EXPANDED {
            let first = out.len() as u32;
            for k in 0..n.n_children as usize {
                out.push(nodes[n.first_child as usize + k]);
            }
            out[i].first_child = first;
        } else {
            out[i].n_children = 0;
            if out[i].state == PENDING {
                out[i].state = UNEXPANDED;
            }
        }
        i += 1;
    }
    out
}

/// Evaluates positions for the search: policy (over all actions) and value for the mover.
pub trait LeafEvaluator<G: Game> {
    fn evaluate(&mut self, positions: &[G], policies: &mut [f32], values: &mut [f32])
        -> Result<()>;
    /// Restarts the evaluator's own randomness (rollouts) for a new game.
    fn reseed(&mut self, _seed: u64) {}
}

/// Uniform priors and a value of zero: measures the search alone.
pub struct UniformEvaluator;

impl<G: Game> LeafEvaluator<G> for UniformEvaluator {
    fn evaluate(
        &mut self,
        positions: &[G],
        policies: &mut [f32],
        values: &mut [f32],
    ) -> Result<()> {
        policies[..positions.len() * G::NUM_ACTIONS].fill(1.0);
        values[..positions.len()].fill(0.0);
        Ok(())
    }
}

/// Classical MCTS: uniform priors and the result of one random playout.
pub struct RolloutEvaluator {
    pub rng: Rng64,
}

impl<G: Game> LeafEvaluator<G> for RolloutEvaluator {
    fn evaluate(
        &mut self,
        positions: &[G],
        policies: &mut [f32],
        values: &mut [f32],
    ) -> Result<()> {
        policies[..positions.len() * G::NUM_ACTIONS].fill(1.0);
        for (pos, v) in positions.iter().zip(values.iter_mut()) {
            let me = pos.to_move();
            let mut p = pos.clone();
            loop {
                if let Some(o) = p.outcome() {
                    *v = o.value_for(me);
                    break;
                }
                let moves = p.legal_moves();
                p.play(moves[self.rng.random_range(0..moves.len())]);
            }
        }
        Ok(())
    }
    fn reseed(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
    }
}

/// Runs `tree` until its root has `sims` visits, evaluating up to `batch` leaves at a time.
pub fn search<G: Game, E: LeafEvaluator<G>>(
    tree: &mut Tree<G>,
    eval: &mut E,
    sims: u32,
    batch: usize,
    rng: &mut Rng64,
) -> Result<()> {
    let mut leaves: Vec<Leaf<G>> = Vec::with_capacity(batch);
    let mut positions: Vec<G> = Vec::with_capacity(batch);
    let mut policies = vec![0.0; batch * G::NUM_ACTIONS];
    let mut values = vec![0.0; batch];
    tree.set_budget(sims);
    tree.noise_root_once(rng);
    let mut stalls = 0;
    while tree.root_visits() < sims {
        leaves.clear();
        positions.clear();
        while leaves.len() < batch && tree.root_visits() < sims {
            match tree.select() {
                Selection::Leaf(l) => {
                    positions.push(l.pos.clone());
                    leaves.push(l);
                }
                Selection::Terminal => {}
                Selection::Collision => break,
            }
        }
        if leaves.is_empty() {
            // Only collisions or terminals: terminals still add visits; guard against a
            // tree with nothing left to explore.
            stalls += 1;
            if stalls > MAX_STALLED_BATCHES {
                break;
            }
            continue;
        }
        eval.evaluate(&positions, &mut policies, &mut values)?;
        for (i, l) in leaves.iter().enumerate() {
            tree.complete(
                l,
                &policies[i * G::NUM_ACTIONS..(i + 1) * G::NUM_ACTIONS],
                values[i],
            );
        }
        tree.noise_root_once(rng);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Connect4, TicTacToe};

    #[test]
    fn finds_the_immediate_win_and_the_only_block() {
        let mut rng = rng_from_seed(1);
        // X to move can win at 3 (top row 1,2 taken).
        let pos = TicTacToe::parse_position("1427").unwrap();
        let mut tree = Tree::new(pos, MctsConfig::default());
        search(
            &mut tree,
            &mut RolloutEvaluator {
                rng: rng_from_seed(2),
            },
            400,
            1,
            &mut rng,
        )
        .unwrap();
        assert_eq!(tree.pick_move(0.0, &mut rng).unwrap(), 2);
        // Connect Four: the first player threatens column 4 vertically; the second must block.
        let pos = Connect4::parse_position("41414").unwrap();
        let mut tree = Tree::new(pos, MctsConfig::default());
        search(
            &mut tree,
            &mut RolloutEvaluator {
                rng: rng_from_seed(3),
            },
            2000,
            8,
            &mut rng,
        )
        .unwrap();
        assert_eq!(tree.pick_move(0.0, &mut rng).unwrap(), 3);
    }

    #[test]
    fn visits_add_up_and_reuse_keeps_the_subtree() {
        let mut rng = rng_from_seed(1);
        let mut tree = Tree::new(Connect4::new(), MctsConfig::default());
        search(&mut tree, &mut UniformEvaluator, 500, 4, &mut rng).unwrap();
        assert_eq!(tree.root_visits(), 500);
        let kids = tree.root_children();
        assert_eq!(kids.iter().map(|k| k.1).sum::<u32>(), 499);
        let (m, visits, _, _) = kids[3];
        tree.advance(m);
        assert_eq!(tree.root_visits(), visits);
        assert_eq!(tree.root_pos(), &Connect4::parse_position("4").unwrap());
        search(&mut tree, &mut UniformEvaluator, 600, 4, &mut rng).unwrap();
        assert_eq!(tree.root_visits(), 600);
        let p = tree.policy();
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
}
