//! Cell names of the boards whose cells people type as coordinates: the column's letter from
//! `a`, then the row's number from 1 at the top (`b2`).

/// The name of cell `cell` (top row first) on a board `width` cells wide.
pub fn cell_name(cell: usize, width: usize) -> String {
    format!(
        "{}{}",
        char::from(b'a' + (cell % width) as u8),
        cell / width + 1
    )
}

/// The cell named by `text` (already trimmed and lowercase) on a board of `width` x `height`
/// cells, up to 9 of each; `None` if it names none.
pub fn parse_cell(text: &str, width: usize, height: usize) -> Option<usize> {
    match text.as_bytes() {
        [c @ b'a'..=b'i', r @ b'1'..=b'9'] => {
            let (col, row) = (usize::from(c - b'a'), usize::from(r - b'1'));
            (col < width && row < height).then_some(row * width + col)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_parses_cells_round_trip() {
        assert_eq!(cell_name(0, 5), "a1");
        assert_eq!(cell_name(24, 5), "e5");
        assert_eq!(cell_name(6, 4), "c2");
        for cell in 0..25 {
            assert_eq!(parse_cell(&cell_name(cell, 5), 5, 5), Some(cell));
        }
        assert_eq!(parse_cell("e1", 4, 4), None);
        assert_eq!(parse_cell("a5", 4, 4), None);
        assert_eq!(parse_cell("a", 4, 4), None);
        assert_eq!(parse_cell("1a", 4, 4), None);
    }
}
