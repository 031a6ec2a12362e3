//! A run's state on disk: its settings (`run.json`, fixed when the run starts) and the next
//! stage to run (`state.json`, advanced only after a stage's files are safely written).

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::paths::RunPaths;
use crate::alphazero::config::legacy;
use crate::alphazero::config::RunConfig;
use crate::core::files::{parse_json, read_json, remove_temporaries, write_json};
use crate::core::lock::DirLock;

/// The stages of an iteration, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    SelfPlay,
    Train,
    Evaluate,
}

/// The next stage to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunState {
    pub iteration: u32,
    pub stage: Stage,
}

impl RunState {
    /// The stage after this one: self-play, training, evaluation, then the next iteration.
    pub fn next(self) -> RunState {
        let (iteration, stage) = match self.stage {
            Stage::SelfPlay => (self.iteration, Stage::Train),
            Stage::Train => (self.iteration, Stage::Evaluate),
            Stage::Evaluate => (self.iteration + 1, Stage::SelfPlay),
        };
        RunState { iteration, stage }
    }
}

/// Loads the run's saved configuration, or saves `cfg` as it for a new run. A resumed run
/// keeps its settings; asking for other ones is an error rather than a silent mix.
pub fn open_run(paths: &RunPaths, cfg: &RunConfig, explicit: bool) -> Result<RunConfig> {
    let saved = read_run_config(paths)?;
    ensure_runnable(paths, saved.as_ref(), cfg)?;
    match saved {
        Some(saved) if explicit && saved != *cfg => bail!(
            "{} holds a run with other settings ({}); resume it without the options that change \
             them (--preset, --seed, --search, --playout-cap, --reanalyse, --chunk-games, \
             --benchmark), or use another --models/--data directory",
            paths.models.display(),
            differences(&saved, cfg).join("; ")
        ),
        Some(saved) => Ok(saved),
        None => {
            write_json(&paths.config(), cfg)?;
            Ok(cfg.clone())
        }
    }
}

/// The run's saved settings (`run.json`), if it has any; one written by an earlier version
/// is read as [`legacy::upgrade`] says.
pub fn read_run_config(paths: &RunPaths) -> Result<Option<RunConfig>> {
    let path = paths.config();
    let Some(saved) = read_json::<Value>(&path)? else {
        return Ok(None);
    };
    let settings =
        legacy::upgrade(saved.clone()).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if settings == saved {
        // Read as written, so that an error's line and column are the file's own.
        return read_json(&path);
    }
    parse_json(&path, &serde_json::to_vec(&settings)?).map(Some)
}

/// Fails, naming each setting and its range, when the saved settings (a `run.json` edited by
/// hand) or the asked ones cannot run; nothing is written then.
fn ensure_runnable(paths: &RunPaths, saved: Option<&RunConfig>, asked: &RunConfig) -> Result<()> {
    if let Some(problems) = saved.map(RunConfig::problems).filter(|p| !p.is_empty()) {
        bail!(
            "{} holds settings that cannot run: {}; correct them there (the run's files are \
             untouched)",
            paths.config().display(),
            problems.join("; ")
        );
    }
    let problems = asked.problems();
    anyhow::ensure!(
        problems.is_empty(),
        "these settings cannot run: {}",
        problems.join("; ")
    );
    Ok(())
}

/// The settings that differ between a saved run and the one asked for, as
/// `name: saved, not asked` (nested settings dotted, as in `run.json`).
fn differences(saved: &RunConfig, asked: &RunConfig) -> Vec<String> {
    fn walk(name: &str, saved: &Value, asked: &Value, out: &mut Vec<String>) {
        if let (Value::Object(a), Value::Object(b)) = (saved, asked) {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let nested = match name {
                    "" => key.clone(),
                    _ => format!("{name}.{key}"),
                };
                let (a, b) = (a.get(key), b.get(key));
                walk(
                    &nested,
                    a.unwrap_or(&Value::Null),
                    b.unwrap_or(&Value::Null),
                    out,
                );
            }
        } else if saved != asked {
            out.push(format!("{name}: {saved}, not {asked}"));
        }
    }
    let to_value = |c: &RunConfig| serde_json::to_value(c).unwrap_or(Value::Null);
    let mut out = Vec::new();
    walk("", &to_value(saved), &to_value(asked), &mut out);
    out
}

/// The next stage of the run (the first stage of iteration 1 for a new run).
pub fn read_state(paths: &RunPaths) -> Result<RunState> {
    Ok(read_json(&paths.state())?.unwrap_or(RunState {
        iteration: 1,
        stage: Stage::SelfPlay,
    }))
}

pub fn write_state(paths: &RunPaths, state: RunState) -> Result<()> {
    write_json(&paths.state(), &state)
}

/// A run's two directories, locked for this process: a second process working on the same run
/// is refused with the holder's pid instead of mixing its files with this one's.
#[derive(Debug)]
pub struct RunLock {
    pub models: DirLock,
    pub data: DirLock,
}

impl RunLock {
    /// The pids of processes that held a lock and died without releasing it.
    pub fn stale_holders(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = [&self.models, &self.data]
            .iter()
            .filter_map(|l| l.stale_holder)
            .collect();
        pids.dedup();
        pids
    }
}

/// Locks the run's models and data directories (created if needed), then removes the
/// temporary files of writes that a killed process left half done: with the lock held, no
/// other process can be writing them.
pub fn lock_run(paths: &RunPaths) -> Result<RunLock> {
    let lock = RunLock {
        models: DirLock::acquire(&paths.models, "the run's models")?,
        data: DirLock::acquire(&paths.data, "the run's self-play data")?,
    };
    remove_temporaries(&paths.models)?;
    remove_temporaries(&paths.data)?;
    let iterations = std::fs::read_dir(&paths.data)
        .with_context(|| format!("cannot read {}", paths.data.display()))?;
    for entry in iterations.flatten() {
        if entry.path().is_dir() {
            remove_temporaries(&entry.path())?;
        }
    }
    Ok(lock)
}
