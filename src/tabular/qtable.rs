//! The Q-table: action values of positions from the mover's view, its file format, and the
//! greedy `ql:PATH` player.
//!
//! Training indexes rows by a perfect position index where the game has a small one
//! (tic-tac-toe: base 3, 3^9 rows, no hashing in the training loop); other games, and every
//! table loaded from a file, find rows through a hash map from the position key.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::marker::PhantomData;
use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::agent::Agent;
use crate::core::files::{ensure, write_atomic, Format};
use crate::core::rng::mix64;
use crate::core::rng::{rng_from_seed, Rng64};
use crate::games::{Game, Move, Othello4, TicTacToe};

/// The Q-table file: version 2 puts the table inside the checked header of [`Format`].
pub const QTABLE: Format = Format {
    kind: "qtable",
    version: 2,
    remedy: "train it again with `zero qlearn`",
};
/// Marks a dense row no position has reached.
const UNUSED: u64 = u64::MAX;

/// Hashes position keys, already unique 64-bit values, with one mixing step.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix64(self.0 ^ b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = mix64(x);
    }
}

type KeyMap = HashMap<u64, u32, BuildHasherDefault<KeyHasher>>;

enum RowIndex<G> {
    /// Row = a perfect index of the position; `keys[row] == UNUSED` until it is reached.
    Dense(fn(&G) -> usize),
    /// Rows appended as positions are reached.
    Hashed(KeyMap),
}

/// Action values `Q(position, move)` from the mover's view; positions never reached have none.
pub struct QTable<G: Game> {
    values: Vec<f32>,
    keys: Vec<u64>,
    index: RowIndex<G>,
    _game: PhantomData<G>,
}

impl<G: Game> std::fmt::Debug for QTable<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "QTable<{}>({} positions)", G::NAME, self.len())
    }
}

/// The games Q-learning trains, each with the fastest table it has.
pub trait QGame: Game {
    fn new_table() -> QTable<Self>;
}

/// `3^i` summed over the set bits `i` of a 9-bit mask.
const BASE3: [u16; 512] = {
    let mut t = [0u16; 512];
    let mut m = 0;
    while m < 512 {
        let (mut i, mut p, mut v) = (0, 1u16, 0u16);
        while i < 9 {
            if m >> i & 1 == 1 {
                v += p;
            }
            p *= 3;
            i += 1;
        }
        t[m] = v;
        m += 1;
    }
    t
};

/// The base-3 index of a tic-tac-toe position (cell i: 0 empty, 1 X, 2 O, weight 3^i).
pub fn tictactoe_index(p: &TicTacToe) -> usize {
    use crate::games::Player;
    BASE3[p.stones(Player::First) as usize] as usize
        + 2 * BASE3[p.stones(Player::Second) as usize] as usize
}

impl QGame for TicTacToe {
    fn new_table() -> QTable<Self> {
        QTable::dense(19_683, tictactoe_index)
    }
}

impl QGame for Othello4 {
    fn new_table() -> QTable<Self> {
        QTable::hashed()
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Record {
    game: String,
    actions: u32,
    /// Position key and its values over all actions (illegal ones 0), for reached positions.
    rows: Vec<(u64, Vec<f32>)>,
}

impl<G: Game> QTable<G> {
    /// A table with `rows` rows addressed by the perfect index `index`.
    pub fn dense(rows: usize, index: fn(&G) -> usize) -> Self {
        QTable {
            values: vec![0.0; rows * G::NUM_ACTIONS],
            keys: vec![UNUSED; rows],
            index: RowIndex::Dense(index),
            _game: PhantomData,
        }
    }

    /// An empty table addressed by position keys.
    pub fn hashed() -> Self {
        QTable {
            values: Vec::new(),
            keys: Vec::new(),
            index: RowIndex::Hashed(KeyMap::default()),
            _game: PhantomData,
        }
    }

    /// The row of a reached position.
    #[inline]
    pub fn row(&self, pos: &G) -> Option<usize> {
        match &self.index {
            RowIndex::Dense(f) => {
                let r = f(pos);
                (self.keys[r] != UNUSED).then_some(r)
            }
            RowIndex::Hashed(map) => map.get(&pos.key()).map(|&r| r as usize),
        }
    }

    /// The row of a position, made (all values 0) if it was never reached.
    #[inline]
    pub fn row_mut(&mut self, pos: &G) -> usize {
        match &mut self.index {
            RowIndex::Dense(f) => {
                let r = f(pos);
                self.keys[r] = pos.key();
                r
            }
            RowIndex::Hashed(map) => {
                let key = pos.key();
                let next = self.keys.len() as u32;
                let r = *map.entry(key).or_insert(next);
                if r == next {
                    self.keys.push(key);
                    self.values.resize(self.values.len() + G::NUM_ACTIONS, 0.0);
                }
                r as usize
            }
        }
    }

    /// The values of a row, one per action.
    #[inline]
    pub fn values(&self, row: usize) -> &[f32] {
        &self.values[row * G::NUM_ACTIONS..(row + 1) * G::NUM_ACTIONS]
    }

    #[inline]
    pub fn value_mut(&mut self, row: usize, m: Move) -> &mut f32 {
        &mut self.values[row * G::NUM_ACTIONS + m as usize]
    }

    /// `Q(pos, m)`, 0 for a position never reached.
    pub fn get(&self, pos: &G, m: Move) -> f32 {
        self.row(pos).map_or(0.0, |r| self.values(r)[m as usize])
    }

    /// Number of positions reached.
    pub fn len(&self) -> usize {
        match &self.index {
            RowIndex::Dense(_) => self.keys.iter().filter(|&&k| k != UNUSED).count(),
            RowIndex::Hashed(map) => map.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The greedy move of a reached position: the legal move of highest value, the first
    /// such in move order on ties. `None` for a position never reached or one that is over.
    pub fn greedy(&self, pos: &G) -> Option<Move> {
        let row = self.values(self.row(pos)?);
        let mut best: Option<(Move, f32)> = None;
        for m in pos.legal_moves() {
            let v = row[m as usize];
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((m, v));
            }
        }
        best.map(|(m, _)| m)
    }

    /// Saves the reached positions (postcard, atomically).
    pub fn save(&self, path: &Path) -> Result<()> {
        let bytes = self
            .to_bytes()
            .with_context(|| format!("cannot encode {}", path.display()))?;
        write_atomic(path, &bytes)
    }

    /// The bytes of the file [`QTable::save`] writes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let rows = self
            .keys
            .iter()
            .enumerate()
            .filter(|(_, &k)| k != UNUSED)
            .map(|(r, &k)| (k, self.values(r).to_vec()))
            .collect();
        let record = Record {
            game: G::NAME.to_string(),
            actions: G::NUM_ACTIONS as u32,
            rows,
        };
        QTABLE.encode_value(&record)
    }

    /// Loads a table saved for game `G`.
    pub fn load(path: &Path) -> Result<Self> {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        Self::from_bytes(path, &bytes)
    }

    /// The table in a file's bytes, checked as [`QTable::load`] checks it; `path` names the
    /// file in errors.
    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Self> {
        let record: Record = QTABLE.decode_value(path, bytes)?;
        let check = |condition: bool, problem: &str| ensure(&QTABLE, path, condition, problem);
        if record.game != G::NAME {
            let problem = format!("a Q-table for {}, not for {}", record.game, G::NAME);
            return Err(QTABLE.error(path, problem));
        }
        check(
            record.actions as usize == G::NUM_ACTIONS
                && record.rows.iter().all(|(_, v)| v.len() == G::NUM_ACTIONS),
            &format!("{} has {} actions", G::NAME, G::NUM_ACTIONS),
        )?;
        check(
            record
                .rows
                .iter()
                .all(|(_, v)| v.iter().all(|q| q.is_finite())),
            "a value is not a number",
        )?;
        let mut map = KeyMap::default();
        let mut keys = Vec::with_capacity(record.rows.len());
        let mut values = Vec::with_capacity(record.rows.len() * G::NUM_ACTIONS);
        for (key, row) in record.rows {
            check(
                map.insert(key, keys.len() as u32).is_none(),
                "a position is there twice",
            )?;
            keys.push(key);
            values.extend_from_slice(&row);
        }
        Ok(QTable {
            values,
            keys,
            index: RowIndex::Hashed(map),
            _game: PhantomData,
        })
    }
}

/// The `ql:PATH` player: plays the greedy move of its Q-table; in a position the table never
/// reached it plays a uniformly random legal move (seeded per game), as the exact grading in
/// [`super::exact`] assumes.
pub struct QAgent<G: Game> {
    table: QTable<G>,
    rng: Rng64,
}

impl<G: Game> QAgent<G> {
    pub fn new(table: QTable<G>) -> Self {
        QAgent {
            table,
            rng: rng_from_seed(0),
        }
    }
}

impl<G: Game> Agent<G> for QAgent<G> {
    fn new_game(&mut self, seed: u64) {
        self.rng = rng_from_seed(seed);
    }
    fn choose(&mut self, pos: &G) -> Result<Move> {
        use rand::Rng;
        if let Some(m) = self.table.greedy(pos) {
            return Ok(m);
        }
        let moves = pos.legal_moves();
        if moves.is_empty() {
            bail!("no legal move: the game is over");
        }
        Ok(moves[self.rng.random_range(0..moves.len())])
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! Also the checks of damaged files that [`super::super::mces`] uses.
    use super::*;

    /// Each of `cases` (name, bytes, part of the message) written to `path` fails `load` with
    /// an error naming the file and ending with `remedy`.
    pub(crate) fn assert_refused<T>(
        path: &Path,
        remedy: &str,
        load: impl Fn(&Path) -> Result<T>,
        cases: Vec<(&str, Vec<u8>, &str)>,
    ) {
        for (case, bytes, problem) in cases {
            std::fs::write(path, bytes).unwrap();
            let e = load(path).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(
                e.contains(&path.display().to_string())
                    && e.contains(problem)
                    && e.ends_with(remedy),
                "{case}: {e}"
            );
        }
    }

    /// The usual damage to a good file's bytes: cut short, a flipped byte, another format's
    /// file, random bytes, nothing.
    pub(crate) fn damaged(good: &[u8]) -> Vec<(&'static str, Vec<u8>, &'static str)> {
        let mut flipped = good.to_vec();
        flipped[good.len() - 3] ^= 0x08;
        let foreign = Format {
            kind: "c4-book",
            version: 2,
            remedy: "",
        }
        .encode(&good[40..]);
        vec![
            ("truncated", good[..good.len() - 1].to_vec(), "truncated"),
            ("flipped", flipped, "checksum"),
            ("foreign", foreign, "a c4-book file, not a"),
            (
                "random",
                b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec(),
                "no zero header",
            ),
            ("empty", Vec::new(), "no zero header"),
        ]
    }

    fn small_table() -> QTable<TicTacToe> {
        let mut t = QTable::<TicTacToe>::hashed();
        let mut p = TicTacToe::new();
        let r = t.row_mut(&p);
        *t.value_mut(r, 4) = 0.5;
        p.play(4);
        let r = t.row_mut(&p);
        *t.value_mut(r, 0) = -0.25;
        t
    }

    #[test]
    fn qtable_round_trips_and_damaged_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ttt.bin");
        let table = small_table();
        table.save(&path).unwrap();
        let back = QTable::<TicTacToe>::load(&path).unwrap();
        assert_eq!(back.len(), 2);
        let mut p = TicTacToe::new();
        assert_eq!((back.get(&p, 4), back.greedy(&p)), (0.5, Some(4)));
        p.play(4);
        assert_eq!(back.get(&p, 0), -0.25);
        let good = std::fs::read(&path).unwrap();
        let mut cases = damaged(&good);
        cases[2].2 = "a c4-book file, not a qtable file";
        assert_refused(&path, QTABLE.remedy, QTable::<TicTacToe>::load, cases);
    }

    #[test]
    fn qtables_with_impossible_contents_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ttt.bin");
        let record = |game: &str, actions: u32, rows: Vec<(u64, Vec<f32>)>| {
            let r = Record {
                game: game.into(),
                actions,
                rows,
            };
            QTABLE.encode(&postcard::to_allocvec(&r).unwrap())
        };
        let row = |key: u64| (key, vec![0.0; 9]);
        let cases = vec![
            (
                "another game",
                record("othello4", 9, vec![row(1)]),
                "a Q-table for othello4, not for tictactoe",
            ),
            (
                "actions",
                record("tictactoe", 16, vec![row(1)]),
                "tictactoe has 9 actions",
            ),
            (
                "a short row",
                record("tictactoe", 9, vec![row(1), (2, vec![0.0; 8])]),
                "tictactoe has 9 actions",
            ),
            (
                "not a number",
                record("tictactoe", 9, vec![(1, vec![f32::NAN; 9])]),
                "not a number",
            ),
            (
                "twice",
                record("tictactoe", 9, vec![row(1), row(2), row(1)]),
                "a position is there twice",
            ),
        ];
        assert_refused(&path, QTABLE.remedy, QTable::<TicTacToe>::load, cases);
    }
}
