//! The catalog: what the program knows of each board game beyond its rules, stated once per
//! game in a file of this folder ([`Catalogued`]: its title, sides, board, exact solver,
//! evaluation set and preset family). The games themselves are the one list of
//! [`crate::board_game_list!`]; the command line, the presets, grading, the players, the
//! server, the page (through `/api/info`) and the test suites read their facts from here and
//! never switch on a game's name. docs/add-a-game.md says how to add a game.
//!
//! A layer between [`crate::arena`] (the evaluation sets it names) and
//! [`crate::alphazero`] (the presets that read its preset family).

mod connect4;
mod domineering;
mod othello4;
mod pretrained;
mod tictactoe;

pub use pretrained::Pretrained;

use std::path::Path;

use anyhow::Result;
use serde::Serialize;

use crate::agent::Agent;
use crate::arena::grading::{small_game_set, EvalSet, SMALL_SET_POSITIONS, SMALL_SET_SEED};
use crate::games::{position_string, Game, GameKind, Move, Player};
use crate::search::mcts::SearchKind;
use crate::solvers::exact::Exact;
use crate::solvers::exhaustive::{SolveTable, SolverAgent};

/// How a person picks a move on the board, and so how the page draws it. Move numbers follow
/// the board: with [`Layout::Cells`], move `i` puts a stone on cell `i` (top row first, left
/// to right); with [`Layout::Columns`], move `c` drops one in column `c`. A move past them (a
/// pass) is played by a button of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Click a column (Connect Four); the stone falls to the lowest empty cell.
    Columns,
    /// Click a cell (tic-tac-toe, Othello).
    Cells,
}

/// How the page draws a side's stones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stones {
    /// A disc of the side's colour.
    Discs,
    /// The side's mark (`X`, `O`) in its colour.
    Marks,
}

/// The board as the page draws it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Board {
    pub layout: Layout,
    pub stones: Stones,
    /// The board's colour (CSS) around and between the cells.
    pub colour: &'static str,
    /// An empty cell's colour.
    pub cell: &'static str,
}

/// A side of the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Side {
    /// Its name for people: the page, the server's statuses and results (`Red`, `X`).
    pub name: &'static str,
    /// Its stone as `Game::display` draws it, for the terminal's prompts (`●`, `X`).
    pub mark: &'static str,
    /// Its stones' colour on the page (CSS).
    pub colour: &'static str,
}

/// Which presets a game's runs start from (`zero cycle --preset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PresetFamily {
    /// The small boards' presets, with the settings tuned for each game: the tree search of
    /// self-play and evaluation, the self-play games of an iteration, their opening plies
    /// played at random (their positions still searched and trained on) and then by
    /// temperature, and the training steps of an iteration.
    SmallBoard {
        search: SearchKind,
        games: u64,
        random_opening_plies: u32,
        temperature_plies: u32,
        train_steps: u64,
    },
    /// Connect Four's presets: its own budgets, openings and forks, and its GPU preset.
    Connect4,
}

/// A board game's facts beyond its rules: everything the command line, the pipeline, the
/// server and the page need to offer it. The constants must be stated; the functions have
/// defaults that suit a small game (an exhaustive exact solver, an evaluation set solved when
/// asked for, no rule-based player).
pub trait Catalogued: Game {
    /// The game's name for people (`4x4 Othello`).
    const TITLE: &'static str;
    /// How the page draws the board and how a person picks a move.
    const BOARD: Board;
    /// The sides, first then second.
    const SIDES: [Side; 2];
    /// The presets its runs start from.
    const PRESETS: PresetFamily;
    /// The players the page proposes when the game has no trained `best`: the opponent (and
    /// the first engine when two engines play), and the second engine.
    const PAGE_ENGINES: [&'static str; 2] = ["solver", "mcts:800"];
    /// Whether its exact solver is dear (tables of megabytes, a book read from disk) and slow
    /// early in a game: the server then shares a few among all its games and bounds each
    /// search in time. Otherwise every use builds its own and waits for the answer.
    const SHARED_SOLVERS: bool = false;
    /// Why a search of a shared solver may run out of time, and what helps.
    const SOLVER_NOTE: &'static str = "early positions take long to solve";

    /// Why the move `m`, which cannot be played here, is refused, in words for a person (the
    /// game is not over): a full column, a taken cell, ...
    fn refusal(&self, m: Move) -> String {
        format!("{} is not legal here", self.format_move(m))
    }
    /// The `rules` player, if the game has one.
    fn rules_agent() -> Option<Box<dyn Agent<Self>>> {
        None
    }
    /// An exact solver, with the book and cache in `files` if it keeps some there.
    fn exact(_files: Option<&Path>) -> Result<Box<dyn Exact<Self>>> {
        Ok(Box::new(SolveTable::new()))
    }
    /// The `solver` player of the command line, with its files in `files` if it keeps some.
    fn solver_agent(_files: &Path) -> Box<dyn Agent<Self>> {
        Box::new(SolverAgent::<Self>::new())
    }
    /// The trained network shipped with the program (played by `pretrained`), if any.
    fn pretrained() -> Option<Pretrained> {
        None
    }
    /// The positions `zero grade` and every iteration of `zero cycle` grade a player on, each
    /// move valued exactly: by default 300 distinct positions of seeded random games, solved
    /// when asked for.
    fn eval_set() -> Result<EvalSet<Self>> {
        Ok(small_game_set(SMALL_SET_POSITIONS, SMALL_SET_SEED))
    }
}

/// A game's facts as one value, for code that picks the game at run time (and `/api/info`).
#[derive(Clone, Debug, Serialize)]
pub struct Facts {
    pub game: &'static str,
    pub title: &'static str,
    pub layout: Layout,
    pub rows: usize,
    pub cols: usize,
    pub board: Board,
    pub sides: [Side; 2],
    /// Each column's move (columns) or each cell's (cells, top row first) as the game writes
    /// it: what a click on it plays.
    pub moves: Vec<String>,
    /// The moves off the board (a pass), as the game writes them.
    pub other_moves: Vec<String>,
    /// Whether it has a `rules` player.
    pub rules_player: bool,
    pub page_engines: [&'static str; 2],
    /// A few moves from the start as the game writes a position: the page's example of where
    /// a game may start from.
    pub example_position: String,
    #[serde(skip)]
    pub presets: PresetFamily,
}

impl Facts {
    pub fn of<G: Catalogued>() -> Facts {
        let start = G::new();
        let on_board = match G::BOARD.layout {
            Layout::Columns => G::WIDTH,
            Layout::Cells => G::cells(),
        };
        let text = |m: usize| start.format_move(m as Move);
        Facts {
            game: G::NAME,
            title: G::TITLE,
            layout: G::BOARD.layout,
            rows: G::HEIGHT,
            cols: G::WIDTH,
            board: G::BOARD,
            sides: G::SIDES,
            moves: (0..on_board).map(text).collect(),
            other_moves: (on_board..G::NUM_ACTIONS).map(text).collect(),
            rules_player: G::rules_agent().is_some(),
            page_engines: G::PAGE_ENGINES,
            example_position: example_position::<G>(EXAMPLE_PLIES),
            presets: G::PRESETS,
        }
    }
}

/// Plies of [`Facts::example_position`].
const EXAMPLE_PLIES: usize = 4;

/// `plies` moves from the start (fewer if the game ends first), each a different legal one
/// from the middle of the list on, written as the game writes a position.
fn example_position<G: Game>(plies: usize) -> String {
    let mut pos = G::new();
    let mut moves = Vec::new();
    for ply in 0..plies {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let m = legal[(legal.len() / 2 + ply) % legal.len()];
        pos.play(m);
        moves.push(m);
    }
    position_string::<G>(&moves)
}

impl GameKind {
    /// The facts of the game this kind names.
    pub fn facts(self) -> Facts {
        crate::with_board_game!(self, G => Facts::of::<G>())
    }
    /// The game's name for people.
    pub fn title(self) -> &'static str {
        crate::with_board_game!(self, G => G::TITLE)
    }
    /// The presets its runs start from.
    pub fn presets(self) -> PresetFamily {
        crate::with_board_game!(self, G => G::PRESETS)
    }
}

/// The file of game `G`'s shipped network (the `run.json` of its run beside it), written to the
/// cache on first use; `None` where the game ships none.
pub fn pretrained_model<G: Catalogued>() -> Result<Option<std::path::PathBuf>> {
    pretrained::written_out(G::NAME, G::pretrained())
}

/// The name of side `p` of game `G`.
pub fn side_name<G: Catalogued>(p: Player) -> &'static str {
    G::SIDES[p.index()].name
}

/// Who holds each cell, top row first, left to right: 0 empty, 1 the first side's, 2 the
/// second's. Read off the network input, which has the mover's stones in plane 0 and the
/// opponent's in plane 1 on the same top-first grid for every game, so no game needs its own
/// code for it.
pub fn owners<G: Game>(pos: &G) -> Vec<u8> {
    let n = G::cells();
    let mut planes = vec![0.0; G::input_size()];
    pos.encode(&mut planes);
    let (mover, other) = match pos.to_move() {
        Player::First => (1, 2),
        Player::Second => (2, 1),
    };
    (0..n)
        .map(|i| {
            if planes[i] > 0.5 {
                mover
            } else if planes[n + i] > 0.5 {
                other
            } else {
                0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Connect4, Othello4, TicTacToe};

    #[test]
    fn cells_are_top_first_whoever_moves() {
        // Connect Four: Red in column 4 then Yellow on top of it.
        let cells = owners(&Connect4::parse_position("44").unwrap());
        assert_eq!(cells.len(), 42);
        assert_eq!(cells[5 * 7 + 3], 1);
        assert_eq!(cells[4 * 7 + 3], 2);
        assert_eq!(cells.iter().filter(|&&c| c != 0).count(), 2);
        // Tic-tac-toe: X at 1, O at 5, X to move again.
        let cells = owners(&TicTacToe::parse_position("15").unwrap());
        assert_eq!(cells, vec![1, 0, 0, 0, 2, 0, 0, 0, 0]);
        // Othello's start: White on b2 and c3, Black on c2 and b3.
        let cells = owners(&Othello4::new());
        assert_eq!((cells[5], cells[6], cells[9], cells[10]), (2, 1, 1, 2));
    }

    #[test]
    fn facts_name_the_moves_of_the_board() {
        let c4 = GameKind::Connect4.facts();
        assert_eq!((c4.layout, c4.rows, c4.cols), (Layout::Columns, 6, 7));
        assert_eq!(c4.moves, ["1", "2", "3", "4", "5", "6", "7"]);
        assert!(c4.other_moves.is_empty());
        let othello = GameKind::Othello4.facts();
        assert_eq!(othello.moves.len(), 16);
        assert_eq!(
            (othello.moves[0].as_str(), othello.moves[15].as_str()),
            ("a1", "d4")
        );
        assert_eq!(othello.other_moves, ["pass"]);
        let ttt = GameKind::TicTacToe.facts();
        assert_eq!(ttt.moves[8], "9");
        assert!(ttt.rules_player && !othello.rules_player);
        assert_eq!(side_name::<TicTacToe>(Player::Second), "O");
        let examples: Vec<String> = GameKind::ALL
            .into_iter()
            .map(|kind| kind.facts().example_position)
            .collect();
        assert_eq!(examples, ["4567", "5781", "d3d4b1c1", "a3d3c3a5"]);
    }

    #[test]
    fn the_shipped_networks_load_as_models_of_their_games() {
        use crate::nn::{Net, Shape};
        fn check<G: Catalogued>() {
            let path = pretrained_model::<G>().unwrap().expect("shipped");
            let net = Net::load(&path, G::NAME, Shape::of::<G>(), tch::Device::Cpu);
            assert!(net.is_ok(), "{}: {:?}", G::NAME, net.err());
        }
        check::<Connect4>();
        check::<TicTacToe>();
        check::<Othello4>();
    }

    #[test]
    fn refusals_say_what_is_wrong() {
        let full = Connect4::parse_position("444444").unwrap();
        assert_eq!(full.refusal(3), "column 4 is full");
        let pos = Othello4::new();
        assert!(pos.refusal(5).contains("b2 is taken"));
        assert!(pos.refusal(0).contains("flips no disc"));
        assert!(pos
            .refusal(crate::games::othello4::PASS)
            .contains("cannot pass"));
    }
}
