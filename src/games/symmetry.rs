//! Board symmetries, for augmenting training data: how cells and actions permute.

use super::Move;

/// A board symmetry as permutations: board cell `i` goes to `cells[i]`, action `a` to
/// `actions[a]`. Used to augment training data (and optionally at inference).
#[derive(Clone, Debug)]
pub struct Symmetry {
    pub cells: Vec<usize>,
    pub actions: Vec<usize>,
}

impl Symmetry {
    /// Applies the symmetry to network input planes laid out `[plane][cell]`.
    pub fn apply_planes(&self, planes: &[f32], out: &mut [f32]) {
        let n = self.cells.len();
        for (p, chunk) in planes.chunks(n).enumerate() {
            for (i, &v) in chunk.iter().enumerate() {
                out[p * n + self.cells[i]] = v;
            }
        }
    }
    /// Applies the symmetry to a vector over actions (a policy).
    pub fn apply_policy(&self, policy: &[f32], out: &mut [f32]) {
        for (a, &v) in policy.iter().enumerate() {
            out[self.actions[a]] = v;
        }
    }
    /// The image of one action.
    pub fn apply_move(&self, m: Move) -> Move {
        self.actions[m as usize] as Move
    }
}

/// Permutations of a square board of side `n` under the dihedral group D4, as cell maps.
/// Order: identity, rot90, rot180, rot270, flip (mirror left-right), and the flips of the
/// rotations.
pub fn square_symmetries(n: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for flip in [false, true] {
        for rot in 0..4 {
            let mut map = vec![0; n * n];
            for r in 0..n {
                for c in 0..n {
                    let (mut rr, mut cc) = (r, c);
                    if flip {
                        cc = n - 1 - cc;
                    }
                    for _ in 0..rot {
                        let t = rr;
                        rr = cc;
                        cc = n - 1 - t;
                    }
                    map[r * n + c] = rr * n + cc;
                }
            }
            out.push(map);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn d4_has_eight_distinct_permutations() {
        let s = square_symmetries(3);
        assert_eq!(s.len(), 8);
        for (i, a) in s.iter().enumerate() {
            let mut sorted = a.clone();
            sorted.sort();
            assert_eq!(sorted, (0..9).collect::<Vec<_>>());
            for b in &s[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(s[0], (0..9).collect::<Vec<_>>());
    }
}
