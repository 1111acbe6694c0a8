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

use std::collections::HashMap;

use super::document::Field;
use super::tokenize::split_identifier;

/// The shortest part a word splits into: shorter ones (`re`, `un`, `id`) would split half the
/// vocabulary into noise.
const MIN_PART: usize = 3;

/// A word of a tool's toolkit name, split in two.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Split {
    /// The tool's position.
    pub(crate) doc: u32,
    /// The two words, lowercased, unstemmed.
    pub(crate) first: String,
    pub(crate) second: String,
}

/// What the index build reads, tool by tool: the descriptions' words and the toolkit names' long
/// runs.
#[derive(Debug, Default)]
pub(crate) struct Compounds {
    /// Lowercased words of descriptions, with how many times each occurs.
    words: HashMap<String, u32>,
    /// (tool, lowercased run): the candidates to split.
    candidates: Vec<(u32, String)>,
}

impl Compounds {
    /// Reads one field of tool `doc`.
    pub(crate) fn read(&mut self, doc: u32, field: Field, text: &str) {
        match field {
            Field::Description => {
                for word in words(text) {
                    let lower = word.to_lowercase();
                    if lower.len() >= MIN_PART {
                        *self.words.entry(lower).or_default() += 1;
                    }
                }
            }
            Field::Toolkit => {
                for word in words(text) {
                    if word.len() >= 2 * MIN_PART {
                        self.candidates.push((doc, word.to_lowercase()));
                    }
                }
            }
            _ => {}
        }
    }

    /// Each candidate split where both parts are description words (at the split whose rarer
    /// part is the most common, so `petstore` is `pet` + `store`, not `pets` + `tore`). A
    /// product's docs may write its name whole ("the Petstore server"); those who ask for it
    /// still write it apart.
    pub(crate) fn split(&self) -> Vec<Split> {
        let mut out = Vec::new();
        for (doc, word) in &self.candidates {
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
                    doc: *doc,
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
            compounds.read(0, Field::Description, text);
        }
        for toolkit in toolkits {
            compounds.read(0, Field::Toolkit, toolkit);
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
        // Tool names are not split.
        let mut compounds = Compounds::default();
        compounds.read(0, Field::Description, "the flow control");
        compounds.read(0, Field::Name, "CreateFlowcontrol");
        assert!(compounds.split().is_empty());
    }
}
