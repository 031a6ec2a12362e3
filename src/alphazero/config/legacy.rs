//! Run settings written before the settings had sections: one flat object, with the settings
//! measured and not adopted that versions up to commit d6edf29 had (docs/research/
//! not-adopted.md). Such a `run.json` resumes unchanged: each setting moves into its section
//! (a setting older runs lack gets the value those runs had), when each removed setting holds
//! its off value; a run that turned one on is refused, naming it. The file itself is left as
//! it is.

use serde_json::{Map, Value};

/// A removed setting and whether a value of it is the one that changed nothing.
struct Removed {
    key: &'static str,
    is_off: fn(&Value) -> bool,
}

fn absent(v: &Value) -> bool {
    v.is_null()
}

fn is_false(v: &Value) -> bool {
    v == &Value::Bool(false)
}

fn is_zero(v: &Value) -> bool {
    v.as_f64() == Some(0.0)
}

fn is_one(v: &Value) -> bool {
    v.as_f64() == Some(1.0)
}

/// A loss weight of a head no network of the run had: any number changed nothing.
fn any_number(v: &Value) -> bool {
    v.is_number()
}

const REMOVED: [Removed; 16] = [
    Removed {
        key: "random_opening_share",
        is_off: is_one,
    },
    Removed {
        key: "random_opening_search_value",
        is_off: is_false,
    },
    Removed {
        key: "fork_line_search_value",
        is_off: is_false,
    },
    Removed {
        key: "root_noise_plies",
        is_off: absent,
    },
    Removed {
        key: "opening_sims",
        is_off: absent,
    },
    Removed {
        key: "decoupled_weight_decay",
        is_off: is_false,
    },
    Removed {
        key: "weight_average_steps",
        is_off: is_zero,
    },
    Removed {
        key: "carry_adam_moments",
        is_off: is_false,
    },
    Removed {
        key: "value_bootstrap",
        is_off: absent,
    },
    Removed {
        key: "value_discount",
        is_off: |v| absent(v) || is_one(v),
    },
    Removed {
        key: "position_averaging",
        is_off: is_false,
    },
    Removed {
        key: "policy_surprise_share",
        is_off: is_zero,
    },
    Removed {
        key: "board_loss_weight",
        is_off: any_number,
    },
    Removed {
        key: "opponent_policy_loss_weight",
        is_off: any_number,
    },
    Removed {
        key: "soft_policy_loss_weight",
        is_off: any_number,
    },
    Removed {
        key: "value_loss_weight",
        is_off: is_one,
    },
];

/// The network shape's removed flags: each off when absent or false.
const REMOVED_ARCH_FLAGS: [&str; 5] = [
    "board_head",
    "squeeze_excite",
    "opponent_policy_head",
    "soft_policy_head",
    "line_threats",
];

/// Where each flat setting went: its section and name there, and the value of runs from
/// before the setting existed (`None`: every flat `run.json` that has the others has it).
const MOVED: [(&str, &str, &str, Option<&str>); 29] = [
    ("arch", "net", "arch", None),
    ("precision", "net", "precision", Some("\"f32\"")),
    ("games", "selfplay", "games", None),
    ("sims", "selfplay", "sims", None),
    ("parallel_games", "selfplay", "parallel_games", None),
    ("workers", "selfplay", "workers", None),
    (
        "inference_threads",
        "selfplay",
        "inference_threads",
        Some("1"),
    ),
    ("chunk_games", "selfplay", "chunk_games", Some("64")),
    ("temperature_plies", "selfplay", "temperature_plies", None),
    (
        "random_opening_plies",
        "selfplay",
        "random_opening_plies",
        Some("0"),
    ),
    ("fork_share", "selfplay", "fork_share", Some("0.0")),
    ("fork_plies", "selfplay", "fork_plies", Some("0")),
    ("fork_move", "selfplay", "fork_move", Some("\"uniform\"")),
    ("train_steps", "train", "steps", None),
    ("batch_size", "train", "batch_size", None),
    ("learning_rate", "train", "learning_rate", None),
    ("learning_rate_drops", "train", "learning_rate_drops", None),
    ("weight_decay", "train", "weight_decay", None),
    ("window", "train", "window", None),
    ("value_target_mix", "train", "value_target_mix", None),
    ("eval_games", "eval", "games", None),
    ("eval_sims", "eval", "sims", None),
    ("promote_threshold", "eval", "promote_threshold", None),
    ("eval_random_plies", "eval", "random_plies", None),
    ("eval_opening_plies", "eval", "opening_plies", Some("0")),
    ("benchmark", "eval", "benchmark", None),
    ("benchmark_games", "eval", "benchmark_games", None),
    (
        "grade",
        "eval",
        "grade",
        Some(r#"{"net_positions": 1000, "search_positions": 400}"#),
    ),
    ("playout_cap", "research", "playout_cap", None),
];

/// Whether `settings` are a flat `run.json` (written before the sections).
fn is_flat(settings: &Map<String, Value>) -> bool {
    !settings.contains_key("selfplay") && settings.contains_key("games")
}

/// `run.json`'s settings as this version reads them: a flat `run.json`'s moved into their
/// sections, its removed settings dropped where they were off; settings with sections pass as
/// they are. An error names a removed setting that was on.
pub fn upgrade(mut settings: Value) -> Result<Value, String> {
    let Some(top) = settings.as_object_mut() else {
        return Ok(settings);
    };
    if !is_flat(top) {
        return Ok(settings);
    }
    for removed in &REMOVED {
        if let Some(v) = top.remove(removed.key) {
            if !(removed.is_off)(&v) {
                return Err(refusal(removed.key, &v));
            }
        }
    }
    if let Some(arch) = top.get_mut("arch").and_then(Value::as_object_mut) {
        upgrade_arch(arch)?;
    }
    move_into_sections(top);
    Ok(settings)
}

/// Drops the network shape's removed flags where they are off.
fn upgrade_arch(arch: &mut Map<String, Value>) -> Result<(), String> {
    if let Some(v) = arch.remove("value_channels") {
        if !is_one(&v) {
            return Err(refusal("arch.value_channels", &v));
        }
    }
    for flag in REMOVED_ARCH_FLAGS {
        if let Some(v) = arch.remove(flag) {
            if !is_false(&v) {
                return Err(refusal(&format!("arch.{flag}"), &v));
            }
        }
    }
    Ok(())
}

/// Moves the flat settings into their sections, giving those the run predates the value it
/// had; research settings that are off are left out, as this version writes them.
fn move_into_sections(top: &mut Map<String, Value>) {
    for (old, section, new, before) in MOVED {
        let value = match (top.remove(old), before) {
            (Some(v), _) => v,
            (None, Some(default)) => serde_json::from_str(default).unwrap_or(Value::Null),
            (None, None) => continue,
        };
        if value.is_null() && section == "research" {
            continue;
        }
        let entry = top
            .entry(section.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(fields) = entry {
            fields.insert(new.to_string(), value);
        }
    }
    if let Some(n) = top.remove("reanalyse_positions").filter(|v| !is_zero(v)) {
        let entry = top
            .entry("research".to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(research) = entry {
            research.insert("reanalyse_positions".to_string(), n);
        }
    }
}

fn refusal(key: &str, value: &Value) -> String {
    format!(
        "it turns on `{key}` ({value}), a setting that was measured, not adopted and removed \
         (docs/research/not-adopted.md): this version cannot resume the run; finish it with \
         commit d6edf29 of zero, or start a new run in other --models/--data directories"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_flat_run_json_moves_into_sections_and_drops_what_was_off() {
        let old = json!({
            "preset": "tiny",
            "seed": 5,
            "arch": {"kind": "resnet", "blocks": 1, "filters": 16, "value_channels": 1},
            "games": 16, "sims": 16, "parallel_games": 16, "workers": 1,
            "temperature_plies": 8,
            "random_opening_share": 1.0,
            "mcts": {"c_puct": 1.5},
            "train_steps": 20, "batch_size": 64, "learning_rate": 0.002,
            "weight_decay": 0.0001, "window": 4, "value_target_mix": 0.3,
            "value_loss_weight": 1.0,
            "opponent_policy_loss_weight": 0.15,
            "policy_surprise_share": 0.0,
            "eval_games": 4, "eval_sims": 8, "promote_threshold": 0.55,
            "eval_random_plies": 4, "benchmark": null, "benchmark_games": 0,
            "reanalyse_positions": 0,
            "playout_cap": {"full_fraction": 0.25, "fast_sims": 8},
        });
        let new = json!({
            "preset": "tiny",
            "seed": 5,
            "net": {"arch": {"kind": "resnet", "blocks": 1, "filters": 16}, "precision": "f32"},
            "selfplay": {
                "games": 16, "sims": 16, "parallel_games": 16, "workers": 1,
                "inference_threads": 1, "chunk_games": 64, "temperature_plies": 8,
                "random_opening_plies": 0, "fork_share": 0.0, "fork_plies": 0,
                "fork_move": "uniform",
            },
            "mcts": {"c_puct": 1.5},
            "train": {
                "steps": 20, "batch_size": 64, "learning_rate": 0.002,
                "weight_decay": 0.0001, "window": 4, "value_target_mix": 0.3,
            },
            "eval": {
                "games": 4, "sims": 8, "promote_threshold": 0.55, "random_plies": 4,
                "opening_plies": 0, "benchmark": null, "benchmark_games": 0,
                "grade": {"net_positions": 1000, "search_positions": 400},
            },
            "research": {"playout_cap": {"full_fraction": 0.25, "fast_sims": 8}},
        });
        assert_eq!(upgrade(old), Ok(new.clone()));
        // Settings with sections pass as they are.
        assert_eq!(upgrade(new.clone()), Ok(new));
    }

    #[test]
    fn a_removed_setting_that_was_on_is_named() {
        let on = [
            (
                json!({"policy_surprise_share": 0.5}),
                "`policy_surprise_share` (0.5)",
            ),
            (json!({"value_discount": 0.98}), "`value_discount` (0.98)"),
            (json!({"root_noise_plies": 8}), "`root_noise_plies` (8)"),
            (
                json!({"arch": {"kind": "resnet", "squeeze_excite": true}}),
                "`arch.squeeze_excite` (true)",
            ),
            (
                json!({"arch": {"kind": "resnet", "value_channels": 8}}),
                "`arch.value_channels` (8)",
            ),
        ];
        for (mut settings, named) in on {
            settings["games"] = json!(16);
            let e = upgrade(settings).unwrap_err();
            assert!(e.starts_with(&format!("it turns on {named}")), "{e}");
            assert!(e.contains("d6edf29"), "{e}");
        }
    }
}
