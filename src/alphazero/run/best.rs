//! The run's `best` network made sure of before a stage uses it: the random generation 0 of a
//! new run, or an existing one of the run's shape.

use anyhow::{bail, Result};

use super::paths::RunPaths;
use crate::alphazero::config::RunConfig;
use crate::games::Game;
use crate::nn::{default_device, Net, Shape};

/// Creates the random generation-0 network as `best` (and `latest`) if there is none.
/// An existing `best` must have the run's network shape: `run.json`'s `arch` edited after the
/// run started would otherwise be ignored without a word (the networks keep the shape they
/// were made with).
pub fn ensure_best<G: Game>(cfg: &RunConfig, paths: &RunPaths) -> Result<()> {
    if paths.best().exists() {
        let made = Net::read_meta(&paths.best())?.arch;
        if made != cfg.net.arch {
            bail!(
                "{} is a {made} network, but {} asks for {}: a run keeps the network shape it \
                 started with; start another run (other --models/--data directories) for {}",
                paths.best().display(),
                paths.config().display(),
                cfg.net.arch,
                cfg.net.arch
            );
        }
        return Ok(());
    }
    let mut net = Net::new_seeded(
        G::NAME,
        cfg.net.arch,
        Shape::of::<G>(),
        default_device(),
        cfg.seed,
    )?;
    net.meta.config = serde_json::to_value(cfg)?;
    net.save(&paths.latest())?;
    net.save(&paths.best())?;
    Ok(())
}
