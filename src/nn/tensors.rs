//! Named tensors as the bytes of a safetensors file, and back. Models and training checkpoints
//! are stored this way, serialized here in memory so that each file is written whole through
//! [`crate::core::files::write_atomic`].
//!
//! The errors of this module say what is wrong with the bytes; the caller names the file and
//! says what to do.

use std::collections::HashMap;
use std::io::Read;

use anyhow::{anyhow, bail, Context, Result};
use safetensors::tensor::{Dtype, Metadata, SafeTensors, View};
use safetensors::SafeTensorError;
use tch::{Device, Kind, Tensor};

/// Tensors by name.
pub type NamedTensors = Vec<(String, Tensor)>;

/// The `__metadata__` of a safetensors header: strings by key.
pub type FileMetadata = HashMap<String, String>;

/// One tensor's data copied out to the CPU, little-endian.
struct Flat {
    dtype: Dtype,
    shape: Vec<usize>,
    data: Vec<u8>,
}

impl View for &Flat {
    fn dtype(&self) -> Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Borrowed(&self.data)
    }
    fn data_len(&self) -> usize {
        self.data.len()
    }
}

/// Copies a tensor (f32 or f64, on any device) out to the CPU.
fn copy_out(name: &str, t: &Tensor) -> Result<Flat> {
    let t = t
        .f_to_device(Device::Cpu)
        .and_then(|t| t.f_contiguous())
        .with_context(|| format!("cannot copy {name} to the CPU"))?;
    let size = t.size();
    let n = size.iter().product::<i64>() as usize;
    let shape = size.iter().map(|&d| d as usize).collect();
    let (dtype, data) = match t.f_kind()? {
        Kind::Float => {
            let mut v = vec![0f32; n];
            t.f_copy_data(&mut v, n)?;
            (Dtype::F32, v.iter().flat_map(|x| x.to_le_bytes()).collect())
        }
        Kind::Double => {
            let mut v = vec![0f64; n];
            t.f_copy_data(&mut v, n)?;
            (Dtype::F64, v.iter().flat_map(|x| x.to_le_bytes()).collect())
        }
        kind => bail!("cannot save {name}: tensors of kind {kind:?} are not supported"),
    };
    Ok(Flat { dtype, shape, data })
}

/// The bytes of a safetensors file holding `named` tensors (f32 or f64) and `metadata` (the
/// header's `__metadata__`, string to string).
pub fn to_safetensors_bytes(
    named: &[(String, Tensor)],
    metadata: Option<FileMetadata>,
) -> Result<Vec<u8>> {
    // safetensors 0.3.3 writes such a header as `{},"__metadata__":...}`, which no reader
    // (itself included) reads back.
    if named.is_empty() && metadata.is_some() {
        bail!("cannot encode metadata without any tensor");
    }
    let flat = named
        .iter()
        .map(|(n, t)| Ok((n.as_str(), copy_out(n, t)?)))
        .collect::<Result<Vec<_>>>()?;
    safetensors::serialize(flat.iter().map(|(n, f)| (*n, f)), &metadata)
        .map_err(|e| anyhow!("cannot encode the tensors: {}", describe(&e)))
}

/// The tensors (on the CPU, in name order) and the metadata of a safetensors file's bytes.
pub fn from_safetensors_bytes(bytes: &[u8]) -> Result<(NamedTensors, FileMetadata)> {
    // The header first, for its plainer errors; then the whole file's checks.
    let metadata = read_safetensors_metadata(bytes, bytes.len() as u64)?;
    let file = SafeTensors::deserialize(bytes).map_err(|e| anyhow!(describe(&e)))?;
    let mut named = Vec::with_capacity(file.len());
    for (name, view) in file.tensors() {
        let shape: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
        let data = view.data();
        let t = match view.dtype() {
            Dtype::F32 => {
                let v: Vec<f32> = data
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                Tensor::f_from_slice(&v)
            }
            Dtype::F64 => {
                let v: Vec<f64> = data
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                    .collect();
                Tensor::f_from_slice(&v)
            }
            dtype => bail!("{name} holds {dtype:?} numbers, not f32 or f64"),
        };
        let t = t
            .and_then(|t| t.f_view(shape.as_slice()))
            .with_context(|| format!("cannot make a tensor of {name}"))?;
        named.push((name, t));
    }
    named.sort_by(|a, b| a.0.cmp(&b.0));
    Ok((named, metadata))
}

/// The metadata of a safetensors file of `file_len` bytes, reading only its header from
/// `reader` (positioned at the start): cheap however large the tensors. Also checks that the
/// header's tensors end where the file ends, so a truncated file is found here already.
pub fn read_safetensors_metadata(mut reader: impl Read, file_len: u64) -> Result<FileMetadata> {
    let truncated = || anyhow!("truncated inside its header");
    let mut len = [0u8; 8];
    if file_len < 8 {
        bail!("{file_len} bytes, shorter than a safetensors header");
    }
    reader.read_exact(&mut len).map_err(|_| truncated())?;
    let n = u64::from_le_bytes(len);
    if n > file_len - 8 {
        bail!(
            "not a safetensors file, or truncated inside its header: its first 8 bytes give a \
             header of {n} bytes, the file has {file_len}"
        );
    }
    let mut header = vec![0u8; n as usize];
    reader.read_exact(&mut header).map_err(|_| truncated())?;
    if header.first() != Some(&b'{') {
        bail!("not a safetensors file: no header");
    }
    let metadata: Metadata = serde_json::from_slice(&header)
        .map_err(|e| anyhow!("not a safetensors file: its header is not valid: {e}"))?;
    let end = metadata
        .tensors()
        .values()
        .map(|info| info.data_offsets.1 as u64)
        .max()
        .unwrap_or(0);
    let described = end.checked_add(8 + n);
    if described != Some(file_len) {
        match described {
            Some(d) => bail!(
                "truncated or padded: its header describes {d} bytes, the file has {file_len}"
            ),
            None => {
                bail!("not a safetensors file: its header describes more bytes than there can be")
            }
        }
    }
    Ok(metadata.metadata().clone().unwrap_or_default())
}

/// A safetensors error in words.
fn describe(e: &SafeTensorError) -> String {
    match e {
        SafeTensorError::HeaderTooSmall => "shorter than a safetensors header".into(),
        SafeTensorError::HeaderTooLarge | SafeTensorError::InvalidHeaderLength => {
            "not a safetensors file, or truncated inside its header".into()
        }
        SafeTensorError::InvalidHeader
        | SafeTensorError::InvalidHeaderStart
        | SafeTensorError::InvalidHeaderDeserialization => {
            "not a safetensors file: no valid header".into()
        }
        SafeTensorError::MetadataIncompleteBuffer => {
            "truncated or padded: its header does not describe its length".into()
        }
        SafeTensorError::InvalidOffset(name) => format!("the offsets of {name} are invalid"),
        SafeTensorError::TensorInvalidInfo | SafeTensorError::ValidationOverflow => {
            "its header gives a tensor's size wrong".into()
        }
        other => format!("{other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensors_and_metadata_round_trip() {
        let named = vec![
            (
                "b".to_string(),
                Tensor::from_slice(&[1.5f32, -2.0, 3.25, 0.0, 7.0, 1e-30]).view([2, 3]),
            ),
            ("a".to_string(), Tensor::from_slice(&[0.1f64])),
        ];
        let meta = HashMap::from([("k".to_string(), "v".to_string())]);
        let bytes = to_safetensors_bytes(&named, Some(meta.clone())).unwrap();
        let (back, m) = from_safetensors_bytes(&bytes).unwrap();
        assert_eq!(m, meta);
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].0, "a");
        assert_eq!(back[0].1.kind(), Kind::Double);
        assert_eq!(back[0].1.double_value(&[0]), 0.1);
        assert_eq!(back[1].0, "b");
        assert_eq!(back[1].1.size(), vec![2, 3]);
        assert!(back[1].1.equal(&named[0].1));
        let header = read_safetensors_metadata(&bytes[..], bytes.len() as u64).unwrap();
        assert_eq!(header, meta);
        // tch reads what this writes.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.safetensors");
        std::fs::write(&path, &bytes).unwrap();
        let theirs = Tensor::read_safetensors(&path).unwrap();
        assert_eq!(theirs.len(), 2);
    }

    #[test]
    fn damaged_bytes_are_errors() {
        let named = vec![("w".to_string(), Tensor::from_slice(&[1f32, 2.0, 3.0]))];
        let bytes = to_safetensors_bytes(&named, None).unwrap();
        let short = &bytes[..bytes.len() - 1];
        let e = from_safetensors_bytes(short).unwrap_err().to_string();
        assert!(e.contains("truncated"), "{e}");
        let e = read_safetensors_metadata(short, short.len() as u64)
            .unwrap_err()
            .to_string();
        assert!(e.contains("truncated"), "{e}");
        for junk in [&b""[..], b"abc", b"\xff\xff\xff\xff\xff\xff\xff\xffxyz"] {
            assert!(from_safetensors_bytes(junk).is_err());
            assert!(read_safetensors_metadata(junk, junk.len() as u64).is_err());
        }
    }
}
