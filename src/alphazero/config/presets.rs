//! The presets: the settings `zero cycle --preset NAME` starts a run with, one function a
//! preset. Why each value: docs/decisions.md.

use anyhow::{bail, Result};

use crate::catalog::PresetFamily;
use crate::games::GameKind;
use crate::nn::{Arch, CpuMatrixUnits, Precision};
use crate::search::mcts::{MctsConfig, SearchKind};

use super::{
    EvalConfig, ForkMove, GradeConfig, LearningRateDrop, NetConfig, Research, RunConfig,
    SelfPlayConfig, TrainConfig,
};

/// The presets' names.
pub const PRESETS: &str =
    "default (follows the device), cpu, gpu, long (cpu, for 55 iterations), tiny (for tests)";

/// The iterations `zero cycle` runs in all when none are given: the run's preset's (55 for
/// `long`: about an hour on two cores; 15 for the others). scripts/zero-ray repeats the rule.
pub fn default_iterations(preset: &str) -> u32 {
    match preset {
        "long" => 55,
        _ => 15,
    }
}

impl RunConfig {
    /// The preset `name` for `game` on a machine with or without CUDA.
    pub fn preset(name: &str, game: GameKind, cuda: bool) -> Result<RunConfig> {
        Self::preset_for_search(name, game, cuda, None)
    }

    /// The preset with the tree search `search` (self-play and evaluation) instead of the
    /// preset's own. A preset tuned for one search gives the other search its own budget of
    /// games and simulations rather than a budget that suits neither.
    pub fn preset_for_search(
        name: &str,
        game: GameKind,
        cuda: bool,
        search: Option<SearchKind>,
    ) -> Result<RunConfig> {
        let name = match name {
            "default" if cuda => "gpu",
            "default" => "cpu",
            other => other,
        };
        let mut c = match (name, game.presets()) {
            ("tiny", _) => tiny(),
            ("cpu", small @ PresetFamily::SmallBoard { .. }) => cpu_small_game(small),
            ("cpu", PresetFamily::Connect4) => cpu_connect4(cuda, search),
            ("gpu", PresetFamily::Connect4) if search != Some(SearchKind::Puct) => {
                gpu_connect4_gumbel()
            }
            ("long", _) => long(game, cuda, search)?,
            ("gpu", family) => gpu(family),
            (other, _) => bail!("unknown preset '{other}'; presets are: {PRESETS}"),
        };
        c.preset = name.to_string();
        if let Some(search) = search {
            c.mcts.search = search;
        }
        Ok(c)
    }
}

/// The settings every preset starts from; [`RunConfig::preset_for_search`] names it.
fn base() -> RunConfig {
    RunConfig {
        preset: String::new(),
        seed: 0,
        net: NetConfig {
            arch: Arch::resnet(4, 64),
            precision: Precision::F32,
        },
        selfplay: SelfPlayConfig {
            games: 200,
            sims: 64,
            parallel_games: 64,
            workers: 1,
            inference_threads: 1,
            chunk_games: 64,
            temperature_plies: 8,
            random_opening_plies: 0,
            fork_share: 0.0,
            fork_plies: 0,
            fork_move: ForkMove::Uniform,
        },
        mcts: MctsConfig {
            noise_fraction: 0.25,
            // Used by the Gumbel search only: self-play samples its moves by the noise.
            gumbel_scale: 1.0,
            ..MctsConfig::default()
        },
        train: TrainConfig {
            steps: 400,
            batch_size: 256,
            learning_rate: 2e-3,
            learning_rate_drops: Vec::new(),
            weight_decay: 1e-4,
            window: 4,
            value_target_mix: 0.3,
        },
        eval: EvalConfig {
            games: 40,
            sims: 64,
            promote_threshold: 0.55,
            random_plies: 4,
            opening_plies: 0,
            benchmark: None,
            benchmark_games: 0,
            grade: GradeConfig::default(),
        },
        research: Research::default(),
    }
}

/// A run of seconds, for tests.
fn tiny() -> RunConfig {
    let mut c = base();
    c.net.arch = Arch::resnet(1, 16);
    c.selfplay.games = 16;
    c.selfplay.sims = 16;
    c.selfplay.parallel_games = 16;
    // Two chunks an iteration, so that tests see an iteration half played.
    c.selfplay.chunk_games = 8;
    c.train.steps = 20;
    c.train.batch_size = 64;
    c.eval.games = 4;
    c.eval.sims = 8;
    // A handful, so that the tests still go through the grading quickly.
    c.eval.grade = GradeConfig {
        net_positions: 8,
        search_positions: 4,
    };
    c
}

/// The small games' run on a CPU, with each game's own search, games, opening plies at random
/// and by temperature, and training steps (docs/decisions.md, "The small games' preset").
fn cpu_small_game(family: PresetFamily) -> RunConfig {
    let mut c = base();
    c.net.arch = Arch::resnet(2, 32);
    c.selfplay.sims = 48;
    c.selfplay.workers = 2;
    c.selfplay.parallel_games = 50;
    c.selfplay.chunk_games = 100;
    if let PresetFamily::SmallBoard {
        search,
        games,
        random_opening_plies,
        temperature_plies,
        train_steps,
    } = family
    {
        (c.mcts.search, c.selfplay.games) = (search, games);
        c.selfplay.random_opening_plies = random_opening_plies;
        (c.selfplay.temperature_plies, c.train.steps) = (temperature_plies, train_steps);
    }
    c.train.batch_size = 128;
    c.eval.games = 40;
    c.eval.sims = 48;
    c.eval.random_plies = 2;
    c
}

/// Connect Four's run on a CPU, with Gumbel's search or, asked for, PUCT's (whose budget is
/// the default run's before Gumbel). docs/decisions.md says why each value.
fn cpu_connect4(cuda: bool, search: Option<SearchKind>) -> RunConfig {
    let mut c = base();
    c.net.arch = Arch::resnet(4, 48).with_wdl_head();
    c.mcts.search = SearchKind::Gumbel;
    let run_search = search.unwrap_or(c.mcts.search);
    (c.selfplay.games, c.selfplay.sims) = match run_search {
        SearchKind::Gumbel => (1200, 16),
        SearchKind::Puct => (400, 64),
    };
    c.train.steps = 300;
    if run_search == SearchKind::Gumbel {
        with_connect4_openings(&mut c);
        c.selfplay.fork_move = ForkMove::Policy;
        if !cuda {
            (c.selfplay.games, c.train.steps) = cpu_connect4_budget(CpuMatrixUnits::detect());
            c.net.precision = Precision::native();
            c.train.learning_rate = 4e-3;
        }
    }
    c.selfplay.workers = 2;
    c.selfplay.parallel_games = 100;
    c.selfplay.chunk_games = 200;
    c.selfplay.temperature_plies = 8;
    c.train.batch_size = 256;
    // Gumbel's runs play no match (latest becomes best every iteration); PUCT's keep the gate.
    c.eval.games = if run_search == SearchKind::Gumbel {
        0
    } else {
        40
    };
    c.eval.sims = 64;
    c
}

/// Connect Four's Gumbel run on a GPU: the cpu preset's search, openings and forks with a
/// 5x128 network, 4,800 games an iteration over 24 workers that four inference threads serve
/// (docs/decisions.md, "The GPU presets").
fn gpu_connect4_gumbel() -> RunConfig {
    let mut gpu = cpu_connect4(false, None);
    gpu.mcts.gumbel_considered = 4;
    gpu.train.learning_rate = 2e-3;
    gpu.eval.games = 40;
    (gpu.selfplay.games, gpu.train.steps, gpu.train.batch_size) = (4800, 480, 1024);
    gpu.net.arch = Arch::resnet(5, 128).with_wdl_head();
    gpu.net.precision = Precision::F32;
    // One worker a chunk: more would wait for chunks that do not exist.
    gpu.selfplay.workers = (gpu.selfplay.games / gpu.selfplay.chunk_games) as usize;
    gpu.selfplay.inference_threads = 4;
    gpu
}

/// Connect Four's openings in self-play and evaluation, where every Gumbel run and the GPU's
/// PUCT run have them: half the self-play games start after 4 random plies, the other half
/// fork from their own main line at one of its first 20 plies, and evaluation plays pairs of
/// games from 4 random plies (docs/decisions.md).
fn with_connect4_openings(c: &mut RunConfig) {
    c.selfplay.random_opening_plies = 4;
    c.eval.opening_plies = 4;
    c.selfplay.fork_share = 0.5;
    c.selfplay.fork_plies = 20;
}

/// The cpu preset for 55 iterations, with a budget of its own, its learning rate a quarter
/// from iteration 46 on and half its forks' moves uniform (docs/decisions.md).
fn long(game: GameKind, cuda: bool, search: Option<SearchKind>) -> Result<RunConfig> {
    let mut long = RunConfig::preset_for_search("cpu", game, cuda, search)?;
    if game.presets() == PresetFamily::Connect4 && long.mcts.search == SearchKind::Gumbel {
        if !cuda {
            (long.selfplay.games, long.train.steps) =
                long_connect4_budget(CpuMatrixUnits::detect());
        }
        long.train.learning_rate_drops = vec![LearningRateDrop {
            from_iteration: 46,
            learning_rate: long.train.learning_rate / 4.0,
        }];
        long.selfplay.fork_move = ForkMove::Mixed(0.5);
    }
    Ok(long)
}

/// PUCT's run on a GPU: the small games', and Connect Four's with `--search puct`, with two
/// inference threads of two workers each (docs/decisions.md, "The GPU presets").
fn gpu(family: PresetFamily) -> RunConfig {
    let mut c = base();
    c.net.arch = Arch::resnet(6, 128);
    c.selfplay.games = if family == PresetFamily::Connect4 {
        2000
    } else {
        500
    };
    c.selfplay.sims = 200;
    c.selfplay.parallel_games = 256;
    c.selfplay.workers = 4;
    c.selfplay.inference_threads = 2;
    c.selfplay.chunk_games = 250;
    if family == PresetFamily::Connect4 {
        with_connect4_openings(&mut c);
    }
    c.train.steps = 2000;
    c.train.batch_size = 512;
    c.eval.games = 100;
    c.eval.sims = 200;
    c
}

/// Games and training steps an iteration of Connect Four's Gumbel run on a CPU, by what the
/// processor offers the network: the most work whose 15 iterations take no longer than the
/// default run before this budget on the same machine (docs/decisions.md, "bfloat16 where the
/// processor has it, and a budget per processor").
pub fn cpu_connect4_budget(units: CpuMatrixUnits) -> (u64, u64) {
    match units {
        CpuMatrixUnits::Amx => (3000, 900),
        CpuMatrixUnits::AvxBf16 => (2400, 720),
        CpuMatrixUnits::F32Only => (1600, 480),
    }
}

/// Games and training steps an iteration of the `long` preset's Connect Four run on a CPU:
/// the most work whose 55 iterations fit an hour on two cores of the processor.
pub fn long_connect4_budget(units: CpuMatrixUnits) -> (u64, u64) {
    match units {
        CpuMatrixUnits::Amx => cpu_connect4_budget(units),
        CpuMatrixUnits::AvxBf16 => (2000, 600),
        CpuMatrixUnits::F32Only => (1200, 360),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_fours_cpu_preset_plays_gumbel_from_random_openings_and_forks_and_puct_keeps_its_own_budget(
    ) {
        let gumbel = RunConfig::preset("cpu", GameKind::Connect4, false).unwrap();
        // On a CPU: the processor's budget, in bfloat16 where it has its instructions.
        let units = CpuMatrixUnits::detect();
        assert_eq!(
            (
                gumbel.mcts.search,
                gumbel.selfplay.sims,
                gumbel.train.learning_rate
            ),
            (SearchKind::Gumbel, 16, 4e-3)
        );
        assert_eq!(
            (gumbel.selfplay.games, gumbel.train.steps),
            cpu_connect4_budget(units)
        );
        assert_eq!(gumbel.net.precision, Precision::native());
        let on_gpu = RunConfig::preset("cpu", GameKind::Connect4, true).unwrap();
        assert_eq!(
            (
                on_gpu.net.precision,
                on_gpu.selfplay.games,
                on_gpu.train.steps,
                on_gpu.train.learning_rate
            ),
            (Precision::F32, 1200, 300, 2e-3)
        );
        let puct =
            RunConfig::preset_for_search("cpu", GameKind::Connect4, false, Some(SearchKind::Puct))
                .unwrap();
        assert_eq!(
            (
                puct.mcts.search,
                puct.selfplay.games,
                puct.selfplay.sims,
                puct.train.steps
            ),
            (SearchKind::Puct, 400, 64, 300)
        );
        // Gumbel's run starts games from random openings or forks them from the main line
        // (measured with it); PUCT's is the previous default run, without either.
        assert_eq!(
            (
                gumbel.selfplay.random_opening_plies,
                gumbel.eval.opening_plies
            ),
            (4, 4)
        );
        assert_eq!(
            (gumbel.selfplay.fork_share, gumbel.selfplay.fork_plies),
            (0.5, 20)
        );
        assert_eq!(gumbel.selfplay.fork_move, ForkMove::Policy);
        assert_eq!(puct.selfplay.fork_move, ForkMove::Uniform);
        assert_eq!(
            (puct.selfplay.random_opening_plies, puct.eval.opening_plies),
            (0, 0)
        );
        assert_eq!(
            (puct.selfplay.fork_share, puct.selfplay.fork_plies),
            (0.0, 0)
        );
        // Gumbel's latest becomes best every iteration; PUCT's plays the gate's match.
        assert_eq!((gumbel.eval.games, puct.eval.games), (0, 40));
        // Nothing else differs: the same network, training and evaluation (PUCT's run
        // computes in 32 bits, with the settings of the run it was).
        assert_eq!(
            (
                puct.net.precision,
                puct.train.steps,
                puct.train.learning_rate
            ),
            (Precision::F32, 300, 2e-3)
        );
        let mut same_budget = gumbel.clone();
        same_budget.mcts = puct.mcts;
        (same_budget.selfplay.games, same_budget.selfplay.sims) =
            (puct.selfplay.games, puct.selfplay.sims);
        same_budget.net.precision = puct.net.precision;
        same_budget.train.steps = puct.train.steps;
        same_budget.train.learning_rate = puct.train.learning_rate;
        same_budget.selfplay.random_opening_plies = 0;
        same_budget.eval.opening_plies = 0;
        (
            same_budget.selfplay.fork_share,
            same_budget.selfplay.fork_plies,
        ) = (0.0, 0);
        same_budget.selfplay.fork_move = ForkMove::Uniform;
        same_budget.eval.games = 40;
        assert_eq!(same_budget, puct);
    }

    #[test]
    fn connect_fours_cpu_run_values_positions_as_win_draw_loss() {
        let wdl = |preset, game| {
            RunConfig::preset(preset, game, false)
                .unwrap()
                .net
                .arch
                .has_wdl_head()
        };
        assert!(wdl("cpu", GameKind::Connect4));
        assert!(wdl("long", GameKind::Connect4));
        // The other games' runs play perfectly with the scalar head (README).
        assert!(!wdl("cpu", GameKind::TicTacToe));
        assert!(!wdl("cpu", GameKind::Othello4));
    }

    #[test]
    fn connect_fours_cpu_budget_follows_the_processor_in_whole_chunks_for_two_workers() {
        use CpuMatrixUnits::*;
        assert_eq!(cpu_connect4_budget(Amx), (3000, 900));
        assert_eq!(cpu_connect4_budget(AvxBf16), (2400, 720));
        assert_eq!(cpu_connect4_budget(F32Only), (1600, 480));
        let chunk = RunConfig::preset("cpu", GameKind::Connect4, false)
            .unwrap()
            .selfplay
            .chunk_games;
        // The long preset's: the cpu one with AMX, about five sixths of it without.
        assert_eq!(long_connect4_budget(Amx), (3000, 900));
        assert_eq!(long_connect4_budget(AvxBf16), (2000, 600));
        assert_eq!(long_connect4_budget(F32Only), (1200, 360));
        for budget in [cpu_connect4_budget, long_connect4_budget] {
            for units in [Amx, AvxBf16, F32Only] {
                let (games, steps) = budget(units);
                assert_eq!(games % chunk, 0, "{units:?}: whole chunks");
                // The ratio of steps to games every budget was measured with.
                assert_eq!(steps * 10, games * 3, "{units:?}");
            }
            // A processor's budget never exceeds a faster one's.
            assert!(budget(F32Only).0 <= budget(AvxBf16).0);
            assert!(budget(AvxBf16).0 <= budget(Amx).0);
        }
        // A longer run never does more an iteration than the 15-iteration one.
        for units in [Amx, AvxBf16, F32Only] {
            assert!(long_connect4_budget(units).0 <= cpu_connect4_budget(units).0);
        }
    }

    #[test]
    fn the_long_preset_is_the_cpu_one_with_its_own_budget_mixed_forks_and_a_quarter_of_its_learning_rate_from_iteration_46(
    ) {
        for cuda in [false, true] {
            let long = RunConfig::preset("long", GameKind::Connect4, cuda).unwrap();
            let mut expected = RunConfig::preset("cpu", GameKind::Connect4, cuda).unwrap();
            expected.preset = "long".to_string();
            expected.train.learning_rate_drops = vec![LearningRateDrop {
                from_iteration: 46,
                learning_rate: expected.train.learning_rate / 4.0,
            }];
            expected.selfplay.fork_move = ForkMove::Mixed(0.5);
            if !cuda {
                (expected.selfplay.games, expected.train.steps) =
                    long_connect4_budget(CpuMatrixUnits::detect());
            }
            assert_eq!(long, expected);
        }
        let long = RunConfig::preset("long", GameKind::Connect4, false).unwrap();
        assert_eq!(long.learning_rate_of(45), 4e-3);
        assert_eq!(long.learning_rate_of(46), 1e-3);
        assert_eq!(long.learning_rate_of(55), 1e-3);
        // PUCT's run and the other games' runs are the cpu ones.
        let puct =
            RunConfig::preset_for_search("long", GameKind::Connect4, false, Some(SearchKind::Puct))
                .unwrap();
        let mut expected =
            RunConfig::preset_for_search("cpu", GameKind::Connect4, false, Some(SearchKind::Puct))
                .unwrap();
        expected.preset = "long".to_string();
        assert_eq!(puct, expected);
        let ttt = RunConfig::preset("long", GameKind::TicTacToe, false).unwrap();
        assert_eq!(
            ttt.mcts,
            RunConfig::preset("cpu", GameKind::TicTacToe, false)
                .unwrap()
                .mcts
        );
        assert_eq!(default_iterations("long"), 55);
        assert_eq!(default_iterations("cpu"), 15);
    }

    #[test]
    fn other_presets_only_switch_the_search() {
        for (name, game) in [
            ("cpu", GameKind::TicTacToe),
            ("cpu", GameKind::Othello4),
            ("gpu", GameKind::Othello4),
            ("tiny", GameKind::Connect4),
        ] {
            let plain = RunConfig::preset(name, game, false).unwrap();
            assert_eq!(plain.mcts.search, SearchKind::Puct, "{name} {game:?}");
            let gumbel =
                RunConfig::preset_for_search(name, game, false, Some(SearchKind::Gumbel)).unwrap();
            let mut expected = plain;
            expected.mcts.search = SearchKind::Gumbel;
            assert_eq!(gumbel, expected, "{name} {game:?}");
        }
    }

    #[test]
    fn connect_fours_gpu_preset_is_gumbel_on_5x128_and_puct_keeps_its_budget() {
        // Its default: the cpu preset's Connect Four without CUDA, with the root moves, the
        // step size and the gate its leases measured, in 32 bits with a 5x128 network, 4,800
        // games over 24 workers (one a chunk) and four inference threads, and 480 steps of
        // 1,024 positions.
        let gumbel = RunConfig::preset("gpu", GameKind::Connect4, true).unwrap();
        let asked =
            RunConfig::preset_for_search("gpu", GameKind::Connect4, true, Some(SearchKind::Gumbel))
                .unwrap();
        assert_eq!(gumbel, asked);
        let mut expected = RunConfig::preset("cpu", GameKind::Connect4, false).unwrap();
        expected.preset = "gpu".to_string();
        expected.mcts.gumbel_considered = 4;
        expected.train.learning_rate = 2e-3;
        expected.eval.games = 40;
        (
            expected.selfplay.games,
            expected.train.steps,
            expected.train.batch_size,
        ) = (4800, 480, 1024);
        expected.net.arch = Arch::resnet(5, 128).with_wdl_head();
        expected.net.precision = Precision::F32;
        (
            expected.selfplay.workers,
            expected.selfplay.inference_threads,
        ) = (24, 4);
        assert_eq!(gumbel, expected);
        assert_eq!(
            (
                gumbel.mcts.search,
                gumbel.selfplay.games,
                gumbel.selfplay.sims,
                gumbel.train.steps
            ),
            (SearchKind::Gumbel, 4800, 16, 480)
        );
        // One worker a chunk: more would wait for chunks that do not exist.
        assert_eq!(
            gumbel.selfplay.games / gumbel.selfplay.chunk_games,
            gumbel.selfplay.workers as u64
        );
        // `--search puct`: 200 simulations of a 6x128 network over 2,000 games, 4 workers.
        let gpu =
            RunConfig::preset_for_search("gpu", GameKind::Connect4, true, Some(SearchKind::Puct))
                .unwrap();
        assert_eq!(gpu.mcts.search, SearchKind::Puct);
        assert_eq!(
            (gpu.net.arch, gpu.selfplay.games, gpu.selfplay.sims),
            (Arch::resnet(6, 128), 2000, 200)
        );
        assert_eq!(
            (gpu.selfplay.workers, gpu.selfplay.inference_threads),
            (4, 2)
        );
        let openings = |c: &RunConfig| {
            (
                c.selfplay.random_opening_plies,
                c.selfplay.fork_share,
                c.selfplay.fork_plies,
                c.eval.opening_plies,
            )
        };
        assert_eq!(openings(&gpu), openings(&gumbel));
        // The small games keep their openings.
        let ttt = RunConfig::preset("gpu", GameKind::TicTacToe, true).unwrap();
        assert_eq!(openings(&ttt), (0, 0.0, 0, 0));
        let mut none = gpu;
        none.selfplay.inference_threads = 0;
        assert_eq!(
            none.problems(),
            ["selfplay.inference_threads is 0 (must be at least 1)"]
        );
    }
}
