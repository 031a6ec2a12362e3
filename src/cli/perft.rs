//! `zero perft`: move-sequence and position counts, the standard check of move generation.

use anyhow::Result;

use crate::games::{perft, GameKind};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, value_enum, default_value_t = GameKind::Connect4)]
    game: GameKind,
    /// Plies to count.
    #[arg(long, default_value_t = 8)]
    depth: usize,
    /// Print the rows as a JSON array.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let rows = crate::with_board_game!(args.game, G => perft::<G>(args.depth));
    if args.json {
        return super::print_json(&rows);
    }
    println!("{:>4} {:>14} {:>12}", "ply", "sequences", "positions");
    for r in rows {
        println!("{:>4} {:>14} {:>12}", r.ply, r.sequences, r.positions);
    }
    Ok(())
}
