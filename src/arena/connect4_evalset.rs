//! Building Connect Four's evaluation set (`zero evalset`): positions sampled from Pons' test
//! files and from self-play games, each labelled with the exact value of every legal move by
//! the project's solver. The set is built once and shipped; grading ([`super::grading`]) only
//! reads it.

use std::collections::HashSet;
use std::path::Path;

use anyhow::Result;
use rand::seq::SliceRandom;

use super::for_each_item;
use super::grading::{parse_position, position_label, EvalEntry, EvalSet, MoveValue};
use crate::core::progress;
use crate::core::rng::rng_from_seed;
use crate::games::{Connect4, Game, Move, Outcome};
use crate::solvers::connect4::{Position, Solver, DEFAULT_TABLE_ENTRIES};
use crate::solvers::connect4_book::Book;

/// The value of playing `m` in `pos` for the side that plays it (win/draw/loss only: the
/// solver's weak search).
fn connect4_move_value(solver: &mut Solver, pos: &Connect4, m: Move) -> MoveValue {
    let mut child = *pos;
    child.play(m);
    match child.outcome() {
        Some(Outcome::Draw) => MoveValue::Draw,
        Some(Outcome::Win(_)) => MoveValue::Win,
        None => MoveValue::from_sign(-solver.solve_weak(&Position::from_game(&child))),
    }
}

/// Labels Connect Four positions (`(group, position)`, the position as columns played):
/// every legal move's exact value, on `threads` threads with a solver each that consults the
/// deepest opening book of `book_dir` (the book built in where it has none), if any.
pub fn label_connect4(
    items: &[(String, String)],
    book_dir: Option<&Path>,
    threads: usize,
    progress: bool,
) -> Result<EvalSet<Connect4>> {
    let positions = items
        .iter()
        .map(|(_, s)| parse_position::<Connect4>(s))
        .collect::<Result<Vec<_>>>()?;
    let book = match book_dir {
        Some(dir) => Some(Book::load_or_built_in(dir)?.0),
        None => None,
    };
    let solver = || -> Result<Solver> {
        let mut solver = Solver::new(DEFAULT_TABLE_ENTRIES);
        if let Some(b) = &book {
            solver.set_book(Box::new(b.clone()));
        }
        Ok(solver)
    };
    let task = progress::task(items.len() as u64, "positions", progress);
    let values = for_each_item(items.len(), threads, &task, solver, |solver, i| {
        let pos = &positions[i];
        let mut values = vec![None; Connect4::NUM_ACTIONS];
        for m in pos.legal_moves() {
            values[m as usize] = Some(connect4_move_value(solver, pos, m));
        }
        Ok(values)
    })?;
    let entries = items
        .iter()
        .zip(positions)
        .zip(values)
        .map(|(((group, label), position), values)| EvalEntry {
            group: group.clone(),
            label: label.clone(),
            position,
            values,
        })
        .collect();
    Ok(EvalSet::new(entries))
}

/// `n` positions of a Pons test file (its lines as read), drawn by `seed` from the lines after
/// the first `skip` (the ones `zero accuracy` is usually run on stay held out), in file order.
pub fn sample_lines(lines: &[String], n: usize, skip: usize, seed: u64) -> Vec<String> {
    let mut picked: Vec<usize> = (skip.min(lines.len())..lines.len()).collect();
    picked.shuffle(&mut rng_from_seed(seed));
    picked.truncate(n);
    picked.sort_unstable();
    picked.into_iter().map(|i| lines[i].clone()).collect()
}

/// A Connect Four position's key up to mirror symmetry, to find repeats.
pub fn connect4_key(pos: &Connect4) -> u64 {
    Position::from_game(pos).canonical_key().0
}

/// Up to `n` positions of self-play games (each the moves from the start) as Connect Four
/// position strings, spread evenly over plies `min_ply..`: each ply's candidates are shuffled
/// by `seed`, then the plies take turns giving their next one, so no stage of the game
/// crowds out another. Finished positions, repeats (mirror images included) and positions
/// whose key is in `exclude` are skipped. Sorted by ply.
pub fn sample_selfplay(
    games: &[Vec<Move>],
    n: usize,
    min_ply: usize,
    exclude: &HashSet<u64>,
    seed: u64,
) -> Vec<String> {
    let mut by_ply: Vec<Vec<&[Move]>> = vec![Vec::new(); Connect4::MAX_PLIES];
    let mut seen = exclude.clone();
    for game in games {
        let mut pos = Connect4::new();
        for (ply, &m) in game.iter().enumerate() {
            if pos.outcome().is_some() || !pos.is_legal(m) {
                break;
            }
            if ply >= min_ply && seen.insert(connect4_key(&pos)) {
                by_ply[ply].push(&game[..ply]);
            }
            pos.play(m);
        }
    }
    let mut rng = rng_from_seed(seed);
    by_ply.iter_mut().for_each(|c| c.shuffle(&mut rng));
    let mut picked: Vec<&[Move]> = Vec::new();
    let mut round = 0;
    while picked.len() < n && by_ply.iter().any(|c| c.len() > round) {
        for candidates in &by_ply {
            if let Some(&moves) = candidates.get(round).filter(|_| picked.len() < n) {
                picked.push(moves);
            }
        }
        round += 1;
    }
    picked.sort_by_key(|moves| moves.len());
    picked
        .iter()
        .map(|moves| position_label::<Connect4>(moves))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_roundtrip_through_the_text_and_match_the_strong_solver() {
        let items: Vec<(String, String)> = [
            "2252576253462244111563365343671351441",
            "4455",
            "44455554221",
        ]
        .iter()
        .map(|p| ("test".to_string(), p.to_string()))
        .collect();
        let set = label_connect4(&items, None, 2, false).unwrap();
        let mut solver = Solver::new(1 << 18);
        for e in &set.entries {
            let p = Position::from_game(&e.position);
            for col in 0..7 {
                let expected = p
                    .can_play(col)
                    .then(|| MoveValue::from_sign(solver.move_score(&p, col)));
                assert_eq!(e.values[col], expected, "{} column {}", e.label, col + 1);
            }
        }
        let text = set.to_text(&["a header".to_string()]);
        assert!(text.starts_with("# a header\ntest 2252576253462244111563365343671351441 "));
        assert_eq!(EvalSet::<Connect4>::parse(&text, "t").unwrap(), set);
    }

    #[test]
    fn pons_samples_follow_the_seed_and_skip_the_held_out_lines() {
        let lines: Vec<String> = (0..50).map(|i| i.to_string()).collect();
        let a = sample_lines(&lines, 10, 20, 1);
        assert_eq!(a, sample_lines(&lines, 10, 20, 1));
        assert_ne!(a, sample_lines(&lines, 10, 20, 2));
        let numbers: Vec<usize> = a.iter().map(|s| s.parse().unwrap()).collect();
        assert!(numbers.windows(2).all(|w| w[0] < w[1]) && numbers[0] >= 20);
    }

    #[test]
    fn selfplay_samples_spread_over_plies_without_repeats() {
        // Two games sharing an opening, and a position to leave out.
        let games: Vec<Vec<Move>> = vec![
            vec![3, 3, 2, 4, 1, 5, 0],
            vec![3, 3, 2, 4, 6, 6, 6, 6, 0, 0],
        ];
        let excluded = Connect4::parse_position("4435").unwrap();
        let exclude = HashSet::from([connect4_key(&excluded)]);
        let picked = sample_selfplay(&games, 100, 2, &exclude, 0);
        let expected = [
            "44",
            "443",
            "44352",
            "44357",
            "443526",
            "443577",
            "4435777",
            "44357777",
            "443577771",
        ];
        assert_eq!(picked.len(), expected.len(), "{picked:?}");
        let picked_set: HashSet<&str> = picked.iter().map(|s| s.as_str()).collect();
        assert_eq!(picked_set, HashSet::from(expected));
        assert!(picked.windows(2).all(|w| w[0].len() <= w[1].len()));
        // Four positions: one of each of the first four plies rather than the first four found.
        let few = sample_selfplay(&games, 4, 2, &exclude, 0);
        let plies: Vec<usize> = few.iter().map(|s| s.len()).collect();
        assert_eq!(plies, [2, 3, 5, 6]);
    }
}
