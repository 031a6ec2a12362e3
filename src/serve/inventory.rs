//! What the server will serve, said when it starts: the models it found for each game, and
//! where Connect Four's opening book comes from (a file of `--data`, or the copy built into the
//! binary). A server started outside the clone then says so at once, rather than through
//! question marks on the page.

use std::path::Path;

use crate::catalog::Catalogued;
use crate::games::{Connect4, GameKind};
use crate::solvers::connect4_book::Book;

use super::ServeConfig;

/// The networks a request may name without a file name, and their files.
const NAMED_MODELS: [&str; 2] = ["best", "latest"];

/// The lines to print at start; warnings start with `warning:`.
pub fn startup_lines(config: &ServeConfig) -> Vec<String> {
    let mut lines = Vec::new();
    let models = &config.models;
    if models.is_dir() {
        lines.push(format!("models in {}:", shown(models)));
        for kind in GameKind::ALL {
            lines.push(format!("  {}", models_of(models, kind)));
        }
    } else {
        lines.push(format!(
            "warning: the models folder {} does not exist, so no game has `best` or `latest` \
             and the training page is empty; pass --models <clone>/models to serve a run's \
             networks",
            shown(models)
        ));
    }
    let shipped: Vec<&str> = GameKind::ALL
        .into_iter()
        .filter(|&kind| crate::with_board_game!(kind, G => G::pretrained().is_some()))
        .map(|kind| kind.facts().title)
        .collect();
    if !shipped.is_empty() {
        lines.push(format!(
            "networks shipped with zero (the player `pretrained`, offered where a game has no \
             best): {}",
            shipped.join(", ")
        ));
    }
    lines.push(book_line(&config.solver_dir));
    lines
}

/// `Connect Four (models/connect4/): best, latest` or `... no best or latest`.
fn models_of(models: &Path, kind: GameKind) -> String {
    let dir = models.join(kind.name());
    let found: Vec<&str> = NAMED_MODELS
        .into_iter()
        .filter(|name| dir.join(format!("{name}.safetensors")).is_file())
        .collect();
    let what = match found.as_slice() {
        [] => "no best or latest".to_string(),
        [one] => format!("{one} (no {})", other_than(one)),
        all => all.join(", "),
    };
    format!("{} ({}): {what}", kind.facts().title, dir.display())
}

fn other_than(name: &str) -> &'static str {
    NAMED_MODELS
        .into_iter()
        .find(|n| *n != name)
        .unwrap_or("other")
}

/// Where Connect Four's solver reads its opening book from; a damaged book is a warning here,
/// and the overlay and the `solver` player fail until it is mended.
fn book_line(dir: &Path) -> String {
    let title = Connect4::TITLE;
    match Book::load_or_built_in(dir) {
        Ok((book, origin)) if origin.is_built_in() => format!(
            "{title}'s opening book: {origin}, {} stones deep (no book-N.bin in {})",
            book.depth(),
            shown(dir)
        ),
        Ok((book, origin)) => format!(
            "{title}'s opening book: {origin}, {} stones deep",
            book.depth()
        ),
        Err(e) => format!("warning: {title}'s opening book: {e:#}"),
    }
}

/// A path as given, with where it is when it is relative (the server may run anywhere).
fn shown(path: &Path) -> String {
    match std::path::absolute(path) {
        Ok(abs) if path.is_relative() => format!("{} ({})", path.display(), abs.display()),
        _ => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_lines_name_each_games_models_and_the_books_origin() {
        let models = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let connect4 = models.path().join("connect4");
        std::fs::create_dir_all(&connect4).unwrap();
        std::fs::write(connect4.join("best.safetensors"), b"").unwrap();
        let config = ServeConfig {
            models: models.path().into(),
            solver_dir: data.path().into(),
            ..ServeConfig::default()
        };
        let lines = startup_lines(&config);
        assert_eq!(lines[0], format!("models in {}:", models.path().display()));
        let c4 = format!("  Connect Four ({}): best (no latest)", connect4.display());
        assert!(lines.contains(&c4), "{lines:?}");
        for kind in [GameKind::TicTacToe, GameKind::Othello4] {
            let dir = models.path().join(kind.name());
            let none = format!(
                "  {} ({}): no best or latest",
                kind.facts().title,
                dir.display()
            );
            assert!(lines.contains(&none), "{lines:?}");
        }
        let shipped = &lines[lines.len() - 2];
        assert!(
            shipped.ends_with("best): Connect Four, Tic-tac-toe, 4x4 Othello, Domineering"),
            "{shipped}"
        );
        let book = lines.last().unwrap();
        assert!(book.contains("opening book: built in"), "{book}");
        // A book of the folder is named by its path; a damaged one is a warning.
        let path = Book::path(data.path(), 4);
        std::fs::write(&path, crate::solvers::connect4_book::BUILT_IN_BOOK.bytes).unwrap();
        let book = startup_lines(&config).pop().unwrap();
        assert!(
            book.contains(&format!("opening book: {}, 4 stones", path.display())),
            "{book}"
        );
        std::fs::write(&path, b"garbage").unwrap();
        let book = startup_lines(&config).pop().unwrap();
        assert!(
            book.starts_with("warning: Connect Four's opening book:")
                && book.contains("book-4.bin"),
            "{book}"
        );
    }
}
