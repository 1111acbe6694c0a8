//! Tool search: an index derived from the catalog's definitions, for the `search_tools` MCP
//! meta-tool. It ranks; it never decides what may be called (DESIGN §8). No I/O: it is built
//! from definitions in memory and answers from memory, so the caller rebuilds it with the
//! catalog and swaps both at once.
//!
//! **Ranking.** BM25F over seven fields of each tool (toolkit, tool name, description, the
//! literal segments of an HTTP path, parameter names, parameter descriptions, the output's
//! property names; see `document`), with identifier splitting and English stemming
//! (`tokenize`); a toolkit named in one word (`Petstore`) also holds the words it is made of
//! (`compound`). Term frequencies are weighted per field and length-normalised per
//! field before BM25's saturation, so a word in a tool's name outweighs the same word repeated
//! in a long description. The score is then scaled by the query's *coverage*: the share of its
//! informative (IDF-weighted) words the tool matches, so a tool matching most of what was asked
//! beats one matching a single rare word many times.
//!
//! **Other words for the same thing.** A request's word also matches its synonyms in general
//! API vocabulary ("remove" → "delete", "sign in" → "login", "allow list" → "whitelist"; see
//! `synonyms`), as weaker evidence than the word itself. **What the tool does.** Siblings
//! that share every noun (`ListJobs`, `GetJob`, `CreateJob`) are told apart by their action
//! (from the HTTP method and path, or the verbs of an MCP tool's name) against what the request
//! asks ("… by id", "every …", "remove …"; see `action`). A response format glued to the
//! path (`/script_tags.json`, `/Accounts{mediaTypeExtension}`) is not what the tool acts on, an
//! RPC-style `POST …/list` lists, and a question ("which … are allowed?") asks to read or list
//! unless it names a change. A request that opens with a verb asks what that verb says; its
//! later verb-like words are nouns ("replace the list of users"). A tool that says it is
//! deprecated ranks below the one that replaces it. Parameters' allowed values are indexed with
//! their descriptions ("pending or sold" finds a `status` filter).
//!
//! **What each rule is worth** with the model in place, on held-out requests only (`search_eval
//! --without RULE`, bench/search/README.md): the actions, synonyms and the name bonus each put
//! the right tool first 5–12 points more often; the product veto leaves most unanswerable
//! requests empty; a request's "my" preferring `/me/…` tools changed no result on any set and
//! was removed.
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
//! it does not serve: "a Shopify discount code") counts double its IDF. See `query`.
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
mod explain;
mod fusion;
mod index;
mod model;
pub mod parts;
mod products;
mod query;
mod rank;
pub mod semantic;
mod synonyms;
mod tokenize;
mod vocab;

#[cfg(test)]
mod tests;

use std::collections::HashMap;

pub use explain::{LexicalExplanation, TermWeight, ToolScore};
pub use fusion::{Answer, Bars, EmbedParts, Explanation, Found, Meaning};
pub use model::{MAX_TOKENS, Model, ModelError, threads_setting};
pub use semantic::{Quantized, Vectors, tool_text, tool_text_with};

use action::Actions;
use tokenize::Tokenizer;

/// Where a term occurs in a tool, at best (see `SearchIndex::evidence`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Evidence {
    /// Only in what the tool answers: weak evidence (see `OUTPUT_COVERAGE` in `rank.rs`).
    Output,
    /// In its parameters.
    Input,
    /// In its name, toolkit, description or path: about the tool itself.
    Strong,
}
/// The longest request read, in characters; the rest is ignored. A search request is a
/// sentence or two, and reading one costs time that grows faster than its length (synonym
/// phrases, distinct terms), so a client must not be able to send a book.
pub const MAX_QUERY_CHARS: usize = 1_000;
/// Which tools a search may answer with: those of one toolkit, and those a predicate over
/// positions allows (a caller's view under the bridge's policies). Applied inside the rankers,
/// before `limit` is taken, so a restricted search still returns up to `limit` tools.
#[derive(Clone, Copy, Default)]
pub struct Scope<'a> {
    /// Only tools of this toolkit (case-insensitive).
    pub toolkit: Option<&'a str>,
    /// Only tools at positions this allows.
    pub allowed: Option<&'a (dyn Fn(usize) -> bool + Sync)>,
}

impl std::fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("toolkit", &self.toolkit)
            .field("allowed", &self.allowed.is_some())
            .finish()
    }
}

impl Scope<'_> {
    /// Whether the tool at `position` may be answered with (its toolkit is checked apart).
    pub(crate) fn allows(&self, position: usize) -> bool {
        self.allowed.is_none_or(|allowed| allowed(position))
    }
}

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
    /// Where the term occurs in the tool, per posting.
    evidence: Vec<Evidence>,
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
    /// The words that name toolkits (see `NAMING_TOOLKITS` in `index.rs`), sorted by term, with the
    /// toolkit each names (a word naming several appears once per toolkit).
    naming: Vec<(u32, u32)>,
    /// The IDF of a term no tool has.
    unseen_idf: f32,
    /// Which lexical rules apply (all, but in `search_eval --without`).
    rules: Rules,
}

/// Which of the lexical ranker's rules apply: all of them, except when `search_eval --without
/// RULE` measures what one is worth with the model in place (bench/search/README.md). Not a
/// setting: the bridge always uses them all.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// A request's words also match their synonyms (`synonyms`).
    pub synonyms: bool,
    /// A tool that does what the request asks (lists, reads, creates…) ranks above its
    /// siblings (`action`).
    pub actions: bool,
    /// A deprecated tool ranks below its replacement.
    pub deprecated: bool,
    /// A tool whose own name the request says ranks higher.
    pub name_bonus: bool,
    /// A request that names a toolkit is about it.
    pub toolkit_named: bool,
    /// A product the catalog lacks, named in the request, weighs against every tool and vetoes
    /// the model ([`crate::products`]).
    pub products: bool,
}

impl Default for Rules {
    fn default() -> Self {
        Self {
            synonyms: true,
            actions: true,
            deprecated: true,
            name_bonus: true,
            toolkit_named: true,
            products: true,
        }
    }
}

impl Rules {
    /// The rules but the one named (`synonyms`, `actions`, `deprecated`, `name-bonus`,
    /// `toolkit-named`, `products`); `None` for another name.
    pub fn without(mut self, rule: &str) -> Option<Self> {
        let off = match rule {
            "synonyms" => &mut self.synonyms,
            "actions" => &mut self.actions,
            "deprecated" => &mut self.deprecated,
            "name-bonus" => &mut self.name_bonus,
            "toolkit-named" => &mut self.toolkit_named,
            "products" => &mut self.products,
            _ => return None,
        };
        *off = false;
        Some(self)
    }
}

impl SearchIndex {
    /// The index with only `rules` applied (research: `search_eval --without`).
    #[doc(hidden)]
    pub fn with_rules(mut self, rules: Rules) -> Self {
        self.rules = rules;
        self
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
            + self.evidence.capacity() * size_of::<Evidence>()
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
