//! Run configuration and presets. A preset picks network size, simulations, games per
//! iteration and training steps; the defaults follow the game and the device.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use crate::games::GameKind;
use crate::nn::{Arch, CpuMatrixUnits, Precision};
use crate::search::gumbel;
use crate::search::mcts::{MctsConfig, SearchKind};

use super::value_bootstrap::ValueBootstrap;

/// Everything a cycle needs; saved as `models/<game>/run.json` so that a resumed run keeps
/// the settings it started with.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    pub preset: String,
    pub arch: Arch,
    /// Self-play games per iteration.
    pub games: u64,
    /// Simulations per self-play move.
    pub sims: u32,
    /// Games played in lockstep so the network always sees full batches.
    pub parallel_games: usize,
    /// Self-play worker threads (each with `parallel_games` games).
    pub workers: usize,
    /// On a GPU, the inference threads that serve self-play's workers, each with its own copy
    /// of the network and its share of the workers: one thread copying batches in and out
    /// left the GPU half idle (docs/gpu.md). On a CPU every worker evaluates its own copy
    /// and this is not used. 1 in runs from before the setting.
    #[serde(default = "one_thread")]
    pub inference_threads: usize,
    /// Games played together by one worker and written as one file: the unit of self-play
    /// work, whose games are the same wherever and whenever it is played.
    #[serde(default = "default_chunk_games")]
    pub chunk_games: u64,
    /// Plies played with temperature 1 (sampled by visits); greedy after.
    pub temperature_plies: u32,
    /// Self-play's first plies played uniformly at random (after the search, whose policy is
    /// still their target), so that games start from many more positions; 0 in runs from
    /// before the setting.
    #[serde(default)]
    pub random_opening_plies: u32,
    /// The share of self-play games that start with those random plies (chosen from each
    /// game's seed); the others start from the empty board. 1 in runs from before the setting.
    #[serde(default = "every_game")]
    pub random_opening_share: f64,
    /// Positions before a game's last random opening ply learn the search's root value alone
    /// as their value target, not the result of a game that went on at random; off in the
    /// presets (ahead on the evaluation set for one seed of two, level on Pons' hard sets:
    /// docs/ablations.md) and in runs from before the setting.
    #[serde(default)]
    pub random_opening_search_value: bool,
    /// The share of self-play games forked from their own main line (KataGo's side
    /// positions), chosen from each game's seed: such a game opens with no random plies,
    /// plays its searched moves up to a ply drawn from its seed below `fork_plies`, there
    /// plays a uniformly random move other than the searched one, and trains only on the
    /// positions after it. The main line's alternatives (an opponent's surprising reply, a
    /// move the network never considers) get games of their own. 0 in runs from before it.
    #[serde(default)]
    pub fork_share: f64,
    /// Forks happen at plies 0 to `fork_plies - 1`.
    #[serde(default)]
    pub fork_plies: u32,
    /// A forked game's plies up to and including its fork train too: their policy target is
    /// their search's as anywhere, their value target the search's root value alone (the
    /// game's result is that of a game that left the line). Without it the main line's own
    /// positions, which the fork games replay, never train. Off in the presets (two seeds at
    /// 15 iterations: Begin-Hard level, L1_R2 ahead, the solver games behind:
    /// docs/ablations.md) and in runs from before the setting.
    #[serde(default)]
    pub fork_line_search_value: bool,
    /// How a forked game chooses its fork's move ([`ForkMove`]): uniformly among the moves
    /// other than the searched one, or by the search's policy over them. Uniform in the presets
    /// and in runs from before the setting.
    #[serde(default)]
    pub fork_move: ForkMove,
    /// Self-play's searches noise their root (Gumbel's noise, or PUCT's Dirichlet) only in a
    /// game's first `root_noise_plies` plies; later moves are the noise-free search's choice,
    /// so that a position's value target is the result of the network's best play rather than
    /// of moves sampled to the end of the game. Absent (every full search noised) in the
    /// presets and in runs from before the setting: with 8, two seeds were level or behind
    /// on the evaluation set and behind on Pons' sets at 15 iterations (docs/ablations.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_noise_plies: Option<u32>,
    pub mcts: MctsConfig,
    /// What the network computes in, in self-play, training and evaluation
    /// ([`Precision`]: the weights are 32-bit floats either way); f32 in runs from before
    /// the setting.
    #[serde(default)]
    pub precision: Precision,
    /// Playout cap randomization: most self-play moves get a cheap search (absent: every
    /// move gets the full `sims`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playout_cap: Option<PlayoutCap>,
    /// More simulations for the full searches of a game's first plies, where Pons' Begin-Hard
    /// positions lie (absent: every full search gets `sims`). Absent in the presets: 48 on
    /// plies 0-9 cost 1.27 times an iteration and were behind at 15 iterations, seed 0
    /// (docs/ablations.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opening_sims: Option<OpeningSims>,
    /// Training steps (mini-batches) per iteration.
    pub train_steps: u64,
    pub batch_size: usize,
    pub learning_rate: f64,
    /// Lower learning rates for later iterations: from `from_iteration` on, training starts
    /// each iteration at `learning_rate` instead of the one above (the last drop reached
    /// applies); none in the presets and in runs from before the setting.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learning_rate_drops: Vec<LearningRateDrop>,
    pub weight_decay: f64,
    /// Weight decay decoupled from the gradient (AdamW: each step scales every weight by
    /// `1 - learning_rate * weight_decay`) instead of added to it as L2 (Adam's
    /// `weight_decay * w`); off in the presets and in runs from before the setting: at 1e-2
    /// it was level with the cpu preset over 80 min, seed 0 (docs/ablations.md).
    #[serde(default)]
    pub decoupled_weight_decay: bool,
    /// The trained network is an exponential moving average of its weights over the
    /// iteration's steps, each step's weights counting `1 / weight_average_steps`
    /// ([`super::weight_average`]); the next iteration trains on from that average. 0 (the
    /// last step's weights) in the presets and in runs from before the setting: 100 was level
    /// or behind in two seeds at 15 iterations (docs/ablations.md).
    #[serde(default)]
    pub weight_average_steps: u64,
    /// Each iteration's training starts with the moments and step count that Adam finished
    /// the last iteration with (from its training checkpoint), as one long training would,
    /// instead of from zero: a fresh Adam's first steps move every weight by about the
    /// learning rate whatever its gradient's size. Off in the presets and in runs from
    /// before the setting: four seeds at 15 iterations were level on Begin-Hard and the
    /// solver, about half a point ahead on L2_R2; two seeds of the `long` preset's 55 were
    /// ahead on the evaluation set's curve and level or behind on Pons' sets and the solver
    /// (docs/ablations.md).
    #[serde(default)]
    pub carry_adam_moments: bool,
    /// Iterations of self-play kept in the replay window.
    pub window: u32,
    /// Weight of the search's root value in the value target (the rest is the game result).
    pub value_target_mix: f32,
    /// The game's result in the value target bootstrapped from later positions' root values
    /// ([`ValueBootstrap`]: `"greedy"` or `{"lambda": 0.8}`). Absent (the result) in the
    /// presets and in runs from before the setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_bootstrap: Option<ValueBootstrap>,
    /// The game's result in the value target discounted by this factor a ply before the end
    /// (`0.98`: a result 10 plies on counts 0.82 of itself; the rest of the target's mass goes
    /// to a draw). Wins and losses keep their sign, so the order of win, draw and loss is
    /// unchanged; within one kind, a quicker win and a slower loss are worth more, as a
    /// moves-left head makes Lc0 prefer them. Absent (1, no discount) in the presets and in
    /// runs from before the setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_discount: Option<f32>,
    /// Train on each distinct position of the replay window once, with its occurrences'
    /// targets averaged and weight 1 + log2(occurrences) ([`super::position_averaging`]);
    /// off in runs from before the setting.
    #[serde(default)]
    pub position_averaging: bool,
    /// Policy surprise weighting (KataGo's): this share of each game's training weight is
    /// spread over its positions in proportion to how much the search's policy surprised the
    /// network, the rest evenly ([`super::policy_surprise`]); 0 (off) in the presets and in
    /// runs from before the setting.
    #[serde(default)]
    pub policy_surprise_share: f64,
    /// Positions of the replay window's earlier iterations searched again before each
    /// training stage with the network about to train, their policy targets and root values
    /// replaced by the new search's (MuZero Reanalyse, [`super::reanalyse`]); 0 (off) in the
    /// presets and in runs from before the setting.
    #[serde(default)]
    pub reanalyse_positions: u64,
    /// Weight of the final-board loss (mean squared error a cell) in the total, for a network
    /// with that head (`arch.board_head`); 1 in runs from before the setting.
    #[serde(default = "unit_weight")]
    pub board_loss_weight: f32,
    /// Weight of the opponent-policy loss (cross-entropy against the next position's policy
    /// target) in the total, for a network with that head (`arch.opponent_policy_head`);
    /// KataGo's 0.15, also in runs from before the setting.
    #[serde(default = "opponent_policy_weight")]
    pub opponent_policy_loss_weight: f32,
    /// Weight of the soft-policy loss (cross-entropy against the policy target to the power
    /// 1/4) in the total, for a network with that head (`arch.soft_policy_head`): 1, also in
    /// runs from before the setting. KataGo's 8 (for its far larger networks) cost the cpu
    /// preset's 4x48 network a fifth more value loss, and it won fewer games against the
    /// solver than the default in both seeds tried; 1 was level with the default over four
    /// (docs/ablations.md).
    #[serde(default = "soft_policy_weight")]
    pub soft_policy_loss_weight: f32,
    /// Times the value loss counts in the total training loss (the policy's counts once); 1
    /// in the presets and in runs from before the setting. 2, seeds 0 and 1, against the cpu
    /// preset: no better at 15 iterations; after 80 min a little ahead on Begin-Hard and the
    /// solver's games, mixed on the medium sets (docs/ablations.md).
    #[serde(default = "unit_weight")]
    pub value_loss_weight: f32,
    /// Evaluation games of latest against best per iteration; 0: no match, and latest
    /// becomes best every iteration (AlphaZero's way; AlphaGo Zero's gate promoted it only if
    /// it won).
    pub eval_games: u64,
    pub eval_sims: u32,
    /// Score (draws half) latest needs against best to be promoted.
    pub promote_threshold: f64,
    /// Plies played by temperature in evaluation games, so that games differ.
    pub eval_random_plies: u32,
    /// Uniformly random plies before each pair of evaluation games, the same for both games,
    /// colours swapped ([`crate::arena::openings`]); 0 (runs from before the setting): from
    /// the empty board.
    #[serde(default)]
    pub eval_opening_plies: u32,
    /// An optional fixed opponent played by `best` every iteration (e.g. `minimax:4`).
    pub benchmark: Option<String>,
    pub benchmark_games: u64,
    /// How much of the evaluation set `best` is graded on each iteration (absent from the
    /// `run.json` of older runs, which then grade as the cpu preset does).
    #[serde(default)]
    pub grade: GradeConfig,
    pub seed: u64,
}

/// Playout cap randomization (KataGo, Wu 2019): a random `full_fraction` of self-play moves
/// gets the full search, with root noise, and becomes a policy target; the others get a
/// search of `fast_sims` without noise, which moves the game on cheaply and still gives a
/// value target. More games for the same simulations: the value head, which learns from
/// game results, sees more of them.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PlayoutCap {
    pub full_fraction: f64,
    pub fast_sims: u32,
}

/// The full searches of plies 0 to `plies - 1` get `sims` simulations instead of the run's.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OpeningSims {
    pub plies: u32,
    pub sims: u32,
}

/// How a forked game's fork move is chosen among the legal moves other than the searched one.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum ForkMove {
    /// Each equally likely: the line's obvious blunders as often as its close alternatives.
    #[default]
    Uniform,
    /// In proportion to the search's policy (its policy target; proven losses have none), so
    /// that forks mostly try the moves the search nearly played; uniformly when none of them
    /// has any weight.
    Policy,
    /// Uniformly in this share of the forks (`{"mixed": 0.5}`), by the policy in the others:
    /// the close alternatives most of the time, and now and then a reply the network gives
    /// no weight (one the solver may play all the same).
    Mixed(f64),
}

/// From iteration `from_iteration` on, training's learning rate is `learning_rate`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LearningRateDrop {
    pub from_iteration: u32,
    pub learning_rate: f64,
}

impl RunConfig {
    /// The inference threads that serve `workers` self-play workers on a GPU: at least one,
    /// and no more than there are workers.
    pub fn inference_threads_for(&self, workers: usize) -> usize {
        self.inference_threads.clamp(1, workers.max(1))
    }

    /// The learning rate that training starts iteration `iteration` with (each iteration's
    /// cosine then falls to a tenth of it): the latest drop at or before it, if any.
    pub fn learning_rate_of(&self, iteration: u32) -> f64 {
        self.learning_rate_drops
            .iter()
            .filter(|d| d.from_iteration <= iteration)
            .max_by_key(|d| d.from_iteration)
            .map_or(self.learning_rate, |d| d.learning_rate)
    }
}

/// The share of games with random openings of runs from before the share was a setting.
fn every_game() -> f64 {
    1.0
}

fn one_thread() -> usize {
    1
}

fn unit_weight() -> f32 {
    1.0
}

fn opponent_policy_weight() -> f32 {
    0.15
}

fn soft_policy_weight() -> f32 {
    1.0
}

/// The chunk size of runs from before chunks were fixed ranges of games.
fn default_chunk_games() -> u64 {
    64
}

/// Grading `best` on the game's evaluation set each iteration: positions graded with the
/// network alone and with search (`eval_sims`), each an evenly spaced subset of the set when
/// smaller than it; 0 turns that grading off.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GradeConfig {
    pub net_positions: usize,
    pub search_positions: usize,
}

impl Default for GradeConfig {
    fn default() -> Self {
        GradeConfig {
            // Connect Four at the cpu preset (64 simulations, 2 cores): the network alone on
            // all 800 positions takes 0.5 s, search on 400 of them 5 s, 5% of an iteration.
            net_positions: 1000,
            search_positions: 400,
        }
    }
}

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
        let mut c = RunConfig {
            preset: name.to_string(),
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
        };
        match (name, game) {
            (_, GameKind::Blackjack) => {
                bail!("blackjack is not a board game: use `zero mces`")
            }
            ("tiny", _) => {
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
            }
            ("cpu", g @ (GameKind::TicTacToe | GameKind::Othello4)) => {
                c.arch = Arch::resnet(2, 32);
                c.games = 200;
                c.sims = 48;
                c.workers = 2;
                c.parallel_games = 50;
                c.chunk_games = 100;
                // Othello's openings need a little more variety than tic-tac-toe's.
                c.temperature_plies = if g == GameKind::Othello4 { 4 } else { 3 };
                // Othello's best plays perfectly after 200 steps an iteration too (seeds 0 and
                // 1: White wins 150 of 150 against the solver), and its run takes 37 s instead
                // of 52 (training is three quarters of it).
                c.train_steps = if g == GameKind::Othello4 { 200 } else { 300 };
                c.batch_size = 128;
                c.eval_games = 40;
                c.eval_sims = 48;
                c.eval_random_plies = 2;
            }
            ("cpu", GameKind::Connect4) => {
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
                    // Self-play's games start after 4 random plies, and evaluation plays pairs
                    // of games from 4 random plies. Without them self-play repeats itself (a
                    // late window's 175,000 positions held 28,000-35,000 distinct ones), two
                    // strong networks play one game 20 times a side, and the curve flattens
                    // at 10-11% from iteration 22; with them the network alone erred on 8.0%
                    // at iteration 15 (docs/ablations.md).
                    c.random_opening_plies = 4;
                    c.eval_opening_plies = 4;
                    // Half the games fork from their own main line at one of its first 20
                    // plies instead: random openings alone seldom reach the line the network
                    // plays, where its games against the solver are lost (`444444`); with
                    // forks `best` won a median 16 of 20 first-player games against it at
                    // iteration 25, against 6 without (docs/ablations.md).
                    c.fork_share = 0.5;
                    c.fork_plies = 20;
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
            }
            ("gpu", GameKind::Connect4) if search != Some(SearchKind::Puct) => {
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
                let mut gpu = Self::preset_for_search("cpu", game, false, None)?;
                gpu.preset = name.to_string();
                gpu.mcts.gumbel_considered = 4;
                gpu.learning_rate = 2e-3;
                gpu.eval_games = 40;
                (gpu.games, gpu.train_steps, gpu.batch_size) = (4800, 480, 1024);
                gpu.arch = Arch::resnet(5, 128).with_wdl_head();
                gpu.precision = Precision::F32;
                // One worker a chunk: more would wait for chunks that do not exist.
                gpu.workers = (gpu.games / gpu.chunk_games) as usize;
                gpu.inference_threads = 4;
                return Ok(gpu);
            }
            ("long", g) => {
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
                let mut long = Self::preset_for_search("cpu", g, cuda, search)?;
                long.preset = name.to_string();
                if g == GameKind::Connect4 && long.mcts.search == SearchKind::Gumbel {
                    if !cuda {
                        (long.games, long.train_steps) =
                            long_connect4_budget(CpuMatrixUnits::detect());
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
                return Ok(long);
            }
            ("gpu", g) => {
                // PUCT's budget on a GPU: the small games' preset, and Connect Four's with
                // `--search puct` (its default until the seventh lease in docs/gpu.md).
                c.arch = Arch::resnet(6, 128);
                c.games = if g == GameKind::Connect4 { 2000 } else { 500 };
                c.sims = 200;
                c.parallel_games = 256;
                c.workers = 4;
                // Two inference threads, two workers each: one thread left the GPU half
                // idle (docs/gpu.md).
                c.inference_threads = 2;
                c.chunk_games = 250;
                if g == GameKind::Connect4 {
                    // The cpu preset's openings: half the games from 4 random plies, half
                    // forked from their main line in its first 20 plies, and evaluation pairs
                    // from 4 random plies. The first gpu run (without them) repeated itself:
                    // latest stopped beating best from iteration 11, with a value loss of
                    // 0.021 (docs/gpu.md).
                    c.random_opening_plies = 4;
                    c.fork_share = 0.5;
                    c.fork_plies = 20;
                    c.eval_opening_plies = 4;
                }
                c.train_steps = 2000;
                c.batch_size = 512;
                c.eval_games = 100;
                c.eval_sims = 200;
            }
            ("material", _) => {
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
            }
            (other, _) => bail!("unknown preset '{other}'; presets are: {PRESETS}"),
        }
        if let Some(search) = search {
            c.mcts.search = search;
        }
        Ok(c)
    }
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

/// A setting outside its range: `name` (dotted as in `run.json`), its value, and the range.
fn out_of_range(name: &str, value: impl std::fmt::Display, range: &str) -> String {
    format!("{name} is {value} (must be {range})")
}

/// A setting's value as `run.json` wrote it. The checks widen 32-bit settings to f64, and
/// -0.2f32 widened prints as -0.20000000298023224: a value that an f32 holds exactly is
/// shown as the f32's shortest form, any other as the f64's.
fn as_written(v: f64) -> String {
    let narrow = v as f32;
    if f64::from(narrow) == v {
        narrow.to_string()
    } else {
        v.to_string()
    }
}

impl RunConfig {
    /// The settings that cannot run: each named with its value and the range it must lie in.
    /// A `run.json` edited by hand (or written by a newer version) is checked before anything
    /// runs, so that a typo fails at once with its name rather than as a panic, a hang or a
    /// run that silently learns nothing hours later.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.count_problems(&mut out);
        self.number_problems(&mut out);
        out
    }

    /// Counts (games, simulations, sizes...) that must be at least 1.
    fn count_problems(&self, out: &mut Vec<String>) {
        let mut at_least_one = |name: &str, v: u64| {
            if v == 0 {
                out.push(out_of_range(name, v, "at least 1"));
            }
        };
        at_least_one("games", self.games);
        at_least_one("sims", self.sims as u64);
        at_least_one("parallel_games", self.parallel_games as u64);
        at_least_one("workers", self.workers as u64);
        at_least_one("inference_threads", self.inference_threads as u64);
        at_least_one("chunk_games", self.chunk_games);
        at_least_one("train_steps", self.train_steps);
        at_least_one("batch_size", self.batch_size as u64);
        at_least_one("window", self.window as u64);
        for (i, drop) in self.learning_rate_drops.iter().enumerate() {
            let name = format!("learning_rate_drops[{i}].from_iteration");
            at_least_one(&name, drop.from_iteration as u64);
        }
        at_least_one("eval_sims", self.eval_sims as u64);
        at_least_one("mcts.gumbel_considered", self.mcts.gumbel_considered as u64);
        match self.arch {
            Arch::Resnet {
                blocks,
                filters,
                value_channels,
                ..
            } => {
                at_least_one("arch.blocks", blocks as u64);
                at_least_one("arch.filters", filters as u64);
                at_least_one("arch.value_channels", value_channels as u64);
            }
            Arch::AzgConv { channels } => at_least_one("arch.channels", channels as u64),
        }
        if let Some(cap) = self.playout_cap {
            at_least_one("playout_cap.fast_sims", cap.fast_sims as u64);
        }
        if let Some(opening) = self.opening_sims {
            at_least_one("opening_sims.sims", opening.sims as u64);
        }
        if self.fork_share > 0.0 {
            at_least_one("fork_plies (with a fork_share)", self.fork_plies as u64);
        }
    }

    /// Rates, weights and shares that must be finite and in their ranges.
    fn number_problems(&self, out: &mut Vec<String>) {
        let mut within = |name: &str, v: f64, ok: bool, range: &str| {
            if !ok || !v.is_finite() {
                out.push(out_of_range(name, as_written(v), range));
            }
        };
        let unit = |v: f64| (0.0..=1.0).contains(&v);
        let lr = self.learning_rate;
        within("learning_rate", lr, lr > 0.0, "above 0");
        for (i, drop) in self.learning_rate_drops.iter().enumerate() {
            let lr = drop.learning_rate;
            let name = format!("learning_rate_drops[{i}].learning_rate");
            within(&name, lr, lr > 0.0, "above 0");
        }
        let wd = self.weight_decay;
        within("weight_decay", wd, wd >= 0.0, "0 or more");
        let mix = self.value_target_mix as f64;
        within("value_target_mix", mix, unit(mix), "from 0 to 1");
        if let Some(ValueBootstrap::Lambda(lambda)) = self.value_bootstrap {
            let l = lambda as f64;
            within("value_bootstrap.lambda", l, unit(l), "from 0 to 1");
        }
        if let Some(discount) = self.value_discount {
            let d = discount as f64;
            within(
                "value_discount",
                d,
                d > 0.0 && d <= 1.0,
                "above 0 and at most 1",
            );
        }
        let board = self.board_loss_weight as f64;
        within("board_loss_weight", board, board >= 0.0, "0 or more");
        let opponent = self.opponent_policy_loss_weight as f64;
        within(
            "opponent_policy_loss_weight",
            opponent,
            opponent >= 0.0,
            "0 or more",
        );
        let soft = self.soft_policy_loss_weight as f64;
        within("soft_policy_loss_weight", soft, soft >= 0.0, "0 or more");
        let value = self.value_loss_weight as f64;
        within("value_loss_weight", value, value > 0.0, "above 0");
        let gate = self.promote_threshold;
        within("promote_threshold", gate, unit(gate), "from 0 to 1");
        let share = self.random_opening_share;
        within("random_opening_share", share, unit(share), "from 0 to 1");
        let fork = self.fork_share;
        within("fork_share", fork, unit(fork), "from 0 to 1");
        if let ForkMove::Mixed(uniform) = self.fork_move {
            within(
                "fork_move's mixed share",
                uniform,
                unit(uniform),
                "from 0 to 1",
            );
        }
        let surprise = self.policy_surprise_share;
        within(
            "policy_surprise_share",
            surprise,
            unit(surprise),
            "from 0 to 1",
        );
        let m = &self.mcts;
        let c = m.c_puct as f64;
        within("mcts.c_puct", c, c > 0.0, "above 0");
        let fpu = m.fpu_reduction as f64;
        within("mcts.fpu_reduction", fpu, true, "a number");
        let noise = m.noise_fraction as f64;
        within("mcts.noise_fraction", noise, unit(noise), "from 0 to 1");
        let alpha = m.dirichlet_alpha as f64;
        within("mcts.dirichlet_alpha", alpha, alpha >= 0.0, "0 or more");
        let scale = m.gumbel_scale as f64;
        within("mcts.gumbel_scale", scale, scale >= 0.0, "0 or more");
        let sigma = m.gumbel_value_scale as f64;
        let sane = gumbel::valid_value_scale(sigma);
        within(
            "mcts.gumbel_value_scale",
            sigma,
            sane,
            "above 0, at most 100",
        );
        if let Some(cap) = self.playout_cap {
            let f = cap.full_fraction;
            within(
                "playout_cap.full_fraction",
                f,
                f > 0.0 && f <= 1.0,
                "above 0, at most 1",
            );
        }
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
    fn settings_out_of_range_are_named_with_their_values() {
        let mut c = RunConfig::preset("cpu", GameKind::Connect4, false).unwrap();
        c.sims = 0;
        c.window = 0;
        c.learning_rate = -0.1;
        c.promote_threshold = f64::NAN;
        c.mcts.noise_fraction = 1.5;
        c.mcts.gumbel_value_scale = 0.0;
        c.playout_cap = Some(PlayoutCap {
            full_fraction: 0.0,
            fast_sims: 0,
        });
        c.fork_share = 2.0;
        c.fork_plies = 0;
        c.fork_move = ForkMove::Mixed(1.5);
        // A 32-bit setting is shown as written, not widened (-0.20000000298023224).
        c.value_discount = Some(-0.2);
        assert_eq!(
            c.problems(),
            [
                "sims is 0 (must be at least 1)",
                "window is 0 (must be at least 1)",
                "playout_cap.fast_sims is 0 (must be at least 1)",
                "fork_plies (with a fork_share) is 0 (must be at least 1)",
                "learning_rate is -0.1 (must be above 0)",
                "value_discount is -0.2 (must be above 0 and at most 1)",
                "promote_threshold is NaN (must be from 0 to 1)",
                "fork_share is 2 (must be from 0 to 1)",
                "fork_move's mixed share is 1.5 (must be from 0 to 1)",
                "mcts.noise_fraction is 1.5 (must be from 0 to 1)",
                "mcts.gumbel_value_scale is 0 (must be above 0, at most 100)",
                "playout_cap.full_fraction is 0 (must be above 0, at most 1)",
            ]
        );
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

    #[test]
    fn a_key_the_settings_do_not_have_is_refused_at_every_level() {
        // A typo must not become a setting that zero ignores while the run goes on without it.
        let mut cfg = RunConfig::preset("long", GameKind::Connect4, false).unwrap();
        cfg.learning_rate_drops = vec![LearningRateDrop {
            from_iteration: 40,
            learning_rate: 1e-3,
        }];
        let good = serde_json::to_value(&cfg).unwrap();
        assert_eq!(
            serde_json::from_value::<RunConfig>(good.clone()).unwrap(),
            cfg
        );
        let typos: [(&[&str], &str); 5] = [
            (&[], "learning_rat"),
            (&["mcts"], "c_pucT"),
            (&["arch"], "soft_head"),
            (&["grade"], "net_position"),
            (&["learning_rate_drops", "0"], "learning_rates"),
        ];
        for (path, typo) in typos {
            let mut json = good.clone();
            let mut node = &mut json;
            for key in path {
                node = match key.parse::<usize>() {
                    Ok(i) => &mut node[i],
                    Err(_) => &mut node[*key],
                };
            }
            node[typo] = serde_json::json!(1);
            let e = serde_json::from_value::<RunConfig>(json).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with(&format!("unknown field `{typo}`")),
                "{e}"
            );
        }
    }

    #[test]
    fn runs_from_before_the_precision_setting_compute_in_32_bits() {
        let cfg = RunConfig::preset("cpu", GameKind::Connect4, false).unwrap();
        let mut json = serde_json::to_value(&cfg).unwrap();
        json.as_object_mut().unwrap().remove("precision");
        let old: RunConfig = serde_json::from_value(json).unwrap();
        assert_eq!(old.precision, Precision::F32);
        let mut bf16 = serde_json::to_value(&cfg).unwrap();
        bf16["precision"] = serde_json::json!("bf16");
        let read: RunConfig = serde_json::from_value(bf16).unwrap();
        assert_eq!(read.precision, Precision::Bf16);
    }

    #[test]
    fn learning_rate_drops_apply_from_their_iteration_on() {
        let mut cfg = RunConfig::preset("cpu", GameKind::Connect4, false).unwrap();
        cfg.learning_rate = 2e-3;
        assert_eq!(cfg.learning_rate_of(60), 2e-3);
        // Without drops the settings read as before: the field is not written.
        let json = serde_json::to_string(&cfg).unwrap();
        assert!(!json.contains("learning_rate_drops"), "{json}");
        // Given in any order, the latest drop reached applies.
        let drop = |from_iteration, learning_rate| LearningRateDrop {
            from_iteration,
            learning_rate,
        };
        cfg.learning_rate_drops = vec![drop(50, 2e-4), drop(30, 5e-4)];
        let rates: Vec<f64> = [1, 29, 30, 49, 50, 90]
            .map(|i| cfg.learning_rate_of(i))
            .to_vec();
        assert_eq!(rates, [2e-3, 2e-3, 5e-4, 5e-4, 2e-4, 2e-4]);
        let back: RunConfig = serde_json::from_str(&serde_json::to_string(&cfg).unwrap()).unwrap();
        assert_eq!(back, cfg);
        cfg.learning_rate_drops = vec![drop(0, 5e-4), drop(40, 0.0)];
        assert_eq!(
            cfg.problems(),
            [
                "learning_rate_drops[0].from_iteration is 0 (must be at least 1)",
                "learning_rate_drops[1].learning_rate is 0 (must be above 0)",
            ]
        );
    }
}
