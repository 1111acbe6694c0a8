//! Rate limits and concurrency caps (DESIGN.md §14): counters per caller, group, tool or rule,
//! checked after policies allowed a call and before it is sent upstream.
//!
//! A rule's `rate` (`10/minute`) is a GCRA limit with a `burst` (default: the rate's count): in
//! memory through `governor`, or, with `state: redis://…`, in Redis, so that every replica
//! shares the counter: one Lua script per decision, on Redis's clock, one key per counter that
//! expires when idle. If Redis cannot be reached, `on_store_error` decides: `open` lets the call
//! through (and logs it), `refuse` answers with a retryable error. A rule's `concurrency` caps
//! the calls one counter may have in flight at once (per replica). A limited call is the
//! standard's retryable error with `retry_after_ms` (429 with `Retry-After` on the OTC edge).

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::clock::{Clock as _, DefaultClock};
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::caller::Caller;
use super::policies::{Effect, Matcher, PolicyConfig, PolicyError};
use crate::catalog::registry::Entry;
use crate::idempotency::OnStoreError;

/// `rate_limits:` in the configuration file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitsConfig {
    /// With `state: redis://…`, what a call does when Redis cannot be reached: `open` (go on,
    /// unlimited, and log it; the default) or `refuse` (a retryable error).
    #[serde(default)]
    pub on_store_error: OnStoreError,
    /// The limits; every one whose who and what match a call applies to it.
    #[serde(default)]
    pub rules: Vec<LimitConfig>,
}

/// One limit.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitConfig {
    /// A name for errors, logs and the audit trail (default: its position, `#1`).
    #[serde(default)]
    pub name: Option<String>,
    /// Caller names (globs), as in policies.
    #[serde(default)]
    pub callers: Vec<String>,
    /// Groups, as in policies.
    #[serde(default)]
    pub groups: Vec<String>,
    /// JWT claims, as in policies.
    #[serde(default)]
    pub claims: std::collections::BTreeMap<String, Value>,
    /// Toolkits (globs), as in policies.
    #[serde(default)]
    pub toolkits: Vec<String>,
    /// Tool ids (globs, version ranges), as in policies.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Only destructive (or only other) tools.
    #[serde(default)]
    pub destructive: Option<bool>,
    /// `N/second`, `N/minute`, `N/hour` or `N/day`.
    #[serde(default)]
    pub rate: Option<String>,
    /// Calls that may come at once before the rate applies (default: N).
    #[serde(default)]
    pub burst: Option<u32>,
    /// Calls one counter may have in flight at once (in each replica).
    #[serde(default)]
    pub concurrency: Option<u32>,
    /// What one counter counts: each `caller` (the default), each `group` of the rule the
    /// caller is in, each `tool`, or the whole `rule`.
    #[serde(default)]
    pub per: Per,
}

/// What one counter of a limit counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Per {
    /// Each caller.
    #[default]
    Caller,
    /// Each group (of the rule's) the caller is in.
    Group,
    /// Each tool.
    Tool,
    /// Everyone the rule applies to, together.
    Rule,
}

/// Why a limit configuration cannot be used; names the rule.
#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    /// Its who or what does not compile.
    #[error("rate_limits: {0}")]
    Match(#[from] PolicyError),
    /// `rate` is not `N/unit`.
    #[error(
        "rate_limits: rule {rule}: rate '{rate}' is not N/second, N/minute, N/hour or N/day with N > 0"
    )]
    Rate {
        /// The rule.
        rule: String,
        /// What it says.
        rate: String,
    },
    /// Neither `rate` nor `concurrency`.
    #[error("rate_limits: rule {0} limits nothing: give it a rate, a concurrency, or both")]
    Empty(String),
    /// `concurrency: 0` or `burst: 0`.
    #[error("rate_limits: rule {0}: concurrency and burst must be at least 1")]
    Zero(String),
}

/// A call over a limit: which rule, and how long until it would pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Limited {
    /// The rule's name or position.
    pub rule: String,
    /// How long to wait before trying again.
    pub wait: Duration,
}

/// What a call that passed its limits holds until it ends: its concurrency permits.
#[derive(Debug, Default)]
pub(crate) struct Admitted {
    _permits: Vec<OwnedSemaphorePermit>,
}

/// The compiled limits; empty when the configuration has none.
#[derive(Default)]
pub struct Limits {
    rules: Vec<Limit>,
    redis: Option<redis::aio::ConnectionManager>,
    on_store_error: OnStoreError,
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits")
            .field("rules", &self.rules.len())
            .field("redis", &self.redis.is_some())
            .finish()
    }
}

type Keyed = RateLimiter<String, DefaultKeyedStateStore<String>, DefaultClock>;

struct Limit {
    matcher: Matcher,
    per: Per,
    rate: Option<Rate>,
    concurrency: Option<Concurrency>,
}

struct Rate {
    limiter: Keyed,
    /// The limiter's clock, for how long a limited call must wait.
    clock: DefaultClock,
    /// GCRA's emission interval and burst tolerance, in milliseconds (the Redis form).
    interval_ms: u64,
    tolerance_ms: u64,
    /// Checks since the in-memory counters were last swept of idle keys.
    checks: std::sync::atomic::AtomicU32,
}

struct Concurrency {
    permits: u32,
    /// One semaphore per counter; those with every permit free are dropped when it grows.
    counters: Mutex<HashMap<String, Arc<Semaphore>>>,
}

/// In-memory counters are swept of keys idle past their period after this many checks.
const SWEEP_EVERY: u32 = 4096;
/// Concurrency counters kept before idle ones are dropped.
const MAX_IDLE_COUNTERS: usize = 10_000;
/// How long a call over a concurrency cap is told to wait.
const CONCURRENCY_WAIT: Duration = Duration::from_millis(100);

/// GCRA on Redis's clock: the key holds the theoretical arrival time (ms); a call passes when
/// it is within the burst tolerance of now, and moves it on by one interval. Answers 0 when the
/// call passes, else the milliseconds to wait.
const GCRA: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local allow_at = tat + interval - tolerance
if allow_at > now then return allow_at - now end
local next = tat + interval
redis.call('SET', KEYS[1], next, 'PX', next - now + 1000)
return 0
";

impl Limits {
    /// Compiles `config`; with `redis`, rates are counted there (shared by replicas).
    pub fn compile(
        config: &RateLimitsConfig,
        known_groups: Option<&[String]>,
        redis: Option<redis::aio::ConnectionManager>,
    ) -> Result<Self, LimitError> {
        let mut rules = Vec::with_capacity(config.rules.len());
        for (index, limit) in config.rules.iter().enumerate() {
            let who_what = PolicyConfig {
                name: limit.name.clone(),
                effect: Effect::Allow,
                callers: limit.callers.clone(),
                groups: limit.groups.clone(),
                claims: limit.claims.clone(),
                toolkits: limit.toolkits.clone(),
                tools: limit.tools.clone(),
                destructive: limit.destructive,
                when: None,
                reason: None,
            };
            let matcher = Matcher::compile(index, &who_what, known_groups)?;
            let label = matcher.label().to_owned();
            if limit.rate.is_none() && limit.concurrency.is_none() {
                return Err(LimitError::Empty(label));
            }
            if limit.concurrency == Some(0) || limit.burst == Some(0) {
                return Err(LimitError::Zero(label));
            }
            let rate = match &limit.rate {
                Some(text) => Some(Rate::parse(&label, text, limit.burst)?),
                None => None,
            };
            rules.push(Limit {
                matcher,
                per: limit.per,
                rate,
                concurrency: limit.concurrency.map(|permits| Concurrency {
                    permits,
                    counters: Mutex::default(),
                }),
            });
        }
        Ok(Self {
            redis: redis.filter(|_| rules.iter().any(|r| r.rate.is_some())),
            rules,
            on_store_error: config.on_store_error,
        })
    }

    /// Whether there are no limits.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Counts a call of `entry` by `caller` against every limit that applies to it: `Ok` holds
    /// its concurrency permits until the call ends; `Err` is the first limit it is over. `Err`
    /// with a rule of `None`: Redis could not be asked and `on_store_error` is `refuse`.
    pub(crate) async fn admit(&self, caller: &Caller, entry: &Entry) -> Result<Admitted, Limited> {
        let mut admitted = Admitted::default();
        for limit in &self.rules {
            if !limit.matcher.applies(caller, entry) {
                continue;
            }
            let key = match limit.per {
                Per::Caller => caller.name.clone(),
                Per::Group => limit
                    .matcher
                    .group_of(caller)
                    .unwrap_or(&caller.name)
                    .to_owned(),
                Per::Tool => entry.definition().id.name(),
                Per::Rule => String::new(),
            };
            let over = |wait| Limited {
                rule: limit.matcher.label().to_owned(),
                wait,
            };
            if let Some(concurrency) = &limit.concurrency {
                match concurrency.acquire(&key) {
                    Some(permit) => admitted._permits.push(permit),
                    None => return Err(over(CONCURRENCY_WAIT)),
                }
            }
            if let Some(rate) = &limit.rate {
                let wait = match &self.redis {
                    Some(redis) => self.shared(redis, limit, rate, &key).await?,
                    None => rate.local(&key),
                };
                if let Some(wait) = wait {
                    return Err(over(wait));
                }
            }
        }
        Ok(admitted)
    }

    /// One decision of the shared counter in Redis; `Ok(None)` when the call passes.
    async fn shared(
        &self,
        redis: &redis::aio::ConnectionManager,
        limit: &Limit,
        rate: &Rate,
        key: &str,
    ) -> Result<Option<Duration>, Limited> {
        static SCRIPT: std::sync::LazyLock<redis::Script> =
            std::sync::LazyLock::new(|| redis::Script::new(GCRA));
        let redis_key = format!("otc-bridge:rate:{}:{key}", limit.matcher.label());
        let mut connection = redis.clone();
        let answer: Result<u64, redis::RedisError> = SCRIPT
            .key(redis_key)
            .arg(rate.interval_ms)
            .arg(rate.tolerance_ms)
            .invoke_async(&mut connection)
            .await;
        match answer {
            Ok(0) => Ok(None),
            Ok(wait) => Ok(Some(Duration::from_millis(wait))),
            Err(error) => match self.on_store_error {
                OnStoreError::Open => {
                    tracing::warn!(%error, rule = limit.matcher.label(), "Rate limit store unreachable; the call goes on unlimited (on_store_error: open).");
                    Ok(None)
                }
                OnStoreError::Refuse => Err(Limited {
                    rule: String::new(),
                    wait: Duration::from_secs(1),
                }),
            },
        }
    }
}

impl Rate {
    fn parse(rule: &str, text: &str, burst: Option<u32>) -> Result<Self, LimitError> {
        let bad = || LimitError::Rate {
            rule: rule.to_owned(),
            rate: text.to_owned(),
        };
        let (count, unit) = text.split_once('/').ok_or_else(bad)?;
        let count: u32 = count.trim().parse().map_err(|_| bad())?;
        let count = NonZeroU32::new(count).ok_or_else(bad)?;
        let period = match unit.trim() {
            "second" | "s" => Duration::from_secs(1),
            "minute" | "m" => Duration::from_secs(60),
            "hour" | "h" => Duration::from_secs(3600),
            "day" | "d" => Duration::from_secs(86_400),
            _ => return Err(bad()),
        };
        let burst = burst.and_then(NonZeroU32::new).unwrap_or(count);
        let interval = period / count.get();
        let quota = Quota::with_period(interval)
            .ok_or_else(bad)?
            .allow_burst(burst);
        let interval_ms = u64::try_from(interval.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let clock = DefaultClock::default();
        Ok(Self {
            limiter: RateLimiter::new(quota, DefaultKeyedStateStore::default(), clock.clone()),
            clock,
            interval_ms,
            tolerance_ms: interval_ms * u64::from(burst.get()),
            checks: std::sync::atomic::AtomicU32::new(0),
        })
    }

    /// One decision of the in-memory counter; `None` when the call passes.
    fn local(&self, key: &str) -> Option<Duration> {
        let checks = self
            .checks
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if checks % SWEEP_EVERY == SWEEP_EVERY - 1 {
            // Keys idle for a period are as good as new: dropping them bounds the memory
            // callers can make the limiter hold.
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
        let key = key.to_owned();
        match self.limiter.check_key(&key) {
            Ok(()) => None,
            Err(not_until) => Some(not_until.wait_time_from(self.clock.now())),
        }
    }
}

impl Concurrency {
    fn acquire(&self, key: &str) -> Option<OwnedSemaphorePermit> {
        let semaphore = {
            let Ok(mut counters) = self.counters.lock() else {
                return None;
            };
            if counters.len() >= MAX_IDLE_COUNTERS {
                let permits = self.permits as usize;
                counters.retain(|_, s| s.available_permits() < permits);
            }
            Arc::clone(
                counters
                    .entry(key.to_owned())
                    .or_insert_with(|| Arc::new(Semaphore::new(self.permits as usize))),
            )
        };
        semaphore.try_acquire_owned().ok()
    }
}
