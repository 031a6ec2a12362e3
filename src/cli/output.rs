//! What the commands print: one JSON line, progress bars on stderr (also the library's
//! tasks'), a line about a finished stage of the cycle, and exact values as words.

use indicatif::{ProgressBar, ProgressStyle};

use crate::alphazero::run::metrics::StageRecord;
use crate::core::progress::{ProgressSink, TaskView};

/// A progress bar on stderr, hidden when `show` is false or stderr is not a terminal.
pub fn progress_bar(len: u64, unit: &str, show: bool) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    let template = format!(
        "{{spinner}} [{{elapsed_precise}}] {{bar:40}} {{pos}}/{{len}} {unit} ({{per_sec}}, eta {{eta}}) {{msg}}"
    );
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Prints a serializable value as one JSON line.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string(value)?);
    Ok(())
}

/// Shows the library's tasks as indicatif progress bars on stderr (hidden when stderr is not
/// a terminal).
pub(super) struct ProgressBars;

impl ProgressSink for ProgressBars {
    fn task(&self, len: u64, unit: &str) -> Box<dyn TaskView> {
        Box::new(progress_bar(len, unit, true))
    }
    fn warn(&self, message: &str) {
        eprintln!("warning: {message}");
    }
}

impl TaskView for ProgressBar {
    fn set_position(&self, position: u64) {
        ProgressBar::set_position(self, position);
    }
    fn inc(&self, steps: u64) {
        ProgressBar::inc(self, steps);
    }
    fn set_message(&self, message: String) {
        ProgressBar::set_message(self, message);
    }
    fn finish(&self) {
        self.finish_and_clear();
    }
    fn abandon(&self) {
        ProgressBar::abandon(self);
    }
}

/// One line for people about a finished stage of the cycle.
pub fn describe_stage(record: &StageRecord) -> String {
    match record {
        StageRecord::SelfPlay(r) => {
            let mut s = format!(
                "iteration {}: self-play {} games, {} positions in {:.0} s ({:.0} positions/s, {:.0} evals/s, batch {:.0}, cache hits {:.0}%)",
                r.iteration, r.games, r.positions, r.seconds, r.positions_per_s, r.nn_evals_per_s,
                r.mean_batch, 100.0 * r.cache_hit_rate
            );
            if let Some(results) = r.results {
                let [won, drew, lost] = results.percentages();
                s.push_str(&format!(
                    "; the first player won {won}%, drew {drew}%, lost {lost}%"
                ));
            }
            s
        }
        StageRecord::Train(r) => format!(
            "iteration {}: trained {} steps on {} positions in {:.0} s (policy loss {:.3}, value loss {:.3})",
            r.iteration, r.steps, r.samples, r.seconds, r.policy_loss, r.value_loss
        ),
        StageRecord::Evaluate(r) => {
            let mut s = match r.score_vs_best {
                Some(score) => format!(
                    "iteration {}: latest scored {:.1}% against best: {} (best is generation {})",
                    r.iteration,
                    100.0 * score,
                    if r.promoted { "promoted" } else { "kept the old best" },
                    r.generation
                ),
                None => format!(
                    "iteration {}: latest is best, without a match (generation {})",
                    r.iteration, r.generation
                ),
            };
            if let Some(b) = &r.benchmark {
                let t = b.total;
                s.push_str(&format!(
                    "; best vs {}: {}-{}-{} (W-L-D)",
                    b.b, t.wins, t.losses, t.draws
                ));
            }
            let rate = |g: &Option<crate::arena::grading::GradeResult>| {
                g.as_ref()
                    .map(|g| format!("{:.1}% of {}", 100.0 * g.mistake_rate, g.positions))
            };
            if let (Some(net), Some(search)) = (rate(&r.grade_net), rate(&r.grade_search)) {
                s.push_str(&format!(
                    "; best's mistakes on the evaluation set: {net} alone, {search} with search"
                ));
            }
            s
        }
    }
}

/// "win", "draw" or "loss": an exact value of 1, 0 or -1 for the player to move (`zero review`'s
/// and `zero accuracy --mistakes`' words).
pub fn value_word(value: i32) -> &'static str {
    match value.signum() {
        1 => "win",
        0 => "draw",
        _ => "loss",
    }
}
