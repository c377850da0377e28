//! Token counts of what stayed inside the sandbox and what came back out, with OpenAI's
//! o200k tokenizer (tiktoken): an approximation of the model's own tokenizer.

use std::sync::OnceLock;

/// The tokenizer's name, reported beside the figures.
pub const TOKENIZER: &str = "o200k_base (tiktoken), an approximation of the model's tokenizer";

fn encoder() -> Option<&'static tiktoken_rs::CoreBPE> {
    static ENCODER: OnceLock<Option<tiktoken_rs::CoreBPE>> = OnceLock::new();
    ENCODER.get_or_init(|| tiktoken_rs::o200k_base().ok()).as_ref()
}

/// Tokens in `text` (0 if the tokenizer could not be loaded).
pub fn count(text: &str) -> u64 {
    encoder().map_or(0, |bpe| bpe.encode_ordinary(text).len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_tokens_of_text() {
        assert_eq!(count(""), 0);
        let short = count("hello world");
        assert!((1..=3).contains(&short), "{short}");
        let json = count(&serde_json::json!({"id": "E1", "amount": 12.5}).to_string().repeat(100));
        assert!(json > 500, "{json}");
    }
}
