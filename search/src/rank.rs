//! Ranking a request against the index, in phases: analyse the request ([`Asked`]: its terms,
//! what each weighs, which toolkits it names), accumulate the postings of its terms into each
//! tool's score and matched words ([`Matches`]), judge each tool reached (coverage, name),
//! admit it or not (the relevance gate), and boost what is admitted by what it does. Each phase
//! is a function of the ones before, so [`SearchIndex::explain`] calls the same ones for one
//! tool and the hot path writes nothing down.

use super::action::{self, Actions};
use super::query::{self, QueryTerm};
use super::{Evidence, Hit, Lexical, MAX_QUERY_CHARS, Scope, SearchIndex, synonyms};

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
/// it counts for less than its IDF; a product's name (see [`crate::products`]) names a product
/// or service the catalog does not serve ("a Shopify discount code"), and counts for more.
/// Another capitalised word is a plain word here: counting places, people and titles ("in
/// Delhi") as values instead left more unanswerable requests answered on the tuning set and
/// found no more tools (bench/search/README.md).
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
        let scope = Scope {
            toolkit,
            allowed: None,
        };
        self.search_in(query, limit, scope)
    }

    /// [`SearchIndex::search`] among the tools `scope` allows.
    pub fn search_in(&self, query: &str, limit: usize, scope: Scope<'_>) -> Vec<Hit> {
        self.rank(query, limit, scope).0
    }

    /// The lexical ranker's hits for `query` and what it learnt of the request.
    pub(crate) fn rank(&self, query: &str, limit: usize, scope: Scope<'_>) -> (Vec<Hit>, Lexical) {
        if limit == 0 || self.toolkit_of.is_empty() {
            return (Vec::new(), Lexical::default());
        }
        let only = match scope.toolkit {
            Some(name) => match self.toolkit_number(name) {
                Some(number) => Some(number),
                None => return (Vec::new(), Lexical::default()),
            },
            None => None,
        };
        let asked = self.analyse(query, only);
        if asked.known.is_empty() {
            return (Vec::new(), asked.lexical);
        }
        let hits = self.scored(&asked, limit, Gate::Admit, scope);
        (hits, asked.lexical)
    }

    /// Every tool the request's words reach, best first, at most `limit`, before the relevance
    /// gate: their judged relevance, boosted as admitted tools are. For research on the gate
    /// (`search_eval` with `OTC_SEARCH_FEATURES`); the search path does not call it.
    #[doc(hidden)]
    pub fn ungated(&self, query: &str, limit: usize) -> (Vec<Hit>, bool) {
        if limit == 0 || self.toolkit_of.is_empty() {
            return (Vec::new(), false);
        }
        let asked = self.analyse(query, None);
        if asked.known.is_empty() {
            return (Vec::new(), asked.lexical.unknown_product);
        }
        let hits = self.scored(&asked, limit, Gate::Open, Scope::default());
        (hits, asked.lexical.unknown_product)
    }

    /// The tools `asked` reaches, scored, best first (ties by position), at most `limit`: only
    /// those the relevance gate admits, or every one ([`SearchIndex::ungated`]).
    fn scored(&self, asked: &Asked, limit: usize, gate: Gate, scope: Scope<'_>) -> Vec<Hit> {
        let tally = self.accumulate(asked);
        let mut hits: Vec<Hit> = tally
            .touched
            .iter()
            .filter_map(|&doc| {
                let d = doc as usize;
                if !scope.allows(d) {
                    return None;
                }
                let matches = &tally.matches[d];
                let judged = self.judge(asked, matches, d);
                let relevance = match gate {
                    Gate::Admit => self.admit(asked, matches, d, &judged)?,
                    Gate::Open => judged.relevance,
                };
                Some(Hit {
                    position: d,
                    score: self.boost(asked, d, relevance),
                })
            })
            .collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.position.cmp(&b.position))
        });
        hits.truncate(limit);
        hits
    }

    /// The number of the toolkit named `name` (in any case), if the index has it.
    fn toolkit_number(&self, name: &str) -> Option<u32> {
        let lower = name.to_lowercase();
        let number = self.toolkits.iter().position(|t| **t == *lower)?;
        Some(number as u32)
    }

    /// Reads `query` against the index: which of its terms the index knows, how informative
    /// each is, and what a tool must cover. Bit `i` of a tool's mask: it matched term `i`.
    pub(crate) fn analyse(&self, query: &str, only: Option<u32>) -> Asked {
        let query = match query.char_indices().nth(MAX_QUERY_CHARS) {
            Some((cut, _)) => &query[..cut],
            None => query,
        };
        let mut terms = query::terms(&self.tokenizer, query);
        terms.truncate(MAX_QUERY_TERMS);
        let unit_bits: Vec<(&str, u64)> = terms
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.joined)
            .map(|(i, t)| (t.term.as_str(), 1u64 << i))
            .collect();
        let synonyms = if self.rules.synonyms {
            self.synonyms_of(query, &terms, &unit_bits)
        } else {
            Vec::new()
        };
        let (named, naming_bits) = if self.rules.toolkit_named {
            self.named_toolkits(&terms)
        } else {
            (Vec::new(), 0)
        };
        let mut weighed = self.weigh(&terms, &synonyms, named.is_empty());
        weighed.known.extend(self.joined(&terms, &unit_bits));
        weighed
            .known
            .extend(synonyms.iter().map(|&(term, bits)| Known {
                term,
                idf: self.idf[term as usize] * SYNONYM_WEIGHT,
                bits,
                source: Source::Synonym,
            }));
        // The bits of the words a tool is expected to match (not values).
        let expected_bits = (0..terms.len())
            .filter(|&i| weighed.bit_idf[i] > 0.0)
            .fold(0u64, |bits, i| bits | 1 << i);
        let query_terms = weighed.known.iter().map(|k| k.term).collect();
        Asked {
            terms,
            known: weighed.known,
            query_terms,
            expected: weighed.expected,
            bit_idf: weighed.bit_idf,
            expected_bits,
            named,
            naming_bits,
            only,
            wanted: action::of_query(query),
            lexical: Lexical {
                unknown_product: weighed.unknown_product,
            },
        }
    }

    /// The toolkits the request names, if any (it is about them), and the bits of the words
    /// that name them.
    fn named_toolkits(&self, terms: &[QueryTerm]) -> (Vec<u32>, u64) {
        let mut named: Vec<u32> = Vec::new();
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
        (named, naming_bits)
    }

    /// The request's words (not the joins): what each weighs in coverage, and those the index
    /// has, to look up. `names_nothing`: the request names no toolkit the catalog serves.
    fn weigh(&self, terms: &[QueryTerm], synonyms: &[(u32, u64)], names_nothing: bool) -> Weighed {
        let mut weighed = Weighed {
            known: Vec::new(),
            expected: 0.0,
            bit_idf: [0.0; MAX_QUERY_TERMS],
            unknown_product: false,
        };
        for (i, term) in terms.iter().enumerate() {
            if term.joined {
                continue;
            }
            let bit = 1u64 << i;
            let number = self.term_number(term);
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
                let proper = term.proper && self.rules.products;
                let weight = match (number.is_some() || synonym_idf.is_some(), proper) {
                    (true, _) => 1.0,
                    (false, true) if names_nothing => {
                        weighed.unknown_product = true;
                        UNKNOWN_PROPER_WEIGHT
                    }
                    (false, _) => UNKNOWN_WORD_WEIGHT,
                };
                weighed.expected += idf * weight;
                weighed.bit_idf[i] = idf * weight;
            }
            if let Some(term) = number {
                weighed.known.push(Known::word(term, idf, bit));
            }
        }
        weighed
    }

    /// The number of a request's word in the index, when it has it. A product or service the
    /// catalog serves is named by a toolkit, a tool or a description; one that only a
    /// parameter mentions (a `provider` enum listing `bitbucket`) is not served.
    fn term_number(&self, term: &QueryTerm) -> Option<u32> {
        let number = self.vocabulary.get(term.term.as_str()).copied()?;
        (!term.proper || self.is_strong_anywhere(number)).then_some(number)
    }

    /// The joined terms the index has (`pet store` → `petstore`), each covering the words it
    /// joins.
    fn joined(&self, terms: &[QueryTerm], unit_bits: &[(&str, u64)]) -> Vec<Known> {
        let mut known = Vec::new();
        for term in terms.iter().filter(|t| t.joined) {
            let Some(&number) = self.vocabulary.get(term.term.as_str()) else {
                continue;
            };
            let bits = joined_parts(&term.term, unit_bits);
            if bits == 0 {
                continue;
            }
            known.push(Known {
                source: Source::Joined,
                ..Known::word(number, self.idf[number as usize], bits)
            });
        }
        known
    }

    /// The postings of every known term of the request, added up per tool: words first, then
    /// joins, then synonyms (a synonym scores only for a tool that lacks the word).
    pub(crate) fn accumulate(&self, asked: &Asked) -> Tally {
        let n = self.toolkit_of.len();
        let mut tally = Tally {
            matches: vec![Matches::default(); n],
            touched: Vec::new(),
            reached: vec![false; n],
        };
        for known in &asked.known {
            let term = known.term as usize;
            let range = self.starts[term] as usize..self.starts[term + 1] as usize;
            let postings = self.docs[range.clone()]
                .iter()
                .zip(&self.weights[range.clone()])
                .zip(&self.evidence[range]);
            for ((&doc, &weight), &found) in postings {
                let d = doc as usize;
                if asked.only.is_some_and(|t| self.toolkit_of[d] != t) {
                    continue;
                }
                if !tally.reached[d] {
                    tally.reached[d] = true;
                    tally.touched.push(doc);
                }
                tally.matches[d].add(known, weight, found);
            }
        }
        tally
    }

    /// How tool `d` stands before the gate: its coverage of the request, the share of its name
    /// the request says, and the relevance they make of its score.
    pub(crate) fn judge(&self, asked: &Asked, matches: &Matches, d: usize) -> Judged {
        let coverage = asked.coverage(matches);
        let name = self.name_match(d, &asked.query_terms);
        let name_bonus = if self.rules.name_bonus {
            NAME_BONUS
        } else {
            0.0
        };
        Judged {
            coverage,
            name,
            relevance: matches.score * coverage.powf(COVERAGE_POWER) * (1.0 + name_bonus * name),
        }
    }

    /// The relevance gate: `None` when tool `d` is not relevant enough, else its relevance,
    /// lowered when the request is about other toolkits.
    pub(crate) fn admit(
        &self,
        asked: &Asked,
        matches: &Matches,
        d: usize,
        judged: &Judged,
    ) -> Option<f32> {
        // A tool of a toolkit the request names is relevant when its name, description or
        // path says something else the request asks, not only the product's name ("ask
        // Trello to predict my sprint") or a parameter's word ("next").
        let said = (matches.strong | matches.synonym) & !asked.naming_bits & asked.expected_bits;
        let mut relevance = judged.relevance;
        if said == 0 || !asked.named.contains(&self.toolkit_of[d]) {
            if judged.coverage < MIN_COVERAGE {
                return None;
            }
            if judged.coverage < SURE_COVERAGE && relevance < self.min_score() {
                return None;
            }
            if !asked.named.is_empty() {
                relevance *= 1.0 - OTHER_TOOLKIT_PENALTY;
            }
        }
        Some(relevance)
    }

    /// The least relevance of a tool covering less than [`SURE_COVERAGE`] of the request.
    pub(crate) fn min_score(&self) -> f32 {
        MIN_SCORE * self.unseen_idf
    }

    /// An admitted tool's relevance, raised when it does what the request asks or is about the
    /// caller's own things, lowered when it does something else or is deprecated.
    pub(crate) fn boost(&self, asked: &Asked, d: usize, mut relevance: f32) -> f32 {
        let (does, wants) = (self.actions[d], asked.wanted);
        if self.rules.actions {
            if does.intersects(wants) {
                relevance *= 1.0 + ACTION_BONUS;
            } else if !wants.is_empty() && !does.is_empty() {
                relevance *= 1.0 - ACTION_PENALTY;
            }
        }
        if self.rules.deprecated && self.deprecated[d] {
            relevance *= 1.0 - DEPRECATED_PENALTY;
        }
        relevance
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

/// A request, read against the index (see [`SearchIndex::analyse`]).
#[derive(Debug)]
pub(crate) struct Asked {
    /// Its distinct terms, first occurrence first: bit `i` of a mask stands for `terms[i]`.
    pub(crate) terms: Vec<QueryTerm>,
    /// The terms to look up: words, then joins, then synonyms.
    pub(crate) known: Vec<Known>,
    /// The term number of each of `known`.
    query_terms: Vec<u32>,
    /// The IDF mass of the expected (non-value) words.
    pub(crate) expected: f32,
    /// What each term weighs in coverage (nothing for a value or a join).
    pub(crate) bit_idf: [f32; MAX_QUERY_TERMS],
    /// The bits of the words a tool is expected to match (not values).
    expected_bits: u64,
    /// The toolkits the request names, and the bits of the words that name them.
    named: Vec<u32>,
    naming_bits: u64,
    /// Only tools of this toolkit, when the search is filtered.
    only: Option<u32>,
    /// What the request asks to do.
    pub(crate) wanted: Actions,
    pub(crate) lexical: Lexical,
}

impl Asked {
    /// The share of the request's informative words `matches` covers, by IDF: fully in the
    /// tool's name, toolkit, description or path, less in its parameters, by a synonym or only
    /// in what it answers.
    fn coverage(&self, matches: &Matches) -> f32 {
        if self.expected > 0.0 {
            let bit_idf = &self.bit_idf;
            let weak = covered(matches.any & !matches.strong, bit_idf);
            let synonyms = covered(matches.synonym & !matches.any, bit_idf);
            let answers = covered(matches.output & !(matches.any | matches.synonym), bit_idf);
            (covered(matches.strong, bit_idf)
                + WEAK_MATCH_COVERAGE * weak
                + SYNONYM_WEIGHT * synonyms
                + OUTPUT_COVERAGE * answers)
                / self.expected
        } else {
            // Only values were asked for: any match is as good as it gets.
            1.0
        }
    }

    /// The terms whose bits are in `mask`.
    pub(crate) fn words(&self, mask: u64) -> Vec<String> {
        (self.terms.iter().enumerate())
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, t)| t.term.clone())
            .collect()
    }
}

/// The request's words weighed (see [`SearchIndex::weigh`]).
struct Weighed {
    known: Vec<Known>,
    expected: f32,
    bit_idf: [f32; MAX_QUERY_TERMS],
    unknown_product: bool,
}

/// A query term the index has, and the query words it stands for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Known {
    pub(crate) term: u32,
    idf: f32,
    /// Bit `i`: it stands for the query's term `i` (several for a joined term or a phrase).
    bits: u64,
    pub(crate) source: Source,
}

/// Whence a [`Known`] term comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
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

/// What the postings of a request's terms gave every tool (see [`SearchIndex::accumulate`]).
#[derive(Debug)]
pub(crate) struct Tally {
    /// Per tool, in position order.
    pub(crate) matches: Vec<Matches>,
    /// The tools any posting reached, each once, in the order reached (a synonym found only in
    /// a tool's output leaves every mask as it was, so the masks cannot tell).
    touched: Vec<u32>,
    /// Per tool: whether it is in `touched`.
    pub(crate) reached: Vec<bool>,
}

/// What one tool matched of a request.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Matches {
    /// BM25F: the IDF-weighted postings added up.
    pub(crate) score: f32,
    /// Bits of the terms it matched in its name, toolkit, description, path or parameters
    /// (the words themselves or their joins, not synonyms).
    pub(crate) any: u64,
    /// Bits of the terms it matched in its name, toolkit, description or path.
    pub(crate) strong: u64,
    /// Bits of the terms it matched only in its output.
    output: u64,
    /// Bits of the terms it matched only by a synonym.
    pub(crate) synonym: u64,
}

impl Matches {
    /// One posting of `known` for this tool, with its `weight` and where it was `found`.
    fn add(&mut self, known: &Known, weight: f32, found: Evidence) {
        let bits = known.bits;
        if known.source == Source::Joined && self.any & bits == bits {
            return;
        }
        if found == Evidence::Output {
            if known.source != Source::Synonym {
                self.output |= bits;
            }
            self.score += known.idf * weight;
            return;
        }
        if known.source == Source::Synonym {
            if (self.any | self.synonym) & bits != 0 {
                return;
            }
            self.synonym |= bits;
        } else {
            self.any |= bits;
            if found == Evidence::Strong {
                self.strong |= bits;
            }
        }
        self.score += known.idf * weight;
    }
}

/// Whether [`SearchIndex::scored`] applies the relevance gate.
#[derive(Debug, Clone, Copy)]
enum Gate {
    /// Only tools the gate admits, their relevance lowered as it says (the search path).
    Admit,
    /// Every tool reached, at its judged relevance (research on the gate).
    Open,
}

/// How one tool stands before the relevance gate (see [`SearchIndex::judge`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Judged {
    pub(crate) coverage: f32,
    /// The share of the tool's name the request says.
    pub(crate) name: f32,
    pub(crate) relevance: f32,
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
