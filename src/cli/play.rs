//! `zero play`: a person against a player, in the terminal.

use anyhow::Result;

use crate::arena::play_game;
use crate::games::{mix64, GameKind};
use crate::players::{BuildContext, HumanAgent, Playable, PlayerSpec};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, value_enum, default_value_t = GameKind::Connect4)]
    game: GameKind,
    /// The opponent.
    #[arg(long, default_value = "best")]
    against: PlayerSpec,
    /// Let the opponent move first.
    #[arg(long)]
    second: bool,
    /// Simulations per move for network players.
    #[arg(long)]
    sims: Option<u32>,
    #[arg(long, default_value = "models")]
    models: std::path::PathBuf,
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn run(args: Args) -> Result<()> {
    crate::with_board_game!(args.game, G => run_for::<G>(&args))
}

fn run_for<G: Playable>(args: &Args) -> Result<()> {
    let ctx = BuildContext {
        models_dir: args.models.join(G::NAME),
        sims: args.sims,
        random_plies: 0,
        verbose: true,
    };
    let mut opponent = args.against.build::<G>(&ctx)?;
    let mut human = HumanAgent::stdio();
    opponent.new_game(mix64(args.seed));
    if args.second {
        play_game::<G>(opponent.as_mut(), &mut human, &G::new())?;
    } else {
        play_game::<G>(&mut human, opponent.as_mut(), &G::new())?;
    }
    Ok(())
}
