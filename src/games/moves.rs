//! A move as an index into a game's action space, and the legal moves of a position.

use arrayvec::ArrayVec;

/// A move, as an index into the game's action space `0..NUM_ACTIONS` (the network's policy
/// vector uses the same indices). Games with a pass give it its own index.
pub type Move = u8;

/// The legal moves of a position; no game here has more than 17.
pub type Moves = ArrayVec<Move, 32>;
