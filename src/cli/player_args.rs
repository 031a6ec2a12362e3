//! Arguments shared by the subcommands that build players (arena, play, grade, accuracy): how
//! network players (`best`, `latest`, `pretrained`, `model:`) search, where `best` and `latest` live, and
//! where the Connect Four solver keeps its opening book and cache.

use std::path::PathBuf;

use anyhow::{bail, Result};

use crate::catalog::{pretrained_model, Catalogued};
use crate::core::limits::{at_most, MAX_SIMS};
use crate::players::{default_solver_dir, BuildContext};
use crate::search::mcts::SearchKind;

#[derive(clap::Args, Debug, Clone)]
pub struct PlayerArgs {
    /// Simulations per move for network players (0: the network alone, its most likely move;
    /// at most 10,000,000).
    #[arg(long)]
    pub sims: Option<u32>,
    /// The tree search of network players: puct (AlphaZero) or gumbel (Gumbel AlphaZero).
    /// Default: the search the network's run trained with (its run.json; puct without one).
    #[arg(long)]
    pub search: Option<SearchKind>,
    /// Network players average the network over the game's symmetries (Connect Four: the
    /// position and its mirror image), at one evaluation per symmetry.
    #[arg(long)]
    pub symmetries: bool,
    /// Where `best` and `latest` are found.
    #[arg(long, default_value = "models")]
    pub models: PathBuf,
    /// Where the Connect Four solver keeps its opening book and the cache of positions it
    /// solved (`zero solve --data`) [default: data/connect4 where it exists, else connect4 in
    /// the cache folder, ~/.cache/zero/connect4]. The book built into the binary stands in
    /// for one the folder lacks.
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
}

impl PlayerArgs {
    /// What building players of `game` needs from these arguments.
    /// Fails on a `--data` directory that does not exist: a mistyped path must not silently
    /// become minutes of solving without the book.
    pub fn context<G: Catalogued>(&self) -> Result<BuildContext> {
        if let Some(n) = self.sims {
            at_most("--sims", n as u64, MAX_SIMS)?;
        }
        let solver_dir = match &self.data {
            Some(dir) if !dir.is_dir() => {
                bail!("--data {}: no such directory", dir.display())
            }
            Some(dir) => dir.clone(),
            None => default_solver_dir(),
        };
        Ok(BuildContext {
            models_dir: self.models.join(G::NAME),
            pretrained: pretrained_model::<G>()?,
            sims: self.sims,
            search: self.search,
            symmetries: self.symmetries,
            solver_dir,
            ..BuildContext::default()
        })
    }
}
