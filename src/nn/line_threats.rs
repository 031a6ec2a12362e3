//! Two input planes a Connect Four network can compute from its stones (`arch.line_threats`):
//! each empty cell that would complete a line of four for the side to move, and each that
//! would for its opponent, whether the cell can be played now or only later. A threat that
//! waits above an empty cell decides most Connect Four endgames through the order in which
//! columns fill (which side gets to play the cell); a small network has to learn to see such
//! lines from stones alone, from a few thousand games. KataGo gives its network inputs of the
//! same kind, read off the rules (liberties, ladders), and counts such domain-specific
//! techniques among its gains (Wu 2019). Measured here (docs/ablations.md, "Line-threat input
//! planes"): ahead at 5 iterations, behind at 15 and a tenth slower, so an option only.
//!
//! They come from the rules alone: no search, no solver. The network computes them from its
//! input planes, so records, the encoding and every caller stay as they are; a network without
//! the option never computes them.

use tch::{Kind, Tensor};

/// The length of a line that wins.
const LINE: i64 = 4;

/// Kernels `[4, 1, 4, 4]` of the four directions of a line of four: across, up, and the two
/// diagonals. A window of the board under a kernel is one line.
fn line_kernels(device: tch::Device) -> Tensor {
    let mut k = [0f32; 4 * 16];
    for i in 0..LINE as usize {
        k[i] = 1.0; // across: the first row
        k[16 + i * 4] = 1.0; // up: the first column
        k[32 + i * 4 + i] = 1.0; // one diagonal
        k[48 + i * 4 + (3 - i)] = 1.0; // the other
    }
    Tensor::from_slice(&k)
        .view([4, 1, LINE, LINE])
        .to_device(device)
}

/// Each empty cell `[n, 1, h, w]` (1 or 0) that completes a line of four of `stones` (1 or 0,
/// `[n, 1, h, w]`): a line of `stones` in three cells whose fourth is `empty`. Lines are
/// every window of four on the board; padding puts windows half off the board, where neither
/// stones nor empty cells are, so those never count.
fn threats(stones: &Tensor, empty: &Tensor, kernels: &Tensor) -> Result<Tensor, tch::TchError> {
    let pad = [LINE - 1, LINE - 1];
    let conv = |x: &Tensor| x.f_conv2d(kernels, None::<Tensor>, [1, 1], pad, [1, 1], 1);
    let (own, free) = (conv(stones)?, conv(empty)?);
    let open = own
        .f_eq(3.0)?
        .f_logical_and(&free.f_eq(1.0)?)?
        .f_to_kind(Kind::Float)?;
    // Back from lines to their cells: each cell gets the number of open lines through it.
    // That is the transposed convolution, computed as a plain one with the kernels turned
    // round and summed over directions (three times as fast in libtorch on a CPU).
    let back = kernels.f_flip([2, 3])?.f_transpose(0, 1)?.f_contiguous()?;
    let through = open.f_conv2d(&back, None::<Tensor>, [1, 1], [0, 0], [1, 1], 1)?;
    through.f_gt(0.0)?.f_to_kind(Kind::Float)?.f_mul(empty)
}

/// `xs` `[n, planes, h, w]` (plane 0 the mover's stones, plane 1 the opponent's) with two
/// planes after its own: the cells that complete a line of four for the mover, then for the
/// opponent. In 32-bit floats, whatever `xs` was: the counts are exact either way.
pub(super) fn with_threat_planes(xs: &Tensor) -> Result<Tensor, tch::TchError> {
    let xs = xs.f_to_kind(Kind::Float)?;
    let mover = xs.f_narrow(1, 0, 1)?;
    let opponent = xs.f_narrow(1, 1, 1)?;
    let empty = mover.f_add(&opponent)?.f_neg()?.f_add_scalar(1.0)?;
    let kernels = line_kernels(xs.device());
    // Both sides in one batch of twice the positions: half the operations.
    let n = xs.size()[0];
    let both = threats(
        &Tensor::f_cat(&[&mover, &opponent], 0)?,
        &Tensor::f_cat(&[&empty, &empty], 0)?,
        &kernels,
    )?;
    Tensor::f_cat(&[xs, both.f_narrow(0, 0, n)?, both.f_narrow(0, n, n)?], 1)
}

/// The planes [`with_threat_planes`] adds.
pub const THREAT_PLANES: usize = 2;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rng::rng_from_seed;
    use crate::games::{Connect4, Game};
    use rand::Rng;

    /// The cells that complete a line of four for the stones of `plane` (0 the mover's, 1
    /// the opponent's), by looking at every line through every empty cell.
    fn threats_by_hand(planes: &[f32], plane: usize, h: usize, w: usize) -> Vec<f32> {
        let cells = h * w;
        let at = |r: i64, c: i64, p: usize| -> Option<f32> {
            (r >= 0 && c >= 0 && (r as usize) < h && (c as usize) < w)
                .then(|| planes[p * cells + r as usize * w + c as usize])
        };
        let mut out = vec![0.0; cells];
        for r in 0..h as i64 {
            for c in 0..w as i64 {
                let empty = at(r, c, 0) == Some(0.0) && at(r, c, 1) == Some(0.0);
                for (dr, dc) in [(0, 1), (1, 0), (1, 1), (1, -1)] {
                    for start in -3..=0 {
                        let line = (0..4).filter(|&i| i != -start).map(|i| {
                            at(r + (start + i) * dr, c + (start + i) * dc, plane) == Some(1.0)
                        });
                        if empty && line.clone().count() == 3 && line.into_iter().all(|x| x) {
                            out[r as usize * w + c as usize] = 1.0;
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn the_planes_are_the_cells_that_complete_a_line_of_four() {
        let (h, w) = (Connect4::HEIGHT, Connect4::WIDTH);
        let cells = h * w;
        let mut rng = rng_from_seed(7);
        let mut threats_seen = 0;
        for game in 0..60 {
            let mut pos = Connect4::new();
            while pos.outcome().is_none() && pos.ply() < 10 + game % 30 {
                let moves = pos.legal_moves();
                pos.play(moves[rng.random_range(0..moves.len())]);
            }
            let mut planes = vec![0.0; Connect4::input_size()];
            pos.encode(&mut planes);
            let xs = Tensor::from_slice(&planes).view([1, 3, h as i64, w as i64]);
            let out = with_threat_planes(&xs).unwrap();
            assert_eq!(out.size(), [1, 5, h as i64, w as i64]);
            let got = Vec::<f32>::try_from(out.flatten(0, -1)).unwrap();
            assert_eq!(
                got[..3 * cells],
                planes[..],
                "the input planes come first, as they were"
            );
            for plane in 0..2 {
                let expected = threats_by_hand(&planes, plane, h, w);
                let at = (3 + plane) * cells;
                assert_eq!(
                    got[at..at + cells],
                    expected[..],
                    "plane {plane} of {pos:?}"
                );
                threats_seen += expected.iter().filter(|&&x| x == 1.0).count();
            }
        }
        assert!(
            threats_seen > 20,
            "the positions have threats to find ({threats_seen})"
        );
    }

    #[test]
    fn a_line_across_the_board_edge_is_no_threat() {
        // The mover's three stones in the bottom row's last three columns: the only line of
        // four through them that fits ends at the cell on their left.
        let (h, w) = (Connect4::HEIGHT, Connect4::WIDTH);
        let cells = h * w;
        let mut planes = vec![0.0; 3 * cells];
        for c in 4..7 {
            planes[(h - 1) * w + c] = 1.0;
        }
        let xs = Tensor::from_slice(&planes).view([1, 3, h as i64, w as i64]);
        let got = Vec::<f32>::try_from(with_threat_planes(&xs).unwrap().flatten(0, -1)).unwrap();
        let mine: Vec<usize> = (0..cells).filter(|&i| got[3 * cells + i] == 1.0).collect();
        assert_eq!(mine, [(h - 1) * w + 3]);
        assert!(got[4 * cells..].iter().all(|&x| x == 0.0));
    }
}
