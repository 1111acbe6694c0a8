//! Tool search: an index derived from the catalog's definitions, for the `search_tools` MCP
//! meta-tool. It ranks; it never decides what may be called (DESIGN §8). No I/O: it is built
//! from definitions in memory and answers from memory, so the caller rebuilds it with the
//! catalog and swaps both at once.
//!
//! **Ranking.** BM25F over seven fields of each tool (toolkit, tool name, description, the
//! literal segments of an HTTP path, parameter names, parameter descriptions, the output's
//! property names; see [`document`]), with identifier splitting and English stemming
//! ([`tokenize`]); a toolkit named in one word (`Petstore`) also holds the words it is made of
//! ([`compound`]). Term frequencies are weighted per field and length-normalised per
//! field before BM25's saturation, so a word in a tool's name outweighs the same word repeated
//! in a long description. The score is then scaled by the query's *coverage*: the share of its
//! informative (IDF-weighted) words the tool matches, so a tool matching most of what was asked
//! beats one matching a single rare word many times.
//!
//! **Other words for the same thing.** A request's word also matches its synonyms in general
//! API vocabulary ("remove" → "delete", "sign in" → "login", "allow list" → "whitelist"; see
//! [`synonyms`]), as weaker evidence than the word itself. **What the tool does.** Siblings
//! that share every noun (`ListJobs`, `GetJob`, `CreateJob`) are told apart by their action
//! (from the HTTP method and path, or the verbs of an MCP tool's name) against what the request
//! asks ("… by id", "every …", "remove …"; see [`action`]). A response format glued to the
//! path (`/script_tags.json`, `/Accounts{mediaTypeExtension}`) is not what the tool acts on, an
//! RPC-style `POST …/list` lists, and a question ("which … are allowed?") asks to read or list
//! unless it names a change. A request that opens with a verb asks what that verb says; its
//! later verb-like words are nouns ("replace the list of users"). A request about "my" things prefers the tools about the caller's
//! own (`/me/…`, `/users/self`). A tool that says it is deprecated ranks below the one that
//! replaces it. Parameters' allowed values are
//! indexed with their descriptions ("pending or sold" finds a `status` filter).
//!
//! **A request that names a product** (a word of a toolkit's name that the rest of the catalog
//! hardly uses: "in Stride", "ask Wolfram|Alpha") is about that toolkit: its tools that match
//! another word of the request in their name, description or path pass the relevance gate,
//! other toolkits' tools rank lower, and other capitalised words it does not know are values
//! ("Mars"), not services the catalog lacks. The product's name alone finds nothing.
//!
//! **Nothing relevant → nothing.** A tool is a hit only when it covers enough of the query's
//! informative words and, when it covers less than half of them, also scores well. A word the
//! catalog has never seen counts against every tool at half its IDF (it may only be phrased
//! differently), unless it is a value (quoted, with digits, or a path, address or identifier);
//! a capitalised word inside the sentence that the catalog has never seen (a product or service
//! it does not serve: "a Shopify discount code") counts double its IDF. See [`query`].
//! Unrelated requests still match a few common words ("create", "list", "folder"); those
//! carry little IDF, so neither bar is met.
//!
//! The tuning (field weights, thresholds, the name bonus) was chosen on the development set in
//! ../shared/search with `bench/search/run.sh`; every rule is about words and fields in
//! general, none about that set's sentences.
//!
//! **Why no crate ranks.** The `bm25` crate scores one text per document (no fields), keeps
//! IDF private, and scores a candidate by scanning its token list per query term; tantivy has
//! fields and BM25 but no per-document view of which query words matched (what coverage and the
//! none threshold need), and it alone took four minutes to build in release on two cores. The
//! ranker here is a few hundred lines over flat posting arrays; stemming is `rust-stemmers`.

mod action;
mod compound;
mod document;
mod fusion;
mod model;
pub mod parts;
mod query;
pub mod semantic;
mod synonyms;
mod tokenize;

#[cfg(test)]
mod tests;

use std::collections::HashMap;

use otc_mappings::MappedTool;

pub use fusion::{Answer, Bars, Explanation, Found, Meaning};
pub use model::{MAX_TOKENS, Model, ModelError};
pub use semantic::{Quantized, Vectors, tool_text};

use action::Actions;
use document::{Document, FIELDS, Field};
use query::QueryTerm;
use tokenize::Tokenizer;

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
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
/// deletes; see [`action`]): `score × (1 + ACTION_BONUS)`, and the cost for one that does
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
/// A word names toolkits (`twilio`, `stride`) when it is in the names of at most this many
/// toolkits and at least [`NAMING_SHARE`] of the tools that have it are theirs: a word of the
/// toolkit's name that the rest of the catalog hardly uses (not `api`, not `event`).
const NAMING_TOOLKITS: usize = 3;
const NAMING_SHARE: f32 = 0.8;
/// A request that names toolkits is about them: a tool of another toolkit ranks lower
/// (`score × (1 - OTHER_TOOLKIT_PENALTY)`).
const OTHER_TOOLKIT_PENALTY: f32 = 0.5;
/// Where a term occurs in a tool (see `SearchIndex::evidence`).
const STRONG: u8 = 2;
const INPUT: u8 = 1;
/// Only in what the tool answers: weak evidence (see [`OUTPUT_COVERAGE`]).
const OUTPUT: u8 = 0;
/// The longest request read, in characters; the rest is ignored. A search request is a
/// sentence or two, and reading one costs time that grows faster than its length (synonym
/// phrases, distinct terms), so a client must not be able to send a book.
pub const MAX_QUERY_CHARS: usize = 1_000;
/// Query terms considered at most (the rest of a very long query is ignored; the bit sets that
/// record which terms a tool matched are 64 bits wide).
const MAX_QUERY_TERMS: usize = 64;

/// One search result: a tool by its position in the definitions the index was built from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The tool's position in the iteration order given to [`SearchIndex::build`].
    pub position: usize,
    /// Relevance; higher is better. Comparable only within one search.
    pub score: f32,
}

/// The search index over one catalog's tools.
#[derive(Debug)]
pub struct SearchIndex {
    tokenizer: Tokenizer,
    /// Term → term number.
    vocabulary: HashMap<Box<str>, u32>,
    /// IDF of each term.
    idf: Vec<f32>,
    /// Postings of term `t`: `docs[starts[t]..starts[t + 1]]`, in position order, with the
    /// BM25F term weight (saturated, before IDF) of each in `weights`.
    starts: Vec<u32>,
    docs: Vec<u32>,
    weights: Vec<f32>,
    /// Where the term occurs in the tool, per posting: its name, toolkit or description
    /// ([`STRONG`]), else its parameters ([`INPUT`]), else only its output ([`OUTPUT`]).
    evidence: Vec<u8>,
    /// The terms of each tool's name (`ReposGet` → `repo`, `get`): `name_terms[name_starts[d]..
    /// name_starts[d + 1]]`.
    name_starts: Vec<u32>,
    name_terms: Vec<u32>,
    /// Each tool's toolkit, as a number into `toolkits`.
    toolkit_of: Vec<u32>,
    /// What each tool does ([`action`]).
    actions: Vec<Actions>,
    /// Whether each tool says it is deprecated.
    deprecated: Vec<bool>,
    /// Toolkit names, lowercased.
    toolkits: Vec<Box<str>>,
    /// The words that name toolkits (see [`NAMING_TOOLKITS`]), sorted by term, with the
    /// toolkit each names (a word naming several appears once per toolkit).
    naming: Vec<(u32, u32)>,
    /// The IDF of a term no tool has.
    unseen_idf: f32,
}

impl SearchIndex {
    /// Indexes `tools` in iteration order; [`Hit::position`] refers to that order.
    pub fn build<'a>(tools: impl IntoIterator<Item = &'a MappedTool>) -> Self {
        let tokenizer = Tokenizer::default();
        let mut vocabulary: HashMap<Box<str>, u32> = HashMap::new();
        let mut toolkit_numbers: HashMap<String, u32> = HashMap::new();
        let mut toolkits: Vec<Box<str>> = Vec::new();
        let mut toolkit_of = Vec::new();
        let mut actions = Vec::new();
        let mut deprecated = Vec::new();
        // Per tool: (term, occurrences per field), and the length of each field in terms.
        let mut counted: Vec<Vec<(u32, [u16; FIELDS])>> = Vec::new();
        let mut lengths: Vec<[u32; FIELDS]> = Vec::new();
        let mut name_starts: Vec<u32> = Vec::new();
        let mut name_terms: Vec<u32> = Vec::new();
        // The words of each toolkit's name: (term, toolkit).
        let mut toolkit_words: Vec<(u32, u32)> = Vec::new();
        let mut compounds = compound::Compounds::default();
        for tool in tools {
            let name_start = name_terms.len();
            let lower = tool.definition.id.toolkit.to_lowercase();
            let next = toolkits.len() as u32;
            let number = *toolkit_numbers.entry(lower.clone()).or_insert_with(|| {
                toolkits.push(lower.into_boxed_str());
                next
            });
            toolkit_of.push(number);
            compounds.read_toolkit(number, &tool.definition.id.toolkit);
            let mut counts: HashMap<u32, [u16; FIELDS]> = HashMap::new();
            let mut length = [0u32; FIELDS];
            name_starts.push(name_terms.len() as u32);
            let document = Document::of(tool);
            actions.push(document.actions);
            deprecated.push(document.deprecated);
            for (field, text) in document.texts {
                let f = field as usize;
                if field == Field::Description {
                    compounds.read_description(&text);
                }
                tokenizer.tokens(&text, false, |token| {
                    let next = vocabulary.len() as u32;
                    let term = *vocabulary
                        .entry(token.term.into_boxed_str())
                        .or_insert(next);
                    let slot = &mut counts.entry(term).or_default()[f];
                    *slot = slot.saturating_add(1);
                    if field == Field::Toolkit && !token.joined {
                        toolkit_words.push((term, number));
                    }
                    if !token.joined {
                        length[f] += 1;
                        if field == Field::Name && !name_terms[name_start..].contains(&term) {
                            name_terms.push(term);
                        }
                    }
                });
            }
            let mut counts: Vec<(u32, [u16; FIELDS])> = counts.into_iter().collect();
            counts.sort_unstable_by_key(|(term, _)| *term);
            counted.push(counts);
            lengths.push(length);
        }

        // A toolkit named in one word (`SwaggerPetstore`, `Bufferapp`) also holds the words it
        // is made of, as its docs and its users write them. They do not name the toolkit
        // (`store` is not the petstore), the whole word does.
        let splits = compounds.split();
        drop(compounds);
        let toolkit = Field::Toolkit as usize;
        for split in &splits {
            let parts = [&split.first, &split.second].map(|part| {
                let next = vocabulary.len() as u32;
                *vocabulary
                    .entry(tokenizer.stem(part).into_boxed_str())
                    .or_insert(next)
            });
            for (counts, _) in counted
                .iter_mut()
                .zip(&toolkit_of)
                .filter(|(_, k)| **k == split.toolkit)
            {
                for term in parts {
                    match counts.binary_search_by_key(&term, |(t, _)| *t) {
                        Ok(at) => counts[at].1[toolkit] = counts[at].1[toolkit].saturating_add(1),
                        Err(at) => {
                            let mut tf = [0u16; FIELDS];
                            tf[toolkit] = 1;
                            counts.insert(at, (term, tf));
                        }
                    }
                }
            }
        }

        let n = counted.len().max(1) as f32;
        let mut average = [0f32; FIELDS];
        for length in &lengths {
            for f in 0..FIELDS {
                average[f] += length[f] as f32 / n;
            }
        }
        // Postings, built term by term from the per-tool counts (tools in order, so each list
        // is sorted by position).
        let mut per_term: Vec<Vec<(u32, f32, u8)>> = vec![Vec::new(); vocabulary.len()];
        // Per term: the tools that have it only in their output schema.
        let mut output_only: Vec<u32> = vec![0; vocabulary.len()];
        for (doc, (counts, length)) in counted.iter().zip(&lengths).enumerate() {
            for (term, tf) in counts {
                let mut weighted = 0.0;
                for field in Field::ALL {
                    let f = field as usize;
                    if tf[f] == 0 {
                        continue;
                    }
                    let b = field.length_norm();
                    let relative = if average[f] > 0.0 {
                        length[f] as f32 / average[f]
                    } else {
                        1.0
                    };
                    weighted += field.weight() * tf[f] as f32 / (1.0 - b + b * relative);
                }
                let saturated = weighted * (K1 + 1.0) / (weighted + K1);
                let has = |f: &Field| tf[*f as usize] > 0;
                let evidence = if Field::ALL.iter().any(|f| f.is_strong() && has(f)) {
                    STRONG
                } else if Field::ALL.iter().any(|f| *f != Field::Output && has(f)) {
                    INPUT
                } else {
                    output_only[*term as usize] += 1;
                    OUTPUT
                };
                per_term[*term as usize].push((doc as u32, saturated, evidence));
            }
        }
        drop(counted);
        toolkit_words.sort_unstable();
        toolkit_words.dedup();
        let mut naming = Vec::new();
        for named in toolkit_words.chunk_by(|a, b| a.0 == b.0) {
            let term = named[0].0;
            if named.len() > NAMING_TOOLKITS {
                continue;
            }
            let postings = &per_term[term as usize];
            let inside = postings
                .iter()
                .filter(|(doc, _, _)| named.iter().any(|&(_, k)| toolkit_of[*doc as usize] == k))
                .count();
            if inside as f32 >= NAMING_SHARE * postings.len() as f32 {
                naming.extend_from_slice(named);
            }
        }
        naming.shrink_to_fit();
        let total: usize = per_term.iter().map(Vec::len).sum();
        let mut starts = Vec::with_capacity(per_term.len() + 1);
        let mut docs = Vec::with_capacity(total);
        let mut weights = Vec::with_capacity(total);
        let mut evidence = Vec::with_capacity(total);
        let mut idf = Vec::with_capacity(per_term.len());
        for (postings, output_only) in per_term.into_iter().zip(output_only) {
            starts.push(docs.len() as u32);
            // What a tool answers hints at it but does not make a word common: `name` or
            // `status` in every response must not weigh down a request's `status`.
            let df = (postings.len() - output_only as usize) as f32;
            idf.push(bm25_idf(n, df));
            for (doc, weight, found) in postings {
                docs.push(doc);
                weights.push(weight);
                evidence.push(found);
            }
        }
        starts.push(docs.len() as u32);
        name_starts.push(name_terms.len() as u32);
        name_terms.shrink_to_fit();
        vocabulary.shrink_to_fit();
        toolkits.shrink_to_fit();
        toolkit_of.shrink_to_fit();
        Self {
            tokenizer,
            vocabulary,
            idf,
            starts,
            docs,
            weights,
            evidence,
            name_starts,
            name_terms,
            toolkit_of,
            actions,
            deprecated,
            toolkits,
            naming,
            unseen_idf: bm25_idf(n, 0.0),
        }
    }

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

    fn rank(
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
                joined: true,
                ..Known::word(number, self.idf[number as usize], bits)
            });
        }
        for &(term, bits) in &synonyms {
            known.push(Known {
                term,
                idf: self.idf[term as usize] * SYNONYM_WEIGHT,
                bits,
                synonym: true,
                joined: false,
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
            synonym,
            joined,
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
                if joined && mask[d] & bits == bits {
                    continue;
                }
                if found == OUTPUT {
                    if !synonym {
                        output_mask[d] |= bits;
                    }
                    score[d] += idf * weight;
                    continue;
                }
                if synonym {
                    if (mask[d] | synonym_mask[d]) & bits != 0 {
                        continue;
                    }
                    synonym_mask[d] |= bits;
                } else {
                    mask[d] |= bits;
                    if found == STRONG {
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
                    "score {:.2} coverage {coverage:.2} name {:.2} relevance {relevance:.2} (bar {:.2} below coverage {SURE_COVERAGE}) strong {:?} weak {:?} synonym {:?} action does {:#x} wants {:#x}",
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
            let (does, wants) = (self.actions[d] & action::DOES, wanted & action::DOES);
            if does & wants != 0 {
                relevance *= 1.0 + ACTION_BONUS;
            } else if wants != 0 && does != 0 {
                relevance *= 1.0 - ACTION_PENALTY;
            }
            if self.actions[d] & wanted & action::MINE != 0 {
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
            .contains(&STRONG)
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

    /// Approximate heap bytes held by the index (for the benchmark's memory figure).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        // A hash map entry: the key and value, one control byte, at the table's capacity.
        let vocabulary = self.vocabulary.capacity() * (size_of::<(Box<str>, u32)>() + 1)
            + self.vocabulary.keys().map(|k| k.len()).sum::<usize>();
        vocabulary
            + self.idf.capacity() * size_of::<f32>()
            + self.starts.capacity() * size_of::<u32>()
            + self.docs.capacity() * size_of::<u32>()
            + self.weights.capacity() * size_of::<f32>()
            + self.evidence.capacity()
            + self.name_starts.capacity() * size_of::<u32>()
            + self.name_terms.capacity() * size_of::<u32>()
            + self.toolkit_of.capacity() * size_of::<u32>()
            + self.actions.capacity() * size_of::<Actions>()
            + self.deprecated.capacity()
            + self.toolkits.capacity() * size_of::<Box<str>>()
            + self.toolkits.iter().map(|t| t.len()).sum::<usize>()
            + self.naming.capacity() * size_of::<(u32, u32)>()
    }
}

/// What the lexical ranker learnt of a request besides its hits.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Lexical {
    /// The request names a product or service (a capitalised word inside the sentence) that no
    /// toolkit, tool name or description of the catalog has: what it asks is not served here.
    pub(crate) unknown_product: bool,
}

/// A query term the index has, and the query words it stands for.
#[derive(Debug, Clone, Copy)]
struct Known {
    term: u32,
    idf: f32,
    /// Bit `i`: it stands for the query's term `i` (several for a joined term or a phrase).
    bits: u64,
    /// A synonym of the query's words rather than one of them.
    synonym: bool,
    /// Two of the query's words joined (`pet store` → `petstore`): evidence only for a tool
    /// that does not already have both words apart.
    joined: bool,
}

impl Known {
    fn word(term: u32, idf: f32, bits: u64) -> Self {
        Self {
            term,
            idf,
            bits,
            synonym: false,
            joined: false,
        }
    }
}

/// Robertson–Spärck Jones IDF as BM25 uses it (never negative).
fn bm25_idf(n: f32, df: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
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
