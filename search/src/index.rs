//! Building the index: each tool's text, field by field, into weighted postings.

use std::collections::HashMap;

use otc_mappings::MappedTool;

use super::document::{Document, FIELDS, Field};
use super::tokenize::Tokenizer;
use super::{Evidence, SearchIndex, compound};

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// A word names toolkits (`twilio`, `stride`) when it is in the names of at most this many
/// toolkits and at least [`NAMING_SHARE`] of the tools that have it are theirs: a word of the
/// toolkit's name that the rest of the catalog hardly uses (not `api`, not `event`).
const NAMING_TOOLKITS: usize = 3;
const NAMING_SHARE: f32 = 0.8;

impl SearchIndex {
    /// Indexes `tools` in iteration order; [`Hit::position`](crate::Hit::position) refers to that
    /// order.
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
        let mut per_term: Vec<Vec<(u32, f32, Evidence)>> = vec![Vec::new(); vocabulary.len()];
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
                    Evidence::Strong
                } else if Field::ALL.iter().any(|f| *f != Field::Output && has(f)) {
                    Evidence::Input
                } else {
                    output_only[*term as usize] += 1;
                    Evidence::Output
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
}

/// Robertson–Spärck Jones IDF as BM25 uses it (never negative).
fn bm25_idf(n: f32, df: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}
