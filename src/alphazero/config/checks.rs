//! The settings' checks, one a section: a `run.json` edited by hand (or written by a newer
//! version) is checked before anything runs, so that a typo fails at once with its name rather
//! than as a panic, a hang or a run that silently learns nothing hours later.

use super::{EvalConfig, ForkMove, NetConfig, Research, RunConfig, SelfPlayConfig, TrainConfig};
use crate::core::limits::{
    with_commas, MAX_BATCH, MAX_GAMES, MAX_POSITIONS, MAX_SIMS, MAX_THREADS, MAX_WINDOW,
};
use crate::nn::Arch;
use crate::search::gumbel;
use crate::search::mcts::MctsConfig;

impl RunConfig {
    /// The settings that cannot run, each named as in `run.json` (dotted) with its value and
    /// the range it must lie in.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.net.check(&mut out);
        self.selfplay.check(&mut out);
        check_mcts(&self.mcts, &mut out);
        self.train.check(&mut out);
        self.eval.check(&mut out);
        self.research.check(&mut out);
        out
    }
}

impl NetConfig {
    fn check(&self, out: &mut Vec<String>) {
        match self.arch {
            Arch::Resnet {
                blocks, filters, ..
            } => {
                at_least_one(out, "net.arch.blocks", blocks as u64);
                at_least_one(out, "net.arch.filters", filters as u64);
            }
        }
    }
}

impl SelfPlayConfig {
    fn check(&self, out: &mut Vec<String>) {
        counted(out, "selfplay.games", self.games, MAX_GAMES);
        counted(out, "selfplay.sims", self.sims as u64, MAX_SIMS);
        let parallel = self.parallel_games as u64;
        counted(out, "selfplay.parallel_games", parallel, MAX_THREADS);
        counted(out, "selfplay.workers", self.workers as u64, MAX_THREADS);
        let threads = self.inference_threads as u64;
        counted(out, "selfplay.inference_threads", threads, MAX_THREADS);
        counted(out, "selfplay.chunk_games", self.chunk_games, MAX_GAMES);
        let fork = self.fork_share;
        within(out, "selfplay.fork_share", fork, unit(fork), "from 0 to 1");
        if fork > 0.0 {
            let name = "selfplay.fork_plies (with a fork_share)";
            at_least_one(out, name, self.fork_plies as u64);
        }
        if let ForkMove::Mixed(uniform) = self.fork_move {
            let name = "selfplay.fork_move's mixed share";
            within(out, name, uniform, unit(uniform), "from 0 to 1");
        }
    }
}

/// The tree search's numbers that must be finite and in their ranges.
fn check_mcts(m: &MctsConfig, out: &mut Vec<String>) {
    let considered = m.gumbel_considered as u64;
    counted(out, "mcts.gumbel_considered", considered, MAX_SIMS);
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

impl TrainConfig {
    fn check(&self, out: &mut Vec<String>) {
        at_least_one(out, "train.steps", self.steps);
        counted(out, "train.batch_size", self.batch_size as u64, MAX_BATCH);
        counted(out, "train.window", self.window as u64, MAX_WINDOW);
        let lr = self.learning_rate;
        within(out, "train.learning_rate", lr, lr > 0.0, "above 0");
        for (i, drop) in self.learning_rate_drops.iter().enumerate() {
            let name = format!("train.learning_rate_drops[{i}].from_iteration");
            at_least_one(out, &name, drop.from_iteration as u64);
            let lr = drop.learning_rate;
            let name = format!("train.learning_rate_drops[{i}].learning_rate");
            within(out, &name, lr, lr > 0.0, "above 0");
        }
        let wd = self.weight_decay;
        within(out, "train.weight_decay", wd, wd >= 0.0, "0 or more");
        let mix = self.value_target_mix as f64;
        within(out, "train.value_target_mix", mix, unit(mix), "from 0 to 1");
    }
}

impl EvalConfig {
    fn check(&self, out: &mut Vec<String>) {
        counted(out, "eval.sims", self.sims as u64, MAX_SIMS);
        below(out, "eval.games", self.games, MAX_GAMES);
        below(out, "eval.benchmark_games", self.benchmark_games, MAX_GAMES);
        let gate = self.promote_threshold;
        within(
            out,
            "eval.promote_threshold",
            gate,
            unit(gate),
            "from 0 to 1",
        );
    }
}

impl Research {
    fn check(&self, out: &mut Vec<String>) {
        let positions = self.reanalyse_positions;
        below(
            out,
            "research.reanalyse_positions",
            positions,
            MAX_POSITIONS,
        );
        if let Some(cap) = self.playout_cap {
            let name = "research.playout_cap.fast_sims";
            counted(out, name, cap.fast_sims as u64, MAX_SIMS);
            let f = cap.full_fraction;
            let name = "research.playout_cap.full_fraction";
            within(out, name, f, f > 0.0 && f <= 1.0, "above 0, at most 1");
        }
    }
}

fn unit(v: f64) -> bool {
    (0.0..=1.0).contains(&v)
}

/// Adds the problem of the count `v` named `name` when it is 0.
fn at_least_one(out: &mut Vec<String>, name: &str, v: u64) {
    if v == 0 {
        out.push(out_of_range(name, v, "at least 1"));
    }
}

/// Adds the problem of the count `v` named `name` when it is 0 or above `limit`.
fn counted(out: &mut Vec<String>, name: &str, v: u64, limit: u64) {
    at_least_one(out, name, v);
    below(out, name, v, limit);
}

/// Adds the problem of the count `v` named `name` when it is above `limit`, which sizes memory
/// or threads ([`crate::core::limits`]).
fn below(out: &mut Vec<String>, name: &str, v: u64, limit: u64) {
    if v > limit {
        let range = format!("at most {}", with_commas(limit));
        out.push(out_of_range(name, v, &range));
    }
}

/// Adds the problem of the number `v` named `name` when it is not `ok` or not finite.
fn within(out: &mut Vec<String>, name: &str, v: f64, ok: bool, range: &str) {
    if !ok || !v.is_finite() {
        out.push(out_of_range(name, as_written(v), range));
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

#[cfg(test)]
mod tests {
    use super::super::{LearningRateDrop, PlayoutCap};
    use super::*;
    use crate::games::GameKind;

    #[test]
    fn settings_out_of_range_are_named_by_section_with_their_values() {
        let mut c = RunConfig::preset("cpu", GameKind::Connect4, false).unwrap();
        c.selfplay.sims = 0;
        c.train.window = 0;
        c.train.learning_rate = -0.1;
        c.eval.promote_threshold = f64::NAN;
        c.mcts.noise_fraction = 1.5;
        c.mcts.gumbel_value_scale = 0.0;
        c.research.playout_cap = Some(PlayoutCap {
            full_fraction: 0.0,
            fast_sims: 0,
        });
        c.selfplay.fork_share = 2.0;
        c.selfplay.fork_plies = 0;
        c.selfplay.fork_move = ForkMove::Mixed(1.5);
        // A 32-bit setting is shown as written, not widened (-0.20000000298023224).
        c.train.value_target_mix = -0.2;
        c.train.learning_rate_drops = vec![LearningRateDrop {
            from_iteration: 0,
            learning_rate: 0.0,
        }];
        assert_eq!(
            c.problems(),
            [
                "selfplay.sims is 0 (must be at least 1)",
                "selfplay.fork_share is 2 (must be from 0 to 1)",
                "selfplay.fork_plies (with a fork_share) is 0 (must be at least 1)",
                "selfplay.fork_move's mixed share is 1.5 (must be from 0 to 1)",
                "mcts.noise_fraction is 1.5 (must be from 0 to 1)",
                "mcts.gumbel_value_scale is 0 (must be above 0, at most 100)",
                "train.window is 0 (must be at least 1)",
                "train.learning_rate is -0.1 (must be above 0)",
                "train.learning_rate_drops[0].from_iteration is 0 (must be at least 1)",
                "train.learning_rate_drops[0].learning_rate is 0 (must be above 0)",
                "train.value_target_mix is -0.2 (must be from 0 to 1)",
                "eval.promote_threshold is NaN (must be from 0 to 1)",
                "research.playout_cap.fast_sims is 0 (must be at least 1)",
                "research.playout_cap.full_fraction is 0 (must be above 0, at most 1)",
            ]
        );
    }

    #[test]
    fn every_preset_passes_its_checks() {
        for name in ["cpu", "gpu", "long", "tiny"] {
            for game in [GameKind::Connect4, GameKind::TicTacToe, GameKind::Othello4] {
                let c = RunConfig::preset(name, game, false).unwrap();
                assert_eq!(c.problems(), Vec::<String>::new(), "{name} {game:?}");
            }
        }
    }
}
