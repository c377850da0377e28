//! `json.loads` for the common case, straight from the text's bytes to Python objects.
//!
//! Scripts spend much of their time decoding tool results. RustPython's decoder is native
//! too, but it tracks a character index beside the byte index, copies every string twice and
//! returns a tuple per value. This one parses the UTF-8 bytes once and builds the objects as
//! it goes. It only ever answers for input CPython's `json.loads` (with no hooks) accepts, and
//! gives the same objects; for anything else (an error, `NaN`, a lone surrogate, an integer
//! too long for 64 bits, deep nesting) it declines and the standard decoder runs, so errors
//! and their messages stay CPython's.

use rustc_hash::FxHashMap;
use rustpython_vm::builtins::PyStrRef;
use rustpython_vm::{PyObjectRef, VirtualMachine};

/// Deeper nesting is left to the standard decoder, which raises RecursionError as CPython does.
const MAX_DEPTH: usize = 200;
/// Digits an integer may have to be parsed here (it then fits an i64); longer ones decline.
const MAX_INT_DIGITS: usize = 18;
/// Strings remembered per call (object keys, and short values), so repeats share one object.
const MAX_REMEMBERED_STRINGS: usize = 4096;
/// Longest string value remembered. Short values are the ones that repeat across records
/// (statuses, regions, categories, dates); a long one is rarely seen twice.
const MAX_REMEMBERED_VALUE_BYTES: usize = 24;
/// Members per object whose keys are predicted from the previous object at the same depth
/// (records wider than this are rare; the keys past it take the memo).
const MAX_PREDICTED_KEYS: usize = 64;
/// Values of at most this many bytes (a word) are found by their bytes read as one word, in
/// a small direct-mapped table in front of the memo: statuses, regions, codes, dates' parts.
const WORD_VALUE_BYTES: usize = 8;
/// That table has a slot per this many bytes of text, a power of two between the bounds
/// below: a 1,000-record result can hold hundreds of distinct short values (customer codes
/// beside a few statuses), which a small table would keep evicting from each other.
const TEXT_BYTES_PER_WORD_SLOT: usize = 64;
const MIN_WORD_VALUE_SLOTS: usize = 64;
const MAX_WORD_VALUE_SLOTS: usize = 4096;

/// The standard decoder should answer instead.
struct Decline;

type Parsed<T> = Result<T, Decline>;

/// What a decoded string is, which decides how it is shared: a key, of any length, may be the
/// program's own interned string of the same text; a value is shared only with its repeats
/// within the call, and only while short.
#[derive(Clone, Copy)]
enum StringRole {
    Key,
    Value,
}

/// Decodes `text`, or `None` when the standard decoder must (see the module doc).
pub(crate) fn loads(text: &PyStrRef, vm: &VirtualMachine) -> Option<PyObjectRef> {
    let bytes = text.to_str()?.as_bytes();
    let mut parser = Parser {
        bytes,
        at: 0,
        depth: 0,
        strings: FxHashMap::default(),
        members: Vec::new(),
        last_keys: Vec::new(),
        word_values: Box::default(),
        word_slot_bits: (bytes.len() / TEXT_BYTES_PER_WORD_SLOT)
            .clamp(MIN_WORD_VALUE_SLOTS, MAX_WORD_VALUE_SLOTS)
            .next_power_of_two()
            .trailing_zeros(),
        vm,
    };
    parser.skip_whitespace();
    let value = parser.value().ok()?;
    parser.skip_whitespace();
    (parser.at == bytes.len()).then_some(value)
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
    depth: usize,
    /// Keys and short values seen so far, by their raw bytes. Fx, not SipHash: hashing every
    /// key of every record through SipHash was a tenth of decoding 1,000 records (the peers
    /// bench's profile). Held as strings, not objects: a key inserted as a `str` skips the
    /// generic hash and equality dispatch (the type's slot) that an object key goes through.
    strings: FxHashMap<&'a [u8], PyStrRef>,
    /// The members of the objects being read, innermost object's last. An object's dict is
    /// made at its closing brace, sized for its members: filled as it was read, the dict of a
    /// five-member record grew its entries once (four, then eight) before it was done.
    members: Vec<(PyStrRef, PyObjectRef)>,
    /// For each depth, the keys of the objects read at it, by position, as raw bytes and
    /// string: the records of an array repeat their keys in one order, so a key is most often
    /// the one at its place in the record before, checked with one comparison where the memo
    /// costs a scan for the closing quote, a hash and a lookup.
    last_keys: Vec<Vec<(&'a [u8], PyStrRef)>>,
    /// Short values by their bytes as one word (see [`word_of`]), made on the first one: a hit
    /// is one load and compare, where the memo hashes the bytes, probes and compares them
    /// (a value decoded at 54 ns, against CPython's 29 for a new string each time).
    word_values: Box<[Option<(u64, PyStrRef)>]>,
    /// The table has `1 << word_slot_bits` slots once made.
    word_slot_bits: u32,
    vm: &'a VirtualMachine,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// A bit test, not a `match`: on WebAssembly LLVM makes every `match` of two or more arms
    /// a `br_table`, which Cranelift compiles to an indirect jump, and most separators in
    /// compact JSON have no whitespace after them.
    fn skip_whitespace(&mut self) {
        /// Bit `b` set for each JSON whitespace byte `b`: tab, newline, carriage return, space.
        const WHITESPACE: u64 = 1 << b'\t' | 1 << b'\n' | 1 << b'\r' | 1 << b' ';
        while let Some(&byte) = self.bytes.get(self.at) {
            if byte >= 64 || WHITESPACE >> byte & 1 == 0 {
                return;
            }
            self.at += 1;
        }
    }

    fn expect_literal(&mut self, literal: &[u8]) -> Parsed<()> {
        if self.bytes[self.at..].starts_with(literal) {
            self.at += literal.len();
            Ok(())
        } else {
            Err(Decline)
        }
    }

    fn value(&mut self) -> Parsed<PyObjectRef> {
        let ctx = &self.vm.ctx;
        match self.peek().ok_or(Decline)? {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => {
                self.at += 1;
                self.remembered_string(StringRole::Value).map(Into::into)
            }
            b't' => self.expect_literal(b"true").map(|()| ctx.new_bool(true).into()),
            b'f' => self.expect_literal(b"false").map(|()| ctx.new_bool(false).into()),
            b'n' => self.expect_literal(b"null").map(|()| ctx.none()),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Decline),
        }
    }

    fn nested(&mut self) -> Parsed<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH { Err(Decline) } else { Ok(()) }
    }

    fn object(&mut self) -> Parsed<PyObjectRef> {
        self.nested()?;
        self.at += 1;
        let first = self.members.len();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return self.made_object(first);
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(Decline);
            }
            self.at += 1;
            let key = self.key(self.members.len() - first)?;
            self.skip_whitespace();
            if self.peek() != Some(b':') {
                return Err(Decline);
            }
            self.at += 1;
            self.skip_whitespace();
            let value = self.value()?;
            self.members.push((key, value));
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.skip_whitespace();
                }
                Some(b'}') => {
                    self.at += 1;
                    return self.made_object(first);
                }
                _ => return Err(Decline),
            }
        }
    }

    /// The dict of the object whose members start at `first` on the member stack, which it
    /// takes off. A repeated key keeps its first place and its last value, as in CPython.
    fn made_object(&mut self, first: usize) -> Parsed<PyObjectRef> {
        self.depth -= 1;
        let dict = self.vm.ctx.new_dict();
        dict.reserve_for_new(self.members.len() - first);
        // An exact dict made just above: `set_item`'s subclass check and its note for the
        // builtins' dict would only cost here, and no other code can see it while it fills.
        let members = self.members.drain(first..).map(|(key, value)| (key.into(), value));
        dict.fill_unpublished(members, self.vm).map_err(|_| Decline)?;
        Ok(dict.into())
    }

    fn array(&mut self) -> Parsed<PyObjectRef> {
        self.nested()?;
        self.at += 1;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.at += 1;
            self.depth -= 1;
            return Ok(self.vm.ctx.new_list(items).into());
        }
        loop {
            items.push(self.value()?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.skip_whitespace();
                }
                Some(b']') => {
                    self.at += 1;
                    self.depth -= 1;
                    return Ok(self.vm.ctx.new_list(items).into());
                }
                _ => return Err(Decline),
            }
        }
    }

    /// The key (after its opening quote) of member `position` of an object: one string object
    /// per distinct key.
    fn key(&mut self, position: usize) -> Parsed<PyStrRef> {
        let depth = self.depth;
        let predicted = self.last_keys.get(depth).and_then(|keys| keys.get(position));
        if let Some((raw, key)) = predicted {
            let end = self.at + raw.len();
            // A remembered raw key holds no quote, backslash or control character, so the
            // input at this point is that very string exactly when its closing quote follows.
            if self.bytes.get(self.at..end) == Some(*raw) && self.bytes.get(end) == Some(&b'"') {
                let key = key.clone();
                self.at = end + 1;
                return Ok(key);
            }
        }
        let start = self.at;
        let key = self.remembered_string(StringRole::Key)?;
        // An escape always decodes to fewer bytes than it is written with, so a key whose
        // text is its raw bytes had none: it can be predicted by those bytes.
        let raw = &self.bytes[start..self.at - 1];
        if position < MAX_PREDICTED_KEYS && key.as_bytes() == raw {
            if self.last_keys.len() <= depth {
                self.last_keys.resize_with(depth + 1, Vec::new);
            }
            // A prediction is only ever used after the input matched it, so a stale or
            // misplaced one costs a comparison, never a wrong key.
            let keys = &mut self.last_keys[depth];
            if position < keys.len() {
                keys[position] = (raw, key.clone());
            } else if position == keys.len() {
                keys.push((raw, key.clone()));
            }
        }
        Ok(key)
    }

    /// A string (after its opening quote) that is shared with its repeats when it is plain
    /// (no escapes) and, for a value, short. CPython shares only keys; a value shared too
    /// is equal and immutable all the same, and the 1,000 records of a tool result then hold
    /// a few dozen status and region strings instead of thousands of copies to make and free.
    ///
    /// Only a short value's repeat is answered here; the memo and the escapes are out of line,
    /// so this path compiles to a small function that keeps its values in registers.
    fn remembered_string(&mut self, role: StringRole) -> Parsed<PyStrRef> {
        let start = self.at;
        let plain_end = self.plain_run();
        if self.peek() != Some(b'"') {
            // Escapes, or no closing quote: the plain run read so far starts the text.
            return self.escaped_string(start, plain_end);
        }
        self.at += 1;
        let word = match role {
            StringRole::Value => word_of(self.bytes, start, plain_end - start),
            StringRole::Key => None,
        };
        if let Some(word) = word
            && let Some(Some((seen, string))) = self.word_values.get(word_slot(word, self.word_slot_bits))
            && *seen == word
        {
            return Ok(string.clone());
        }
        Ok(self.plain_string(role, start, plain_end, word))
    }

    /// A plain string (its text `start..end`) not answered by the table of short values: the
    /// memo's, or a new one, which the memo (and that table, for a `word`) then remembers.
    #[inline(never)]
    fn plain_string(&mut self, role: StringRole, start: usize, end: usize, word: Option<u64>) -> PyStrRef {
        let raw = &self.bytes[start..end];
        let max_bytes = match role {
            StringRole::Key => usize::MAX,
            StringRole::Value => MAX_REMEMBERED_VALUE_BYTES,
        };
        if raw.len() > max_bytes {
            return self.vm.ctx.new_str(str_of(raw));
        }
        let string = match self.strings.get(raw) {
            Some(known) => known.clone(),
            None => {
                // A key the program already names ("status" in `row["status"]`) is interned:
                // the decoded key is then that very object, and a lookup matches it by
                // identity. Others are not interned (the pool never shrinks). Values are not
                // looked up there: the interpreter's pool is large and, in a pause's cold
                // caches, a probe of it cost more than comparing a short value's bytes saves.
                let text = str_of(raw);
                let interned = match role {
                    StringRole::Key => self.vm.ctx.interned_str(text),
                    StringRole::Value => None,
                };
                let string = match interned {
                    Some(interned) => interned.to_owned(),
                    None => self.vm.ctx.new_str(text),
                };
                if self.strings.len() < MAX_REMEMBERED_STRINGS {
                    self.strings.insert(raw, string.clone());
                }
                string
            }
        };
        if let Some(word) = word {
            if self.word_values.is_empty() {
                self.word_values = std::iter::repeat_n(None, 1 << self.word_slot_bits).collect();
            }
            self.word_values[word_slot(word, self.word_slot_bits)] = Some((word, string.clone()));
        }
        string
    }

    /// Advances over characters that need no unescaping; returns where they end.
    fn plain_run(&mut self) -> usize {
        let rest = &self.bytes[self.at..];
        let run = rest.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20).unwrap_or(rest.len());
        self.at += run;
        self.at
    }

    /// The rest of a string that has escapes (where `at` stops), after its plain start
    /// `start..end`.
    #[inline(never)]
    fn escaped_string(&mut self, start: usize, end: usize) -> Parsed<PyStrRef> {
        let mut text = String::from(str_of(&self.bytes[start..end]));
        loop {
            match self.peek().ok_or(Decline)? {
                b'"' => {
                    self.at += 1;
                    return Ok(self.vm.ctx.new_str(text));
                }
                b'\\' => {
                    self.at += 1;
                    self.escape(&mut text)?;
                }
                // A raw control character: CPython's strict decoder refuses it.
                _ => return Err(Decline),
            }
            let from = self.at;
            let to = self.plain_run();
            text.push_str(str_of(&self.bytes[from..to]));
        }
    }

    fn escape(&mut self, text: &mut String) -> Parsed<()> {
        let escaped = self.peek().ok_or(Decline)?;
        self.at += 1;
        let plain = match escaped {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let first = self.hex4()?;
                let code = match first {
                    0xD800..=0xDBFF if self.bytes[self.at..].starts_with(b"\\u") => {
                        self.at += 2;
                        let second = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&second) {
                            return Err(Decline);
                        }
                        0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                    }
                    // A lone surrogate: a Python str may hold it, a Rust one may not.
                    0xD800..=0xDFFF => return Err(Decline),
                    _ => first,
                };
                char::from_u32(code).ok_or(Decline)?
            }
            _ => return Err(Decline),
        };
        text.push(plain);
        Ok(())
    }

    fn hex4(&mut self) -> Parsed<u32> {
        let digits = self.bytes.get(self.at..self.at + 4).ok_or(Decline)?;
        let mut value = 0;
        for &digit in digits {
            value = value * 16 + (digit as char).to_digit(16).ok_or(Decline)?;
        }
        self.at += 4;
        Ok(value)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, as CPython's scanner reads numbers.
    fn number(&mut self) -> Parsed<PyObjectRef> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let integer_start = self.at;
        let magnitude = match self.peek() {
            Some(b'0') => {
                self.at += 1;
                0
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(Decline),
        };
        let integer_digits = self.at - integer_start;
        let mut is_float = false;
        if self.peek() == Some(b'.') && self.bytes.get(self.at + 1).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
            self.digits();
            is_float = true;
        }
        if let Some(b'e' | b'E') = self.peek() {
            let mark = self.at;
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                self.digits();
                is_float = true;
            } else {
                // Not an exponent: the number ended before the `e` (and what follows fails).
                self.at = mark;
            }
        }
        if is_float {
            let value: f64 = str_of(&self.bytes[start..self.at]).parse().map_err(|_| Decline)?;
            return Ok(self.vm.ctx.new_float(value).into());
        }
        if integer_digits > MAX_INT_DIGITS {
            return Err(Decline);
        }
        // At most 18 digits: below 10^18, so the magnitude and its negation fit an i64.
        let magnitude = magnitude as i64;
        Ok(self.vm.ctx.new_int(if negative { -magnitude } else { magnitude }).into())
    }

    /// Advances over a run of digits; returns their value, wrapped when it passes 64 bits
    /// (only a number declined for its length, more than `MAX_INT_DIGITS`, gets that far).
    fn digits(&mut self) -> u64 {
        let mut value = 0u64;
        while let Some(digit @ b'0'..=b'9') = self.peek() {
            value = value.wrapping_mul(10).wrapping_add(u64::from(digit - b'0'));
            self.at += 1;
        }
        value
    }
}

/// The `len` bytes at `start` (a plain string's text, `len` at most [`WORD_VALUE_BYTES`]) as
/// one little-endian word, the bytes past them masked off; `None` when the input has no whole
/// word there, or the text is longer. A plain text holds no NUL byte, so two texts of at most
/// a word share a word only when they are the same text.
fn word_of(bytes: &[u8], start: usize, len: usize) -> Option<u64> {
    if len > WORD_VALUE_BYTES {
        return None;
    }
    let word = u64::from_le_bytes(bytes.get(start..start + WORD_VALUE_BYTES)?.try_into().ok()?);
    Some(if len == WORD_VALUE_BYTES { word } else { word & ((1u64 << (8 * len)) - 1) })
}

/// A word's slot in a table of `1 << bits` short values: a multiplicative hash's top bits.
fn word_slot(word: u64, bits: u32) -> usize {
    (word.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (u64::BITS - bits)) as usize
}

/// A piece of the input, which came from a `&str` and is only ever cut next to ASCII bytes.
fn str_of(bytes: &[u8]) -> &str {
    // SAFETY: cutting valid UTF-8 before or after an ASCII byte leaves valid UTF-8 (ASCII
    // bytes never occur inside a multi-byte sequence); checking again would cost a pass.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}
