//! A request that asks for several things, split into its parts ("suggest domains for throwaway
//! addresses, and also fetch the messages of …"): each part is retrieved on its own and the
//! answer covers every part, because the whole request's words are spread over tools that each
//! cover too little of it.
//!
//! Where a request splits, by what people write between two requests: the end of a sentence or
//! a question (`.`, `?`, `!`, `;`, a new line, a list item) and the words that add a request
//! ("and also", "and then", "then", "also", "additionally", "as well as", "after that",
//! "plus"). A split is kept only when both sides are requests of their own (at least
//! `MIN_PART_WORDS` words), so "owner, repo and branch" or "Mr. Smith" stay whole.

/// The fewest words a part has; a shorter piece stays with its neighbour.
const MIN_PART_WORDS: usize = 3;
/// At most this many parts; a longer list is read as this many (the rest joins the last).
pub const MAX_PARTS: usize = 4;

/// Words that start another request inside a sentence (lowercase, whole words, longest first).
const JOINERS: &[&[&str]] = &[
    &["and", "also"],
    &["and", "then"],
    &["as", "well", "as"],
    &["after", "that"],
    &["additionally"],
    &["afterwards"],
    &["also"],
    &["then"],
    &["plus"],
];

/// Abbreviations whose period ends no sentence.
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "st", "no",
];

/// The parts of `request`, in order: one part (the request, trimmed) when it asks one thing.
pub fn split(request: &str) -> Vec<&str> {
    let mut cuts: Vec<(usize, usize)> = Vec::new(); // (end of a part, start of the next)
    sentence_cuts(request, &mut cuts);
    joiner_cuts(request, &mut cuts);
    cuts.sort_unstable();
    cuts.dedup();
    let mut parts: Vec<&str> = Vec::new();
    let mut start = 0;
    for (end, next) in cuts {
        if end < start {
            continue;
        }
        let piece = request[start..end].trim_matches(is_edge);
        if piece.is_empty() {
            // Two cuts in a row ("…? Also …"): the next part starts after both.
            start = next;
            continue;
        }
        if words(piece) >= MIN_PART_WORDS
            && words(request[next..].trim_matches(is_edge)) >= MIN_PART_WORDS
        {
            parts.push(piece);
            start = next;
        }
    }
    let last = request[start..].trim_matches(is_edge);
    if !last.is_empty() {
        parts.push(last);
    }
    if parts.len() > MAX_PARTS {
        // The rest joins the last part kept.
        let from = parts[MAX_PARTS - 1].as_ptr() as usize - request.as_ptr() as usize;
        parts.truncate(MAX_PARTS - 1);
        parts.push(request[from..].trim_matches(is_edge));
    }
    if parts.is_empty() {
        parts.push(request.trim());
    }
    parts
}

fn is_edge(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            ',' | ';' | '-' | '*' | '•' | ':' | '.' | '?' | '!' | '。' | '？' | '！'
        )
}

fn words(text: &str) -> usize {
    text.split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count()
}

/// Ends of sentences, questions and list items.
fn sentence_cuts(request: &str, cuts: &mut Vec<(usize, usize)>) {
    let bytes = request.as_bytes();
    for (at, c) in request.char_indices() {
        let next = at + c.len_utf8();
        match c {
            '\n' | ';' | '?' | '!' | '。' | '？' | '！' => cuts.push((at, next)),
            '.' => {
                // A period ends a sentence when whitespace follows and it ends no abbreviation,
                // number or single letter ("3.5", "v2.", "J. Doe").
                let followed = bytes.get(next).is_none_or(|b| b.is_ascii_whitespace());
                let word = request[..at]
                    .rsplit(|ch: char| ch.is_whitespace() || ch == '(')
                    .next()
                    .unwrap_or_default();
                let lower = word.to_lowercase();
                let short = word.chars().filter(|ch| ch.is_alphanumeric()).count() <= 1;
                if followed && !short && !ABBREVIATIONS.contains(&lower.as_str()) {
                    cuts.push((at, next));
                }
            }
            _ => {}
        }
    }
}

/// Words that add another request: the cut is before the joining words, the next part starts
/// after them.
fn joiner_cuts(request: &str, cuts: &mut Vec<(usize, usize)>) {
    // Whole words with their byte ranges, lowercased.
    let mut spans: Vec<(usize, usize, String)> = Vec::new();
    let mut start = None;
    for (at, c) in request.char_indices().chain([(request.len(), ' ')]) {
        let inside = c.is_alphanumeric() || c == '\'';
        match (start, inside) {
            (None, true) => start = Some(at),
            (Some(s), false) => {
                spans.push((s, at, request[s..at].to_lowercase()));
                start = None;
            }
            _ => {}
        }
    }
    let mut i = 0;
    while i < spans.len() {
        let found = JOINERS.iter().find(|joiner| {
            joiner.len() + i <= spans.len()
                && joiner.iter().zip(&spans[i..]).all(|(w, span)| *w == span.2)
        });
        match found {
            // "then" inside "if …, then …" or "and then" at the very start is no new request;
            // the word count of both sides decides.
            Some(joiner) if i > 0 => {
                let end = spans[i + joiner.len() - 1].1;
                cuts.push((spans[i].0, end));
                i += joiner.len();
            }
            _ => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn one_request_is_one_part() {
        assert_eq!(
            split("list the open pull requests of acme/widgets"),
            ["list the open pull requests of acme/widgets"]
        );
        assert_eq!(
            split("  get owner, repo and branch  "),
            ["get owner, repo and branch"]
        );
        assert_eq!(
            split("send 3.5 BTC to Mr. Smith"),
            ["send 3.5 BTC to Mr. Smith"]
        );
        assert_eq!(
            split("what time is it in Tokyo?"),
            ["what time is it in Tokyo"]
        );
    }

    #[test]
    fn sentences_questions_and_joining_words_split() {
        assert_eq!(
            split(
                "suggest domains for throwaway e-mail addresses, and also fetch the messages of inbox 42"
            ),
            [
                "suggest domains for throwaway e-mail addresses",
                "fetch the messages of inbox 42"
            ]
        );
        assert_eq!(
            split(
                "is Coldplay playing in London soon? also how do I get from Paddington to Wembley Park"
            ),
            [
                "is Coldplay playing in London soon",
                "how do I get from Paddington to Wembley Park"
            ]
        );
        assert_eq!(
            split("Create a branch called fix-login. Then open a merge request for it."),
            [
                "Create a branch called fix-login",
                "open a merge request for it"
            ]
        );
        assert_eq!(
            split("- list my calendars\n- add an event tomorrow at noon\n- invite bob to it"),
            [
                "list my calendars",
                "add an event tomorrow at noon",
                "invite bob to it"
            ]
        );
    }

    #[test]
    fn a_short_piece_stays_with_its_neighbour() {
        assert_eq!(
            split("Hi. Delete the note 7 please"),
            ["Hi. Delete the note 7 please"]
        );
        assert_eq!(
            split("weather today, then tomorrow"),
            ["weather today, then tomorrow"]
        );
    }

    #[test]
    fn parts_are_bounded() {
        let many = "read file one now. read file two now. read file three now. read file four now. read file five now.";
        let parts = split(many);
        assert_eq!(parts.len(), super::MAX_PARTS);
        assert_eq!(parts[3], "read file four now. read file five now");
    }
}
