//! Optional instants and rates in the width of the value itself, for what the scheduler keeps
//! per URL (a scheduler of ten million URLs holds ten million of each): an `Option<i64>` or
//! `Option<f64>` takes 16 bytes, these take 8.

use std::fmt;

/// A clock instant (ms) that may be unset: `i64::MIN` stands for none.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct MaybeMs(i64);

impl MaybeMs {
    /// Unset.
    pub const NONE: Self = Self(i64::MIN);

    /// The instant, if set.
    pub fn get(self) -> Option<i64> {
        (self.0 != i64::MIN).then_some(self.0)
    }
}

impl Default for MaybeMs {
    fn default() -> Self {
        Self::NONE
    }
}

impl From<Option<i64>> for MaybeMs {
    /// `Some(i64::MIN)`, the one instant that reads as none, is kept a millisecond later.
    fn from(ms: Option<i64>) -> Self {
        ms.map_or(Self::NONE, |ms| Self(ms.max(i64::MIN + 1)))
    }
}

impl fmt::Debug for MaybeMs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

/// A span of two clock instants (ms) that may be unset: a start of `i64::MIN` stands for none.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct MaybeSpan(i64, i64);

impl MaybeSpan {
    /// Unset.
    pub const NONE: Self = Self(i64::MIN, 0);

    /// The span, if set.
    pub fn get(self) -> Option<(i64, i64)> {
        (self.0 != i64::MIN).then_some((self.0, self.1))
    }
}

impl Default for MaybeSpan {
    fn default() -> Self {
        Self::NONE
    }
}

impl From<Option<(i64, i64)>> for MaybeSpan {
    fn from(span: Option<(i64, i64)>) -> Self {
        span.map_or(Self::NONE, |(from, to)| Self(from.max(i64::MIN + 1), to))
    }
}

impl fmt::Debug for MaybeSpan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

/// A rate (per day) that may be unset: NaN stands for none.
#[derive(Clone, Copy)]
pub struct MaybeRate(f64);

impl MaybeRate {
    /// Unset.
    pub const NONE: Self = Self(f64::NAN);

    /// The rate, if set.
    pub fn get(self) -> Option<f64> {
        (!self.0.is_nan()).then_some(self.0)
    }
}

impl From<Option<f64>> for MaybeRate {
    /// `Some(NaN)` reads as none: no rate is NaN.
    fn from(rate: Option<f64>) -> Self {
        rate.map_or(Self::NONE, Self)
    }
}

impl fmt::Debug for MaybeRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_holds_what_its_option_holds_in_eight_bytes() {
        for ms in [
            None,
            Some(0),
            Some(-5),
            Some(i64::MAX),
            Some(1_767_225_600_000),
        ] {
            assert_eq!(MaybeMs::from(ms).get(), ms);
        }
        assert_eq!(MaybeMs::from(Some(i64::MIN)).get(), Some(i64::MIN + 1));
        for span in [None, Some((0, 0)), Some((-3, 7)), Some((5, i64::MIN))] {
            assert_eq!(MaybeSpan::from(span).get(), span);
        }
        for rate in [None, Some(0.0), Some(1.5), Some(f64::INFINITY)] {
            assert_eq!(MaybeRate::from(rate).get(), rate);
        }
        assert_eq!(MaybeRate::from(Some(f64::NAN)).get(), None);
        assert_eq!(std::mem::size_of::<MaybeMs>(), 8);
        assert_eq!(std::mem::size_of::<MaybeRate>(), 8);
        assert_eq!(std::mem::size_of::<MaybeSpan>(), 16);
    }
}
