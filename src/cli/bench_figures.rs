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

/// CPU time this process has used so far, user and system, all threads (seconds). Beside a
/// pass's wall time it says what the pass cost whatever else the machine was running: the
/// figure to compare two builds on a loaded machine.
pub fn cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole rusage into the pointer it is given.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return 0.0;
    }
    // SAFETY: initialised by the successful call above (and zeroed before it).
    let usage = unsafe { usage.assume_init() };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}
