//! [`FingerprintSet`]: a small set of 64-bit fingerprints, held inline while it has one. The
//! engine keeps one per distinct content (the URLs that serve it) and per near group (its
//! contents), and nearly all of them hold one fingerprint: a `BTreeSet` of one took a node of
//! eleven slots on the heap, a `Vec` of one a heap block of its own.

/// A set of fingerprints, in ascending order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum FingerprintSet {
    /// No fingerprint.
    #[default]
    Empty,
    /// One fingerprint, inline.
    One(u64),
    /// Two or more, ascending.
    Many(Vec<u64>),
}

impl FingerprintSet {
    /// Adds `fp`; whether it was new.
    pub fn insert(&mut self, fp: u64) -> bool {
        match self {
            FingerprintSet::Empty => *self = FingerprintSet::One(fp),
            FingerprintSet::One(one) if *one == fp => return false,
            FingerprintSet::One(one) => {
                *self = FingerprintSet::Many(vec![(*one).min(fp), (*one).max(fp)]);
            }
            FingerprintSet::Many(many) => match many.binary_search(&fp) {
                Ok(_) => return false,
                Err(at) => many.insert(at, fp),
            },
        }
        true
    }

    /// Removes `fp`; whether it was there.
    pub fn remove(&mut self, fp: u64) -> bool {
        match self {
            FingerprintSet::One(one) if *one == fp => *self = FingerprintSet::Empty,
            FingerprintSet::Many(many) => {
                let Ok(at) = many.binary_search(&fp) else {
                    return false;
                };
                many.remove(at);
                if let [last] = many[..] {
                    *self = FingerprintSet::One(last);
                }
            }
            _ => return false,
        }
        true
    }

    /// How many fingerprints it holds.
    pub fn len(&self) -> usize {
        match self {
            FingerprintSet::Empty => 0,
            FingerprintSet::One(_) => 1,
            FingerprintSet::Many(many) => many.len(),
        }
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The fingerprints, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        let slice: &[u64] = match self {
            FingerprintSet::Empty => &[],
            FingerprintSet::One(one) => std::slice::from_ref(one),
            FingerprintSet::Many(many) => many,
        };
        slice.iter().copied()
    }
}

impl FromIterator<u64> for FingerprintSet {
    fn from_iter<I: IntoIterator<Item = u64>>(iter: I) -> Self {
        let mut set = FingerprintSet::Empty;
        for fp in iter {
            set.insert(fp);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// Random inserts and removals over a few values: the set always reads as a `BTreeSet`
    /// given the same moves.
    #[test]
    fn reads_as_a_btreeset_whatever_came_and_went() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut set, mut truth) = (FingerprintSet::default(), BTreeSet::new());
        for _ in 0..5_000 {
            let fp = next() % 6;
            if next() % 2 == 0 {
                assert_eq!(set.insert(fp), truth.insert(fp));
            } else {
                assert_eq!(set.remove(fp), truth.remove(&fp));
            }
            assert_eq!(
                set.iter().collect::<Vec<_>>(),
                truth.iter().copied().collect::<Vec<_>>()
            );
            assert_eq!(set.len(), truth.len());
            assert_eq!(set.is_empty(), truth.is_empty());
            // One or none are never held in a list.
            assert_eq!(matches!(set, FingerprintSet::Many(_)), truth.len() > 1);
        }
        assert_eq!(
            [3, 1, 3, 2]
                .into_iter()
                .collect::<FingerprintSet>()
                .iter()
                .collect::<Vec<_>>(),
            [1, 2, 3]
        );
    }
}
