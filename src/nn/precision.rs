//! The number format of the network's convolutions. Weights are always kept and saved as
//! 32-bit floats; with `Bf16` the residual trunk computes in bfloat16 (the inputs and each
//! convolution's weights cast on the way in, batch norm's statistics and parameters kept in
//! 32 bits) and the heads in 32-bit floats again. On a processor with bfloat16 instructions
//! (AVX512-BF16) oneDNN's bfloat16 convolutions take about half the time of 32-bit ones, in
//! training and inference alike; elsewhere they are emulated and slower, so bfloat16 is the
//! default only where the processor has them ([`Precision::native`]).

use serde::{Deserialize, Serialize};
use tch::Kind;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 32-bit floats throughout.
    #[default]
    F32,
    /// bfloat16 in the residual trunk's convolutions and activations.
    Bf16,
}

impl Precision {
    /// The tensor kind the trunk computes in.
    pub fn trunk_kind(self) -> Kind {
        match self {
            Precision::F32 => Kind::Float,
            Precision::Bf16 => Kind::BFloat16,
        }
    }

    /// The faster precision on this machine's processor for a CPU run: `Bf16` where it has
    /// bfloat16 instructions, else `F32`.
    pub fn native() -> Precision {
        if cpu_has_bf16() {
            Precision::Bf16
        } else {
            Precision::F32
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn cpu_has_bf16() -> bool {
    std::arch::is_x86_feature_detected!("avx512bf16")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_bf16() -> bool {
    false
}

impl std::str::FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "f32" => Ok(Precision::F32),
            "bf16" => Ok(Precision::Bf16),
            other => Err(format!(
                "unknown precision '{other}' (the precisions are f32 and bf16)"
            )),
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16",
        })
    }
}
