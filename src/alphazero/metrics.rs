//! The run's log, `metrics.jsonl`: one typed record a finished stage, written by the cycle and
//! read back by `zero report` and the stage descriptions, and the rows of one iteration each
//! that a report shows.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::selfplay::SelfPlayStats;
use super::stages::EvalStats;
use super::train::TrainStats;
use crate::arena::grading::{GradeResult, GroupResult};
use crate::arena::MatchResult;
use crate::core::files::append_line;

/// One finished stage, a line of `metrics.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "stage", rename_all = "lowercase")]
pub enum StageRecord {
    #[serde(rename = "selfplay")]
    SelfPlay(SelfPlayRecord),
    Train(TrainRecord),
    // Boxed: two match results make it several times the size of the others.
    Evaluate(Box<EvaluateRecord>),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SelfPlayRecord {
    pub iteration: u32,
    pub games: u64,
    pub positions: u64,
    pub seconds: f64,
    pub positions_per_s: f64,
    pub nn_evals_per_s: f64,
    pub mean_batch: f64,
    pub cache_hit_rate: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainRecord {
    pub iteration: u32,
    pub samples: u64,
    pub steps: u64,
    pub policy_loss: f64,
    pub value_loss: f64,
    pub seconds: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvaluateRecord {
    pub iteration: u32,
    /// Latest's score against best (draws count half).
    pub score_vs_best: f64,
    pub promoted: bool,
    /// Best's generation after the evaluation.
    pub generation: u32,
    pub latest_vs_best: MatchResult,
    /// Best against the run's benchmark player, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmark: Option<MatchResult>,
    /// The evaluation stage's wall time.
    pub seconds: f64,
    /// Best graded on the evaluation set, the network alone and with search (absent in runs
    /// that do not grade, and in older logs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grade_net: Option<GradeResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grade_search: Option<GradeResult>,
    /// The wall time of the two gradings (part of `seconds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grade_seconds: Option<f64>,
}

impl StageRecord {
    pub fn selfplay(iteration: u32, s: &SelfPlayStats) -> StageRecord {
        StageRecord::SelfPlay(SelfPlayRecord {
            iteration,
            games: s.games,
            positions: s.positions,
            seconds: s.seconds,
            positions_per_s: s.positions_per_s(),
            nn_evals_per_s: s.nn_evals_per_s(),
            mean_batch: s.mean_batch(),
            cache_hit_rate: s.cache_hit_rate(),
        })
    }

    pub fn train(iteration: u32, t: &TrainStats) -> StageRecord {
        StageRecord::Train(TrainRecord {
            iteration,
            samples: t.samples as u64,
            steps: t.steps,
            policy_loss: t.policy_loss,
            value_loss: t.value_loss,
            seconds: t.seconds,
        })
    }

    pub fn evaluate(iteration: u32, e: &EvalStats, seconds: f64) -> StageRecord {
        StageRecord::Evaluate(Box::new(EvaluateRecord {
            iteration,
            score_vs_best: e.score,
            promoted: e.promoted,
            generation: e.generation,
            latest_vs_best: e.latest_vs_best.clone(),
            benchmark: e.benchmark.clone(),
            seconds,
            grade_net: e.grade_net.clone(),
            grade_search: e.grade_search.clone(),
            grade_seconds: e.grade_seconds,
        }))
    }

    pub fn iteration(&self) -> u32 {
        match self {
            StageRecord::SelfPlay(r) => r.iteration,
            StageRecord::Train(r) => r.iteration,
            StageRecord::Evaluate(r) => r.iteration,
        }
    }

    /// Appends the record to the log at `path`.
    pub fn append_to(&self, path: &Path) -> Result<()> {
        append_line(path, &serde_json::to_string(self)?)
    }
}

/// Reads every record of `metrics.jsonl`, with an error naming the line that is not one.
pub fn read_metrics(path: &Path) -> Result<Vec<StageRecord>> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read {} (run `zero cycle` first, or give the right --models)",
            path.display()
        )
    })?;
    parse_metrics(&text, path)
}

/// The records of the text of a `metrics.jsonl`, as [`read_metrics`] reads the file; `path`
/// names it in errors.
pub fn parse_metrics(text: &str, path: &Path) -> Result<Vec<StageRecord>> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str(line).with_context(|| {
                format!(
                    "{} line {}: not a stage record of zero",
                    path.display(),
                    n + 1
                )
            })
        })
        .collect()
}

/// The figures of one iteration; a stage that has not run yet leaves its fields empty.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IterationRow {
    pub iteration: u32,
    pub games: Option<u64>,
    pub positions: Option<u64>,
    pub selfplay_seconds: Option<f64>,
    pub policy_loss: Option<f64>,
    pub value_loss: Option<f64>,
    pub train_seconds: Option<f64>,
    /// Latest's score against best (draws count half).
    pub score_vs_best: Option<f64>,
    pub promoted: Option<bool>,
    /// Best's generation after the evaluation.
    pub generation: Option<u32>,
    /// The benchmark player, and best's score and wins/losses/draws against it.
    pub benchmark: Option<String>,
    pub benchmark_score: Option<f64>,
    pub benchmark_wld: Option<[u64; 3]>,
    /// Best's share of mistakes on the evaluation set, the network alone and with search.
    pub net_mistake_rate: Option<f64>,
    pub search_mistake_rate: Option<f64>,
    /// The same by group of the set.
    pub net_groups: Option<Vec<GroupResult>>,
    pub search_groups: Option<Vec<GroupResult>>,
    pub grade_seconds: Option<f64>,
    /// Wall-clock minutes of the run from its start to the end of this iteration's evaluation
    /// (the stages' seconds added up).
    pub minutes: Option<f64>,
}

/// One row per iteration, in order; a stage run again (after an interruption) counts once,
/// its last record.
pub fn iteration_rows(records: &[StageRecord]) -> Vec<IterationRow> {
    let mut rows: BTreeMap<u32, IterationRow> = BTreeMap::new();
    // Each stage's seconds by iteration, a rerun stage counting its last record.
    let mut seconds: BTreeMap<(u32, &str), f64> = BTreeMap::new();
    for record in records {
        let row = rows.entry(record.iteration()).or_default();
        row.iteration = record.iteration();
        match record {
            StageRecord::SelfPlay(r) => {
                row.games = Some(r.games);
                row.positions = Some(r.positions);
                row.selfplay_seconds = Some(r.seconds);
                seconds.insert((r.iteration, "selfplay"), r.seconds);
            }
            StageRecord::Train(r) => {
                row.policy_loss = Some(r.policy_loss);
                row.value_loss = Some(r.value_loss);
                row.train_seconds = Some(r.seconds);
                seconds.insert((r.iteration, "train"), r.seconds);
            }
            StageRecord::Evaluate(r) => {
                row.score_vs_best = Some(r.score_vs_best);
                row.promoted = Some(r.promoted);
                row.generation = Some(r.generation);
                seconds.insert((r.iteration, "evaluate"), r.seconds);
                row.net_mistake_rate = r.grade_net.as_ref().map(|g| g.mistake_rate);
                row.search_mistake_rate = r.grade_search.as_ref().map(|g| g.mistake_rate);
                row.net_groups = r.grade_net.as_ref().map(|g| g.groups.clone());
                row.search_groups = r.grade_search.as_ref().map(|g| g.groups.clone());
                row.grade_seconds = r.grade_seconds;
                if let Some(b) = &r.benchmark {
                    let t = b.total;
                    row.benchmark = Some(b.b.clone());
                    row.benchmark_wld = Some([t.wins, t.losses, t.draws]);
                    row.benchmark_score = Some(t.score());
                }
            }
        }
    }
    let mut total = 0.0;
    for row in rows.values_mut() {
        total += ["selfplay", "train", "evaluate"]
            .iter()
            .filter_map(|stage| seconds.get(&(row.iteration, *stage)))
            .sum::<f64>();
        if row.score_vs_best.is_some() {
            row.minutes = Some(total / 60.0);
        }
    }
    rows.into_values().collect()
}
