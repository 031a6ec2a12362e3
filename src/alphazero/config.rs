//! A run's settings ([`RunConfig`], saved as its `run.json`) and their checks. The presets
//! that fill them in are in [`super::presets`].

use serde::{Deserialize, Serialize};

use crate::nn::{Arch, Precision};
use crate::search::gumbel;
use crate::search::mcts::MctsConfig;

/// Everything a cycle needs; saved as `models/<game>/run.json` so that a resumed run keeps
/// the settings it started with. Why each preset chose its values: docs/decisions.md; every
/// setting with its default in each preset: docs/configuration.md.
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
    /// of the network and its share of the workers; on a CPU every worker evaluates its own
    /// copy and this is not used. 1 in runs from before the setting.
    #[serde(default = "one_thread")]
    pub inference_threads: usize,
    /// Games played together by one worker and written as one file: the unit of self-play
    /// work, whose games are the same wherever and whenever it is played.
    #[serde(default = "default_chunk_games")]
    pub chunk_games: u64,
    /// Plies played with temperature 1 (sampled by visits); greedy after.
    pub temperature_plies: u32,
    /// Self-play's first plies played uniformly at random (after the search, whose policy is
    /// still their target), so that games start from many more positions.
    #[serde(default)]
    pub random_opening_plies: u32,
    /// The share of self-play games forked from their own main line (KataGo's side
    /// positions), chosen from each game's seed: such a game opens with no random plies,
    /// plays its searched moves up to a ply drawn from its seed below `fork_plies`, there
    /// plays another move ([`ForkMove`]), and trains only on the positions after it.
    #[serde(default)]
    pub fork_share: f64,
    /// Forks happen at plies 0 to `fork_plies - 1`.
    #[serde(default)]
    pub fork_plies: u32,
    /// How a forked game chooses its fork's move among the moves other than the searched one.
    #[serde(default)]
    pub fork_move: ForkMove,
    pub mcts: MctsConfig,
    /// What the network computes in, in self-play, training and evaluation
    /// ([`Precision`]: the weights are 32-bit floats either way).
    #[serde(default)]
    pub precision: Precision,
    /// Training steps (mini-batches) per iteration.
    pub train_steps: u64,
    /// Positions a training step.
    pub batch_size: usize,
    /// The learning rate a training stage starts at (a cosine takes it to a tenth).
    pub learning_rate: f64,
    /// Lower learning rates for later iterations: from `from_iteration` on, training starts
    /// each iteration at `learning_rate` instead of the one above (the last drop reached
    /// applies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learning_rate_drops: Vec<LearningRateDrop>,
    /// L2 weight decay, added to the gradient.
    pub weight_decay: f64,
    /// Iterations of self-play kept in the replay window.
    pub window: u32,
    /// Weight of the search's root value in the value target (the rest is the game result).
    pub value_target_mix: f32,
    /// Evaluation games of latest against best per iteration; 0: no match, and latest
    /// becomes best every iteration (AlphaZero's way; AlphaGo Zero's gate promoted it only if
    /// it won).
    pub eval_games: u64,
    /// Simulations per move in evaluation games and in grading with search.
    pub eval_sims: u32,
    /// Score (draws half) latest needs against best to be promoted.
    pub promote_threshold: f64,
    /// Plies played by temperature in evaluation games, so that games differ.
    pub eval_random_plies: u32,
    /// Uniformly random plies before each pair of evaluation games, the same for both games,
    /// colours swapped ([`crate::arena::openings`]).
    #[serde(default)]
    pub eval_opening_plies: u32,
    /// An optional fixed opponent played by `best` every iteration (e.g. `minimax:4`).
    pub benchmark: Option<String>,
    /// Games against the benchmark player per iteration.
    pub benchmark_games: u64,
    /// How much of the evaluation set `best` is graded on each iteration.
    #[serde(default)]
    pub grade: GradeConfig,
    /// The seed of every random choice of the run.
    pub seed: u64,
    /// Settings no preset turns on, kept because they may pay at a larger scale
    /// ([`Research`]); absent from `run.json` while they are off.
    #[serde(default, skip_serializing_if = "Research::is_off")]
    pub research: Research,
}

/// Research settings: off in every preset, and absent from `run.json` unless a run turns them
/// on (`--playout-cap`, `--reanalyse`, hidden from the everyday `--help`). Both were level at
/// this project's scale and are what larger runs use (docs/research/not-adopted.md): KataGo
/// trains with playout caps, MuZero with reanalysis.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Research {
    /// Playout cap randomization: most self-play moves get a cheap search (absent: every
    /// move gets the full `sims`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playout_cap: Option<PlayoutCap>,
    /// Positions of the replay window's earlier iterations searched again before each
    /// training stage with the network about to train, their policy targets and root values
    /// replaced by the new search's (MuZero Reanalyse, [`super::reanalyse`]); 0: off.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reanalyse_positions: u64,
}

impl Research {
    /// Whether every research setting is off.
    pub fn is_off(&self) -> bool {
        *self == Research::default()
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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

fn one_thread() -> usize {
    1
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
        self.mcts_problems(&mut out);
        self.research.problems(&mut out);
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
                blocks, filters, ..
            } => {
                at_least_one("arch.blocks", blocks as u64);
                at_least_one("arch.filters", filters as u64);
            }
            Arch::AzgConv { channels } => at_least_one("arch.channels", channels as u64),
        }
        if self.fork_share > 0.0 {
            at_least_one("fork_plies (with a fork_share)", self.fork_plies as u64);
        }
    }

    /// Rates and shares of self-play and training that must be finite and in their ranges.
    fn number_problems(&self, out: &mut Vec<String>) {
        let unit = |v: f64| (0.0..=1.0).contains(&v);
        let lr = self.learning_rate;
        within(out, "learning_rate", lr, lr > 0.0, "above 0");
        for (i, drop) in self.learning_rate_drops.iter().enumerate() {
            let lr = drop.learning_rate;
            let name = format!("learning_rate_drops[{i}].learning_rate");
            within(out, &name, lr, lr > 0.0, "above 0");
        }
        let wd = self.weight_decay;
        within(out, "weight_decay", wd, wd >= 0.0, "0 or more");
        let mix = self.value_target_mix as f64;
        within(out, "value_target_mix", mix, unit(mix), "from 0 to 1");
        let gate = self.promote_threshold;
        within(out, "promote_threshold", gate, unit(gate), "from 0 to 1");
        let fork = self.fork_share;
        within(out, "fork_share", fork, unit(fork), "from 0 to 1");
        if let ForkMove::Mixed(uniform) = self.fork_move {
            let name = "fork_move's mixed share";
            within(out, name, uniform, unit(uniform), "from 0 to 1");
        }
    }

    /// The tree search's numbers that must be finite and in their ranges.
    fn mcts_problems(&self, out: &mut Vec<String>) {
        let unit = |v: f64| (0.0..=1.0).contains(&v);
        let m = &self.mcts;
        let c = m.c_puct as f64;
        within(out, "mcts.c_puct", c, c > 0.0, "above 0");
        let fpu = m.fpu_reduction as f64;
        within(out, "mcts.fpu_reduction", fpu, true, "a number");
        let noise = m.noise_fraction as f64;
        within(
            out,
            "mcts.noise_fraction",
            noise,
            unit(noise),
            "from 0 to 1",
        );
        let alpha = m.dirichlet_alpha as f64;
        within(
            out,
            "mcts.dirichlet_alpha",
            alpha,
            alpha >= 0.0,
            "0 or more",
        );
        let scale = m.gumbel_scale as f64;
        within(out, "mcts.gumbel_scale", scale, scale >= 0.0, "0 or more");
        let sigma = m.gumbel_value_scale as f64;
        let sane = gumbel::valid_value_scale(sigma);
        let range = "above 0, at most 100";
        within(out, "mcts.gumbel_value_scale", sigma, sane, range);
    }
}

impl Research {
    /// The research settings that cannot run, named as in `run.json`.
    fn problems(&self, out: &mut Vec<String>) {
        if let Some(cap) = self.playout_cap {
            if cap.fast_sims == 0 {
                let name = "research.playout_cap.fast_sims";
                out.push(out_of_range(name, 0, "at least 1"));
            }
            let f = cap.full_fraction;
            let name = "research.playout_cap.full_fraction";
            within(out, name, f, f > 0.0 && f <= 1.0, "above 0, at most 1");
        }
    }
}

/// Adds the problem of the number `v` named `name` when it is not `ok` or not finite.
fn within(out: &mut Vec<String>, name: &str, v: f64, ok: bool, range: &str) {
    if !ok || !v.is_finite() {
        out.push(out_of_range(name, as_written(v), range));
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
        c.research.playout_cap = Some(PlayoutCap {
            full_fraction: 0.0,
            fast_sims: 0,
        });
        c.fork_share = 2.0;
        c.fork_plies = 0;
        c.fork_move = ForkMove::Mixed(1.5);
        // A 32-bit setting is shown as written, not widened (-0.20000000298023224).
        c.value_target_mix = -0.2;
        assert_eq!(
            c.problems(),
            [
                "sims is 0 (must be at least 1)",
                "window is 0 (must be at least 1)",
                "fork_plies (with a fork_share) is 0 (must be at least 1)",
                "learning_rate is -0.1 (must be above 0)",
                "value_target_mix is -0.2 (must be from 0 to 1)",
                "promote_threshold is NaN (must be from 0 to 1)",
                "fork_share is 2 (must be from 0 to 1)",
                "fork_move's mixed share is 1.5 (must be from 0 to 1)",
                "mcts.noise_fraction is 1.5 (must be from 0 to 1)",
                "mcts.gumbel_value_scale is 0 (must be above 0, at most 100)",
                "research.playout_cap.fast_sims is 0 (must be at least 1)",
                "research.playout_cap.full_fraction is 0 (must be above 0, at most 1)",
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
