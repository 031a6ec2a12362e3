//! One generic conformance suite for every board game of the crate, in the spirit of
//! OpenSpiel's generic game tests: each property is a function `check_xxx<G: Game>` that uses
//! only the public game API, instantiated once per game by `conformance_suite!` at the bottom.
//!
//! The random properties run on playouts driven by proptest. A playout is a vector of move
//! choices: ply `i` plays legal move number `choices[i] % legal.len()` (the first legal move
//! once the vector runs out), always to the end of the game. A failure therefore shrinks to a
//! short vector of small choices, and the messages name the move sequence in the game's own
//! notation, which `zero` and `parse_position` read back.

use std::collections::{HashMap, HashSet, VecDeque};

use proptest::prelude::*;
use proptest::test_runner::Config;
use zero::games::{Connect4, Game, Move, Othello4, Player, Symmetry, TicTacToe};

type Check = Result<(), TestCaseError>;

/// Cases per property per game.
const CASES: u32 = 256;
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

/// Stones per side, from each game's own accessors: pins down which encoding plane is whose.
trait StoneCount: Game {
    fn stone_count(&self, player: Player) -> u32;
}

impl StoneCount for Connect4 {
    fn stone_count(&self, player: Player) -> u32 {
        self.stones(player).count_ones()
    }
}

impl StoneCount for TicTacToe {
    fn stone_count(&self, player: Player) -> u32 {
        self.stones(player).count_ones()
    }
}

impl StoneCount for Othello4 {
    fn stone_count(&self, player: Player) -> u32 {
        self.discs(player).count_ones()
    }
}

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

/// `G::symmetries()`: the expected number, identity first, every map a permutation of the
/// right size, no two alike.
fn check_symmetry_group<G: Game>(expected: usize) {
    let syms = G::symmetries();
    assert_eq!(syms.len(), expected, "{}: number of symmetries", G::NAME);
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
    }
}

/// Every position reachable in at most `depth` plies (all of them when `depth` is
/// `G::MAX_PLIES`), breadth first: distinct positions have distinct keys. A collision names a
/// shortest move sequence to each of the two positions.
fn check_keys_exhaustive<G: Game>(depth: usize) {
    let mut by_key: HashMap<u64, (G, String)> = HashMap::new();
    let mut seen: HashSet<G> = HashSet::from([G::new()]);
    let mut queue: VecDeque<(G, Vec<String>)> = VecDeque::from([(G::new(), Vec::new())]);
    while let Some((pos, line)) = queue.pop_front() {
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
// The suite, once per game

macro_rules! conformance_suite {
    (
        $module:ident,
        $game:ty,
        symmetries: $symmetries:expr,
        position_separators: $separators:expr,
        exhaustive_key_depth: $depth:expr $(,)?
    ) => {
        mod $module {
            use super::*;

            type G = $game;

            #[test]
            fn start_position_is_not_over() {
                check_start::<G>();
            }

            #[test]
            fn symmetries_are_distinct_permutations_identity_first() {
                check_symmetry_group::<G>($symmetries);
            }

            #[test]
            fn keys_are_unique_over_all_positions_to_depth() {
                check_keys_exhaustive::<G>($depth);
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
                    check_notation::<G>(&choices, $separators)?;
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
        }
    };
}

// Connect Four: mirror only; positions are digit strings ("4453"), no separator.
conformance_suite!(
    connect4,
    Connect4,
    symmetries: 2,
    position_separators: &[""],
    exhaustive_key_depth: 8,
);

// Tic-tac-toe: the whole dihedral group; positions are digit strings ("5137").
conformance_suite!(
    tictactoe,
    TicTacToe,
    symmetries: 8,
    position_separators: &[""],
    exhaustive_key_depth: TicTacToe::MAX_PLIES,
);

// Othello 4x4: the symmetries that keep the start; positions read "b1 a1 pass" and "b1a1pass".
conformance_suite!(
    othello4,
    Othello4,
    symmetries: 4,
    position_separators: &[" ", ""],
    exhaustive_key_depth: Othello4::MAX_PLIES,
);
