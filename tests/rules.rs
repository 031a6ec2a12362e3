//! Move generation checked against known counts.

use zero::games::{perft, Connect4, Othello4, TicTacToe};

#[test]
fn connect4_perft_matches_the_known_counts() {
    let rows = perft::<Connect4>(8);
    let sequences: Vec<u64> = rows.iter().map(|r| r.sequences).collect();
    let positions: Vec<u64> = rows.iter().map(|r| r.positions).collect();
    assert_eq!(
        sequences,
        [7, 49, 343, 2401, 16807, 117649, 823536, 5673234]
    );
    assert_eq!(positions, [7, 49, 238, 1120, 4263, 16422, 54859, 184275]);
}

#[test]
fn tictactoe_has_5478_positions_and_255168_games() {
    let rows = perft::<TicTacToe>(9);
    let positions: u64 = 1 + rows.iter().map(|r| r.positions).sum::<u64>();
    assert_eq!(positions, 5478);
    // Games end at a win or a full board: the number of complete games is well known.
    let mut games = 0u64;
    fn count(p: TicTacToe, games: &mut u64) {
        use zero::games::Game;
        if p.outcome().is_some() {
            *games += 1;
            return;
        }
        for m in p.legal_moves() {
            let mut q = p;
            q.play(m);
            count(q, games);
        }
    }
    count(zero::games::Game::new(), &mut games);
    assert_eq!(games, 255168);
}

#[test]
fn othello4_perft_counts_passes_as_plies() {
    // From the start each side has 4 replies; a pass only appears deeper in the tree.
    let rows = perft::<Othello4>(2);
    assert_eq!(rows[0].sequences, 4);
    assert_eq!(rows[0].positions, 4);
    assert_eq!(rows[1].sequences, 12);
}
