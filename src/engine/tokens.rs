//! Token counts of what stayed inside the sandbox and what came back out, with OpenAI's
//! o200k tokenizer (tiktoken): an approximation of the model's own tokenizer.
//!
//! BPE costs time quadratic in the length of one piece of text (`'x' * 80_000` took seconds),
//! and the text is the script's to choose. So text is cut into pieces of at most
//! [`MAX_PIECE_BYTES`] before counting, and only the first [`EXACT_BUDGET_BYTES`] of an
//! execution's text are counted; the rest is estimated at the rate measured on what was
//! counted, and the figures say so.

use std::sync::OnceLock;

/// The tokenizer's name, reported beside the figures.
pub const TOKENIZER: &str = "o200k_base (tiktoken), an approximation of the model's tokenizer";
/// Longest piece handed to the tokenizer at once (cut at whitespace where there is some).
pub(crate) const MAX_PIECE_BYTES: usize = 1_024;
/// Text counted exactly per execution; the rest is estimated.
pub(crate) const EXACT_BUDGET_BYTES: usize = 512 << 10;
/// Bytes per token assumed when nothing could be counted to measure the rate.
const FALLBACK_BYTES_PER_TOKEN: f64 = 4.0;

fn encoder() -> Option<&'static tiktoken_rs::CoreBPE> {
    static ENCODER: OnceLock<Option<tiktoken_rs::CoreBPE>> = OnceLock::new();
    ENCODER.get_or_init(|| tiktoken_rs::o200k_base().ok()).as_ref()
}

/// A token count, and whether part of it was estimated rather than counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenCount {
    pub tokens: u64,
    pub estimated: bool,
}

/// Counts tokens across texts, exactly up to a budget of bytes and by estimate after it.
#[derive(Debug)]
pub struct Counter {
    budget: usize,
    counted_bytes: u64,
    counted_tokens: u64,
    uncounted_bytes: u64,
}

impl Default for Counter {
    fn default() -> Self {
        Self::with_budget(EXACT_BUDGET_BYTES)
    }
}

impl Counter {
    pub fn with_budget(budget: usize) -> Self {
        Self { budget, counted_bytes: 0, counted_tokens: 0, uncounted_bytes: 0 }
    }

    pub fn add(&mut self, text: &str) {
        let Some(bpe) = encoder() else {
            self.uncounted_bytes += text.len() as u64;
            return;
        };
        let exact = &text[..text.floor_char_boundary(self.budget.min(text.len()))];
        self.budget -= exact.len();
        for piece in pieces(exact) {
            self.counted_tokens += bpe.encode_ordinary(piece).len() as u64;
        }
        self.counted_bytes += exact.len() as u64;
        self.uncounted_bytes += (text.len() - exact.len()) as u64;
    }

    pub fn total(&self) -> TokenCount {
        if self.uncounted_bytes == 0 {
            return TokenCount { tokens: self.counted_tokens, estimated: false };
        }
        let bytes_per_token = if self.counted_tokens > 0 && self.counted_bytes > 0 {
            self.counted_bytes as f64 / self.counted_tokens as f64
        } else {
            FALLBACK_BYTES_PER_TOKEN
        };
        let estimate = (self.uncounted_bytes as f64 / bytes_per_token).ceil() as u64;
        TokenCount { tokens: self.counted_tokens + estimate, estimated: true }
    }
}

/// What of an execution's texts will be counted (copies of their first
/// [`EXACT_BUDGET_BYTES`]) and how many bytes will be estimated: taken at once, so that
/// counting later keeps no large text alive.
#[derive(Debug, Default)]
pub(crate) struct Sample {
    pieces: Vec<String>,
    uncounted: u64,
}

impl Sample {
    pub(crate) fn of<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let mut sample = Sample::default();
        let mut budget = EXACT_BUDGET_BYTES;
        for text in texts {
            let cut = text.floor_char_boundary(budget.min(text.len()));
            budget -= cut;
            if cut > 0 {
                sample.pieces.push(text[..cut].to_owned());
            }
            sample.uncounted += (text.len() - cut) as u64;
        }
        sample
    }

    /// An estimate of everything, counting nothing (for when counting must be skipped).
    pub(crate) fn estimate(&self) -> TokenCount {
        let mut counter = Counter::with_budget(0);
        counter.uncounted_bytes = self.uncounted + self.pieces.iter().map(|p| p.len() as u64).sum::<u64>();
        counter.total()
    }

    /// Counts the pieces and estimates the rest (the blocking part: call it off the runtime).
    pub(crate) fn count(&self) -> TokenCount {
        let mut counter = Counter::with_budget(usize::MAX);
        self.pieces.iter().for_each(|piece| counter.add(piece));
        counter.uncounted_bytes += self.uncounted;
        counter.total()
    }
}

/// Tokens in `text`, within the default budget.
#[cfg(test)]
fn count(text: &str) -> TokenCount {
    let mut counter = Counter::default();
    counter.add(text);
    counter.total()
}

/// `text` cut into pieces of at most [`MAX_PIECE_BYTES`], each ending after whitespace where
/// the window has any (so words are rarely split), else at a character boundary.
fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if rest.len() <= MAX_PIECE_BYTES {
            return Some(std::mem::take(&mut rest));
        }
        let window = &rest[..rest.floor_char_boundary(MAX_PIECE_BYTES)];
        let cut = match window.rfind(char::is_whitespace) {
            Some(at) if at > 0 => at + window[at..].chars().next().map_or(1, char::len_utf8),
            _ => window.len().max(rest.ceil_char_boundary(1)),
        };
        let (piece, after) = rest.split_at(cut);
        rest = after;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_tokens_of_text() {
        assert_eq!(count(""), TokenCount { tokens: 0, estimated: false });
        let short = count("hello world").tokens;
        assert!((1..=3).contains(&short), "{short}");
        let json = count(&serde_json::json!({"id": "E1", "amount": 12.5}).to_string().repeat(100));
        assert!(json.tokens > 500 && !json.estimated, "{json:?}");
    }

    #[test]
    fn a_sample_copies_only_the_budget_and_estimates_the_rest() {
        let long = "word ".repeat(300_000);
        let sample = Sample::of([long.as_str(), "short"]);
        let copied: usize = sample.pieces.iter().map(String::len).sum();
        assert!(copied <= EXACT_BUDGET_BYTES, "{copied}");
        let total = sample.count();
        assert!(total.estimated && total.tokens.abs_diff(count(&long).tokens) * 20 < total.tokens, "{total:?}");
    }

    #[test]
    fn pieces_cover_the_text_and_stay_short() {
        let text = format!("{} {}", "é".repeat(2000), "word ".repeat(500));
        let cut: Vec<&str> = pieces(&text).collect();
        assert_eq!(cut.concat(), text);
        assert!(cut.iter().all(|p| p.len() <= MAX_PIECE_BYTES));
    }

    /// Item 5 of the security review: `print('x' * 80_000)` cost seconds of host CPU, and a
    /// megabyte about 18 minutes. Now the cost is linear and bounded, and past the budget the
    /// figure is an estimate that says so.
    #[test]
    fn item05_token_counting_is_bounded_and_says_when_it_estimates() {
        let started = std::time::Instant::now();
        let long = count(&"x".repeat(80_000));
        assert!(!long.estimated);
        let huge = count(&"x".repeat(64 << 20));
        assert!(huge.estimated && huge.tokens > 0, "{huge:?}");
        let elapsed = started.elapsed();
        assert!(elapsed < std::time::Duration::from_secs(5), "counting took {elapsed:?}");
        // The estimate extrapolates the rate measured on the counted part.
        let mut counter = Counter::with_budget(1_000);
        counter.add(&"hello world ".repeat(1000));
        let total = counter.total();
        let exact = count(&"hello world ".repeat(1000));
        assert!(total.estimated && total.tokens.abs_diff(exact.tokens) * 10 < exact.tokens, "{total:?} vs {exact:?}");
    }
}
