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
        match CpuMatrixUnits::detect() {
            CpuMatrixUnits::Amx | CpuMatrixUnits::AvxBf16 => Precision::Bf16,
            CpuMatrixUnits::F32Only => Precision::F32,
        }
    }

    /// Whether a network answering without autograd (self-play's, evaluation's, a player's)
    /// lays the trunk's data out channels last on a CPU; training always does there. In 32 bits
    /// it is faster on every CPU measured; in bfloat16 it depends on the processor's
    /// instructions. With AMX (Intel Xeon) 1,600 self-play games took 13.2 s instead of 19.96;
    /// with AVX512-BF16 alone (AMD Zen 4) 16.1 s instead of 14.5 (`zero bench selfplay --games
    /// 1600`, 3 runs each alternately, medians), while a training step there was faster channels
    /// last (55 against 62 ms): docs/ablations.md.
    pub fn inference_channels_last_on_cpu(self) -> bool {
        match self {
            Precision::F32 => true,
            Precision::Bf16 => CpuMatrixUnits::detect() == CpuMatrixUnits::Amx,
        }
    }
}

/// What this processor offers the network's convolutions, fastest first. It sets the
/// precision of a CPU run and, with it, how much work a run's minutes buy: on two cores of
/// an Intel Xeon with AMX an iteration of the cpu preset took about 0.6 times what it took on
/// an AMD Zen 4 with AVX512-BF16 alone (docs/ablations.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuMatrixUnits {
    /// AMX's bfloat16 tiles (Intel Xeon from Sapphire Rapids).
    Amx,
    /// AVX512-BF16's vector instructions without AMX (AMD Zen 4, Intel Cooper Lake).
    AvxBf16,
    /// Neither: bfloat16 would be emulated, so the network computes in 32 bits.
    F32Only,
}

impl CpuMatrixUnits {
    /// This machine's.
    pub fn detect() -> CpuMatrixUnits {
        if cpu_has_amx() {
            CpuMatrixUnits::Amx
        } else if cpu_has_bf16() {
            CpuMatrixUnits::AvxBf16
        } else {
            CpuMatrixUnits::F32Only
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

/// Whether the processor has AMX's bfloat16 tile instructions (CPUID leaf 7, EDX bit 22), which
/// oneDNN uses for bfloat16 convolutions. Read from CPUID because
/// `is_x86_feature_detected!("amx-bf16")` is not stable Rust yet.
#[cfg(target_arch = "x86_64")]
fn cpu_has_amx() -> bool {
    use std::arch::x86_64::{__cpuid_count, __get_cpuid_max};
    // Safe in current Rust, `unsafe` in older releases: allowed either way.
    #[allow(unused_unsafe)]
    let (max_leaf, leaf7) = unsafe { (__get_cpuid_max(0).0, __cpuid_count(7, 0)) };
    max_leaf >= 7 && leaf7.edx & (1 << 22) != 0
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_amx() -> bool {
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
