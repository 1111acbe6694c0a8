//! How long an upstream's answer stays fresh, and asking it again only if it changed: what the
//! bridge's cache of read-only calls needs from an adapter (DESIGN.md §15).
//!
//! An adapter that speaks HTTP reads the answer's caching headers (`Cache-Control`, `Expires`,
//! `ETag`, `Last-Modified`) into a [`Freshness`] and, asked with [`Validators`], sends them as
//! `If-None-Match` / `If-Modified-Since` and reports a `304 Not Modified` as
//! [`Fetched::NotModified`]. Other adapters say nothing ([`Freshness::unsaid`]): their answers
//! live as long as the configuration says.

use std::time::Duration;

use serde_json::Value;

/// What the bridge asks of a call whose answer it may keep.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheRequest {
    /// The answer would be shared by every caller (the configuration declared the data public):
    /// an answer the upstream marks `private`, or one to an authenticated request without
    /// `public`, is then not storable (the rules of a shared HTTP cache).
    pub shared: bool,
    /// The validators of the answer the bridge holds, to be sent so that the upstream can
    /// answer "not modified" instead of the whole value.
    pub validators: Option<Validators>,
}

/// The validators of a kept answer, as the upstream sent them.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Validators {
    /// The `ETag` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// The `Last-Modified` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl Validators {
    /// Whether there is anything to revalidate with.
    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }
}

/// What the upstream said about keeping its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Freshness {
    /// Whether the answer may be kept at all (`no-store`, `private` for a shared entry, and an
    /// uncacheable method or status say no).
    pub storable: bool,
    /// How long it stays fresh, when the upstream said (`max-age`, `s-maxage`, `Expires`;
    /// zero for `no-cache`): `None` leaves it to the configuration.
    pub ttl: Option<Duration>,
    /// What to revalidate it with once stale.
    pub validators: Validators,
}

impl Freshness {
    /// An upstream that says nothing about caching (an MCP server, an HTTP answer without
    /// caching headers): storable, for as long as the configuration says.
    pub fn unsaid() -> Self {
        Self {
            storable: true,
            ttl: None,
            validators: Validators::default(),
        }
    }
}

/// The answer to a call made through [`crate::Adapter::call_fresh`].
#[derive(Debug, Clone, PartialEq)]
pub enum Fetched {
    /// A value, and how long it may be kept.
    Value(Value, Freshness),
    /// The kept answer is still current (HTTP 304): its new freshness.
    NotModified(Freshness),
}
