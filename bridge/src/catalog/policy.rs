//! Per-source policy from the config file: which upstream operations are served (`include`,
//! `exclude`), under which names, descriptions and arguments (`overrides`: tool transforms,
//! DESIGN.md §15), how their results are projected (`results`), and the call limits
//! (`timeout_secs`, `max_concurrency`). Applied every time a source's tools are listed, so a
//! refreshed MCP tool list obeys it too.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use globset::{Glob, GlobMatcher, GlobSet, GlobSetBuilder};
use otc_adapters::AdapterError;
use otc_mappings::naming;
use otc_mappings::otc::Schema;
use otc_mappings::otc::is_segment;
use otc_mappings::{Diagnostic, MappedTool, Severity, Target};
use otc_shape::project::{Limits, Projection, ProjectionError, SchemaOutcome};
use otc_shape::transform::{ArgumentMap, ArgumentTransform, FixedSource, Transform};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::Semaphore;

use crate::catalog::lock::{OnChange, Pins};
use crate::catalog::shaping::{FixedEnv, Shaping};
use crate::catalog::validate;
use crate::result_cache::CacheRule;

/// The bridge's own keys of a `sources:` entry.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SourceOptions {
    /// Per-call timeout for this source's tools, overriding `limits.call_timeout_secs`.
    pub timeout_secs: Option<u64>,
    /// At most this many calls to this source at once; more wait (within their timeout).
    pub max_concurrency: Option<usize>,
    /// Serve only tools matching one of these patterns (default: all).
    pub include: Vec<String>,
    /// Never serve tools matching one of these patterns.
    pub exclude: Vec<String>,
    /// Per-tool transforms (name, description, arguments, results), keyed by upstream name or
    /// tool name, or by a glob of them (`repos/*`) for every tool it matches; an exact key wins
    /// over globs, and globs are tried in key order.
    pub overrides: BTreeMap<String, ToolOverride>,
    /// How every tool's results are projected, unless its override says otherwise.
    pub results: Option<ResultsConfig>,
    /// Whether and how long the answers of the source's tools that are not destructive are kept
    /// (a tool's override may say otherwise).
    pub cache: Option<CacheConfig>,
    /// For calls through `/mcp`, which carry no OTC `context`: requirement id → the HTTP header
    /// of the MCP request that holds its value (`GITHUB_TOKEN: X-GitHub-Token`; the id
    /// `user_id` fills the user id).
    pub context_headers: BTreeMap<String, String>,
    /// What a tool that changed since the lockfile was written does (`bump`, `warn`,
    /// `refuse`); the top-level `on_change` when absent. Only with a lockfile.
    pub on_change: Option<OnChange>,
}

/// How one tool (or every tool a glob matches) is served: a new name, description, arguments
/// hidden, renamed, narrowed or defaulted, and its results projected (DESIGN.md §15). The served
/// definition is what is fingerprinted, locked and diffed.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolOverride {
    /// The new tool part of the id (`[A-Za-z0-9_]+`).
    pub name: Option<String>,
    /// The new description.
    pub description: Option<String>,
    /// Appended to the description, after a blank line.
    pub description_append: Option<String>,
    /// Per argument (by its upstream name): `fixed` (hidden), `default`, `rename`, `enum`,
    /// `minimum`, `maximum`, `description`.
    #[serde(default)]
    pub arguments: BTreeMap<String, ArgumentTransform>,
    /// How the tool's results are projected (instead of the source's `results`).
    pub results: Option<ResultsConfig>,
    /// Whether and how long the tool's answers are kept (instead of the source's `cache`):
    /// `false` keeps none.
    pub cache: Option<CacheSetting>,
}

/// `cache:` of a source or a tool: keep the answers of tools that are not destructive.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// How long an answer stays fresh when the upstream's `Cache-Control`/`Expires` say
    /// nothing (when they do, they decide).
    pub ttl_secs: u64,
    /// The data is the same for every caller, so one entry serves all; by default each caller
    /// (and each `context`: token, user id) has its own.
    #[serde(default)]
    pub public: bool,
}

/// An override's `cache:`: `false`, or how to keep the tool's answers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(
    untagged,
    expecting = "`false` or a mapping `{ttl_secs: N, public: true|false}`"
)]
pub enum CacheSetting {
    /// `false`: not kept (`true` is refused: say for how long).
    Switch(bool),
    /// Kept like this.
    Keep(CacheConfig),
}

/// A projection of results: a jq program run on each value the upstream answers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultsConfig {
    /// The jq program (`.[] | {number, title}`): one output is the result, several an array
    /// of them, none `null`.
    pub jq: String,
}

impl ToolOverride {
    /// The part of the override that changes the definition beyond its id (description and
    /// arguments), or `None` when it changes neither.
    fn transform(&self) -> Option<Transform> {
        let changes = self.description.is_some()
            || self.description_append.is_some()
            || !self.arguments.is_empty();
        changes.then(|| Transform {
            name: None,
            description: self.description.clone(),
            description_append: self.description_append.clone(),
            arguments: self.arguments.clone(),
        })
    }
}

/// The compiled form of [`SourceOptions`], built once per source.
#[derive(Debug, Clone, Default)]
pub struct SourcePolicy {
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
    /// Overrides by exact key.
    overrides: BTreeMap<String, Arc<Override>>,
    /// Overrides whose key is a glob, in key order.
    override_globs: Vec<(GlobMatcher, Arc<Override>)>,
    /// The source's projection of results (a tool's override may have its own).
    results: Option<Arc<Projection>>,
    /// How the source's answers are kept (a tool's override may say otherwise).
    cache: Option<CacheConfig>,
    /// The values of the environment variables that fixed arguments name (`fixed: {env: X}`),
    /// read when the options were compiled, as the configuration's other `env` references are.
    fixed_env: Arc<FixedEnv>,
    /// The per-call timeout, when the source sets one.
    pub timeout: Option<Duration>,
    /// The concurrency limit, when the source sets one.
    pub permits: Option<Arc<Semaphore>>,
    /// Requirement id → the MCP request header that carries it (validated names).
    pub context_headers: Vec<(String, http::HeaderName)>,
    /// The lockfile and what a change does, when the bridge runs with one.
    pub pins: Option<Pins>,
    /// Calls of the source in flight (see [`SourcePolicy::drained`]).
    in_flight: InFlight,
}

/// One override, compiled: its transform checked against each tool when the source's tools are
/// listed, its projection once.
#[derive(Debug)]
struct Override {
    /// The key it was written under, for diagnostics.
    key: String,
    config: ToolOverride,
    transform: Option<Transform>,
    results: Option<Arc<Projection>>,
    /// `None`: the source's `cache`; `Some(None)`: not kept.
    cache: Option<Option<CacheConfig>>,
}

/// A count of calls in flight that can be waited on until it is zero.
#[derive(Debug, Clone)]
struct InFlight(Arc<tokio::sync::watch::Sender<usize>>);

impl Default for InFlight {
    fn default() -> Self {
        Self(Arc::new(tokio::sync::watch::Sender::new(0)))
    }
}

/// One call counted in flight until dropped.
struct Counted<'a>(&'a InFlight);

impl<'a> Counted<'a> {
    fn new(in_flight: &'a InFlight) -> Self {
        in_flight.0.send_modify(|n| *n += 1);
        Self(in_flight)
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// Source options that cannot work; each message starts with the key to fix
/// (`sources[2].include`). A library's error is in the message, so it is not also the source.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A pattern of `include` or `exclude` is not a glob.
    #[error("{at}.{key}: bad pattern '{pattern}': {error}")]
    BadPattern {
        /// The source's key.
        at: String,
        /// `include` or `exclude`.
        key: &'static str,
        /// The pattern.
        pattern: String,
        /// Why.
        error: globset::Error,
    },
    /// The patterns of `include` or `exclude` cannot be compiled together.
    #[error("{at}.{key}: {error}")]
    Patterns {
        /// The source's key.
        at: String,
        /// `include` or `exclude`.
        key: &'static str,
        /// Why.
        error: globset::Error,
    },
    /// An override's `name` is not a tool name.
    #[error("{at}.overrides.{key}.name: '{name}' may only contain letters, digits and '_'")]
    BadName {
        /// The source's key.
        at: String,
        /// The override's key.
        key: String,
        /// The name.
        name: String,
    },
    /// An override's key is a glob that does not parse.
    #[error("{at}.overrides: bad pattern '{key}': {error}")]
    BadOverrideKey {
        /// The source's key.
        at: String,
        /// The override's key.
        key: String,
        /// Why.
        error: globset::Error,
    },
    /// A `results.jq` program does not compile.
    #[error("{at}.{key}.jq: {error}")]
    Projection {
        /// The source's key.
        at: String,
        /// `results` or `overrides.KEY.results`.
        key: String,
        /// Why, with the position in the program (boxed: it is large, and every `Result` of
        /// this error would carry its size).
        error: Box<ProjectionError>,
    },
    /// A fixed argument names an environment variable that is not set.
    #[error(
        "{at}.overrides.{key}.arguments.{argument}.fixed: environment variable {variable} is not set"
    )]
    MissingEnv {
        /// The source's key.
        at: String,
        /// The override's key.
        key: String,
        /// The argument.
        argument: String,
        /// The variable.
        variable: String,
    },
    /// An override says `cache: true`, which says nothing about how long.
    #[error(
        "{at}.overrides.{key}.cache: `true` says not for how long; write `cache: {{ttl_secs: 60}}`"
    )]
    CacheTrue {
        /// The source's key.
        at: String,
        /// The override's key.
        key: String,
    },
    /// A number that must be positive is 0.
    #[error("{at}.{key} must be greater than 0")]
    Zero {
        /// The source's key.
        at: String,
        /// `timeout_secs` or `max_concurrency`.
        key: &'static str,
    },
    /// A `context_headers` value is not an HTTP header name.
    #[error("{at}.context_headers.{id}: '{header}' is not an HTTP header name")]
    NotAHeader {
        /// The source's key.
        at: String,
        /// The requirement id.
        id: String,
        /// The value.
        header: String,
    },
    /// A `context_headers` value names a header that authenticates to the bridge.
    #[error(
        "{at}.context_headers.{id}: '{header}' authenticates to the bridge and is never forwarded; use a header of its own (e.g. X-{id})"
    )]
    BridgeCredential {
        /// The source's key.
        at: String,
        /// The requirement id.
        id: String,
        /// The value.
        header: String,
    },
}

impl SourceOptions {
    /// Validates and compiles the options; errors name the key.
    pub fn compile(&self, at: &str) -> Result<SourcePolicy, PolicyError> {
        let set =
            |patterns: &[String], key: &'static str| -> Result<Option<GlobSet>, PolicyError> {
                if patterns.is_empty() {
                    return Ok(None);
                }
                let mut builder = GlobSetBuilder::new();
                for pattern in patterns {
                    builder.add(Glob::new(pattern).map_err(|error| PolicyError::BadPattern {
                        at: at.to_owned(),
                        key,
                        pattern: pattern.clone(),
                        error,
                    })?);
                }
                builder
                    .build()
                    .map(Some)
                    .map_err(|error| PolicyError::Patterns {
                        at: at.to_owned(),
                        key,
                        error,
                    })
            };
        let projection = |key: String, config: &Option<ResultsConfig>| match config {
            None => Ok(None),
            Some(config) => Projection::compile(&config.jq, Limits::default())
                .map(|p| Some(Arc::new(p)))
                .map_err(|error| PolicyError::Projection {
                    at: at.to_owned(),
                    key,
                    error: Box::new(error),
                }),
        };
        let mut overrides = BTreeMap::new();
        let mut override_globs = Vec::new();
        let mut fixed_env = BTreeMap::new();
        for (key, o) in &self.overrides {
            if let Some(name) = &o.name
                && !is_segment(name)
            {
                return Err(PolicyError::BadName {
                    at: at.to_owned(),
                    key: key.clone(),
                    name: name.clone(),
                });
            }
            for (argument, transform) in &o.arguments {
                if let Some(FixedSource::Env(variable)) = &transform.fixed {
                    let value = std::env::var(variable).map_err(|_| PolicyError::MissingEnv {
                        at: at.to_owned(),
                        key: key.clone(),
                        argument: argument.clone(),
                        variable: variable.clone(),
                    })?;
                    fixed_env.insert(variable.clone(), Value::String(value));
                }
            }
            let cache = match &o.cache {
                None => None,
                Some(CacheSetting::Switch(false)) => Some(None),
                Some(CacheSetting::Switch(true)) => {
                    return Err(PolicyError::CacheTrue {
                        at: at.to_owned(),
                        key: key.clone(),
                    });
                }
                Some(CacheSetting::Keep(config)) => Some(Some(config.clone())),
            };
            let compiled = Arc::new(Override {
                key: key.clone(),
                config: o.clone(),
                transform: o.transform(),
                results: projection(format!("overrides.{key}.results"), &o.results)?,
                cache,
            });
            if key.contains(['*', '?', '[', '{']) {
                let glob = Glob::new(key).map_err(|error| PolicyError::BadOverrideKey {
                    at: at.to_owned(),
                    key: key.clone(),
                    error,
                })?;
                override_globs.push((glob.compile_matcher(), compiled));
            } else {
                overrides.insert(key.clone(), compiled);
            }
        }
        let zero = |key| PolicyError::Zero {
            at: at.to_owned(),
            key,
        };
        if self.timeout_secs == Some(0) {
            return Err(zero("timeout_secs"));
        }
        if self.max_concurrency == Some(0) {
            return Err(zero("max_concurrency"));
        }
        let mut context_headers = Vec::with_capacity(self.context_headers.len());
        for (id, header) in &self.context_headers {
            let name = http::HeaderName::from_bytes(header.as_bytes()).map_err(|_| {
                PolicyError::NotAHeader {
                    at: at.to_owned(),
                    id: id.clone(),
                    header: header.clone(),
                }
            })?;
            // The MCP request's own credentials are for the bridge; passing them upstream
            // would hand every upstream the key to the bridge.
            if [
                http::header::AUTHORIZATION,
                http::header::PROXY_AUTHORIZATION,
                http::header::COOKIE,
            ]
            .contains(&name)
            {
                return Err(PolicyError::BridgeCredential {
                    at: at.to_owned(),
                    id: id.clone(),
                    header: header.clone(),
                });
            }
            context_headers.push((id.clone(), name));
        }
        Ok(SourcePolicy {
            context_headers,
            include: set(&self.include, "include")?,
            exclude: set(&self.exclude, "exclude")?,
            overrides,
            override_globs,
            results: projection("results".to_owned(), &self.results)?,
            cache: self.cache.clone(),
            fixed_env: Arc::new(FixedEnv(fixed_env)),
            timeout: self.timeout_secs.map(Duration::from_secs),
            permits: self.max_concurrency.map(|n| Arc::new(Semaphore::new(n))),
            pins: None,
            in_flight: InFlight::default(),
        })
    }
}

/// The names a pattern or override can refer to a tool by: its upstream name (MCP tool name or
/// `operationId`), its tool name in the id, for HTTP operations `METHOD /path`,
/// `method:METHOD` and `tag:TAG` for each of its tags, and for an MCP source's resource and
/// prompt tools `resource:list`, `resource:read`, `resource:template` or `prompt:NAME`.
fn handles(tool: &MappedTool) -> Vec<String> {
    let mut names = vec![tool.definition.id.tool.clone()];
    match &tool.target {
        Target::Named { name } => names.push(name.clone()),
        Target::Mcp { request } => names.push(request.handle()),
        Target::Http(plan) => {
            names.extend(plan.operation_id.clone());
            names.push(plan.operation.clone());
            names.push(format!("method:{}", plan.method));
            names.extend(plan.tags.iter().map(|tag| format!("tag:{tag}")));
        }
    }
    names
}

impl SourcePolicy {
    /// Filters, renames and transforms `tools`, reporting what it did; each tool comes with its
    /// [`Shaping`] when its arguments or results are shaped. A tool its override cannot be
    /// applied to (an argument it does not have, an enum that is not a subset) is not served:
    /// serving it untransformed would expose what the configuration hides.
    pub fn apply(
        &self,
        tools: Vec<MappedTool>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Vec<(MappedTool, Option<Arc<Shaping>>)> {
        let matches = |set: &Option<GlobSet>, names: &[String]| {
            set.as_ref().map(|s| names.iter().any(|n| s.is_match(n)))
        };
        // The keys of the overrides some served tool used: one no tool used is most likely a
        // misspelt name, which would otherwise leave its tool served as the upstream has it.
        let mut used = std::collections::HashSet::new();
        let shaped: Vec<_> = tools
            .into_iter()
            .filter_map(|mut tool| {
                let names = handles(&tool);
                if matches(&self.include, &names) == Some(false)
                    || matches(&self.exclude, &names) == Some(true)
                {
                    return None;
                }
                let found = self.override_for(&names);
                if let Some(o) = found {
                    used.insert(o.key.clone());
                }
                let mut shaping = None;
                if let Some(o) = found {
                    let def = Arc::make_mut(&mut tool.definition);
                    if let Some(name) = &o.config.name {
                        diagnostics.push(Diagnostic::new(
                            Severity::Info,
                            Some(&def.id.to_string()),
                            None,
                            format!("renamed to '{name}' by configuration"),
                        ));
                        def.id.tool.clone_from(name);
                        def.name = naming::tool_name(&def.id.toolkit, name);
                    }
                    if let Some(transform) = &o.transform {
                        match transform.apply(def) {
                            Ok(transformed) => {
                                let upstream = std::mem::replace(def, transformed.definition);
                                tool.hidden_inputs =
                                    transformed.arguments.hidden().map(str::to_owned).collect();
                                shaping = Some((transformed.arguments, upstream.input_schema));
                            }
                            Err(error) => {
                                diagnostics.push(Diagnostic::new(
                                    Severity::Skipped,
                                    Some(&def.id.to_string()),
                                    None,
                                    format!("not served: overrides.{}: {error}", o.key),
                                ));
                                return None;
                            }
                        }
                    }
                }
                let projection = found
                    .and_then(|o| o.results.clone())
                    .or_else(|| self.results.clone());
                if let Some(projection) = &projection {
                    let def = Arc::make_mut(&mut tool.definition);
                    let upstream = def.output_schema.as_ref().map(Schema::to_value);
                    match projection.output_schema(upstream.as_ref()) {
                        SchemaOutcome::Derived(schema) => def.output_schema = Some(schema.into()),
                        SchemaOutcome::Dropped { reason } => {
                            diagnostics.push(Diagnostic::new(
                                Severity::Info,
                                Some(&def.id.to_string()),
                                None,
                                format!("output schema not served: {reason}"),
                            ));
                            def.output_schema = None;
                        }
                    }
                }
                let cache = self.cache_rule(
                    &tool,
                    found.map(|o| &**o),
                    projection.as_deref(),
                    diagnostics,
                );
                let shaping = match (shaping, projection, cache) {
                    (None, None, None) => None,
                    (arguments, projection, cache) => {
                        let (arguments, upstream_input) = match arguments {
                            Some((map, schema)) if !map.is_identity() => {
                                (map, Some((schema, validate::new_key())))
                            }
                            _ => (ArgumentMap::default(), None),
                        };
                        Some(Arc::new(Shaping {
                            arguments,
                            upstream_input,
                            env: Arc::clone(&self.fixed_env),
                            projection,
                            cache,
                        }))
                    }
                };
                Some((tool, shaping))
            })
            .collect();
        let overrides = self.overrides.values();
        let globs = self.override_globs.iter().map(|(_, o)| o);
        for o in overrides.chain(globs).filter(|o| !used.contains(&o.key)) {
            diagnostics.push(Diagnostic::new(
                Severity::Warning,
                None,
                None,
                format!(
                    "overrides.{}: no served tool of this source has this name (an MCP tool's name, an operationId, a tool name, or `METHOD /path`); it changes nothing",
                    o.key
                ),
            ));
        }
        shaped
    }

    /// How `tool`'s answers are kept, when its override (`found`) or else the source says so
    /// and it is not destructive. Its namespace in the cache is the served definition's
    /// fingerprint with what the source calls upstream and the projection of its results:
    /// any change to one of them leaves the old entries unread.
    fn cache_rule(
        &self,
        tool: &MappedTool,
        found: Option<&Override>,
        projection: Option<&Projection>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Option<CacheRule> {
        let config = match found.and_then(|o| o.cache.as_ref()) {
            Some(config) => config.as_ref()?,
            None => self.cache.as_ref()?,
        };
        if tool.destructive {
            // Said only of a tool its override named: a source's `cache` covers its read-only
            // tools and passes over the others.
            if found.is_some_and(|o| o.cache.is_some()) {
                diagnostics.push(Diagnostic::new(
                    Severity::Info,
                    Some(&tool.definition.id.to_string()),
                    None,
                    "not cached: the tool is destructive".to_owned(),
                ));
            }
            return None;
        }
        use sha2::Digest as _;
        let mut hash = sha2::Sha256::new();
        hash.update(tool.definition.id.to_string().as_bytes());
        hash.update([0]);
        let canonical = otc_mappings::change::canonical(tool);
        hash.update(otc_mappings::change::fingerprint(&canonical).as_bytes());
        hash.update([0]);
        for handle in handles(tool) {
            hash.update(handle.as_bytes());
            hash.update([0]);
        }
        hash.update(projection.map_or("", Projection::program).as_bytes());
        hash.update([u8::from(config.public)]);
        Some(CacheRule {
            ttl: Duration::from_secs(config.ttl_secs),
            public: config.public,
            namespace: hash.finalize().into(),
        })
    }

    /// The override of a tool known by `names`: an exact key first, else the first glob key.
    fn override_for(&self, names: &[String]) -> Option<&Arc<Override>> {
        names
            .iter()
            .find_map(|n| self.overrides.get(n))
            .or_else(|| {
                self.override_globs
                    .iter()
                    .find(|(glob, _)| names.iter().any(|n| glob.is_match(n)))
                    .map(|(_, o)| o)
            })
    }
}

impl SourcePolicy {
    /// Runs one upstream call under this source's limits: at most `max_concurrency` at once,
    /// and the source's timeout (else `default_timeout`). Waiting for a permit counts against the
    /// timeout, like the call itself; a call past it fails as a retryable `Timeout`.
    pub async fn forward<T>(
        &self,
        default_timeout: Duration,
        call: impl Future<Output = Result<T, AdapterError>>,
    ) -> Result<T, AdapterError> {
        let timeout = self.timeout.unwrap_or(default_timeout);
        let _counted = Counted::new(&self.in_flight);
        let limited = async {
            let _permit = match &self.permits {
                Some(permits) => permits.acquire().await.ok(),
                None => None,
            };
            call.await
        };
        tokio::time::timeout(timeout, limited)
            .await
            .unwrap_or(Err(AdapterError::Timeout { elapsed: timeout }))
    }

    /// Waits until no call of the source is in flight, or `deadline` passed; whether it drained.
    /// A reload stops a source it removed once this returns.
    pub async fn drained(&self, deadline: Duration) -> bool {
        let mut count = self.in_flight.0.subscribe();
        tokio::time::timeout(deadline, count.wait_for(|n| *n == 0))
            .await
            .is_ok_and(|waited| waited.is_ok())
    }
}

#[cfg(test)]
mod tests {
    use otc_mappings::otc::{ToolDefinition, ToolId, ToolVersion};
    use serde_json::json;

    use super::*;

    /// Issue 23, part 2.5: a reload drains a removed source on its count of calls in flight,
    /// not on how many hold its adapter (a catalog kept by anything else held it to the deadline).
    #[tokio::test]
    async fn drained_waits_for_the_calls_in_flight_and_no_longer() {
        let policy = Arc::new(SourcePolicy::default());
        assert!(policy.drained(Duration::from_millis(10)).await, "idle");
        let (finish, finished) = tokio::sync::oneshot::channel::<()>();
        let call = {
            let policy = Arc::clone(&policy);
            tokio::spawn(async move {
                policy
                    .forward(Duration::from_secs(30), async {
                        let _ = finished.await;
                        Ok::<_, AdapterError>(())
                    })
                    .await
            })
        };
        tokio::task::yield_now().await;
        assert!(
            !policy.drained(Duration::from_millis(50)).await,
            "drained with a call in flight"
        );
        let waiting = {
            let policy = Arc::clone(&policy);
            tokio::spawn(async move { policy.drained(Duration::from_secs(10)).await })
        };
        finish.send(()).unwrap();
        call.await.unwrap().unwrap();
        assert!(waiting.await.unwrap(), "not drained once the call finished");
    }

    fn tool(name: &str) -> MappedTool {
        let v = ToolVersion::new(1, 0, 0);
        MappedTool {
            definition: Arc::new(ToolDefinition {
                id: ToolId::exact("Kit", heck::AsUpperCamelCase(name).to_string(), v),
                name: format!("Kit_{name}"),
                description: "d".to_owned(),
                version: v,
                input_schema: json!({}).into(),
                output_schema: None,
                requirements: None,
            }),
            target: Target::Named {
                name: name.to_owned(),
            },
            destructive: true,
            label: None,
            hidden_inputs: Vec::new(),
        }
    }

    #[test]
    fn include_exclude_and_overrides() {
        let options = SourceOptions {
            include: vec!["get_*".to_owned(), "Echo".to_owned()],
            exclude: vec!["get_secret".to_owned()],
            overrides: [(
                "echo".to_owned(),
                ToolOverride {
                    name: Some("Say".to_owned()),
                    description: Some("Says it.".to_owned()),
                    ..ToolOverride::default()
                },
            )]
            .into_iter()
            .collect(),
            ..Default::default()
        };
        let policy = options.compile("sources[0]").unwrap();
        let mut d = Vec::new();
        let kept = policy.apply(
            vec![
                tool("get_user"),
                tool("get_secret"),
                tool("echo"),
                tool("delete_user"),
            ],
            &mut d,
        );
        let ids: Vec<String> = kept
            .iter()
            .map(|(t, _)| t.definition.id.to_string())
            .collect();
        assert_eq!(ids, ["Kit.GetUser@1.0.0", "Kit.Say@1.0.0"]);
        assert_eq!(kept[1].0.definition.description, "Says it.");
        assert_eq!(kept[1].0.definition.name, "Kit_Say");
        assert!(
            !d.iter().any(|d| d.severity == Severity::Warning),
            "a used override was reported: {d:?}"
        );
        // A key no tool has (a misspelt name) is reported, since it changes nothing.
        let mut options = options.clone();
        options
            .overrides
            .insert("ehco".to_owned(), ToolOverride::default());
        let mut d = Vec::new();
        options
            .compile("sources[0]")
            .unwrap()
            .apply(vec![tool("echo")], &mut d);
        let warned: Vec<&str> = d
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .map(|d| d.reason.as_str())
            .collect();
        assert_eq!(warned.len(), 1, "{d:?}");
        assert!(
            warned[0].starts_with("overrides.ehco: no served tool"),
            "{warned:?}"
        );
    }

    /// A fixed value from the environment may be a secret: a compiled policy (and so every
    /// entry that prints it) names the variable, never its value.
    #[test]
    fn fixed_environment_values_never_reach_debug_output() {
        let env = FixedEnv(
            [(
                "GITHUB_TOKEN".to_owned(),
                serde_json::Value::String("s3cr3t-fixed-value".to_owned()),
            )]
            .into_iter()
            .collect(),
        );
        let policy = SourcePolicy {
            fixed_env: Arc::new(env),
            ..SourcePolicy::default()
        };
        let printed = format!("{policy:?}");
        assert!(printed.contains("GITHUB_TOKEN"), "{printed}");
        assert!(!printed.contains("s3cr3t"), "{printed}");
    }

    #[test]
    fn http_operations_match_by_tag_method_route_and_operation_id() {
        let http = |id: &str, method: &str, tags: &[&str]| {
            let mut t = tool(id);
            t.target = Target::Http(Arc::new(otc_mappings::openapi::RequestPlan {
                operation: format!("{method} /{id}"),
                method: method.to_owned(),
                path: format!("/{id}"),
                server_url: None,
                params: Vec::new(),
                body: None,
                security: Vec::new(),
                accept: Vec::new(),
                operation_id: Some(id.to_owned()),
                tags: tags.iter().map(|t| (*t).to_owned()).collect(),
            }));
            t
        };
        let tools = || {
            vec![
                http("listPets", "GET", &["pets"]),
                http("deletePet", "DELETE", &["pets"]),
                http("getStore", "GET", &["store"]),
            ]
        };
        let kept = |options: SourceOptions| -> Vec<String> {
            let policy = options.compile("s").unwrap();
            policy
                .apply(tools(), &mut Vec::new())
                .iter()
                .map(|(t, _)| t.definition.id.tool.clone())
                .collect()
        };
        let include = |p: &[&str]| SourceOptions {
            include: p.iter().map(|s| (*s).to_owned()).collect(),
            ..Default::default()
        };
        let exclude = |p: &[&str]| SourceOptions {
            exclude: p.iter().map(|s| (*s).to_owned()).collect(),
            ..Default::default()
        };
        assert_eq!(kept(include(&["tag:pets"])), ["ListPets", "DeletePet"]);
        assert_eq!(kept(exclude(&["method:DELETE"])), ["ListPets", "GetStore"]);
        assert_eq!(kept(include(&["GET /*"])), ["ListPets", "GetStore"]);
        assert_eq!(kept(exclude(&["getStore", "deletePet"])), ["ListPets"]);
    }

    #[test]
    fn context_headers_are_header_names_and_never_the_bridges_own_credentials() {
        let headers = |id: &str, header: &str| SourceOptions {
            context_headers: [(id.to_owned(), header.to_owned())].into_iter().collect(),
            ..Default::default()
        };
        let policy = headers("api_key", "X-Api-Key")
            .compile("sources[0]")
            .unwrap();
        assert_eq!(policy.context_headers[0].1, "x-api-key");
        for refused in ["Authorization", "cookie", "Proxy-Authorization"] {
            let err = headers("token", refused)
                .compile("sources[0]")
                .unwrap_err()
                .to_string();
            assert!(err.contains("sources[0].context_headers.token"), "{err}");
            assert!(err.contains("never forwarded"), "{err}");
        }
        let err = headers("k", "bad header")
            .compile("sources[2]")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not an HTTP header name"), "{err}");
    }

    #[test]
    fn bad_options_name_the_key() {
        let bad = SourceOptions {
            include: vec!["[".to_owned()],
            ..Default::default()
        };
        assert!(
            bad.compile("sources[1]")
                .unwrap_err()
                .to_string()
                .contains("sources[1].include")
        );
        let bad = SourceOptions {
            overrides: [(
                "x".to_owned(),
                ToolOverride {
                    name: Some("bad-name".to_owned()),
                    ..ToolOverride::default()
                },
            )]
            .into_iter()
            .collect(),
            ..Default::default()
        };
        assert!(
            bad.compile("sources[0]")
                .unwrap_err()
                .to_string()
                .contains("overrides.x.name")
        );
    }
}
