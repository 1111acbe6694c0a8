//! A search request, read: which of its words must be matched for a tool to be relevant, and
//! which are only values.
//!
//! A request names what it wants done ("list the issues of a project") and often the values to
//! do it with ("'doggie'", "SUMMER20", "host/app01"). Values rarely occur in tool text and must
//! not make a good tool look irrelevant, so words in quotes and words with digits are optional:
//! they score when they match and are not missed when they do not. Every other word is
//! expected: a tool that matches few of the request's informative words is not an answer.

use super::tokenize::{Tokenizer, split_identifier};

/// One term of a query.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QueryTerm {
    /// The stemmed term.
    pub(crate) term: String,
    /// A join of two adjacent words (`pet store` → `petstore`): evidence for its two parts.
    pub(crate) joined: bool,
    /// A value (quoted, or with digits): never counted as missing.
    pub(crate) value: bool,
    /// Part of a product's or service's name (`a Shopify code`, see [`crate::products`]), which
    /// a catalog that serves it always mentions.
    pub(crate) proper: bool,
    /// A whole word of the request, not a part of one split at a case change (`GitLab` →
    /// `git`, `lab`): only a whole word names a toolkit.
    pub(crate) whole: bool,
}

/// The distinct terms of `query`, first occurrence first.
pub(crate) fn terms(tokenizer: &Tokenizer, query: &str) -> Vec<QueryTerm> {
    let mut out: Vec<QueryTerm> = Vec::new();
    for (segment, quoted) in segments(query) {
        let mut negated = false;
        let words: Vec<&str> = segment.split_whitespace().collect();
        let products = crate::products::product_words(&words);
        for (word, product) in words.into_iter().zip(products) {
            // What the request says not to do ("without deleting it", "never blocks") is
            // not what it asks for: the word after a negation is left out.
            if !quoted && negates(word) {
                negated = true;
                continue;
            }
            let value = quoted || looks_like_value(word);
            // A capitalised word the catalog lacks is more often a place, a person or a title
            // than a product; only a known product's name counts as one (`UPS`, or opening the
            // request: `Zendesk: open a ticket`).
            let proper = product && !value;
            let mut tokens = tokenizer.collect(word, false);
            // Whole unless split at a case change: `Wolfram|Alpha` is two whole words.
            let (mut whole, mut one_letter) = (true, false);
            for run in word.split(|c: char| !c.is_alphanumeric()) {
                let parts = split_identifier(run);
                whole &= parts.len() == 1;
                one_letter |= parts
                    .iter()
                    .any(|p| p.chars().count() == 1 && p.chars().all(char::is_alphabetic));
            }
            // A word with a one-letter part (`XCom`, `eBay`, `vCenter`) means itself only
            // whole: the letter alone is dropped, so its join is the word, not extra evidence.
            if one_letter {
                for token in &mut tokens {
                    token.joined = false;
                }
            }
            if negated && !tokens.is_empty() {
                negated = false;
                continue;
            }
            for token in tokens {
                let flags = Flags {
                    joined: token.joined,
                    value,
                    proper,
                    whole,
                };
                push(&mut out, token.term, flags);
            }
        }
        // Joins across words (`pet store` → `petstore`), as extra evidence.
        for token in tokenizer.collect(segment, true) {
            if token.joined {
                let flags = Flags {
                    joined: true,
                    value: true,
                    ..Flags::default()
                };
                push(&mut out, token.term, flags);
            }
        }
    }
    out
}

/// Whether `word` negates what follows ("not", "never", "without", "don't", "haven't").
fn negates(word: &str) -> bool {
    let lower = word
        .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’')
        .to_lowercase();
    matches!(lower.as_str(), "not" | "never" | "without" | "nor")
        || lower.ends_with("n't")
        || lower.ends_with("n’t")
}

/// A word with digits, or with punctuation inside it (`host/app01`, `ceo@acme.com`,
/// `etl_daily`, `order_id=6735`, `conjur:group:devs`): an identifier, path, address or literal
/// to pass to the tool, not a description of the tool. Hyphens stay words (`low-priority`).
fn looks_like_value(word: &str) -> bool {
    let inner = word.trim_matches(|c: char| !c.is_alphanumeric());
    inner.chars().any(|c| c.is_ascii_digit())
        || inner.contains(['/', '@', ':', '.', '=', '_', '\\', '#', '?', '&', '%'])
}

/// What one occurrence of a term is (see [`QueryTerm`]'s fields).
#[derive(Debug, Clone, Copy, Default)]
struct Flags {
    joined: bool,
    value: bool,
    proper: bool,
    whole: bool,
}

fn push(out: &mut Vec<QueryTerm>, term: String, flags: Flags) {
    if let Some(seen) = out.iter_mut().find(|t| t.term == term) {
        // The same term again: it is a value only if every occurrence is.
        seen.value &= flags.value;
        seen.joined &= flags.joined;
        seen.proper |= flags.proper;
        seen.whole |= flags.whole;
        return;
    }
    out.push(QueryTerm {
        term,
        joined: flags.joined,
        value: flags.value,
        proper: flags.proper,
        whole: flags.whole,
    });
}

/// `query` cut into unquoted and quoted segments. A quote opens after a non-alphanumeric
/// character (or at the start) and closes before one, so apostrophes (`don't`, `user's`) are
/// not quotes.
fn segments(query: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let bytes: Vec<(usize, char)> = query.char_indices().collect();
    let mut start = 0;
    let mut open: Option<(usize, char)> = None;
    for (i, &(at, c)) in bytes.iter().enumerate() {
        if !matches!(c, '\'' | '"' | '`' | '‘' | '’' | '“' | '”') {
            continue;
        }
        let before = i.checked_sub(1).map(|j| bytes[j].1);
        let after = bytes.get(i + 1).map(|&(_, c)| c);
        match open {
            None if before.is_none_or(|b| !b.is_alphanumeric()) => {
                out.push((&query[start..at], false));
                open = Some((at + c.len_utf8(), c));
            }
            Some((from, _)) if after.is_none_or(|a| !a.is_alphanumeric()) => {
                out.push((&query[from..at], true));
                start = at + c.len_utf8();
                open = None;
            }
            _ => {}
        }
    }
    match open {
        // An unclosed quote is an apostrophe after all.
        Some((from, c)) => out.push((&query[from - c.len_utf8()..], false)),
        None => out.push((&query[start..], false)),
    }
    out.retain(|(s, _)| !s.trim().is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_values_and_apostrophes_are_not_quotes() {
        assert_eq!(
            segments("add 'doggie' to the user's store"),
            vec![
                ("add ", false),
                ("doggie", true),
                (" to the user's store", false)
            ]
        );
        assert_eq!(segments("don't stop"), vec![("don't stop", false)]);
    }

    #[test]
    fn what_a_request_says_not_to_do_is_not_asked_for() {
        let tokenizer = Tokenizer::default();
        let words = |query| {
            terms(&tokenizer, query)
                .into_iter()
                .filter(|t| !t.joined)
                .map(|t| t.term)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            words("disable the site without deleting it"),
            ["disabl", "site"]
        );
        assert_eq!(words("members who haven't joined yet"), ["member"]);
        assert_eq!(words("never block the mail"), ["mail"]);
        // A quoted value is a value, negation or not ("not" itself is a stop word).
        assert_eq!(words("search 'not found'"), ["search", "found"]);
    }

    #[test]
    fn a_word_with_a_one_letter_part_is_a_term_whole() {
        let tokenizer = Tokenizer::default();
        let units: Vec<String> = terms(&tokenizer, "read the XCom value")
            .into_iter()
            .filter(|t| !t.joined)
            .map(|t| t.term)
            .collect();
        assert!(units.contains(&"xcom".to_owned()), "{units:?}");
        // Two real words stay apart, their join extra evidence.
        let joined: Vec<String> = terms(&tokenizer, "GitHub")
            .into_iter()
            .filter(|t| t.joined)
            .map(|t| t.term)
            .collect();
        assert_eq!(joined, ["github"]);
    }

    #[test]
    fn capitalised_words_inside_a_sentence_are_proper() {
        let tokenizer = Tokenizer::default();
        let terms = terms(&tokenizer, "Create a Shopify code SUMMER20 for ABC");
        let proper: Vec<&str> = terms
            .iter()
            .filter(|t| t.proper)
            .map(|t| t.term.as_str())
            .collect();
        assert_eq!(proper, ["shopifi"]);
        let values: Vec<&str> = terms
            .iter()
            .filter(|t| t.value && !t.joined)
            .map(|t| t.term.as_str())
            .collect();
        assert_eq!(values, ["summer"]);
    }

    #[test]
    fn paths_addresses_and_identifiers_are_values() {
        for word in [
            "host/app01",
            "ceo@acme.com",
            "etl_daily",
            "order_id=6735",
            "a:b:c",
            "v2",
        ] {
            assert!(looks_like_value(word), "{word}");
        }
        for word in ["low-priority", "issues", "(organization)", "GitHub?"] {
            assert!(!looks_like_value(word), "{word}");
        }
    }
}
