//! A run's settings ([`RunConfig`], saved as its `run.json`) and their checks. The presets
//! that fill them in are in [`super::presets`].

use serde::{Deserialize, Serialize};

use crate::nn::{Arch, Precision};
use crate::search::gumbel;
use crate::search::mcts::MctsConfig;

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

pub(super) fn opponent_policy_weight() -> f32 {
    0.15
}

pub(super) fn soft_policy_weight() -> f32 {
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
    use crate::games::GameKind;

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
