//! The presets: the settings `zero cycle --preset NAME` starts a run with, one function a
//! preset, each setting beside the measurement that chose it (docs/ablations.md).

use anyhow::{bail, Result};

use crate::catalog::PresetFamily;
use crate::games::GameKind;
use crate::nn::{Arch, CpuMatrixUnits, Precision};
use crate::search::mcts::{MctsConfig, SearchKind};

use super::config::{
    opponent_policy_weight, soft_policy_weight, ForkMove, GradeConfig, LearningRateDrop, RunConfig,
};

/// The presets' names.
pub const PRESETS: &str =
    "default (follows the device), cpu, gpu, long (cpu, for 55 iterations), tiny (for tests), material";

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
            ("material", _) => material(),
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
        arch: Arch::resnet(4, 64),
        games: 200,
        sims: 64,
        parallel_games: 64,
        workers: 1,
        inference_threads: 1,
        chunk_games: 64,
        temperature_plies: 8,
        random_opening_plies: 0,
        random_opening_share: 1.0,
        random_opening_search_value: false,
        fork_share: 0.0,
        fork_plies: 0,
        fork_line_search_value: false,
        fork_move: ForkMove::Uniform,
        root_noise_plies: None,
        playout_cap: None,
        opening_sims: None,
        precision: Precision::F32,
        mcts: MctsConfig {
            noise_fraction: 0.25,
            // Used by the Gumbel search only: self-play samples its moves by the noise.
            gumbel_scale: 1.0,
            ..MctsConfig::default()
        },
        train_steps: 400,
        batch_size: 256,
        learning_rate: 2e-3,
        learning_rate_drops: Vec::new(),
        weight_decay: 1e-4,
        decoupled_weight_decay: false,
        weight_average_steps: 0,
        carry_adam_moments: false,
        window: 4,
        value_target_mix: 0.3,
        value_bootstrap: None,
        value_discount: None,
        position_averaging: false,
        policy_surprise_share: 0.0,
        reanalyse_positions: 0,
        board_loss_weight: 1.0,
        opponent_policy_loss_weight: opponent_policy_weight(),
        soft_policy_loss_weight: soft_policy_weight(),
        value_loss_weight: 1.0,
        eval_games: 40,
        eval_sims: 64,
        promote_threshold: 0.55,
        eval_random_plies: 4,
        eval_opening_plies: 0,
        benchmark: None,
        benchmark_games: 0,
        grade: GradeConfig::default(),
        seed: 0,
    }
}

/// A run of seconds, for tests.
fn tiny() -> RunConfig {
    let mut c = base();
    c.arch = Arch::resnet(1, 16);
    c.games = 16;
    c.sims = 16;
    c.parallel_games = 16;
    // Two chunks an iteration, so that tests see an iteration half played.
    c.chunk_games = 8;
    c.train_steps = 20;
    c.batch_size = 64;
    c.eval_games = 4;
    c.eval_sims = 8;
    // A handful, so that the tests still go through the grading quickly.
    c.grade = GradeConfig {
        net_positions: 8,
        search_positions: 4,
    };
    c
}

/// Tic-tac-toe's and 4x4 Othello's run on a CPU.
fn cpu_small_game(family: PresetFamily) -> RunConfig {
    let mut c = base();
    c.arch = Arch::resnet(2, 32);
    c.games = 200;
    c.sims = 48;
    c.workers = 2;
    c.parallel_games = 50;
    c.chunk_games = 100;
    // Each game's own: its opening plies by temperature and steps an iteration.
    if let PresetFamily::SmallBoard {
        temperature_plies,
        train_steps,
    } = family
    {
        (c.temperature_plies, c.train_steps) = (temperature_plies, train_steps);
    }
    c.batch_size = 128;
    c.eval_games = 40;
    c.eval_sims = 48;
    c.eval_random_plies = 2;
    c
}

/// Connect Four's run on a CPU, with Gumbel's search or, asked for, PUCT's.
fn cpu_connect4(cuda: bool, search: Option<SearchKind>) -> RunConfig {
    let mut c = base();
    // A win/draw/loss value head (Lc0's): a sure draw and an even fight both
    // average 0, and a scalar head cannot tell them apart. At 15 iterations it
    // erred less on Begin-Hard's held-out positions 201-400 on average (9.3%
    // over five runs against 10.8 over four) and on L2_R2 (3.7 against 4.0), at
    // no cost an iteration; the long preset with it was level (docs/ablations.md).
    c.arch = Arch::resnet(4, 48).with_wdl_head();
    // Gumbel AlphaZero keeps learning with few simulations: 16 a move over 1,200
    // games an iteration taught the network more than PUCT's 64 over 400 at the
    // same cost (docs/ablations.md). `--search puct` keeps PUCT's own budget: the
    // previous default run's settings.
    c.mcts.search = SearchKind::Gumbel;
    let run_search = search.unwrap_or(c.mcts.search);
    (c.games, c.sims) = match run_search {
        SearchKind::Gumbel => (1200, 16),
        SearchKind::Puct => (400, 64),
    };
    c.train_steps = 300;
    if run_search == SearchKind::Gumbel {
        with_connect4_openings(&mut c);
        // The fork's move drawn by the search's policy rather than uniformly: the
        // forks then try the moves the search nearly played, where the solver's
        // replies lie. Two seeds at 15 iterations on a Zen 4: `best` won a median
        // 16 and 14 of 20 first-player games against the solver, against 9 and 9
        // with uniform forks, higher in all ten pairings; Begin-Hard 66 mistakes
        // of 800 against 74, the network alone 85 of 1,600 against 93
        // (docs/ablations.md).
        c.fork_move = ForkMove::Policy;
        if !cuda {
            (c.games, c.train_steps) = cpu_connect4_budget(CpuMatrixUnits::detect());
            c.precision = Precision::native();
            // Twice the step size: over 15 iterations the network is still
            // learning fast, and 4e-3 taught it more in each of three seeds (the
            // network alone at iteration 15: 6.4 / 6.1 / 6.6% of the evaluation
            // set against 7.6 / 7.2 / 7.5% with 2e-3; L1_R2 1.6-1.9% against
            // 2.4-3.5; docs/ablations.md). The long preset, measured over 55
            // iterations with 2e-3, keeps it.
            c.learning_rate = 4e-3;
        }
    }
    // Two workers of 100 games in lockstep, a chunk of 200 games each: 1.75 times
    // the positions per second of one worker of 128 (measured on 2 cores).
    c.workers = 2;
    c.parallel_games = 100;
    c.chunk_games = 200;
    c.temperature_plies = 8;
    c.batch_size = 256;
    // No match of latest against best: latest becomes best every iteration, as in
    // AlphaZero. Over five runs of 15 iterations the gate (55% of 40 games) kept
    // the old best in 2-6 of the 15 iterations, mostly late, and its runs were no
    // stronger: Begin-Hard 230 mistakes of 2,000 against 218, the network alone
    // 6.4% of the evaluation set in both; and the match took an eighth of the run
    // (docs/ablations.md). PUCT's runs keep their measured gate.
    c.eval_games = if run_search == SearchKind::Gumbel {
        0
    } else {
        40
    };
    c.eval_sims = 64;
    c
}

/// Connect Four's Gumbel run on a GPU.
fn gpu_connect4_gumbel() -> RunConfig {
    // Gumbel on a GPU: the cpu preset's run with 16 simulations, its openings and
    // forks, 4 root moves, 2e-3 and the gate in 32 bits, with a 5x128 network
    // (docs/gpu.md's seventh lease), 4,800 games an iteration played by 24
    // workers (one per chunk of 200) that four inference threads serve, and 480
    // steps of 1,024 positions (the ninth lease). On one H200 with 16 cores an
    // iteration took 18.7 s (1,600 games over 8 workers and two threads, 480 steps
    // of 256: 14.3 s) and made 22,900 positions/s (12,400), the GPU busy 45% of
    // the time (29%); at equal minutes `best` erred less on the evaluation set,
    // network alone, than two runs of the old settings (4.4% against 5.2-5.8 at
    // 4 min, 3.6% against 4.8-6.2 at 7.5). On a 2-core CPU a network this size
    // plays 6.5 times slower.
    let mut gpu = cpu_connect4(false, None);
    gpu.mcts.gumbel_considered = 4;
    gpu.learning_rate = 2e-3;
    gpu.eval_games = 40;
    (gpu.games, gpu.train_steps, gpu.batch_size) = (4800, 480, 1024);
    gpu.arch = Arch::resnet(5, 128).with_wdl_head();
    gpu.precision = Precision::F32;
    // One worker a chunk: more would wait for chunks that do not exist.
    gpu.workers = (gpu.games / gpu.chunk_games) as usize;
    gpu.inference_threads = 4;
    gpu
}

/// Connect Four's openings in self-play and evaluation, where every Gumbel run and the GPU's
/// PUCT run have them.
///
/// Half the self-play games start after 4 random plies, and evaluation plays pairs of games
/// from 4 random plies. Without them self-play repeats itself (a late window's 175,000
/// positions held 28,000-35,000 distinct ones), two strong networks play one game 20 times a
/// side, and the curve flattens at 10-11% from iteration 22; with them the network alone erred
/// on 8.0% at iteration 15 (docs/ablations.md).
///
/// The other half fork from their own main line at one of its first 20 plies instead: random
/// openings alone seldom reach the line the network plays, where its games against the solver
/// are lost (`444444`); with forks `best` won a median 16 of 20 first-player games against it
/// at iteration 25, against 6 without (docs/ablations.md).
fn with_connect4_openings(c: &mut RunConfig) {
    c.random_opening_plies = 4;
    c.eval_opening_plies = 4;
    c.fork_share = 0.5;
    c.fork_plies = 20;
}

/// The cpu preset for 55 iterations.
fn long(game: GameKind, cuda: bool, search: Option<SearchKind>) -> Result<RunConfig> {
    // The cpu preset for 55 iterations, its learning rate a quarter from
    // iteration 46 on. Two seeds as one-core arms on the Xeon with AMX: every
    // `best` at 55 won 20 of 20 first-player games against the solver (seeds
    // 1-5) and erred on 1.0-1.2% of L2_R2, 1.2-1.6% of L1_R2 and 7.5-8.0% of
    // L1_R3's first 200; without the drop the same runs won a median 15 and 20,
    // and erred on 1.6 and 1.2% of L2_R2, 7.0 and 5.5% of L1_R3. Timed from a
    // fresh clone on two cores (40.3 min), its seed 0 won a median 15: the count
    // turns on whole opening lines.
    // The run it replaced (4 root moves, 1,600 games and 480 steps, 2e-3 and the
    // gate) won a median 14-15 on that machine (docs/ablations.md). Without AMX
    // an iteration plays fewer games than the cpu preset's, so that the 55 fit
    // the hour (`long_connect4_budget`).
    let mut long = RunConfig::preset_for_search("cpu", game, cuda, search)?;
    if game.presets() == PresetFamily::Connect4 && long.mcts.search == SearchKind::Gumbel {
        if !cuda {
            (long.games, long.train_steps) = long_connect4_budget(CpuMatrixUnits::detect());
        }
        long.learning_rate_drops = vec![LearningRateDrop {
            from_iteration: 46,
            learning_rate: long.learning_rate / 4.0,
        }];
        // Half the forks' moves uniform, half by the policy: over 55 iterations
        // the forks then also try the replies the network gives no weight, which
        // the solver plays all the same. On the Zen 4 (two-core arms), seeds 0
        // and 1 won all 100 first-player games against the solver (seeds 1-5);
        // policy forks alone won a median 16 and 20 (docs/ablations.md). At 15
        // iterations the mix was behind (a median 10 against 16): the cpu
        // preset keeps policy forks.
        long.fork_move = ForkMove::Mixed(0.5);
    }
    Ok(long)
}

/// PUCT's run on a GPU: the small games', and Connect Four's with `--search puct`.
fn gpu(family: PresetFamily) -> RunConfig {
    let mut c = base();
    // PUCT's budget on a GPU: the small games' preset, and Connect Four's with
    // `--search puct` (its default until the seventh lease in docs/gpu.md).
    c.arch = Arch::resnet(6, 128);
    c.games = if family == PresetFamily::Connect4 {
        2000
    } else {
        500
    };
    c.sims = 200;
    c.parallel_games = 256;
    c.workers = 4;
    // Two inference threads, two workers each: one thread left the GPU half
    // idle (docs/gpu.md).
    c.inference_threads = 2;
    c.chunk_games = 250;
    if family == PresetFamily::Connect4 {
        // The cpu preset's openings. The first gpu run (without them) repeated itself:
        // latest stopped beating best from iteration 11, with a value loss of 0.021
        // (docs/gpu.md).
        with_connect4_openings(&mut c);
    }
    c.train_steps = 2000;
    c.batch_size = 512;
    c.eval_games = 100;
    c.eval_sims = 200;
    c
}

/// The Python/Keras material's run, to compare with.
fn material() -> RunConfig {
    let mut c = base();
    // The Python/Keras material: 500 self-play games x 50 simulations per cycle,
    // 16 residual blocks x 128 filters, 100 epochs, 10 evaluation games.
    c.arch = Arch::resnet(16, 128);
    c.games = 500;
    c.sims = 50;
    c.parallel_games = 100;
    c.chunk_games = 100;
    c.workers = 2;
    // 100 epochs over one iteration's positions (about 20 a game) in batches.
    c.train_steps = 100 * 500 * 20 / 256;
    c.window = 1;
    c.value_target_mix = 0.0;
    c.eval_games = 10;
    c.eval_sims = 50;
    c
}

/// Games and training steps an iteration of Connect Four's Gumbel run on a CPU, by what the
/// processor offers the network: the most work whose 15 iterations take no longer than
/// 41735ae's default run on the same machine.
///
/// An iteration first played a third more games than 1,200 (1,600: 8 chunks, 4 a worker) and
/// trained 60% more steps than 300: the time that bfloat16 or, in 32 bits, channels-last
/// convolutions and batch norm folded for inference saved; the network alone erred on 7.4 and
/// 6.9% of the evaluation set at 15 iterations in 32 bits (seeds 0 and 1) against 9.0%. Since
/// then the run plays no match, and on the Xeon with AMX its 15 iterations took 6.9 min
/// against 41735ae's 14.8 with 2,000 games and 600 steps; 3,000 and 900 spend most of the rest
/// (13.6 min against 16.9 from fresh clones). Over seeds 0-3 at 15 iterations against 2,000 x
/// 600: the network alone 5.2% of the evaluation set against 6.2, L2_R2 1.9% against 2.6,
/// Begin-Hard 136 mistakes of 1,600 against 150, the solver's first-player medians 9, 18, 16,
/// 16 of 20 against 14, 14, 12, 11. Games and steps keep their ratio: at the same cost an
/// iteration, more games for fewer steps taught no more (docs/ablations.md).
///
/// On an AMD Zen 4 (bfloat16 vectors, no AMX) 3,000 and 900 took 23.6 min against 41735ae's
/// 21.0, training 60% of an iteration; 2,400 and 720 (12 chunks, 6 a worker) took 16.4 min
/// against 41735ae's 19.6 on another Zen 4, fresh clones one after the other. Their `best`s won
/// fewer first-player games against the solver at 15 iterations (medians 9 and 9 over seeds 0
/// and 1, against 14 and 13), level on Pons' sets and on the evaluation set's curve.
/// Without bfloat16 instructions the network computes in 32 bits: on the same Zen 4, forced
/// to 32 bits, an iteration of 2,400 and 720 took 1.6 times as long (self-play 1.8, training
/// 1.5), so such a processor gets 1,600 and 480 (8 chunks, 4 a worker), the 32-bit run measured
/// before bfloat16: the network alone erred on 7.4 and 6.9% of the evaluation set at 15
/// iterations (seeds 0 and 1), against 5.2% with 3,000 and 900 on the Xeon.
pub fn cpu_connect4_budget(units: CpuMatrixUnits) -> (u64, u64) {
    match units {
        CpuMatrixUnits::Amx => (3000, 900),
        CpuMatrixUnits::AvxBf16 => (2400, 720),
        CpuMatrixUnits::F32Only => (1600, 480),
    }
}

/// Games and training steps an iteration of the `long` preset's Connect Four run on a CPU:
/// the most work whose 55 iterations fit the hour on two cores of the processor.
///
/// With AMX the cpu preset's own (3,000 x 900): 40.3 min from a fresh clone on the Xeon. On an
/// AMD Zen 4 (bfloat16 vectors, no AMX) the cpu preset's 2,400 x 720 took 59-75 s an
/// iteration over the default run's 15 (16.4 min), about 60 min for 55: too close to the hour
/// on a machine a few percent slower, so 2,000 x 600 (10 chunks, 5 a worker), about five
/// sixths of it: 46.7 min from a fresh clone there, its `best` level with the Xeon's on Pons'
/// sets and the solver's games (docs/ablations.md). In 32 bits an iteration costs 1.6 times as
/// much (the cpu budget's note), so 1,200 x 360 (6 chunks, 3 a worker), by that ratio.
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
            (gumbel.mcts.search, gumbel.sims, gumbel.learning_rate),
            (SearchKind::Gumbel, 16, 4e-3)
        );
        assert_eq!(
            (gumbel.games, gumbel.train_steps),
            cpu_connect4_budget(units)
        );
        assert_eq!(gumbel.precision, Precision::native());
        let on_gpu = RunConfig::preset("cpu", GameKind::Connect4, true).unwrap();
        assert_eq!(
            (
                on_gpu.precision,
                on_gpu.games,
                on_gpu.train_steps,
                on_gpu.learning_rate
            ),
            (Precision::F32, 1200, 300, 2e-3)
        );
        let puct =
            RunConfig::preset_for_search("cpu", GameKind::Connect4, false, Some(SearchKind::Puct))
                .unwrap();
        assert_eq!(
            (puct.mcts.search, puct.games, puct.sims, puct.train_steps),
            (SearchKind::Puct, 400, 64, 300)
        );
        // Gumbel's run starts games from random openings or forks them from the main line
        // (measured with it); PUCT's is the previous default run, without either.
        assert_eq!(
            (gumbel.random_opening_plies, gumbel.eval_opening_plies),
            (4, 4)
        );
        assert_eq!((gumbel.fork_share, gumbel.fork_plies), (0.5, 20));
        assert_eq!(gumbel.fork_move, ForkMove::Policy);
        assert_eq!(puct.fork_move, ForkMove::Uniform);
        assert_eq!((puct.random_opening_plies, puct.eval_opening_plies), (0, 0));
        assert_eq!((puct.fork_share, puct.fork_plies), (0.0, 0));
        // Gumbel's latest becomes best every iteration; PUCT's plays the gate's match.
        assert_eq!((gumbel.eval_games, puct.eval_games), (0, 40));
        // Nothing else differs: the same network, training and evaluation (PUCT's run
        // computes in 32 bits, with the settings of the run it was).
        assert_eq!(
            (puct.precision, puct.train_steps, puct.learning_rate),
            (Precision::F32, 300, 2e-3)
        );
        let same_budget = RunConfig {
            mcts: puct.mcts,
            games: puct.games,
            sims: puct.sims,
            precision: puct.precision,
            train_steps: puct.train_steps,
            learning_rate: puct.learning_rate,
            random_opening_plies: 0,
            eval_opening_plies: 0,
            fork_share: 0.0,
            fork_plies: 0,
            fork_move: ForkMove::Uniform,
            eval_games: 40,
            ..gumbel
        };
        assert_eq!(same_budget, puct);
    }

    #[test]
    fn every_preset_passes_its_own_checks() {
        for name in ["cpu", "gpu", "long", "tiny", "material"] {
            for game in [GameKind::Connect4, GameKind::TicTacToe, GameKind::Othello4] {
                let c = RunConfig::preset(name, game, false).unwrap();
                assert_eq!(c.problems(), Vec::<String>::new(), "{name} {game:?}");
            }
        }
    }

    #[test]
    fn connect_fours_cpu_run_values_positions_as_win_draw_loss() {
        let wdl = |preset, game| {
            RunConfig::preset(preset, game, false)
                .unwrap()
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
            expected.learning_rate_drops = vec![LearningRateDrop {
                from_iteration: 46,
                learning_rate: expected.learning_rate / 4.0,
            }];
            expected.fork_move = ForkMove::Mixed(0.5);
            if !cuda {
                (expected.games, expected.train_steps) =
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
        expected.learning_rate = 2e-3;
        expected.eval_games = 40;
        (expected.games, expected.train_steps, expected.batch_size) = (4800, 480, 1024);
        expected.arch = Arch::resnet(5, 128).with_wdl_head();
        expected.precision = Precision::F32;
        (expected.workers, expected.inference_threads) = (24, 4);
        assert_eq!(gumbel, expected);
        assert_eq!(
            (
                gumbel.mcts.search,
                gumbel.games,
                gumbel.sims,
                gumbel.train_steps
            ),
            (SearchKind::Gumbel, 4800, 16, 480)
        );
        // One worker a chunk: more would wait for chunks that do not exist.
        assert_eq!(gumbel.games / gumbel.chunk_games, gumbel.workers as u64);
        // `--search puct`: 200 simulations of a 6x128 network over 2,000 games, 4 workers.
        let gpu =
            RunConfig::preset_for_search("gpu", GameKind::Connect4, true, Some(SearchKind::Puct))
                .unwrap();
        assert_eq!(gpu.mcts.search, SearchKind::Puct);
        assert_eq!(
            (gpu.arch, gpu.games, gpu.sims),
            (Arch::resnet(6, 128), 2000, 200)
        );
        assert_eq!((gpu.workers, gpu.inference_threads), (4, 2));
        let openings = |c: &RunConfig| {
            (
                c.random_opening_plies,
                c.random_opening_share,
                c.fork_share,
                c.fork_plies,
                c.eval_opening_plies,
            )
        };
        assert_eq!(openings(&gpu), openings(&gumbel));
        // The small games keep their openings; runs from before the setting read one thread.
        let ttt = RunConfig::preset("gpu", GameKind::TicTacToe, true).unwrap();
        assert_eq!(openings(&ttt), (0, 1.0, 0.0, 0, 0));
        let mut json = serde_json::to_value(&gpu).unwrap();
        json.as_object_mut().unwrap().remove("inference_threads");
        let old: RunConfig = serde_json::from_value(json).unwrap();
        assert_eq!(old.inference_threads, 1);
        let mut none = gpu;
        none.inference_threads = 0;
        assert_eq!(
            none.problems(),
            ["inference_threads is 0 (must be at least 1)"]
        );
    }
}
