//! The pages, as maud templates: every `(value)` below is HTML-escaped by maud, so catalog text
//! (descriptions, names, schemas, reasons) is always text, never markup. Links are made only from
//! tool ids and toolkit names (checked segments, percent-encoded all the same), never from what a
//! description says.

use std::sync::Arc;

use indexmap::IndexMap;
use maud::{DOCTYPE, Markup, html};
use otc_adapters::SourceState;
use otc_mappings::Target;
use serde_json::Value;

use super::schema;
use crate::access::View;
use crate::catalog::registry::{Catalog, Entry};
use crate::catalog::semantic::Semantic;
use crate::catalog::summary;
use crate::telemetry::metrics::{Metrics, Recent, RecentCalls};

/// Tools listed on one page of `GET /`: a catalog of 10,000 tools is 100 pages of a few dozen
/// kilobytes each, not one page of megabytes.
pub(super) const PAGE_SIZE: usize = 100;
/// Search results shown.
const SEARCH_RESULTS: usize = 50;

/// Whether the API needs a credential (the `curl` line then shows a placeholder header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AuthKind {
    /// Authentication is off.
    None,
    /// API keys or bearer tokens.
    Required,
}

/// The frame every page shares: title, the stylesheet and script, the header with the search
/// box, and `main`, the part the script swaps when it fetches a page with the stored credential.
fn layout(title: &str, query: &str, body: &Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · otc-bridge" }
                link rel="stylesheet" href="/ui/assets/ui.css";
                script src="/ui/assets/ui.js" defer {}
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    a.brand href="/" { "otc-bridge catalog" }
                    form.search role="search" action="/ui/search" method="get" {
                        label for="q" { "Search tools" }
                        input #q type="search" name="q" value=(query) autocomplete="off"
                            placeholder="e.g. create an issue";
                        button type="submit" { "Search" }
                    }
                    button #forget type="button" hidden { "Forget key" }
                }
                main #main tabindex="-1" { (body) }
            }
        }
    }
}

/// The page served instead of catalog data when authentication is on and the request has no
/// valid credential: a form whose script keeps the key in `sessionStorage` and asks again.
pub(super) fn key_prompt(refused: bool) -> Markup {
    layout(
        "Sign in",
        "",
        &html! {
            div data-needs-key {
                h1 { "This bridge needs a key" }
                @if refused {
                    p.error role="alert" { "The key was not accepted. Check it and try again." }
                }
                p {
                    "Enter an API key or a bearer token (JWT). It is kept in this tab only "
                    "(sessionStorage) and sent as a header with each request; never as a cookie."
                }
                noscript { p.error { "Entering a key needs JavaScript." } }
                form #key-form {
                    // No `name`: without the script, the key is never put in a URL.
                    label for="key-kind" { "Kind" }
                    select #key-kind {
                        option value="api-key" { "API key (X-API-Key)" }
                        option value="bearer" { "Bearer token (Authorization)" }
                    }
                    label for="key" { "Key or token" }
                    input #key type="password" autocomplete="off" required;
                    button type="submit" { "Open the catalog" }
                }
            }
        },
    )
}

/// The data of `GET /`.
pub(super) struct CatalogPage<'a> {
    pub(super) catalog: &'a Catalog,
    pub(super) view: View<'a>,
    pub(super) metrics: Option<&'a Metrics>,
    pub(super) toolkit: Option<&'a str>,
    pub(super) page: usize,
    /// How search ranks now: `words and meaning`, or `words only`.
    pub(super) search: &'static str,
    /// Where repeated `call_id`s are answered from; `None`: off.
    pub(super) idempotency: Option<&'static str>,
    /// Where the answers of cached tools are kept, and how many; `None`: no store.
    pub(super) cache: Option<String>,
}

/// One source's line in the table of sources.
struct SourceLine {
    name: String,
    kind: String,
    state: SourceState,
    tools: usize,
}

/// One toolkit's line in the health table: the sources serving its tools, and its calls.
///
/// Health is per toolkit, not per source, because the two differ: a source is named by its
/// configuration key and its toolkit by its tools' ids, and one toolkit may be served by several
/// sources (two versions of one API, each from its own document; a product's REST API and its
/// MCP server, both configured as `toolkit: Github`). People call tools by toolkit; the sources'
/// states stand beside it, as that is what an operator restarts.
struct ToolkitLine<'a> {
    name: &'a str,
    tools: usize,
    /// The sources of its tools the caller sees, in catalog order.
    sources: Vec<&'a str>,
    calls: Option<RecentCalls>,
}

impl CatalogPage<'_> {
    pub(super) fn render(&self) -> Markup {
        let latest = self.catalog.latest();
        // The tools this caller sees: one pass over the catalog (the policies' answers are kept
        // per caller and catalog, so it is a read after the first page).
        let seen = crate::access::seen_in(self.catalog, self.view);
        let visible: Vec<&Arc<Entry>> = latest
            .iter()
            .enumerate()
            .filter(|(position, _)| seen.as_ref().is_none_or(|sees| sees(*position)))
            .map(|(_, entry)| entry)
            .collect();
        let mut toolkits: IndexMap<&str, usize> = IndexMap::new();
        let mut per_source: IndexMap<&str, usize> = IndexMap::new();
        let mut served_by: IndexMap<&str, Vec<&str>> = IndexMap::new();
        for entry in &visible {
            let toolkit = entry.definition().id.toolkit.as_str();
            *toolkits.entry(toolkit).or_default() += 1;
            *per_source.entry(entry.adapter.name()).or_default() += 1;
            let sources = served_by.entry(toolkit).or_default();
            if !sources.contains(&entry.adapter.name()) {
                sources.push(entry.adapter.name());
            }
        }
        let sources = self.sources(&per_source);
        let recent = self.metrics.map(Metrics::recent_calls);
        let health: Vec<ToolkitLine<'_>> = toolkits
            .iter()
            .map(|(&name, &tools)| ToolkitLine {
                name,
                tools,
                sources: served_by.swap_remove(name).unwrap_or_default(),
                calls: recent.as_ref().map(|r| r.toolkit(name)),
            })
            .collect();
        let listed: Vec<&Arc<Entry>> = match self.toolkit {
            Some(toolkit) => visible
                .iter()
                .copied()
                .filter(|e| e.definition().id.toolkit == toolkit)
                .collect(),
            None => visible.clone(),
        };
        let pages = listed.len().div_ceil(PAGE_SIZE).max(1);
        let page = self.page.min(pages);
        let shown = listed.iter().skip((page - 1) * PAGE_SIZE).take(PAGE_SIZE);
        let heading = match self.toolkit {
            Some(toolkit) => format!("Tools in {toolkit}"),
            None => "Tools".to_owned(),
        };
        let page_link = |n: usize| match self.toolkit {
            Some(t) => format!("/?toolkit={}&page={n}", encode(t)),
            None => format!("/?page={n}"),
        };
        layout(
            "Catalog",
            "",
            &html! {
                h1 { "Catalog" }
                p { (visible.len()) " tools in " (toolkits.len()) " toolkits from "
                    (sources.len()) " sources." }
                section aria-labelledby="sources-h" {
                    h2 #sources-h { "Sources" }
                    (sources_table(&sources))
                }
                section aria-labelledby="health-h" {
                    h2 #health-h { "Health" }
                    (health_table(&health, &sources, recent.as_ref()))
                    dl.facts {
                        dt { "Search" } dd { (self.search) }
                        dt { "Repeated call_ids" } dd {
                            @match self.idempotency {
                                Some(store) => { "answered once, from " (store) }
                                None => "every call runs",
                            }
                        }
                        dt { "Cache of read-only calls" } dd {
                            @let cached = visible.iter().filter(|e| e.shaping.as_ref().is_some_and(|s| s.cache.is_some())).count();
                            @match (&self.cache, cached) {
                                (Some(store), 1) => { "1 tool keeps its answers; " (store) }
                                (Some(store), 2..) => { (cached) " tools keep their answers; " (store) }
                                _ => "no tool keeps its answers (a source's cache: turns it on)",
                            }
                        }
                        dt { "Metrics" } dd {
                            @if let Some(recent) = &recent {
                                @let over = recent.over.as_secs();
                                "on (calls, errors and latency above cover the last " (over / 60) " min " (over % 60) " s, at most "
                                (crate::telemetry::metrics::WINDOW.as_secs() / 60) " minutes; GET /metrics)"
                            } @else { "off" }
                        }
                    }
                }
                nav aria-labelledby="toolkits-h" {
                    h2 #toolkits-h { "Toolkits" }
                    ul.toolkits {
                        li { a href="/" aria-current=[self.toolkit.is_none().then_some("page")] { "All" } }
                        @for (toolkit, count) in &toolkits {
                            li {
                                a href={ "/?toolkit=" (encode(toolkit)) }
                                    aria-current=[(self.toolkit == Some(*toolkit)).then_some("page")] {
                                    (toolkit) " (" (count) ")"
                                }
                            }
                        }
                    }
                }
                section aria-labelledby="tools-h" {
                    h2 #tools-h { (heading) }
                    @if listed.is_empty() {
                        p { "No tools to show." }
                    } @else {
                        (tool_table(shown))
                        @if pages > 1 {
                            nav.pages aria-label="Pages" {
                                @if page > 1 { a href=(page_link(page - 1)) rel="prev" { "Previous" } }
                                span { "Page " (page) " of " (pages) }
                                @if page < pages { a href=(page_link(page + 1)) rel="next" { "Next" } }
                            }
                        }
                    }
                }
            },
        )
    }

    /// Every configured source: the ones serving, then the ones that failed to start.
    fn sources(&self, per_source: &IndexMap<&str, usize>) -> Vec<SourceLine> {
        let mut lines: Vec<SourceLine> = self
            .catalog
            .sources()
            .iter()
            .map(|s| {
                let name = s.adapter.name();
                let kind = match (s.adapter.mcp_protocol(), s.entries.first()) {
                    (Some(protocol), _) => protocol.to_string(),
                    (None, Some(entry)) if matches!(entry.tool.target, Target::Http(_)) => {
                        "OpenAPI".to_owned()
                    }
                    (None, Some(_)) => "MCP".to_owned(),
                    (None, None) => String::new(),
                };
                SourceLine {
                    name: name.to_owned(),
                    kind,
                    state: s.adapter.state(),
                    tools: per_source.get(name).copied().unwrap_or(0),
                }
            })
            .collect();
        lines.extend(self.catalog.failed().iter().map(|f| SourceLine {
            name: f.name.clone(),
            kind: String::new(),
            state: SourceState::Failed {
                reason: f.reason.clone(),
            },
            tools: 0,
        }));
        lines
    }
}

/// A source's state as one word, and the reason when it has one.
fn state_word(state: &SourceState) -> (&'static str, Option<&String>) {
    match state {
        SourceState::Starting => ("starting", None),
        SourceState::Ready => ("ready", None),
        SourceState::Restarting { reason } => ("restarting", Some(reason)),
        SourceState::Failed { reason } => ("failed", Some(reason)),
    }
}

fn state_badge(state: &SourceState) -> Markup {
    let (word, _) = state_word(state);
    html! { span class={ "state state-" (word) } { (word) } }
}

fn sources_table(sources: &[SourceLine]) -> Markup {
    html! {
        table.sources {
            thead { tr {
                th scope="col" { "Source" }
                th scope="col" { "Kind" }
                th scope="col" { "State" }
                th scope="col" { "Tools" }
                th scope="col" { "Last error" }
            } }
            tbody {
                @for s in sources {
                    tr {
                        th scope="row" { (s.name) }
                        td { (s.kind) }
                        td { (state_badge(&s.state)) }
                        td.num { (s.tools) }
                        td { @if let Some(reason) = state_word(&s.state).1 { (reason) } }
                    }
                }
            }
        }
    }
}

/// Each toolkit the caller sees: its sources and their states, and with metrics on its calls
/// over the last minutes.
fn health_table(
    toolkits: &[ToolkitLine<'_>],
    sources: &[SourceLine],
    recent: Option<&Recent>,
) -> Markup {
    let state_of = |name: &str| sources.iter().find(|s| s.name == name).map(|s| &s.state);
    html! {
        table.health {
            thead { tr {
                th scope="col" { "Toolkit" }
                th scope="col" { "Sources" }
                th scope="col" { "Tools" }
                @if recent.is_some() {
                    th scope="col" { "Calls" }
                    th scope="col" { "Calls/s" }
                    th scope="col" { "Errors" }
                    th scope="col" { "Error rate" }
                    th scope="col" { "p50" }
                    th scope="col" { "p99" }
                }
            } }
            tbody {
                @for t in toolkits {
                    tr {
                        th scope="row" { (t.name) }
                        td {
                            @for (n, source) in t.sources.iter().enumerate() {
                                @if n > 0 { ", " }
                                (source)
                                @if let Some(state) = state_of(source) { " " (state_badge(state)) }
                            }
                        }
                        td.num { (t.tools) }
                        @if let Some(calls) = &t.calls {
                            td.num { (calls.calls) }
                            td.num { (format!("{:.2}", calls.per_second)) }
                            td.num { (calls.errors) }
                            td.num { (error_rate(calls)) }
                            td.num { (seconds(calls.p50)) }
                            td.num { (seconds(calls.p99)) }
                        }
                    }
                }
            }
        }
    }
}

/// The share of calls that failed, as a percentage; "–" when there was no call.
fn error_rate(calls: &RecentCalls) -> String {
    if calls.calls == 0 {
        return "–".to_owned();
    }
    #[allow(clippy::cast_precision_loss)]
    let rate = calls.errors as f64 * 100.0 / calls.calls as f64;
    format!("{rate:.1} %")
}

/// A latency as people read it; "–" when nothing was measured.
fn seconds(value: Option<f64>) -> String {
    match value {
        None => "–".to_owned(),
        Some(s) if s < 1.0 => format!("≤ {:.1} ms", s * 1000.0),
        Some(s) => format!("≤ {s:.1} s"),
    }
}

fn tool_table<'e>(entries: impl Iterator<Item = &'e &'e Arc<Entry>>) -> Markup {
    html! {
        table.tools {
            thead { tr {
                th scope="col" { "Tool" }
                th scope="col" { "Version" }
                th scope="col" { "Summary" }
            } }
            tbody {
                @for entry in entries {
                    @let def = entry.definition();
                    tr {
                        th scope="row" {
                            a href=(tool_href(&def.id.name(), None)) { (def.id.name()) }
                            @if entry.tool.destructive { " " span.badge.destructive { "destructive" } }
                        }
                        td { (def.version) }
                        td { (summary(&def.description)) }
                    }
                }
            }
        }
    }
}

/// `/ui/tools/Toolkit.Tool` (or `@version`): ids are `[A-Za-z0-9_]` segments, versions digits
/// and dots, encoded all the same.
fn tool_href(name: &str, version: Option<&str>) -> String {
    match version {
        Some(v) => format!("/ui/tools/{}@{}", encode(name), encode(v)),
        None => format!("/ui/tools/{}", encode(name)),
    }
}

fn encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// What a search found, for [`search_page`].
pub(super) struct Found {
    /// The hits, best first: entry, score, which part of the request it serves, and whether a
    /// ranker is sure of it (else it is only among the model's closest).
    hits: Vec<(Arc<Entry>, f32, Option<String>, bool)>,
    total: usize,
    /// Why there is nothing to show, when the query was refused.
    refusal: Option<String>,
    semantic: bool,
}

/// The search of `search_tools` ([`crate::server::mcp::meta`]): the same index, the same rankers
/// (the model's meaning once it has embedded the catalog, words alone until then), the same
/// filter for the caller's view.
pub(super) fn search(
    catalog: &Catalog,
    view: View<'_>,
    semantic: Option<&Semantic>,
    query: &str,
    toolkit: Option<&str>,
) -> Found {
    let query = query.trim();
    let refused = |why: String| Found {
        hits: Vec::new(),
        total: 0,
        refusal: Some(why),
        semantic: false,
    };
    if query.is_empty() {
        return refused("Type a few words describing the task.".to_owned());
    }
    let length = query.chars().count();
    if length > otc_search::MAX_QUERY_CHARS {
        return refused(format!(
            "The search is {length} characters long; a search reads at most {}.",
            otc_search::MAX_QUERY_CHARS
        ));
    }
    let answer = crate::access::search(catalog, view, semantic, query, toolkit, 1000);
    let latest = catalog.latest();
    let several = answer.parts.len() > 1;
    let hits = answer
        .hits
        .iter()
        .take(SEARCH_RESULTS)
        .filter_map(|hit| {
            let entry = latest.get(hit.position)?;
            let part = several
                .then(|| answer.parts.get(hit.part).cloned())
                .flatten();
            Some((Arc::clone(entry), hit.score, part, hit.sure))
        })
        .collect();
    Found {
        hits,
        total: answer.hits.len(),
        refusal: None,
        semantic: semantic.is_some() && catalog.vectors().is_some(),
    }
}

/// `GET /ui/search`.
pub(super) fn search_page(query: &str, found: &Found) -> Markup {
    layout(
        "Search",
        query,
        &html! {
            h1 { "Search" }
            div #results aria-live="polite" {
                @if let Some(why) = &found.refusal {
                    p { (why) }
                } @else if found.hits.is_empty() {
                    p { "No tool matches “" (query.trim()) "”. Try other words: the product or "
                        "service's name, the kind of object (issue, invoice, file) and the action "
                        "(list, create, delete)." }
                } @else {
                    @if found.hits.iter().all(|hit| !hit.3) {
                        p { "No tool clearly matches “" (query.trim()) "”; these are the closest by meaning." }
                    }
                    p { (found.total) " tools match; the best " (found.hits.len()) " are shown ("
                        (if found.semantic { "meaning and words" } else { "words only" }) ")." }
                    ol.results {
                        @for (entry, score, part, sure) in &found.hits {
                            @let def = entry.definition();
                            li {
                                a href=(tool_href(&def.id.name(), None)) { (def.id.name()) }
                                @if entry.tool.destructive { " " span.badge.destructive { "destructive" } }
                                " " span.score { "score " (format!("{score:.3}")) }
                                @if let Some(part) = part { " " span.part { "for “" (part) "”" } }
                                @if !sure { " " span.badge { "unsure" } }
                                p { (summary(&def.description)) }
                            }
                        }
                    }
                }
            }
        },
    )
}

/// 404: no such tool, or none the caller may see (the two are not told apart).
pub(super) fn no_such_tool(id: &str) -> Markup {
    layout(
        "No such tool",
        "",
        &html! {
            h1 { "No such tool" }
            p { "No tool " code { (id) } " is served. " a href="/" { "Back to the catalog" } }
        },
    )
}

/// `GET /ui/tools/{id}`.
pub(super) fn tool_page(
    catalog: &Catalog,
    view: View<'_>,
    entry: &Arc<Entry>,
    auth: AuthKind,
) -> Markup {
    let def = entry.definition();
    let name = def.id.name();
    let versions: Vec<&Arc<Entry>> = catalog
        .versions(&name)
        .iter()
        .filter(|e| view.sees(e))
        .collect();
    let input = serde_json::from_str::<Value>(def.input_schema.as_str()).unwrap_or(Value::Null);
    let output = def
        .output_schema
        .as_ref()
        .and_then(|s| serde_json::from_str::<Value>(s.as_str()).ok());
    let drift = entry.policy.pins.as_ref().and_then(|_| {
        catalog
            .drifted()
            .find(|(_, d)| d.name == name)
            .map(|(_, d)| d)
    });
    let exact = format!("{name}@{}", def.version);
    layout(
        &name,
        "",
        &html! {
            h1 {
                (name)
                " " span.version { (def.version) }
                @if entry.tool.destructive { " " span.badge.destructive { "destructive" } }
            }
            dl.facts {
                dt { "Id" } dd { code { (exact) } }
                dt { "Source" } dd { (entry.adapter.name()) }
                dt { "Destructive" } dd {
                    @if entry.tool.destructive { "yes: it may change or delete data" } @else { "no" }
                }
                @if entry.upstream != def.version {
                    dt { "Upstream version" } dd { (entry.upstream) }
                }
            }
            section aria-labelledby="description-h" {
                h2 #description-h { "Description" }
                div.description { (def.description) }
            }
            @if versions.len() > 1 {
                section aria-labelledby="versions-h" {
                    h2 #versions-h { "Versions served" }
                    table.versions {
                        thead { tr {
                            th scope="col" { "Version" }
                            th scope="col" { "Upstream" }
                            th scope="col" { "Destructive" }
                            th scope="col" { "Summary" }
                        } }
                        tbody {
                            @for v in &versions {
                                @let vdef = v.definition();
                                @let here = vdef.version == def.version;
                                tr.current[here] {
                                    th scope="row" {
                                        a href=(tool_href(&name, Some(&vdef.version.to_string())))
                                            aria-current=[here.then_some("page")] { (vdef.version) }
                                    }
                                    td { (v.upstream) }
                                    td { @if v.tool.destructive { "yes" } @else { "no" } }
                                    td { (summary(&vdef.description)) }
                                }
                            }
                        }
                    }
                }
            }
            @if let Some(requirements) = def.requirements.as_ref().filter(|r| !r.is_empty()) {
                section aria-labelledby="requirements-h" {
                    h2 #requirements-h { "Requirements" }
                    ul {
                        @for a in &requirements.authorization {
                            li { "Authorization " code { (a.id) }
                                @if let Some(oauth2) = &a.oauth2 {
                                    " (OAuth 2: " (serde_json::to_string(oauth2).unwrap_or_default()) ")"
                                }
                            }
                        }
                        @for s in &requirements.secrets { li { "Secret " code { (s.id) } } }
                        @if requirements.user_id { li { "A user id" } }
                    }
                }
            }
            @if let Some(pins) = &entry.policy.pins {
                section aria-labelledby="lock-h" {
                    h2 #lock-h { "Lockfile" }
                    @match drift {
                        None => p { "Matches the lockfile: served as locked, at " code { (exact) } "." },
                        Some(drift) => {
                            p.warning { (drift.message()) }
                            p { "On a change: " code { (format!("{:?}", pins.on_change).to_lowercase()) } "." }
                            @if !drift.change.reasons().is_empty() {
                                table {
                                    thead { tr { th scope="col" { "Class" } th scope="col" { "Where" } th scope="col" { "Change" } } }
                                    tbody {
                                        @for reason in drift.change.reasons() {
                                            tr { td { (reason.class.as_str()) } td { code { (reason.path) } } td { (reason.message) } }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            section aria-labelledby="input-h" {
                h2 #input-h { "Input" }
                (schema::table(&input, "Input parameters"))
            }
            section aria-labelledby="output-h" {
                h2 #output-h { "Output" }
                @match &output {
                    Some(output) => (schema::table(output, "Output fields")),
                    None => p { "No output schema: the value is whatever the tool returns." },
                }
            }
            (try_it(&exact, &input, entry.tool.destructive, auth))
        },
    )
}

/// The try-it form: fields made from the input schema, the input as JSON, and where the answer,
/// the request body and a `curl` line are shown. The script validates before sending.
fn try_it(exact: &str, input: &Value, destructive: bool, auth: AuthKind) -> Markup {
    html! {
        section aria-labelledby="try-h" {
            h2 #try-h { "Try it" }
            noscript { p { "Trying a tool needs JavaScript; the request body and curl line below work without it." } }
            form #try novalidate data-tool=(exact) data-destructive=(destructive)
                data-auth=(if auth == AuthKind::Required { "required" } else { "none" })
                data-schema=(input.to_string()) {
                (schema::fields(input))
                label for="try-json" { "Input as JSON" }
                textarea #try-json rows="6" spellcheck="false" aria-describedby="try-json-help" { "{}" }
                p.help #try-json-help { "Filled from the fields above; edit it to send anything else." }
                div #try-errors role="alert" {}
                button type="submit" { @if destructive { "Call (asks first)" } @else { "Call" } }
            }
            h3 { "Answer" }
            div #try-answer role="status" aria-live="polite" { p.muted { "Nothing sent yet." } }
            h3 { "Request body" }
            pre #try-body { (serde_json::json!({"request": {"tool_id": exact, "input": {}}})) }
            h3 { "curl" }
            pre #try-curl {}
            button #try-copy type="button" { "Copy the curl line" }
        }
    }
}
