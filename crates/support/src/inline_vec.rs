//! [`InlineVec`]: a vector of small `Copy` items whose first `N` live on the stack, for per-request
//! scratch lists that are almost always short (path captures, parameter occurrences): no heap
//! allocation unless more than `N` items are pushed.

/// Up to `N` items inline; past that, all of them move to a heap vector.
#[derive(Clone, Debug)]
pub struct InlineVec<T: Copy + Default, const N: usize> {
    inline: [T; N],
    len: usize,
    /// Every item once the inline array overflowed (then `len` is unused).
    spill: Vec<T>,
}

impl<T: Copy + Default, const N: usize> Default for InlineVec<T, N> {
    fn default() -> Self {
        InlineVec {
            inline: [T::default(); N],
            len: 0,
            spill: Vec::new(),
        }
    }
}

impl<T: Copy + Default, const N: usize> InlineVec<T, N> {
    pub fn new() -> Self {
        Self::default()
    }

    fn spilled(&self) -> bool {
        !self.spill.is_empty()
    }

    pub fn len(&self) -> usize {
        if self.spilled() {
            self.spill.len()
        } else {
            self.len
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn push(&mut self, item: T) {
        if self.spilled() {
            self.spill.push(item);
        } else if self.len < N {
            self.inline[self.len] = item;
            self.len += 1;
        } else {
            self.spill.reserve(N * 2);
            self.spill.extend_from_slice(&self.inline[..self.len]);
            self.spill.push(item);
        }
    }

    pub fn pop(&mut self) -> Option<T> {
        if self.spilled() {
            let item = self.spill.pop();
            if self.spill.is_empty() {
                self.len = 0;
            }
            item
        } else if self.len > 0 {
            self.len -= 1;
            Some(self.inline[self.len])
        } else {
            None
        }
    }

    /// Keeps the first `len` items.
    pub fn truncate(&mut self, len: usize) {
        if self.spilled() {
            if len <= N {
                self.inline[..len].copy_from_slice(&self.spill[..len.min(self.spill.len())]);
                self.len = len.min(self.spill.len());
                self.spill.clear();
            } else {
                self.spill.truncate(len);
            }
        } else {
            self.len = self.len.min(len);
        }
    }

    pub fn clear(&mut self) {
        self.truncate(0);
    }

    pub fn as_slice(&self) -> &[T] {
        if self.spilled() {
            &self.spill
        } else {
            &self.inline[..self.len]
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        if self.spilled() {
            &mut self.spill
        } else {
            &mut self.inline[..self.len]
        }
    }
}

impl<T: Copy + Default, const N: usize> std::ops::Deref for InlineVec<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Copy + Default, const N: usize> std::ops::DerefMut for InlineVec<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

#[cfg(test)]
mod tests {
    use super::InlineVec;

    #[test]
    fn behaves_like_a_vec_across_the_spill() {
        let mut v: InlineVec<u32, 2> = InlineVec::new();
        let mut w: Vec<u32> = Vec::new();
        for i in 0..6 {
            v.push(i);
            w.push(i);
            assert_eq!(v.as_slice(), &w[..]);
        }
        v.truncate(4);
        w.truncate(4);
        assert_eq!(&*v, &w[..]);
        v[3] = 7;
        w[3] = 7;
        assert_eq!(&*v, &w[..]);
        v.truncate(1);
        w.truncate(1);
        assert_eq!(&*v, &w[..]);
        v.push(9);
        w.push(9);
        assert_eq!(&*v, &w[..]);
        assert_eq!(v.pop(), w.pop());
        assert_eq!(v.pop(), w.pop());
        assert_eq!(v.pop(), None);
        assert!(v.is_empty());
        v.push(1);
        v.push(2);
        v.push(3);
        v.clear();
        assert!(v.is_empty());
        v.push(4);
        assert_eq!(&*v, &[4]);
    }
}
