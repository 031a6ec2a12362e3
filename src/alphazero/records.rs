//! Self-play records: what each game taught, in a compact binary format.
//!
//! The encoding lives here alone (postcard today) so it can be swapped: bincode, the usual
//! choice, is unmaintained. A record keeps the moves, not the positions: training replays them.
//! Each iteration's games are written in chunks `data/<game>/iter-NNNN/chunk-FIRST.bin` (FIRST:
//! the chunk's lowest game number), each written atomically, so an interrupted self-play keeps
//! every finished game and a resumed one plays only the games that are missing.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::core::files::write_atomic;

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
}

#[derive(Debug, Serialize, Deserialize)]
struct Chunk {
    magic: String,
    game: String,
    iteration: u32,
    /// The game number of each record (games finish out of order).
    indices: Vec<u64>,
    records: Vec<GameRecord>,
}

const MAGIC: &str = "zero-selfplay-v1";

pub fn iteration_dir(data_dir: &Path, iteration: u32) -> PathBuf {
    data_dir.join(format!("iter-{iteration:04}"))
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
    let chunk = Chunk {
        magic: MAGIC.into(),
        game: game.into(),
        iteration,
        indices: indices.to_vec(),
        records: records.to_vec(),
    };
    let bytes = postcard::to_allocvec(&chunk)?;
    let path = iteration_dir(data_dir, iteration).join(format!("chunk-{first:06}.bin"));
    write_atomic(&path, &bytes)
}

/// Reads every chunk of an iteration.
fn read_chunks(data_dir: &Path, game: &str, iteration: u32) -> Result<Vec<Chunk>> {
    let dir = iteration_dir(data_dir, iteration);
    let mut paths = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries {
            let path = e?.path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if name.starts_with("chunk-") && name.ends_with(".bin") {
                paths.push(path);
            }
        }
    }
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let bytes =
            std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let chunk: Chunk = postcard::from_bytes(&bytes)
            .with_context(|| format!("{} is not a self-play chunk (corrupt?)", path.display()))?;
        if chunk.magic != MAGIC {
            bail!("{} is not a zero self-play chunk", path.display());
        }
        if chunk.game != game {
            bail!("{} holds {} games, not {game}", path.display(), chunk.game);
        }
        out.push(chunk);
    }
    Ok(out)
}

/// The numbers of the games of an iteration already on disk.
pub fn finished_games(data_dir: &Path, game: &str, iteration: u32) -> Result<Vec<u64>> {
    let mut done: Vec<u64> = read_chunks(data_dir, game, iteration)?
        .into_iter()
        .flat_map(|c| c.indices)
        .collect();
    done.sort_unstable();
    Ok(done)
}

/// Reads every game of an iteration.
pub fn read_iteration(data_dir: &Path, game: &str, iteration: u32) -> Result<Vec<GameRecord>> {
    Ok(read_chunks(data_dir, game, iteration)?
        .into_iter()
        .flat_map(|c| c.records)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_roundtrip_and_track_finished_games() {
        let dir = std::env::temp_dir().join(format!("zero-records-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let r = GameRecord {
            moves: vec![3, 3],
            policies: vec![0.5; 14],
            root_values: vec![0.1, -0.1],
            outcome: 0,
        };
        write_chunk(&dir, "connect4", 2, &[1, 0], &[r.clone(), r.clone()]).unwrap();
        write_chunk(&dir, "connect4", 2, &[5], std::slice::from_ref(&r)).unwrap();
        let done = finished_games(&dir, "connect4", 2).unwrap();
        assert_eq!(done, [0, 1, 5]);
        assert_eq!(read_iteration(&dir, "connect4", 2).unwrap().len(), 3);
        assert!(read_iteration(&dir, "tictactoe", 2).is_err());
        std::fs::write(iteration_dir(&dir, 2).join("chunk-000009.bin"), b"junk").unwrap();
        let e = read_iteration(&dir, "connect4", 2).unwrap_err().to_string();
        assert!(e.contains("corrupt"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
