//! Grading a player on an evaluation set: positions from every stage of a game, each with the
//! exact win/draw/loss value of every legal move, and the share of a player's moves that are
//! mistakes there (a move whose value is worse than the position's best, the definition of
//! [`super::accuracy`]). Connect Four's set is solved once by `zero evalset` and compiled into
//! the binary from `data/connect4/evalset.txt`, so nothing depends on the working directory;
//! the small games' sets are solved exhaustively when asked for (a fraction of a second).
//! Which set a game grades on is one of its facts ([`crate::catalog::Catalogued::eval_set`]).
//!
//! The pipeline grades `best` on it every iteration, which gives a learning curve on an
//! absolute scale. The solver only grades: nothing of it ever reaches training.

use std::collections::HashSet;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{for_each_item, AgentFactory};
use crate::core::progress;
use crate::core::rng::{item_seed, rng_from_seed, SeedStream};
use crate::games::{Game, Move};
use crate::search::score_sign;
use crate::solvers::exhaustive::{solve_value, SolveTable};

/// Connect Four's evaluation set as `zero evalset` wrote it.
pub const CONNECT4_EVALSET: &str = include_str!("../../data/connect4/evalset.txt");
/// Where `zero evalset` writes Connect Four's set (and where the build reads it from).
pub const CONNECT4_EVALSET_PATH: &str = "data/connect4/evalset.txt";

/// The seeds of the pipeline's grading: iteration `i` grades with seed `i` of this stream.
pub const GRADING: SeedStream = SeedStream::new(0x67ad);

/// Positions in a small game's set, and the seed of the random games they come from.
pub const SMALL_SET_POSITIONS: usize = 300;
pub const SMALL_SET_SEED: u64 = 11;

/// The exact value of a move for the player who makes it; worse sorts first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MoveValue {
    Loss,
    Draw,
    Win,
}

impl MoveValue {
    /// From a score's sign: positive a win, zero a draw, negative a loss.
    pub fn from_sign(sign: i32) -> MoveValue {
        match sign.signum() {
            1 => MoveValue::Win,
            0 => MoveValue::Draw,
            _ => MoveValue::Loss,
        }
    }
    fn letter(value: Option<MoveValue>) -> char {
        match value {
            Some(MoveValue::Win) => 'W',
            Some(MoveValue::Draw) => 'D',
            Some(MoveValue::Loss) => 'L',
            None => '-',
        }
    }
    fn parse(s: &str) -> Option<Option<MoveValue>> {
        match s {
            "W" => Some(Some(MoveValue::Win)),
            "D" => Some(Some(MoveValue::Draw)),
            "L" => Some(Some(MoveValue::Loss)),
            "-" => Some(None),
            _ => None,
        }
    }
}

/// One position of a set and the exact value of each of its moves.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalEntry<G> {
    /// Where the position comes from (`L3_R1`, `selfplay`, `early`, ...).
    pub group: String,
    /// The position as written in the file: the moves from the start (`start` for none).
    pub label: String,
    pub position: G,
    /// The value of each action for the side to move, by action index; `None` where illegal.
    pub values: Vec<Option<MoveValue>>,
}

impl<G: Game> EvalEntry<G> {
    /// The value of the best legal move.
    pub fn best(&self) -> Option<MoveValue> {
        self.values.iter().flatten().max().copied()
    }
    /// Whether `m` is worse than the best move; an illegal move is an error.
    pub fn is_mistake(&self, m: Move) -> Result<bool> {
        match self.values.get(m as usize) {
            Some(Some(v)) => Ok(Some(*v) < self.best()),
            _ => bail!(
                "the player chose the illegal move {} in position {}",
                self.position.format_move(m),
                self.label
            ),
        }
    }
}

/// An evaluation set, its entries grouped by source in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalSet<G> {
    pub entries: Vec<EvalEntry<G>>,
    /// The size of the set this one was taken from ([`EvalSet::subset`]); its length if whole.
    pub whole: usize,
}

/// The position text of `moves` played from the start, as [`EvalSet::parse`] reads it.
pub fn position_label<G: Game>(moves: &[Move]) -> String {
    let mut pos = G::new();
    let mut s = String::new();
    for &m in moves {
        s.push_str(&pos.format_move(m));
        pos.play(m);
    }
    if s.is_empty() {
        s.push_str("start");
    }
    s
}

pub(super) fn parse_position<G: Game>(s: &str) -> Result<G> {
    let pos = if s == "start" {
        G::new()
    } else {
        G::parse_position(s)?
    };
    if pos.outcome().is_some() {
        bail!("position {s}: the game is already over");
    }
    Ok(pos)
}

impl<G: Game> EvalSet<G> {
    pub fn new(entries: Vec<EvalEntry<G>>) -> EvalSet<G> {
        let whole = entries.len();
        EvalSet { entries, whole }
    }
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Reads lines `GROUP POSITION V...` (one value `W`, `D`, `L` or `-` per action) and `#`
    /// comments; `source` names the text in errors, which give the line.
    pub fn parse(text: &str, source: &str) -> Result<EvalSet<G>> {
        let mut entries = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let entry = Self::parse_line(line).with_context(|| {
                format!(
                    "{source} line {}: not an evaluation-set line: '{line}'",
                    n + 1
                )
            })?;
            entries.push(entry);
        }
        if entries.is_empty() {
            bail!("{source} holds no positions (regenerate it with `zero evalset`)");
        }
        Ok(EvalSet::new(entries))
    }

    fn parse_line(line: &str) -> Result<EvalEntry<G>> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() != 2 + G::NUM_ACTIONS {
            bail!(
                "expected a group, a position and {} values, got {} fields",
                G::NUM_ACTIONS,
                fields.len()
            );
        }
        let position: G = parse_position(fields[1])?;
        let values = fields[2..]
            .iter()
            .map(|v| MoveValue::parse(v).ok_or_else(|| anyhow!("'{v}' is not W, D, L or -")))
            .collect::<Result<Vec<_>>>()?;
        for (m, v) in values.iter().enumerate() {
            if position.is_legal(m as Move) != v.is_some() {
                bail!(
                    "move {} is {}legal, yet its value is '{}'",
                    position.format_move(m as Move),
                    if v.is_some() { "not " } else { "" },
                    MoveValue::letter(*v)
                );
            }
        }
        Ok(EvalEntry {
            group: fields[0].to_string(),
            label: fields[1].to_string(),
            position,
            values,
        })
    }

    /// The set as text: `header` lines as `#` comments, then one line a position.
    pub fn to_text(&self, header: &[String]) -> String {
        let mut s: String = header.iter().map(|h| format!("# {h}\n")).collect();
        for e in &self.entries {
            let values: Vec<String> = e
                .values
                .iter()
                .map(|v| MoveValue::letter(*v).to_string())
                .collect();
            s.push_str(&format!("{} {} {}\n", e.group, e.label, values.join(" ")));
        }
        s
    }

    /// The groups in the order they first appear.
    pub fn groups(&self) -> Vec<String> {
        let mut groups: Vec<String> = Vec::new();
        for e in &self.entries {
            if !groups.contains(&e.group) {
                groups.push(e.group.clone());
            }
        }
        groups
    }

    /// `n` entries evenly spaced in file order (the whole set if `n` is not smaller), so a
    /// subset keeps every group and, within one, its spread; always the same ones.
    pub fn subset(&self, n: usize) -> EvalSet<G> {
        let len = self.len();
        if n >= len {
            return self.clone();
        }
        let entries = (0..n).map(|i| self.entries[i * len / n].clone()).collect();
        EvalSet {
            entries,
            whole: self.whole,
        }
    }
}

/// Mistakes in one group of a set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupResult {
    pub group: String,
    pub positions: u64,
    pub mistakes: u64,
    pub mistake_rate: f64,
}

/// A player's grade on a set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GradeResult {
    pub positions: u64,
    pub mistakes: u64,
    pub mistake_rate: f64,
    pub groups: Vec<GroupResult>,
    /// The size of the whole set: fewer `positions` means an evenly spaced subset of it
    /// ([`EvalSet::subset`]).
    pub set_positions: u64,
    pub seconds: f64,
}

fn rate(mistakes: u64, positions: u64) -> f64 {
    mistakes as f64 / positions.max(1) as f64
}

/// Grades the players of `factory` (one a thread, `threads` of them) on `set`: each position
/// is a new game seeded by `seed` and its index, so the grade does not depend on the threads.
pub fn grade<G: Game>(
    factory: &AgentFactory<G>,
    set: &EvalSet<G>,
    threads: usize,
    seed: u64,
    progress: bool,
) -> Result<GradeResult> {
    let started = Instant::now();
    let task = progress::task(set.len() as u64, "positions", progress);
    let mistakes = for_each_item(set.len(), threads, &task, factory, |agent, i| {
        let entry = &set.entries[i];
        agent.new_game(item_seed(seed, i as u64));
        let m = agent.choose(&entry.position)?;
        entry.is_mistake(m)
    })?;
    drop(task);
    let groups = set
        .groups()
        .into_iter()
        .map(|group| {
            let in_group = || (0..set.len()).filter(|&i| set.entries[i].group == group);
            let positions = in_group().count() as u64;
            let wrong = in_group().filter(|&i| mistakes[i]).count() as u64;
            GroupResult {
                group,
                positions,
                mistakes: wrong,
                mistake_rate: rate(wrong, positions),
            }
        })
        .collect();
    let (positions, wrong) = (
        set.len() as u64,
        mistakes.iter().filter(|&&m| m).count() as u64,
    );
    Ok(GradeResult {
        positions,
        mistakes: wrong,
        mistake_rate: rate(wrong, positions),
        groups,
        set_positions: set.whole as u64,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// A small game's set: the distinct unfinished positions of seeded random games, `positions`
/// of them (fewer if the game has fewer), every move valued by the exhaustive solver; grouped
/// `early`, `middle` and `late` by thirds of the plies the sample reaches.
pub fn small_game_set<G: Game>(positions: usize, seed: u64) -> EvalSet<G> {
    let mut rng = rng_from_seed(seed);
    let mut seen = HashSet::new();
    let mut found: Vec<Vec<Move>> = Vec::new();
    // Random games find new positions ever more slowly; a bound keeps a tiny game finite.
    for _ in 0..100 * positions {
        let (mut pos, mut moves) = (G::new(), Vec::new());
        while found.len() < positions {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            if seen.insert(pos.clone()) {
                found.push(moves.clone());
            }
            let m = legal[rng.random_range(0..legal.len())];
            pos.play(m);
            moves.push(m);
        }
        if found.len() >= positions {
            break;
        }
    }
    // `MAX_PLIES` would not do: Othello's counts passes that games hardly ever make.
    let plies = found.iter().map(|m| m.len() + 1).max().unwrap_or(1);
    let stage = |moves: usize| (3 * moves / plies).min(2);
    found.sort_by_key(|moves| stage(moves.len()));
    let mut table = SolveTable::new();
    let entries = found
        .iter()
        .map(|moves| {
            let mut pos = G::new();
            moves.iter().for_each(|&m| pos.play(m));
            let mut values = vec![None; G::NUM_ACTIONS];
            for m in pos.legal_moves() {
                let mut child = pos.clone();
                child.play(m);
                let score = -solve_value(&child, &mut table);
                values[m as usize] = Some(MoveValue::from_sign(score_sign(score)));
            }
            EvalEntry {
                group: ["early", "middle", "late"][stage(moves.len())].to_string(),
                label: position_label::<G>(moves),
                position: pos,
                values,
            }
        })
        .collect();
    EvalSet::new(entries)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::path::Path;

    use super::*;
    use crate::agent::{Agent, RandomAgent};
    use crate::arena::accuracy::accuracy;
    use crate::games::Outcome;
    use crate::games::{Connect4, Othello4, TicTacToe};
    use crate::solvers::connect4::{read_labelled_positions, Position};
    use crate::solvers::connect4_book::Oracle;
    use crate::solvers::exhaustive::SolverAgent;

    /// Connect Four's shipped set (the catalog's, read here without it).
    fn connect4_set() -> Result<EvalSet<Connect4>> {
        EvalSet::parse(CONNECT4_EVALSET, CONNECT4_EVALSET_PATH)
    }

    /// Plays column `self.0` where it can, else the first legal move.
    struct Column(Move);
    impl<G: Game> Agent<G> for Column {
        fn choose(&mut self, pos: &G) -> Result<Move> {
            let legal = pos.legal_moves();
            if legal.contains(&self.0) {
                return Ok(self.0);
            }
            legal.first().copied().ok_or_else(|| anyhow!("game over"))
        }
    }

    /// Plays a move of the worst value the set gives.
    struct Worst<G>(HashMap<G, Vec<Option<MoveValue>>>);
    impl<G: Game> Agent<G> for Worst<G> {
        fn choose(&mut self, pos: &G) -> Result<Move> {
            let values = self.0.get(pos).ok_or_else(|| anyhow!("not in the set"))?;
            let worst = (0..values.len()).filter(|&m| values[m].is_some());
            worst
                .min_by_key(|&m| values[m])
                .map(|m| m as Move)
                .ok_or_else(|| anyhow!("no move"))
        }
    }

    fn worst_factory<G: Game>(set: &EvalSet<G>) -> impl Fn() -> Result<Box<dyn Agent<G>>> + Sync {
        let table: HashMap<G, Vec<Option<MoveValue>>> = set
            .entries
            .iter()
            .map(|e| (e.position.clone(), e.values.clone()))
            .collect();
        move || Ok(Box::new(Worst(table.clone())) as Box<dyn Agent<G>>)
    }

    /// Positions where some move is worse than another: the worst player's mistakes.
    fn decisive<G: Game>(set: &EvalSet<G>) -> u64 {
        let spread = |e: &&EvalEntry<G>| e.values.iter().flatten().min() < e.best().as_ref();
        set.entries.iter().filter(spread).count() as u64
    }

    fn pons_scores() -> HashMap<String, (String, usize, i32)> {
        let mut scores = HashMap::new();
        for name in ["L3_R1", "L2_R1", "L2_R2", "L1_R1", "L1_R2", "L1_R3"] {
            let path = format!("tests/data/connect4/Test_{name}");
            for (line, (s, _, score)) in read_labelled_positions(Path::new(&path))
                .unwrap()
                .into_iter()
                .enumerate()
            {
                scores.insert(s, (name.to_string(), line, score));
            }
        }
        scores
    }

    #[test]
    fn the_shipped_connect4_set_is_whole_and_agrees_with_pons_scores() {
        let set = connect4_set().unwrap();
        let sizes: Vec<(String, usize)> = set
            .groups()
            .into_iter()
            .map(|g| {
                (
                    g.clone(),
                    set.entries.iter().filter(|e| e.group == g).count(),
                )
            })
            .collect();
        let names = [
            "L3_R1", "L2_R1", "L2_R2", "L1_R1", "L1_R2", "L1_R3", "selfplay",
        ];
        assert_eq!(
            sizes.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(),
            names
        );
        assert!(sizes[..6].iter().all(|s| s.1 == 100), "{sizes:?}");
        assert_eq!(sizes[6].1, 200);
        let pons = pons_scores();
        let mut keys = HashSet::new();
        for e in &set.entries {
            let key = Position::from_game(&e.position).canonical_key().0;
            assert!(keys.insert(key), "{} twice", e.label);
            match pons.get(&e.label) {
                Some((file, line, score)) => {
                    assert_eq!(&e.group, file);
                    assert!(*line >= 200, "{} is among the first 200 lines", e.label);
                    assert_eq!(e.best(), Some(MoveValue::from_sign(*score)), "{}", e.label);
                }
                None => assert_eq!(e.group, "selfplay", "{} is not in Pons' file", e.label),
            }
        }
    }

    #[test]
    fn grading_agrees_with_accuracy_on_pons_positions() {
        let set = connect4_set().unwrap();
        let pons = pons_scores();
        let both: Vec<&EvalEntry<Connect4>> = set
            .entries
            .iter()
            .filter(|e| e.group == "L3_R1" || e.group == "L2_R1")
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("positions");
        let lines: String = both
            .iter()
            .map(|e| format!("{} {}\n", e.label, pons[&e.label].2))
            .collect();
        std::fs::write(&file, lines).unwrap();
        let subset = EvalSet::new(both.into_iter().cloned().collect());
        for col in 0..7 {
            let make = move || Ok(Box::new(Column(col)) as Box<dyn Agent<Connect4>>);
            let graded = grade::<Connect4>(&make, &subset, 2, 0, false).unwrap();
            let mut oracle =
                Oracle::new(crate::solvers::connect4::DEFAULT_TABLE_ENTRIES, None).unwrap();
            let acc = accuracy(&mut Column(col), &file, None, 0, &mut oracle, false).unwrap();
            assert_eq!(
                (graded.positions, graded.mistakes),
                (acc.positions, acc.mistakes)
            );
        }
    }

    #[test]
    fn a_perfect_player_makes_no_mistakes_and_the_worst_one_is_counted() {
        let set = connect4_set().unwrap();
        let end = set.entries.iter().filter(|e| e.group.starts_with("L3"));
        let end = EvalSet::new(end.cloned().collect());
        let dir = tempfile::tempdir().unwrap();
        let solver_dir = dir.path().to_path_buf();
        let perfect = move || {
            let agent = crate::solvers::connect4_book::SolverAgent::new(solver_dir.clone());
            Ok(Box::new(agent) as Box<dyn Agent<Connect4>>)
        };
        assert_eq!(
            grade::<Connect4>(&perfect, &end, 2, 3, false)
                .unwrap()
                .mistakes,
            0
        );
        let r = grade::<Connect4>(&worst_factory(&set), &set, 2, 0, false).unwrap();
        assert_eq!(r.mistakes, decisive(&set));
        assert!(r.mistakes > 400, "{}", r.mistakes);
        let by_group: u64 = r.groups.iter().map(|g| g.mistakes).sum();
        assert_eq!(by_group, r.mistakes);
        assert_eq!(r.groups.iter().map(|g| g.positions).sum::<u64>(), 800);
    }

    #[test]
    fn grades_are_the_same_on_any_number_of_threads() {
        let set = connect4_set().unwrap();
        let random = || Ok(Box::new(RandomAgent::new()) as Box<dyn Agent<Connect4>>);
        let one = grade::<Connect4>(&random, &set, 1, 5, false).unwrap();
        let two = grade::<Connect4>(&random, &set, 2, 5, false).unwrap();
        assert_eq!((one.mistakes, &one.groups), (two.mistakes, &two.groups));
        assert_ne!(
            grade::<Connect4>(&random, &set, 2, 6, false)
                .unwrap()
                .groups,
            one.groups
        );
        // A random player errs often; the network must do better than this.
        assert!(one.mistake_rate > 0.2, "{}", one.mistake_rate);
    }

    /// Plain negamax without a table: the win/draw/loss value for the side to move.
    fn negamax(pos: &TicTacToe) -> i32 {
        match pos.outcome() {
            Some(Outcome::Draw) => 0,
            Some(Outcome::Win(p)) => {
                if p == pos.to_move() {
                    1
                } else {
                    -1
                }
            }
            None => pos
                .legal_moves()
                .into_iter()
                .map(|m| {
                    let mut child = *pos;
                    child.play(m);
                    -negamax(&child)
                })
                .max()
                .unwrap_or(0),
        }
    }

    #[test]
    fn the_small_sets_agree_with_negamax_and_the_solver_player() {
        let set = small_game_set::<TicTacToe>(SMALL_SET_POSITIONS, SMALL_SET_SEED);
        assert_eq!(set.len(), SMALL_SET_POSITIONS);
        assert_eq!(set.groups(), ["early", "middle", "late"]);
        for e in &set.entries {
            for m in 0..9 {
                let expected = e.position.is_legal(m).then(|| {
                    let mut child = e.position;
                    child.play(m);
                    MoveValue::from_sign(-negamax(&child))
                });
                assert_eq!(e.values[m as usize], expected, "{} move {m}", e.label);
            }
        }
        let solver = || Ok(Box::new(SolverAgent::<TicTacToe>::new()) as Box<dyn Agent<TicTacToe>>);
        assert_eq!(
            grade::<TicTacToe>(&solver, &set, 2, 0, false)
                .unwrap()
                .mistakes,
            0
        );
        let worst = grade::<TicTacToe>(&worst_factory(&set), &set, 2, 0, false).unwrap();
        assert_eq!(worst.mistakes, decisive(&set));
        let othello = small_game_set::<Othello4>(SMALL_SET_POSITIONS, SMALL_SET_SEED);
        assert_eq!(othello.len(), SMALL_SET_POSITIONS);
        let solver = || Ok(Box::new(SolverAgent::<Othello4>::new()) as Box<dyn Agent<Othello4>>);
        assert_eq!(
            grade::<Othello4>(&solver, &othello, 2, 0, false)
                .unwrap()
                .mistakes,
            0
        );
    }

    #[test]
    fn bad_lines_are_named() {
        for (line, problem) in [
            ("g 4455 W W W W W W", "7 values"),
            ("g 4455 W W W W W W X", "'X'"),
            ("g 444444 W W W W W W W", "move 4 is not legal"),
            ("g 4444444 W W W - W W W", "cannot parse"),
            ("g 4545454 W W W W W W W", "already over"),
            ("g 4455 W W W W - W W", "move 5 is legal"),
        ] {
            let text = format!("# header\n\n{line}\n");
            let e = format!(
                "{:#}",
                EvalSet::<Connect4>::parse(&text, "set.txt").unwrap_err()
            );
            assert!(e.contains("set.txt line 3") && e.contains(problem), "{e}");
        }
        let e = EvalSet::<Connect4>::parse("# only a header\n", "set.txt").unwrap_err();
        assert!(e.to_string().contains("no positions"), "{e}");
    }

    #[test]
    fn subsets_are_evenly_spaced() {
        let set = small_game_set::<TicTacToe>(SMALL_SET_POSITIONS, SMALL_SET_SEED);
        let sub = set.subset(30);
        assert_eq!((sub.len(), sub.whole), (30, 300));
        assert_eq!(sub.entries[1], set.entries[10]);
        assert_eq!(sub.groups(), set.groups());
        assert_eq!(set.subset(1000), set);
    }
}
