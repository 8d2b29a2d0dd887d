//! [`FingerprintSet`]: a set of 64-bit fingerprints, held inline while it has one. The engine
//! keeps one per distinct content (the URLs that serve it) and per near group (its contents).
//! Nearly all of them hold one fingerprint, where a `BTreeSet` takes a node of eleven slots on
//! the heap; a few hold many (an app shell or a login wall served at a million URLs), where a
//! sorted list would shift its tail at every insertion, so those stay a `BTreeSet`.

use std::collections::BTreeSet;

/// A set of fingerprints, read in ascending order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FingerprintSet(Held);

#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum Held {
    #[default]
    Empty,
    One(u64),
    /// Two or more.
    Many(BTreeSet<u64>),
}

impl FingerprintSet {
    /// Adds `fp`; whether it was new.
    pub fn insert(&mut self, fp: u64) -> bool {
        match &mut self.0 {
            Held::Empty => self.0 = Held::One(fp),
            Held::One(one) if *one == fp => return false,
            Held::One(one) => self.0 = Held::Many(BTreeSet::from([*one, fp])),
            Held::Many(many) => return many.insert(fp),
        }
        true
    }

    /// Removes `fp`; whether it was there.
    pub fn remove(&mut self, fp: u64) -> bool {
        match &mut self.0 {
            Held::One(one) if *one == fp => self.0 = Held::Empty,
            Held::Many(many) => {
                if !many.remove(&fp) {
                    return false;
                }
                if many.len() == 1 {
                    let last = *many.first().expect("one left");
                    self.0 = Held::One(last);
                }
            }
            _ => return false,
        }
        true
    }

    /// How many fingerprints it holds.
    pub fn len(&self) -> usize {
        match &self.0 {
            Held::Empty => 0,
            Held::One(_) => 1,
            Held::Many(many) => many.len(),
        }
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The fingerprints, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        let (one, many) = match &self.0 {
            Held::Empty => (None, None),
            Held::One(one) => (Some(*one), None),
            Held::Many(many) => (None, Some(many.iter().copied())),
        };
        one.into_iter().chain(many.into_iter().flatten())
    }
}

impl FromIterator<u64> for FingerprintSet {
    fn from_iter<I: IntoIterator<Item = u64>>(iter: I) -> Self {
        let mut set = FingerprintSet::default();
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
            // One or none are never held in a tree.
            assert_eq!(matches!(set.0, Held::Many(_)), truth.len() > 1);
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
