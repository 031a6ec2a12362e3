//! How a run's self-play played one line: the games of an iteration that went through a
//! sequence of moves, and the move each chose next with its results. A diagnostic for the
//! opening lines a network loses against the solver (docs/research/notebook.md has one, where
//! self-play played the winning move for 20 iterations and then gave it up).

use serde::Serialize;

use crate::alphazero::selfplay::records::GameRecord;

/// One move played where the line ends, with the results of the games that played it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NextMove {
    /// The action, as the game numbers it (Connect Four: the column from 0).
    pub action: u8,
    pub games: u32,
    /// Results for the game's first player.
    pub first_wins: u32,
    pub draws: u32,
    pub first_losses: u32,
}

/// The games of one iteration through a line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LineCount {
    /// The iteration's games in all.
    pub games: u32,
    /// The games whose first moves are the line.
    pub through: u32,
    /// Of those, the games that ended where the line ends.
    pub ended: u32,
    /// The moves played next, by action.
    pub next: Vec<NextMove>,
}

/// Counts the games of `games` that opened with `line`, and what they played next.
pub fn count_line(games: &[GameRecord], line: &[u8]) -> LineCount {
    let mut count = LineCount {
        games: games.len() as u32,
        ..LineCount::default()
    };
    for game in games.iter().filter(|g| g.moves.starts_with(line)) {
        count.through += 1;
        let Some(&action) = game.moves.get(line.len()) else {
            count.ended += 1;
            continue;
        };
        let at = match count.next.binary_search_by_key(&action, |m| m.action) {
            Ok(at) => at,
            Err(at) => {
                count.next.insert(
                    at,
                    NextMove {
                        action,
                        ..NextMove::default()
                    },
                );
                at
            }
        };
        let next = &mut count.next[at];
        next.games += 1;
        match game.outcome.signum() {
            1 => next.first_wins += 1,
            0 => next.draws += 1,
            _ => next.first_losses += 1,
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(moves: &[u8], outcome: i8) -> GameRecord {
        GameRecord {
            moves: moves.to_vec(),
            outcome,
            ..GameRecord::default()
        }
    }

    #[test]
    fn counts_the_games_through_a_line_and_each_next_move_with_its_results() {
        let games = [
            game(&[3, 3, 5], 1),
            game(&[3, 3, 5, 1], -1),
            game(&[3, 3, 1], 0),
            game(&[3, 3], 0),
            game(&[3, 2, 3], 1),
            game(&[2, 3, 3], 1),
        ];
        let count = count_line(&games, &[3, 3]);
        assert_eq!((count.games, count.through, count.ended), (6, 4, 1));
        let next = |action, games, first_wins, draws, first_losses| NextMove {
            action,
            games,
            first_wins,
            draws,
            first_losses,
        };
        assert_eq!(count.next, vec![next(1, 1, 0, 1, 0), next(5, 2, 1, 0, 1)]);
        // The empty line is every game, each counted under its first move.
        let all = count_line(&games, &[]);
        assert_eq!((all.through, all.next.len()), (6, 2));
        assert_eq!(
            count_line(&games, &[6]),
            LineCount {
                games: 6,
                ..LineCount::default()
            }
        );
    }
}
