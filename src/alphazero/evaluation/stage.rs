//! The evaluation stage: `latest` plays `best` and is promoted to `best` when it wins (or
//! always, in a run without the match); then `best` plays the benchmark player and is graded.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use super::grading::grade_best;
use super::shards::{evaluation_games, evaluation_options};
use crate::alphazero::config::RunConfig;
use crate::alphazero::player::net_player::stage_net;
use crate::alphazero::run::best::ensure_best;
use crate::alphazero::run::paths::RunPaths;
use crate::arena::grading::GradeResult;
use crate::arena::{play_match, AgentFactory, MatchOptions, MatchResult};
use crate::catalog::Catalogued;
use crate::core::files::{read_json, write_json};
use crate::core::rng::streams;
use crate::games::Game;
use crate::nn::{default_device, Net, Shape};

#[derive(Clone, Debug, Serialize)]
pub struct EvalStats {
    /// The match of latest against best and latest's score in it; `None` in a run without
    /// the match (`eval_games` 0), whose latest becomes best every iteration.
    pub latest_vs_best: Option<MatchResult>,
    pub score: Option<f64>,
    pub promoted: bool,
    pub generation: u32,
    pub benchmark: Option<MatchResult>,
    /// Best (after the promotion) graded on the evaluation set: the network alone, then with
    /// search; `None` when the run does not grade.
    pub grade_net: Option<GradeResult>,
    pub grade_search: Option<GradeResult>,
    /// The wall time of both gradings.
    pub grade_seconds: Option<f64>,
}

/// Makes `latest` the new `best`, one generation up; returns the new generation.
fn promote<G: Game>(paths: &RunPaths, iteration: u32, generation: u32) -> Result<u32> {
    let mut net = Net::load(&paths.latest(), G::NAME, Shape::of::<G>(), default_device())?;
    net.meta.generation = generation + 1;
    net.meta.iteration = iteration;
    net.save(&paths.best())?;
    // latest carries the same generation number from now on
    net.save(&paths.latest())?;
    Ok(generation + 1)
}

/// Plays `latest` against `best` (or takes `played`, that match merged from shards played
/// elsewhere) and promotes it if it scores at least the threshold, or promotes it without a
/// match if the run plays none (`eval_games` 0); then plays `best` against the `benchmark`
/// player (named), if given, and grades it.
pub fn stage_evaluate<G: Catalogued>(
    cfg: &RunConfig,
    paths: &RunPaths,
    iteration: u32,
    benchmark: Option<(&str, &AgentFactory<G>)>,
    played: Option<MatchResult>,
    progress: bool,
) -> Result<EvalStats> {
    ensure_best::<G>(cfg, paths)?;
    if !paths.latest().exists() {
        bail!("no latest model to evaluate in {}", paths.models.display());
    }
    let opts = evaluation_options(cfg, iteration, progress);
    let decided = latest_against_best::<G>(cfg, paths, iteration, played, &opts)?;
    let score = decided.latest_vs_best.as_ref().map(|m| m.total.score());
    let promoted = score.is_none_or(|score| score >= cfg.eval.promote_threshold);
    let mut generation = decided.generation_before;
    if promoted {
        generation = promote::<G>(paths, iteration, generation)?;
    }
    let best = paths.best();
    let benchmark = match benchmark {
        Some((name, make)) if cfg.eval.benchmark_games > 0 => {
            let opts = MatchOptions {
                games: cfg.eval.benchmark_games,
                seed: streams::BENCHMARK.seed(cfg.seed, iteration as u64),
                ..opts
            };
            let best_net = stage_net::<G>(cfg, &best)?;
            let best_player = || best_net.player::<G>(cfg.eval.sims, cfg.eval.random_plies);
            Some(play_match::<G>("best", name, &best_player, make, &opts)?)
        }
        _ => None,
    };
    let grades = grade_best::<G>(cfg, &best, iteration, progress)?;
    Ok(EvalStats {
        latest_vs_best: decided.latest_vs_best,
        score,
        promoted,
        generation,
        benchmark,
        grade_net: grades.net,
        grade_search: grades.search,
        grade_seconds: grades.seconds,
    })
}

/// The match that decides an iteration's promotion (none in a run without it), and best's
/// generation before it; saved before best can change.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Decision {
    iteration: u32,
    generation_before: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    latest_vs_best: Option<MatchResult>,
}

/// Plays `latest` against `best` for `iteration` (unless `played` is that match already), or
/// reads the result of that match if an earlier process played it (and may have promoted
/// `latest` already): the decision, and so the run, does not depend on where a crash struck.
fn latest_against_best<G: Game>(
    cfg: &RunConfig,
    paths: &RunPaths,
    iteration: u32,
    played: Option<MatchResult>,
    opts: &MatchOptions,
) -> Result<Decision> {
    if let Ok(Some(saved)) = read_json::<Decision>(&paths.evaluation()) {
        if saved.iteration == iteration {
            return Ok(saved);
        }
    }
    let (latest, best) = (paths.latest(), paths.best());
    let generation_before = Net::read_meta(&best)?.generation;
    let (sims, plies) = (cfg.eval.sims, cfg.eval.random_plies);
    let no_match = evaluation_games(cfg) == 0;
    let latest_vs_best = match played {
        Some(_) if no_match => {
            bail!("this run plays no evaluation match (eval_games is 0): there is nothing to merge")
        }
        Some(merged) => Some(merged),
        None if no_match => None,
        None => {
            let (latest_net, best_net) =
                (stage_net::<G>(cfg, &latest)?, stage_net::<G>(cfg, &best)?);
            Some(play_match::<G>(
                "latest",
                "best",
                &|| latest_net.player::<G>(sims, plies),
                &|| best_net.player::<G>(sims, plies),
                opts,
            )?)
        }
    };
    let decision = Decision {
        iteration,
        generation_before,
        latest_vs_best,
    };
    write_json(&paths.evaluation(), &decision)?;
    Ok(decision)
}
