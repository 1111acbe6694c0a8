//! Why the lexical ranker ranks a tool as it does for a request, as a value: the phases of
//! ranking ([`crate::rank`]) run again for one request and one tool, and what each found kept.
//! For tuning (`search_eval --explain`); ranking itself never builds one, so the hot loop
//! writes nothing down.

use std::fmt;

use super::SearchIndex;
use super::rank::{Asked, Matches, Source};

/// Why the lexical ranker ranks one tool as it does for one request (see
/// [`SearchIndex::explain`]; the fused view is [`crate::Explanation`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LexicalExplanation {
    /// The request's terms as read, each with what it weighs in coverage.
    pub terms: Vec<TermWeight>,
    /// The synonyms looked up for the request's words (stemmed), in the order looked up.
    pub synonyms: Vec<String>,
    /// The coverage weight of every expected word together: what a tool covering all covers.
    pub expected: f32,
    /// The IDF of a word no tool has.
    pub unseen_idf: f32,
    /// How the tool fared; `None` when no term of the request reached it.
    pub tool: Option<ToolScore>,
}

/// One term of a request (see [`LexicalExplanation::terms`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TermWeight {
    /// The stemmed term.
    pub term: String,
    /// A join of two adjacent words (`pet store` → `petstore`).
    pub joined: bool,
    /// A value (quoted, or with digits): never counted as missing.
    pub value: bool,
    /// Written with a capital inside the sentence: likely a product or service.
    pub proper: bool,
    /// What it weighs in coverage (nothing for values and joins).
    pub weight: f32,
}

/// How one tool fared for a request (see [`LexicalExplanation::tool`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolScore {
    /// BM25F: the postings of the request's terms added up, before coverage and bonuses.
    pub score: f32,
    /// The share of the request's informative words it covers.
    pub coverage: f32,
    /// The share of its name the request says.
    pub name: f32,
    /// Its relevance before the gate: the score shaped by coverage and name.
    pub relevance: f32,
    /// The relevance a tool covering less than half the request must reach.
    pub bar: f32,
    /// The request's terms it has in its name, toolkit, description or path.
    pub strong: Vec<String>,
    /// The request's terms it has only in its parameters.
    pub weak: Vec<String>,
    /// The request's terms it matched only by a synonym.
    pub synonym: Vec<String>,
    /// What the tool does (list, read, create, update, delete).
    pub does: String,
    /// What the request asks.
    pub wants: String,
    /// Its score among the hits, when the relevance gate admits it.
    pub admitted: Option<f32>,
}

impl SearchIndex {
    /// Why the tool at `position` ranks as it does for `query` (or is no hit): the request's
    /// terms and weights, and the tool's coverage, score and bonuses. For tuning
    /// (`search_eval --explain`); not an API.
    #[doc(hidden)]
    pub fn explain(&self, query: &str, position: usize) -> LexicalExplanation {
        let asked = self.analyse(query, None);
        let tool = (!asked.known.is_empty() && position < self.toolkit_of.len())
            .then(|| self.accumulate(&asked))
            .filter(|tally| tally.reached[position])
            .map(|tally| self.score_of(&asked, &tally.matches[position], position));
        let terms = (asked.terms.iter().enumerate())
            .map(|(i, t)| TermWeight {
                term: t.term.clone(),
                joined: t.joined,
                value: t.value,
                proper: t.proper,
                weight: asked.bit_idf.get(i).copied().unwrap_or(0.0),
            })
            .collect();
        let synonyms = (asked.known.iter())
            .filter(|known| known.source == Source::Synonym)
            .filter_map(|known| self.word_of(known.term))
            .collect();
        LexicalExplanation {
            terms,
            synonyms,
            expected: asked.expected,
            unseen_idf: self.unseen_idf,
            tool,
        }
    }

    /// Tool `d` through the phases that follow accumulation: judged, gated, boosted.
    fn score_of(&self, asked: &Asked, matches: &Matches, d: usize) -> ToolScore {
        let judged = self.judge(asked, matches, d);
        let admitted = (self.admit(asked, matches, d, &judged)).map(|r| self.boost(asked, d, r));
        ToolScore {
            score: matches.score,
            coverage: judged.coverage,
            name: judged.name,
            relevance: judged.relevance,
            bar: self.min_score(),
            strong: asked.words(matches.strong),
            weak: asked.words(matches.any & !matches.strong),
            synonym: asked.words(matches.synonym & !matches.any),
            does: format!("{:?}", self.actions[d]),
            wants: format!("{:?}", asked.wanted),
            admitted,
        }
    }

    /// The word of term number `term`: a scan of the vocabulary, fine for one explanation.
    fn word_of(&self, term: u32) -> Option<String> {
        (self.vocabulary.iter())
            .find(|(_, number)| **number == term)
            .map(|(word, _)| (**word).to_owned())
    }
}

/// Two lines: the request as read, then the tool's figures.
impl fmt::Display for LexicalExplanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let terms: Vec<String> = (self.terms.iter())
            .map(|t| {
                let flags: String = [(t.joined, 'j'), (t.value, 'v'), (t.proper, 'P')]
                    .iter()
                    .filter(|(on, _)| *on)
                    .map(|(_, flag)| *flag)
                    .collect();
                format!("{}{flags}={:.2}", t.term, t.weight)
            })
            .collect();
        writeln!(
            f,
            "terms [{}] synonyms {:?} expected {:.2} unseen {:.2}",
            terms.join(" "),
            self.synonyms,
            self.expected,
            self.unseen_idf
        )?;
        let Some(t) = &self.tool else {
            return writeln!(f, "no term of the request reaches the tool");
        };
        write!(
            f,
            "score {:.2} coverage {:.2} name {:.2} relevance {:.2} (bar {:.2} below half \
             coverage) strong {:?} weak {:?} synonym {:?} action does {} wants {}",
            t.score,
            t.coverage,
            t.name,
            t.relevance,
            t.bar,
            t.strong,
            t.weak,
            t.synonym,
            t.does,
            t.wants,
        )?;
        match t.admitted {
            Some(score) => writeln!(f, ": admitted, {score:.2}"),
            None => writeln!(f, ": not admitted"),
        }
    }
}
