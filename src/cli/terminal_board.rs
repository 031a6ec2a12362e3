//! The board as `zero play` draws it in a terminal, from the same facts the page reads (the
//! layout, the sides' marks and the move names of [`Catalogued`]) and the stones of the
//! position's encoding ([`owners`]), so any game of the list is drawn without code of its own: columns
//! named above a board of columns; on a board of cells, each empty cell shows the name that
//! plays it. The last move's stone and a winning line are marked, in colour where the terminal
//! has it.

use crate::catalog::{owners, Catalogued, Layout};
use crate::games::{Game, Move};

/// Whether to write ANSI colours: the stream is a terminal, `NO_COLOR` is unset and `TERM` is
/// not `dumb` (<https://no-color.org>).
pub fn colour_wanted(stream_is_terminal: bool) -> bool {
    stream_is_terminal
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

/// The cells that hold a stone in `after` and were empty in `before`: the last move's stone.
pub fn new_stones<G: Game>(before: &G, after: &G) -> Vec<usize> {
    let (b, a) = (owners(before), owners(after));
    (0..a.len()).filter(|&i| b[i] == 0 && a[i] != 0).collect()
}

const BOLD: &str = "\x1b[1m";
const REVERSE: &str = "\x1b[7m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";
/// The sides' colours: yellow for the first, red for the second.
const SIDE_COLOURS: [&str; 2] = ["\x1b[33m", "\x1b[31m"];

/// The board of `pos`, the cells in `marked` stressed (the last move, a winning line): in
/// reverse video with colour, between brackets without.
pub fn draw<G: Catalogued>(pos: &G, marked: &[usize], colour: bool) -> String {
    let owners = owners(pos);
    let name_width = (0..G::HEIGHT * G::WIDTH)
        .map(|i| cell_name(pos, i).chars().count())
        .max()
        .unwrap_or(1)
        .max(1);
    let mut out = String::new();
    if G::BOARD.layout == Layout::Columns {
        let names: Vec<String> = (0..G::WIDTH)
            .map(|c| format!(" {:^w$} ", pos.format_move(c as Move), w = name_width))
            .collect();
        out.push_str(&names.concat());
        out.push('\n');
    }
    for r in 0..G::HEIGHT {
        for c in 0..G::WIDTH {
            let i = r * G::WIDTH + c;
            let owner = owners[i].checked_sub(1).map(usize::from);
            let text = match owner {
                Some(side) => G::SIDES[side].mark.to_string(),
                None if G::BOARD.layout == Layout::Cells => cell_name(pos, i),
                None => ".".to_string(),
            };
            let text = format!("{text:^name_width$}");
            let stressed = marked.contains(&i);
            out.push_str(&match (colour, owner, stressed) {
                (true, Some(side), s) => format!(
                    " {}{BOLD}{}{text}{RESET} ",
                    SIDE_COLOURS[side],
                    if s { REVERSE } else { "" }
                ),
                (true, None, _) => format!(" {DIM}{text}{RESET} "),
                (false, _, true) => format!("[{text}]"),
                (false, _, false) => format!(" {text} "),
            });
        }
        out.push('\n');
    }
    out
}

/// The name of the move that puts a stone on cell `i` of a board of cells (or of the column
/// `i` falls in).
fn cell_name<G: Catalogued>(pos: &G, i: usize) -> String {
    match G::BOARD.layout {
        Layout::Cells => pos.format_move(i as Move),
        Layout::Columns => pos.format_move((i % G::WIDTH) as Move),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Connect4, TicTacToe};

    #[test]
    fn a_board_of_columns_is_drawn_under_its_column_names_with_the_stones_in_place() {
        let pos = Connect4::parse_position("44").unwrap();
        let board = draw(&pos, &[], false);
        let lines: Vec<&str> = board.lines().collect();
        assert_eq!(lines[0], " 1  2  3  4  5  6  7 ");
        assert_eq!(lines.len(), 7);
        let first = Connect4::SIDES[0].mark;
        let second = Connect4::SIDES[1].mark;
        assert_eq!(lines[6], format!(" .  .  .  {first}  .  .  . "));
        assert_eq!(lines[5], format!(" .  .  .  {second}  .  .  . "));
    }

    #[test]
    fn a_board_of_cells_shows_each_empty_cell_by_the_name_that_plays_it() {
        let pos = TicTacToe::parse_position("51").unwrap();
        let after = TicTacToe::parse_position("519").unwrap();
        assert_eq!(new_stones(&pos, &after), vec![8]);
        let board = draw(&after, &[8], false);
        assert_eq!(board, " O  2  3 \n 4  X  6 \n 7  8 [X]\n");
    }

    #[test]
    fn colour_stresses_the_marked_cells_and_nothing_without_a_terminal() {
        let pos = TicTacToe::parse_position("5").unwrap();
        let plain = draw(&pos, &[4], false);
        assert!(!plain.contains('\x1b'));
        let coloured = draw(&pos, &[4], true);
        assert!(coloured.contains(REVERSE) && coloured.contains(SIDE_COLOURS[0]));
        assert!(!colour_wanted(false));
    }
}
