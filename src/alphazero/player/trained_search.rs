//! Which tree search a network was trained with, so that it plays with that search unless a
//! command asks for another: a network trained by Gumbel self-play plays Gumbel's search (with
//! the value scale its run trained with), one trained by PUCT self-play plays PUCT
//! (docs/decisions.md, "Players search as their run trained").

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::search::gumbel;
use crate::search::mcts::{PlaySearch, SearchKind};

/// The search of the run that made the network at `weights`: `mcts.search` and
/// `mcts.gumbel_value_scale` of the `run.json` beside it (a run keeps `best`, `latest` and its
/// settings in one folder). PUCT for a network with no `run.json` beside it (a copied file)
/// and for runs from before the setting existed, which were all PUCT; the default value scale
/// for runs from before that setting. A `run.json` that cannot be read is an error naming
/// `--search`, the way to play anyway; nothing is written.
pub fn trained_search(weights: &Path) -> Result<PlaySearch> {
    let run = run_settings_beside(weights);
    let bytes = match std::fs::read(&run) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(PlaySearch::new(SearchKind::Puct))
        }
        Err(e) => {
            return Err(e)
                .with_context(|| format!("cannot read {}", run.display()))
                .with_context(|| choose_one(weights))
        }
    };
    let settings: Value = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not JSON", run.display()))
        .with_context(|| choose_one(weights))?;
    let mcts = settings.get("mcts");
    let kind = match mcts.and_then(|m| m.get("search")) {
        None => SearchKind::Puct,
        Some(Value::String(name)) => match name.parse() {
            Ok(search) => search,
            Err(e) => bail!(
                "{}: mcts.search: {e}; {}",
                run.display(),
                choose_one(weights)
            ),
        },
        Some(other) => bail!(
            "{}: mcts.search is {other}, not \"puct\" or \"gumbel\"; {}",
            run.display(),
            choose_one(weights)
        ),
    };
    let mut search = PlaySearch::new(kind);
    if let Some(scale) = mcts.and_then(|m| m.get("gumbel_value_scale")) {
        match scale.as_f64() {
            Some(s) if gumbel::valid_value_scale(s) => search.gumbel_value_scale = s as f32,
            _ => bail!(
                "{}: mcts.gumbel_value_scale is {scale}, not a number above 0 and at most 100; {}",
                run.display(),
                choose_one(weights)
            ),
        }
    }
    Ok(search)
}

/// The run settings that belong with a network file.
pub fn run_settings_beside(weights: &Path) -> PathBuf {
    weights.with_file_name("run.json")
}

fn choose_one(weights: &Path) -> String {
    format!(
        "cannot tell which search {} was trained with: pass --search puct or --search gumbel",
        weights.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights_beside(run_json: Option<&str>) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        if let Some(text) = run_json {
            std::fs::write(dir.path().join("run.json"), text).unwrap();
        }
        let weights = dir.path().join("best.safetensors");
        (dir, weights)
    }

    #[test]
    fn a_network_plays_the_search_its_run_trained_with() {
        let (_dir, w) = weights_beside(Some(r#"{"mcts": {"search": "gumbel", "c_puct": 1.5}}"#));
        assert_eq!(trained_search(&w).unwrap().kind, SearchKind::Gumbel);
        let (_dir, w) = weights_beside(Some(r#"{"mcts": {"search": "puct"}}"#));
        assert_eq!(trained_search(&w).unwrap().kind, SearchKind::Puct);
    }

    #[test]
    fn a_gumbel_network_plays_the_value_scale_its_run_trained_with() {
        let run = r#"{"mcts": {"search": "gumbel", "gumbel_value_scale": 0.25}}"#;
        let (_dir, w) = weights_beside(Some(run));
        let search = trained_search(&w).unwrap();
        assert_eq!(search.gumbel_value_scale, 0.25);
        assert_eq!(search.config().gumbel_value_scale, 0.25);
        // Runs from before the setting trained with the default.
        let (_dir, w) = weights_beside(Some(r#"{"mcts": {"search": "gumbel"}}"#));
        assert_eq!(
            trained_search(&w).unwrap(),
            PlaySearch::new(SearchKind::Gumbel)
        );
    }

    #[test]
    fn a_network_without_a_saved_search_plays_puct() {
        // A copied file, and a run from before the Gumbel search existed.
        let (_dir, w) = weights_beside(None);
        assert_eq!(
            trained_search(&w).unwrap(),
            PlaySearch::new(SearchKind::Puct)
        );
        let (_dir, w) = weights_beside(Some(r#"{"mcts": {"c_puct": 1.5}, "sims": 64}"#));
        assert_eq!(
            trained_search(&w).unwrap(),
            PlaySearch::new(SearchKind::Puct)
        );
    }

    #[test]
    fn unreadable_settings_name_the_file_and_the_way_out() {
        for text in [
            "{not json",
            r#"{"mcts": {"search": "alphabeta"}}"#,
            r#"{"mcts": {"search": 3}}"#,
            r#"{"mcts": {"search": "gumbel", "gumbel_value_scale": 0}}"#,
            r#"{"mcts": {"search": "gumbel", "gumbel_value_scale": "big"}}"#,
        ] {
            let (_dir, w) = weights_beside(Some(text));
            let e = format!("{:#}", trained_search(&w).unwrap_err());
            assert!(
                e.contains("run.json") && e.contains("--search puct"),
                "{text}: {e}"
            );
        }
    }
}
