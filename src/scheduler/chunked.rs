//! A list that grows by chunks of 65,536 items instead of doubling: for what the scheduler
//! holds per URL. A `Vec` that doubles copies itself into a new allocation and, for the time of
//! the copy, is held twice: at 8.4M URLs the states alone were 1.5 GB held twice, the resident
//! peak of a discovery pass of 10M URLs (`freshet bench --only run --pages 10000000`). Here a
//! growing list copies at most one chunk.

use std::ops::{Index, IndexMut};

/// Items per chunk (a power of two: an index splits by shift and mask).
const CHUNK_BITS: u32 = 16;
const CHUNK: usize = 1 << CHUNK_BITS;

/// A list of `T` by index, in chunks of [`CHUNK`] items.
#[derive(Debug, Clone)]
pub struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Self {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Chunked<T> {
    /// Adds an item at index `len()`.
    pub fn push(&mut self, item: T) {
        // Every chunk before the one at `len` is full; that one may be reserved already.
        let at = self.len >> CHUNK_BITS;
        if at == self.chunks.len() {
            // A full chunk is never grown: the next starts (and doubles up to its size).
            self.chunks.push(Vec::new());
        }
        let chunk = &mut self.chunks[at];
        if chunk.len() == chunk.capacity() {
            // Doubling, but never past a chunk's size (a chunk reserved short stops there too).
            let grown = (2 * chunk.capacity()).clamp(4, CHUNK);
            chunk.reserve_exact(grown - chunk.len());
        }
        chunk.push(item);
        self.len += 1;
    }

    /// How many items.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The items in index order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.chunks.iter().flatten()
    }

    /// Makes room for `additional` more items, exactly: the chunks they fill are made at full
    /// size at once (a start that knows how many it will add grows each chunk once).
    pub fn reserve_exact(&mut self, additional: usize) {
        let mut room = additional;
        if let Some(last) = self.chunks.last_mut() {
            let fits = (CHUNK - last.len()).min(room);
            last.reserve_exact(fits);
            room -= fits;
        }
        self.chunks.reserve_exact(room.div_ceil(CHUNK));
        while room > 0 {
            let size = room.min(CHUNK);
            self.chunks.push(Vec::with_capacity(size));
            room -= size;
        }
    }
}

impl<T> Index<usize> for Chunked<T> {
    type Output = T;

    fn index(&self, index: usize) -> &T {
        assert!(index < self.len, "index {index} of {} items", self.len);
        &self.chunks[index >> CHUNK_BITS][index & (CHUNK - 1)]
    }
}

impl<T> IndexMut<usize> for Chunked<T> {
    fn index_mut(&mut self, index: usize) -> &mut T {
        assert!(index < self.len, "index {index} of {} items", self.len);
        &mut self.chunks[index >> CHUNK_BITS][index & (CHUNK - 1)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_keep_their_index_across_chunks_and_reservations() {
        let mut list = Chunked::default();
        let reserved = 2 * CHUNK + 17;
        for i in 0..CHUNK + 3 {
            list.push(i);
        }
        // Room reserved part-way through a chunk: the chunks after it are made full size.
        list.reserve_exact(reserved - list.len());
        let chunks_reserved = list.chunks.len();
        for i in CHUNK + 3..reserved {
            list.push(i);
        }
        assert_eq!(
            list.chunks.len(),
            chunks_reserved,
            "pushes fill the reserved chunks"
        );
        // Past the room reserved, the last chunk (made for 17) grows, but not past a chunk.
        let n = 3 * CHUNK;
        for i in list.len()..n {
            list.push(i);
        }
        assert!(list.chunks.iter().all(|c| c.capacity() <= CHUNK));
        assert_eq!(list.len(), n);
        assert!((0..n).all(|i| list[i] == i));
        assert!(list.iter().copied().eq(0..n));
        list[CHUNK + 1] = 7;
        assert_eq!(list[CHUNK + 1], 7);
    }

    #[test]
    #[should_panic(expected = "index 3 of 3 items")]
    fn an_index_past_the_end_panics_as_a_vec_does() {
        let mut list = Chunked::default();
        (0..3).for_each(|i| list.push(i));
        let _ = list[3];
    }
}
