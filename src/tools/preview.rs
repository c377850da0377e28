//! What a script could call, read from its text before it runs: the names it mentions, where,
//! and whether it reaches tools in ways no reading can follow (`call_tool("x")`, `getattr`).
//!
//! This is a preview, not the gate: every call still passes the gate and the approval policy
//! when it is made. The reader over-approximates where that is cheap (an f-string's text is
//! read as code) and says when it cannot be complete.

use std::collections::BTreeMap;

/// Lines kept per name (the first ones).
const MAX_LINES_PER_NAME: usize = 16;

/// Names through which a script can reach a tool without writing its name as code.
const DYNAMIC_NAMES: &[&str] =
    &["call_tool", "getattr", "globals", "locals", "vars", "eval", "exec", "compile", "__import__", "__dict__"];

/// The identifiers a script writes as code (not in comments or plain strings), with the
/// lines they are on.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ScriptNames {
    pub(crate) lines: BTreeMap<String, Vec<u32>>,
}

impl ScriptNames {
    /// Reads `code` the way Python's tokenizer splits it, as far as names, comments and
    /// string literals go.
    pub(crate) fn read(code: &str) -> Self {
        let mut names = Self::default();
        let bytes = code.as_bytes();
        let (mut at, mut line) = (0, 1u32);
        while at < bytes.len() {
            let byte = bytes[at];
            match byte {
                b'\n' => {
                    line += 1;
                    at += 1;
                }
                b'#' => at = code[at..].find('\n').map_or(bytes.len(), |n| at + n),
                b'\'' | b'"' => at = skip_string(code, at, false, &mut line, &mut names),
                _ if byte == b'_' || byte.is_ascii_alphabetic() || byte >= 0x80 => {
                    let end =
                        code[at..].find(|c: char| !(c == '_' || c.is_alphanumeric())).map_or(bytes.len(), |n| at + n);
                    let word = &code[at..end];
                    // A string prefix (r, b, f, rb, fr, ...) directly before a quote.
                    if end < bytes.len() && matches!(bytes[end], b'\'' | b'"') && is_string_prefix(word) {
                        let formatted = word.contains(['f', 'F', 't', 'T']);
                        at = skip_string(code, end, formatted, &mut line, &mut names);
                        continue;
                    }
                    names.add(word, line);
                    at = end;
                }
                // Numbers like `1e5` or `0x1f` are not names.
                b'0'..=b'9' => {
                    at = code[at..]
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                        .map_or(bytes.len(), |n| at + n)
                }
                _ => at += 1,
            }
        }
        names
    }

    fn add(&mut self, word: &str, line: u32) {
        let lines = self.lines.entry(word.to_owned()).or_default();
        if lines.len() < MAX_LINES_PER_NAME && lines.last() != Some(&line) {
            lines.push(line);
        }
    }

    /// The lines a name is written on, if it is.
    pub(crate) fn find(&self, name: &str) -> Option<&[u32]> {
        self.lines.get(name).map(Vec::as_slice)
    }

    /// The names the script uses that can reach a tool without naming it.
    pub(crate) fn dynamic(&self) -> Vec<&'static str> {
        DYNAMIC_NAMES.iter().copied().filter(|name| self.lines.contains_key(*name)).collect()
    }
}

fn is_string_prefix(word: &str) -> bool {
    word.len() <= 2 && word.chars().all(|c| matches!(c.to_ascii_lowercase(), 'r' | 'b' | 'u' | 'f' | 't'))
}

/// Skips the string literal whose quote is at `start`; returns where the code goes on. The
/// text of a formatted string is read for names too (its `{...}` parts are code).
fn skip_string(code: &str, start: usize, formatted: bool, line: &mut u32, names: &mut ScriptNames) -> usize {
    let bytes = code.as_bytes();
    let quote = bytes[start];
    let triple = bytes.len() >= start + 3 && bytes[start + 1] == quote && bytes[start + 2] == quote;
    let mut at = start + if triple { 3 } else { 1 };
    let body_start = at;
    let end = loop {
        let Some(&byte) = bytes.get(at) else { break bytes.len() };
        match byte {
            b'\\' => {
                if bytes.get(at + 1) == Some(&b'\n') {
                    *line += 1;
                }
                at += 2;
            }
            b'\n' if !triple => break at,
            b'\n' => {
                *line += 1;
                at += 1;
            }
            _ if byte == quote && (!triple || bytes[at..].starts_with(&[quote; 3])) => {
                break at + if triple { 3 } else { 1 };
            }
            _ => at += 1,
        }
    };
    if formatted {
        let body = &code[body_start..end.min(bytes.len()).max(body_start)];
        let first_line = *line - body.matches('\n').count() as u32;
        for (offset, text) in body.split('\n').enumerate() {
            for word in text.split(|c: char| !(c == '_' || c.is_alphanumeric())) {
                if word.starts_with(|c: char| c == '_' || c.is_alphabetic()) {
                    names.add(word, first_line + offset as u32);
                }
            }
        }
    }
    end.min(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_code_count_and_names_in_comments_and_strings_do_not() {
        let code = "import json\n# send_email is not called here\nrows = await get_rows({'q': \"send_email\"})\n\
                    doc = '''\nrefund()\n'''\nawait refund(rows[0])\nprint(f\"{await notify(x)} done\")\n";
        let names = ScriptNames::read(code);
        assert_eq!(names.find("get_rows"), Some(&[3][..]));
        assert_eq!(names.find("refund"), Some(&[7][..]), "the triple-quoted one is text");
        assert_eq!(names.find("notify"), Some(&[8][..]), "an f-string's braces are code");
        assert_eq!(names.find("send_email"), None);
        assert!(names.dynamic().is_empty());
    }

    #[test]
    fn prefixes_escapes_and_dynamic_reach() {
        let code = "a = rb'x\\'y'\nb = 'it\\'s send_email'\nawait sluice.call_tool(name)\nfn = globals()['t']\n";
        let names = ScriptNames::read(code);
        assert_eq!(names.find("send_email"), None);
        assert_eq!(names.find("rb"), None, "a prefix is not a name");
        assert_eq!(names.find("sluice"), Some(&[3][..]));
        assert_eq!(names.dynamic(), vec!["call_tool", "globals"]);
        assert_eq!(ScriptNames::read("x = 1e5 + 0x1f\n'unclosed").find("e5"), None);
    }
}
