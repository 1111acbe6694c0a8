//! How deep a text nests, found by one pass over its bytes before any parser sees it.
//!
//! Why a scan of its own: the YAML parser reads a whole document into events before anything can
//! count levels (serde_yaml's own limit of 128 is checked while deserializing, after the events
//! exist), and building the events of 50,000 nested levels takes seconds. serde_json stops at 128
//! by itself, but a host file that is not JSON is tried as YAML next. So nesting is refused here,
//! in time linear in the text and memory bounded by [`MAX_DEPTH`].
//!
//! The scan is a small YAML lexer, enough to count levels and no more (JSON is YAML's flow style,
//! so one scan reads both):
//! - flow collections: every `[` and `{` outside quotes in flow context, and at the start of a
//!   node in block context (`key: [`, `- {`); a plain scalar such as `^[a-z]+$` is text;
//! - block collections: the stack of indentations of the lines above, plus each `- ` or `? ` that
//!   opens a node at the start of a line (`- - - x` is three levels on one line);
//! - quoted scalars (`"…"` with escapes, `'…'` with `''`), block scalars (`|`, `>`: the lines more
//!   indented than their key), and comments (`#`, and JSONC's `//` in flow context) are skipped.
//!
//! It errs on the side of counting a level too many (a `-` alone on its line, a bracket in a
//! plain multi-line scalar's continuation), never of missing the levels a parser would build.

/// The deepest nesting read, counted as this scan counts (about one more than a parser's levels:
/// the line holding a scalar counts). serde_json and serde_yaml refuse past 128 levels anyway, so
/// nothing a parser would read is refused here. The deepest document of the real-world corpus
/// (2,640 documents, GitHub's included) scans at 35, as JSON and converted to YAML; the
/// repository's configurations and fixtures at 12 at most: a margin of four times. Past 150
/// levels, refusing costs a scan of the bytes where parsing 50,000 levels cost seconds.
pub const MAX_DEPTH: usize = 150;

/// Where a text first nests deeper than the limit: its 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooDeep {
    pub(crate) line: usize,
}

/// How deep `text` (JSON or YAML) nests, as this scan counts; fails at the first line that nests
/// deeper than `limit`, having read nothing past it.
pub(crate) fn measure(text: &str, limit: usize) -> Result<usize, TooDeep> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut scan = Scan {
        limit,
        ..Scan::default()
    };
    // YAML's line breaks are `\n`, `\r\n` and `\r`; the empty line `\r\n` leaves between is blank.
    for (index, line) in text
        .as_bytes()
        .split(|&b| b == b'\n' || b == b'\r')
        .enumerate()
    {
        if !scan.line(line) {
            return Err(TooDeep { line: index + 1 });
        }
    }
    Ok(scan.deepest)
}

/// The lexer's state between lines.
#[derive(Debug, Default)]
struct Scan {
    /// The deepest level allowed.
    limit: usize,
    /// The deepest level seen.
    deepest: usize,
    /// Columns of the open block nodes, outermost first (never longer than [`MAX_DEPTH`]).
    indents: Vec<usize>,
    /// Open flow collections (`[`, `{`).
    flow: usize,
    /// Block levels of the line the open flow collection or quote started on.
    base: usize,
    /// Inside a quoted scalar that goes on past the line: its quote.
    quote: Option<u8>,
    /// Inside a block scalar owned by a key or `-` at this column: the lines indented more are
    /// its text.
    block_scalar: Option<usize>,
}

impl Scan {
    /// Notes that `depth` levels are open; `false` past the limit.
    fn reach(&mut self, depth: usize) -> bool {
        self.deepest = self.deepest.max(depth);
        depth <= self.limit
    }

    /// Reads one line; `false` when it nests too deep.
    fn line(&mut self, line: &[u8]) -> bool {
        if self.quote.is_some() || self.flow > 0 {
            // Indentation means nothing inside a quote or a flow collection.
            return self.inline(line, 0, false, (0, 0));
        }
        let indent = line.iter().take_while(|&&b| b == b' ').count();
        let content = &line[indent..];
        let blank = content
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_none_or(|&b| b == b'#');
        if let Some(parent) = self.block_scalar {
            if blank || indent > parent {
                return true;
            }
            self.block_scalar = None;
        }
        if blank {
            return true;
        }
        while self.indents.last().is_some_and(|&top| top > indent) {
            self.indents.pop();
        }
        if self.indents.last() != Some(&indent) {
            self.indents.push(indent);
        }
        let mut pos = indent;
        // Who owns a block scalar starting at `pos`: the line, or the last `-` on it.
        let mut owner = indent;
        // A document marker starts a new document (`--- [` opens a node).
        if indent == 0 && (line.starts_with(b"---") || line.starts_with(b"...")) && gap(line, 3) {
            self.indents.clear();
            pos = 3;
        }
        // `- ` and `? ` open a node each; what follows them is indented to its own column.
        loop {
            pos = skip_blanks(line, pos);
            match line.get(pos) {
                Some(b'-' | b'?') if gap(line, pos + 1) => {
                    owner = pos;
                    pos = skip_blanks(line, pos + 1);
                    self.indents.push(pos);
                    if !self.reach(self.indents.len()) {
                        return false;
                    }
                }
                _ => break,
            }
        }
        if !self.reach(self.indents.len()) {
            return false;
        }
        let key = self.indents.last().copied().unwrap_or(indent);
        self.inline(line, pos, true, (owner, key))
    }

    /// Reads `line` from `pos`: quotes, flow brackets, comments, a block scalar's header.
    /// `node_start`: a node may begin at `pos` (block context). `owners`: the column owning a
    /// block scalar at `pos` (the line's, or its last `-`'s), and after a key's `:` (the key's).
    fn inline(
        &mut self,
        line: &[u8],
        mut pos: usize,
        mut node_start: bool,
        owners: (usize, usize),
    ) -> bool {
        let (mut owner, key) = owners;
        if self.flow == 0 && self.quote.is_none() {
            self.base = self.indents.len();
        }
        // Whether the byte before `pos` separates tokens (start of line, blank, `[{,:`).
        let mut separated = true;
        while let Some(&b) = line.get(pos) {
            pos += 1;
            if let Some(quote) = self.quote {
                match b {
                    b'\\' if quote == b'"' => pos += 1,
                    b'\'' if quote == b'\'' && line.get(pos) == Some(&b'\'') => pos += 1,
                    _ if b == quote => {
                        self.quote = None;
                        separated = false;
                        node_start = false;
                    }
                    _ => {}
                }
                continue;
            }
            let flow = self.flow > 0;
            match b {
                b' ' | b'\t' => {
                    separated = true;
                    continue;
                }
                b'#' if separated => return true,
                b'/' if flow && separated && line.get(pos) == Some(&b'/') => return true,
                b'"' | b'\'' if node_start || (flow && separated) => self.quote = Some(b),
                // In flow context a bracket is always an indicator (plain scalars cannot hold one).
                b'[' | b'{' if node_start || flow => {
                    self.flow += 1;
                    if !self.reach(self.base + self.flow) {
                        return false;
                    }
                    separated = true;
                    node_start = false;
                    continue;
                }
                b']' | b'}' if flow => self.flow -= 1,
                b',' if flow => {
                    separated = true;
                    continue;
                }
                b':' if flow || gap(line, pos) => {
                    separated = true;
                    node_start = !flow;
                    owner = key;
                    continue;
                }
                b'|' | b'>' if node_start && !flow => {
                    self.block_scalar = Some(owner);
                    return true;
                }
                // An anchor or a tag comes before the node it names.
                b'&' | b'!' if node_start => {
                    while line.get(pos).is_some_and(|c| !c.is_ascii_whitespace()) {
                        pos += 1;
                    }
                    continue;
                }
                _ => {}
            }
            separated = false;
            node_start = false;
        }
        true
    }
}

/// Whether `line[pos]` is a blank or the end of the line (what makes `-`, `?`, `:` indicators).
fn gap(line: &[u8], pos: usize) -> bool {
    line.get(pos).is_none_or(|&b| b == b' ' || b == b'\t')
}

fn skip_blanks(line: &[u8], mut pos: usize) -> usize {
    while line.get(pos).is_some_and(|&b| b == b' ' || b == b'\t') {
        pos += 1;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(text: &str) -> usize {
        measure(text, MAX_DEPTH).unwrap()
    }

    fn refused_at(text: &str) -> usize {
        measure(text, MAX_DEPTH).unwrap_err().line
    }

    #[test]
    fn json_and_flow_brackets_count() {
        assert_eq!(depth(r#"{"a": [1, {"b": []}]}"#), 5);
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(refused_at(&deep), 1);
        let deep = format!("a:\n  b: {}{}", "{c: ".repeat(200), "}".repeat(200));
        assert_eq!(refused_at(&deep), 2);
        // Lines of a flow collection: the line where it gets too deep.
        let deep = format!("x: [\n{}", "[\n".repeat(200));
        assert_eq!(refused_at(&deep), MAX_DEPTH);
    }

    #[test]
    fn block_levels_count_indentation_and_dashes() {
        assert_eq!(depth("a:\n  b:\n    - c: 1\n      d: 2\ne: 3\n"), 4);
        assert_eq!(depth("- - - x\n"), 4);
        let dashes = format!("a: 1\nb:\n{}x\n", "- ".repeat(200));
        assert_eq!(refused_at(&dashes), 3);
        let mut indented = String::new();
        for level in 0..200 {
            indented.push_str(&format!("{}k{level}:\n", " ".repeat(level)));
        }
        assert_eq!(refused_at(&indented), MAX_DEPTH + 1);
        // Explicit keys nest too.
        assert!(measure(&"? ".repeat(200), MAX_DEPTH).is_err());
    }

    #[test]
    fn text_is_not_nesting() {
        // Brackets in plain scalars, quotes, comments and block scalars are not levels.
        let text = format!(
            "pattern: ^[a-z]+$ [[[\nq: \"{{{{[[\\\" [[\"\ns: 'it''s [[['\n# [[[[[[\n\
             d: |\n  - - - - [[[[ {{{{\n  more ]]] text\n    - - - deeper\nn: don't [[ x\n\
             f: [\"]]\", '[[', a, {{k: \"}}\"}}]\nend: {}\n",
            "x".repeat(3)
        );
        assert_eq!(depth(&text), 3);
        assert_eq!(
            depth("{\"a\": \"http://x.y/[z\", // JSONC [[[\n \"b\": 1}\n"),
            2
        );
        assert_eq!(depth("url: [http://a.example/x]\nb: 1\n"), 2);
        // A quote that goes on for lines.
        assert_eq!(depth("a: \"one [[[\n  two {{{\n  three\"\nb: [c]\n"), 2);
    }

    #[test]
    fn a_block_scalar_ends_where_its_owner_does() {
        // `b` is a sibling of `a` (column 4), not text of `a`'s scalar: its levels count.
        let text = format!("- - a: |\n      text\n    b: {}x\n", "[".repeat(200));
        assert_eq!(refused_at(&text), 3);
        // The text of `- |` may sit at the dash's column plus one.
        assert_eq!(depth("- |\n  - - - text\n- b\n"), 2);
    }

    #[test]
    fn document_markers_anchors_and_tags_do_not_hide_nesting() {
        assert!(measure(&format!("--- {}", "[".repeat(200)), MAX_DEPTH).is_err());
        assert!(measure(&format!("a: &x !!seq {}", "[".repeat(200)), MAX_DEPTH).is_err());
        assert!(measure(&format!("\u{feff}{}", "{\"a\":".repeat(200)), MAX_DEPTH).is_err());
        assert!(measure(&"[\r".repeat(200), MAX_DEPTH).is_err());
    }

    #[test]
    fn what_parsers_read_passes() {
        // serde_json's own limit is 128 levels; such a document is not refused by the scan.
        let json = format!("{}1{}", "[".repeat(127), "]".repeat(127));
        assert!(measure(&json, MAX_DEPTH).is_ok());
        assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok());
    }
}
