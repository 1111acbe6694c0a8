//! Both rankers over one request: the lexical ranker ([`SearchIndex::search`]) and, when a
//! model has embedded the catalog, the semantic one ([`Vectors::nearest`]), fused by reciprocal
//! rank; a request that asks several things is split ([`parts`]) and each part answered.
//!
//! **Fusion.** A tool's fused score is `1 / (RRF_K + lexical rank) + SEMANTIC_WEIGHT /
//! (RRF_K + semantic rank)`, over each ranker's first [`CANDIDATES`]. Reciprocal-rank fusion
//! needs no calibration between BM25 scores and cosines, which move with the catalog and the
//! model; measured against a linear mix of normalised scores on the development set, it did as
//! well on the half it was tuned on and better on the other (bench/search/README.md).
//!
//! **Sure, unsure, nothing.** A part's answer is *sure* when one ranker is confident: the
//! lexical ranker admitted a tool (its relevance gate), or the closest tool's cosine reaches
//! [`Bars::cosine`] (or [`Bars::floor`] with a lead of [`Bars::lead`]). Below that, down to
//! [`Bars::unsure`], the model's closest tools are still the answer, marked unsure
//! ([`Found::sure`]): on requests phrased as people ask, the model's cosines for real
//! paraphrases overlap those of requests no tool serves, and an empty answer to a request the
//! catalog serves leaves an agent nowhere to go, where an unsure one costs it a look. Only
//! below that bar, or when the request names a product the catalog does not serve (see
//! [`crate::Lexical::unknown_product`]: a model finds something similar to anything, and "a
//! Shopify discount code" must not become another shop's coupons), is a part answered with
//! nothing.

use crate::semantic::Vectors;
use crate::{Hit, Scope, SearchIndex, parts};

/// Each ranker's candidates considered per part.
const CANDIDATES: usize = 50;
/// Semantic candidates further than this below the closest one are not voted for.
const SEMANTIC_SPAN: f32 = 0.2;
/// Reciprocal-rank fusion's constant: how flat the reward for rank is.
const RRF_K: f32 = 60.0;
/// The semantic ranker's vote against the lexical ranker's (which is 1).
const SEMANTIC_WEIGHT: f32 = 0.5;
/// When the semantic ranker alone is sure a tool fits (for the model the bridge ships;
/// calibrated on one half of the development set, see bench/search/README.md): the closest
/// tool's cosine reaches `cosine`, or reaches `floor` and leads the next tool by `lead`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bars {
    /// The cosine bar.
    pub cosine: f32,
    /// The bar on the closest tool's lead over the next one (with a cosine of at least
    /// `floor`): one tool standing out is a sure answer even at a modest cosine.
    pub lead: f32,
    /// The least cosine a lead counts with.
    pub floor: f32,
    /// The least cosine at which the model's closest tools are offered, marked unsure, when no
    /// bar above is met.
    pub unsure: f32,
}

/// Calibrated on the even half of the development set with `OTC_SEARCH_BARS` (bench/search):
/// any cosine bar from 0.40 to 0.66 left as many unanswerable requests empty there, and 0.5 put
/// the right tool first most often; a lead of 0.1 (tried: 0.1, 0.15, 0.2, with a floor of
/// 0.25) answered every answerable request there and left as many unanswerable ones empty. A
/// lead measured as deviations above the catalog's mean was dropped: in a small catalog it
/// cannot exceed √(tools − 1).
impl Default for Bars {
    fn default() -> Self {
        Self {
            cosine: 0.5,
            lead: 0.1,
            floor: 0.25,
            unsure: 0.25,
        }
    }
}

/// Embeds a request's parts (see [`Meaning::embed`]).
pub type EmbedParts<'a> = dyn Fn(&[&str]) -> Option<Vec<Vec<f32>>> + Sync + 'a;

/// The semantic side of a search: the catalog's vectors (in the index's positions) and the
/// model that embeds a request's part the same way.
pub struct Meaning<'a> {
    /// The tools' vectors.
    pub vectors: &'a Vectors,
    /// Embeds a request's parts, one vector each in order, in one pass of the model (a pass
    /// costs mostly the reading of its weights, so two parts cost little more than one);
    /// `None` when the model fails (the parts are then lexical only).
    pub embed: &'a EmbedParts<'a>,
    /// When the semantic ranker alone answers.
    pub bars: Bars,
}

impl std::fmt::Debug for Meaning<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meaning")
            .field("vectors", &self.vectors.present())
            .finish_non_exhaustive()
    }
}

/// One result of [`SearchIndex::find`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Found {
    /// The tool's position, as in [`Hit::position`].
    pub position: usize,
    /// The fused score (higher is better); comparable only within one part of one search.
    pub score: f32,
    /// Which part of the request it serves (an index into [`Answer::parts`]).
    pub part: usize,
    /// Whether a ranker is confident of its part's answer (see the module's doc): `false` when
    /// only the model's closest tools answer it, none of them close enough to be sure.
    pub sure: bool,
}

/// What a search found: the request's parts and the tools for them, interleaved by rank so the
/// first results cover every part.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    /// The parts the request was split into (one when it asks one thing).
    pub parts: Vec<String>,
    /// The tools, best first within each part, the parts taking turns.
    pub hits: Vec<Found>,
}

/// How one ranker saw one tool for one part (see [`SearchIndex::explain_fused`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Explanation {
    /// The part of the request.
    pub part: String,
    /// The lexical rank (1-based) and score, when the lexical ranker admitted the tool.
    pub lexical: Option<(usize, f32)>,
    /// The semantic rank (1-based) and cosine, when among the semantic candidates.
    pub semantic: Option<(usize, f32)>,
    /// The fused score, when the tool is a result for this part.
    pub fused: Option<f32>,
    /// Why the part is answered or not.
    pub verdict: &'static str,
}

impl SearchIndex {
    /// The tools for `query`, at most `limit`, from both rankers when `meaning` is given
    /// (else the lexical ranker alone, part by part); only tools `scope` allows.
    pub fn find(
        &self,
        query: &str,
        limit: usize,
        scope: Scope<'_>,
        meaning: Option<&Meaning<'_>>,
    ) -> Answer {
        let query = match query.char_indices().nth(crate::MAX_QUERY_CHARS) {
            Some((cut, _)) => &query[..cut],
            None => query,
        };
        let parts = parts::split(query);
        let vectors = self.embed_parts(&parts, scope, meaning);
        let ranked: Vec<(Vec<(usize, f32)>, bool)> = parts
            .iter()
            .zip(&vectors)
            .map(|(part, vector)| {
                let (list, seen) = self.fuse(part, vector.as_deref(), scope, meaning);
                (list, seen.sure)
            })
            .collect();
        let mut hits: Vec<Found> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let deepest = ranked.iter().map(|(list, _)| list.len()).max().unwrap_or(0);
        // In each turn the parts a ranker is sure of go first: a request that opens with
        // context ("We're moving offices next week.") must not put that sentence's unsure
        // neighbours above what it asks for.
        let mut turn: Vec<usize> = (0..ranked.len()).collect();
        turn.sort_by_key(|&part| !ranked[part].1);
        'turns: for rank in 0..deepest {
            for &part in &turn {
                let (list, sure) = &ranked[part];
                if hits.len() >= limit {
                    break 'turns;
                }
                if let Some(&(position, score)) = list.get(rank)
                    && seen.insert(position)
                {
                    hits.push(Found {
                        position,
                        score,
                        part,
                        sure: *sure,
                    });
                }
            }
        }
        Answer {
            parts: parts.into_iter().map(str::to_owned).collect(),
            hits,
        }
    }

    /// How each ranker and the fusion saw the tool at `position`, part by part.
    pub fn explain_fused(
        &self,
        query: &str,
        position: usize,
        meaning: Option<&Meaning<'_>>,
    ) -> Vec<Explanation> {
        let parts = parts::split(query);
        let vectors = self.embed_parts(&parts, Scope::default(), meaning);
        parts
            .into_iter()
            .zip(vectors)
            .map(|(part, vector)| {
                let (fused, seen) = self.fuse(part, vector.as_deref(), Scope::default(), meaning);
                Explanation {
                    part: part.to_owned(),
                    lexical: seen
                        .lexical
                        .iter()
                        .position(|hit| hit.position == position)
                        .map(|r| (r + 1, seen.lexical[r].score)),
                    semantic: seen
                        .semantic
                        .iter()
                        .position(|(p, _)| *p == position)
                        .map(|r| (r + 1, seen.semantic[r].1)),
                    fused: fused
                        .iter()
                        .find(|(p, _)| *p == position)
                        .map(|(_, score)| *score),
                    verdict: seen.verdict,
                }
            })
            .collect()
    }

    /// The toolkit `scope` keeps to, as a position in [`Self::toolkits`]: `Ok(None)` when it
    /// names none, `Err(())` when it names one the catalog lacks (nothing is then in scope).
    fn scoped_toolkit(&self, scope: Scope<'_>) -> Result<Option<usize>, ()> {
        let Some(name) = scope.toolkit else {
            return Ok(None);
        };
        let lower = name.to_lowercase();
        match self.toolkits.iter().position(|t| **t == *lower) {
            Some(position) => Ok(Some(position)),
            None => Err(()),
        }
    }

    /// Each part's vector, all from one pass of the model; none without a model, when it
    /// fails, or when the scope names a toolkit the catalog lacks.
    fn embed_parts(
        &self,
        parts: &[&str],
        scope: Scope<'_>,
        meaning: Option<&Meaning<'_>>,
    ) -> Vec<Option<Vec<f32>>> {
        let vectors = match meaning {
            Some(meaning) if self.scoped_toolkit(scope).is_ok() => {
                (meaning.embed)(parts).filter(|vectors| vectors.len() == parts.len())
            }
            _ => None,
        };
        match vectors {
            Some(vectors) => vectors.into_iter().map(Some).collect(),
            None => vec![None; parts.len()],
        }
    }

    /// One part through both rankers, the model's side from the part's `vector`: the fused
    /// list (position, score), best first.
    fn fuse(
        &self,
        part: &str,
        vector: Option<&[f32]>,
        scope: Scope<'_>,
        meaning: Option<&Meaning<'_>>,
    ) -> (Vec<(usize, f32)>, Seen) {
        let (lexical, signals) = self.rank(part, CANDIDATES, scope);
        let only = self.scoped_toolkit(scope).unwrap_or(None);
        let (semantic, lead) = match (meaning, vector) {
            (Some(meaning), Some(vector)) => {
                meaning.vectors.nearest_with_lead(vector, CANDIDATES, |p| {
                    only.is_none_or(|k| self.toolkit_of.get(p) == Some(&(k as u32)))
                        && scope.allows(p)
                })
            }
            _ => (Vec::new(), 0.0),
        };
        let bars = meaning.map(|m| m.bars).unwrap_or_default();
        let best = semantic.first().map_or(0.0, |s| s.1);
        let vetoed = signals.unknown_product;
        let semantic_sure = !semantic.is_empty()
            && (best >= bars.cosine || (best >= bars.floor && lead >= bars.lead))
            && !vetoed;
        let semantic_unsure = !semantic.is_empty() && best >= bars.unsure && !vetoed;
        let sure = !lexical.is_empty() || semantic_sure;
        let verdict = match (lexical.is_empty(), semantic_sure, semantic_unsure) {
            (false, _, _) => "sure: the lexical ranker admitted a tool",
            (true, true, _) => "sure: the closest tool's cosine or its lead reaches the bar",
            (true, false, true) => "unsure: only the model's closest tools, below the sure bars",
            (true, false, false) if vetoed && !semantic.is_empty() => {
                "nothing: it names a product the catalog does not serve"
            }
            (true, false, false) => "nothing: neither ranker has a candidate close enough",
        };
        let mut fused: Vec<(usize, f32)> = Vec::new();
        if sure || semantic_unsure {
            let mut add =
                |position: usize, vote: f32| match fused.iter_mut().find(|(p, _)| *p == position) {
                    Some((_, score)) => *score += vote,
                    None => fused.push((position, vote)),
                };
            for (rank, hit) in lexical.iter().enumerate() {
                add(hit.position, 1.0 / (RRF_K + rank as f32 + 1.0));
            }
            for (rank, &(position, cosine)) in semantic.iter().enumerate() {
                // Far below the closest tool, the model is only guessing.
                if rank > 0 && cosine < best - SEMANTIC_SPAN {
                    break;
                }
                add(position, SEMANTIC_WEIGHT / (RRF_K + rank as f32 + 1.0));
            }
            fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        }
        (
            fused,
            Seen {
                lexical,
                semantic,
                sure,
                verdict,
            },
        )
    }
}

/// What [`SearchIndex::fuse`] saw, for [`SearchIndex::explain_fused`].
struct Seen {
    lexical: Vec<Hit>,
    semantic: Vec<(usize, f32)>,
    /// Whether a ranker is confident of the part's answer.
    sure: bool,
    verdict: &'static str,
}
