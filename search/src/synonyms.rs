//! Words that mean the same thing to an API: a request says "remove", "sign in" or "allow
//! list" where the catalog says "delete", "login" or "whitelist".
//!
//! The groups are the synonyms of [`super::vocab`]'s table. A request's word also matches the
//! other words of its group, as weaker evidence than the word itself (see `SYNONYM_WEIGHT` in
//! the parent module); a group member of several words ("sign in") is recognised in the request
//! as a phrase, and only one-word members are looked up in the index (a tool's own text writes
//! them as one word: `LoginUser`, `whitelist`).

use std::sync::LazyLock;

use super::tokenize::Tokenizer;
use super::vocab::GROUPS;

/// The groups, stemmed once per process: they are the same for every catalog.
pub(crate) fn synonyms() -> &'static Synonyms {
    static SYNONYMS: LazyLock<Synonyms> = LazyLock::new(|| Synonyms::new(&Tokenizer::default()));
    &SYNONYMS
}

/// The groups, stemmed.
#[derive(Debug)]
pub(crate) struct Synonyms {
    /// Per group: its members, each as its terms (one for a word, several for a phrase).
    groups: Vec<Vec<Vec<String>>>,
}

impl Synonyms {
    fn new(tokenizer: &Tokenizer) -> Self {
        let groups = GROUPS
            .iter()
            .map(|group| {
                group
                    .words
                    .iter()
                    .filter_map(|word| word.synonym())
                    .map(|member| {
                        member
                            .split(|c: char| !c.is_alphanumeric())
                            .map(|word| tokenizer.stem(word))
                            .collect::<Vec<String>>()
                    })
                    .collect::<Vec<_>>()
            })
            // A group of verbs alone (`list`, `lists`) has no synonyms to expand to.
            .filter(|members| !members.is_empty())
            .collect();
        Self { groups }
    }

    /// For a request whose word terms are `words` (stemmed, in order, stop words included so
    /// that "sign in" reads as a phrase), each one-word synonym to look up and the positions
    /// in `words` of the request's own words it stands for.
    pub(crate) fn expand(&self, words: &[String]) -> Vec<(&str, Vec<usize>)> {
        let mut out: Vec<(&str, Vec<usize>)> = Vec::new();
        for group in &self.groups {
            let mut matched: Vec<usize> = Vec::new();
            let mut present: Vec<usize> = Vec::new(); // members the request itself says
            for (m, member) in group.iter().enumerate() {
                if let Some(at) = find(words, member) {
                    matched.extend(at);
                    present.push(m);
                }
            }
            if matched.is_empty() {
                continue;
            }
            for (m, member) in group.iter().enumerate() {
                if present.contains(&m) || member.len() != 1 {
                    continue;
                }
                out.push((member[0].as_str(), matched.clone()));
            }
        }
        out
    }
}

/// The particles of English phrasal verbs, which may stand apart from their verb ("take the
/// coupon off", "bring the room back"). Not `in` or `on`: as prepositions they follow
/// almost any verb ("log the errors in a table").
const PARTICLES: &[&str] = &["off", "back", "down", "up", "out", "away", "over"];

/// How many words may stand between a verb and its particle.
const PARTICLE_GAP: usize = 3;

/// The positions in `words` of `phrase`'s terms: consecutive, or for a verb and a particle
/// ([`PARTICLES`]), the particle up to [`PARTICLE_GAP`] words after the verb.
fn find(words: &[String], phrase: &[String]) -> Option<Vec<usize>> {
    if phrase.is_empty() || phrase.len() > words.len() {
        return None;
    }
    if let Some(at) =
        (0..=words.len() - phrase.len()).find(|&i| words[i..i + phrase.len()] == *phrase)
    {
        return Some((at..at + phrase.len()).collect());
    }
    let [verb, particle] = phrase else {
        return None;
    };
    if !PARTICLES.contains(&particle.as_str()) {
        return None;
    }
    words.iter().enumerate().find_map(|(at, word)| {
        let after = words.get(at + 2..=(at + 1 + PARTICLE_GAP).min(words.len() - 1))?;
        let gap = after.iter().position(|w| w == particle)?;
        (word == verb).then_some(vec![at, at + 2 + gap])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(query: &str) -> Vec<(String, Vec<usize>)> {
        let tokenizer = Tokenizer::default();
        let synonyms = synonyms();
        let words: Vec<String> = query.split(' ').map(|w| tokenizer.stem(w)).collect();
        let mut out: Vec<(String, Vec<usize>)> = synonyms
            .expand(&words)
            .into_iter()
            .map(|(t, at)| (t.to_owned(), at))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_word_stands_for_the_other_words_of_its_group() {
        let out = expand("remove the pet");
        assert!(out.contains(&("delet".to_owned(), vec![0])), "{out:?}");
        assert!(!out.iter().any(|(t, _)| t == "remov"));
    }

    #[test]
    fn a_phrase_stands_for_the_one_word_members() {
        let out = expand("sign in to the shop");
        assert!(out.contains(&("login".to_owned(), vec![0, 1])), "{out:?}");
        assert!(out.contains(&("store".to_owned(), vec![4])), "{out:?}");
    }

    #[test]
    fn a_phrasal_verb_may_stand_apart_from_its_particle() {
        let out = expand("take the coupon off now");
        assert!(out.contains(&("delet".to_owned(), vec![0, 3])), "{out:?}");
        let out = expand("bring the archived room back");
        assert!(out.contains(&("restor".to_owned(), vec![0, 4])), "{out:?}");
        // Not too far apart, and not with a preposition.
        assert!(
            !expand("take the first of many steps off")
                .iter()
                .any(|(t, _)| t == "delet")
        );
        assert!(
            !expand("log the errors in a table")
                .iter()
                .any(|(t, _)| t == "login")
        );
    }

    #[test]
    fn unrelated_words_expand_to_nothing() {
        assert!(expand("ping the host").is_empty());
    }
}
