//! An optional static embedding model for tool search: a text's vector is the mean of its
//! tokens' vectors, so a request finds a tool that says the same thing in other words.
//!
//! The model is two local files the operator names (`--search-model DIR`; nothing is ever
//! downloaded): `tokenizer.json`, a Hugging Face BPE tokenizer (SentencePiece style, with byte
//! fallback, as Llama's), and `embeddings.safetensors`, one `[vocabulary, dimensions]` tensor
//! in F16 or F32. WordLlama's `l2_supercat_256` (MIT, in the `wordllama` wheel on PyPI) is
//! one; `benches/tool_search/fetch-catalogs.sh` puts it in `target/search-model/`.

use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

/// Largest file of either kind taken (a 32k x 256 F16 table is 16 MiB).
const MAX_MODEL_FILE_BYTES: u64 = 512 << 20;
/// Largest safetensors header taken.
const MAX_HEADER_BYTES: u64 = 1 << 20;
/// Widest vectors taken.
const MAX_DIMENSIONS: usize = 4096;
/// Characters of a text that are embedded (a tool's name and summary, a query: far less).
const MAX_EMBEDDED_CHARS: usize = 1_000;
/// SentencePiece's word mark: a space, and the start of the text.
const WORD_MARK: char = '\u{2581}';

/// Why a model could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("the model's tokenizer and embeddings do not fit: {0}")]
    Mismatch(String),
}

/// A loaded model: the tokenizer's vocabulary and merges, and one vector per token.
#[derive(Debug)]
pub struct Embedder {
    vocabulary: HashMap<String, u32>,
    /// `(left, right)` to `(rank, merged)`: lower ranks merge first.
    merges: HashMap<(u32, u32), (u32, u32)>,
    /// The `<0xNN>` token of each byte, for characters the vocabulary lacks.
    byte_tokens: Vec<Option<u32>>,
    unknown: Option<u32>,
    /// The token every text starts with (`<s>`), where the tokenizer adds one.
    start: Option<u32>,
    vectors: Vec<f32>,
    dimensions: usize,
}

#[derive(Deserialize)]
struct TokenizerFile {
    model: BpeModel,
    #[serde(default)]
    post_processor: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct BpeModel {
    #[serde(rename = "type")]
    kind: String,
    vocab: HashMap<String, u32>,
    merges: Vec<Merge>,
    #[serde(default)]
    unk_token: Option<String>,
}

/// A merge as `"a b"` (older files) or `["a", "b"]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Merge {
    Joined(String),
    Pair(String, String),
}

#[derive(Deserialize)]
struct TensorInfo {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: (usize, usize),
}

fn read_bounded(path: &Path) -> Result<Vec<u8>, ModelError> {
    let error = |message: String| ModelError::File { path: path.display().to_string(), message };
    let length = std::fs::metadata(path).map_err(|e| error(e.to_string()))?.len();
    if length > MAX_MODEL_FILE_BYTES {
        return Err(error(format!("{length} bytes is more than {MAX_MODEL_FILE_BYTES}")));
    }
    std::fs::read(path).map_err(|e| error(e.to_string()))
}

/// An IEEE half to a float.
fn f16_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits >> 15) << 31;
    let exponent = u32::from((bits >> 10) & 0x1f);
    let mantissa = u32::from(bits & 0x3ff);
    let value = match (exponent, mantissa) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: normalise the mantissa.
            let shift = mantissa.leading_zeros() - 21;
            sign | ((127 - 15 + 1 - shift) << 23) | (((mantissa << shift) & 0x3ff) << 13)
        }
        (0x1f, _) => sign | 0x7f80_0000 | (mantissa << 13),
        _ => sign | ((exponent + 127 - 15) << 23) | (mantissa << 13),
    };
    f32::from_bits(value)
}

impl Embedder {
    /// Loads `dir/tokenizer.json` and `dir/embeddings.safetensors`.
    pub fn load(dir: &Path) -> Result<Self, ModelError> {
        let tokenizer_path = dir.join("tokenizer.json");
        let tokenizer: TokenizerFile = serde_json::from_slice(&read_bounded(&tokenizer_path)?)
            .map_err(|e| ModelError::File { path: tokenizer_path.display().to_string(), message: e.to_string() })?;
        let tensor_path = dir.join("embeddings.safetensors");
        let (vectors, rows, dimensions) = read_table(&tensor_path)?;
        Self::new(tokenizer, vectors, rows, dimensions)
    }

    fn new(tokenizer: TokenizerFile, vectors: Vec<f32>, rows: usize, dimensions: usize) -> Result<Self, ModelError> {
        let model = tokenizer.model;
        if model.kind != "BPE" {
            return Err(ModelError::Mismatch(format!("a {} tokenizer; only BPE is supported", model.kind)));
        }
        if let Some((token, id)) = model.vocab.iter().find(|(_, id)| **id as usize >= rows) {
            return Err(ModelError::Mismatch(format!("token {token:?} is {id}, past the {rows} vectors")));
        }
        let mut merges = HashMap::with_capacity(model.merges.len());
        for (rank, merge) in model.merges.iter().enumerate() {
            let (left, right) = match merge {
                Merge::Joined(text) => text.split_once(' ').unwrap_or((text.as_str(), "")),
                Merge::Pair(left, right) => (left.as_str(), right.as_str()),
            };
            let ids = (model.vocab.get(left), model.vocab.get(right), model.vocab.get(&format!("{left}{right}")));
            if let (Some(&l), Some(&r), Some(&merged)) = ids {
                merges.entry((l, r)).or_insert((rank as u32, merged));
            }
        }
        let byte_tokens = (0..=255u8).map(|b| model.vocab.get(&format!("<0x{b:02X}>")).copied()).collect();
        let unknown = model.unk_token.as_ref().and_then(|t| model.vocab.get(t)).copied();
        // Llama's template starts every text with `<s>`; the vectors were trained with it.
        let start = tokenizer
            .post_processor
            .as_ref()
            .and_then(|p| p.pointer("/single/0/SpecialToken/id"))
            .and_then(|id| id.as_str())
            .and_then(|token| model.vocab.get(token))
            .copied();
        Ok(Self { vocabulary: model.vocab, merges, byte_tokens, unknown, start, vectors, dimensions })
    }

    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// The tokens of `text` as the tokenizer makes them: a word mark before the text and for
    /// each space, characters merged pair by pair in merge order, the rest as bytes.
    fn tokens(&self, text: &str) -> Vec<u32> {
        let text: String = text.chars().take(MAX_EMBEDDED_CHARS).collect();
        let normalized = format!("{WORD_MARK}{}", text.replace(' ', &WORD_MARK.to_string()));
        // A character the vocabulary lacks is `None` until the end (it cannot merge).
        let mut symbols: Vec<(Option<u32>, char)> =
            normalized.chars().map(|c| (self.vocabulary.get(c.encode_utf8(&mut [0; 4]) as &str).copied(), c)).collect();
        loop {
            let best = symbols
                .windows(2)
                .enumerate()
                .filter_map(|(at, pair)| match (pair[0].0, pair[1].0) {
                    (Some(l), Some(r)) => self.merges.get(&(l, r)).map(|&(rank, merged)| (rank, at, merged)),
                    _ => None,
                })
                .min();
            let Some((_, at, merged)) = best else { break };
            symbols[at].0 = Some(merged);
            symbols.remove(at + 1);
        }
        let mut tokens: Vec<u32> = self.start.into_iter().collect();
        for (id, c) in symbols {
            match id {
                Some(id) => tokens.push(id),
                None => {
                    for byte in c.encode_utf8(&mut [0; 4]).bytes() {
                        tokens.extend(self.byte_tokens[usize::from(byte)].or(self.unknown));
                    }
                }
            }
        }
        tokens
    }

    /// The text's unit vector (all zeros for a text of no known tokens).
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let mut sum = vec![0f32; self.dimensions];
        let tokens = self.tokens(text);
        for token in &tokens {
            let row = &self.vectors[*token as usize * self.dimensions..][..self.dimensions];
            for (total, value) in sum.iter_mut().zip(row) {
                *total += value;
            }
        }
        let norm = sum.iter().map(|v| v * v).sum::<f32>().sqrt();
        if norm > 0.0 {
            for value in &mut sum {
                *value /= norm;
            }
        }
        sum
    }
}

/// The one 2-D tensor of a safetensors file, as floats: (values, rows, columns).
fn read_table(path: &Path) -> Result<(Vec<f32>, usize, usize), ModelError> {
    let error = |message: String| ModelError::File { path: path.display().to_string(), message };
    let bytes = read_bounded(path)?;
    let header_length = bytes.get(..8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    let header_length = header_length.ok_or_else(|| error("shorter than a safetensors header".into()))?;
    if header_length > MAX_HEADER_BYTES || 8 + header_length as usize > bytes.len() {
        return Err(error(format!("a header of {header_length} bytes does not fit")));
    }
    let data = &bytes[8 + header_length as usize..];
    let header: HashMap<String, serde_json::Value> =
        serde_json::from_slice(&bytes[8..8 + header_length as usize]).map_err(|e| error(e.to_string()))?;
    let mut tensors = header.into_iter().filter(|(name, _)| name != "__metadata__");
    let (name, info) = tensors.next().ok_or_else(|| error("no tensor".into()))?;
    if tensors.next().is_some() {
        return Err(error("more than one tensor".into()));
    }
    let info: TensorInfo = serde_json::from_value(info).map_err(|e| error(format!("{name}: {e}")))?;
    let [rows, columns] = info.shape[..] else {
        return Err(error(format!("{name} has shape {:?}, not [vocabulary, dimensions]", info.shape)));
    };
    if columns == 0 || columns > MAX_DIMENSIONS {
        return Err(error(format!("{columns} dimensions (1 to {MAX_DIMENSIONS} are taken)")));
    }
    let width = match info.dtype.as_str() {
        "F16" => 2,
        "F32" => 4,
        other => return Err(error(format!("{name} is {other}; F16 or F32 are taken"))),
    };
    let (start, end) = info.data_offsets;
    let expected = rows.checked_mul(columns).and_then(|n| n.checked_mul(width));
    if end > data.len() || start > end || Some(end - start) != expected {
        return Err(error(format!("{name}'s data does not match its shape {rows} x {columns}")));
    }
    let raw = &data[start..end];
    let values = match width {
        2 => raw.chunks_exact(2).map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]]))).collect(),
        _ => raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
    };
    Ok((values, rows, columns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_convert_exactly() {
        for (bits, value) in [(0x3c00, 1.0), (0xc000, -2.0), (0x3555, 0.333_251_95), (0x0001, 5.960_464_5e-8), (0, 0.0)]
        {
            assert_eq!(f16_to_f32(bits), value, "{bits:#06x}");
        }
        assert!(f16_to_f32(0x7c00).is_infinite());
    }

    /// A tokenizer of a few tokens: merges apply in rank order, unknown characters fall back
    /// to bytes, and the start token leads.
    #[test]
    fn text_is_tokenized_as_the_tokenizer_does() {
        let tokenizer: TokenizerFile = serde_json::from_value(serde_json::json!({
            "model": {"type": "BPE", "unk_token": "<unk>",
                      "vocab": {"<unk>": 0, "<s>": 1, "<0xC3>": 2, "<0xA9>": 3, "\u{2581}": 4, "a": 5, "b": 6,
                                "\u{2581}a": 7, "ab": 8, "\u{2581}ab": 9},
                      "merges": ["\u{2581} a", ["a", "b"], "\u{2581}a b"]},
            "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}]}
        }))
        .unwrap();
        let vectors: Vec<f32> = (0..10).flat_map(|i| [i as f32, 1.0]).collect();
        let model = Embedder::new(tokenizer, vectors, 10, 2).unwrap();
        assert_eq!(model.tokens("ab"), [1, 9], "'\u{2581}a' merges first (rank 0), then with 'b'");
        assert_eq!(model.tokens("b é"), [1, 4, 6, 4, 2, 3]);
        let vector = model.embed("ab");
        assert!((vector.iter().map(|v| v * v).sum::<f32>() - 1.0).abs() < 1e-6, "a unit vector");
    }
}
