//! `zero info`: what this build is and what it runs on.

use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Info {
    version: &'static str,
    libtorch_version: Option<String>,
    libtorch_path: Option<String>,
    cuda_available: bool,
    cuda_devices: i64,
    cudnn_available: bool,
    threads: usize,
}

/// The directory libtorch was actually loaded from, read off the process's memory map.
fn loaded_libtorch_dir() -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.ends_with("/libtorch_cpu.so") || p.ends_with("/libtorch.so"))
        .and_then(|p| PathBuf::from(p).parent().map(PathBuf::from))
}

/// The version in the PyPI wheel's `torch/version.py` beside `torch/lib`.
fn libtorch_version(lib: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(lib.parent()?.join("version.py")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("__version__ = "))
        .map(|v| v.trim().trim_matches('\'').trim_matches('"').to_string())
}

pub fn run(args: Args) -> Result<()> {
    // Touch libtorch first so it is mapped.
    let cuda_available = tch::Cuda::is_available();
    let lib = loaded_libtorch_dir();
    let info = Info {
        version: env!("CARGO_PKG_VERSION"),
        libtorch_version: lib.as_deref().and_then(libtorch_version),
        libtorch_path: lib.map(|p| p.display().to_string()),
        cuda_available,
        cuda_devices: tch::Cuda::device_count(),
        cudnn_available: tch::Cuda::cudnn_is_available(),
        threads: crate::core::threads::default_threads(),
    };
    if args.json {
        return super::print_json(&info);
    }
    println!("zero {}", info.version);
    println!(
        "libtorch {} at {}",
        info.libtorch_version
            .as_deref()
            .unwrap_or("(unknown version)"),
        info.libtorch_path.as_deref().unwrap_or("(not found)")
    );
    println!(
        "CUDA: {}",
        if info.cuda_available {
            format!("available, {} device(s)", info.cuda_devices)
        } else {
            "not available (running on CPU)".to_string()
        }
    );
    println!("CPU threads: {}", info.threads);
    Ok(())
}
