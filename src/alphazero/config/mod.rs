//! A run's settings ([`RunConfig`], saved as its `run.json`), in sections by who reads them:
//! the network, self-play, the tree search, training, evaluation, and research settings no
//! preset turns on. The presets that fill them in are in [`presets`], their checks in
//! [`checks`], and the reading of a `run.json` written before the sections in [`legacy`].
//! Every setting with its default in each preset: docs/configuration.md; why each preset
//! chose its values: docs/decisions.md.

pub mod checks;
pub mod legacy;
pub mod presets;

use serde::{Deserialize, Serialize};

use crate::nn::{Arch, Precision};
use crate::search::mcts::MctsConfig;

/// Everything a cycle needs; saved as `models/<game>/run.json` so that a resumed run keeps
/// the settings it started with.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// The preset the run started from (a name only: the settings below are the run's).
    pub preset: String,
    /// The seed of every random choice of the run.
    pub seed: u64,
    pub net: NetConfig,
    pub selfplay: SelfPlayConfig,
    /// The tree search of self-play and evaluation.
    pub mcts: MctsConfig,
    pub train: TrainConfig,
    pub eval: EvalConfig,
    /// Settings no preset turns on, kept because they may pay at a larger scale
    /// ([`Research`]); absent from `run.json` while they are off.
    #[serde(default, skip_serializing_if = "Research::is_off")]
    pub research: Research,
}

/// The network: its shape and the number format it computes in.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NetConfig {
    pub arch: Arch,
    /// What the network computes in, in self-play, training and evaluation
    /// ([`Precision`]: the weights are 32-bit floats either way).
    pub precision: Precision,
}

/// Self-play: how many games an iteration, how they are spread over threads, and how they
/// open.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SelfPlayConfig {
    /// Games per iteration.
    pub games: u64,
    /// Simulations per move.
    pub sims: u32,
    /// Games played in lockstep so the network always sees full batches.
    pub parallel_games: usize,
    /// Worker threads (each with `parallel_games` games).
    pub workers: usize,
    /// On a GPU, the inference threads that serve the workers, each with its own copy of the
    /// network and its share of the workers; on a CPU every worker evaluates its own copy.
    pub inference_threads: usize,
    /// Games played together by one worker and written as one file: the unit of self-play
    /// work, whose games are the same wherever and whenever it is played.
    pub chunk_games: u64,
    /// Plies played with temperature 1 (sampled by visits); greedy after.
    pub temperature_plies: u32,
    /// The first plies played uniformly at random (after the search, whose policy is still
    /// their target), so that games start from many more positions.
    pub random_opening_plies: u32,
    /// The share of games forked from their own main line (KataGo's side positions), chosen
    /// from each game's seed: such a game opens with no random plies, plays its searched moves
    /// up to a ply drawn from its seed below `fork_plies`, there plays another move
    /// ([`ForkMove`]), and trains only on the positions after it.
    pub fork_share: f64,
    /// Forks happen at plies 0 to `fork_plies - 1`.
    pub fork_plies: u32,
    /// How a forked game chooses its fork's move among the moves other than the searched one.
    pub fork_move: ForkMove,
}

/// Training: the steps of an iteration, the optimizer, and what the positions learn.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TrainConfig {
    /// Steps (mini-batches) per iteration.
    pub steps: u64,
    /// Positions a step.
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
}

/// Evaluation: the match of latest against best (or none), a fixed benchmark opponent, and
/// grading `best` on the game's evaluation set.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EvalConfig {
    /// Games of latest against best per iteration; 0: no match, and latest becomes best every
    /// iteration (AlphaZero's way; AlphaGo Zero's gate promoted it only if it won).
    pub games: u64,
    /// Simulations per move in those games and in grading with search.
    pub sims: u32,
    /// Score (draws half) latest needs against best to be promoted.
    pub promote_threshold: f64,
    /// Plies played by temperature in the match's games, so that games differ.
    pub random_plies: u32,
    /// Uniformly random plies before each pair of the match's games, the same for both games,
    /// colours swapped ([`crate::arena::openings`]).
    pub opening_plies: u32,
    /// An optional fixed opponent played by `best` every iteration (e.g. `minimax:4`).
    pub benchmark: Option<String>,
    /// Games against the benchmark player per iteration.
    pub benchmark_games: u64,
    /// How much of the evaluation set `best` is graded on each iteration.
    pub grade: GradeConfig,
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
    /// replaced by the new search's (MuZero Reanalyse, [`super::research::reanalyse`]); 0: off.
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

/// Grading `best` on the game's evaluation set each iteration: positions graded with the
/// network alone and with search (`eval.sims`), each an evenly spaced subset of the set when
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
            // Every position with the network alone, which is cheap; search, about 20 times
            // dearer a position, on half of Connect Four's 800 (docs/configuration.md).
            net_positions: 1000,
            search_positions: 400,
        }
    }
}

impl RunConfig {
    /// The inference threads that serve `workers` self-play workers on a GPU: at least one,
    /// and no more than there are workers.
    pub fn inference_threads_for(&self, workers: usize) -> usize {
        self.selfplay.inference_threads.clamp(1, workers.max(1))
    }

    /// The learning rate that training starts iteration `iteration` with (each iteration's
    /// cosine then falls to a tenth of it): the latest drop at or before it, if any.
    pub fn learning_rate_of(&self, iteration: u32) -> f64 {
        self.train
            .learning_rate_drops
            .iter()
            .filter(|d| d.from_iteration <= iteration)
            .max_by_key(|d| d.from_iteration)
            .map_or(self.train.learning_rate, |d| d.learning_rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::GameKind;

    #[test]
    fn a_key_the_settings_do_not_have_is_refused_at_every_level() {
        // A typo must not become a setting that zero ignores while the run goes on without it.
        let mut cfg = RunConfig::preset("long", GameKind::Connect4, false).unwrap();
        cfg.train.learning_rate_drops = vec![LearningRateDrop {
            from_iteration: 40,
            learning_rate: 1e-3,
        }];
        cfg.research.reanalyse_positions = 10;
        let good = serde_json::to_value(&cfg).unwrap();
        assert_eq!(
            serde_json::from_value::<RunConfig>(good.clone()).unwrap(),
            cfg
        );
        let typos: [(&[&str], &str); 9] = [
            (&[], "learning_rate"),
            (&["net"], "filters"),
            (&["net", "arch"], "soft_head"),
            (&["selfplay"], "game"),
            (&["mcts"], "c_pucT"),
            (&["train"], "learning_rat"),
            (&["eval", "grade"], "net_position"),
            (&["train", "learning_rate_drops", "0"], "learning_rates"),
            (&["research"], "reanalyse"),
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
    fn learning_rate_drops_apply_from_their_iteration_on() {
        let mut cfg = RunConfig::preset("cpu", GameKind::Connect4, false).unwrap();
        cfg.train.learning_rate = 2e-3;
        assert_eq!(cfg.learning_rate_of(60), 2e-3);
        // Without drops the field is not written.
        let json = serde_json::to_string(&cfg).unwrap();
        assert!(!json.contains("learning_rate_drops"), "{json}");
        // Given in any order, the latest drop reached applies.
        let drop = |from_iteration, learning_rate| LearningRateDrop {
            from_iteration,
            learning_rate,
        };
        cfg.train.learning_rate_drops = vec![drop(50, 2e-4), drop(30, 5e-4)];
        let rates: Vec<f64> = [1, 29, 30, 49, 50, 90]
            .map(|i| cfg.learning_rate_of(i))
            .to_vec();
        assert_eq!(rates, [2e-3, 2e-3, 5e-4, 5e-4, 2e-4, 2e-4]);
        let back: RunConfig = serde_json::from_str(&serde_json::to_string(&cfg).unwrap()).unwrap();
        assert_eq!(back, cfg);
    }
}
