//! Ranking: a request against the index, scored, gated for relevance and ordered.

use super::action::Actions;
use super::query::{self, QueryTerm};
use super::{Evidence, Hit, Lexical, MAX_QUERY_CHARS, SearchIndex, action, synonyms};

/// How much coverage shapes the score: `score × coverage^COVERAGE_POWER`.
const COVERAGE_POWER: f32 = 2.0;
/// The least coverage of a query's informative words for a tool to be a hit at all.
const MIN_COVERAGE: f32 = 0.25;
/// Below this coverage a tool must also score well: at least `MIN_SCORE` times the IDF of a
/// word no tool has (so the bar grows with the catalog as IDFs do). Requests that no tool
/// serves still match a few common words ("create", "list", "folder") and score low.
const SURE_COVERAGE: f32 = 0.5;
const MIN_SCORE: f32 = 0.35;
/// How much a word no tool has counts against coverage, as a share of the IDF such a word
/// has. A plain word may just be phrased differently from the catalog ("bump", "kanban"), so
/// it counts for less than its IDF; a capitalised one inside the sentence names a product or
/// service the catalog does not serve ("a Shopify discount code"), and counts for more.
const UNKNOWN_WORD_WEIGHT: f32 = 0.5;
const UNKNOWN_PROPER_WEIGHT: f32 = 3.0;
/// How much a match only in a tool's parameters counts towards coverage, as a share of one in
/// its name, toolkit or description.
const WEAK_MATCH_COVERAGE: f32 = 0.5;
/// The bonus for a tool whose own name the query covers: `score × (1 + NAME_BONUS × share of
/// the name's words matched)`. Among siblings (`ListX`, `GetX`, `DeleteX`) it prefers the one
/// whose name says what was asked and little else.
const NAME_BONUS: f32 = 1.0;
/// How much a match only in a tool's output schema counts towards coverage.
const OUTPUT_COVERAGE: f32 = 0.25;
/// How much a synonym of a request's word counts, as a share of the word itself.
const SYNONYM_WEIGHT: f32 = 0.6;
/// The bonus for a tool that does what the request asks (lists, reads one, creates, updates,
/// deletes; see [`crate::action`]): `score × (1 + ACTION_BONUS)`, and the cost for one that does
/// something else (`score × (1 - ACTION_PENALTY)`). They reorder siblings that share every
/// noun; they are too small to lift a tool that matches little else, and apply only once the
/// relevance gate is passed.
const ACTION_BONUS: f32 = 0.3;
const ACTION_PENALTY: f32 = 0.2;
/// The bonus for a tool about the caller's own things (`/me/…`) when the request says "my":
/// `score × (1 + MINE_BONUS)`.
const MINE_BONUS: f32 = 0.3;
/// The cost for a tool that says it is deprecated: its replacement, which does the same, ranks
/// first (`score × (1 - DEPRECATED_PENALTY)`).
const DEPRECATED_PENALTY: f32 = 0.3;
/// A request that names toolkits is about them: a tool of another toolkit ranks lower
/// (`score × (1 - OTHER_TOOLKIT_PENALTY)`).
const OTHER_TOOLKIT_PENALTY: f32 = 0.5;
/// Query terms considered at most (the rest of a very long query is ignored; the bit sets that
/// record which terms a tool matched are 64 bits wide).
const MAX_QUERY_TERMS: usize = 64;

impl SearchIndex {
    /// Ranked hits, best first, at most `limit`; only tools of `toolkit` (case-insensitive)
    /// when given. Deterministic (ties broken by position). Empty when nothing is relevant
    /// enough. Only the first [`MAX_QUERY_CHARS`] characters of `query` are read.
    pub fn search(&self, query: &str, limit: usize, toolkit: Option<&str>) -> Vec<Hit> {
        self.rank(query, limit, toolkit, None).0
    }

    /// Why the tool at `position` ranks as it does for `query` (or is no hit): its coverage,
    /// score and bonuses, one line. For tuning (`search_eval --explain`); not an API.
    #[doc(hidden)]
    pub fn explain(&self, query: &str, position: usize) -> String {
        let mut why = String::new();
        self.rank(query, 0, None, Some((position, &mut why)));
        why
    }

    pub(crate) fn rank(
        &self,
        query: &str,
        limit: usize,
        toolkit: Option<&str>,
        mut explain: Option<(usize, &mut String)>,
    ) -> (Vec<Hit>, Lexical) {
        let mut lexical = Lexical::default();
        if (limit == 0 && explain.is_none()) || self.toolkit_of.is_empty() {
            return (Vec::new(), lexical);
        }
        let query = match query.char_indices().nth(MAX_QUERY_CHARS) {
            Some((cut, _)) => &query[..cut],
            None => query,
        };
        let only = match toolkit {
            Some(name) => {
                let lower = name.to_lowercase();
                match self.toolkits.iter().position(|t| **t == *lower) {
                    Some(number) => Some(number as u32),
                    None => return (Vec::new(), lexical),
                }
            }
            None => None,
        };

        // Which query terms the index knows, how informative each is, and what a tool must
        // cover. Bit `i` of a tool's mask: it matched term `i`.
        let mut terms = query::terms(&self.tokenizer, query);
        terms.truncate(MAX_QUERY_TERMS);
        let unit_bits: Vec<(&str, u64)> = terms
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.joined)
            .map(|(i, t)| (t.term.as_str(), 1u64 << i))
            .collect();
        let synonyms = self.synonyms_of(query, &terms, &unit_bits);
        // The toolkits the request names, if any: it is about them.
        let mut named: Vec<u32> = Vec::new();
        // The bits of the words that name them.
        let mut naming_bits = 0u64;
        for (i, term) in terms.iter().enumerate() {
            if !term.whole || term.joined || term.value {
                continue;
            }
            if let Some(&number) = self.vocabulary.get(term.term.as_str()) {
                let at = self.naming.partition_point(|&(t, _)| t < number);
                let before = named.len();
                named.extend(
                    self.naming[at..]
                        .iter()
                        .take_while(|&&(t, _)| t == number)
                        .map(|&(_, k)| k),
                );
                if named.len() > before {
                    naming_bits |= 1 << i;
                }
            }
        }
        let mut known: Vec<Known> = Vec::new();
        let mut expected = 0.0f32; // IDF mass of the expected (non-value) words
        let mut bit_idf = [0.0f32; MAX_QUERY_TERMS];
        for (i, term) in terms.iter().enumerate() {
            if term.joined {
                continue;
            }
            let bit = 1u64 << i;
            let mut number = self.vocabulary.get(term.term.as_str()).copied();
            // A product or service the catalog serves is named by a toolkit, a tool or a
            // description; one that only a parameter mentions (a `provider` enum listing
            // `bitbucket`) is not served.
            if term.proper && number.is_some_and(|t| !self.is_strong_anywhere(t)) {
                number = None;
            }
            // A word the catalog lacks but has a synonym of is as informative as the synonym.
            let synonym_idf = synonyms
                .iter()
                .filter(|&&(_, bits)| bits & bit != 0)
                .map(|&(t, _)| self.idf[t as usize])
                .reduce(f32::max);
            let idf = number
                .map(|t| self.idf[t as usize])
                .or(synonym_idf)
                .unwrap_or(self.unseen_idf);
            if !term.value {
                // In a request about a toolkit the catalog serves, another name it does not
                // know is a value ("ask Wolfram|Alpha about Mars"), not a service it lacks.
                let weight = match (number.or(synonym_idf.map(|_| 0)), term.proper) {
                    (Some(_), _) => 1.0,
                    (None, true) if named.is_empty() => {
                        lexical.unknown_product = true;
                        UNKNOWN_PROPER_WEIGHT
                    }
                    (None, _) => UNKNOWN_WORD_WEIGHT,
                };
                expected += idf * weight;
                bit_idf[i] = idf * weight;
            }
            if let Some(term) = number {
                known.push(Known::word(term, idf, bit));
            }
        }
        // A joined term covers the words it joins, when the index has it.
        for term in terms.iter().filter(|t| t.joined) {
            let Some(&number) = self.vocabulary.get(term.term.as_str()) else {
                continue;
            };
            let bits = joined_parts(&term.term, &unit_bits);
            if bits == 0 {
                continue;
            }
            known.push(Known {
                source: Source::Joined,
                ..Known::word(number, self.idf[number as usize], bits)
            });
        }
        for &(term, bits) in &synonyms {
            known.push(Known {
                term,
                idf: self.idf[term as usize] * SYNONYM_WEIGHT,
                bits,
                source: Source::Synonym,
            });
        }
        if let Some((_, why)) = explain.as_mut() {
            let described: Vec<String> = terms
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let flags = [(t.joined, "j"), (t.value, "v"), (t.proper, "P")]
                        .iter()
                        .filter(|(on, _)| *on)
                        .map(|(_, f)| *f)
                        .collect::<String>();
                    format!(
                        "{}{flags}={:.2}",
                        t.term,
                        bit_idf.get(i).copied().unwrap_or(0.0)
                    )
                })
                .collect();
            let synonyms: Vec<&str> = synonyms
                .iter()
                .filter_map(|(t, _)| {
                    self.vocabulary
                        .iter()
                        .find(|(_, n)| *n == t)
                        .map(|(w, _)| &**w)
                })
                .collect();
            why.push_str(&format!(
                "terms [{}] synonyms {synonyms:?} expected {expected:.2} unseen {:.2}\n",
                described.join(" "),
                self.unseen_idf
            ));
        }
        if known.is_empty() {
            return (Vec::new(), lexical);
        }
        // The bits of the words a tool is expected to match (not values).
        let expected_bits = (0..terms.len())
            .filter(|&i| bit_idf[i] > 0.0)
            .fold(0u64, |bits, i| bits | 1 << i);

        let n = self.toolkit_of.len();
        let mut score = vec![0.0f32; n];
        // Bits of the terms each tool matched anywhere, and in its name, toolkit or description.
        let mut mask = vec![0u64; n];
        let mut strong_mask = vec![0u64; n];
        // Bits of the terms each tool matched only in its output.
        let mut output_mask = vec![0u64; n];
        // Bits of the terms each tool matched only by a synonym.
        let mut synonym_mask = vec![0u64; n];
        // The tools any posting reached, each once (a synonym found only in a tool's output
        // leaves every mask as it was, so the masks cannot tell).
        let mut touched: Vec<u32> = Vec::new();
        let mut reached = vec![false; n];
        // Words first, then synonyms: a synonym scores only for a tool that lacks the word.
        for &Known {
            term,
            idf,
            bits,
            source,
        } in &known
        {
            let range =
                self.starts[term as usize] as usize..self.starts[term as usize + 1] as usize;
            let postings = self.docs[range.clone()]
                .iter()
                .zip(&self.weights[range.clone()])
                .zip(&self.evidence[range]);
            for ((&doc, &weight), &found) in postings {
                let d = doc as usize;
                if only.is_some_and(|t| self.toolkit_of[d] != t) {
                    continue;
                }
                if !reached[d] {
                    reached[d] = true;
                    touched.push(doc);
                }
                if source == Source::Joined && mask[d] & bits == bits {
                    continue;
                }
                if found == Evidence::Output {
                    if source != Source::Synonym {
                        output_mask[d] |= bits;
                    }
                    score[d] += idf * weight;
                    continue;
                }
                if source == Source::Synonym {
                    if (mask[d] | synonym_mask[d]) & bits != 0 {
                        continue;
                    }
                    synonym_mask[d] |= bits;
                } else {
                    mask[d] |= bits;
                    if found == Evidence::Strong {
                        strong_mask[d] |= bits;
                    }
                }
                score[d] += idf * weight;
            }
        }
        let query_terms: Vec<u32> = known.iter().map(|k| k.term).collect();
        let wanted = action::of_query(query);

        let mut hits: Vec<Hit> = Vec::new();
        for &doc in &touched {
            let d = doc as usize;
            let coverage = if expected > 0.0 {
                let weak = covered(mask[d] & !strong_mask[d], &bit_idf);
                let synonyms = covered(synonym_mask[d] & !mask[d], &bit_idf);
                let answers = covered(output_mask[d] & !(mask[d] | synonym_mask[d]), &bit_idf);
                (covered(strong_mask[d], &bit_idf)
                    + WEAK_MATCH_COVERAGE * weak
                    + SYNONYM_WEIGHT * synonyms
                    + OUTPUT_COVERAGE * answers)
                    / expected
            } else {
                // Only values were asked for: any match is as good as it gets.
                1.0
            };
            let mut relevance = score[d]
                * coverage.powf(COVERAGE_POWER)
                * (1.0 + NAME_BONUS * self.name_match(d, &query_terms));
            if let Some((position, why)) = explain.as_mut()
                && *position == d
            {
                let bits = |mask: u64| {
                    terms
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| mask & (1 << i) != 0)
                        .map(|(_, t)| t.term.as_str())
                        .collect::<Vec<_>>()
                };
                why.push_str(&format!(
                    "score {:.2} coverage {coverage:.2} name {:.2} relevance {relevance:.2} (bar {:.2} below coverage {SURE_COVERAGE}) strong {:?} weak {:?} synonym {:?} action does {:?} wants {:?}",
                    score[d],
                    self.name_match(d, &query_terms),
                    MIN_SCORE * self.unseen_idf,
                    bits(strong_mask[d]),
                    bits(mask[d] & !strong_mask[d]),
                    bits(synonym_mask[d] & !mask[d]),
                    self.actions[d],
                    wanted,
                ));
            }
            // A tool of a toolkit the request names is relevant when its name, description or
            // path says something else the request asks, not only the product's name ("ask
            // Trello to predict my sprint") or a parameter's word ("next").
            let asked = (strong_mask[d] | synonym_mask[d]) & !naming_bits & expected_bits;
            let in_named = asked != 0 && named.contains(&self.toolkit_of[d]);
            if !in_named {
                if coverage < MIN_COVERAGE {
                    continue;
                }
                if coverage < SURE_COVERAGE && relevance < MIN_SCORE * self.unseen_idf {
                    continue;
                }
                if !named.is_empty() {
                    relevance *= 1.0 - OTHER_TOOLKIT_PENALTY;
                }
            }
            let (does, wants) = (self.actions[d] & Actions::DOES, wanted & Actions::DOES);
            if does.intersects(wants) {
                relevance *= 1.0 + ACTION_BONUS;
            } else if !wants.is_empty() && !does.is_empty() {
                relevance *= 1.0 - ACTION_PENALTY;
            }
            if (self.actions[d] & wanted).contains(Actions::MINE) {
                relevance *= 1.0 + MINE_BONUS;
            }
            if self.deprecated[d] {
                relevance *= 1.0 - DEPRECATED_PENALTY;
            }
            hits.push(Hit {
                position: d,
                score: relevance,
            });
        }
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.position.cmp(&b.position))
        });
        hits.truncate(limit);
        (hits, lexical)
    }

    /// The synonyms of the request's words that the index has (and the request does not say
    /// itself), each with the bits of the words it stands for.
    fn synonyms_of(
        &self,
        query: &str,
        terms: &[QueryTerm],
        units: &[(&str, u64)],
    ) -> Vec<(u32, u64)> {
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| self.tokenizer.stem(w))
            .collect();
        let mut out = Vec::new();
        for (synonym, at) in synonyms::synonyms().expand(&words) {
            let Some(&number) = self.vocabulary.get(synonym) else {
                continue;
            };
            if terms.iter().any(|t| t.term == synonym) {
                continue;
            }
            let bits = at.iter().fold(0, |bits, &p| {
                bits | units
                    .iter()
                    .find(|(term, _)| *term == words[p])
                    .map_or(0, |&(_, bit)| bit)
            });
            if bits != 0 {
                out.push((number, bits));
            }
        }
        out
    }

    /// Whether term `t` occurs in some tool's name, toolkit or description.
    fn is_strong_anywhere(&self, t: u32) -> bool {
        self.evidence[self.starts[t as usize] as usize..self.starts[t as usize + 1] as usize]
            .contains(&Evidence::Strong)
    }

    /// The share of tool `d`'s name among `query_terms`, by IDF: a name word the request did
    /// not say (`Reactions` in `ReactionsListForPullRequestReviewComment`) says the tool is
    /// about something else, the more so the rarer it is.
    fn name_match(&self, d: usize, query_terms: &[u32]) -> f32 {
        let name = &self.name_terms[self.name_starts[d] as usize..self.name_starts[d + 1] as usize];
        let (mut matched, mut total) = (0.0, 0.0);
        for &t in name {
            let idf = self.idf[t as usize];
            total += idf;
            if query_terms.contains(&t) {
                matched += idf;
            }
        }
        if total > 0.0 { matched / total } else { 0.0 }
    }
}

/// A query term the index has, and the query words it stands for.
#[derive(Debug, Clone, Copy)]
struct Known {
    term: u32,
    idf: f32,
    /// Bit `i`: it stands for the query's term `i` (several for a joined term or a phrase).
    bits: u64,
    source: Source,
}

/// Whence a [`Known`] term comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// One of the query's words.
    Word,
    /// Two of the query's words joined (`pet store` → `petstore`): evidence only for a tool
    /// that does not already have both words apart.
    Joined,
    /// A synonym of the query's words rather than one of them.
    Synonym,
}

impl Known {
    fn word(term: u32, idf: f32, bits: u64) -> Self {
        Self {
            term,
            idf,
            bits,
            source: Source::Word,
        }
    }
}

/// The IDF mass of the expected words whose bits are in `mask`.
fn covered(mask: u64, bit_idf: &[f32; MAX_QUERY_TERMS]) -> f32 {
    let mut sum = 0.0;
    let mut rest = mask;
    while rest != 0 {
        let i = rest.trailing_zeros() as usize;
        sum += bit_idf[i];
        rest &= rest - 1;
    }
    sum
}

/// The bits of the two words a joined term is made of (`petstore` = `pet` + `store`), found as
/// a prefix and the rest among the query's single terms; 0 when it is not two of them.
fn joined_parts(joined: &str, units: &[(&str, u64)]) -> u64 {
    for (first, a) in units {
        if let Some(rest) = joined.strip_prefix(first) {
            // Stemming may cut the joined word's end (`petstore` → `petstor`).
            let second = units.iter().find(|(second, _)| {
                !rest.is_empty() && (rest.starts_with(second) || second.starts_with(rest))
            });
            if let Some((_, b)) = second {
                return a | b;
            }
        }
    }
    0
}
