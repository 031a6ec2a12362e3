//! The three stages of an iteration, each reading and writing the run's files: self-play with
//! `best`, training `latest` on the replay window, and the evaluation that promotes `latest`
//! to `best` when it wins (or always, in a run without the match) and grades `best`.

use std::ops::Range;
use std::path::Path;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use super::shards::{evaluation_games, evaluation_options};
use crate::agent::Agent;
use crate::alphazero::config::RunConfig;
use crate::alphazero::player::net_player::stage_net;
use crate::alphazero::player::policy_player::policy_agent;
use crate::alphazero::research::reanalyse::reanalyse_window;
use crate::alphazero::run::paths::RunPaths;
use crate::alphazero::selfplay::play::{self_play_shard, GameResults, SelfPlayStats};
use crate::alphazero::selfplay::records::read_iteration;
use crate::alphazero::training::samples::{window_records, window_samples};
use crate::alphazero::training::train::{train, Checkpointing, TrainStats};
use crate::arena::grading::{grade, GradeResult, GRADING};
use crate::arena::{play_match, AgentFactory, MatchOptions, MatchResult};
use crate::catalog::Catalogued;
use crate::core::files::{read_json, write_json};
use crate::core::rng::streams;
use crate::core::threads::default_threads;
use crate::games::Game;
use crate::nn::{default_device, training_threads, Net, Shape, TorchThreads};

/// Seconds between saves of an unfinished training stage (a crash loses at most this much;
/// Ctrl-C loses nothing).
const TRAIN_CHECKPOINT_SECONDS: f64 = 30.0;

/// Creates the random generation-0 network as `best` (and `latest`) if there is none.
/// An existing `best` must have the run's network shape: `run.json`'s `arch` edited after the
/// run started would otherwise be ignored without a word (the networks keep the shape they
/// were made with).
pub fn ensure_best<G: Game>(cfg: &RunConfig, paths: &RunPaths) -> Result<()> {
    if paths.best().exists() {
        let made = Net::read_meta(&paths.best())?.arch;
        if made != cfg.net.arch {
            bail!(
                "{} is a {made} network, but {} asks for {}: a run keeps the network shape it \
                 started with; start another run (other --models/--data directories) for {}",
                paths.best().display(),
                paths.config().display(),
                cfg.net.arch,
                cfg.net.arch
            );
        }
        return Ok(());
    }
    let mut net = Net::new_seeded(
        G::NAME,
        cfg.net.arch,
        Shape::of::<G>(),
        default_device(),
        cfg.seed,
    )?;
    net.meta.config = serde_json::to_value(cfg)?;
    net.save(&paths.latest())?;
    net.save(&paths.best())?;
    Ok(())
}

/// Plays the iteration's missing self-play games with `best` (of the whole iteration, or of
/// the chunks that `shard` names). The games and positions returned are the whole stage's,
/// those written by earlier, interrupted processes included (a shard's: this process's); the
/// throughput figures (network evaluations, batches, cache) are this process's, plus those of
/// `elsewhere`, shards played by other processes (a cluster's).
pub fn stage_self_play<G: Game>(
    cfg: &RunConfig,
    paths: &RunPaths,
    iteration: u32,
    shard: Option<Range<u64>>,
    elsewhere: Option<&SelfPlayStats>,
    progress: bool,
) -> Result<SelfPlayStats> {
    ensure_best::<G>(cfg, paths)?;
    let net = Net::load(&paths.best(), G::NAME, Shape::of::<G>(), default_device())?
        .with_precision(cfg.net.precision);
    let whole_stage = shard.is_none();
    let mut stats = self_play_shard::<G>(cfg, net, iteration, &paths.data, shard, progress)?;
    if let Some(shards) = elsewhere {
        stats.add_shards(shards);
    }
    if whole_stage {
        let games = read_iteration(&paths.data, G::NAME, G::NUM_ACTIONS, iteration)?;
        stats.games = games.len() as u64;
        stats.positions = games.iter().map(|g| g.moves.len() as u64).sum();
        stats.results = Some(GameResults::count(games.iter().map(|g| g.outcome)));
    }
    Ok(stats)
}

pub fn stage_train<G: Game>(
    cfg: &RunConfig,
    paths: &RunPaths,
    iteration: u32,
    progress: bool,
) -> Result<TrainStats> {
    ensure_best::<G>(cfg, paths)?;
    let from = if paths.latest().exists() {
        paths.latest()
    } else {
        paths.best()
    };
    let mut net = Net::load(&from, G::NAME, Shape::of::<G>(), default_device())?
        .with_precision(cfg.net.precision);
    let trained_before = net.meta.iteration == iteration;
    let mut window = window_records::<G>(cfg, &paths.data, iteration)?;
    // Before the threads go to training: the searches run as self-play's do. Not for a
    // network this stage trained already (training is then a no-op).
    let reanalysis = (cfg.research.reanalyse_positions > 0 && !trained_before)
        .then(|| {
            let records = &mut window.records;
            reanalyse_window::<G>(cfg, &net, records, window.older, iteration, progress)
        })
        .transpose()?;
    let samples = window_samples::<G>(cfg, &window.records);
    drop(window);
    // Nothing else runs while the network trains: every core goes to libtorch, unless its
    // steps are too small to share.
    let threads = training_threads(&net.meta.arch, Shape::of::<G>(), cfg.train.batch_size);
    let _threads = TorchThreads::set(threads);
    tch::manual_seed(streams::TRAINING_TORCH.seed(cfg.seed, iteration as u64) as i64);
    let checkpointing = Checkpointing {
        path: paths.train_checkpoint(),
        iteration,
        every_seconds: TRAIN_CHECKPOINT_SECONDS,
        stop_after: None,
    };
    // Training reads its rate from the settings: this iteration's, after any drop.
    let mut cfg_now = cfg.clone();
    cfg_now.train.learning_rate = cfg.learning_rate_of(iteration);
    let mut stats = train::<G>(
        &cfg_now,
        &mut net,
        &samples,
        streams::TRAINING_BATCHES.seed(cfg.seed, iteration as u64),
        Some(&checkpointing),
        progress,
    )?;
    stats.reanalysis = reanalysis;
    // A process that saved this stage's network and died before the run moved on left
    // `latest` trained already (the checkpoint then made `train` a no-op): count it once.
    if !trained_before {
        net.meta.training_steps += cfg.train.steps;
    }
    net.meta.iteration = iteration;
    net.save(&paths.latest())?;
    Ok(stats)
}

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

/// Best's grades on the evaluation set.
struct Grades {
    net: Option<GradeResult>,
    search: Option<GradeResult>,
    seconds: Option<f64>,
}

/// Grades `best` on the game's evaluation set (or on the subsets `cfg.grade` names): the
/// network alone, playing its most likely move, and with `eval_sims` simulations of search,
/// with no random plies. The set's exact values only grade; none reaches training.
fn grade_best<G: Catalogued>(
    cfg: &RunConfig,
    best: &Path,
    iteration: u32,
    progress: bool,
) -> Result<Grades> {
    let (net_n, search_n) = (
        cfg.eval.grade.net_positions,
        cfg.eval.grade.search_positions,
    );
    if net_n == 0 && search_n == 0 {
        return Ok(Grades {
            net: None,
            search: None,
            seconds: None,
        });
    }
    let started = std::time::Instant::now();
    let set = G::eval_set()?;
    let seed = GRADING.seed(cfg.seed, iteration as u64);
    let threads = default_threads();
    let net = if net_n > 0 {
        let precision = cfg.net.precision;
        let alone = || Ok(Box::new(policy_agent::<G>(best, 0, precision)?) as Box<dyn Agent<G>>);
        let subset = set.subset(net_n);
        Some(grade::<G>(&alone, &subset, threads, seed, progress)?)
    } else {
        None
    };
    let search = if search_n > 0 {
        let best_net = stage_net::<G>(cfg, best)?;
        let searching = || best_net.player::<G>(cfg.eval.sims, 0);
        let subset = set.subset(search_n);
        Some(grade::<G>(&searching, &subset, threads, seed, progress)?)
    } else {
        None
    };
    Ok(Grades {
        net,
        search,
        seconds: Some(started.elapsed().as_secs_f64()),
    })
}
