//! An HTTP answer's caching headers read into a [`Freshness`], by the rules of RFC 9111 as
//! `http-cache-semantics` implements them (`Cache-Control` and its `no-store`, `no-cache`,
//! `private`, `max-age` and `s-maxage`; `Expires`, `Date` and `Age`; an authenticated request's
//! answer in a shared cache), and the validators a kept answer is revalidated with.

use std::time::SystemTime;

use http::header::{CACHE_CONTROL, ETAG, EXPIRES, LAST_MODIFIED};
use http::{HeaderMap, Method, StatusCode, Uri};
use http_cache_semantics::{CacheOptions, CachePolicy, RequestLike, ResponseLike};

use crate::fresh::{Freshness, Validators};

/// What was asked, as the caching rules read it: the URL and the headers sent (an
/// `Authorization` header makes an answer private unless it says `public`).
#[derive(Debug)]
pub(crate) struct Asked {
    pub(crate) uri: Uri,
    pub(crate) headers: HeaderMap,
}

impl RequestLike for Asked {
    fn uri(&self) -> Uri {
        self.uri.clone()
    }

    fn is_same_uri(&self, other: &Uri) -> bool {
        &self.uri == other
    }

    /// Always GET: the operator opted this tool in to caching and it is not destructive, so its
    /// answers are read as a GET's would be, whatever method the operation uses (the rules
    /// would otherwise refuse to keep a POST's answer that names no lifetime).
    fn method(&self) -> &Method {
        &Method::GET
    }

    fn headers(&self) -> &HeaderMap {
        &self.headers
    }
}

/// The answer's status and headers.
struct Answered<'a> {
    status: StatusCode,
    headers: &'a HeaderMap,
}

impl ResponseLike for Answered<'_> {
    fn status(&self) -> StatusCode {
        self.status
    }

    fn headers(&self) -> &HeaderMap {
        self.headers
    }
}

/// What the answer `headers` (to `asked`) say about keeping it, in a cache shared by every
/// caller when `shared`. A `304 Not Modified` is read as the 200 it confirms (RFC 9111 §4.3.4:
/// its headers update the kept answer's).
pub(crate) fn of(
    asked: &Asked,
    status: StatusCode,
    headers: &HeaderMap,
    shared: bool,
) -> Freshness {
    let status = if status == StatusCode::NOT_MODIFIED {
        StatusCode::OK
    } else {
        status
    };
    let now = SystemTime::now();
    let policy = CachePolicy::new_options(
        asked,
        &Answered { status, headers },
        now,
        CacheOptions {
            shared,
            // No guessing a lifetime from `Last-Modified`: an answer that names none lives as
            // long as the configuration says.
            cache_heuristic: 0.0,
            ..CacheOptions::default()
        },
    );
    let said = headers.contains_key(CACHE_CONTROL) || headers.contains_key(EXPIRES);
    let text = |name| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    Freshness {
        storable: policy.is_storable(),
        ttl: said.then(|| policy.time_to_live(now)),
        validators: Validators {
            etag: text(ETAG),
            last_modified: text(LAST_MODIFIED),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use std::time::Duration;

    fn asked(authorized: bool) -> Asked {
        let mut headers = HeaderMap::new();
        if authorized {
            headers.insert("authorization", HeaderValue::from_static("Bearer t"));
        }
        Asked {
            uri: Uri::from_static("http://upstream.test/items"),
            headers,
        }
    }

    fn answer(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    http::HeaderName::from_static(k),
                    HeaderValue::from_static(v),
                )
            })
            .collect()
    }

    #[test]
    fn max_age_is_the_lifetime_and_validators_are_kept() {
        let headers = answer(&[
            ("cache-control", "max-age=30"),
            ("etag", "\"v1\""),
            ("last-modified", "Wed, 21 Oct 2015 07:28:00 GMT"),
        ]);
        let fresh = of(&asked(false), StatusCode::OK, &headers, false);
        assert!(fresh.storable);
        let ttl = fresh.ttl.unwrap();
        assert!(ttl <= Duration::from_secs(30) && ttl >= Duration::from_secs(29));
        assert_eq!(fresh.validators.etag.as_deref(), Some("\"v1\""));
        assert!(fresh.validators.last_modified.is_some());
    }

    #[test]
    fn no_store_is_not_kept_and_no_cache_is_stale_at_once() {
        let no_store = of(
            &asked(false),
            StatusCode::OK,
            &answer(&[("cache-control", "no-store")]),
            false,
        );
        assert!(!no_store.storable);
        let no_cache = of(
            &asked(false),
            StatusCode::OK,
            &answer(&[("cache-control", "no-cache"), ("etag", "\"a\"")]),
            false,
        );
        assert_eq!(no_cache.ttl, Some(Duration::ZERO));
    }

    #[test]
    fn private_answers_are_not_shared() {
        let headers = answer(&[("cache-control", "private, max-age=60")]);
        assert!(of(&asked(false), StatusCode::OK, &headers, false).storable);
        assert!(!of(&asked(false), StatusCode::OK, &headers, true).storable);
        // An authenticated request's answer is shared only when it says `public`.
        let plain = answer(&[("cache-control", "max-age=60")]);
        assert!(!of(&asked(true), StatusCode::OK, &plain, true).storable);
        let public = answer(&[("cache-control", "public, max-age=60")]);
        assert!(of(&asked(true), StatusCode::OK, &public, true).storable);
    }

    #[test]
    fn silence_leaves_the_lifetime_to_the_configuration() {
        let headers = answer(&[("last-modified", "Wed, 21 Oct 2015 07:28:00 GMT")]);
        let fresh = of(&asked(false), StatusCode::OK, &headers, false);
        assert!(fresh.storable);
        assert_eq!(fresh.ttl, None);
    }
}
