//! The process's memory as the kernel counts it, for the figures that show a long run stays
//! flat.

/// Resident memory now and at its peak, in MiB (`VmRSS`, `VmHWM` of `/proc/self/status`);
/// `None` where the system does not say (not Linux).
pub fn resident_mib() -> Option<(f64, f64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kib: f64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib / 1024.0)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Hands memory that the allocator holds but no longer uses back to the system (glibc keeps
/// freed blocks of its per-thread arenas, so a process whose threads come and go, as the
/// stages' do, would otherwise grow in resident memory without using more).
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns unused pages of the allocator's heaps to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn resident_memory_is_read_on_linux() {
        let (now, peak) = super::resident_mib().expect("Linux reports VmRSS and VmHWM");
        assert!(now > 0.0 && peak >= now, "{now} {peak}");
    }
}
