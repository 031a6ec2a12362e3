//! Self-play records: what each game taught, in a compact binary format.
//!
//! A record keeps the moves, not the positions: training replays them. Each iteration's games
//! are written in chunks `data/<game>/iter-NNNN/chunk-FIRST.bin` (FIRST: the chunk's lowest
//! game number), each a [`Format`] file (postcard inside a checked header) written atomically,
//! so an interrupted self-play keeps every finished game and a resumed one plays only the games
//! that are missing. A chunk that cannot be read is an error naming it; deleting it is always
//! safe (its games are played again).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::core::files::{ensure, write_atomic, Format};

/// The self-play chunk: version 2 puts the chunk inside the checked header of [`Format`];
/// version 3 adds each game's [`GameRecord::trains_from`], version 4 its policy surprises,
/// version 5 its [`GameRecord::random_plies`]; version 6 leaves the surprises out again (their
/// weighting was not adopted).
const CHUNK: Format = Format {
    kind: "selfplay-chunk",
    version: 6,
    remedy: "delete it: its games are played again on the next run",
};

/// Chunks of runs from before the surprises left, still read (their surprises dropped), so
/// that a run in progress keeps its replay window.
const CHUNK_V5: Format = Format {
    version: 5,
    ..CHUNK
};

/// Chunks of runs from before the random-ply count, still read (as games without a random
/// opening: their positions learn the game's result, as they did).
const CHUNK_V4: Format = Format {
    version: 4,
    ..CHUNK
};

/// Chunks of runs from before policy surprises, still read (their positions weigh the same).
const CHUNK_V3: Format = Format {
    version: 3,
    ..CHUNK
};

/// Chunks of runs from before forked games, still read (every ply of their games trains).
const CHUNK_V2: Format = Format {
    version: 2,
    ..CHUNK
};

/// One self-play game.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct GameRecord {
    pub moves: Vec<u8>,
    /// For each ply, the search's policy over all actions (`moves.len() * NUM_ACTIONS`).
    pub policies: Vec<f32>,
    /// For each ply, the search's value of the root for the side to move.
    pub root_values: Vec<f32>,
    /// The result for the first player: 1, 0 or -1.
    pub outcome: i8,
    /// The first ply that is a training position: 0, except in a game forked from its own
    /// main line ([`crate::alphazero::config::RunConfig::fork_share`]), whose plies up to and
    /// including the fork's random move would have the result of a game that left the line as
    /// their value target.
    pub trains_from: u32,
    /// The plies this game opened with uniformly at random
    /// ([`crate::alphazero::config::RunConfig::random_opening_plies`]): the positions before
    /// them saw the game go on at random. 0 in records from before it.
    pub random_plies: u32,
}

/// A game of a version 5 chunk.
#[derive(Serialize, Deserialize)]
struct GameRecordV5 {
    moves: Vec<u8>,
    policies: Vec<f32>,
    root_values: Vec<f32>,
    outcome: i8,
    trains_from: u32,
    surprises: Vec<f32>,
    random_plies: u32,
}

impl From<GameRecordV5> for GameRecord {
    fn from(r: GameRecordV5) -> GameRecord {
        GameRecord {
            moves: r.moves,
            policies: r.policies,
            root_values: r.root_values,
            outcome: r.outcome,
            trains_from: r.trains_from,
            random_plies: r.random_plies,
        }
    }
}

/// A game of a version 4 chunk.
#[derive(Serialize, Deserialize)]
struct GameRecordV4 {
    moves: Vec<u8>,
    policies: Vec<f32>,
    root_values: Vec<f32>,
    outcome: i8,
    trains_from: u32,
    surprises: Vec<f32>,
}

impl From<GameRecordV4> for GameRecord {
    fn from(r: GameRecordV4) -> GameRecord {
        GameRecord {
            moves: r.moves,
            policies: r.policies,
            root_values: r.root_values,
            outcome: r.outcome,
            trains_from: r.trains_from,
            random_plies: 0,
        }
    }
}

/// A game of a version 3 chunk.
#[derive(Serialize, Deserialize)]
struct GameRecordV3 {
    moves: Vec<u8>,
    policies: Vec<f32>,
    root_values: Vec<f32>,
    outcome: i8,
    trains_from: u32,
}

impl From<GameRecordV3> for GameRecord {
    fn from(r: GameRecordV3) -> GameRecord {
        GameRecord {
            moves: r.moves,
            policies: r.policies,
            root_values: r.root_values,
            outcome: r.outcome,
            trains_from: r.trains_from,
            random_plies: 0,
        }
    }
}

/// A game of a version 2 chunk.
#[derive(Serialize, Deserialize)]
struct GameRecordV2 {
    moves: Vec<u8>,
    policies: Vec<f32>,
    root_values: Vec<f32>,
    outcome: i8,
}

impl From<GameRecordV2> for GameRecord {
    fn from(r: GameRecordV2) -> GameRecord {
        GameRecord {
            moves: r.moves,
            policies: r.policies,
            root_values: r.root_values,
            outcome: r.outcome,
            trains_from: 0,
            random_plies: 0,
        }
    }
}

/// A chunk of an older version, whose games are `R`s.
#[derive(Serialize, Deserialize)]
struct OldChunk<R> {
    game: String,
    iteration: u32,
    indices: Vec<u64>,
    records: Vec<R>,
}

type ChunkV5 = OldChunk<GameRecordV5>;
type ChunkV4 = OldChunk<GameRecordV4>;
type ChunkV3 = OldChunk<GameRecordV3>;
type ChunkV2 = OldChunk<GameRecordV2>;

impl<R: Into<GameRecord>> From<OldChunk<R>> for Chunk {
    fn from(c: OldChunk<R>) -> Chunk {
        Chunk {
            game: c.game,
            iteration: c.iteration,
            indices: c.indices,
            records: c.records.into_iter().map(Into::into).collect(),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Chunk {
    game: String,
    iteration: u32,
    /// The game number of each record (games finish out of order).
    indices: Vec<u64>,
    records: Vec<GameRecord>,
}

pub fn iteration_dir(data_dir: &Path, iteration: u32) -> PathBuf {
    data_dir.join(format!("iter-{iteration:04}"))
}

/// The iterations that have a folder of self-play games in `data_dir`, in order; an error
/// when `data_dir` is not a folder.
pub fn iterations_on_disk(data_dir: &Path) -> Result<Vec<u32>> {
    if !data_dir.is_dir() {
        anyhow::bail!(
            "no self-play games in {}: --data names where the run keeps them",
            data_dir.display()
        );
    }
    let entries =
        std::fs::read_dir(data_dir).with_context(|| format!("reading {}", data_dir.display()))?;
    let mut found: Vec<u32> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_prefix("iter-")?.parse::<u32>().ok()
        })
        .filter(|&i| iteration_dir(data_dir, i).is_dir())
        .collect();
    found.sort_unstable();
    Ok(found)
}

/// Writes finished games (numbered by `indices`) of an iteration as one chunk.
pub fn write_chunk(
    data_dir: &Path,
    game: &str,
    iteration: u32,
    indices: &[u64],
    records: &[GameRecord],
) -> Result<()> {
    let Some(&first) = indices.iter().min() else {
        return Ok(());
    };
    anyhow::ensure!(
        indices.len() == records.len(),
        "{} game numbers for {} games",
        indices.len(),
        records.len()
    );
    let path = iteration_dir(data_dir, iteration).join(format!("chunk-{first:06}.bin"));
    let bytes = encode_chunk(game, iteration, indices, records)
        .with_context(|| format!("cannot encode {}", path.display()))?;
    write_atomic(&path, &bytes)
}

/// The bytes of the chunk file [`write_chunk`] writes for these games.
pub fn encode_chunk(
    game: &str,
    iteration: u32,
    indices: &[u64],
    records: &[GameRecord],
) -> Result<Vec<u8>> {
    CHUNK.encode_value(&Chunk {
        game: game.into(),
        iteration,
        indices: indices.to_vec(),
        records: records.to_vec(),
    })
}

/// The games of a chunk file's bytes with their numbers, in the file's order, checked as a
/// stage reads them (see [`read_iteration`]); `path` names the file in errors.
pub fn decode_chunk(
    path: &Path,
    bytes: &[u8],
    game: &str,
    actions: usize,
    iteration: u32,
) -> Result<Vec<(u64, GameRecord)>> {
    let chunk = chunk_from_bytes(path, bytes, game, actions, iteration)?;
    Ok(chunk.indices.into_iter().zip(chunk.records).collect())
}

/// The chunk files of an iteration, sorted; leftover temporary files of an interrupted write
/// (`.chunk-*.tmp.*`) are not chunks.
fn chunk_paths(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", dir.display())),
    };
    let mut paths = Vec::new();
    for e in entries {
        let path = e
            .with_context(|| format!("cannot read {}", dir.display()))?
            .path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.starts_with("chunk-") && name.ends_with(".bin") {
            paths.push(path);
        }
    }
    paths.sort();
    Ok(paths)
}

/// Reads one chunk and checks that it holds games of `game` (`actions` actions) of
/// `iteration`, each consistent with itself.
fn read_chunk(path: &Path, game: &str, actions: usize, iteration: u32) -> Result<Chunk> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    chunk_from_bytes(path, &bytes, game, actions, iteration)
}

/// A chunk of an older version, if the bytes are one.
fn old_chunk(path: &Path, bytes: &[u8]) -> Option<Chunk> {
    if let Ok(old) = CHUNK_V5.decode_value::<ChunkV5>(path, bytes) {
        return Some(old.into());
    }
    if let Ok(old) = CHUNK_V4.decode_value::<ChunkV4>(path, bytes) {
        return Some(old.into());
    }
    if let Ok(old) = CHUNK_V3.decode_value::<ChunkV3>(path, bytes) {
        return Some(old.into());
    }
    CHUNK_V2
        .decode_value::<ChunkV2>(path, bytes)
        .ok()
        .map(Into::into)
}

/// [`read_chunk`] of a file's bytes.
fn chunk_from_bytes(
    path: &Path,
    bytes: &[u8],
    game: &str,
    actions: usize,
    iteration: u32,
) -> Result<Chunk> {
    let chunk: Chunk = match CHUNK.decode_value(path, bytes) {
        Ok(chunk) => chunk,
        // The error of the version this program writes says what is wrong.
        Err(e) => old_chunk(path, bytes).ok_or(e)?,
    };
    let check = |condition: bool, problem: &str| ensure(&CHUNK, path, condition, problem);
    if chunk.game != game {
        let problem = format!("it holds {} games, not {game} games", chunk.game);
        return Err(CHUNK.error(path, problem));
    }
    if chunk.iteration != iteration {
        let problem = format!(
            "it holds games of iteration {}, not of iteration {iteration}",
            chunk.iteration
        );
        return Err(CHUNK.error(path, problem));
    }
    check(
        chunk.indices.len() == chunk.records.len(),
        &format!(
            "{} game numbers for {} games",
            chunk.indices.len(),
            chunk.records.len()
        ),
    )?;
    let mut indices = chunk.indices.clone();
    indices.sort_unstable();
    check(
        indices.windows(2).all(|w| w[0] < w[1]),
        "a game number is there twice",
    )?;
    for (&index, r) in chunk.indices.iter().zip(&chunk.records) {
        check_record(path, index, r, actions)?;
    }
    Ok(chunk)
}

/// Checks that a chunk's game `index` is whole: its moves among the game's `actions`, a policy
/// and a root value a move, each a number in its range, the ply its
/// training starts from within the game, and a result.
fn check_record(path: &Path, index: u64, r: &GameRecord, actions: usize) -> Result<()> {
    let check = |condition: bool, problem: &str| ensure(&CHUNK, path, condition, problem);
    let plies = r.moves.len();
    let problem = |what: &str| format!("game {index}: {what}");
    check(
        r.moves.iter().all(|&m| (m as usize) < actions),
        &problem(&format!("a move is not one of the {actions} actions")),
    )?;
    check(
        r.policies.len() == plies * actions,
        &problem(&format!(
            "{} policy values for {plies} moves of {actions} actions",
            r.policies.len()
        )),
    )?;
    check(
        r.policies.iter().all(|p| p.is_finite() && *p >= 0.0),
        &problem("a policy value is negative or not a number"),
    )?;
    check(
        r.root_values.len() == plies,
        &problem(&format!(
            "{} root values for {plies} moves",
            r.root_values.len()
        )),
    )?;
    check(
        r.root_values.iter().all(|v| v.is_finite()),
        &problem("a root value is not a number"),
    )?;
    check(
        r.trains_from as usize <= plies,
        &problem(&format!("it trains from ply {} of {plies}", r.trains_from)),
    )?;
    check(
        (-1..=1).contains(&r.outcome),
        &problem(&format!("outcome {} is not -1, 0 or 1", r.outcome)),
    )?;
    Ok(())
}

/// Reads every chunk of an iteration.
fn read_chunks(data_dir: &Path, game: &str, actions: usize, iteration: u32) -> Result<Vec<Chunk>> {
    chunk_paths(&iteration_dir(data_dir, iteration))?
        .iter()
        .map(|path| read_chunk(path, game, actions, iteration))
        .collect()
}

/// The numbers of the games of an iteration already on disk (`actions`: the game's number of
/// actions, to check the records).
pub fn finished_games(
    data_dir: &Path,
    game: &str,
    actions: usize,
    iteration: u32,
) -> Result<Vec<u64>> {
    let mut done: Vec<u64> = read_chunks(data_dir, game, actions, iteration)?
        .into_iter()
        .flat_map(|c| c.indices)
        .collect();
    done.sort_unstable();
    Ok(done)
}

/// Reads every game of an iteration (`actions`: the game's number of actions), in the order
/// of the games' numbers, however the games were split into chunks: what a training stage
/// reads never depends on which process played which game when.
pub fn read_iteration(
    data_dir: &Path,
    game: &str,
    actions: usize,
    iteration: u32,
) -> Result<Vec<GameRecord>> {
    let mut games: Vec<(u64, GameRecord)> = read_chunks(data_dir, game, actions, iteration)?
        .into_iter()
        .flat_map(|c| c.indices.into_iter().zip(c.records))
        .collect();
    games.sort_by_key(|g| g.0);
    Ok(games.into_iter().map(|g| g.1).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(plies: usize, actions: usize) -> GameRecord {
        GameRecord {
            moves: vec![3; plies],
            policies: vec![0.5; plies * actions],
            root_values: vec![0.1; plies],
            outcome: 0,
            trains_from: 0,
            random_plies: 2,
        }
    }

    #[test]
    fn chunks_roundtrip_and_track_finished_games() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let (r, r1, r5) = (record(2, 7), record(3, 7), record(4, 7));
        write_chunk(dir, "connect4", 2, &[5], std::slice::from_ref(&r5)).unwrap();
        write_chunk(dir, "connect4", 2, &[1, 0], &[r1.clone(), r.clone()]).unwrap();
        // A temporary file left by an interrupted write is not a chunk.
        let iter = iteration_dir(dir, 2);
        std::fs::write(iter.join(".chunk-000007.bin.tmp.12.0"), b"half").unwrap();
        let done = finished_games(dir, "connect4", 7, 2).unwrap();
        assert_eq!(done, [0, 1, 5]);
        let games = read_iteration(dir, "connect4", 7, 2).unwrap();
        // In the games' order, whatever the chunks' order.
        assert_eq!(games, [r.clone(), r1, r5]);
        assert!(finished_games(dir, "connect4", 7, 3).unwrap().is_empty());
        let e = read_iteration(dir, "tictactoe", 9, 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds connect4 games, not tictactoe"), "{e}");
        // Another iteration's chunk in this iteration's folder.
        std::fs::rename(iter.join("chunk-000005.bin"), dir.join("moved.bin")).unwrap();
        std::fs::create_dir_all(iteration_dir(dir, 4)).unwrap();
        let moved = iteration_dir(dir, 4).join("chunk-000005.bin");
        std::fs::rename(dir.join("moved.bin"), &moved).unwrap();
        let e = read_iteration(dir, "connect4", 7, 4)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("iteration 2, not of iteration 4") && e.contains(CHUNK.remedy),
            "{e}"
        );
    }

    #[test]
    fn chunks_of_version_2_are_read_with_every_ply_training() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let r = GameRecord {
            random_plies: 0,
            ..record(3, 7)
        };
        let old = ChunkV2 {
            game: "connect4".into(),
            iteration: 1,
            indices: vec![4],
            records: vec![GameRecordV2 {
                moves: r.moves.clone(),
                policies: r.policies.clone(),
                root_values: r.root_values.clone(),
                outcome: r.outcome,
            }],
        };
        CHUNK_V2
            .save(&iteration_dir(dir, 1).join("chunk-000004.bin"), &old)
            .unwrap();
        assert_eq!(
            read_iteration(dir, "connect4", 7, 1).unwrap(),
            std::slice::from_ref(&r)
        );
        // And a chunk of this version beside it.
        let forked = GameRecord {
            trains_from: 2,
            ..r.clone()
        };
        write_chunk(dir, "connect4", 1, &[0], std::slice::from_ref(&forked)).unwrap();
        assert_eq!(read_iteration(dir, "connect4", 7, 1).unwrap(), [forked, r]);
    }

    #[test]
    fn chunks_of_version_3_are_read_without_surprises() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let r = GameRecord {
            trains_from: 1,
            random_plies: 0,
            ..record(3, 7)
        };
        let old = ChunkV3 {
            game: "connect4".into(),
            iteration: 1,
            indices: vec![2],
            records: vec![GameRecordV3 {
                moves: r.moves.clone(),
                policies: r.policies.clone(),
                root_values: r.root_values.clone(),
                outcome: r.outcome,
                trains_from: r.trains_from,
            }],
        };
        CHUNK_V3
            .save(&iteration_dir(dir, 1).join("chunk-000002.bin"), &old)
            .unwrap();
        let new = record(2, 7);
        write_chunk(dir, "connect4", 1, &[0], std::slice::from_ref(&new)).unwrap();
        assert_eq!(read_iteration(dir, "connect4", 7, 1).unwrap(), [new, r]);
    }

    #[test]
    fn chunks_of_version_4_are_read_without_a_random_opening() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let r = GameRecord {
            trains_from: 1,
            random_plies: 0,
            ..record(3, 7)
        };
        let old = ChunkV4 {
            game: "connect4".into(),
            iteration: 1,
            indices: vec![2],
            records: vec![GameRecordV4 {
                moves: r.moves.clone(),
                policies: r.policies.clone(),
                root_values: r.root_values.clone(),
                outcome: r.outcome,
                trains_from: r.trains_from,
                surprises: vec![0.25; 3],
            }],
        };
        CHUNK_V4
            .save(&iteration_dir(dir, 1).join("chunk-000002.bin"), &old)
            .unwrap();
        let new = record(2, 7);
        write_chunk(dir, "connect4", 1, &[0], std::slice::from_ref(&new)).unwrap();
        assert_eq!(read_iteration(dir, "connect4", 7, 1).unwrap(), [new, r]);
    }

    #[test]
    fn chunks_of_version_5_are_read_without_their_surprises() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let r = record(3, 7);
        let old = ChunkV5 {
            game: "connect4".into(),
            iteration: 1,
            indices: vec![2],
            records: vec![GameRecordV5 {
                moves: r.moves.clone(),
                policies: r.policies.clone(),
                root_values: r.root_values.clone(),
                outcome: r.outcome,
                trains_from: r.trains_from,
                surprises: vec![0.25; 3],
                random_plies: r.random_plies,
            }],
        };
        CHUNK_V5
            .save(&iteration_dir(dir, 1).join("chunk-000002.bin"), &old)
            .unwrap();
        let new = record(2, 7);
        write_chunk(dir, "connect4", 1, &[0], std::slice::from_ref(&new)).unwrap();
        assert_eq!(read_iteration(dir, "connect4", 7, 1).unwrap(), [new, r]);
    }

    #[test]
    fn inconsistent_games_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let good = record(2, 7);
        let cases: Vec<(GameRecord, &str)> = vec![
            (
                GameRecord {
                    policies: vec![0.5; 13],
                    ..good.clone()
                },
                "13 policy values for 2 moves of 7 actions",
            ),
            (
                GameRecord {
                    root_values: vec![0.0],
                    ..good.clone()
                },
                "1 root values for 2 moves",
            ),
            (
                GameRecord {
                    outcome: 2,
                    ..good.clone()
                },
                "outcome 2",
            ),
            (
                GameRecord {
                    moves: vec![3, 7],
                    ..good.clone()
                },
                "not one of the 7 actions",
            ),
            (
                GameRecord {
                    root_values: vec![0.0, f32::NAN],
                    ..good.clone()
                },
                "not a number",
            ),
            (
                GameRecord {
                    trains_from: 3,
                    ..good.clone()
                },
                "it trains from ply 3 of 2",
            ),
        ];
        for (i, (bad, problem)) in cases.into_iter().enumerate() {
            let iteration = i as u32 + 1;
            write_chunk(dir, "connect4", iteration, &[0, 1], &[good.clone(), bad]).unwrap();
            let e = read_iteration(dir, "connect4", 7, iteration)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("chunk-000000.bin")
                    && e.contains("game 1")
                    && e.contains(problem)
                    && e.ends_with(CHUNK.remedy),
                "{e}"
            );
        }
        // Game numbers that do not match the games.
        let path = iteration_dir(dir, 9).join("chunk-000000.bin");
        let chunk = Chunk {
            game: "connect4".into(),
            iteration: 9,
            indices: vec![0, 1],
            records: vec![good.clone()],
        };
        CHUNK.save(&path, &chunk).unwrap();
        let e = finished_games(dir, "connect4", 7, 9)
            .unwrap_err()
            .to_string();
        assert!(e.contains("2 game numbers for 1 games"), "{e}");
        let chunk = Chunk {
            indices: vec![4, 4],
            records: vec![good.clone(), good],
            ..chunk
        };
        CHUNK.save(&path, &chunk).unwrap();
        let e = finished_games(dir, "connect4", 7, 9)
            .unwrap_err()
            .to_string();
        assert!(e.contains("twice"), "{e}");
    }

    #[test]
    fn damaged_chunks_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        write_chunk(dir, "connect4", 1, &[0], &[record(3, 7)]).unwrap();
        let path = iteration_dir(dir, 1).join("chunk-000000.bin");
        let good = std::fs::read(&path).unwrap();
        let mut flipped = good.clone();
        flipped[good.len() - 5] ^= 0x10;
        let foreign = Format {
            kind: "qtable",
            version: 2,
            remedy: "",
        }
        .encode(&good[40..]);
        let cases: [(&str, Vec<u8>, &str); 5] = [
            ("truncated", good[..good.len() - 1].to_vec(), "truncated"),
            ("flipped", flipped, "checksum"),
            (
                "foreign",
                foreign,
                "a qtable file, not a selfplay-chunk file",
            ),
            (
                "random",
                b"\x89PNG\r\n\x1a\n and so on".to_vec(),
                "no zero header",
            ),
            ("empty", Vec::new(), "no zero header"),
        ];
        for (case, bytes, problem) in cases {
            std::fs::write(&path, bytes).unwrap();
            let e = finished_games(dir, "connect4", 7, 1)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&path.display().to_string())
                    && e.contains(problem)
                    && e.ends_with(CHUNK.remedy),
                "{case}: {e}"
            );
        }
    }
}
