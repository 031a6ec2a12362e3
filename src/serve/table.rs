//! One web game: its positions from the start, the moves with who made them and what the
//! engine thought, and who sits on each side ([`GameTable`]); behind [`Table`], so that the
//! server holds games of every kind alike.
//!
//! An engine's move runs off the game: [`Table::begin_engine_move`] takes the engine out and
//! hands back a job that owns it and a copy of the position; the caller runs the job on a
//! blocking thread, and [`Table::finish_engine_move`] puts the engine back and plays its move.
//! The game is never locked while an engine thinks, so its state can be read meanwhile, and a
//! move or an undo is refused until the engine is done.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use axum::http::StatusCode;

use super::engine::{Engine, Engines, Seat};
use super::errors::ApiError;
use super::views::{
    analysis_view, BoardView, GameView, MoveView, ResultView, SideView, ThinkingView,
};
use crate::agent::Analysis;
use crate::catalog::{owners, side_name, Catalogued};
use crate::core::rng::SeedStream;
use crate::core::stop::Stop;
use crate::core::threads::panic_message;
use crate::games::{Game, GameKind, Move, Outcome, Player};

/// The seeds of a game's two engines under the game's seed.
const SEAT_SEEDS: SeedStream = SeedStream::new(0x5ea7_5eed_7ab1_e500);

/// A web game of any kind.
pub trait Table: Send {
    fn kind(&self) -> GameKind;
    /// Everything the page shows.
    fn view(&self) -> GameView;
    /// The moves from the start as one string, as the game's `parse_position` reads it.
    fn position(&self) -> String;
    fn is_thinking(&self) -> bool;
    /// A person's move, typed as the game writes moves (`4`, `b2`, `pass`).
    fn play(&mut self, text: &str) -> Result<(), ApiError>;
    /// Takes back `plies` plies, or by default back to before the last person's move.
    fn undo(&mut self, plies: Option<usize>) -> Result<(), ApiError>;
    /// Takes out the engine whose turn it is, with the position, as a job to run.
    fn begin_engine_move(&mut self) -> Result<EngineJob, ApiError>;
    /// Puts the engine back and plays its move.
    fn finish_engine_move(&mut self, done: EngineDone) -> Result<(), ApiError>;
    /// Asks the engine that is thinking to move now with what it has found.
    fn stop(&mut self) -> Result<(), ApiError>;
    /// The board after `ply` plies (view only: the game stays where it is).
    fn board_at(&self, ply: usize) -> Result<BoardView, ApiError>;
    /// Plies at the start that the game was given rather than played.
    fn opening_plies(&self) -> usize;
}

/// An engine's move to compute, on a thread of its own.
pub struct EngineJob {
    work: Box<dyn FnOnce() -> EngineDone + Send>,
}

impl EngineJob {
    pub fn run(self) -> EngineDone {
        (self.work)()
    }
}

/// What a job found, and the engine it borrowed.
pub struct EngineDone {
    ticket: u64,
    outcome: Result<(Move, Option<Analysis>), String>,
    /// The network's win/draw/loss figures of the position, where it has them.
    wdl: Option<[f32; 3]>,
    /// It was asked to stop while it thought.
    stopped: bool,
    /// The `Engine<G>` back; none if it panicked (it may be half-updated).
    engine: Option<Box<dyn Any + Send>>,
    seconds: f64,
}

/// One side: who sits there and, for an engine, where the engine is now.
struct SeatState<G: Game> {
    label: String,
    slot: Slot<G>,
}

enum Slot<G: Game> {
    Human,
    Ready(Engine<G>),
    /// Out on a job.
    Thinking,
    /// It panicked: the game cannot go on with it.
    Broken(String),
}

/// A move and, for an engine's, what it thought, how long it took and whether it was stopped.
#[derive(Default)]
struct Played {
    m: Move,
    by_engine: bool,
    analysis: Option<Analysis>,
    wdl: Option<[f32; 3]>,
    seconds: Option<f64>,
    stopped: bool,
}

struct Thinking {
    side: Player,
    since: Instant,
    ticket: u64,
    /// The thinking engine's flag.
    stop: Stop,
}

/// A game of `G` with its seats.
pub struct GameTable<G: Catalogued> {
    id: String,
    kind: GameKind,
    /// Every position from the start; `moves[i]` leads from `history[i]` to `history[i + 1]`.
    history: Vec<G>,
    moves: Vec<Played>,
    seats: [SeatState<G>; 2],
    thinking: Option<Thinking>,
    tickets: u64,
    /// Moves given with the game (`position`), not played in it.
    opening: usize,
}

/// What a new game is: its kind, id, seats, seed, and the moves already played.
pub struct NewTable {
    pub kind: GameKind,
    pub id: String,
    pub seats: [Seat; 2],
    pub seed: u64,
    /// Moves from the start (`4453`), as the game's `parse_position` reads them.
    pub position: String,
}

/// A new game; builds the engines (which may load a network: call it off the async threads).
pub fn new_table(spec: NewTable, engines: &Engines) -> Result<Box<dyn Table>, ApiError> {
    crate::with_board_game!(spec.kind, G => {
        GameTable::<G>::new(spec, engines).map(|t| Box::new(t) as Box<dyn Table>)
    })
}

/// The moves of a position written as the game's `parse_position` reads it: each move is the
/// one legal move whose written form comes next.
pub(super) fn moves_of<G: Game>(text: &str) -> Result<Vec<Move>, ApiError> {
    if text.len() > 200 {
        return Err(ApiError::bad("a position is at most 200 characters"));
    }
    // Spaces between moves are allowed in every game.
    let compact: String = text.split_whitespace().collect();
    let target = G::parse_position(&compact).map_err(|e| ApiError::bad(e.to_string()))?;
    let mut rest = compact.to_ascii_lowercase();
    let (mut pos, mut moves) = (G::new(), Vec::new());
    while !rest.is_empty() {
        let next = pos
            .legal_moves()
            .into_iter()
            .map(|m| (m, pos.format_move(m).to_ascii_lowercase()))
            .find(|(_, written)| rest.starts_with(written.as_str()));
        let Some((m, written)) = next else {
            return Err(ApiError::bad(format!(
                "cannot follow the moves of '{text}' at '{rest}' (write passes as 'pass')"
            )));
        };
        rest.drain(..written.len());
        pos.play(m);
        moves.push(m);
    }
    if pos != target {
        return Err(ApiError::bad(format!(
            "cannot follow the moves of '{text}'"
        )));
    }
    Ok(moves)
}

impl<G: Catalogued> GameTable<G> {
    fn new(spec: NewTable, engines: &Engines) -> Result<Self, ApiError> {
        let moves = moves_of::<G>(&spec.position)?;
        let seat = |i: usize| -> Result<SeatState<G>, ApiError> {
            let seed = SEAT_SEEDS.seed(spec.seed, i as u64);
            let engine = engines.build::<G>(&spec.seats[i], seed)?;
            Ok(SeatState {
                label: spec.seats[i].label(engine.as_ref().and_then(|e| e.search)),
                slot: engine.map_or(Slot::Human, Slot::Ready),
            })
        };
        let mut table = GameTable {
            id: spec.id.clone(),
            kind: spec.kind,
            history: vec![G::new()],
            moves: Vec::new(),
            seats: [seat(0)?, seat(1)?],
            thinking: None,
            tickets: 0,
            opening: moves.len(),
        };
        for m in moves {
            table.push(Played {
                m,
                ..Played::default()
            });
        }
        Ok(table)
    }

    fn current(&self) -> &G {
        // `history` starts with the first position and is never cut below it.
        &self.history[self.history.len() - 1]
    }

    fn result_text(outcome: Outcome) -> String {
        match outcome {
            Outcome::Win(p) => format!("{} wins", side_name::<G>(p)),
            Outcome::Draw => "Draw".into(),
        }
    }

    /// Plays `played.m` (legal), tells the engines that are in, and records it.
    fn push(&mut self, played: Played) {
        let m = played.m;
        let before = self.current().clone();
        let mut after = before.clone();
        after.play(m);
        for seat in &mut self.seats {
            if let Slot::Ready(engine) = &mut seat.slot {
                engine.agent.observe(&before, m);
                if after.outcome().is_some() {
                    engine.agent.game_over(&after);
                }
            }
        }
        self.history.push(after);
        self.moves.push(played);
    }

    fn move_view(&self, i: usize) -> MoveView {
        let (before, after, played) = (&self.history[i], &self.history[i + 1], &self.moves[i]);
        let (was, now) = (owners(before), owners(after));
        MoveView {
            ply: i + 1,
            side: before.to_move().index() as u8,
            text: before.format_move(played.m),
            by_engine: played.by_engine,
            cell: new_stone(&was, &now),
            seconds: played.seconds,
            stopped: played.stopped,
            analysis: played
                .analysis
                .as_ref()
                .map(|a| analysis_view(a, before, played.wdl)),
        }
    }

    fn status(&self) -> String {
        let pos = self.current();
        if let Some(o) = pos.outcome() {
            return Self::result_text(o);
        }
        let side = pos.to_move();
        let seat = &self.seats[side.index()];
        match (&self.thinking, &seat.slot) {
            (Some(_), _) => format!("{} ({}) is thinking", side_name::<G>(side), seat.label),
            (None, Slot::Human) => format!("{} to move", side_name::<G>(side)),
            (None, _) => format!("{} ({}) to move", side_name::<G>(side), seat.label),
        }
    }

    /// Plies the default undo takes back: through the last person's move, so that the same
    /// person is to move again; one ply in a game of engines alone.
    fn default_undo(&self) -> Result<usize, ApiError> {
        if self.seats.iter().all(|s| !matches!(s.slot, Slot::Human)) {
            return Ok(1);
        }
        match self.moves.iter().rposition(|p| !p.by_engine) {
            Some(i) => Ok(self.moves.len() - i),
            None => Err(ApiError::bad("there is no move of yours to take back")),
        }
    }
}

/// The cell a move put a stone on (top row first), from the boards before and after it; none
/// for a pass.
fn new_stone(was: &[u8], now: &[u8]) -> Option<usize> {
    (0..now.len()).find(|&c| was[c] == 0 && now[c] != 0)
}

/// An engine's move, on the job's thread: a panic in the engine is caught and reported, and
/// the engine, which it may have left half-updated, is not given back.
fn think<G: Catalogued>(mut engine: Engine<G>, pos: G, ticket: u64) -> EngineDone {
    let started = Instant::now();
    let found = catch_unwind(AssertUnwindSafe(|| {
        let m = engine.agent.choose(&pos)?;
        anyhow::Ok((m, engine.agent.analysis()))
    }));
    let seconds = started.elapsed().as_secs_f64();
    let stopped = engine.stop.is_raised();
    let wdl = match &found {
        Ok(Ok((_, Some(_)))) => engine.win_draw_loss(&pos),
        _ => None,
    };
    let (outcome, engine) = match found {
        Ok(Ok(found)) => (Ok(found), Some(engine)),
        Ok(Err(e)) => (Err(format!("{e:#}")), Some(engine)),
        Err(payload) => (
            Err(format!("it panicked: {}", panic_message(payload.as_ref()))),
            None,
        ),
    };
    EngineDone {
        ticket,
        outcome,
        wdl,
        stopped,
        engine: engine.map(|e| Box::new(e) as Box<dyn Any + Send>),
        seconds,
    }
}

impl<G: Catalogued> Table for GameTable<G> {
    fn kind(&self) -> GameKind {
        self.kind
    }

    fn view(&self) -> GameView {
        let pos = self.current();
        let outcome = pos.outcome();
        let side_view = |i: usize| SideView {
            name: G::SIDES[i].name,
            player: self.seats[i].label.clone(),
            human: matches!(self.seats[i].slot, Slot::Human),
        };
        GameView {
            id: self.id.clone(),
            game: G::NAME,
            title: G::TITLE,
            layout: G::BOARD.layout,
            rows: G::HEIGHT,
            cols: G::WIDTH,
            sides: [side_view(0), side_view(1)],
            cells: owners(pos),
            to_move: outcome.is_none().then(|| pos.to_move().index() as u8),
            legal: pos
                .legal_moves()
                .iter()
                .map(|&m| pos.format_move(m))
                .collect(),
            moves: (0..self.moves.len()).map(|i| self.move_view(i)).collect(),
            position: self.position(),
            result: outcome.map(|o| ResultView {
                winner: match o {
                    Outcome::Win(p) => Some(p.index() as u8),
                    Outcome::Draw => None,
                },
                text: Self::result_text(o),
            }),
            winning_cells: pos.winning_cells(),
            opening_plies: self.opening,
            thinking: self.thinking.as_ref().map(|t| ThinkingView {
                side: t.side.index() as u8,
                seconds: t.since.elapsed().as_secs_f64(),
                stopping: t.stop.is_raised(),
            }),
            status: self.status(),
        }
    }

    fn position(&self) -> String {
        self.moves
            .iter()
            .zip(&self.history)
            .map(|(p, pos)| pos.format_move(p.m))
            .collect()
    }

    fn is_thinking(&self) -> bool {
        self.thinking.is_some()
    }

    fn play(&mut self, text: &str) -> Result<(), ApiError> {
        let pos = self.current();
        if let Some(o) = pos.outcome() {
            return Err(ApiError::bad(format!(
                "the game is over ({}): start a new game or undo",
                Self::result_text(o)
            )));
        }
        if self.thinking.is_some() {
            return Err(ApiError::conflict(
                "the engine is thinking: wait for its move",
            ));
        }
        let side = pos.to_move();
        let seat = &self.seats[side.index()];
        if !matches!(seat.slot, Slot::Human) {
            return Err(ApiError::conflict(format!(
                "it is {}'s turn, played by {}: ask it to move with POST /api/games/{}/engine-move",
                side_name::<G>(side),
                seat.label,
                self.id
            )));
        }
        if text.len() > 16 {
            return Err(ApiError::bad("a move is at most 16 characters"));
        }
        let m = pos
            .parse_move(text)
            .map_err(|e| ApiError::bad(e.to_string()))?;
        if !pos.is_legal(m) {
            return Err(ApiError::bad(pos.refusal(m)));
        }
        self.push(Played {
            m,
            ..Played::default()
        });
        Ok(())
    }

    fn undo(&mut self, plies: Option<usize>) -> Result<(), ApiError> {
        if self.thinking.is_some() {
            return Err(ApiError::conflict(
                "the engine is thinking: wait for its move",
            ));
        }
        if self.moves.is_empty() {
            return Err(ApiError::bad("there is no move to take back"));
        }
        let n = match plies {
            Some(0) => return Err(ApiError::bad("take back at least 1 ply")),
            Some(n) => n.min(self.moves.len()),
            None => self.default_undo()?,
        };
        self.moves.truncate(self.moves.len() - n);
        self.history.truncate(self.moves.len() + 1);
        self.opening = self.opening.min(self.moves.len());
        Ok(())
    }

    fn begin_engine_move(&mut self) -> Result<EngineJob, ApiError> {
        let pos = self.current().clone();
        if let Some(o) = pos.outcome() {
            return Err(ApiError::bad(format!(
                "the game is over ({})",
                Self::result_text(o)
            )));
        }
        if self.thinking.is_some() {
            return Err(ApiError::conflict("the engine is already thinking"));
        }
        let side = pos.to_move();
        let seat = &mut self.seats[side.index()];
        let engine = match std::mem::replace(&mut seat.slot, Slot::Thinking) {
            Slot::Ready(engine) => {
                engine.stop.clear();
                engine
            }
            other => {
                let refusal = match &other {
                    Slot::Human => ApiError::conflict(format!(
                        "it is {}'s turn, and a person plays that side: send a move instead",
                        side_name::<G>(side)
                    )),
                    Slot::Broken(why) => ApiError::internal(format!(
                        "this game's engine failed earlier ({why}): start a new game"
                    )),
                    _ => ApiError::conflict("the engine is already thinking"),
                };
                seat.slot = other;
                return Err(refusal);
            }
        };
        self.tickets += 1;
        let ticket = self.tickets;
        self.thinking = Some(Thinking {
            side,
            since: Instant::now(),
            ticket,
            stop: engine.stop.clone(),
        });
        Ok(EngineJob {
            work: Box::new(move || think(engine, pos, ticket)),
        })
    }

    fn finish_engine_move(&mut self, done: EngineDone) -> Result<(), ApiError> {
        let Some(thinking) = self.thinking.take_if(|t| t.ticket == done.ticket) else {
            return Err(ApiError::internal(
                "an engine's answer came for another move",
            ));
        };
        let side = thinking.side.index();
        let engine = done
            .engine
            .and_then(|e| e.downcast::<Engine<G>>().ok())
            .map(|e| *e);
        let label = self.seats[side].label.clone();
        self.seats[side].slot = match (engine, &done.outcome) {
            (Some(engine), _) => Slot::Ready(engine),
            (None, Err(why)) => Slot::Broken(why.clone()),
            (None, Ok(_)) => Slot::Broken("it was lost".into()),
        };
        match done.outcome {
            Ok((m, analysis)) if self.current().is_legal(m) => {
                self.push(Played {
                    m,
                    by_engine: true,
                    analysis,
                    wdl: done.wdl,
                    seconds: Some(done.seconds),
                    stopped: done.stopped,
                });
                Ok(())
            }
            Ok((m, _)) => Err(ApiError::internal(format!(
                "{label} chose the illegal move {}",
                self.current().format_move(m)
            ))),
            Err(why) => Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("{label} could not move: {why}"),
            )),
        }
    }

    fn stop(&mut self) -> Result<(), ApiError> {
        match &self.thinking {
            Some(t) => {
                t.stop.raise();
                Ok(())
            }
            None => Err(ApiError::conflict("no engine is thinking in this game")),
        }
    }

    fn board_at(&self, ply: usize) -> Result<BoardView, ApiError> {
        let Some(pos) = self.history.get(ply) else {
            return Err(ApiError::bad(format!(
                "ply {ply}: this game has {} moves",
                self.moves.len()
            )));
        };
        let cells = owners(pos);
        let last_cell = match ply {
            0 => None,
            _ => new_stone(&owners(&self.history[ply - 1]), &cells),
        };
        Ok(BoardView {
            ply,
            cells,
            last_cell,
            winning_cells: pos.winning_cells(),
        })
    }

    fn opening_plies(&self) -> usize {
        self.opening
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rng::rng_from_seed;
    use crate::games::othello4::PASS;
    use crate::games::{Connect4, Othello4};
    use rand::Rng;

    #[test]
    fn positions_are_read_back_move_by_move() {
        assert_eq!(moves_of::<Connect4>(" 44 53").unwrap(), vec![3, 3, 4, 2]);
        assert!(moves_of::<Connect4>("4444444").is_err());
        // Random Othello games, passes included, written as the page writes them.
        let mut rng = rng_from_seed(1);
        let mut passes = 0;
        for _ in 0..200 {
            let (mut pos, mut moves, mut text) = (Othello4::new(), Vec::new(), String::new());
            while pos.outcome().is_none() {
                let legal = pos.legal_moves();
                let m = legal[rng.random_range(0..legal.len())];
                text.push_str(&pos.format_move(m));
                passes += usize::from(m == PASS);
                moves.push(m);
                pos.play(m);
            }
            assert_eq!(moves_of::<Othello4>(&text).unwrap(), moves, "{text}");
        }
        assert!(passes > 0);
    }
}
