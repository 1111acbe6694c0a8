//! Text → index terms, the same way for tool text and for queries, so that `ReposGet`,
//! `repos_get`, `repos-get` and "get the repo" meet on the same terms.
//!
//! A run of letters and digits is an identifier: it is split at case changes (`listForUser`,
//! `HTTPServer` → `HTTP`, `Server`) and at letter/digit boundaries (`v3`). Each part is lowercased
//! and stemmed (Snowball English). Two adjacent parts are also joined into one term (`GitHub` →
//! `git`, `hub`, `github`; `S3` → `s3`), because people write product names whole while the
//! catalog often writes them in camel case, and because single letters and digits alone mean
//! nothing. Stop words and lone digits or letters are dropped: they match everything or values.

use std::collections::HashMap;

use rust_stemmers::{Algorithm, Stemmer};

/// Words that carry no meaning about which tool is wanted. Kept small and generic on purpose:
/// verbs like "get" or "list" stay, since IDF already weighs them down and they do tell
/// operations apart. Besides function words, the filler of spoken requests ("actually",
/// "currently", "still", "I need", "let me know"): a catalog rarely has them, so each would
/// count as a word no tool matches.
pub(crate) const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "actually",
    "after",
    "again",
    "all",
    "already",
    "also",
    "an",
    "and",
    "any",
    "anything",
    "are",
    "as",
    "at",
    "basically",
    "be",
    "been",
    "being",
    "both",
    "but",
    "by",
    "can",
    "could",
    "currently",
    "do",
    "does",
    "each",
    "either",
    "ever",
    "everything",
    "for",
    "from",
    "had",
    "has",
    "have",
    "here",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "kindly",
    "know",
    "let",
    "lets",
    "maybe",
    "me",
    "might",
    "more",
    "most",
    "must",
    "my",
    "need",
    "needs",
    "no",
    "not",
    "now",
    "of",
    "okay",
    "on",
    "one",
    "or",
    "other",
    "our",
    "ours",
    "own",
    "perhaps",
    "please",
    "really",
    "shall",
    "should",
    "simply",
    "so",
    "some",
    "somebody",
    "someone",
    "something",
    "still",
    "such",
    "sure",
    "tell",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "too",
    "us",
    "using",
    "via",
    "want",
    "wants",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "yet",
    "you",
    "your",
    "yours",
];

/// One term of a text, and whether it came from a whole word part (`Unit`) or from joining two
/// adjacent parts (`Joined`). Joined terms are extra evidence, not words of their own: they do
/// not count towards a field's length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub(crate) term: String,
    pub(crate) joined: bool,
}

/// Splits, lowercases, stems and filters text into terms.
pub(crate) struct Tokenizer {
    stemmer: Stemmer,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tokenizer(english)")
    }
}

impl Default for Tokenizer {
    fn default() -> Self {
        Self {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }
}

impl Tokenizer {
    /// The terms of `text`, in order, calling `emit` for each. With `join_words`, adjacent words
    /// are joined too (`pet store` → `petstore`): a query writes apart what an identifier
    /// writes as one word.
    pub(crate) fn tokens(&self, text: &str, join_words: bool, mut emit: impl FnMut(Token)) {
        words(text, join_words, |word, joined| {
            emit(Token {
                term: self.stemmer.stem(word).into_owned(),
                joined,
            });
        });
    }

    /// One word, lowercased and stemmed, whatever it is (no splitting, no stop words).
    pub(crate) fn stem(&self, word: &str) -> String {
        self.stemmer.stem(&word.to_lowercase()).into_owned()
    }

    /// The terms of `text` as a list (tests and queries).
    pub(crate) fn collect(&self, text: &str, join_words: bool) -> Vec<Token> {
        let mut out = Vec::new();
        self.tokens(text, join_words, |t| out.push(t));
        out
    }
}

/// Stems already made, by lowercased word, for reading a whole catalog: its texts repeat a few
/// thousand words hundreds of thousands of times, and stemming each occurrence afresh was a
/// third of building the index.
#[derive(Default)]
pub(crate) struct Stems {
    memo: HashMap<Box<str>, Box<str>>,
}

impl Stems {
    /// [`Tokenizer::tokens`], with each term borrowed from the memo.
    pub(crate) fn tokens(
        &mut self,
        tokenizer: &Tokenizer,
        text: &str,
        join_words: bool,
        mut emit: impl FnMut(&str, bool),
    ) {
        words(text, join_words, |word, joined| {
            if !self.memo.contains_key(word) {
                let stem = tokenizer.stemmer.stem(word).into_owned().into_boxed_str();
                self.memo.insert(word.into(), stem);
            }
            if let Some(stem) = self.memo.get(word) {
                emit(stem, joined);
            }
        });
    }
}

/// The words of `text` that become terms, lowercased and not yet stemmed, in order, each with
/// whether it joins two adjacent parts (see [`Tokenizer::tokens`]). Two buffers serve every word.
fn words(text: &str, join_words: bool, mut emit: impl FnMut(&str, bool)) {
    let (mut lower, mut previous, mut joined) = (String::new(), String::new(), String::new());
    let mut has_previous = false;
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        if run.is_empty() {
            continue;
        }
        if !join_words {
            has_previous = false;
        }
        identifier_parts(run, |part| {
            lower.clear();
            if part.is_ascii() {
                lower.extend(part.bytes().map(|b| char::from(b.to_ascii_lowercase())));
            } else {
                lower.push_str(&part.to_lowercase());
            }
            let stop = is_stop_word(&lower);
            if has_previous && !stop {
                joined.clear();
                joined.push_str(&previous);
                joined.push_str(&lower);
                emit(&joined, true);
            }
            if !stop && !lone_letter_or_digits(&lower) {
                emit(&lower, false);
            }
            // A stop word between two words breaks the join (`pet of store`).
            has_previous = !stop;
            if has_previous {
                std::mem::swap(&mut previous, &mut lower);
            }
        });
    }
}

/// Whether a lowercased word is a stop word ([`STOP_WORDS`] is sorted).
fn is_stop_word(lower: &str) -> bool {
    STOP_WORDS.binary_search(&lower).is_ok()
}

/// A lone letter or digit, or a run of digits: a value, not a term.
fn lone_letter_or_digits(lower: &str) -> bool {
    let mut chars = lower.chars();
    let single = chars.next().is_some() && chars.next().is_none();
    single || lower.chars().all(|c| c.is_ascii_digit())
}

/// Splits one alphanumeric run at case changes and letter/digit boundaries:
/// `listForAuthenticatedUser` → `list For Authenticated User`, `HTTPServer2` → `HTTP Server 2`.
pub(crate) fn split_identifier(run: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    identifier_parts(run, |part| parts.push(part));
    parts
}

/// [`split_identifier`], each part handed to `part` as it is found (nothing collected: reading a
/// catalog splits every word of it).
fn identifier_parts<'r>(run: &'r str, mut part: impl FnMut(&'r str)) {
    let mut chars = run.char_indices().peekable();
    let mut start = 0;
    if let Some((_, mut prev)) = chars.next() {
        while let Some((at, c)) = chars.next() {
            let next = chars.peek().map(|&(_, c)| c);
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_alphabetic() && c.is_ascii_digit())
                || (prev.is_ascii_digit() && c.is_alphabetic())
                // The last capital of an acronym starts the next word: `HTTPServer`.
                || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase));
            if boundary {
                part(&run[start..at]);
                start = at;
            }
            prev = c;
        }
    }
    part(&run[start..]);
}
