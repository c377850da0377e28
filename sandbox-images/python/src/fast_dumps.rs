//! `json.dumps` for plain data, written once into one buffer.
//!
//! RustPython's encoder (`_json.make_encoder`) builds a string per value and joins them, and
//! with `indent` the pure-Python encoder runs instead; encoding 10,000 records took a fifth of
//! the peers bench's data join. This one walks exact dicts, lists, tuples, strs, ints, floats,
//! bools and None and writes CPython's text for them directly, honouring `ensure_ascii`,
//! `indent`, `separators` and `sort_keys`. Anything else (a subclass, an object for `default`,
//! a key that is not a str, int, float, bool or None, a str with lone surrogates, an int past
//! 128 bits, deep nesting, which is also how a cycle ends) declines, and the standard encoder
//! answers, so its errors and their messages stay CPython's.

use rustpython_vm::builtins::{PyDict, PyFloat, PyInt, PyList, PyStr, PyStrRef, PyTuple};
use rustpython_vm::{AsObject, FromArgs, Py, PyObject, PyObjectRef, VirtualMachine};
use std::cell::Cell;
use std::io::Write;

thread_local! {
    /// The length of the last text written: the next call's buffer starts that large (up to
    /// [`MAX_FIRST_CAPACITY`]), so a script that dumps the same shape of data again does not
    /// grow its buffer by doubling, each step a copy of everything written so far.
    static LAST_LENGTH: Cell<usize> = const { Cell::new(0) };
}

/// Deeper nesting is left to the standard encoder (which also reports cycles).
const MAX_DEPTH: usize = 200;
/// The most a buffer starts with, whatever the last text's length.
const MAX_FIRST_CAPACITY: usize = 4 << 20;
/// Pieces up to this long are copied word by word (see [`put`]).
const SHORT_PIECE: usize = 16;

/// Appends `bytes` to `out`. A copy of a length known only at run time compiles to
/// WebAssembly's `memory.copy`, which wasmtime runs as a call out of the guest into its own
/// `memmove`: for the separators, keys, digits and short values that make up most of a
/// text, that call was 11% of the encoding. A short piece is copied instead as two words
/// (or two half words, or three bytes) that overlap as its length requires.
#[inline(always)]
fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = bytes.len();
    if len > SHORT_PIECE {
        out.extend_from_slice(bytes);
        return;
    }
    out.reserve(len);
    let (from, at) = (bytes.as_ptr(), out.len());
    // SAFETY: `reserve` made room for `len` bytes past `at`; every read below is inside
    // `bytes` and every write inside `at..at + len` (the second word of each pair ends at the
    // last byte, and may overlap the first), so `len` bytes are written before `set_len`.
    unsafe {
        let to = out.as_mut_ptr().add(at);
        if len >= 8 {
            to.cast::<u64>().write_unaligned(from.cast::<u64>().read_unaligned());
            to.add(len - 8).cast::<u64>().write_unaligned(from.add(len - 8).cast::<u64>().read_unaligned());
        } else if len >= 4 {
            to.cast::<u32>().write_unaligned(from.cast::<u32>().read_unaligned());
            to.add(len - 4).cast::<u32>().write_unaligned(from.add(len - 4).cast::<u32>().read_unaligned());
        } else if len > 0 {
            *to = *from;
            *to.add(len / 2) = *from.add(len / 2);
            *to.add(len - 1) = *from.add(len - 1);
        }
        out.set_len(at + len);
    }
}

/// How the text is laid out: `json.dumps`'s options, already resolved as `JSONEncoder` does.
struct Layout<'a> {
    /// The indent string (`None` for one line).
    indent: Option<&'a str>,
    item_separator: &'a str,
    key_separator: &'a str,
    sort_keys: bool,
    ensure_ascii: bool,
}

/// `_sluice_abi.json_dumps(value, indent, item_separator, key_separator, sort_keys,
/// ensure_ascii)`: the runtime's `json.dumps` resolves its options into these.
#[derive(FromArgs)]
pub(crate) struct DumpsArgs {
    #[pyarg(positional)]
    value: PyObjectRef,
    #[pyarg(positional)]
    indent: Option<PyStrRef>,
    #[pyarg(positional)]
    item_separator: PyStrRef,
    #[pyarg(positional)]
    key_separator: PyStrRef,
    #[pyarg(positional)]
    sort_keys: bool,
    #[pyarg(positional)]
    ensure_ascii: bool,
}

/// The JSON text of the call's value, or `NotImplemented` when the standard encoder must
/// answer.
pub(crate) fn dumps_or_decline(args: DumpsArgs, vm: &VirtualMachine) -> PyObjectRef {
    let decline = || vm.ctx.not_implemented();
    let indent = match &args.indent {
        None => None,
        Some(indent) => match indent.to_str() {
            Some(indent) => Some(indent),
            None => return decline(),
        },
    };
    let (Some(item_separator), Some(key_separator)) = (args.item_separator.to_str(), args.key_separator.to_str())
    else {
        return decline();
    };
    let layout =
        Layout { indent, item_separator, key_separator, sort_keys: args.sort_keys, ensure_ascii: args.ensure_ascii };
    let Some(text) = dumps(&args.value, &layout, vm) else {
        return decline();
    };
    LAST_LENGTH.set(text.len());
    // With `ensure_ascii`, every byte the encoder writes is ASCII, and so are the layout's
    // strings when they pass `is_ascii`: the result is made as ASCII without `new_str`'s scan
    // of the whole text for its kind.
    let ascii = layout.ensure_ascii
        && layout.indent.is_none_or(str::is_ascii)
        && layout.item_separator.is_ascii()
        && layout.key_separator.is_ascii();
    if ascii {
        // SAFETY: every byte is ASCII (above).
        return vm.ctx.new_str(unsafe { PyStr::new_ascii_unchecked(text) }).into();
    }
    // Every byte came from a `&str` or is ASCII, so the text is UTF-8; checking it again is
    // the price of keeping this path free of `unsafe` where it is rare.
    match String::from_utf8(text) {
        Ok(text) => vm.ctx.new_str(text).into(),
        Err(_) => decline(),
    }
}

/// The standard encoder should answer instead.
struct Decline;

type Written = Result<(), Decline>;

/// The JSON text of `value` as UTF-8 bytes, or `None` when the standard encoder must answer.
fn dumps(value: &PyObject, layout: &Layout<'_>, vm: &VirtualMachine) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    // A hint only: where the memory is not to be had, the buffer grows as it goes.
    let _ = out.try_reserve(LAST_LENGTH.get().min(MAX_FIRST_CAPACITY));
    let mut encoder = Encoder { out, layout, depth: 0, vm };
    encoder.value(value).ok()?;
    Some(encoder.out)
}

struct Encoder<'a> {
    /// UTF-8 written as bytes: a `String`'s `push` of a `char` encodes it, and its
    /// `push_str` of digits would check them as UTF-8 again.
    out: Vec<u8>,
    layout: &'a Layout<'a>,
    depth: usize,
    vm: &'a VirtualMachine,
}

impl Encoder<'_> {
    fn value(&mut self, value: &PyObject) -> Written {
        let vm = self.vm;
        if vm.is_none(value) {
            put(&mut self.out, b"null");
        } else if value.is(&vm.ctx.true_value) {
            put(&mut self.out, b"true");
        } else if value.is(&vm.ctx.false_value) {
            put(&mut self.out, b"false");
        } else if let Some(text) = value.downcast_ref_if_exact::<PyStr>(vm) {
            self.string(text.to_str().ok_or(Decline)?);
        } else if let Some(int) = value.downcast_ref_if_exact::<PyInt>(vm) {
            self.int(int)?;
        } else if let Some(float) = value.downcast_ref_if_exact::<PyFloat>(vm) {
            self.float(float.to_f64());
        } else if let Some(list) = value.downcast_ref_if_exact::<PyList>(vm) {
            self.array(&list.borrow_vec())?;
        } else if let Some(tuple) = value.downcast_ref_if_exact::<PyTuple>(vm) {
            self.array(tuple.as_slice())?;
        } else if let Some(dict) = value.downcast_ref_if_exact::<PyDict>(vm) {
            self.object(dict)?;
        } else {
            return Err(Decline);
        }
        Ok(())
    }

    fn int(&mut self, int: &Py<PyInt>) -> Written {
        // Read as the interpreter's own arithmetic reads an int: malachite's generic
        // conversion is a call through its limb iterator for every number written.
        let Some(small) = int.try_to_i64_fast() else {
            // Past 64 bits (rare): `fmt`, whose 128-bit division wasm32 does in software.
            let large = i128::try_from(int.as_bigint()).map_err(|_| Decline)?;
            write!(self.out, "{large}").expect("a Vec takes any write");
            return Ok(());
        };
        // Digits written backwards into a buffer: `fmt` machinery was a sixth of the encoding.
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut rest = small.unsigned_abs();
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        if small < 0 {
            self.out.push(b'-');
        }
        put(&mut self.out, &digits[at..]);
        Ok(())
    }

    /// `float.__repr__`, with JavaScript's names for what JSON has no number for.
    fn float(&mut self, value: f64) {
        if value.is_nan() {
            put(&mut self.out, b"NaN");
        } else if value.is_infinite() {
            put(&mut self.out, if value > 0.0 { b"Infinity".as_slice() } else { b"-Infinity" });
        } else {
            put(&mut self.out, rustpython_vm::literal::float::to_string(value).as_bytes());
        }
    }

    fn nested(&mut self) -> Written {
        self.depth += 1;
        if self.depth > MAX_DEPTH { Err(Decline) } else { Ok(()) }
    }

    /// A new line at the current depth, when indenting.
    fn newline(&mut self) {
        if let Some(indent) = self.layout.indent {
            self.out.push(b'\n');
            for _ in 0..self.depth {
                put(&mut self.out, indent.as_bytes());
            }
        }
    }

    fn array(&mut self, items: &[PyObjectRef]) -> Written {
        self.container(*b"[]", items.len(), |encoder| {
            for (index, item) in items.iter().enumerate() {
                encoder.member(index);
                encoder.value(item)?;
            }
            Ok(())
        })
    }

    fn object(&mut self, dict: &PyDict) -> Written {
        if self.layout.sort_keys {
            // CPython sorts the items by their keys as they are; only str keys are sorted
            // here (UTF-8 order is code point order, as Python compares strs).
            let vm = self.vm;
            let mut items = dict.items_vec();
            if !items.iter().all(|(key, _)| exact_str(key, vm).is_some()) {
                return Err(Decline);
            }
            items.sort_by(|(a, _), (b, _)| exact_str(a, vm).cmp(&exact_str(b, vm)));
            return self.container(*b"{}", items.len(), |encoder| {
                for (index, (key, value)) in items.iter().enumerate() {
                    encoder.member(index);
                    encoder.entry(key, value)?;
                }
                Ok(())
            });
        }
        // In place, under the dict's read lock: encoding runs no Python code, and a vector of
        // the items would take and drop two references for every member of every record.
        self.container(*b"{}", dict.__len__(), |encoder| {
            let mut index = 0;
            dict.try_for_each_item(|key, value| {
                encoder.member(index);
                index += 1;
                encoder.entry(key, value)
            })
        })
    }

    /// One member of an object: its key, the key separator and its value.
    fn entry(&mut self, key: &PyObject, value: &PyObject) -> Written {
        self.key(key)?;
        put(&mut self.out, self.layout.key_separator.as_bytes());
        self.value(value)
    }

    /// An array or object of `len` members, which `members` writes (each after `member`),
    /// one a line when indenting.
    fn container(&mut self, brackets: [u8; 2], len: usize, members: impl FnOnce(&mut Self) -> Written) -> Written {
        let [open, close] = brackets;
        self.out.push(open);
        if len == 0 {
            self.out.push(close);
            return Ok(());
        }
        self.nested()?;
        members(self)?;
        self.depth -= 1;
        self.newline();
        self.out.push(close);
        Ok(())
    }

    /// Before the member at `index`: the separator after the one before it, and its line.
    fn member(&mut self, index: usize) {
        if index > 0 {
            put(&mut self.out, self.layout.item_separator.as_bytes());
        }
        self.newline();
    }

    /// A key as a JSON string: a str as it is, a float, int, bool or None as its JSON text.
    fn key(&mut self, key: &PyObject) -> Written {
        if key.downcast_ref_if_exact::<PyStr>(self.vm).is_some() {
            self.string(exact_str(key, self.vm).ok_or(Decline)?);
            return Ok(());
        }
        let is_scalar = self.vm.is_none(key)
            || key.is(&self.vm.ctx.true_value)
            || key.is(&self.vm.ctx.false_value)
            || key.downcast_ref_if_exact::<PyInt>(self.vm).is_some()
            || key.downcast_ref_if_exact::<PyFloat>(self.vm).is_some();
        if !is_scalar {
            return Err(Decline);
        }
        // Written as a value, then quoted: the opening quote goes in before its few bytes.
        let start = self.out.len();
        self.value(key)?;
        self.out.insert(start, b'"');
        self.out.push(b'"');
        Ok(())
    }

    /// A str as a JSON string, escaped as CPython's `json` escapes it.
    fn string(&mut self, text: &str) {
        self.out.reserve(text.len() + 2);
        self.out.push(b'"');
        let ensure_ascii = self.layout.ensure_ascii;
        let plain = |b: &u8| *b >= b' ' && *b != b'"' && *b != b'\\' && (!ensure_ascii || *b < 0x7f);
        // Most strings need no escape at all: copy them whole.
        let first_escape = text.bytes().position(|b| !plain(&b)).unwrap_or(text.len());
        put(&mut self.out, &text.as_bytes()[..first_escape]);
        let mut plain_from = first_escape;
        for (at, c) in text[first_escape..].char_indices().map(|(at, c)| (at + first_escape, c)) {
            let escaped: Option<&str> = match c {
                '"' => Some("\\\""),
                '\\' => Some("\\\\"),
                '\n' => Some("\\n"),
                '\r' => Some("\\r"),
                '\t' => Some("\\t"),
                '\u{8}' => Some("\\b"),
                '\u{c}' => Some("\\f"),
                _ => None,
            };
            // With ensure_ascii, everything outside printable ASCII (DEL included) is escaped.
            let needs_code = c < ' ' || (ensure_ascii && c > '~');
            if escaped.is_none() && !needs_code {
                continue;
            }
            put(&mut self.out, &text.as_bytes()[plain_from..at]);
            plain_from = at + c.len_utf8();
            match escaped {
                Some(escape) => put(&mut self.out, escape.as_bytes()),
                None => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        write!(self.out, "\\u{unit:04x}").expect("a Vec takes any write");
                    }
                }
            }
        }
        put(&mut self.out, &text.as_bytes()[plain_from..]);
        self.out.push(b'"');
    }
}

/// The text of an exact str without lone surrogates.
fn exact_str<'o>(value: &'o PyObject, vm: &VirtualMachine) -> Option<&'o str> {
    value.downcast_ref_if_exact::<PyStr>(vm)?.to_str()
}
