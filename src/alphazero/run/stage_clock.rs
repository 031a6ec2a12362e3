//! The wall time of a stage over every process that worked on it. While a stage runs, a
//! thread saves the seconds spent so far every few seconds (`stage-clock.json`); a process
//! that resumes the stage after a crash starts from them, so a stage's record says how long
//! the stage took in all, give or take one save interval per interruption.

use std::path::Path;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::state::RunState;
use crate::core::files::{read_json, write_json};

/// Seconds between saves of the clock.
const SAVE_EVERY: Duration = Duration::from_secs(5);

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Saved {
    state: RunState,
    seconds: f64,
}

/// Runs `stage`, saving its running time under `dir` meanwhile; returns its result and the
/// stage's seconds in all (those of earlier processes on the same stage included).
pub fn timed_stage<T>(
    dir: &Path,
    state: RunState,
    stage: impl FnOnce() -> Result<T>,
) -> Result<(T, f64)> {
    let path = dir.join("stage-clock.json");
    let before = match read_json::<Saved>(&path) {
        Ok(Some(saved)) if saved.state == state => saved.seconds.max(0.0),
        // Another stage's clock, none, or an unreadable one: this stage starts from zero.
        _ => 0.0,
    };
    let started = Instant::now();
    let (stop, stopped) = channel::<()>();
    let result = std::thread::scope(|scope| {
        scope.spawn(|| save_until_stopped(&path, state, before, started, stopped));
        let result = stage();
        // Dropping the sender (here, or while unwinding a panic) ends the saving thread.
        drop(stop);
        result
    })?;
    // The stage is done: its clock is of no more use (a crash before the run moves on only
    // makes the rerun's figure start from zero).
    let _ = std::fs::remove_file(&path);
    Ok((result, before + started.elapsed().as_secs_f64()))
}

/// Saves the clock every [`SAVE_EVERY`] until told to stop. A failed save only makes the
/// figure less exact after a crash, so it is not an error of the stage.
fn save_until_stopped(
    path: &Path,
    state: RunState,
    before: f64,
    started: Instant,
    stopped: Receiver<()>,
) {
    loop {
        match stopped.recv_timeout(SAVE_EVERY) {
            Err(RecvTimeoutError::Timeout) => {
                let seconds = before + started.elapsed().as_secs_f64();
                let _ = write_json(path, &Saved { state, seconds });
            }
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alphazero::run::state::Stage;

    #[test]
    fn a_resumed_stage_counts_the_time_saved_by_earlier_processes() {
        let dir = tempfile::tempdir().unwrap();
        let state = RunState {
            iteration: 3,
            stage: Stage::Train,
        };
        let saved = Saved {
            state,
            seconds: 40.0,
        };
        write_json(&dir.path().join("stage-clock.json"), &saved).unwrap();
        let (x, seconds) = timed_stage(dir.path(), state, || Ok(7)).unwrap();
        assert_eq!(x, 7);
        assert!((40.0..41.0).contains(&seconds), "{seconds}");
        // A finished stage's clock is gone; another stage's clock does not count.
        assert!(!dir.path().join("stage-clock.json").exists());
        write_json(&dir.path().join("stage-clock.json"), &saved).unwrap();
        let other = RunState {
            iteration: 3,
            stage: Stage::Evaluate,
        };
        let (_, seconds) = timed_stage(dir.path(), other, || Ok(())).unwrap();
        assert!(seconds < 1.0, "{seconds}");
        // A failing stage is an error, and the thread still stops.
        let e = timed_stage::<()>(dir.path(), other, || anyhow::bail!("disk full"));
        assert_eq!(e.unwrap_err().to_string(), "disk full");
    }
}
