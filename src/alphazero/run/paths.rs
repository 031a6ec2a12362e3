//! Where a run keeps its files: `models/<game>/` (networks, state, settings, metrics) and
//! `data/<game>/` (self-play records).

use std::path::{Path, PathBuf};

#[derive(Clone, Debug)]
pub struct RunPaths {
    /// `models/<game>`: best, latest, state, config, metrics.
    pub models: PathBuf,
    /// `data/<game>`: self-play records.
    pub data: PathBuf,
}

impl RunPaths {
    pub fn new(models_root: &Path, data_root: &Path, game: &str) -> RunPaths {
        RunPaths {
            models: models_root.join(game),
            data: data_root.join(game),
        }
    }
    pub fn best(&self) -> PathBuf {
        self.models.join("best.safetensors")
    }
    pub fn latest(&self) -> PathBuf {
        self.models.join("latest.safetensors")
    }
    /// Which stage of which iteration comes next.
    pub fn state(&self) -> PathBuf {
        self.models.join("state.json")
    }
    /// The run's settings, fixed when it starts.
    pub fn config(&self) -> PathBuf {
        self.models.join("run.json")
    }
    pub fn metrics(&self) -> PathBuf {
        self.models.join("metrics.jsonl")
    }
    /// The training stage's state: saved while it runs and when it ends, replaced by the next
    /// iteration's.
    pub fn train_checkpoint(&self) -> PathBuf {
        self.models.join("train-checkpoint.safetensors")
    }
    /// The last evaluation's match and what best was before it, saved before any promotion,
    /// so that an evaluation resumed after a crash decides as the first one did.
    pub fn evaluation(&self) -> PathBuf {
        self.models.join("evaluation.json")
    }
}
