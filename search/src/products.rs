//! Products and services people name in requests ("a HubSpot deal", "my Fitbit", "on
//! WhatsApp"): a request that names one the catalog does not serve is not answered with another
//! product's tools (DESIGN §13). A capitalised word the catalog has never seen is more often a
//! place, a person or a title ("in Delhi", "book Ana", "The Crown"), which a tool takes as a
//! value; only a name on this list is read as a product.
//!
//! The list is simple-icons' (CC0-1.0): 3,500 brand names and aliases kept up to date by its
//! community, written from what products call themselves and not from any request we measure
//! on. `products/update.sh` regenerates `products/products.txt` from the npm package at a
//! pinned version.

use std::collections::HashSet;
use std::sync::LazyLock;

/// The names: folded to lower case, except acronyms (`UPS`, `ANA`), which a request must spell in
/// capitals to mean the product rather than a word or a person ("ups and downs", "Ana").
struct Names {
    folded: HashSet<Box<str>>,
    acronyms: HashSet<&'static str>,
}

static NAMES: LazyLock<Names> = LazyLock::new(|| {
    let mut names = Names {
        folded: HashSet::new(),
        acronyms: HashSet::new(),
    };
    for line in include_str!("../products/products.txt").lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if line.chars().all(|c| c.is_ascii_uppercase()) {
            names.acronyms.insert(line);
        } else {
            names.folded.insert(line.to_lowercase().into());
        }
    }
    names
});

/// Whether `name` (one to three words, as written in the request) names a known product.
pub(crate) fn is_product(name: &str) -> bool {
    NAMES.acronyms.contains(name) || NAMES.folded.contains(name.to_lowercase().as_str())
}

/// For each of `words` (a request's words in order, as split at white space), whether it is part
/// of a product's name: a run of capitalised words, not broken by punctuation, that is a name on
/// the list as a whole ("Google Drive", not "Metro" in "Metro Center"). A run that opens a
/// sentence is also read without its first word ("Create Zendesk tickets"); a sentence's one
/// capitalised first word names a product only when spelt like one inside (`HubSpot:`), as a
/// verb may be a brand too ("Box up the files", "Buffer the posts").
pub(crate) fn product_words(words: &[&str]) -> Vec<bool> {
    let mut marked = vec![false; words.len()];
    let mut start = 0;
    while start < words.len() {
        if !capitalised(words[start]) {
            start += 1;
            continue;
        }
        let mut end = start + 1;
        while end < words.len() && capitalised(words[end]) && !ends_clause(words[end - 1]) {
            end += 1;
        }
        let opens_sentence = start == 0 || ends_sentence(words[start - 1]);
        let run = |from: usize| {
            words[from..end]
                .iter()
                .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let spelt_as_name = |word: &str| word.chars().skip(1).any(char::is_uppercase);
        if opens_sentence && end - start == 1 && !spelt_as_name(words[start]) {
            // A sentence's first word, capitalised anyway.
        } else if is_product(&run(start)) {
            marked[start..end].iter_mut().for_each(|m| *m = true);
        } else if opens_sentence && end - start > 1 && is_product(&run(start + 1)) {
            marked[start + 1..end].iter_mut().for_each(|m| *m = true);
        }
        start = end;
    }
    marked
}

/// A word whose first letter or digit is a capital.
fn capitalised(word: &str) -> bool {
    word.chars()
        .find(|c| c.is_alphanumeric())
        .is_some_and(char::is_uppercase)
}

/// A word after which a name does not go on (`HubSpot,`, `(Slack)`).
fn ends_clause(word: &str) -> bool {
    word.ends_with([',', ';', ':', '.', '!', '?', ')', '"', '\'', '’'])
}

fn ends_sentence(word: &str) -> bool {
    word.ends_with(['.', '!', '?', ':'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn products(request: &str) -> Vec<&str> {
        let words: Vec<&str> = request.split_whitespace().collect();
        product_words(&words)
            .into_iter()
            .zip(&words)
            .filter(|(marked, _)| *marked)
            .map(|(_, w)| *w)
            .collect()
    }

    #[test]
    fn products_are_told_from_places_people_and_titles() {
        assert_eq!(
            products("add a deal to the pipeline in HubSpot"),
            ["HubSpot"]
        );
        assert_eq!(
            products("upload it to my Google Drive folder"),
            ["Google", "Drive"]
        );
        assert_eq!(products("Create Zendesk tickets for them"), ["Zendesk"]);
        assert_eq!(products("my UPS parcel is late"), ["UPS"]);
        assert_eq!(products("HubSpot: add a deal"), ["HubSpot:"]);
        assert!(products("Box up the files for Delhi").is_empty());
        assert!(products("what's the PM2.5 reading in Delhi right now?").is_empty());
        assert!(products("book Ana for a massage, then text her").is_empty());
        assert!(products("the ride from Metro Center to Dupont Circle").is_empty());
        assert!(products("I'm done with The Crown").is_empty());
        assert!(products("ups and downs of the hubspot pipeline").is_empty());
    }
}
