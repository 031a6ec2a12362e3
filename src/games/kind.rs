//! The board games by name, for choosing one at run time: [`GameKind`] and the macros that
//! run generic code for the game a kind names, all made from the one list in
//! [`crate::board_game_list!`].

use std::str::FromStr;

use super::game::Game;

/// The internals of [`crate::board_game_list!`]: what each use makes of the list.
#[doc(hidden)]
#[macro_export]
macro_rules! board_game_rules {
    ([kind] $($module:ident :: $game:ident),+ $(,)?) => {
        /// A board game, chosen by name on the command line, in the API and in files.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum GameKind {
            $($game),+
        }

        impl GameKind {
            /// Every board game, in the order the command line and the page list them.
            pub const ALL: [GameKind; [$(stringify!($game)),+].len()] = [$(GameKind::$game),+];
            /// Their names, in the same order.
            pub const NAMES: [&'static str; [$(stringify!($game)),+].len()] =
                [$(<$crate::games::$game as $crate::games::Game>::NAME),+];

            /// The name used on the command line and in files ([`Game::NAME`]).
            pub fn name(self) -> &'static str {
                match self {
                    $(GameKind::$game => <$crate::games::$game as $crate::games::Game>::NAME),+
                }
            }
        }
    };
    ([each $callback:ident] $($module:ident :: $game:ident),+ $(,)?) => {
        $($callback!($module, $crate::games::$game);)+
    };
    ([with $kind:expr, $g:ident => $body:expr] $($module:ident :: $game:ident),+ $(,)?) => {
        match $kind {
            $($crate::games::GameKind::$game => {
                type $g = $crate::games::$game;
                $body
            })+
        }
    };
}

crate::board_game_list!(kind);

/// Runs a generic function for the board game a [`GameKind`] names:
/// `with_board_game!(kind, G => body)` with `G` bound to the game's type inside `body`.
#[macro_export]
macro_rules! with_board_game {
    ($kind:expr, $g:ident => $body:expr) => {
        $crate::board_game_list!(with $kind, $g => $body)
    };
}

/// Calls `callback!(module, Type)` once for every board game (`connect4`,
/// `zero::games::Connect4`, ...): how the test suites instantiate themselves for each game.
#[macro_export]
macro_rules! for_each_game {
    ($callback:ident) => {
        $crate::board_game_list!(each $callback);
    };
}

impl GameKind {
    /// The kind of game `G`, if it is a board game of the list.
    pub fn of<G: Game>() -> Option<GameKind> {
        GameKind::ALL.into_iter().find(|k| k.name() == G::NAME)
    }
}

impl std::fmt::Display for GameKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GameKind {
    type Err = String;
    fn from_str(s: &str) -> Result<GameKind, String> {
        GameKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown game '{s}'; the games are {}",
                    GameKind::NAMES.join(", ")
                )
            })
    }
}

/// Written as its name (`"connect4"`).
impl serde::Serialize for GameKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Read from its name; anything else is refused as serde refuses an unknown enum variant
/// (``unknown variant `chess`, expected one of `connect4`, ...``).
impl<'de> serde::Deserialize<'de> for GameKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<GameKind, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = GameKind;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("the name of a board game")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<GameKind, E> {
                GameKind::ALL
                    .into_iter()
                    .find(|k| k.name() == s)
                    .ok_or_else(|| E::unknown_variant(s, &GameKind::NAMES))
            }
        }
        d.deserialize_str(Name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_named_as_their_games_and_read_back() {
        for kind in GameKind::ALL {
            let name = crate::with_board_game!(kind, G => G::NAME);
            assert_eq!(kind.name(), name);
            assert_eq!(kind.to_string().parse::<GameKind>(), Ok(kind));
            assert_eq!(
                GameKind::of::<crate::games::Connect4>(),
                Some(GameKind::Connect4)
            );
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<GameKind>(&json).unwrap(), kind);
        }
        let e = serde_json::from_str::<GameKind>("\"chess\"").unwrap_err();
        assert!(e
            .to_string()
            .contains("unknown variant `chess`, expected one of `connect4`"));
        assert!("blackjack".parse::<GameKind>().is_err());
    }
}
