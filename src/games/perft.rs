//! Perft: counting move sequences and positions ply by ply, the standard check of move rules.

use std::collections::HashMap;

use super::Game;

/// One row of a perft count: move sequences of length `ply` from the start (games stop at a
/// win; a pass is a ply) and the distinct positions they reach.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PerftRow {
    pub ply: usize,
    pub sequences: u64,
    pub positions: u64,
}

/// Counts sequences and distinct positions ply by ply, keeping one count per position so that
/// transpositions are expanded once.
pub fn perft<G: Game>(depth: usize) -> Vec<PerftRow> {
    let mut level: HashMap<G, u64> = [(G::new(), 1)].into_iter().collect();
    let mut rows = Vec::new();
    for ply in 1..=depth {
        let mut next: HashMap<G, u64> = HashMap::new();
        for (pos, &count) in &level {
            for m in pos.legal_moves() {
                let mut child = pos.clone();
                child.play(m);
                *next.entry(child).or_insert(0) += count;
            }
        }
        rows.push(PerftRow {
            ply,
            sequences: next.values().sum(),
            positions: next.len() as u64,
        });
        level = next;
    }
    rows
}
