//! Training's checkpoint: the network, Adam's moments and the step reached, saved every so often and on Ctrl-C, so that an interrupted stage resumes at the
//! step it reached and ends with exactly the weights of an uninterrupted one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use tch::Tensor;

use super::adam::Adam;
use crate::core::files::write_atomic;
use crate::nn::tensors::{from_safetensors_bytes, to_safetensors_bytes};
use crate::nn::Net;

/// Where and how often training saves its state, so that an interrupted stage resumes at the
/// step it reached instead of starting over.
#[derive(Clone, Debug)]
pub struct Checkpointing {
    /// The checkpoint file (`.safetensors`: weights, Adam's moments, step and running losses).
    pub path: PathBuf,
    /// Iteration the training belongs to: a checkpoint of another iteration is ignored.
    pub iteration: u32,
    /// Seconds between saves (a crash loses at most this much work; Ctrl-C loses none).
    pub every_seconds: f64,
    /// Stop with an error right after the save at this step (tests simulate an interruption).
    pub stop_after: Option<u64>,
}

/// Set by the Ctrl-C handler that training installs while it runs.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// While alive, Ctrl-C (SIGINT) asks training to save a checkpoint and stop; afterwards the
/// previous behaviour (terminate) is back. A process that ignores SIGINT (started by `nohup`,
/// or in the background by a non-interactive shell) goes on ignoring it: the guard then
/// installs nothing, so that such a run behaves the same in every stage.
pub(super) struct InterruptGuard {
    /// The disposition to put back; `None` when nothing was installed.
    previous: Option<libc::sighandler_t>,
}

impl InterruptGuard {
    pub(super) fn install() -> InterruptGuard {
        INTERRUPTED.store(false, Ordering::SeqCst);
        if sigint_ignored() {
            return InterruptGuard { previous: None };
        }
        let handler = on_interrupt as extern "C" fn(libc::c_int);
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        let previous = unsafe { libc::signal(libc::SIGINT, handler as libc::sighandler_t) };
        InterruptGuard {
            previous: Some(previous),
        }
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        if let Some(previous) = self.previous {
            // SAFETY: puts back the handler that was there before `install`.
            unsafe { libc::signal(libc::SIGINT, previous) };
        }
    }
}

/// Whether this process ignores SIGINT (asked without changing it).
fn sigint_ignored() -> bool {
    // SAFETY: a null new action only reads the current one into `current`.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGINT, std::ptr::null(), &mut current) == 0
            && current.sa_sigaction == libc::SIG_IGN
    }
}

/// Training progress that a checkpoint keeps.
#[derive(Default)]
pub(super) struct Progress {
    pub step: u64,
    pub policy_avg: f64,
    pub value_avg: f64,
}

impl Progress {
    /// Counts a step and folds its losses into the running averages (the first step's losses
    /// start them).
    pub(super) fn record(&mut self, losses: Losses) {
        let k = if self.step == 0 { 1.0 } else { 0.05 };
        self.policy_avg += k * (losses.policy - self.policy_avg);
        self.value_avg += k * (losses.value - self.value_avg);
        self.step += 1;
    }
}

/// One step's losses before its update.
#[derive(Clone, Copy)]
pub(super) struct Losses {
    pub policy: f64,
    pub value: f64,
}

impl Losses {
    pub(super) fn are_finite(&self) -> bool {
        self.policy.is_finite() && self.value.is_finite()
    }
}

pub(super) fn save_checkpoint(
    ck: &Checkpointing,
    net: &Net,
    adam: &Adam,
    at: &Progress,
) -> Result<()> {
    let scalar = |x: f64| Tensor::f_from_slice(&[x]);
    let mut named: Vec<(String, Tensor)> = net
        .vs
        .variables()
        .into_iter()
        .map(|(n, t)| (format!("net.{n}"), t))
        .collect();
    for (((n, _), m), v) in adam.vars.iter().zip(&adam.m).zip(&adam.v) {
        named.push((format!("adam_m.{n}"), m.shallow_clone()));
        named.push((format!("adam_v.{n}"), v.shallow_clone()));
    }
    named.push(("state.iteration".into(), scalar(ck.iteration as f64)?));
    named.push(("state.step".into(), scalar(at.step as f64)?));
    named.push(("state.adam_t".into(), scalar(adam.t as f64)?));
    named.push(("state.policy_avg".into(), scalar(at.policy_avg)?));
    named.push(("state.value_avg".into(), scalar(at.value_avg)?));
    let bytes = to_safetensors_bytes(&named, None)
        .with_context(|| format!("cannot save the training checkpoint {}", ck.path.display()))?;
    write_atomic(&ck.path, &bytes)
}

/// A checkpoint file's tensors by name, read whole.
struct CheckpointFile<'a> {
    path: &'a Path,
    map: HashMap<String, Tensor>,
}

impl CheckpointFile<'_> {
    /// The file at `path`; `None` if there is none.
    fn read(path: &Path) -> Result<Option<CheckpointFile<'_>>> {
        if !path.exists() {
            return Ok(None);
        }
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let mut file = CheckpointFile {
            path,
            map: HashMap::new(),
        };
        let (named, _) = from_safetensors_bytes(&bytes).map_err(|e| file.bad(&e.to_string()))?;
        file.map = named.into_iter().collect();
        Ok(Some(file))
    }

    fn bad(&self, why: &str) -> anyhow::Error {
        anyhow!(
            "the training checkpoint {} is unusable ({why}); delete it to train this stage from the start",
            self.path.display()
        )
    }

    fn scalar(&self, key: &str) -> Result<f64> {
        let t = self
            .map
            .get(key)
            .ok_or_else(|| self.bad(&format!("no {key}")))?;
        t.f_double_value(&[0])
            .map_err(|e| self.bad(&format!("{key}: {e}")))
    }

    /// Copies the tensor `key` into `dst`. It must be there with the shape it has here (a
    /// checkpoint of another network shape is refused rather than broadcast into this one).
    fn restore(&self, dst: &mut Tensor, key: String) -> Result<()> {
        let src = self
            .map
            .get(&key)
            .ok_or_else(|| self.bad(&format!("no {key}")))?;
        if src.size() != dst.size() {
            return Err(self.bad(&format!(
                "{key} has shape {:?}, this network needs {:?}",
                src.size(),
                dst.size()
            )));
        }
        tch::no_grad(|| dst.f_copy_(src)).map_err(|e| self.bad(&e.to_string()))
    }

    /// Adam's moments and its step count.
    fn restore_moments(&self, adam: &mut Adam) -> Result<()> {
        for (((n, _), m), v) in adam.vars.iter().zip(&mut adam.m).zip(&mut adam.v) {
            self.restore(m, format!("adam_m.{n}"))?;
            self.restore(v, format!("adam_v.{n}"))?;
        }
        adam.t = self.scalar("state.adam_t")? as u64;
        Ok(())
    }
}

/// Restores a checkpoint of this iteration into `net` and `adam`; `None` if there is none
/// (or it belongs to another iteration).
pub(super) fn load_checkpoint(
    ck: &Checkpointing,
    net: &mut Net,
    adam: &mut Adam,
) -> Result<Option<Progress>> {
    let Some(file) = CheckpointFile::read(&ck.path)? else {
        return Ok(None);
    };
    if file.scalar("state.iteration")? as u32 != ck.iteration {
        return Ok(None);
    }
    for (n, mut t) in net.vs.variables() {
        file.restore(&mut t, format!("net.{n}"))?;
    }
    file.restore_moments(adam)?;
    Ok(Some(Progress {
        step: file.scalar("state.step")? as u64,
        policy_avg: file.scalar("state.policy_avg")?,
        value_avg: file.scalar("state.value_avg")?,
    }))
}

/// Saves a checkpoint after Ctrl-C, at the step a test stops at, or when the last save is
/// `every_seconds` old (never after the last step: training is done then). After Ctrl-C or
/// the test's stop, returns the error to stop with.
pub(super) fn maybe_checkpoint(
    ck: &Checkpointing,
    net: &Net,
    adam: &Adam,
    at: &Progress,
    steps: u64,
    last_save: &mut Instant,
) -> Result<Option<anyhow::Error>> {
    let interrupted = INTERRUPTED.load(Ordering::SeqCst);
    let stop = ck.stop_after == Some(at.step);
    let due = last_save.elapsed().as_secs_f64() >= ck.every_seconds;
    if !(interrupted || stop || due) || at.step >= steps {
        return Ok(None);
    }
    save_checkpoint(ck, net, adam, at)?;
    *last_save = Instant::now();
    Ok((interrupted || stop).then(|| {
        anyhow!(
            "training interrupted at step {} of {steps}; saved in {}: run the same command again to continue",
            at.step,
            ck.path.display()
        )
    }))
}
