//! One generic conformance suite for every board game of the crate, in the spirit of
//! OpenSpiel's generic game tests: each property is a function `check_xxx<G: Game>` that uses
//! only the public game API (and the game's facts of `zero::catalog`), instantiated once per
//! game of the one list by `zero::for_each_game!(conformance_suite)` at the bottom: a game
//! added to the list is checked with no change here.
//!
//! The random properties run on playouts driven by proptest. A playout is a vector of move
//! choices: ply `i` plays legal move number `choices[i] % legal.len()` (the first legal move
//! once the vector runs out), always to the end of the game. A failure therefore shrinks to a
//! short vector of small choices, and the messages name the move sequence in the game's own
//! notation, which `zero` and `parse_position` read back.

use std::collections::{HashMap, HashSet, VecDeque};

use proptest::prelude::*;
use proptest::test_runner::Config;
use zero::catalog::{owners, Catalogued, Facts, Layout};
use zero::games::{Connect4, Game, Move, Othello4, Outcome, Player, Symmetry, TicTacToe};
use zero::solvers::exhaustive::{solve_value, SolveTable};

type Check = Result<(), TestCaseError>;

/// Cases per property per game.
const CASES: u32 = 256;
/// Cases of the exact solver's property, whose solvers are dearer to make.
const EXACT_CASES: u32 = 24;
/// The exact solver is checked on positions at most this many plies from `G::MAX_PLIES`
/// (so that the exhaustive search that checks it stays small), the last of a long game.
const EXACT_PLIES: usize = 12;
/// The exhaustive key check goes one ply deeper while fewer positions than this are found.
const EXHAUSTIVE_POSITIONS: usize = 100_000;
/// Playouts per case in the key-collision property.
const PLAYOUTS_PER_BATCH: usize = 16;

fn config() -> Config {
    Config {
        cases: CASES,
        // Failures print their minimal input; no regression files are written into the tree.
        failure_persistence: None,
        ..Config::default()
    }
}

/// Move choices of one playout.
fn choices<G: Game>() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(any::<u32>(), 0..=G::MAX_PLIES)
}

/// Stones per side, counted on the board as `display` draws it (each side's mark, one of the
/// game's facts): pins down which encoding plane is whose, from code apart from `encode`.
trait StoneCount: Catalogued {
    fn stone_count(&self, player: Player) -> u32 {
        let mark = Self::SIDES[player.index()].mark;
        self.display().matches(mark).count() as u32
    }
}

impl<G: Catalogued> StoneCount for G {}

/// A whole game: `positions[0]` is the start, `positions[i + 1]` follows `moves[i]`, and the
/// last position is over.
struct Playout<G> {
    moves: Vec<Move>,
    positions: Vec<G>,
}

impl<G: Game> Playout<G> {
    /// The first `n` moves in the game's notation, joined by `sep`.
    fn notation(&self, n: usize, sep: &str) -> String {
        self.moves[..n]
            .iter()
            .zip(&self.positions)
            .map(|(&m, p)| p.format_move(m))
            .collect::<Vec<_>>()
            .join(sep)
    }
    /// The whole sequence, for messages.
    fn line(&self) -> String {
        format!("'{}'", self.notation(self.moves.len(), " "))
    }
}

/// Plays `choices` from the start to the end of the game; fails if the game outlasts
/// `G::MAX_PLIES`.
fn playout<G: Game>(choices: &[u32]) -> Result<Playout<G>, TestCaseError> {
    let mut pos = G::new();
    let mut out = Playout {
        moves: Vec::new(),
        positions: vec![pos.clone()],
    };
    loop {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            return Ok(out);
        }
        prop_assert!(
            out.moves.len() < G::MAX_PLIES,
            "{}: the game is not over after MAX_PLIES = {} plies: {}",
            G::NAME,
            G::MAX_PLIES,
            out.line()
        );
        let choice = choices.get(out.moves.len()).copied().unwrap_or(0);
        let m = legal[choice as usize % legal.len()];
        pos.play(m);
        out.moves.push(m);
        out.positions.push(pos.clone());
    }
}

fn encoding<G: Game>(pos: &G) -> Vec<f32> {
    let mut planes = vec![0.0; G::input_size()];
    pos.encode(&mut planes);
    planes
}

fn sorted(moves: impl IntoIterator<Item = Move>) -> Vec<Move> {
    let mut v: Vec<Move> = moves.into_iter().collect();
    v.sort_unstable();
    v
}

fn is_permutation(v: &[usize], n: usize) -> bool {
    let mut seen = vec![false; n];
    v.len() == n
        && v.iter()
            .all(|&i| i < n && !std::mem::replace(&mut seen[i], true))
}

// ---------------------------------------------------------------------------------------------
// Deterministic checks

/// The start position: not over, nobody has moved, `First` to move, parsed from "".
fn check_start<G: Game>() {
    let start = G::new();
    assert_eq!(start.outcome(), None, "{}: the start is over", G::NAME);
    assert!(
        !start.legal_moves().is_empty(),
        "{}: no move at the start",
        G::NAME
    );
    assert_eq!(start.ply(), 0);
    assert_eq!(start.to_move(), Player::First);
    assert_eq!(G::parse_position("").unwrap(), start);
    assert_eq!(G::new().key(), start.key());
}

/// `G::symmetries()`: identity first, every map a permutation of the right size, no two
/// alike, and a group (the composition of two is one of them).
fn check_symmetry_group<G: Game>() {
    let syms = G::symmetries();
    assert!(
        !syms.is_empty(),
        "{}: no symmetry (not even the identity)",
        G::NAME
    );
    let identity = &syms[0];
    assert_eq!(identity.cells, (0..G::cells()).collect::<Vec<_>>());
    assert_eq!(identity.actions, (0..G::NUM_ACTIONS).collect::<Vec<_>>());
    for (k, s) in syms.iter().enumerate() {
        assert!(
            is_permutation(&s.cells, G::cells()),
            "{}: symmetry {k}: cells {:?} is not a permutation of 0..{}",
            G::NAME,
            s.cells,
            G::cells()
        );
        assert!(
            is_permutation(&s.actions, G::NUM_ACTIONS),
            "{}: symmetry {k}: actions {:?} is not a permutation of 0..{}",
            G::NAME,
            s.actions,
            G::NUM_ACTIONS
        );
        for (j, t) in syms.iter().enumerate().skip(k + 1) {
            assert!(
                s.cells != t.cells || s.actions != t.actions,
                "{}: symmetries {k} and {j} are the same",
                G::NAME
            );
        }
        for (j, t) in syms.iter().enumerate() {
            let cells: Vec<usize> = t.cells.iter().map(|&c| s.cells[c]).collect();
            let actions: Vec<usize> = t.actions.iter().map(|&a| s.actions[a]).collect();
            assert!(
                syms.iter()
                    .any(|u| u.cells == cells && u.actions == actions),
                "{}: symmetry {k} after symmetry {j} is none of the symmetries",
                G::NAME
            );
        }
    }
}

/// Every position reachable in at most some number of plies, breadth first: distinct
/// positions have distinct keys. The search goes one ply deeper while fewer than
/// [`EXHAUSTIVE_POSITIONS`] positions are found: the whole game for tic-tac-toe and 4x4
/// Othello, 8 plies of Connect Four. A collision names a shortest move sequence to each of
/// the two positions. Returns the depth reached and the positions found.
fn check_keys_exhaustive<G: Game>() -> (usize, usize) {
    let mut by_key: HashMap<u64, (G, String)> = HashMap::new();
    let mut seen: HashSet<G> = HashSet::from([G::new()]);
    let mut queue: VecDeque<(G, Vec<String>)> = VecDeque::from([(G::new(), Vec::new())]);
    // The depth whose positions are the last to be expanded, once known.
    let mut depth = usize::MAX;
    let mut reached = 0;
    while let Some((pos, line)) = queue.pop_front() {
        if line.len() > reached {
            // The first position of a new depth: every shallower one is in `seen`, and so
            // are this depth's.
            reached = line.len();
            if depth == usize::MAX && seen.len() >= EXHAUSTIVE_POSITIONS {
                depth = reached;
            }
        }
        let here = line.join(" ");
        if let Some((other, there)) = by_key.get(&pos.key()) {
            panic!(
                "{}: key {:#x} is shared by two different positions:\n\
                 '{here}' gives {pos:?}\n{}\n'{there}' gives {other:?}\n{}",
                G::NAME,
                pos.key(),
                pos.display(),
                other.display()
            );
        }
        by_key.insert(pos.key(), (pos.clone(), here));
        if line.len() == depth {
            continue;
        }
        for m in pos.legal_moves() {
            let mut child = pos.clone();
            child.play(m);
            if seen.insert(child.clone()) {
                let mut child_line = line.clone();
                child_line.push(pos.format_move(m));
                queue.push_back((child, child_line));
            }
        }
    }
    (reached, seen.len())
}

// ---------------------------------------------------------------------------------------------
// Properties of playouts

/// 1. Game flow: legal moves in range and without repeats, empty exactly when there is an
///    outcome, only at the end; `ply()` counts plies; sides alternate on every move (a pass
///    included); the game ends within `G::MAX_PLIES`.
fn check_flow<G: Game>(choices: &[u32]) -> Check {
    let game = playout::<G>(choices)?;
    let line = game.line();
    let last = game.moves.len();
    prop_assert!(last <= G::MAX_PLIES);
    prop_assert_eq!(&game.positions[0], &G::new());
    for (i, pos) in game.positions.iter().enumerate() {
        let legal = pos.legal_moves();
        prop_assert!(
            legal.iter().all(|&m| (m as usize) < G::NUM_ACTIONS),
            "{}: after {} plies of {line}: a legal move out of 0..{}: {legal:?}",
            G::NAME,
            i,
            G::NUM_ACTIONS
        );
        prop_assert_eq!(
            sorted(legal.iter().copied())
                .windows(2)
                .filter(|w| w[0] == w[1])
                .count(),
            0,
            "{}: after {} plies of {}: repeated legal move in {:?}",
            G::NAME,
            i,
            line,
            legal
        );
        prop_assert_eq!(
            legal.is_empty(),
            pos.outcome().is_some(),
            "{}: after {} plies of {}: legal moves {:?} but outcome {:?}",
            G::NAME,
            i,
            line,
            legal,
            pos.outcome()
        );
        prop_assert_eq!(
            pos.outcome().is_some(),
            i == last,
            "{}: after {} plies of {}",
            G::NAME,
            i,
            line
        );
        prop_assert_eq!(pos.ply(), i, "{}: ply() after {}", G::NAME, line);
        let expected = if i % 2 == 0 {
            Player::First
        } else {
            Player::Second
        };
        prop_assert_eq!(
            pos.to_move(),
            expected,
            "{}: after {} plies of {}",
            G::NAME,
            i,
            line
        );
        if i > 0 {
            prop_assert_eq!(pos.to_move(), game.positions[i - 1].to_move().other());
        }
    }
    Ok(())
}

/// 2. `is_legal(m)` agrees with `legal_moves()` for every action (and is false for every byte
///    past the action space); `try_play` succeeds exactly on legal moves, then as `play`, and
///    otherwise leaves the position alone; once the game is over every move is an error.
fn check_legality<G: Game>(choices: &[u32]) -> Check {
    let game = playout::<G>(choices)?;
    let line = game.line();
    for (i, pos) in game.positions.iter().enumerate() {
        let legal = pos.legal_moves();
        for m in 0..=u8::MAX {
            let expected = (m as usize) < G::NUM_ACTIONS && legal.contains(&m);
            prop_assert_eq!(
                pos.is_legal(m),
                expected,
                "{}: is_legal({}) after {} plies of {}; legal moves {:?}",
                G::NAME,
                m,
                i,
                line,
                legal
            );
        }
        for m in 0..G::NUM_ACTIONS as Move {
            let mut tried = pos.clone();
            let result = tried.try_play(m);
            if legal.contains(&m) {
                prop_assert!(
                    result.is_ok(),
                    "{}: try_play({m}) failed after {i} plies of {line}: {result:?}",
                    G::NAME
                );
                let mut played = pos.clone();
                played.play(m);
                prop_assert_eq!(&tried, &played);
            } else {
                prop_assert!(
                    result.is_err(),
                    "{}: try_play({m}) of an illegal move succeeded after {i} plies of {line}",
                    G::NAME
                );
                prop_assert_eq!(&tried, pos, "a failed try_play changed the position");
            }
            if pos.outcome().is_some() {
                prop_assert!(result.is_err(), "try_play after the end of {}", line);
            }
        }
    }
    Ok(())
}

/// 3. Keys over a batch of playouts: equal positions have equal keys, and no two different
///    positions met share a key.
fn check_keys<G: Game>(batch: &[Vec<u32>]) -> Check {
    let mut by_key: HashMap<u64, (G, String)> = HashMap::new();
    let mut by_position: HashMap<G, u64> = HashMap::new();
    for choices in batch {
        let game = playout::<G>(choices)?;
        for (i, pos) in game.positions.iter().enumerate() {
            let key = pos.key();
            let here = format!("'{}'", game.notation(i, " "));
            prop_assert_eq!(pos.clone().key(), key);
            if let Some(&earlier) = by_position.get(pos) {
                prop_assert_eq!(
                    earlier,
                    key,
                    "{}: equal positions, different keys, at {}",
                    G::NAME,
                    here
                );
            }
            by_position.insert(pos.clone(), key);
            if let Some((other, there)) = by_key.get(&key) {
                prop_assert_eq!(
                    other,
                    pos,
                    "{}: key {:#x} is shared by the different positions {} and {}",
                    G::NAME,
                    key,
                    there,
                    here
                );
            } else {
                by_key.insert(key, (pos.clone(), here));
            }
        }
    }
    Ok(())
}

/// 4. Notation: `parse_move(format_move(m)) == m` for every action in every position, and
///    `parse_position` of every prefix of the game, written with each separator the game
///    reads, gives back the same position.
fn check_notation<G: Game>(choices: &[u32], separators: &[&str]) -> Check {
    let game = playout::<G>(choices)?;
    for (i, pos) in game.positions.iter().enumerate() {
        for m in 0..G::NUM_ACTIONS as Move {
            let text = pos.format_move(m);
            prop_assert_eq!(
                pos.parse_move(&text),
                Ok(m),
                "{}: move {} is formatted '{}'",
                G::NAME,
                m,
                text
            );
        }
        for sep in separators {
            let text = game.notation(i, sep);
            let parsed = G::parse_position(&text);
            prop_assert!(
                parsed.as_ref() == Ok(pos),
                "{}: parse_position('{text}') gives {parsed:?}, not {pos:?}",
                G::NAME
            );
        }
    }
    Ok(())
}

/// 5. Encoding: exactly `G::input_size()` floats written (whatever the buffer held, nothing
///    past them), all 0 or 1; plane 0 the mover's stones, plane 1 the opponent's (disjoint,
///    with the counts of the game's own accessors), plane 2 all ones exactly when `First` is
///    to move. Across a move the planes swap sides: the stones of the side that moved stay
///    its own (every game of the crate places stones that stay on the board; Othello only
///    recolours the opponent's).
fn check_encoding<G: StoneCount>(choices: &[u32]) -> Check {
    prop_assert_eq!(G::PLANES, 3);
    prop_assert_eq!(G::cells(), G::HEIGHT * G::WIDTH);
    prop_assert_eq!(G::input_size(), G::PLANES * G::HEIGHT * G::WIDTH);
    let (n, size) = (G::cells(), G::input_size());
    const GUARD: usize = 8;
    let game = playout::<G>(choices)?;
    let line = game.line();
    let mut previous: Option<Vec<f32>> = None;
    for (i, pos) in game.positions.iter().enumerate() {
        let at = format!("{} after {} plies of {}", G::NAME, i, line);
        let mut planes = vec![f32::NAN; size + GUARD];
        pos.encode(&mut planes[..size]);
        let mut over_ones = vec![1.0; size];
        pos.encode(&mut over_ones);
        prop_assert!(
            planes[size..].iter().all(|v| v.is_nan()),
            "{at}: encode wrote past its input size"
        );
        planes.truncate(size);
        prop_assert!(
            planes.iter().all(|&v| v == 0.0 || v == 1.0),
            "{at}: encoding values other than 0 and 1 (or unwritten): {planes:?}"
        );
        prop_assert_eq!(
            &planes,
            &over_ones,
            "{}: encoding depends on the buffer",
            at
        );
        let (mine, rest) = planes.split_at(n);
        let (theirs, flag) = rest.split_at(n);
        prop_assert!(
            mine.iter().zip(theirs).all(|(a, b)| a * b == 0.0),
            "{at}: a cell on both planes 0 and 1"
        );
        let me = pos.to_move();
        let count = |plane: &[f32]| plane.iter().sum::<f32>() as u32;
        prop_assert_eq!(count(mine), pos.stone_count(me), "{}: plane 0", at);
        prop_assert_eq!(
            count(theirs),
            pos.stone_count(me.other()),
            "{}: plane 1",
            at
        );
        let first = if me == Player::First { 1.0 } else { 0.0 };
        prop_assert!(
            flag.iter().all(|&v| v == first),
            "{at}: plane 2 with {me:?} to move: {flag:?}"
        );
        if let Some(before) = &previous {
            for c in 0..n {
                // the side that just moved: plane 0 before, plane 1 now
                prop_assert!(
                    before[c] <= theirs[c],
                    "{at}: the mover's stone on cell {c} is gone"
                );
                // the side to move now: plane 1 before, plane 0 now
                prop_assert!(
                    mine[c] <= before[n + c],
                    "{at}: a stone of the side to move appeared on cell {c}"
                );
            }
        }
        previous = Some(planes);
    }
    Ok(())
}

/// 6. Symmetry coherence. For each symmetry S, the image game (S applied to every move, from
///    the start) is legal, and after every ply: the image's encoding is S applied to the
///    planes, its legal moves are the images of the legal moves, `apply_policy` moves action
///    `a`'s probability to `actions[a]` and carries the legal-move mask onto the image's,
///    and ply, side to move and outcome agree.
fn check_symmetries<G: Game>(choices: &[u32]) -> Check {
    let game = playout::<G>(choices)?;
    let line = game.line();
    let (size, k) = (G::input_size(), G::NUM_ACTIONS);
    let policy: Vec<f32> = (0..k).map(|a| (a + 1) as f32).collect();
    let mask = |legal: &[Move]| {
        let mut v = vec![0.0; k];
        for &m in legal {
            v[m as usize] = 1.0;
        }
        v
    };
    for (s_index, s) in G::symmetries().iter().enumerate() {
        let Symmetry { cells, actions } = s;
        prop_assert_eq!(cells.len(), G::cells());
        prop_assert_eq!(actions.len(), k);
        let mut image = G::new();
        for (i, pos) in game.positions.iter().enumerate() {
            let at = format!(
                "{}: symmetry {} (actions {:?}), after {} plies of {}",
                G::NAME,
                s_index,
                actions,
                i,
                line
            );
            prop_assert_eq!(image.ply(), pos.ply(), "{}", at);
            prop_assert_eq!(image.to_move(), pos.to_move(), "{}", at);
            prop_assert_eq!(image.outcome(), pos.outcome(), "{}: outcome", at);

            let mut expected = vec![f32::NAN; size];
            s.apply_planes(&encoding(pos), &mut expected);
            prop_assert_eq!(
                encoding(&image),
                expected,
                "{}: the image's encoding is not S applied to the planes",
                at
            );

            let legal = pos.legal_moves();
            let image_legal = image.legal_moves();
            prop_assert_eq!(
                sorted(legal.iter().map(|&m| s.apply_move(m))),
                sorted(image_legal.iter().copied()),
                "{}: images of the legal moves {:?}",
                at,
                legal
            );

            let mut moved = vec![f32::NAN; k];
            s.apply_policy(&policy, &mut moved);
            for a in 0..k {
                prop_assert_eq!(
                    moved[actions[a]],
                    policy[a],
                    "{}: policy of action {}",
                    at,
                    a
                );
                prop_assert_eq!(s.apply_move(a as Move) as usize, actions[a]);
            }
            let mut moved_mask = vec![f32::NAN; k];
            s.apply_policy(&mask(&legal), &mut moved_mask);
            prop_assert_eq!(
                moved_mask,
                mask(&image_legal),
                "{}: the legal-move mask under apply_policy",
                at
            );

            if let Some(&m) = game.moves.get(i) {
                let m_image = s.apply_move(m);
                prop_assert!(
                    image.is_legal(m_image),
                    "{at}: the image {} of move {} is illegal in the image position",
                    image.format_move(m_image),
                    pos.format_move(m)
                );
                image.play(m_image);
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The game's facts (zero::catalog)

/// 7. The board as the page draws it: with [`Layout::Cells`], a move `m` on the board puts the
///    mover's stone on the empty cell `m`; with [`Layout::Columns`], move `c` puts it on the
///    lowest empty cell of column `c`. Every move that cannot be played in a position that is
///    not over has a refusal in words.
fn check_board<G: Catalogued>(choices: &[u32]) -> Check {
    let game = playout::<G>(choices)?;
    let line = game.line();
    let (rows, cols) = (G::HEIGHT, G::WIDTH);
    for (i, &m) in game.moves.iter().enumerate() {
        let (pos, next) = (&game.positions[i], &game.positions[i + 1]);
        let at = format!(
            "{}: move {} after {} plies of {}",
            G::NAME,
            pos.format_move(m),
            i,
            line
        );
        let (before, after) = (owners(pos), owners(next));
        let mover = pos.to_move().index() as u8 + 1;
        let cell = match G::BOARD.layout {
            Layout::Cells => (usize::from(m) < rows * cols).then_some(usize::from(m)),
            Layout::Columns => (usize::from(m) < cols).then(|| {
                (0..rows)
                    .rev()
                    .map(|r| r * cols + usize::from(m))
                    .find(|&c| before[c] == 0)
                    .unwrap_or(usize::MAX)
            }),
        };
        if let Some(c) = cell {
            prop_assert!(
                c < before.len() && before[c] == 0,
                "{}: no empty cell for it",
                at
            );
            prop_assert_eq!(after[c], mover, "{}: the stone is not on cell {}", at, c);
        }
        for illegal in (0..G::NUM_ACTIONS as Move).filter(|&x| !pos.is_legal(x)) {
            prop_assert!(!pos.refusal(illegal).is_empty(), "{}: no refusal", at);
        }
        check_winning_cells(next, &after, &at)?;
    }
    Ok(())
}

/// 7b. The cells a board marks at the end hold the winner's stones, each once, top row first
///     as [`owners`] numbers them; a game not won (going on or drawn) marks none.
fn check_winning_cells<G: Game>(pos: &G, cells: &[u8], at: &str) -> Check {
    let marked = pos.winning_cells();
    match pos.outcome() {
        Some(Outcome::Win(p)) => {
            let winner = p.index() as u8 + 1;
            prop_assert!(
                marked.windows(2).all(|w| w[0] < w[1]),
                "{}: winning cells {:?} not each once in order",
                at,
                marked
            );
            for &c in &marked {
                prop_assert!(
                    c < cells.len() && cells[c] == winner,
                    "{}: winning cell {} of {:?} is not the winner's",
                    at,
                    c,
                    marked
                );
            }
        }
        _ => prop_assert!(marked.is_empty(), "{}: {:?} marked, no win", at, marked),
    }
    Ok(())
}

/// A game that lasts: ply `i` plays the first legal move, from number `choices[i]` on, that
/// does not end the game, if there is one.
fn long_playout<G: Game>(choices: &[u32]) -> Playout<G> {
    let mut pos = G::new();
    let mut out = Playout {
        moves: Vec::new(),
        positions: vec![pos.clone()],
    };
    while out.moves.len() < G::MAX_PLIES {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let first = choices.get(out.moves.len()).copied().unwrap_or(0) as usize;
        let goes_on = |&m: &Move| {
            let mut child = pos.clone();
            child.play(m);
            child.outcome().is_none()
        };
        let turned = (0..legal.len()).map(|k| legal[(first + k) % legal.len()]);
        let m = turned
            .clone()
            .find(goes_on)
            .unwrap_or(legal[first % legal.len()]);
        pos.play(m);
        out.moves.push(m);
        out.positions.push(pos.clone());
    }
    out
}

/// 8. The exact solver ([`Catalogued::exact`]) on the last positions of a long game agrees
///    with the exhaustive search: the value's sign, each move's result and plies to the end,
///    and the optimal moves; the `solver` player and the `rules` player (if any) play legal
///    moves.
fn check_exact<G: Catalogued>(choices: &[u32]) -> Check {
    let game = long_playout::<G>(choices);
    let line = game.line();
    let files = tempfile::tempdir().unwrap();
    let mut exact = G::exact(None).unwrap();
    let mut solver = G::solver_agent(files.path());
    let mut rules = G::rules_agent();
    let mut table = SolveTable::new();
    let near_end = |pos: &&G| pos.outcome().is_none() && pos.ply() + EXACT_PLIES >= G::MAX_PLIES;
    for (i, pos) in game
        .positions
        .iter()
        .enumerate()
        .filter(|(_, p)| near_end(p))
    {
        let at = format!("{} after {} plies of {}", G::NAME, i, line);
        let truth = score_sign(solve_value(pos, &mut table));
        prop_assert_eq!(exact.value(pos).unwrap().signum(), truth, "{}: value", at);
        let results = exact.move_results(pos);
        prop_assert_eq!(
            results.iter().map(|r| r.0).collect::<Vec<_>>(),
            pos.legal_moves().to_vec(),
            "{}: moves of the results",
            at
        );
        for (m, result) in results {
            let mut child = pos.clone();
            child.play(m);
            let v = -solve_value(&child, &mut table);
            prop_assert_eq!(
                result,
                Some((score_sign(v), plies_to_end(pos, v))),
                "{}: move {}",
                at,
                pos.format_move(m)
            );
        }
        let best = exact.best_moves(pos).unwrap();
        prop_assert!(!best.is_empty(), "{}: no best move", at);
        for m in best {
            let mut child = pos.clone();
            child.play(m);
            prop_assert_eq!(
                -score_sign(solve_value(&child, &mut table)),
                truth,
                "{}",
                at
            );
        }
        prop_assert!(pos.is_legal(solver.choose(pos).unwrap()), "{}: solver", at);
        if let Some(rules) = rules.as_mut() {
            prop_assert!(pos.is_legal(rules.choose(pos).unwrap()), "{}: rules", at);
        }
    }
    Ok(())
}

/// The exact score's result for the mover: 1, 0 or -1 (`zero::search::score_sign`).
fn score_sign(score: i32) -> i32 {
    zero::search::score_sign(score)
}

/// Plies until the end with best play (`zero::search::plies_to_end`).
fn plies_to_end<G: Game>(pos: &G, score: i32) -> Option<u32> {
    zero::search::plies_to_end(pos, score)
}

/// 9. The facts themselves: a title, two sides with distinct names and marks, the names of
///    the board's moves (what a click plays) distinct and read back by `parse_move`, and an
///    evaluation set whose every position is unfinished and values exactly its legal moves.
fn check_facts<G: Catalogued>() {
    let facts = Facts::of::<G>();
    assert!(!G::TITLE.is_empty());
    let [a, b] = G::SIDES;
    assert!(!a.name.is_empty() && !a.mark.is_empty() && a.name != b.name && a.mark != b.mark);
    let start = G::new();
    let names: Vec<&String> = facts.moves.iter().chain(&facts.other_moves).collect();
    assert_eq!(
        names.len(),
        G::NUM_ACTIONS,
        "{}: a name for every move",
        G::NAME
    );
    for (m, name) in names.iter().enumerate() {
        assert_eq!(
            start.parse_move(name),
            Ok(m as Move),
            "{}: move '{name}'",
            G::NAME
        );
    }
    let example = G::parse_position(&facts.example_position);
    assert!(
        example.as_ref().is_ok_and(|p| p.ply() > 0),
        "{}: the example position '{}' reads as {example:?}",
        G::NAME,
        facts.example_position
    );
    let set = G::eval_set().unwrap();
    assert!(!set.is_empty(), "{}: an empty evaluation set", G::NAME);
    for e in &set.entries {
        assert!(
            e.position.outcome().is_none(),
            "{}: {} is over",
            G::NAME,
            e.label
        );
        let valued: Vec<Move> = (0..G::NUM_ACTIONS as Move)
            .filter(|&m| e.values.get(m as usize).copied().flatten().is_some())
            .collect();
        assert_eq!(
            valued,
            e.position.legal_moves().to_vec(),
            "{}: {}",
            G::NAME,
            e.label
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The suite, once per game

macro_rules! conformance_suite {
    ($module:ident, $game:ty) => {
        mod $module {
            use super::*;

            type G = $game;

            #[test]
            fn start_position_is_not_over() {
                check_start::<G>();
            }

            #[test]
            fn symmetries_are_distinct_permutations_identity_first() {
                check_symmetry_group::<G>();
            }

            #[test]
            fn keys_are_unique_over_all_positions_to_depth() {
                let (depth, positions) = check_keys_exhaustive::<G>();
                println!(
                    "{}: keys of {positions} positions to depth {depth}",
                    G::NAME
                );
            }

            #[test]
            fn facts_name_every_move_and_the_evaluation_set_is_sound() {
                check_facts::<G>();
            }

            proptest! {
                #![proptest_config(config())]

                #[test]
                fn flow_terminal_ply_and_side_to_move(choices in choices::<G>()) {
                    check_flow::<G>(&choices)?;
                }

                #[test]
                fn is_legal_and_try_play_agree_with_legal_moves(choices in choices::<G>()) {
                    check_legality::<G>(&choices)?;
                }

                #[test]
                fn keys_are_unique_among_playout_positions(
                    batch in prop::collection::vec(choices::<G>(), 1..=PLAYOUTS_PER_BATCH),
                ) {
                    check_keys::<G>(&batch)?;
                }

                #[test]
                fn moves_and_positions_round_trip_through_notation(choices in choices::<G>()) {
                    check_notation::<G>(&choices, &[""])?;
                }

                #[test]
                fn encoding_size_values_and_planes(choices in choices::<G>()) {
                    check_encoding::<G>(&choices)?;
                }

                #[test]
                fn symmetries_are_coherent_on_moves_planes_and_policies(
                    choices in choices::<G>(),
                ) {
                    check_symmetries::<G>(&choices)?;
                }
            }

            proptest! {
                #![proptest_config(config())]

                #[test]
                fn stones_land_where_the_layout_says_and_refusals_explain(
                    choices in choices::<G>(),
                ) {
                    check_board::<G>(&choices)?;
                }
            }

            proptest! {
                #![proptest_config(Config { cases: EXACT_CASES, ..config() })]

                #[test]
                fn the_exact_solver_agrees_with_the_exhaustive_search(choices in choices::<G>()) {
                    check_exact::<G>(&choices)?;
                }
            }
        }
    };
}

// Every game of the list, with no line of its own here.
zero::for_each_game!(conformance_suite);

// ---------------------------------------------------------------------------------------------
// What the shipped games promise beyond the suite

/// The symmetries each game has: Connect Four's mirror, tic-tac-toe's whole dihedral group,
/// and the four of 4x4 Othello that keep its start.
#[test]
fn the_shipped_games_have_their_symmetries() {
    assert_eq!(Connect4::symmetries().len(), 2);
    assert_eq!(TicTacToe::symmetries().len(), 8);
    assert_eq!(Othello4::symmetries().len(), 4);
}

proptest! {
    #![proptest_config(config())]

    /// Othello's positions also read with spaces between moves ("b1 a1 pass").
    #[test]
    fn othello4_positions_read_with_spaces(choices in choices::<Othello4>()) {
        check_notation::<Othello4>(&choices, &[" "])?;
    }
}
