//! The JSON shapes of the API's answers about a game ([`GameView`] and its parts), as
//! `GET /api/games/ID` gives them and the page reads them.

use serde::Serialize;

use crate::agent::Analysis;
use crate::catalog::Layout;
use crate::games::Game;

/// Moves of an engine's analysis that a view lists.
const TOP_MOVES: usize = 5;

#[derive(Clone, Debug, Serialize)]
pub struct GameView {
    pub id: String,
    pub game: &'static str,
    pub title: &'static str,
    pub layout: Layout,
    pub rows: usize,
    pub cols: usize,
    pub sides: [SideView; 2],
    /// Top row first: 0 empty, 1 the first side's, 2 the second's.
    pub cells: Vec<u8>,
    /// 0 for the first side, 1 for the second; none once the game is over.
    pub to_move: Option<u8>,
    pub legal: Vec<String>,
    pub moves: Vec<MoveView>,
    pub position: String,
    pub result: Option<ResultView>,
    /// The cells of the winning line (or lines), top row first as `cells`; empty unless won.
    pub winning_cells: Vec<usize>,
    /// Plies at the start that were given (`position` when the game was made), not played.
    pub opening_plies: usize,
    pub thinking: Option<ThinkingView>,
    /// One sentence for people: whose turn, who is thinking, who won.
    pub status: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct SideView {
    pub name: &'static str,
    pub player: String,
    pub human: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct MoveView {
    pub ply: usize,
    pub side: u8,
    #[serde(rename = "move")]
    pub text: String,
    pub by_engine: bool,
    /// The cell the stone went to (top row first); none for a pass.
    pub cell: Option<usize>,
    pub seconds: Option<f64>,
    /// The engine was asked to stop and moved with what it had found by then.
    pub stopped: bool,
    pub analysis: Option<AnalysisView>,
}

/// An engine's view of the position it moved in, for the side it plays.
#[derive(Clone, Debug, Serialize)]
pub struct AnalysisView {
    /// In [-1, 1]: -1 a sure loss, 0 even (or a draw), 1 a sure win.
    pub value: f32,
    /// The value as a score, a win counting 1 and a draw 1/2.
    pub expected_score: f32,
    pub verdict: &'static str,
    /// Simulations behind it (0: the network alone, its policy).
    pub visits: u32,
    pub top: Vec<TopMove>,
    /// The network's own win, draw and loss probabilities for the mover before the search,
    /// where it has that head; none for other engines.
    pub wdl: Option<WinDrawLoss>,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct WinDrawLoss {
    pub win: f32,
    pub draw: f32,
    pub loss: f32,
}

#[derive(Clone, Debug, Serialize)]
pub struct TopMove {
    #[serde(rename = "move")]
    pub text: String,
    /// Share of the search's visits (or of the policy, for the network alone).
    pub share: f32,
}

#[derive(Clone, Debug, Serialize)]
pub struct ResultView {
    /// 0 or 1; none for a draw.
    pub winner: Option<u8>,
    pub text: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct ThinkingView {
    pub side: u8,
    pub seconds: f64,
    /// Asked to stop: its move comes at once.
    pub stopping: bool,
}

/// The board as it was after some ply of a game, for stepping through it.
#[derive(Clone, Debug, Serialize)]
pub struct BoardView {
    /// Plies played: 0 the start, the game's number of moves its position now.
    pub ply: usize,
    pub cells: Vec<u8>,
    /// The cell of the move that led here; none at the start or after a pass.
    pub last_cell: Option<usize>,
    pub winning_cells: Vec<usize>,
}

/// What the page shows of an engine's analysis of `pos`, the position it moved in, with its
/// network's win/draw/loss figures there.
pub fn analysis_view<G: Game>(a: &Analysis, pos: &G, wdl: Option<[f32; 3]>) -> AnalysisView {
    let value = a.value.clamp(-1.0, 1.0);
    let verdict = match value {
        v if v >= 0.5 => "thinks it is winning",
        v if v >= 0.15 => "thinks it is better",
        v if v > -0.15 => "thinks it is about even",
        v if v > -0.5 => "thinks it is worse",
        _ => "thinks it is losing",
    };
    AnalysisView {
        value,
        expected_score: (value + 1.0) / 2.0,
        verdict,
        visits: a.visits,
        top: a
            .moves
            .iter()
            .take(TOP_MOVES)
            .map(|&(m, share)| TopMove {
                text: pos.format_move(m),
                share,
            })
            .collect(),
        wdl: wdl.map(|[win, draw, loss]| WinDrawLoss { win, draw, loss }),
    }
}
