//! A deterministic discrete-event world that compares revisit policies against the oracle.
