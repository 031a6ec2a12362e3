//! Networks shipped with the program: a game's catalog entry may carry a trained network (the
//! `pretrained/<game>/` folder of the repository, compiled into the binary), so that a fresh
//! clone or a copied binary has a strong opponent before any training run. The player
//! `pretrained` plays it ([`super::pretrained_model`]). It is written out once to a per-user cache, beside the `run.json` of
//! the run that made it, so that every command that takes a network file (and the search its
//! run trained with) takes it as it takes `best`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::core::cache_dir::cache_root;
use crate::core::files::write_atomic;

/// A network shipped with the program: its model file and its run's settings.
#[derive(Clone, Copy, Debug)]
pub struct Pretrained {
    /// The model file's bytes (safetensors, as `zero cycle` saves `best`).
    pub model: &'static [u8],
    /// The `run.json` of the run that trained it.
    pub run: &'static [u8],
}

/// The network of the repository's `pretrained/<game>/` folder, compiled in: what a catalog
/// entry's `pretrained()` returns for a game that ships one (scripts/pretrain makes it).
#[macro_export]
macro_rules! shipped_network {
    ($game:literal) => {
        Some($crate::catalog::Pretrained {
            model: include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/pretrained/",
                $game,
                "/best.safetensors"
            )),
            run: include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/pretrained/",
                $game,
                "/run.json"
            )),
        })
    };
}

/// The model file of `shipped`, game `game`'s network, written to the cache on first use (the
/// `run.json` beside it); `None` where the game ships none.
pub fn written_out(game: &str, shipped: Option<Pretrained>) -> Result<Option<PathBuf>> {
    written_out_in(&cache_root(), game, shipped)
}

fn written_out_in(
    cache: &Path,
    game: &str,
    shipped: Option<Pretrained>,
) -> Result<Option<PathBuf>> {
    let Some(shipped) = shipped else {
        return Ok(None);
    };
    let dir = cache.join(format!(
        "pretrained/{game}-{:08x}",
        crc32fast::hash(shipped.model) ^ crc32fast::hash(shipped.run)
    ));
    let model = dir.join("best.safetensors");
    write_once(&dir.join("run.json"), shipped.run)?;
    write_once(&model, shipped.model)?;
    Ok(Some(model))
}

/// Writes `bytes` to `path` unless it already holds them.
fn write_once(path: &Path, bytes: &[u8]) -> Result<()> {
    if std::fs::read(path).is_ok_and(|held| held == bytes) {
        return Ok(());
    }
    write_atomic(path, bytes)
        .with_context(|| format!("cannot write the shipped network to {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shipped_network_is_written_once_beside_its_run_settings() {
        let dir = tempfile::tempdir().unwrap();
        let shipped = Pretrained {
            model: b"weights",
            run: b"{}",
        };
        let path = written_out_in(dir.path(), "toy", Some(shipped))
            .unwrap()
            .unwrap();
        assert!(path.starts_with(dir.path()));
        assert_eq!(
            std::fs::read(path.with_file_name("run.json")).unwrap(),
            b"{}"
        );
        let written = std::fs::metadata(&path).unwrap().modified().unwrap();
        assert_eq!(
            written_out_in(dir.path(), "toy", Some(shipped)).unwrap(),
            Some(path.clone())
        );
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            written
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"weights");
        assert!(written_out_in(dir.path(), "toy", None).unwrap().is_none());
    }
}
