//! Product names written as one word (`Petstore`, `Bufferapp`, `Healthcare`), split into the
//! words the catalog's own prose uses (`pet` + `store`, `buffer` + `app`).
//!
//! A toolkit is named after the API's title, and titles often glue two words without a case
//! change, while requests write them apart ("the pet shop", "in Buffer"). Case splitting
//! ([`super::tokenize`]) cannot see that boundary, so the index reads the descriptions' words
//! first and then splits each long run of a toolkit's name into two words that descriptions
//! use. The dictionary is the catalog itself: no word list to keep, and nothing split into
//! words the catalog never says. Only toolkit names are split: tool names glue the API's own
//! terms (`Flowcontrol`, `Apiserver`, `Username`), and splitting those made the parts common
//! enough to blur siblings apart (tried on the development set: it cost more than it gained).

use std::collections::{HashMap, HashSet};

use super::tokenize::split_identifier;

/// The shortest part a word splits into: shorter ones (`re`, `un`, `id`) would split half the
/// vocabulary into noise.
const MIN_PART: usize = 3;

/// A word of a toolkit's name, split in two.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Split {
    /// The toolkit's number in the index.
    pub(crate) toolkit: u32,
    /// The two words, lowercased, unstemmed.
    pub(crate) first: String,
    pub(crate) second: String,
}

/// What the index build reads: the descriptions' words, tool by tool, and the long runs of each
/// toolkit's name, once per spelling of the name (a toolkit has thousands of tools, and one
/// name).
#[derive(Debug, Default)]
pub(crate) struct Compounds {
    /// Lowercased words of descriptions, with how many times each occurs.
    words: HashMap<String, u32>,
    /// The toolkit names read.
    toolkits: HashSet<String>,
    /// (toolkit, lowercased run): the candidates to split, each once.
    candidates: Vec<(u32, String)>,
}

impl Compounds {
    /// Reads a tool's description.
    pub(crate) fn read_description(&mut self, text: &str) {
        for word in words(text) {
            let lower = word.to_lowercase();
            if lower.len() >= MIN_PART {
                *self.words.entry(lower).or_default() += 1;
            }
        }
    }

    /// Reads the name of toolkit number `toolkit` (nothing to do when this spelling was read).
    pub(crate) fn read_toolkit(&mut self, toolkit: u32, name: &str) {
        if self.toolkits.contains(name) {
            return;
        }
        self.toolkits.insert(name.to_owned());
        for word in words(name) {
            let candidate = (toolkit, word.to_lowercase());
            if word.len() >= 2 * MIN_PART && !self.candidates.contains(&candidate) {
                self.candidates.push(candidate);
            }
        }
    }

    /// Each candidate split where both parts are description words (at the split whose rarer
    /// part is the most common, so `petstore` is `pet` + `store`, not `pets` + `tore`). A
    /// product's docs may write its name whole ("the Petstore server"); those who ask for it
    /// still write it apart.
    pub(crate) fn split(&self) -> Vec<Split> {
        let mut out = Vec::new();
        for (toolkit, word) in &self.candidates {
            let best = (MIN_PART..=word.len() - MIN_PART)
                .filter(|&at| word.is_char_boundary(at))
                .filter_map(|at| {
                    let first = self.words.get(&word[..at])?;
                    let second = self.words.get(&word[at..])?;
                    Some((*first.min(second), at))
                })
                // The most common rarer part; on a tie, the longer first part.
                .max();
            if let Some((_, at)) = best {
                out.push(Split {
                    toolkit: *toolkit,
                    first: word[..at].to_owned(),
                    second: word[at..].to_owned(),
                });
            }
        }
        out
    }
}

/// The alphabetic word parts of `text`, split at case changes.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .flat_map(split_identifier)
        .filter(|part| !part.is_empty() && part.chars().all(char::is_alphabetic))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splits(descriptions: &[&str], toolkits: &[&str]) -> Vec<(String, String)> {
        let mut compounds = Compounds::default();
        for text in descriptions {
            compounds.read_description(text);
        }
        for (number, toolkit) in toolkits.iter().enumerate() {
            compounds.read_toolkit(number as u32, toolkit);
        }
        compounds
            .split()
            .into_iter()
            .map(|s| (s.first, s.second))
            .collect()
    }

    #[test]
    fn a_toolkit_glued_from_description_words_is_split() {
        assert_eq!(
            splits(
                &[
                    "Add a pet to the Petstore",
                    "store",
                    "Buffer for your app",
                    "pets"
                ],
                &["SwaggerPetstore", "Bufferapp"]
            ),
            [
                ("pet".into(), "store".into()),
                ("buffer".into(), "app".into())
            ]
        );
    }

    #[test]
    fn only_into_description_words_and_never_tiny_ones() {
        assert!(splits(&["index it"], &["Reindex"]).is_empty());
        assert!(splits(&["the mandate"], &["Mandrill"]).is_empty());
    }

    #[test]
    fn a_toolkit_name_is_read_once_however_many_tools_it_has() {
        let mut compounds = Compounds::default();
        compounds.read_description("a pet store");
        for _ in 0..3 {
            compounds.read_toolkit(0, "Petstore");
        }
        assert_eq!(compounds.split().len(), 1);
    }
}
