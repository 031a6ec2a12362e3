//! The loop that runs the stages, resumably: `state.json` says which stage of which iteration
//! comes next and is advanced only after a stage's files are safely written. Self-play keeps
//! its finished games across interruptions, training its checkpoint; a stage cut short is
//! simply run again.

use anyhow::Result;

use super::metrics::{drop_records_from, StageRecord};
use super::paths::RunPaths;
use super::stage_clock::timed_stage;
use super::state::{read_state, write_state, RunState, Stage};
use crate::alphazero::config::RunConfig;
use crate::alphazero::evaluation::stage::stage_evaluate;
use crate::alphazero::selfplay::stage::stage_self_play;
use crate::alphazero::selfplay::stats::SelfPlayStats;
use crate::alphazero::training::stage::stage_train;
use crate::arena::{AgentFactory, MatchResult};
use crate::catalog::Catalogued;
use crate::core::memory::{release_free_memory, resident_mib};

/// What shards played elsewhere (by a cluster) bring to the stage that records them: the
/// self-play figures of the processes that played its chunks (the games are the chunks on
/// disk), the evaluation's match.
#[derive(Clone, Debug, Default)]
pub struct FromShards {
    pub selfplay: Option<SelfPlayStats>,
    pub evaluation: Option<MatchResult>,
}

/// Runs one stage of iteration `state.iteration` and returns its record, whose seconds are
/// the stage's in all (earlier processes' included, after an interruption).
fn run_stage<G: Catalogued>(
    cfg: &RunConfig,
    paths: &RunPaths,
    state: RunState,
    benchmark: Option<(&str, &AgentFactory<G>)>,
    shards: FromShards,
    progress: bool,
) -> Result<StageRecord> {
    let (mut record, seconds) = timed_stage(&paths.models, state, || {
        stage_record::<G>(cfg, paths, state, benchmark, shards, progress)
    })?;
    record.set_seconds(seconds);
    // Between stages: what a stage freed goes back to the system before the next one.
    release_free_memory();
    if let StageRecord::Evaluate(r) = &mut record {
        (r.rss_mib, r.peak_rss_mib) = resident_mib().unzip();
    }
    Ok(record)
}

fn stage_record<G: Catalogued>(
    cfg: &RunConfig,
    paths: &RunPaths,
    state: RunState,
    benchmark: Option<(&str, &AgentFactory<G>)>,
    shards: FromShards,
    progress: bool,
) -> Result<StageRecord> {
    let i = state.iteration;
    let started = std::time::Instant::now();
    Ok(match state.stage {
        Stage::SelfPlay => {
            let elsewhere = shards.selfplay.as_ref();
            let s = stage_self_play::<G>(cfg, paths, i, None, elsewhere, progress)?;
            StageRecord::selfplay(i, &s)
        }
        Stage::Train => StageRecord::train(i, &stage_train::<G>(cfg, paths, i, progress)?),
        Stage::Evaluate => {
            let e = stage_evaluate::<G>(cfg, paths, i, benchmark, shards.evaluation, progress)?;
            StageRecord::evaluate(i, &e, started.elapsed().as_secs_f64())
        }
    })
}

/// Runs the run's next stage, `state` (whose files earlier processes, or a cluster, may have
/// made already: it then only finds them), appends its record to the metrics and advances
/// the state. `shards` is what shards played elsewhere bring. Returns the record and the new
/// state.
pub fn run_next_stage<G: Catalogued>(
    cfg: &RunConfig,
    paths: &RunPaths,
    state: RunState,
    benchmark: Option<(&str, &AgentFactory<G>)>,
    shards: FromShards,
    progress: bool,
) -> Result<(StageRecord, RunState)> {
    let record = run_stage::<G>(cfg, paths, state, benchmark, shards, progress)?;
    record.append_to(&paths.metrics())?;
    let next = state.next();
    write_state(paths, next)?;
    Ok((record, next))
}

/// Runs the cycle until `iterations` iterations are complete, resuming where a previous run
/// stopped. Each finished stage is appended to the metrics and handed to `report`.
pub fn run_cycle<G: Catalogued>(
    cfg: &RunConfig,
    paths: &RunPaths,
    iterations: u32,
    benchmark: Option<(&str, &AgentFactory<G>)>,
    progress: bool,
    report: &mut dyn FnMut(&StageRecord),
) -> Result<RunState> {
    let mut state = read_state(paths)?;
    // Records of stages that a stopped process finished but did not get to count as done.
    drop_records_from(&paths.metrics(), state)?;
    while state.iteration <= iterations {
        let (record, next) = run_next_stage::<G>(
            cfg,
            paths,
            state,
            benchmark,
            FromShards::default(),
            progress,
        )?;
        state = next;
        report(&record);
    }
    Ok(state)
}
