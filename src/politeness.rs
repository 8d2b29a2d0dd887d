//! Per-host politeness: a governor limiter on the freshet clock, one request in flight, back-off.
