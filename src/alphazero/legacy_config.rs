//! Run settings written by versions that still had the settings measured and not adopted
//! (docs/research/not-adopted.md; their code is in commit d6edf29). Such a `run.json` resumes
//! unchanged when each removed setting holds its off value, the research settings then moved
//! into their section; a run that turned one on is refused, naming it. The file itself is
//! left as it is.

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

/// The settings that moved into the `research` section.
const RESEARCH: [&str; 2] = ["playout_cap", "reanalyse_positions"];

/// `run.json`'s settings as this version reads them: removed settings that were off dropped,
/// research settings moved into their section. An error names a removed setting that was on.
pub fn upgrade(mut settings: Value) -> Result<Value, String> {
    let Some(top) = settings.as_object_mut() else {
        return Ok(settings);
    };
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
    move_research(top);
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

/// Moves the research settings of a flat `run.json` into `research`, leaving out those off.
fn move_research(top: &mut Map<String, Value>) {
    let mut research = Map::new();
    for key in RESEARCH {
        match top.remove(key) {
            Some(v) if !v.is_null() && !is_zero(&v) => {
                research.insert(key.to_string(), v);
            }
            _ => {}
        }
    }
    if !research.is_empty() {
        top.insert("research".to_string(), Value::Object(research));
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
    fn off_settings_are_dropped_and_research_ones_move() {
        let old = json!({
            "preset": "tiny",
            "arch": {"kind": "resnet", "blocks": 1, "filters": 16, "value_channels": 1},
            "random_opening_share": 1.0,
            "value_loss_weight": 1.0,
            "opponent_policy_loss_weight": 0.15,
            "policy_surprise_share": 0.0,
            "reanalyse_positions": 0,
            "playout_cap": {"full_fraction": 0.25, "fast_sims": 8},
        });
        let new = json!({
            "preset": "tiny",
            "arch": {"kind": "resnet", "blocks": 1, "filters": 16},
            "research": {"playout_cap": {"full_fraction": 0.25, "fast_sims": 8}},
        });
        assert_eq!(upgrade(old), Ok(new));
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
        for (settings, named) in on {
            let e = upgrade(settings).unwrap_err();
            assert!(e.starts_with(&format!("it turns on {named}")), "{e}");
            assert!(e.contains("d6edf29"), "{e}");
        }
    }
}
