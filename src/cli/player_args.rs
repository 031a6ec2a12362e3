//! Arguments shared by the subcommands that build players (arena, play, grade, accuracy): how
//! network players (`best`, `latest`, `model:`) search, and where `best` and `latest` live.

use std::path::PathBuf;

use crate::players::BuildContext;
use crate::search::mcts::SearchKind;

#[derive(clap::Args, Debug, Clone)]
pub struct PlayerArgs {
    /// Simulations per move for network players (0: the network alone, its most likely move).
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
}

impl PlayerArgs {
    /// What building players of `game` needs from these arguments.
    pub fn context(&self, game: &str) -> BuildContext {
        BuildContext {
            models_dir: self.models.join(game),
            sims: self.sims,
            search: self.search,
            symmetries: self.symmetries,
            ..BuildContext::default()
        }
    }
}
