//! What every part of `freshet bench` returns (its own module, so the parts and the command that
//! prints them do not import each other), and the memory readings the parts share.

/// One part's figures at one size, in print order: the key names the unit (`seconds`, `_ms`,
/// `_bytes`, `mb_per_second`) or the count (`urls`, `hosts`).
pub type Figures = Vec<(&'static str, f64)>;

/// A field of /proc/self/status in bytes (`VmRSS`, `VmHWM`).
pub fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line[field.len() + 1..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// Resets the peak resident memory to the current one; false where the kernel does not allow it.
pub fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}
