//! `zero play`: a person against a player, in the terminal.

use super::player_args::PlayerArgs;
use anyhow::Result;

use crate::agent::Agent;
use crate::arena::play_game;
use crate::catalog::Catalogued;
use crate::core::rng::mix64;
use crate::games::{Game, GameKind, Move};
use crate::players::{HumanAgent, PlayerSpec};

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
    #[command(flatten)]
    net: PlayerArgs,
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn run(args: Args) -> Result<()> {
    crate::with_board_game!(args.game, G => run_for::<G>(&args))
}

/// The opponent, saying after each of its moves what its search thought (for players that
/// search).
struct Narrated<G: Game> {
    inner: Box<dyn Agent<G>>,
}

impl<G: Game> Agent<G> for Narrated<G> {
    fn new_game(&mut self, seed: u64) {
        self.inner.new_game(seed);
    }
    fn choose(&mut self, pos: &G) -> Result<Move> {
        let m = self.inner.choose(pos)?;
        if let Some(a) = self.inner.analysis() {
            let top: Vec<String> = a
                .moves
                .iter()
                .take(3)
                .map(|&(m, share)| format!("{} ({:.0}%)", pos.format_move(m), 100.0 * share))
                .collect();
            eprintln!(
                "model: value {:+.2} for itself (expected score {:.0}%, draws half), top moves {}",
                a.value,
                50.0 * (a.value + 1.0),
                top.join(", ")
            );
        }
        Ok(m)
    }
    fn observe(&mut self, before: &G, m: Move) {
        self.inner.observe(before, m);
    }
    fn game_over(&mut self, pos: &G) {
        self.inner.game_over(pos);
    }
}

fn run_for<G: Catalogued>(args: &Args) -> Result<()> {
    let ctx = args.net.context(G::NAME)?;
    let mut opponent = Narrated {
        inner: args.against.build::<G>(&ctx)?,
    };
    if let Some(line) = args.against.describe_play(&ctx)? {
        println!("{line}");
    }
    let mut human = HumanAgent::stdio();
    opponent.new_game(mix64(args.seed));
    if args.second {
        play_game::<G>(&mut opponent, &mut human, &G::new())?;
    } else {
        play_game::<G>(&mut human, &mut opponent, &G::new())?;
    }
    Ok(())
}
