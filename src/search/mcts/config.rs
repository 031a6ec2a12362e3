//! The search's settings: which search ([`SearchKind`]), the search a network player plays
//! with ([`PlaySearch`]), and every setting of a search ([`MctsConfig`]).

use crate::search::gumbel;

/// How a simulation chooses among a node's children.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchKind {
    /// AlphaZero's PUCT, Dirichlet noise at the root, visit counts as the policy target.
    #[default]
    Puct,
    /// Gumbel AlphaZero: sequential halving at the root, the improved policy inside the tree
    /// and as the policy target (see [`super::gumbel`]).
    ///
    /// [`super::gumbel`]: crate::search::gumbel
    Gumbel,
}

impl std::fmt::Display for SearchKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SearchKind::Puct => "puct",
            SearchKind::Gumbel => "gumbel",
        })
    }
}

impl std::str::FromStr for SearchKind {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "puct" => Ok(SearchKind::Puct),
            "gumbel" => Ok(SearchKind::Gumbel),
            other => Err(format!("unknown search '{other}': puct or gumbel")),
        }
    }
}

/// The search a network player plays with: which one, and for Gumbel's the value scale of σ
/// its network was trained with (its policy learned targets of that scale, so it plays with it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlaySearch {
    pub kind: SearchKind,
    pub gumbel_value_scale: f32,
}

impl PlaySearch {
    /// `kind` with its default settings.
    pub fn new(kind: SearchKind) -> PlaySearch {
        PlaySearch {
            kind,
            gumbel_value_scale: default_value_scale(),
        }
    }

    /// The search settings of play: these, and no noise.
    pub fn config(self) -> MctsConfig {
        MctsConfig {
            search: self.kind,
            gumbel_value_scale: self.gumbel_value_scale,
            ..MctsConfig::default()
        }
    }
}

impl Default for PlaySearch {
    fn default() -> Self {
        PlaySearch::new(SearchKind::default())
    }
}

impl std::fmt::Display for PlaySearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.kind.fmt(f)
    }
}

fn default_considered() -> u32 {
    16
}

fn default_value_scale() -> f32 {
    gumbel::DEFAULT_VALUE_SCALE
}

/// Search settings.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MctsConfig {
    /// Exploration constant of PUCT.
    pub c_puct: f32,
    /// First-play urgency: an unvisited child is valued at the parent's value minus this.
    pub fpu_reduction: f32,
    /// Dirichlet noise mixed into the root priors (0 to turn it off, as in play).
    pub noise_fraction: f32,
    /// Dirichlet alpha; 0 picks 10 / (number of legal moves), scaling with branching.
    pub dirichlet_alpha: f32,
    /// PUCT or Gumbel.
    #[serde(default)]
    pub search: SearchKind,
    /// Gumbel: the scale of the root's Gumbel noise (1 in self-play, where it samples the
    /// move; 0 in play, for the best move).
    #[serde(default)]
    pub gumbel_scale: f32,
    /// Gumbel: root moves considered (the k of Gumbel-top-k).
    #[serde(default = "default_considered")]
    pub gumbel_considered: u32,
    /// Gumbel: the scale of σ(completed Q), how far the search's values move the improved
    /// policy (search and policy target) away from the prior: mctx's `value_scale`, 0.1 in
    /// runs from before the setting.
    #[serde(default = "default_value_scale")]
    pub gumbel_value_scale: f32,
}

impl Default for MctsConfig {
    fn default() -> Self {
        MctsConfig {
            c_puct: 1.5,
            fpu_reduction: 0.25,
            noise_fraction: 0.0,
            dirichlet_alpha: 0.0,
            search: SearchKind::Puct,
            gumbel_scale: 0.0,
            gumbel_considered: default_considered(),
            gumbel_value_scale: default_value_scale(),
        }
    }
}
