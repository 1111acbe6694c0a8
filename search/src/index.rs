//! Building the index, in phases: read each tool's text into term counts per field
//! ([`Read`]), add the words of toolkit names written as one word, weigh the counts into
//! BM25F postings ([`Postings`]), find the words that name toolkits, and lay the postings flat.

use std::collections::HashMap;

use otc_mappings::MappedTool;

use super::action::Actions;
use super::compound::{Compounds, Split};
use super::document::{Document, FIELDS, Field};
use super::tokenize::{Stems, Tokenizer};
use super::{Evidence, SearchIndex};

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// A word names toolkits (`twilio`, `stride`) when it is in the names of at most this many
/// toolkits and at least [`NAMING_SHARE`] of the tools that have it are theirs: a word of the
/// toolkit's name that the rest of the catalog hardly uses (not `api`, not `event`).
const NAMING_TOOLKITS: usize = 3;
const NAMING_SHARE: f32 = 0.8;

/// A term's occurrences in one tool, per field.
type Counts = [u16; FIELDS];
/// A term's postings before they are laid flat: (tool, BM25F weight, where it occurs).
type Posting = (u32, f32, Evidence);

impl SearchIndex {
    /// Indexes `tools` in iteration order; [`Hit::position`](crate::Hit::position) refers to that
    /// order.
    pub fn build<'a>(tools: impl IntoIterator<Item = &'a MappedTool>) -> Self {
        let tokenizer = Tokenizer::default();
        let mut read = Read::default();
        let mut compounds = Compounds::default();
        for tool in tools {
            read.tool(&tokenizer, &mut compounds, tool);
        }
        let splits = compounds.split();
        drop(compounds);
        read.add_compound_parts(&tokenizer, &splits);
        let Read {
            mut vocabulary,
            mut toolkits,
            mut toolkit_of,
            actions,
            deprecated,
            counted,
            lengths,
            mut name_starts,
            mut name_terms,
            toolkit_words,
            ..
        } = read;
        let n = counted.len().max(1) as f32;
        let postings = Postings::weigh(&counted, &lengths, vocabulary.len());
        drop(counted);
        let naming = naming(toolkit_words, &postings.per_term, &toolkit_of);
        let flat = postings.flatten(n);
        name_starts.push(name_terms.len() as u32);
        name_terms.shrink_to_fit();
        vocabulary.shrink_to_fit();
        toolkits.shrink_to_fit();
        toolkit_of.shrink_to_fit();
        Self {
            tokenizer,
            vocabulary,
            idf: flat.idf,
            starts: flat.starts,
            docs: flat.docs,
            weights: flat.weights,
            evidence: flat.evidence,
            name_starts,
            name_terms,
            toolkit_of,
            actions,
            deprecated,
            toolkits,
            naming,
            unseen_idf: bm25_idf(n, 0.0),
            rules: crate::Rules::default(),
        }
    }
}

/// What reading the tools gathers, tool by tool, before anything is weighed.
#[derive(Default)]
struct Read {
    /// The stems of the words read so far.
    stems: Stems,
    /// Term → term number, in the order terms were first read.
    vocabulary: HashMap<Box<str>, u32>,
    /// Lowercased toolkit name → toolkit number.
    toolkit_numbers: HashMap<String, u32>,
    toolkits: Vec<Box<str>>,
    toolkit_of: Vec<u32>,
    actions: Vec<Actions>,
    deprecated: Vec<bool>,
    /// Per tool: (term, occurrences per field), sorted by term.
    counted: Vec<Vec<(u32, Counts)>>,
    /// Per tool: the length of each field in terms.
    lengths: Vec<[u32; FIELDS]>,
    name_starts: Vec<u32>,
    name_terms: Vec<u32>,
    /// The words of each toolkit's name: (term, toolkit).
    toolkit_words: Vec<(u32, u32)>,
}

impl Read {
    /// Reads one tool: its toolkit, what it does, and its terms counted per field.
    fn tool(&mut self, tokenizer: &Tokenizer, compounds: &mut Compounds, tool: &MappedTool) {
        let number = self.toolkit(&tool.definition.id.toolkit);
        self.toolkit_of.push(number);
        compounds.read_toolkit(number, &tool.definition.id.toolkit);
        self.name_starts.push(self.name_terms.len() as u32);
        let document = Document::of(tool);
        self.actions.push(document.actions);
        self.deprecated.push(document.deprecated);
        let mut counts: HashMap<u32, Counts> = HashMap::new();
        let mut length = [0u32; FIELDS];
        for (field, text) in document.texts {
            if field == Field::Description {
                compounds.read_description(&text);
            }
            self.field(tokenizer, (number, field), &text, &mut counts, &mut length);
        }
        let mut counts: Vec<(u32, Counts)> = counts.into_iter().collect();
        counts.sort_unstable_by_key(|(term, _)| *term);
        self.counted.push(counts);
        self.lengths.push(length);
    }

    /// The number of a toolkit, by its name in any case; a new name gets the next number.
    fn toolkit(&mut self, name: &str) -> u32 {
        let lower = name.to_lowercase();
        let next = self.toolkits.len() as u32;
        *self
            .toolkit_numbers
            .entry(lower.clone())
            .or_insert_with(|| {
                self.toolkits.push(lower.into_boxed_str());
                next
            })
    }

    /// Counts the terms of one field of the tool being read (of toolkit `toolkit`). A joined
    /// term (`github` from `GitHub`) counts as evidence but not towards the field's length,
    /// the toolkit's naming words or the name's terms: the words it joins do.
    fn field(
        &mut self,
        tokenizer: &Tokenizer,
        (toolkit, field): (u32, Field),
        text: &str,
        counts: &mut HashMap<u32, Counts>,
        length: &mut [u32; FIELDS],
    ) {
        let f = field as usize;
        let name_start = self.name_starts.last().map_or(0, |&start| start as usize);
        self.stems.tokens(tokenizer, text, false, |term, joined| {
            let term = match self.vocabulary.get(term) {
                Some(&known) => known,
                None => {
                    let next = self.vocabulary.len() as u32;
                    self.vocabulary.insert(term.into(), next);
                    next
                }
            };
            let slot = &mut counts.entry(term).or_default()[f];
            *slot = slot.saturating_add(1);
            if joined {
                return;
            }
            if field == Field::Toolkit {
                self.toolkit_words.push((term, toolkit));
            }
            length[f] += 1;
            if field == Field::Name && !self.name_terms[name_start..].contains(&term) {
                self.name_terms.push(term);
            }
        });
    }

    /// A toolkit named in one word (`SwaggerPetstore`, `Bufferapp`) also holds the words it
    /// is made of, as its docs and its users write them. They do not name the toolkit
    /// (`store` is not the petstore), the whole word does.
    fn add_compound_parts(&mut self, tokenizer: &Tokenizer, splits: &[Split]) {
        for split in splits {
            let parts = [&split.first, &split.second].map(|part| {
                let next = self.vocabulary.len() as u32;
                *self
                    .vocabulary
                    .entry(tokenizer.stem(part).into_boxed_str())
                    .or_insert(next)
            });
            for (counts, _) in self
                .counted
                .iter_mut()
                .zip(&self.toolkit_of)
                .filter(|(_, k)| **k == split.toolkit)
            {
                for term in parts {
                    count_in_toolkit(counts, term);
                }
            }
        }
    }
}

/// One more occurrence of `term` in a tool's toolkit field (`counts` sorted by term).
fn count_in_toolkit(counts: &mut Vec<(u32, Counts)>, term: u32) {
    let toolkit = Field::Toolkit as usize;
    match counts.binary_search_by_key(&term, |(t, _)| *t) {
        Ok(at) => counts[at].1[toolkit] = counts[at].1[toolkit].saturating_add(1),
        Err(at) => {
            let mut tf = [0u16; FIELDS];
            tf[toolkit] = 1;
            counts.insert(at, (term, tf));
        }
    }
}

/// The postings of every term, built term by term from the per-tool counts (tools in order,
/// so each list is sorted by position).
struct Postings {
    per_term: Vec<Vec<Posting>>,
    /// Per term: the tools that have it only in their output schema.
    output_only: Vec<u32>,
}

impl Postings {
    /// Weighs each tool's counts (BM25F: per field, length-normalised, then saturated).
    fn weigh(counted: &[Vec<(u32, Counts)>], lengths: &[[u32; FIELDS]], terms: usize) -> Self {
        let n = counted.len().max(1) as f32;
        let mut average = [0f32; FIELDS];
        for length in lengths {
            for f in 0..FIELDS {
                average[f] += length[f] as f32 / n;
            }
        }
        let mut per_term: Vec<Vec<Posting>> = vec![Vec::new(); terms];
        let mut output_only: Vec<u32> = vec![0; terms];
        for (doc, (counts, length)) in counted.iter().zip(lengths).enumerate() {
            for (term, tf) in counts {
                let evidence = evidence(tf);
                if evidence == Evidence::Output {
                    output_only[*term as usize] += 1;
                }
                let weight = saturated(tf, length, &average);
                per_term[*term as usize].push((doc as u32, weight, evidence));
            }
        }
        Self {
            per_term,
            output_only,
        }
    }

    /// The postings laid flat, term after term, with each term's IDF among `n` tools.
    fn flatten(self, n: f32) -> Flat {
        let total: usize = self.per_term.iter().map(Vec::len).sum();
        let mut flat = Flat {
            starts: Vec::with_capacity(self.per_term.len() + 1),
            docs: Vec::with_capacity(total),
            weights: Vec::with_capacity(total),
            evidence: Vec::with_capacity(total),
            idf: Vec::with_capacity(self.per_term.len()),
        };
        for (postings, output_only) in self.per_term.into_iter().zip(self.output_only) {
            flat.starts.push(flat.docs.len() as u32);
            // What a tool answers hints at it but does not make a word common: `name` or
            // `status` in every response must not weigh down a request's `status`.
            let df = (postings.len() - output_only as usize) as f32;
            flat.idf.push(bm25_idf(n, df));
            for (doc, weight, found) in postings {
                flat.docs.push(doc);
                flat.weights.push(weight);
                flat.evidence.push(found);
            }
        }
        flat.starts.push(flat.docs.len() as u32);
        flat
    }
}

/// The postings as [`SearchIndex`] holds them (see its fields).
struct Flat {
    starts: Vec<u32>,
    docs: Vec<u32>,
    weights: Vec<f32>,
    evidence: Vec<Evidence>,
    idf: Vec<f32>,
}

/// A term's BM25F weight in one tool, saturated, before IDF: its occurrences per field, each
/// weighted by the field and normalised by the field's length against the `average`.
fn saturated(tf: &Counts, length: &[u32; FIELDS], average: &[f32; FIELDS]) -> f32 {
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
    weighted * (K1 + 1.0) / (weighted + K1)
}

/// Where a term with these counts occurs in the tool, at best.
fn evidence(tf: &Counts) -> Evidence {
    let has = |f: &Field| tf[*f as usize] > 0;
    if Field::ALL.iter().any(|f| f.is_strong() && has(f)) {
        Evidence::Strong
    } else if Field::ALL.iter().any(|f| *f != Field::Output && has(f)) {
        Evidence::Input
    } else {
        Evidence::Output
    }
}

/// The words that name toolkits (see [`NAMING_TOOLKITS`]), sorted by term, with the toolkit
/// each names, from the words of each toolkit's name.
fn naming(
    mut toolkit_words: Vec<(u32, u32)>,
    per_term: &[Vec<Posting>],
    toolkit_of: &[u32],
) -> Vec<(u32, u32)> {
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
    naming
}

/// Robertson–Spärck Jones IDF as BM25 uses it (never negative).
fn bm25_idf(n: f32, df: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}
