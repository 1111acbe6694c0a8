//! Where a byte scan of a JSON text is in its strings and brackets: the part both scanners of
//! an MCP message share ([`super::limits::TopLevel`], which looks for a response's `id`, and
//! `set_aside`'s, which looks for `result`'s members). Each reads the few members it looks for
//! byte by byte and hands every value deeper than those to [`Nesting::skip_deeper`].

/// The depth of brackets a scan is at, and whether it is inside a string (after a backslash).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Nesting {
    pub(crate) depth: usize,
    pub(crate) in_string: bool,
    pub(crate) escaped: bool,
}

impl Nesting {
    /// Reads `bytes`, which the scan reached inside a value nested deeper than `depth`, until
    /// that value closes (or they run out), following only strings, escapes and brackets;
    /// returns how many bytes it read: the last is the bracket that closed the value. Most of
    /// a large message is such values, and this loop reads them several times faster than a
    /// scanner that also tracks keys and members (a string is jumped through with `memchr`).
    pub(crate) fn skip_deeper(&mut self, depth: usize, bytes: &[u8]) -> usize {
        let mut i = 0;
        while i < bytes.len() {
            if self.escaped {
                self.escaped = false;
            } else if self.in_string {
                let Some(next) = memchr::memchr2(b'"', b'\\', &bytes[i..]) else {
                    return bytes.len();
                };
                i += next;
                self.string_byte(bytes[i]);
            } else {
                match bytes[i] {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth = self.depth.saturating_sub(1);
                        if self.depth <= depth {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        bytes.len()
    }

    /// Reads one byte of a string (`in_string`): a backslash escapes the next, an unescaped
    /// quote ends the string. Returns whether it ended it. Every scanner reads string bytes
    /// through this, so all agree on where a string ends.
    pub(crate) fn string_byte(&mut self, byte: u8) -> bool {
        if self.escaped {
            self.escaped = false;
        } else if byte == b'\\' {
            self.escaped = true;
        } else if byte == b'"' {
            self.in_string = false;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fed in pieces of any size, the skip stops right after the bracket that closes the
    /// value, whatever strings, escapes and brackets inside strings come before it.
    #[test]
    fn a_deep_value_is_skipped_to_its_closing_bracket() {
        let text = br#"[{"a": ["]\"", {"b": "\\"}, "[[{"], "c": 1}, "after"]"#;
        // The scan has read `[{"a": [` (depth 3) and skips until the object closes (depth 1).
        let start = br#"[{"a": ["#.len();
        let close = text.len() - br#", "after"]"#.len();
        for size in [1, 2, 3, 5, text.len()] {
            let mut nesting = Nesting {
                depth: 3,
                ..Nesting::default()
            };
            let mut at = start;
            while nesting.depth > 1 && at < text.len() {
                let piece = &text[at..(at + size).min(text.len())];
                at += nesting.skip_deeper(1, piece);
            }
            assert_eq!(at, close, "pieces of {size}");
            assert_eq!(nesting.depth, 1);
            assert!(!nesting.in_string && !nesting.escaped);
        }
    }
}
