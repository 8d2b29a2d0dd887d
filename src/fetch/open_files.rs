//! The open-file limit. A refresher holds a socket per host it is talking to, and keeps idle
//! ones pooled for a while, so with thousands of hosts the common soft limit of 1,024
//! descriptors runs out (`Too many open files`: every request fails, robots.txt looks
//! unreachable and hosts back off) long before memory or the network does. At start the soft
//! limit is raised to the hard limit, as Go's runtime does for every program; nothing goes past
//! what the administrator allows.

/// Raises the soft limit on open files to the hard limit; returns (before, after), or `None`
/// where the limits cannot be read (not Unix) or the raise was refused.
pub fn raise_open_files_limit() -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct we own; setrlimit only reads it.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
            return None;
        }
        let before = limit.rlim_cur;
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            // SAFETY: as above.
            if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
                return None;
            }
        }
        // rlim_t is u64 on Linux but not on every Unix.
        #[allow(clippy::unnecessary_cast)]
        Some((before as u64, limit.rlim_cur as u64))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_limit_reaches_the_hard_one() {
        let Some((before, after)) = raise_open_files_limit() else {
            return;
        };
        assert!(after >= before);
        let again = raise_open_files_limit().expect("readable once, readable twice");
        assert_eq!(again, (after, after));
    }
}
