//! Memory pages as sparse XOR differences from the image: what a checkpoint keeps and a
//! snapshot carries.
//!
//! An execution changes a few hundred pages, and most of a changed page is still the image's
//! (a reference count bumped, a free-list pointer moved). Keeping, for each changed page, only
//! the runs of 8-byte words that differ, XORed with the image's words, makes a checkpoint a
//! fifth of its pages' size with no compressor: saving is one pass over the written pages, and
//! restoring XORs the runs into a fresh instance, which starts as the image.
//!
//! Layout, little-endian: for each changed page in ascending order, its index (u32) and its
//! number of runs (u16); then for each run, its first word (u16), its length in words (u16),
//! and that many words. Runs are ascending, disjoint and inside the page.

use super::guest_memory::PAGE_BYTES;

const WORD_BYTES: usize = 8;
const WORDS_PER_PAGE: usize = PAGE_BYTES / WORD_BYTES;
const PAGE_HEADER_BYTES: usize = 4 + 2;
const RUN_HEADER_BYTES: usize = 2 + 2;

/// Why an encoded diff was refused (it is sealed, so only a bug or another format gets here).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("page diff at byte {at}: {why}")]
pub(crate) struct PageDiffError {
    at: usize,
    why: &'static str,
}

/// Changed pages of a memory, as XOR runs against the image it started from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PageDiff {
    bytes: Vec<u8>,
    /// One past the highest page index present: the memory the diff needs, in pages.
    end_page: u64,
}

impl PageDiff {
    /// Adds page `index` if `page` differs from `base`, the image's page (shorter or empty
    /// where the image's memory ends: zeros beyond). Pages must come in ascending order.
    pub(crate) fn push_page(&mut self, index: u32, page: &[u8; PAGE_BYTES], base: &[u8]) {
        debug_assert!(u64::from(index) >= self.end_page, "pages in ascending order");
        let padded;
        let base: &[u8; PAGE_BYTES] = match base.try_into() {
            Ok(whole) if page == whole => return,
            Ok(whole) => whole,
            Err(_) => {
                let mut zeros = [0u8; PAGE_BYTES];
                zeros[..base.len().min(PAGE_BYTES)].copy_from_slice(&base[..base.len().min(PAGE_BYTES)]);
                padded = zeros;
                &padded
            }
        };
        let mut xor = [0u64; WORDS_PER_PAGE];
        for ((out, now), was) in xor.iter_mut().zip(page.chunks_exact(WORD_BYTES)).zip(base.chunks_exact(WORD_BYTES)) {
            *out = u64::from_le_bytes(now.try_into().expect("a word"))
                ^ u64::from_le_bytes(was.try_into().expect("a word"));
        }
        let page_start = self.bytes.len();
        self.bytes.extend_from_slice(&index.to_le_bytes());
        self.bytes.extend_from_slice(&0u16.to_le_bytes());
        let mut runs = 0u16;
        let mut at = 0;
        while at < WORDS_PER_PAGE {
            if xor[at] == 0 {
                at += 1;
                continue;
            }
            let first = at;
            while at < WORDS_PER_PAGE && xor[at] != 0 {
                at += 1;
            }
            self.bytes.reserve(RUN_HEADER_BYTES + (at - first) * WORD_BYTES);
            self.bytes.extend_from_slice(&(first as u16).to_le_bytes());
            self.bytes.extend_from_slice(&((at - first) as u16).to_le_bytes());
            for word in &xor[first..at] {
                self.bytes.extend_from_slice(&word.to_le_bytes());
            }
            runs += 1;
        }
        if runs == 0 {
            // Equal to the image after all (a page past the image's end, still all zeros).
            self.bytes.truncate(page_start);
            return;
        }
        self.bytes[page_start + 4..page_start + PAGE_HEADER_BYTES].copy_from_slice(&runs.to_le_bytes());
        self.end_page = u64::from(index) + 1;
    }

    /// The encoded diff (the layout in the module doc).
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Bytes of memory the diff writes into: a memory at least this large can take it.
    pub(crate) fn memory_needed(&self) -> u64 {
        self.end_page * PAGE_BYTES as u64
    }

    /// Reads an encoded diff, checking every index and length.
    pub(crate) fn from_bytes(bytes: Vec<u8>) -> Result<Self, PageDiffError> {
        let mut reader = Reader { bytes: &bytes, at: 0 };
        let mut end_page = 0u64;
        while reader.at < bytes.len() {
            let index = u64::from(reader.u32()?);
            if index < end_page {
                return Err(reader.error("pages out of order"));
            }
            let runs = reader.u16()?;
            if runs == 0 {
                return Err(reader.error("a page without runs"));
            }
            let mut next_word = 0;
            for _ in 0..runs {
                let (first, words) = (usize::from(reader.u16()?), usize::from(reader.u16()?));
                if first < next_word || words == 0 || first + words > WORDS_PER_PAGE {
                    return Err(reader.error("a run outside its page or out of order"));
                }
                reader.skip(words * WORD_BYTES)?;
                next_word = first + words;
            }
            end_page = index + 1;
        }
        Ok(Self { bytes, end_page })
    }

    /// XORs the runs into `memory`, which holds the image the diff was taken against.
    pub(crate) fn apply(&self, memory: &mut [u8]) -> Result<(), PageDiffError> {
        if (memory.len() as u64) < self.memory_needed() {
            return Err(PageDiffError { at: 0, why: "the memory is smaller than the pages it names" });
        }
        let mut reader = Reader { bytes: &self.bytes, at: 0 };
        while reader.at < self.bytes.len() {
            let page_start = reader.u32()? as usize * PAGE_BYTES;
            for _ in 0..reader.u16()? {
                let start = page_start + usize::from(reader.u16()?) * WORD_BYTES;
                let len = usize::from(reader.u16()?) * WORD_BYTES;
                let runs = reader.take(len)?;
                let target =
                    memory.get_mut(start..start + len).ok_or(PageDiffError { at: reader.at, why: "out of memory" })?;
                for (byte, xor) in target.iter_mut().zip(runs) {
                    *byte ^= xor;
                }
            }
        }
        Ok(())
    }
}

/// A cursor over an encoded diff whose reads fail, never panic, past its end.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn error(&self, why: &'static str) -> PageDiffError {
        PageDiffError { at: self.at, why }
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], PageDiffError> {
        let taken = self.bytes.get(self.at..self.at + len).ok_or(self.error("cut short"))?;
        self.at += len;
        Ok(taken)
    }

    fn skip(&mut self, len: usize) -> Result<(), PageDiffError> {
        self.take(len).map(|_| ())
    }

    fn u16(&mut self) -> Result<u16, PageDiffError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }

    fn u32(&mut self) -> Result<u32, PageDiffError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn diff_of(memory: &[u8], image: &[u8]) -> PageDiff {
        let mut diff = PageDiff::default();
        for (index, page) in memory.chunks_exact(PAGE_BYTES).enumerate() {
            let base = image.get(index * PAGE_BYTES..).map_or(&[][..], |rest| &rest[..rest.len().min(PAGE_BYTES)]);
            diff.push_page(index as u32, page.try_into().unwrap(), base);
        }
        diff
    }

    proptest! {
        /// Whatever an execution wrote, the image plus the diff is the memory again, and the
        /// encoding reads back as itself.
        #[test]
        fn image_plus_diff_is_the_memory(
            image_pages in 1usize..4,
            extra_pages in 0usize..3,
            writes in proptest::collection::vec((0usize..6 * PAGE_BYTES, any::<u8>()), 0..200),
        ) {
            let image: Vec<u8> = (0..image_pages * PAGE_BYTES).map(|i| (i * 7 % 251) as u8).collect();
            let mut memory = image.clone();
            memory.resize((image_pages + extra_pages) * PAGE_BYTES, 0);
            for (at, value) in writes {
                if let Some(byte) = memory.get_mut(at) {
                    *byte = value;
                }
            }
            let diff = diff_of(&memory, &image);
            let read_back = PageDiff::from_bytes(diff.as_bytes().to_vec()).unwrap();
            prop_assert_eq!(&read_back, &diff);
            let mut restored = image.clone();
            restored.resize(memory.len(), 0);
            read_back.apply(&mut restored).unwrap();
            prop_assert!(restored == memory);
        }

        /// Any bytes are refused or read without a panic, and applying them stays in bounds.
        #[test]
        fn any_bytes_are_checked(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(diff) = PageDiff::from_bytes(bytes) {
                let mut memory = vec![0u8; PAGE_BYTES];
                let _ = diff.apply(&mut memory);
            }
        }
    }

    #[test]
    fn only_the_changed_words_are_kept() {
        let image = vec![1u8; 2 * PAGE_BYTES];
        let mut memory = image.clone();
        memory[PAGE_BYTES + 17] = 9; // word 2 of page 1
        let diff = diff_of(&memory, &image);
        assert_eq!(diff.memory_needed(), 2 * PAGE_BYTES as u64);
        assert_eq!(diff.as_bytes().len(), PAGE_HEADER_BYTES + RUN_HEADER_BYTES + WORD_BYTES);
        assert_eq!(diff_of(&image, &image), PageDiff::default(), "an unchanged memory has no pages");

        let mut small = vec![0u8; PAGE_BYTES];
        assert!(diff.apply(&mut small).is_err(), "a memory too small for the diff is refused");
        let mut unordered = diff.as_bytes().to_vec();
        unordered.extend_from_slice(diff.as_bytes());
        assert!(PageDiff::from_bytes(unordered).is_err(), "a page named twice is refused");
    }
}
