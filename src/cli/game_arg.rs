//! A `--game` option for a command that works for some of the board games only: its `--help`
//! lists just those, and any other name is refused by the parser with that list.

use clap::builder::{PossibleValuesParser, TypedValueParser};

use crate::games::GameKind;

/// Parses a game name among `kinds`.
pub fn game_among(kinds: &'static [GameKind]) -> impl TypedValueParser<Value = GameKind> {
    PossibleValuesParser::new(kinds.iter().map(|k| k.name()))
        .try_map(|name: String| name.parse::<GameKind>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Only {
        #[arg(long, value_parser = game_among(&[GameKind::Othello4]))]
        game: GameKind,
    }

    #[test]
    fn only_the_listed_games_are_accepted() {
        let ok = Only::try_parse_from(["x", "--game", "othello4"]).unwrap();
        assert_eq!(ok.game, GameKind::Othello4);
        let refused = Only::try_parse_from(["x", "--game", "connect4"])
            .err()
            .unwrap()
            .to_string();
        assert!(refused.contains("[possible values: othello4]"), "{refused}");
    }
}
