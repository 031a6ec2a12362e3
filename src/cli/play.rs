//! `zero play`: a person against a player, in the terminal. The board is drawn after every
//! move with the last stone marked (in colour where the terminal has it); while the opponent
//! thinks a line counts the seconds, and keys typed meanwhile are dropped rather than played
//! as the next move; after each of its moves it says what it played and what its search
//! thought. `undo` takes back the person's last move and the reply, `new` starts again,
//! `quit` (or the end of the input) stops with exit status 0. At the end the winning line is
//! marked and the game is printed as a position string (`zero solve` reads Connect Four's).

use std::io::{BufRead, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::player_args::PlayerArgs;
use super::terminal_board::{colour_wanted, draw, new_stones};
use crate::agent::{Agent, Analysis};
use crate::catalog::Catalogued;
use crate::core::rng::mix64;
use crate::games::{position_string, Game, GameKind, Move, Outcome, Player};
use crate::nn::{InferenceNet, Net, Shape};
use crate::players::{BuildContext, PlayerSpec};
use tch::Device;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, value_enum, default_value_t = GameKind::Connect4)]
    game: GameKind,
    /// The opponent [default: best, or pretrained before a run has trained a best].
    #[arg(long)]
    against: Option<PlayerSpec>,
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

fn run_for<G: Catalogued>(args: &Args) -> Result<()> {
    let ctx = args.net.context::<G>()?;
    let against = match &args.against {
        Some(spec) => spec.clone(),
        None => default_opponent(&ctx),
    };
    let engine = against.build::<G>(&ctx)?;
    let wdl_net = win_draw_loss_net::<G>(&against, &ctx)?;
    if let Some(line) = against.describe_play(&ctx)? {
        println!("{line}");
    }
    let mut table = Table::<G> {
        engine,
        engine_name: against.to_string(),
        person: if args.second {
            Player::Second
        } else {
            Player::First
        },
        seed: args.seed,
        game: 0,
        moves: Vec::new(),
        engine_in_step: false,
        colour: colour_wanted(std::io::stdout().is_terminal()),
        wdl_net,
    };
    let stdin = std::io::stdin();
    let mut input = Keyboard {
        lines: stdin.lock(),
        terminal: std::io::stdin().is_terminal(),
    };
    table.play(&mut input, &mut std::io::stdout())
}

/// A copy of the opponent's network where it has a win/draw/loss head, to say what it
/// predicts beside its search's expected score.
fn win_draw_loss_net<G: Catalogued>(
    spec: &PlayerSpec,
    ctx: &BuildContext,
) -> Result<Option<InferenceNet>> {
    let Some(path) = spec.weights(ctx) else {
        return Ok(None);
    };
    let net = Net::load(&path, G::NAME, Shape::of::<G>(), Device::Cpu)?;
    if !net.meta.arch.has_wdl_head() {
        return Ok(None);
    }
    Ok(Some(InferenceNet::new(&net)?))
}

/// `best` where a run has trained one, else the network shipped with the program where the game
/// has one (said, so that nobody takes it for their own run's).
fn default_opponent(ctx: &BuildContext) -> PlayerSpec {
    let best = PlayerSpec::Best;
    match best.weights(ctx) {
        Some(path) if !path.exists() && ctx.pretrained.is_some() => {
            println!(
                "No trained best at {}: playing the network shipped with zero (pretrained).",
                path.display()
            );
            PlayerSpec::Pretrained
        }
        _ => best,
    }
}

/// What a person typed at the prompt.
#[derive(Debug, PartialEq, Eq)]
enum Command {
    Play(Move),
    Undo,
    New,
    Quit,
}

/// The person's keyboard: lines, with what was typed ahead dropped before each prompt.
struct Keyboard<R: BufRead> {
    lines: R,
    terminal: bool,
}

impl<R: BufRead> Keyboard<R> {
    /// The next line; `None` at the end of the input.
    fn read_line(&mut self) -> Result<Option<String>> {
        if self.terminal {
            // Keys pressed while the opponent thought are not an answer to this prompt.
            // SAFETY: tcflush only discards the terminal's pending input on descriptor 0.
            unsafe {
                libc::tcflush(0, libc::TCIFLUSH);
            }
        }
        let mut line = String::new();
        Ok(match self.lines.read_line(&mut line)? {
            0 => None,
            _ => Some(line.trim().to_string()),
        })
    }
}

/// One person's session against one opponent: the game so far and whose turn it is.
struct Table<G: Game> {
    engine: Box<dyn Agent<G>>,
    engine_name: String,
    person: Player,
    seed: u64,
    /// Games started, counting the one in play.
    game: u64,
    moves: Vec<Move>,
    /// Whether the opponent has seen every move of `moves` (false after `undo` and `new`).
    engine_in_step: bool,
    colour: bool,
    /// The opponent's network, where it predicts win, draw and loss.
    wdl_net: Option<InferenceNet>,
}

impl<G: Catalogued> Table<G> {
    fn play<R: BufRead>(&mut self, keys: &mut Keyboard<R>, out: &mut dyn Write) -> Result<()> {
        loop {
            let pos = self.position();
            let command = if pos.outcome().is_some() {
                self.show_result(&pos, out)?;
                self.ask(keys, out, &pos, "'new' for another game, 'undo' or 'quit'")?
            } else if pos.to_move() == self.person {
                self.show_board(&pos, out)?;
                let legal: Vec<String> = pos
                    .legal_moves()
                    .iter()
                    .map(|&m| pos.format_move(m))
                    .collect();
                let prompt = format!(
                    "Your move as {} ({}; or 'undo', 'new', 'quit')",
                    G::SIDES[self.person.index()].mark,
                    legal.join(" ")
                );
                self.ask(keys, out, &pos, &prompt)?
            } else {
                self.engine_moves(&pos, out)?;
                continue;
            };
            match command {
                Command::Play(m) => self.push(&pos, m),
                Command::Undo => self.undo(),
                Command::New => {
                    self.moves.clear();
                    self.game += 1;
                    self.engine_in_step = false;
                    writeln!(out, "\nA new game.")?;
                }
                Command::Quit => return Ok(()),
            }
        }
    }

    fn position(&self) -> G {
        let mut pos = G::new();
        for &m in &self.moves {
            pos.play(m);
        }
        pos
    }

    fn push(&mut self, pos: &G, m: Move) {
        if self.engine_in_step {
            self.engine.observe(pos, m);
        }
        self.moves.push(m);
    }

    /// Takes back the person's last move and everything played after it.
    fn undo(&mut self) {
        let mut pos = G::new();
        let mut last_own = None;
        for (i, &m) in self.moves.iter().enumerate() {
            if pos.to_move() == self.person {
                last_own = Some(i);
            }
            pos.play(m);
        }
        if let Some(i) = last_own {
            self.moves.truncate(i);
            self.engine_in_step = false;
        }
    }

    /// Asks until the person types a legal move or a command.
    fn ask<R: BufRead>(
        &self,
        keys: &mut Keyboard<R>,
        out: &mut dyn Write,
        pos: &G,
        prompt: &str,
    ) -> Result<Command> {
        loop {
            write!(out, "{prompt}: ")?;
            out.flush()?;
            let Some(line) = keys.read_line()? else {
                writeln!(out)?;
                return Ok(Command::Quit);
            };
            match parse_command(pos, &line) {
                Ok(c) => return Ok(c),
                Err(why) => writeln!(out, "{why}")?,
            }
        }
    }

    /// The opponent's move, with a clock while it thinks and its analysis after.
    fn engine_moves(&mut self, pos: &G, out: &mut dyn Write) -> Result<()> {
        if !self.engine_in_step {
            self.engine
                .new_game(mix64(self.seed.wrapping_add(self.game)));
            let mut replay = G::new();
            for &m in &self.moves {
                self.engine.observe(&replay, m);
                replay.play(m);
            }
            self.engine_in_step = true;
        }
        let started = Instant::now();
        let m = thinking(&self.engine_name, std::io::stderr().is_terminal(), || {
            self.engine.choose(pos)
        })?;
        let seconds = started.elapsed().as_secs_f64();
        if !pos.is_legal(m) {
            anyhow::bail!(
                "{} chose the illegal move {}",
                self.engine_name,
                pos.format_move(m)
            );
        }
        let mut report = engine_report(pos, &self.engine_name, m, seconds, self.engine.analysis());
        if let Some(net) = &self.wdl_net {
            let mut inputs = vec![0.0; G::input_size()];
            pos.encode(&mut inputs);
            if let Some([w, d, l]) = net.win_draw_loss(&inputs)? {
                report.push_str(&format!(
                    "; its network: win {:.0}%, draw {:.0}%, loss {:.0}%",
                    100.0 * w,
                    100.0 * d,
                    100.0 * l
                ));
            }
        }
        writeln!(out, "\n{report}")?;
        self.push(pos, m);
        Ok(())
    }

    fn show_board(&self, pos: &G, out: &mut dyn Write) -> Result<()> {
        let marked = match self.moves.split_last() {
            Some((_, earlier)) => {
                let mut before = G::new();
                earlier.iter().for_each(|&m| before.play(m));
                new_stones(&before, pos)
            }
            None => Vec::new(),
        };
        writeln!(out, "\n{}", draw(pos, &marked, self.colour))?;
        Ok(())
    }

    fn show_result(&mut self, pos: &G, out: &mut dyn Write) -> Result<()> {
        if self.engine_in_step {
            self.engine.game_over(pos);
        }
        writeln!(out, "\n{}", draw(pos, &pos.winning_cells(), self.colour))?;
        let verdict = match pos.outcome() {
            Some(Outcome::Win(p)) if p == self.person => "You win.".to_string(),
            Some(Outcome::Win(_)) => format!("{} wins.", self.engine_name),
            _ => "A draw.".to_string(),
        };
        let line = position_string::<G>(&self.moves);
        writeln!(out, "{verdict} The game as a position: {line}")?;
        Ok(())
    }
}

/// A typed line as a command or a legal move; otherwise why not.
fn parse_command<G: Catalogued>(pos: &G, line: &str) -> Result<Command, String> {
    match line.to_ascii_lowercase().as_str() {
        "quit" | "q" | "exit" => return Ok(Command::Quit),
        "undo" | "u" => return Ok(Command::Undo),
        "new" | "n" => return Ok(Command::New),
        "" => return Err("type a move or a command".to_string()),
        _ => {}
    }
    if pos.outcome().is_some() {
        return Err("the game is over: 'new', 'undo' or 'quit'".to_string());
    }
    match pos.parse_move(line) {
        Ok(m) if pos.is_legal(m) => Ok(Command::Play(m)),
        Ok(m) => Err(pos.refusal(m)),
        Err(e) => Err(e.to_string()),
    }
}

/// Runs `choose`, showing on stderr how long it has been thinking: a line counting the seconds
/// on a terminal, else one line.
fn thinking(name: &str, clock: bool, choose: impl FnOnce() -> Result<Move>) -> Result<Move> {
    if !clock {
        eprintln!("{name} is thinking ...");
        return choose();
    }
    let done = AtomicBool::new(false);
    let started = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                eprint!(
                    "\r{name} is thinking ... {:.0} s",
                    started.elapsed().as_secs_f64()
                );
                std::thread::sleep(Duration::from_millis(200));
            }
            eprint!("\r\x1b[2K");
        });
        let m = choose();
        done.store(true, Ordering::Relaxed);
        m
    })
}

/// "best played 4 in 1.2 s: value +0.32 ..." for a move and what the search said of it.
fn engine_report<G: Game>(
    pos: &G,
    name: &str,
    m: Move,
    seconds: f64,
    analysis: Option<Analysis>,
) -> String {
    let mut line = format!("{name} played {} in {seconds:.1} s", pos.format_move(m));
    if let Some(a) = analysis {
        let top: Vec<String> = a
            .moves
            .iter()
            .take(3)
            .map(|&(m, share)| format!("{} ({:.0}%)", pos.format_move(m), 100.0 * share))
            .collect();
        line.push_str(&format!(
            ": value {:+.2} for itself (expected score {:.0}%, a draw counting half); \
             top moves {}",
            a.value,
            50.0 * (a.value + 1.0),
            top.join(", ")
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::RandomAgent;
    use crate::games::TicTacToe;

    fn session(input: &str, second: bool) -> String {
        let mut table = Table::<TicTacToe> {
            engine: Box::new(RandomAgent::new()),
            engine_name: "random".into(),
            person: if second {
                Player::Second
            } else {
                Player::First
            },
            seed: 1,
            game: 0,
            moves: Vec::new(),
            engine_in_step: false,
            colour: false,
            wdl_net: None,
        };
        let mut keys = Keyboard {
            lines: input.as_bytes(),
            terminal: false,
        };
        let mut out = Vec::new();
        table.play(&mut keys, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn quit_and_the_end_of_the_input_stop_without_an_error() {
        assert!(session("quit\n", false).contains("Your move as X"));
        assert!(session("", false).contains("Your move as X"));
    }

    #[test]
    fn garbled_and_illegal_input_is_refused_and_asked_again() {
        let out = session("zz\n5\n5\nquit\n", false);
        assert!(out.contains("a tic-tac-toe move is"), "{out}");
        assert!(out.contains("5 is"), "{out}");
    }

    #[test]
    fn undo_takes_back_the_persons_move_and_the_reply() {
        let mut table = Table::<TicTacToe> {
            engine: Box::new(RandomAgent::new()),
            engine_name: "random".into(),
            person: Player::First,
            seed: 1,
            game: 0,
            moves: vec![4, 0, 8, 2],
            engine_in_step: true,
            colour: false,
            wdl_net: None,
        };
        table.undo();
        assert_eq!(table.moves, vec![4, 0]);
        table.undo();
        assert!(table.moves.is_empty());
        table.undo();
        assert!(table.moves.is_empty());
    }

    #[test]
    fn a_finished_game_is_shown_with_its_line_and_its_position_string() {
        // The person plays 1, 2, 3 whatever the opponent does, unless it blocks; then quits.
        let out = session("5\n1\n9\n3\n7\n2\n4\n6\n8\nquit\n", false);
        assert!(out.contains("The game as a position: "), "{out}");
        let line = out
            .lines()
            .find_map(|l| l.split("The game as a position: ").nth(1))
            .unwrap();
        let pos = TicTacToe::parse_position(line).unwrap();
        assert!(pos.outcome().is_some());
    }

    #[test]
    fn commands_are_read_before_moves() {
        let pos = TicTacToe::new();
        assert_eq!(parse_command(&pos, "UNDO"), Ok(Command::Undo));
        assert_eq!(parse_command(&pos, "n"), Ok(Command::New));
        assert_eq!(parse_command(&pos, "q"), Ok(Command::Quit));
        assert_eq!(parse_command(&pos, "9"), Ok(Command::Play(8)));
        assert!(parse_command(&pos, "").is_err());
    }
}
