//! The catalog: every tool the bridge serves, how it is resolved, and what a call to it must
//! satisfy before anything is sent upstream.
//!
//! - [`registry`]: the tools of every source, indexed by id and version, swapped atomically on
//!   refresh;
//! - [`policy`]: each source's compiled options (timeouts, retries, concurrency, `on_change`);
//! - [`lock`]: lockfile pins and drift, with each change's class;
//! - [`validate`]: a call's input against the tool's schema;
//! - [`requirements`]: a call's `context` against the tool's `requirements`;
//! - [`semantic`]: the search model and the tools' vectors, embedded in the background;
//! - [`shaping`]: what a transformed tool or a projection of results needs on each call;
//! - [`summary`]: the first sentence of a description, as lists and search results show it.
//!
//! Below the edges and the call pipeline; it imports adapters, mappings and the search index,
//! never the server or the configuration.

pub(crate) mod lock;
pub(crate) mod policy;
pub(crate) mod registry;
pub(crate) mod requirements;
pub(crate) mod semantic;
pub(crate) mod shaping;
pub(crate) mod validate;

/// The longest summary, in characters.
const SUMMARY_CHARS: usize = 200;

/// The first sentence (or line) of a description, at most [`SUMMARY_CHARS`] characters.
pub(crate) fn summary(description: &str) -> String {
    let text = description.trim();
    let line = text.lines().next().unwrap_or_default().trim();
    let sentence = line
        .match_indices(". ")
        .next()
        .map_or(line, |(end, _)| &line[..=end]);
    match sentence.char_indices().nth(SUMMARY_CHARS) {
        None => sentence.to_owned(),
        Some((cut, _)) => format!("{}…", sentence[..cut].trim_end()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_is_the_first_sentence_within_bounds() {
        assert_eq!(summary("Gets a repo. Then more."), "Gets a repo.");
        assert_eq!(summary("  First line\nsecond line"), "First line");
        assert_eq!(summary("v1.2 is out"), "v1.2 is out");
        let long = "x".repeat(500);
        assert_eq!(summary(&long).chars().count(), SUMMARY_CHARS + 1);
        assert_eq!(summary(""), "");
    }
}
