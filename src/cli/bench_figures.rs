//! What every part of `freshet bench` returns (its own module, so the parts and the command that
//! prints them do not import each other).

/// One part's figures at one size, in print order: the key names the unit (`seconds`, `_ms`,
/// `_bytes`, `mb_per_second`) or the count (`urls`, `hosts`).
pub type Figures = Vec<(&'static str, f64)>;
