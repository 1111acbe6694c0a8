//! The semantic ranker's data: one unit vector per tool, made by a sentence-embedding model from
//! the tool's text ([`tool_text`]), compared with the request's vector by cosine similarity.
//!
//! Vectors are kept as `i8` with one scale per vector (a quarter of `f32`'s memory; the cosine
//! moves by less than 0.01, far below what separates a fitting tool from another), and searched
//! exhaustively: 10,000 tools × 384 dimensions is a few million multiply-adds, about a
//! millisecond, so no approximate index is needed at the catalog sizes the bridge serves.

use otc_mappings::MappedTool;

/// One catalog's tool vectors, in the positions of the [`crate::SearchIndex`] built from the
/// same tools. A tool without a vector (not embedded yet) is skipped by [`Vectors::nearest`].
#[derive(Debug, Clone, Default)]
pub struct Vectors {
    dims: usize,
    /// Row `p` is `values[p * dims..(p + 1) * dims]`; all zero when tool `p` has no vector.
    values: Vec<i8>,
    /// Per row: the factor that turns the `i8` dot product back into a cosine; 0 when absent.
    scales: Vec<f32>,
}

/// A vector quantized for storage: its `i8` values and its scale.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantized {
    /// The values, `round(v / max|v| × 127)`.
    pub values: Vec<i8>,
    /// `max|v| / 127` of the unit vector.
    pub scale: f32,
}

impl Quantized {
    /// `vector`, normalised to unit length and quantized.
    pub fn of(vector: &[f32]) -> Self {
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        let max = vector.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        if norm == 0.0 || max == 0.0 || !norm.is_finite() {
            return Self {
                values: vec![0; vector.len()],
                scale: 0.0,
            };
        }
        let factor = 127.0 / max;
        Self {
            values: vector
                .iter()
                .map(|x| (x * factor).round().clamp(-127.0, 127.0) as i8)
                .collect(),
            scale: max / norm / 127.0,
        }
    }
}

impl Vectors {
    /// Room for `tools` vectors of `dims` dimensions, none present yet.
    pub fn new(dims: usize, tools: usize) -> Self {
        Self {
            dims,
            values: vec![0; dims * tools],
            scales: vec![0.0; tools],
        }
    }

    /// The dimension of every vector.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// How many tools have a vector.
    pub fn present(&self) -> usize {
        self.scales.iter().filter(|s| **s > 0.0).count()
    }

    /// How many tools there are room for.
    pub fn len(&self) -> usize {
        self.scales.len()
    }

    /// Whether there is room for no tool.
    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// Sets tool `position`'s vector; ignored when the position or the dimension is wrong.
    pub fn set(&mut self, position: usize, vector: &Quantized) {
        if position >= self.scales.len() || vector.values.len() != self.dims {
            return;
        }
        self.values[position * self.dims..(position + 1) * self.dims]
            .copy_from_slice(&vector.values);
        self.scales[position] = vector.scale;
    }

    /// The `k` tools closest to `query` (any length-`dims` vector; it is normalised here), best
    /// first, with their cosine similarity; only positions `keep` accepts.
    pub fn nearest(
        &self,
        query: &[f32],
        k: usize,
        keep: impl Fn(usize) -> bool,
    ) -> Vec<(usize, f32)> {
        self.nearest_with_lead(query, k, keep).0
    }

    /// [`Vectors::nearest`], and how far the best stands out: its cosine's lead over the next
    /// tool's. A request one tool serves has that tool well above the rest; one no tool serves
    /// is a little similar to many.
    pub fn nearest_with_lead(
        &self,
        query: &[f32],
        k: usize,
        keep: impl Fn(usize) -> bool,
    ) -> (Vec<(usize, f32)>, f32) {
        if query.len() != self.dims || k == 0 {
            return (Vec::new(), 0.0);
        }
        let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm == 0.0 || !norm.is_finite() {
            return (Vec::new(), 0.0);
        }
        let mut scored: Vec<(usize, f32)> = Vec::with_capacity(self.scales.len());
        for (position, (row, scale)) in self
            .values
            .chunks_exact(self.dims.max(1))
            .zip(&self.scales)
            .enumerate()
        {
            if *scale == 0.0 || !keep(position) {
                continue;
            }
            scored.push((position, dot(row, query) * scale / norm));
        }
        let k = k.min(scored.len());
        if k == 0 {
            return (Vec::new(), 0.0);
        }
        scored.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(k);
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        // The closest tool's lead over the next one.
        let lead = scored[0].1 - scored.get(1).map_or(0.0, |s| s.1);
        (scored, lead)
    }

    /// Tool `position`'s vector, when it has one.
    pub fn row(&self, position: usize) -> Option<Quantized> {
        let scale = *self.scales.get(position)?;
        (scale > 0.0).then(|| Quantized {
            values: self.values[position * self.dims..(position + 1) * self.dims].to_vec(),
            scale,
        })
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.values.capacity() + self.scales.capacity() * std::mem::size_of::<f32>()
    }
}

/// The dot product of a stored row and a request's vector, in sixteen independent sums: a
/// single running sum of floats cannot be reordered by the compiler, so it runs one addition
/// at a time, where these vectorise (a search over 10,000 tools reads 3.8 million values).
fn dot(row: &[i8], query: &[f32]) -> f32 {
    const LANES: usize = 16;
    let mut lanes = [0.0f32; LANES];
    let (rows, queries) = (row.chunks_exact(LANES), query.chunks_exact(LANES));
    let tail: f32 = rows
        .remainder()
        .iter()
        .zip(queries.remainder())
        .map(|(a, b)| f32::from(*a) * b)
        .sum();
    for (r, q) in rows.zip(queries) {
        for ((lane, a), b) in lanes.iter_mut().zip(r).zip(q) {
            *lane += f32::from(*a) * b;
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// The text a model reads for a tool: its toolkit and name in words, then its description's
/// opening (where descriptions say what the tool does; the rest is parameters and notes, which
/// dilute the meaning and cost time), e.g. `Github: pulls list reviews. List reviews for a pull
/// request…`.
pub fn tool_text(tool: &MappedTool) -> String {
    tool_text_with(tool, true, TEXT_CHARS)
}

/// [`tool_text`] with or without the toolkit's name and with another description length: what
/// `search_eval`'s `OTC_SEARCH_TEXT` compares (bench/search/README.md).
#[doc(hidden)]
pub fn tool_text_with(tool: &MappedTool, toolkit: bool, chars: usize) -> String {
    let id = &tool.definition.id;
    let mut text = String::with_capacity(chars + 64);
    if toolkit {
        text.push_str(&words(&id.toolkit));
        text.push_str(": ");
    }
    text.push_str(&words(&id.tool));
    text.push_str(". ");
    let description = tool.definition.description.trim();
    for c in description.chars().take(chars) {
        text.push(if c.is_whitespace() { ' ' } else { c });
    }
    text
}

/// The longest description opening read (characters): about a hundred tokens.
const TEXT_CHARS: usize = 400;

/// `ReposListForOrg` → `repos list for org`; `OAuth2Token` → `o auth2 token`.
fn words(identifier: &str) -> String {
    let mut out = String::with_capacity(identifier.len() + 8);
    let mut previous: Option<char> = None;
    for c in identifier.chars() {
        if c == '_' || c == '-' || c == '.' {
            out.push(' ');
            previous = None;
            continue;
        }
        if c.is_uppercase() && previous.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit()) {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
        previous = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantized_vectors_keep_their_cosines() {
        let a = [0.3f32, -0.2, 0.9, 0.1];
        let b = [0.25f32, -0.1, 0.8, 0.3];
        let exact = {
            let dot: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let n = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
            dot / n(&a) / n(&b)
        };
        let mut vectors = Vectors::new(4, 2);
        vectors.set(0, &Quantized::of(&a));
        vectors.set(1, &Quantized::of(&[-1.0, 0.0, 0.0, 0.0]));
        let found = vectors.nearest(&b, 5, |_| true);
        assert_eq!(found[0].0, 0);
        assert!((found[0].1 - exact).abs() < 0.01, "{found:?} vs {exact}");
        assert_eq!(found.len(), 2);
        assert_eq!(vectors.nearest(&b, 5, |p| p != 0).len(), 1);
        assert_eq!(vectors.present(), 2);
    }

    #[test]
    fn a_tool_without_a_vector_is_not_found() {
        let mut vectors = Vectors::new(2, 3);
        vectors.set(2, &Quantized::of(&[1.0, 0.0]));
        vectors.set(7, &Quantized::of(&[1.0, 0.0]));
        vectors.set(1, &Quantized::of(&[1.0, 0.0, 0.0]));
        let found = vectors.nearest(&[1.0, 0.1], 3, |_| true);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, 2);
        assert!(vectors.nearest(&[0.0, 0.0], 3, |_| true).is_empty());
        assert!(vectors.nearest(&[1.0], 3, |_| true).is_empty());
    }

    #[test]
    fn identifiers_read_as_words() {
        assert_eq!(words("ReposListForOrg"), "repos list for org");
        assert_eq!(words("get_user-by.id"), "get user by id");
        assert_eq!(words("V2Users"), "v2 users");
    }
}
