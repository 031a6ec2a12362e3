//! Progress reports from library code. The library never prints: a long task (self-play games,
//! training steps, match games, book positions) reports through the sink the program installed
//! at start-up. The command line installs progress bars; tests and library users who install
//! nothing get silence.

use std::sync::OnceLock;

/// Shows tasks to a person (or a log).
pub trait ProgressSink: Send + Sync {
    /// A task of `len` steps, counted in `unit` ("games", "steps").
    fn task(&self, len: u64, unit: &str) -> Box<dyn TaskView>;
    /// Something went wrong that the library got round (a damaged cache set aside): shown to
    /// the person, the work goes on.
    fn warn(&self, message: &str) {
        let _ = message;
    }
}

/// How one task is shown.
pub trait TaskView: Send + Sync {
    fn set_position(&self, position: u64);
    fn inc(&self, steps: u64);
    fn set_message(&self, message: String);
    /// The task ended: its display goes away.
    fn finish(&self);
    /// The task stopped short: its display stays as it is.
    fn abandon(&self);
}

static SINK: OnceLock<Box<dyn ProgressSink>> = OnceLock::new();

/// Installs the process's sink; only the first call counts (returns whether this one did).
pub fn install(sink: Box<dyn ProgressSink>) -> bool {
    SINK.set(sink).is_ok()
}

/// Shows a warning through the installed sink (none: silence).
pub fn warn(message: &str) {
    if let Some(sink) = SINK.get() {
        sink.warn(message);
    }
}

/// A task in progress; finished when dropped.
pub struct Task {
    view: Option<Box<dyn TaskView>>,
}

/// Starts a task shown by the installed sink when `show` is true (a caller that reports
/// otherwise, e.g. as JSON, passes false); with no sink it is silent.
pub fn task(len: u64, unit: &str, show: bool) -> Task {
    let view = show
        .then(|| SINK.get().map(|sink| sink.task(len, unit)))
        .flatten();
    Task { view }
}

impl Task {
    pub fn set_position(&self, position: u64) {
        if let Some(v) = &self.view {
            v.set_position(position);
        }
    }
    pub fn inc(&self, steps: u64) {
        if let Some(v) = &self.view {
            v.inc(steps);
        }
    }
    pub fn set_message(&self, message: impl Into<String>) {
        if let Some(v) = &self.view {
            v.set_message(message.into());
        }
    }
    /// Leaves the display as it is (the task was interrupted and the reason follows).
    pub fn abandon(mut self) {
        if let Some(v) = self.view.take() {
            v.abandon();
        }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        if let Some(v) = self.view.take() {
            v.finish();
        }
    }
}
