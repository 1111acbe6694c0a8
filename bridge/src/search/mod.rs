//! Tool search over a catalog (DESIGN.md §8): an index with no I/O, built once per catalog.
//!
//! Interim ranking: the share of the query's words found in a tool's id, name and description.
//! The ranked index replaces it.

use otc_mappings::otc::ToolDefinition;

/// A searchable view of a catalog's tools.
#[derive(Debug, Default)]
pub struct SearchIndex {
    docs: Vec<Vec<String>>,
}

/// One ranked result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The tool's position in the sequence the index was built from.
    pub position: usize,
    /// Relevance; higher is better.
    pub score: f32,
}

impl SearchIndex {
    /// Indexes `tools` in iteration order; [`Hit::position`] refers to that order.
    pub fn build<'a>(tools: impl IntoIterator<Item = &'a ToolDefinition>) -> Self {
        let docs = tools
            .into_iter()
            .map(|t| words(&format!("{} {} {}", t.id.toolkit, t.id.tool, t.description)))
            .collect();
        Self { docs }
    }

    /// Ranked hits, best first, at most `limit`; only tools of `toolkit` when given.
    pub fn search(&self, query: &str, limit: usize, toolkit: Option<&str>) -> Vec<Hit> {
        let query = words(query);
        if query.is_empty() {
            return Vec::new();
        }
        let toolkit = toolkit.map(str::to_ascii_lowercase);
        let mut hits: Vec<Hit> = self
            .docs
            .iter()
            .enumerate()
            .filter(|(_, doc)| toolkit.as_ref().is_none_or(|t| doc.first() == Some(t)))
            .filter_map(|(position, doc)| {
                let found = query.iter().filter(|w| doc.contains(w)).count();
                #[allow(clippy::cast_precision_loss)]
                let score = found as f32 / query.len() as f32;
                (score >= 0.5).then_some(Hit { position, score })
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

    /// Approximate heap bytes held by the index.
    pub fn heap_bytes(&self) -> usize {
        self.docs.iter().flatten().map(String::capacity).sum()
    }
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}
