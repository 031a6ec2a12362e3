//! The model file: one safetensors file, the model's description in its header. Saving,
//! loading with the checks a file must pass, and reading the description alone (also from the
//! sidecar `.json` of a model saved by an older version).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use tch::{Device, Tensor};

use super::arch::{ModelMeta, Shape};
use super::net::Net;
use super::tensors::{
    from_safetensors_bytes, read_safetensors_metadata, to_safetensors_bytes, FileMetadata,
};
use crate::core::files::write_atomic;

/// The key of a model's description ([`ModelMeta`] as JSON) in the `__metadata__` of its
/// safetensors header: a model is one file.
pub const META_KEY: &str = "zero.model";

impl Net {
    /// Saves the model as one safetensors file, its description in the header, written
    /// atomically: a crash leaves the old file or the new one, never a mix. A sidecar `.json`
    /// left beside it by an older version is removed afterwards.
    pub fn save(&self, path: &Path) -> Result<()> {
        if path.extension().and_then(|e| e.to_str()) != Some("safetensors") {
            bail!("model files end in .safetensors (got {})", path.display());
        }
        let bytes = self
            .to_bytes()
            .with_context(|| format!("cannot save {}", path.display()))?;
        write_atomic(path, &bytes)?;
        remove_stale_sidecar(path)
    }

    /// The bytes of the model file [`Net::save`] writes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut named: Vec<(String, Tensor)> = self.vs.variables().into_iter().collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let meta = HashMap::from([(META_KEY.to_string(), serde_json::to_string(&self.meta)?)]);
        to_safetensors_bytes(&named, Some(meta))
    }

    /// The description in the bytes of a model file, as [`Net::read_meta`] reads it; `path`
    /// names the file in errors (and locates an older model's sidecar).
    pub fn read_meta_bytes(path: &Path, bytes: &[u8]) -> Result<ModelMeta> {
        let header = read_safetensors_metadata(bytes, bytes.len() as u64)
            .map_err(|e| not_a_model(path, e))?;
        meta_from_header(path, &header)
    }

    /// Reads a model's description from its header only (cheap, however large the model).
    pub fn read_meta(path: &Path) -> Result<ModelMeta> {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
                "no model at {} (train one with `zero cycle`, or point to another file)",
                path.display()
            ),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let len = file
            .metadata()
            .with_context(|| format!("cannot read {}", path.display()))?
            .len();
        let header = read_safetensors_metadata(std::io::BufReader::new(file), len)
            .map_err(|e| not_a_model(path, e))?;
        meta_from_header(path, &header)
    }

    /// Loads a model for `game`, checking it was made for that game and shape.
    pub fn load(path: &Path, game: &str, shape: Shape, device: Device) -> Result<Net> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
                "no model at {} (train one with `zero cycle --game {game}`, or give another \
                 --models directory)",
                path.display()
            ),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        Net::load_bytes(path, &bytes, game, shape, device)
    }

    /// A model from the bytes of its file, checked as [`Net::load`] checks it; `path` names
    /// the file in errors (and locates an older model's sidecar).
    pub fn load_bytes(
        path: &Path,
        bytes: &[u8],
        game: &str,
        shape: Shape,
        device: Device,
    ) -> Result<Net> {
        let (named, header) = from_safetensors_bytes(bytes).map_err(|e| not_a_model(path, e))?;
        let meta = meta_from_header(path, &header)?;
        if meta.game != game {
            bail!(
                "{} is a {} model, not a {game} model",
                path.display(),
                meta.game
            );
        }
        if meta.shape != shape {
            bail!(
                "{} has input/output shape {:?}, the game needs {:?}",
                path.display(),
                meta.shape,
                shape
            );
        }
        // The description must fit the tensors before a network of its size is built: a
        // damaged description could otherwise ask for any amount of memory.
        let held = named
            .iter()
            .try_fold(0i64, |total, (_, t)| total.checked_add(t.numel() as i64));
        let needed = meta.arch.numbers(shape);
        if needed.is_none() || needed != held {
            let needed = needed.map_or("too many".to_string(), |n| n.to_string());
            let held = held.map_or("too many".to_string(), |n| n.to_string());
            return Err(not_a_model(
                path,
                format!(
                    "its tensors hold {held} numbers, the network shape its description gives \
                     ({}) has {needed}",
                    meta.arch
                ),
            ));
        }
        let mut net = Net::new(game, meta.arch, shape, device)?;
        net.copy_weights(path, named)?;
        net.meta = meta;
        Ok(net)
    }

    /// Copies the tensors of the file at `path` into the variables: every variable must be
    /// there with its shape and kind, and nothing else.
    fn copy_weights(&mut self, path: &Path, named: Vec<(String, Tensor)>) -> Result<()> {
        let mut file: HashMap<String, Tensor> = named.into_iter().collect();
        let mut vars: Vec<(String, Tensor)> = self.vs.variables().into_iter().collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        let _guard = tch::no_grad_guard();
        for (name, mut var) in vars {
            let src = file
                .remove(&name)
                .ok_or_else(|| not_a_model(path, format!("it has no tensor {name}")))?;
            if src.size() != var.size() || src.kind() != var.kind() {
                return Err(not_a_model(
                    path,
                    format!(
                        "{name} is {:?} of shape {:?}, the network needs {:?} of shape {:?}",
                        src.kind(),
                        src.size(),
                        var.kind(),
                        var.size()
                    ),
                ));
            }
            var.f_copy_(&src)
                .with_context(|| format!("cannot load {name} from {}", path.display()))?;
        }
        if let Some(extra) = file.keys().min() {
            return Err(not_a_model(
                path,
                format!(
                    "it holds {} tensors the network does not have, such as {extra}",
                    file.len()
                ),
            ));
        }
        Ok(())
    }
}

/// The error for a file that is not a model this program can read.
fn not_a_model(path: &Path, why: impl std::fmt::Display) -> anyhow::Error {
    anyhow!(
        "{} is not a zero model ({why}); train it again or point to another file",
        path.display()
    )
}

/// Why a model's description in its header cannot be read. A field this program does not know
/// (serde's "unknown field" message, which `Arch` gives for any key it does not have) comes
/// from a newer `zero` that describes a network this one cannot build: training again would
/// not help, updating would.
fn description_error(path: &Path, e: serde_json::Error) -> anyhow::Error {
    let message = e.to_string();
    if message.starts_with("unknown field") {
        return anyhow!(
            "{} was made by a newer zero: its description has a field this zero does not know \
             ({message}); update zero (`git pull`, then `./zero info` builds it) to use it",
            path.display()
        );
    }
    not_a_model(path, format!("its description is not valid: {e}"))
}

/// The description in a model's header, or else (a model saved before descriptions moved into
/// the file) in its sidecar.
fn meta_from_header(path: &Path, header: &FileMetadata) -> Result<ModelMeta> {
    if let Some(json) = header.get(META_KEY) {
        return serde_json::from_str(json).map_err(|e| description_error(path, e));
    }
    let side = sidecar(path);
    match std::fs::read_to_string(&side) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            not_a_model(
                path,
                format!("its description {} is not valid: {e}", side.display()),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(not_a_model(
            path,
            format!(
                "no model description in it, and no {} beside it",
                side.display()
            ),
        )),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", side.display())),
    }
}

/// Removes the sidecar beside `path` if it is a model description (a stale one, from before
/// descriptions moved into the model file); any other file of that name is left alone.
fn remove_stale_sidecar(path: &Path) -> Result<()> {
    let side = sidecar(path);
    let is_description = std::fs::read_to_string(&side)
        .ok()
        .is_some_and(|text| serde_json::from_str::<ModelMeta>(&text).is_ok());
    if is_description {
        std::fs::remove_file(&side)
            .with_context(|| format!("cannot remove the old {}", side.display()))?;
    }
    Ok(())
}

/// Where a model saved by an older version keeps its description: `best.safetensors` →
/// `best.json`.
pub fn sidecar(path: &Path) -> PathBuf {
    path.with_extension("json")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::arch::Arch;
    use crate::nn::net::tests::{load, net, weights};
    use crate::nn::Precision;

    #[test]
    fn a_saved_model_is_one_file_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("models/best.safetensors");
        let original = net(1);
        original.save(&path).unwrap();
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("best.safetensors")]);
        assert_eq!(Net::read_meta(&path).unwrap(), original.meta);
        let back = load(&path).unwrap();
        assert_eq!(back.meta, original.meta);
        assert_eq!(weights(&back), weights(&original));
        assert_ne!(weights(&back), weights(&net(2)));
        // Both give the same answers.
        let x: Vec<f32> = (0..2 * 27).map(|i| (i % 3) as f32 / 2.0).collect();
        let (mut p1, mut v1, mut p2, mut v2) =
            (vec![0.0; 18], vec![0.0; 2], vec![0.0; 18], [0.0; 2]);
        original.evaluate(&x, 2, &mut p1, &mut v1).unwrap();
        back.evaluate(&x, 2, &mut p2, &mut v2).unwrap();
        assert_eq!((p1, v1), (p2, v2.to_vec()));
    }

    #[test]
    fn models_saved_with_a_sidecar_still_load_and_the_sidecar_goes_on_saving() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("best.safetensors");
        let old = net(1);
        // As older versions saved: tch's own safetensors, the description beside it.
        old.vs.save(&path).unwrap();
        let side = sidecar(&path);
        std::fs::write(&side, serde_json::to_string_pretty(&old.meta).unwrap()).unwrap();
        assert_eq!(Net::read_meta(&path).unwrap(), old.meta);
        let back = load(&path).unwrap();
        assert_eq!(back.meta, old.meta);
        assert_eq!(weights(&back), weights(&old));
        // Saving again makes it one file.
        back.save(&path).unwrap();
        assert!(!side.exists());
        assert_eq!(load(&path).unwrap().meta, back.meta);
        // A file of that name that is not a description is left alone.
        let other = dir.path().join("state.safetensors");
        std::fs::write(dir.path().join("state.json"), "{\"iteration\": 3}").unwrap();
        back.save(&other).unwrap();
        assert!(dir.path().join("state.json").exists());
    }

    #[test]
    fn a_model_of_a_newer_zero_says_to_update_not_to_train_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("best.safetensors");
        let model = net(1);
        // As a later version would describe a network with a head this one cannot build.
        let mut meta = serde_json::to_value(&model.meta).unwrap();
        meta["arch"]["future_head"] = serde_json::json!(true);
        let mut named: Vec<(String, Tensor)> = model.vs.variables().into_iter().collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let header = HashMap::from([(META_KEY.to_string(), meta.to_string())]);
        std::fs::write(&path, to_safetensors_bytes(&named, Some(header)).unwrap()).unwrap();
        for e in [
            load(&path).err().unwrap(),
            Net::read_meta(&path).unwrap_err(),
        ] {
            let e = e.to_string();
            assert!(
                e.starts_with(&format!("{} was made by a newer zero", path.display())),
                "{e}"
            );
            assert!(e.contains("unknown field `future_head`"), "{e}");
            assert!(e.ends_with("update zero (`git pull`, then `./zero info` builds it) to use it"));
        }
    }

    #[test]
    fn damaged_and_missing_models_are_clear_errors_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("best.safetensors");
        let shown = path.display().to_string();
        net(1).save(&path).unwrap();
        let good = std::fs::read(&path).unwrap();
        let not_a_model = |e: &str| {
            e.starts_with(&format!("{shown} is not a zero model ("))
                && e.ends_with("); train it again or point to another file")
        };
        for bytes in [
            &good[..good.len() - 100],
            &good[..good.len() / 2],
            &good[..20],
            &good[..3],
            b"",
            &[0xa5; 5000][..],
            &[0x17; 3][..],
        ] {
            std::fs::write(&path, bytes).unwrap();
            let e = load(&path).err().unwrap().to_string();
            assert!(not_a_model(&e), "{e}");
            let e = Net::read_meta(&path).unwrap_err().to_string();
            assert!(not_a_model(&e), "{e}");
        }
        // Random bytes.
        let mut state = 0x1234_5678_u64;
        let random: Vec<u8> = (0..4096)
            .map(|_| {
                state = crate::core::rng::mix64(state);
                state as u8
            })
            .collect();
        std::fs::write(&path, &random).unwrap();
        let e = load(&path).err().unwrap().to_string();
        assert!(not_a_model(&e), "{e}");
        // Valid safetensors without a description, and no sidecar.
        net(1).vs.save(&path).unwrap();
        let e = load(&path).err().unwrap().to_string();
        assert!(not_a_model(&e) && e.contains("no model description"), "{e}");
        // Missing.
        let missing = dir.path().join("none.safetensors");
        let e = load(&missing).err().unwrap().to_string();
        assert!(
            e.starts_with(&format!("no model at {}", missing.display())),
            "{e}"
        );
        let e = Net::read_meta(&missing).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("no model at {}", missing.display())),
            "{e}"
        );
    }

    #[test]
    fn a_model_of_another_shape_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("best.safetensors");
        let mut n = net(1);
        // The description says 2 filters, the weights have 8.
        n.meta.arch = Arch::resnet(1, 2);
        n.save(&path).unwrap();
        let e = load(&path).err().unwrap().to_string();
        assert!(
            e.contains("is not a zero model") && e.contains("shape"),
            "{e}"
        );
    }

    #[test]
    fn a_network_saved_while_computing_in_bfloat16_saves_32_bit_weights() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bf16.safetensors");
        let original = net(5).with_precision(Precision::Bf16);
        original.save(&path).unwrap();
        let back = load(&path).unwrap();
        assert_eq!(back.precision(), Precision::F32);
        assert_eq!(weights(&back), weights(&original));
    }
}
