//! The run's log, `metrics.jsonl`: one typed record a finished stage, written by the cycle and
//! read back by `zero report` and the stage descriptions.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::state::{RunState, Stage};
use crate::alphazero::evaluation::stage::EvalStats;
use crate::alphazero::selfplay::stats::{GameResults, SelfPlayStats};
use crate::alphazero::training::train::TrainStats;
use crate::arena::grading::GradeResult;
use crate::arena::MatchResult;
use crate::core::files::{append_line, write_atomic};

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
    /// The whole stage's games and positions, however many processes it took.
    pub games: u64,
    pub positions: u64,
    /// The stage's wall time over all its processes, and positions / seconds.
    pub seconds: f64,
    pub positions_per_s: f64,
    /// Throughput of the process that finished the stage (after an interruption, of the
    /// games it played; on a cluster, of the processes that played its chunks, each
    /// process's seconds added up).
    pub nn_evals_per_s: f64,
    pub mean_batch: f64,
    pub cache_hit_rate: f64,
    /// How the stage's games ended (absent in older logs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<GameResults>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainRecord {
    pub iteration: u32,
    pub samples: u64,
    pub steps: u64,
    pub policy_loss: f64,
    pub value_loss: f64,
    /// Positions of the window searched again before training, and the seconds that took
    /// (part of `seconds`), for a run that reanalyses (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reanalysed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reanalyse_seconds: Option<f64>,
    pub seconds: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvaluateRecord {
    pub iteration: u32,
    /// Latest's score against best (draws count half); absent in a run without the match
    /// (`eval_games` 0), whose latest becomes best every iteration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_vs_best: Option<f64>,
    pub promoted: bool,
    /// Best's generation after the evaluation.
    pub generation: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_vs_best: Option<MatchResult>,
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
    /// The process's resident memory at the end of the iteration and its peak so far, MiB
    /// (absent in older logs): a long run's memory should stay flat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_mib: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_mib: Option<f64>,
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
            results: s.results,
        })
    }

    pub fn train(iteration: u32, t: &TrainStats) -> StageRecord {
        StageRecord::Train(TrainRecord {
            iteration,
            samples: t.samples as u64,
            steps: t.steps,
            policy_loss: t.policy_loss,
            value_loss: t.value_loss,
            reanalysed: t.reanalysis.as_ref().map(|r| r.positions),
            reanalyse_seconds: t.reanalysis.as_ref().map(|r| r.seconds),
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
            // The cycle's to fill in, after the stage has handed back what it freed.
            rss_mib: None,
            peak_rss_mib: None,
        }))
    }

    pub fn iteration(&self) -> u32 {
        match self {
            StageRecord::SelfPlay(r) => r.iteration,
            StageRecord::Train(r) => r.iteration,
            StageRecord::Evaluate(r) => r.iteration,
        }
    }

    /// The stage this record is of.
    pub fn stage(&self) -> Stage {
        match self {
            StageRecord::SelfPlay(_) => Stage::SelfPlay,
            StageRecord::Train(_) => Stage::Train,
            StageRecord::Evaluate(_) => Stage::Evaluate,
        }
    }

    /// Sets the stage's wall time (all the processes that worked on it), and the self-play
    /// rate that follows from it.
    pub fn set_seconds(&mut self, seconds: f64) {
        match self {
            StageRecord::SelfPlay(r) => {
                r.seconds = seconds;
                r.positions_per_s = r.positions as f64 / seconds.max(1e-9);
            }
            StageRecord::Train(r) => r.seconds = seconds,
            StageRecord::Evaluate(r) => r.seconds = seconds,
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

/// Removes from the log at `path` the records of `next` and later stages: records that a
/// process wrote before it died without advancing the run's state. Those stages run again and
/// record again, so every stage keeps exactly one record however often the run was stopped.
/// A last line cut short by a crash goes too; any other unreadable line is an error, and the
/// file is left as it was.
pub fn drop_records_from(path: &Path, next: RunState) -> Result<()> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let lines: Vec<&str> = text.lines().collect();
    let cut_short = !text.is_empty() && !text.ends_with('\n');
    let mut kept = String::with_capacity(text.len());
    let mut dropped = false;
    for (n, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: StageRecord = match serde_json::from_str(line) {
            Ok(r) => r,
            Err(_) if cut_short && n + 1 == lines.len() => {
                dropped = true;
                continue;
            }
            Err(e) => {
                return Err(e).with_context(|| {
                    format!(
                        "{} line {}: not a stage record of zero",
                        path.display(),
                        n + 1
                    )
                })
            }
        };
        if (record.iteration(), record.stage()) >= (next.iteration, next.stage) {
            dropped = true;
            continue;
        }
        kept.push_str(line);
        kept.push('\n');
    }
    if dropped {
        write_atomic(path, kept.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn train_record(iteration: u32) -> StageRecord {
        StageRecord::Train(TrainRecord {
            iteration,
            samples: 10,
            steps: 5,
            policy_loss: 1.0,
            value_loss: 0.5,
            reanalysed: None,
            reanalyse_seconds: None,
            seconds: 2.0,
        })
    }

    fn selfplay_record(iteration: u32) -> StageRecord {
        StageRecord::SelfPlay(SelfPlayRecord {
            iteration,
            games: 4,
            positions: 40,
            seconds: 1.0,
            positions_per_s: 40.0,
            nn_evals_per_s: 100.0,
            mean_batch: 4.0,
            cache_hit_rate: 0.1,
            results: Some(GameResults {
                first_player_wins: 2,
                draws: 1,
                second_player_wins: 1,
            }),
        })
    }

    #[test]
    fn records_of_unfinished_stages_and_a_cut_line_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.jsonl");
        let at = |iteration, stage| RunState { iteration, stage };
        // No log yet: nothing to do.
        drop_records_from(&path, at(1, Stage::SelfPlay)).unwrap();
        assert!(!path.exists());
        for r in [selfplay_record(1), train_record(1), selfplay_record(2)] {
            r.append_to(&path).unwrap();
        }
        let whole = std::fs::read_to_string(&path).unwrap();
        // Iteration 2's self-play was recorded, but the state still says it comes next.
        drop_records_from(&path, at(2, Stage::SelfPlay)).unwrap();
        let records = read_metrics(&path).unwrap();
        assert_eq!(records, [selfplay_record(1), train_record(1)]);
        // Nothing to drop: the file is not rewritten.
        drop_records_from(&path, at(2, Stage::SelfPlay)).unwrap();
        assert_eq!(read_metrics(&path).unwrap().len(), 2);
        // A last line cut short by a crash goes; the records before it stay.
        let cut = &whole[..whole.len() - 10];
        std::fs::write(&path, cut).unwrap();
        drop_records_from(&path, at(3, Stage::SelfPlay)).unwrap();
        assert_eq!(read_metrics(&path).unwrap().len(), 2);
        // A bad line in the middle is an error, and the file stays as it was.
        let bad = format!("{{\"stage\":\"nonsense\"}}\n{whole}");
        std::fs::write(&path, &bad).unwrap();
        let e = drop_records_from(&path, at(1, Stage::Train)).unwrap_err();
        assert!(format!("{e:#}").contains("line 1"), "{e:#}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), bad);
    }
}
