//! The search tree's storage: nodes and their children in one array, the tree moving on to a
//! child's subtree (or starting over), and MCTS-solver proofs: the exact values that finished
//! games settle up the tree.

use arrayvec::ArrayVec;

use super::config::{MctsConfig, SearchKind};
use crate::games::{Game, Move};
use crate::search::gumbel::{ChildStats, PerChild};

pub(super) const UNEXPANDED: u8 = 0;
pub(super) const EXPANDED: u8 = 1;
pub(super) const TERMINAL: u8 = 2;
pub(super) const PENDING: u8 = 3;

#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    pub(super) first_child: u32,
    pub(super) n_children: u8,
    pub(super) mv: Move,
    pub(super) state: u8,
    pub(super) visits: u32,
    /// Sum of values from the view of the player who moved into this node.
    pub(super) value_sum: f32,
    pub(super) prior: f32,
    /// For a decided node (a finished game, or one proven from its children): its exact
    /// value for the player who moved into it, -1, 0 or 1; [`UNDECIDED`] otherwise.
    pub(super) proven: i8,
    /// For a decided node: the plies to the end of the game along the proof.
    pub(super) end: u8,
    /// The evaluator's value of an expanded node, for the side to move there (Gumbel's
    /// completed values start from it).
    pub(super) raw_value: f32,
}

/// `Node::proven` of a node whose value is not known exactly.
pub(super) const UNDECIDED: i8 = i8::MIN;

impl Node {
    pub(super) fn new(mv: Move, prior: f32) -> Node {
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
pub(super) type Path = ArrayVec<u32, 64>;

/// A leaf waiting for evaluation: the caller evaluates `pos` and calls [`Tree::complete`].
#[derive(Clone, Debug)]
pub struct Leaf<G> {
    pub pos: G,
    pub(super) path: Path,
}

/// A search tree over positions of `G`, with reuse between moves.
pub struct Tree<G: Game> {
    pub(super) nodes: Vec<Node>,
    pub(super) root_pos: G,
    pub(super) config: MctsConfig,
    /// Whether the current root's priors have had their noise (once a root, in self-play).
    pub(super) root_noised: bool,
    /// Simulations a search of this tree runs (Gumbel's sequential halving plans by it).
    pub(super) budget: u32,
    /// Gumbel: the root children's noise, and sequential halving's schedule.
    pub(super) root_gumbel: PerChild,
    pub(super) schedule: Vec<u32>,
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

    /// The stats Gumbel's rules see of `idx`'s children, values for the player choosing.
    pub(super) fn child_stats(&self, idx: usize) -> ArrayVec<ChildStats, 32> {
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

    /// After the last node of `path` was decided, decides its ancestors that it settles: a
    /// node is lost for the player who moved into it when one of its children wins for the
    /// player moving into that child, and won when all its children lose.
    pub(super) fn propagate_proof(&mut self, path: &Path) {
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
    pub(super) fn proof_from_children(&self, idx: usize) -> Option<(i8, u8)> {
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
}

/// An exact game value (-1.0, 0.0 or 1.0) as a decided node's `proven`. Not `f32::signum`,
/// which makes a draw's 0.0 a win.
pub(super) fn exact(v: f32) -> i8 {
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
