//! Revisit planning: rates per page that minimise weighted time-averaged age under a global budget and per-host limits (pure).
