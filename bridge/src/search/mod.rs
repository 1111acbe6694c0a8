//! Tool search: an index derived from the catalog's definitions, for the `search_tools` MCP
//! meta-tool. It ranks; it never decides what may be called (DESIGN §8). No I/O: it is built
//! from definitions in memory and answers from memory, so the caller rebuilds it with the
//! catalog and swaps both at once.
//!
//! **Ranking.** BM25F over five fields of each tool (toolkit, tool name, description, parameter
//! names, parameter descriptions; see [`document`]), with identifier splitting and English
//! stemming ([`tokenize`]). Term frequencies are weighted per field and length-normalised per
//! field before BM25's saturation, so a word in a tool's name outweighs the same word repeated
//! in a long description. The score is then scaled by the query's *coverage*: the share of its
//! informative (IDF-weighted) words the tool matches, so a tool matching most of what was asked
//! beats one matching a single rare word many times.
//!
//! **Nothing relevant → nothing.** A tool is a hit only when it covers enough of the query's
//! informative words. A word the catalog has never seen still counts against every tool (it is
//! as informative as a word can be), unless it is a value (quoted, or with digits); a
//! capitalised word inside the sentence that the catalog has never seen (a product or service it
//! does not serve: "a Shopify discount code") counts double. See [`query`].
//!
//! **Why no crate ranks.** The `bm25` crate scores one text per document (no fields), keeps
//! IDF private, and scores a candidate by scanning its token list per query term; tantivy has
//! fields and BM25 but no per-document view of which query words matched (what coverage and the
//! none threshold need), and it alone took four minutes to build in release on two cores. The
//! ranker here is a few hundred lines over flat posting arrays; stemming is `rust-stemmers`.

mod document;
mod query;
mod tokenize;

#[cfg(test)]
mod tests;

use std::collections::HashMap;

use otc_mappings::otc::ToolDefinition;

use document::{Document, FIELDS, Field};
use tokenize::Tokenizer;

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// How much coverage shapes the score: `score × coverage^COVERAGE_POWER`.
const COVERAGE_POWER: f32 = 2.0;
/// The least coverage of a query's informative words for a tool to be a hit.
const MIN_COVERAGE: f32 = 0.5;
/// How much an unknown capitalised word (a product the catalog does not serve) counts against
/// coverage, relative to an unknown plain word.
const UNKNOWN_PROPER_WEIGHT: f32 = 2.0;
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
    /// Each tool's toolkit, as a number into `toolkits`.
    toolkit_of: Vec<u32>,
    /// Toolkit names, lowercased.
    toolkits: Vec<Box<str>>,
    /// The IDF of a term no tool has.
    unseen_idf: f32,
}

impl SearchIndex {
    /// Indexes `tools` in iteration order; [`Hit::position`] refers to that order.
    pub fn build<'a>(tools: impl IntoIterator<Item = &'a ToolDefinition>) -> Self {
        let tokenizer = Tokenizer::default();
        let mut vocabulary: HashMap<Box<str>, u32> = HashMap::new();
        let mut toolkit_numbers: HashMap<String, u32> = HashMap::new();
        let mut toolkits: Vec<Box<str>> = Vec::new();
        let mut toolkit_of = Vec::new();
        // Per tool: (term, occurrences per field), and the length of each field in terms.
        let mut counted: Vec<Vec<(u32, [u16; FIELDS])>> = Vec::new();
        let mut lengths: Vec<[u32; FIELDS]> = Vec::new();
        for tool in tools {
            let lower = tool.id.toolkit.to_lowercase();
            let next = toolkits.len() as u32;
            let number = *toolkit_numbers.entry(lower.clone()).or_insert_with(|| {
                toolkits.push(lower.into_boxed_str());
                next
            });
            toolkit_of.push(number);
            let mut counts: HashMap<u32, [u16; FIELDS]> = HashMap::new();
            let mut length = [0u32; FIELDS];
            for (field, text) in Document::of(tool).texts {
                let f = field as usize;
                tokenizer.tokens(&text, false, |token| {
                    let next = vocabulary.len() as u32;
                    let term = *vocabulary
                        .entry(token.term.into_boxed_str())
                        .or_insert(next);
                    let slot = &mut counts.entry(term).or_default()[f];
                    *slot = slot.saturating_add(1);
                    if !token.joined {
                        length[f] += 1;
                    }
                });
            }
            let mut counts: Vec<(u32, [u16; FIELDS])> = counts.into_iter().collect();
            counts.sort_unstable_by_key(|(term, _)| *term);
            counted.push(counts);
            lengths.push(length);
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
        let mut per_term: Vec<Vec<(u32, f32)>> = vec![Vec::new(); vocabulary.len()];
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
                per_term[*term as usize].push((doc as u32, saturated));
            }
        }
        drop(counted);
        let total: usize = per_term.iter().map(Vec::len).sum();
        let mut starts = Vec::with_capacity(per_term.len() + 1);
        let mut docs = Vec::with_capacity(total);
        let mut weights = Vec::with_capacity(total);
        let mut idf = Vec::with_capacity(per_term.len());
        for postings in per_term {
            starts.push(docs.len() as u32);
            let df = postings.len() as f32;
            idf.push(bm25_idf(n, df));
            for (doc, weight) in postings {
                docs.push(doc);
                weights.push(weight);
            }
        }
        starts.push(docs.len() as u32);
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
            toolkit_of,
            toolkits,
            unseen_idf: bm25_idf(n, 0.0),
        }
    }

    /// Ranked hits, best first, at most `limit`; only tools of `toolkit` (case-insensitive)
    /// when given. Deterministic (ties broken by position). Empty when nothing is relevant
    /// enough.
    pub fn search(&self, query: &str, limit: usize, toolkit: Option<&str>) -> Vec<Hit> {
        if limit == 0 || self.toolkit_of.is_empty() {
            return Vec::new();
        }
        let only = match toolkit {
            Some(name) => {
                let lower = name.to_lowercase();
                match self.toolkits.iter().position(|t| **t == *lower) {
                    Some(number) => Some(number as u32),
                    None => return Vec::new(),
                }
            }
            None => None,
        };

        // Which query terms the index knows, how informative each is, and what a tool must
        // cover. Bit `i` of a tool's mask: it matched term `i`.
        let mut terms = query::terms(&self.tokenizer, query);
        terms.truncate(MAX_QUERY_TERMS);
        let mut known: Vec<(u32, f32, u64)> = Vec::new(); // (term, idf, bits it covers)
        let mut expected = 0.0f32; // IDF mass of the expected (non-value) words
        let mut bit_idf = [0.0f32; MAX_QUERY_TERMS];
        let mut unit_bits: Vec<(String, u64)> = Vec::new();
        for (i, term) in terms.iter().enumerate() {
            let bit = 1u64 << i;
            let number = self.vocabulary.get(term.term.as_str()).copied();
            if term.joined {
                continue;
            }
            unit_bits.push((term.term.clone(), bit));
            let idf = number.map_or(self.unseen_idf, |t| self.idf[t as usize]);
            if !term.value {
                let weight = if number.is_none() && term.proper {
                    UNKNOWN_PROPER_WEIGHT
                } else {
                    1.0
                };
                expected += idf * weight;
                bit_idf[i] = idf;
            }
            if let Some(t) = number {
                known.push((t, idf, bit));
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
            known.push((number, self.idf[number as usize], bits));
        }
        if known.is_empty() {
            return Vec::new();
        }

        let n = self.toolkit_of.len();
        let mut score = vec![0.0f32; n];
        let mut mask = vec![0u64; n];
        let mut touched: Vec<u32> = Vec::new();
        for &(term, idf, bits) in &known {
            let range =
                self.starts[term as usize] as usize..self.starts[term as usize + 1] as usize;
            for (&doc, &weight) in self.docs[range.clone()].iter().zip(&self.weights[range]) {
                let d = doc as usize;
                if only.is_some_and(|t| self.toolkit_of[d] != t) {
                    continue;
                }
                if mask[d] == 0 {
                    touched.push(doc);
                }
                score[d] += idf * weight;
                mask[d] |= bits;
            }
        }

        let mut hits: Vec<Hit> = Vec::new();
        for &doc in &touched {
            let d = doc as usize;
            let coverage = if expected > 0.0 {
                covered(mask[d], &bit_idf) / expected
            } else {
                // Only values were asked for: any match is as good as it gets.
                1.0
            };
            if coverage < MIN_COVERAGE {
                continue;
            }
            hits.push(Hit {
                position: d,
                score: score[d] * coverage.powf(COVERAGE_POWER),
            });
        }
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.position.cmp(&b.position))
        });
        hits.truncate(limit);
        hits
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
            + self.toolkit_of.capacity() * size_of::<u32>()
            + self.toolkits.capacity() * size_of::<Box<str>>()
            + self.toolkits.iter().map(|t| t.len()).sum::<usize>()
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
fn joined_parts(joined: &str, units: &[(String, u64)]) -> u64 {
    for (first, a) in units {
        if let Some(rest) = joined.strip_prefix(first.as_str()) {
            // Stemming may cut the joined word's end (`petstore` → `petstor`).
            let second = units.iter().find(|(second, _)| {
                !rest.is_empty() && (rest.starts_with(second.as_str()) || second.starts_with(rest))
            });
            if let Some((_, b)) = second {
                return a | b;
            }
        }
    }
    0
}
