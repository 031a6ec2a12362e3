//! `zero cycle`: self-play, training and evaluation in a loop.

use anyhow::Result;

use crate::games::GameKind;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, value_enum, default_value_t = GameKind::Connect4)]
    game: GameKind,
    /// Number of iterations of self-play, training and evaluation.
    #[arg(long, default_value_t = 15)]
    iterations: u32,
}

pub fn run(args: Args) -> Result<()> {
    anyhow::bail!(
        "the self-play pipeline is not built yet (issue 4); `zero cycle --game {} --iterations {}` \
         will train a model once it is. Meanwhile try `zero arena`, `zero perft` or `zero info`.",
        args.game,
        args.iterations
    )
}
