//! The rows a report shows, one an iteration, made from the run's log.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::alphazero::run::metrics::StageRecord;
use crate::alphazero::selfplay::stats::GameResults;
use crate::arena::grading::GroupResult;

/// The figures of one iteration; a stage that has not run yet leaves its fields empty.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IterationRow {
    pub iteration: u32,
    pub games: Option<u64>,
    pub positions: Option<u64>,
    pub selfplay_seconds: Option<f64>,
    /// How the self-play games ended.
    pub selfplay_results: Option<GameResults>,
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
    /// The process's resident memory at the end of the iteration, MiB.
    pub rss_mib: Option<f64>,
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
                row.selfplay_results = r.results;
                seconds.insert((r.iteration, "selfplay"), r.seconds);
            }
            StageRecord::Train(r) => {
                row.policy_loss = Some(r.policy_loss);
                row.value_loss = Some(r.value_loss);
                row.train_seconds = Some(r.seconds);
                seconds.insert((r.iteration, "train"), r.seconds);
            }
            StageRecord::Evaluate(r) => {
                row.score_vs_best = r.score_vs_best;
                row.promoted = Some(r.promoted);
                row.generation = Some(r.generation);
                seconds.insert((r.iteration, "evaluate"), r.seconds);
                row.net_mistake_rate = r.grade_net.as_ref().map(|g| g.mistake_rate);
                row.search_mistake_rate = r.grade_search.as_ref().map(|g| g.mistake_rate);
                row.net_groups = r.grade_net.as_ref().map(|g| g.groups.clone());
                row.search_groups = r.grade_search.as_ref().map(|g| g.groups.clone());
                row.grade_seconds = r.grade_seconds;
                row.rss_mib = r.rss_mib;
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
        if row.generation.is_some() {
            row.minutes = Some(total / 60.0);
        }
    }
    rows.into_values().collect()
}
