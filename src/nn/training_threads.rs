//! How many libtorch threads a training step uses on a CPU.

use super::{Arch, Shape};
use crate::core::threads::default_threads;

/// The trunk's multiply-adds in a step below which one thread trains faster than two. libtorch
/// splits each operation between its threads, which meet at a barrier after it; a small step
/// is hundreds of operations too small to share, and with a short OpenMP spin each barrier can
/// cost a wake-up. On a 2-core AMD EPYC Zen 5, ms a step with one thread against two (`zero
/// bench train`, three rounds, `GOMP_SPINCOUNT=1000`, the spin of training then):
/// tic-tac-toe's 2x32 network on 128 positions (0.05 G multiply-adds) 6.0-6.3 against 7.3-20,
/// 4x4 Othello's (0.09 G) 7.6-8.1 against 9.1-12.7, Connect Four's 4x48 on 256 (2.0 G) 64-74
/// against 47-56. With the longer spin of training since (10,000 rounds, see `main.rs`) two
/// threads were level on tic-tac-toe's steps and a little ahead on Othello's on an idle Intel
/// Xeon (5.0-5.1 against 5.2-5.4 ms, 6.0-6.1 against 7.1-7.2), and both games' default runs
/// took the same time with either spin; small steps keep one thread, which meets no barrier
/// and so waits for no descheduled partner when another program is busy.
const ONE_THREAD_BELOW: u64 = 1_000_000_000;

/// libtorch threads for training `arch` on positions of `shape`, `batch` a step, while nothing
/// else runs: every core ([`default_threads`]), or one for a step too small to share.
pub fn training_threads(arch: &Arch, shape: Shape, batch: usize) -> usize {
    let step = arch
        .trunk_multiply_adds(shape)
        .and_then(|m| m.checked_mul(u64::try_from(batch).ok()?));
    match step {
        Some(m) if m < ONE_THREAD_BELOW => 1,
        _ => default_threads(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Connect4, Game, TicTacToe};

    #[test]
    fn small_steps_train_on_one_thread_and_large_ones_on_every_core() {
        let ttt = Shape::of::<TicTacToe>();
        let c4 = Shape::of::<Connect4>();
        // 9 cells x 9 weights x 32 filters x (the input planes + 2 blocks x 2 x 32) a position.
        let planes = TicTacToe::PLANES as u64;
        assert_eq!(
            Arch::resnet(2, 32).trunk_multiply_adds(ttt),
            Some(9 * 9 * 32 * (planes + 4 * 32))
        );
        assert_eq!(training_threads(&Arch::resnet(2, 32), ttt, 128), 1);
        let default = default_threads();
        assert_eq!(training_threads(&Arch::resnet(4, 48), c4, 256), default);
    }
}
