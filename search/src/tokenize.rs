//! Text → index terms, the same way for tool text and for queries, so that `ReposGet`,
//! `repos_get`, `repos-get` and "get the repo" meet on the same terms.
//!
//! A run of letters and digits is an identifier: it is split at case changes (`listForUser`,
//! `HTTPServer` → `HTTP`, `Server`) and at letter/digit boundaries (`v3`). Each part is lowercased
//! and stemmed (Snowball English). Two adjacent parts are also joined into one term (`GitHub` →
//! `git`, `hub`, `github`; `S3` → `s3`), because people write product names whole while the
//! catalog often writes them in camel case, and because single letters and digits alone mean
//! nothing. Stop words and lone digits or letters are dropped: they match everything or values.

use rust_stemmers::{Algorithm, Stemmer};

/// Words that carry no meaning about which tool is wanted. Kept small and generic on purpose:
/// verbs like "get" or "list" stay, since IDF already weighs them down and they do tell
/// operations apart. Besides function words, the filler of spoken requests ("actually",
/// "currently", "still", "I need", "let me know"): a catalog rarely has them, so each would
/// count as a word no tool matches.
const STOP_WORDS: &[&str] = &[
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
        let mut previous: Option<String> = None;
        for run in text.split(|c: char| !c.is_alphanumeric()) {
            if run.is_empty() {
                continue;
            }
            if !join_words {
                previous = None;
            }
            for part in split_identifier(run) {
                let lower = part.to_lowercase();
                let kept = keep(&lower);
                let stop = STOP_WORDS.contains(&lower.as_str());
                if let Some(prev) = &previous
                    && !stop
                {
                    let joined = format!("{prev}{lower}");
                    emit(Token {
                        term: self.stemmer.stem(&joined).into_owned(),
                        joined: true,
                    });
                }
                if kept {
                    emit(Token {
                        term: self.stemmer.stem(&lower).into_owned(),
                        joined: false,
                    });
                }
                // A stop word between two words breaks the join (`pet of store`).
                previous = (!stop).then_some(lower);
            }
        }
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

/// Whether a lowercased word part is a term: not a stop word, not a lone letter or digit run.
fn keep(lower: &str) -> bool {
    let mut chars = lower.chars();
    let single = chars.next().is_some() && chars.next().is_none();
    !single && !lower.chars().all(|c| c.is_ascii_digit()) && !STOP_WORDS.contains(&lower)
}

/// Splits one alphanumeric run at case changes and letter/digit boundaries:
/// `listForAuthenticatedUser` → `list For Authenticated User`, `HTTPServer2` → `HTTP Server 2`.
pub(crate) fn split_identifier(run: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = run.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (at, c) = chars[i];
        let (_, prev) = chars[i - 1];
        let next = chars.get(i + 1).map(|&(_, c)| c);
        let boundary = (prev.is_lowercase() && c.is_uppercase())
            || (prev.is_alphabetic() && c.is_ascii_digit())
            || (prev.is_ascii_digit() && c.is_alphabetic())
            // The last capital of an acronym starts the next word: `HTTPServer`.
            || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase));
        if boundary {
            parts.push(&run[start..at]);
            start = at;
        }
    }
    parts.push(&run[start..]);
    parts
}
