//! The OpenAPI adapter: serves the operations of one OpenAPI document as tools and forwards each
//! call as the HTTP request its [`RequestPlan`] describes.
//!
//! Everything that does not depend on a call is done once in [`OpenApiAdapter::build`]: the
//! document is loaded and mapped, each operation's base URL resolved (config `base_url` > the
//! operation's absolute server URL > a relative server URL resolved against the document's URL),
//! its path template split, its header names parsed (`compile.rs`), the bridge's own credentials
//! read from the environment, and the source's share of the HTTP stack taken (`client.rs`: one
//! client per distinct set of client settings, shared by every source built with the same
//! [`BuildContext`]). A call then fills in values
//! (`request.rs`), sends, and turns the answer or the failure into a value or an
//! [`AdapterError`] (`response.rs`).
//!
//! What the upstream says back is scrubbed of credentials before it leaves the adapter
//! (`scrub.rs`): error bodies of every credential the request carried, values of the credentials
//! the bridge holds (a caller may see its own `context` credentials echoed back).
//!
//! Only the origin of an operation's base URL is ever contacted: values are percent-encoded so
//! they cannot change the host, and redirects are followed only within that origin (so a
//! redirect can never reach a host the checks below did not see). A document's `servers` that
//! point at a link-local or cloud-metadata address (`refused_host`) are refused unless
//! `allow_link_local_servers` is set: the operation is skipped with a diagnostic naming it and
//! the URL, and when that leaves the source with no HTTP operation at all, the source fails (it
//! would otherwise start serving nothing, silently). A relative server URL resolved against the
//! document's own URL, and `base_url`, name hosts the operator chose and are not refused. Names
//! are checked as written: a host name whose DNS answer is link-local is not caught here.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use otc_mappings::openapi::{
    CredentialPlacement, MapOptions, RequestPlan, map_parsed, parse_document,
};
use otc_mappings::otc::ToolId;
use otc_mappings::{Diagnostic, Mapped, MappedTool, Severity, Target};
use serde_json::Value;
use url::Url;

use crate::fresh::{CacheRequest, Fetched};
use crate::{Adapter, AdapterError, BuildContext, ToolCall, ToolValue};

mod body;
mod client;
mod compile;
mod config;
mod freshness;
mod load;
mod request;
mod response;
mod scratch_arena;
mod scrub;
mod style;

pub use client::HttpClients;
pub use config::{
    CredentialConfig, DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_MAX_REDIRECTS,
    DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT_MS, OpenApiConfig,
};

use client::CallClient;
use compile::{CompileError, CompiledPlan};
use config::Secret;
use scrub::{Forms, Scrubber};

/// One OpenAPI source, ready to serve calls.
pub struct OpenApiAdapter {
    name: String,
    client: CallClient,
    mapped: Mapped<MappedTool>,
    /// Compiled plans, keyed by the id of the tool they serve; a call whose plan is not the one
    /// compiled (a caller-built tool) is compiled on the spot.
    plans: HashMap<ToolId, CompiledPlan>,
    bases: BaseResolver,
    bridge_credentials: BTreeMap<String, Secret>,
    /// Scrubs the bridge's credentials (every form) from success values.
    bridge_scrubber: Scrubber,
    max_response_bytes: u64,
    timeout: Duration,
}

impl fmt::Debug for OpenApiAdapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenApiAdapter")
            .field("name", &self.name)
            .field("tools", &self.mapped.tools.len())
            .field("bridge_credentials", &self.bridge_credentials)
            .finish_non_exhaustive()
    }
}

impl OpenApiAdapter {
    /// Loads the document named by `config.spec` (a file, read with tokio, or an http(s) URL,
    /// fetched within `timeout_ms`), maps it (fetching sibling files its `$ref`s name, and
    /// remote ones only with `allow_remote_refs`), resolves every operation's base URL, reads the
    /// configured credentials from the environment and takes its HTTP client from `cx.http`
    /// (shared with the other sources built with `cx`). Every failure is
    /// `AdapterError::Setup` with a message that names the path, URL or key to fix.
    pub async fn build(
        name: &str,
        config: &OpenApiConfig,
        cx: &BuildContext,
    ) -> Result<Self, AdapterError> {
        let (mapped, url) = load_and_map(config, &cx.http).await?;
        Self::from_mapped(name, config, mapped, url.as_ref(), cx)
    }

    /// Only loads and maps the document (what `build` does first), without resolving base
    /// URLs, reading credentials or building a client: for commands that inspect a document
    /// and call nothing. Tools secured by a scheme in `config.credentials` are mapped as
    /// bridge-supplied, as `build` would.
    ///
    /// Operations whose server serving would refuse (a link-local or metadata host) are
    /// skipped here too, with the same diagnostic, so `check` reports what serving does.
    pub async fn map(
        config: &OpenApiConfig,
        cx: &BuildContext,
    ) -> Result<Mapped<MappedTool>, AdapterError> {
        let (mut mapped, url) = load_and_map(config, &cx.http).await?;
        let bases = BaseResolver::new(config, url.as_ref())?;
        skip_refused_hosts(&bases, &mut mapped)?;
        Ok(mapped)
    }

    /// Builds an adapter from tools already mapped (by `map_document`, or by hand in tests and
    /// benchmarks). `document_url` is where the document was fetched from, for relative server
    /// URLs. Operations whose plan cannot be compiled are dropped with a diagnostic.
    pub fn from_mapped(
        name: &str,
        config: &OpenApiConfig,
        mut mapped: Mapped<MappedTool>,
        document_url: Option<&Url>,
        cx: &BuildContext,
    ) -> Result<Self, AdapterError> {
        let bases = BaseResolver::new(config, document_url)?;
        skip_refused_hosts(&bases, &mut mapped)?;
        let mut bridge_credentials = BTreeMap::new();
        for (scheme, credential) in &config.credentials {
            bridge_credentials.insert(scheme.clone(), credential.read(scheme)?);
        }

        let mut plans = HashMap::with_capacity(mapped.tools.len());
        // Scheme name -> whether some operation sends it as HTTP Basic.
        let mut used_schemes = BTreeMap::new();
        let mut kept = Vec::with_capacity(mapped.tools.len());
        for tool in std::mem::take(&mut mapped.tools) {
            let Target::Http(plan) = &tool.target else {
                kept.push(tool);
                continue;
            };
            for usage in plan.security.iter().flatten() {
                let basic = matches!(usage.placement, CredentialPlacement::Basic);
                *used_schemes.entry(usage.scheme.clone()).or_insert(false) |= basic;
            }
            let base = bases.resolve(plan)?;
            match CompiledPlan::new(Arc::clone(plan), &base) {
                Ok(compiled) => {
                    plans.insert(tool.definition.id.clone(), compiled);
                    kept.push(tool);
                }
                Err(reason) => mapped.diagnostics.push(Diagnostic::new(
                    Severity::Skipped,
                    Some(&plan.operation),
                    None,
                    reason.to_string(),
                )),
            }
        }
        mapped.tools = kept;
        let mut forms = Forms::default();
        for (scheme, secret) in &bridge_credentials {
            match used_schemes.get(scheme) {
                Some(true) => forms.add_basic(secret.expose()),
                Some(false) | None => forms.add(secret.expose()),
            }
            if !used_schemes.contains_key(scheme) {
                mapped.diagnostics.push(Diagnostic::new(
                    Severity::Warning,
                    None,
                    None,
                    format!("credentials: no operation uses the security scheme '{scheme}'"),
                ));
            }
        }

        Ok(Self {
            name: name.to_owned(),
            client: cx.http.for_calls(config)?,
            mapped,
            plans,
            bases,
            bridge_credentials,
            bridge_scrubber: forms.build(),
            max_response_bytes: config.max_response_bytes,
            timeout: Duration::from_millis(config.timeout_ms),
        })
    }
}

#[async_trait]
impl Adapter for OpenApiAdapter {
    fn name(&self) -> &str {
        &self.name
    }

    async fn list_tools(&self) -> Result<Mapped<MappedTool>, AdapterError> {
        Ok(self.mapped.clone())
    }

    async fn call(&self, call: ToolCall) -> Result<Value, AdapterError> {
        let plan = self.plan_of(&call)?;
        let (request, sent) = self.prepare(&plan, &call)?;
        let response = self.send(request).await?;
        self.read(&plan, response, &sent).await
    }

    /// A call whose value is only passed on: a JSON answer stays its text.
    async fn call_unparsed(&self, call: ToolCall) -> Result<ToolValue, AdapterError> {
        let plan = self.plan_of(&call)?;
        let (request, sent) = self.prepare(&plan, &call)?;
        let response = self.send(request).await?;
        self.log_answer(&plan, &response);
        response::read_unparsed(
            response,
            self.max_response_bytes,
            &sent,
            &self.bridge_scrubber,
            self.timeout,
        )
        .await
    }

    /// A call whose answer may be kept: its caching headers are read, and a kept answer's
    /// validators are sent so that the upstream may answer `304 Not Modified`.
    async fn call_fresh(
        &self,
        call: ToolCall,
        cache: &CacheRequest,
    ) -> Result<Fetched, AdapterError> {
        let plan = self.plan_of(&call)?;
        let (mut request, sent) = self.prepare(&plan, &call)?;
        if let Some(validators) = &cache.validators {
            // Validators come back as the upstream sent them; one that is no longer a valid
            // header value (a store edited by hand) is simply not sent.
            let valid = |text: &Option<String>| {
                text.as_deref()
                    .and_then(|t| http::HeaderValue::from_str(t).ok())
            };
            if let Some(etag) = valid(&validators.etag) {
                request = request.header(http::header::IF_NONE_MATCH, etag);
            }
            if let Some(date) = valid(&validators.last_modified) {
                request = request.header(http::header::IF_MODIFIED_SINCE, date);
            }
        }
        let (response, asked) = self
            .client
            .send_asking(request)
            .await
            .map_err(|e| response::classify(e, self.timeout))?;
        let freshness = freshness::of(&asked, response.status(), response.headers(), cache.shared);
        if response.status() == http::StatusCode::NOT_MODIFIED && cache.validators.is_some() {
            return Ok(Fetched::NotModified(freshness));
        }
        let value = self.read(&plan, response, &sent).await?;
        Ok(Fetched::Value(value, freshness))
    }
}

impl OpenApiAdapter {
    /// The call's compiled plan: this adapter's own, or one compiled on the spot for a plan it
    /// did not list (a caller-built one) against the same upstream.
    fn plan_of(&self, call: &ToolCall) -> Result<Planned<'_>, AdapterError> {
        let Target::Http(plan) = &call.tool.target else {
            return Err(AdapterError::Protocol {
                message: format!("{} is not an HTTP operation", call.tool.definition.id),
                source: None,
            });
        };
        match self.plans.get(&call.tool.definition.id) {
            Some(compiled) if Arc::ptr_eq(&compiled.plan, plan) => Ok(Planned::Listed(compiled)),
            _ => {
                let base = self.bases.resolve(plan)?;
                if let Some(reason) = self.bases.refuses(&base) {
                    return Err(AdapterError::setup(reason));
                }
                Ok(Planned::Here(Box::new(CompiledPlan::new(
                    Arc::clone(plan),
                    &base,
                )?)))
            }
        }
    }

    /// The request for `call`, and the credentials it carries.
    fn prepare<'a>(
        &'a self,
        plan: &Planned<'_>,
        call: &'a ToolCall,
    ) -> Result<(reqwest::RequestBuilder, request::Sent<'a>), AdapterError> {
        request::prepare(
            &self.client,
            plan,
            &call.input,
            &call.context,
            &self.bridge_credentials,
            call.trace_id.as_deref(),
            call.trace_context.as_ref(),
        )
    }

    /// Sends `request`; a failure to reach the upstream (or to hear back in time) is classified.
    async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, AdapterError> {
        self.client
            .send(request)
            .await
            .map_err(|e| response::classify(e, self.timeout))
    }

    /// The answer's debug line.
    fn log_answer(&self, plan: &Planned<'_>, response: &reqwest::Response) {
        tracing::debug!(
            upstream = %self.name,
            operation = %plan.plan.operation,
            status = response.status().as_u16(),
            "Upstream answered."
        );
    }

    /// The answer's value, or its failure.
    async fn read(
        &self,
        plan: &Planned<'_>,
        response: reqwest::Response,
        sent: &request::Sent<'_>,
    ) -> Result<Value, AdapterError> {
        self.log_answer(plan, &response);
        response::read(
            response,
            self.max_response_bytes,
            sent,
            &self.bridge_scrubber,
            self.timeout,
        )
        .await
    }
}

/// A call's compiled plan: listed by the adapter, or compiled for this call.
enum Planned<'a> {
    Listed(&'a CompiledPlan),
    /// Boxed: a compiled plan is large, and this case is rare.
    Here(Box<CompiledPlan>),
}

impl std::ops::Deref for Planned<'_> {
    type Target = CompiledPlan;

    fn deref(&self) -> &CompiledPlan {
        match self {
            Self::Listed(compiled) => compiled,
            Self::Here(compiled) => compiled,
        }
    }
}

/// Loads the document and maps it; also returns the document's URL when it was fetched.
/// Drops the operations whose server is a host the document may not choose (see
/// [`BaseResolver::refuses`]), each with a `Skipped` diagnostic naming it; a document all of
/// whose operations are refused is an error.
fn skip_refused_hosts(
    bases: &BaseResolver,
    mapped: &mut Mapped<MappedTool>,
) -> Result<(), AdapterError> {
    let mut refused = None;
    let mut http_kept = 0usize;
    let mut kept = Vec::with_capacity(mapped.tools.len());
    for tool in std::mem::take(&mut mapped.tools) {
        if let Target::Http(plan) = &tool.target {
            // A base that cannot be resolved (no absolute server URL) is the build's error to
            // report, with its own message; only a resolved host can be refused.
            if let Some(reason) = bases
                .resolve(plan)
                .ok()
                .and_then(|base| bases.refuses(&base))
            {
                mapped.diagnostics.push(Diagnostic::new(
                    Severity::Skipped,
                    Some(&plan.operation),
                    None,
                    reason.clone(),
                ));
                refused.get_or_insert(reason);
                continue;
            }
            http_kept += 1;
        }
        kept.push(tool);
    }
    mapped.tools = kept;
    match refused.filter(|_| http_kept == 0) {
        Some(reason) => Err(AdapterError::setup(format!(
            "every operation of the document was refused; the first: {reason}"
        ))),
        None => Ok(()),
    }
}

async fn load_and_map(
    config: &OpenApiConfig,
    http: &HttpClients,
) -> Result<(Mapped<MappedTool>, Option<Url>), AdapterError> {
    let documents = load::for_documents(config, http)?;
    // A fetched document is fetched before its turn (the network is no core's work); a file is
    // read in its turn, on the thread that translates it.
    let fetched = match load::Spec::parse(&config.spec)? {
        load::Spec::Url(url) => {
            DocumentAt::Fetched(load::fetch_document(url, documents.as_ref()).await?)
        }
        load::Spec::File(path) => DocumentAt::File(path),
    };
    let mut options = MapOptions {
        toolkit: config.toolkit.clone(),
        version: config.version.clone(),
        base_uri: None,
        allow_remote_refs: config.allow_remote_refs,
        bridge_credentials: config.credentials.keys().cloned().collect(),
    };
    let ref_dirs = config.ref_dirs.clone();
    let spec = config.spec.clone();
    // One translation per core at a time: translating is CPU work, and a catalog of hundreds of
    // documents translated all at once (one blocking thread each) held every document's parse
    // tree and expansion at the same moment (a peak twice the served size) and ran no sooner.
    let _turn = TRANSLATING
        .acquire()
        .await
        .map_err(|e| AdapterError::Setup {
            message: format!("translating the OpenAPI document {spec} did not start"),
            source: Some(Box::new(e)),
        })?;
    // The mapper is synchronous and may ask for files: it runs on a blocking thread, where
    // the loader may wait on the runtime for remote `$ref`s.
    let translating = spec.clone();
    let (mapped, url) = tokio::task::spawn_blocking(move || {
        // Everything translation allocates, kept or not, goes to one arena; what is kept is
        // copied out below, and that arena's pages are all free again. The text is read there
        // too: it is not kept past parsing.
        let _scratch = scratch_arena::Scratch::enter();
        let document = match fetched {
            DocumentAt::Fetched(document) => document,
            DocumentAt::File(path) => load::read(&path)?,
        };
        let loader = load::RefLoader::new(documents, &document, options.allow_remote_refs)
            .with_ref_dirs(&ref_dirs);
        options.base_uri = Some(document.base_uri());
        let url = document.url().cloned();
        let parsed = parse_document(&document.text);
        // The text is not needed past parsing; freed before the translation's peak.
        drop(document);
        let mapped = parsed
            .and_then(|parsed| map_parsed(parsed, &options, &loader))
            .map_err(|e| AdapterError::Setup {
                message: format!("cannot translate the OpenAPI document {translating}: {e}"),
                source: Some(Box::new(e)),
            })?;
        Ok::<_, AdapterError>((mapped, url))
    })
    .await
    .map_err(|e| AdapterError::Setup {
        message: format!("translating the OpenAPI document {spec} did not finish"),
        source: Some(Box::new(e)),
    })??;
    // Copied out on this thread, so the blocking thread's memory is all free (see `relocated`).
    Ok((mapped.relocated(), url))
}

/// The document of [`load_and_map`]: fetched already, or a file to read in its turn.
enum DocumentAt {
    Fetched(load::Document),
    File(std::path::PathBuf),
}

/// Documents translated at once, process-wide: as many as there are cores (the cores are the
/// process's, whichever [`BuildContext`] a source is built with).
static TRANSLATING: std::sync::LazyLock<tokio::sync::Semaphore> = std::sync::LazyLock::new(|| {
    tokio::sync::Semaphore::new(std::thread::available_parallelism().map_or(2, |n| n.get()))
});

/// Resolves each operation's base URL by the rule in the module docs.
#[derive(Debug)]
struct BaseResolver {
    configured: Option<Url>,
    document_url: Option<Url>,
    allow_link_local: bool,
}

impl BaseResolver {
    fn new(config: &OpenApiConfig, document_url: Option<&Url>) -> Result<Self, AdapterError> {
        let configured = match &config.base_url {
            Some(text) => {
                let url = Url::parse(text).map_err(|e| AdapterError::Setup {
                    message: format!("base_url '{text}' is not an absolute URL"),
                    source: Some(Box::new(e)),
                })?;
                check_http(&url).map_err(|why| AdapterError::setup(format!("base_url: {why}")))?;
                Some(url)
            }
            None => None,
        };
        Ok(Self {
            configured,
            document_url: document_url.cloned(),
            allow_link_local: config.allow_link_local_servers,
        })
    }

    /// Why the base URL `url` (from [`Self::resolve`]) may not be used, if it may not: a server
    /// URL of the document that names a link-local or metadata host the operator did not choose.
    fn refuses(&self, url: &Url) -> Option<String> {
        if self.allow_link_local || self.configured.is_some() {
            return None;
        }
        let host = url.host()?;
        if self
            .document_url
            .as_ref()
            .and_then(Url::host)
            .is_some_and(|document| document == host)
        {
            return None;
        }
        let what = refused_host(&host)?;
        Some(format!(
            "the server URL '{url}' is {what}; refused unless the source sets \
             allow_link_local_servers: true (or base_url)"
        ))
    }

    fn resolve(&self, plan: &RequestPlan) -> Result<Url, CompileError> {
        if let Some(url) = &self.configured {
            return Ok(url.clone());
        }
        let operation = || plan.operation.clone();
        let server = plan.server_url.as_deref().unwrap_or("/");
        let url = match (Url::parse(server), &self.document_url) {
            (Ok(url), _) => url,
            (Err(url::ParseError::RelativeUrlWithoutBase), Some(document)) => document
                .join(server)
                .map_err(|source| CompileError::ServerUnjoinable {
                    operation: operation(),
                    server: server.to_owned(),
                    source,
                })?,
            (Err(url::ParseError::RelativeUrlWithoutBase), None) => {
                return Err(CompileError::NoServerUrl {
                    operation: operation(),
                    server: plan.server_url.clone(),
                });
            }
            (Err(source), _) => {
                return Err(CompileError::ServerInvalid {
                    operation: operation(),
                    server: server.to_owned(),
                    source,
                });
            }
        };
        if check_http(&url).is_err() {
            return Err(CompileError::ServerNotHttp {
                operation: operation(),
                url,
            });
        }
        Ok(url)
    }
}

fn check_http(url: &Url) -> Result<(), CompileError> {
    match url.scheme() {
        "http" | "https" if url.has_host() => Ok(()),
        _ => Err(CompileError::NotHttp(url.clone())),
    }
}

/// What is wrong with `host` as a destination a document chose: a link-local or cloud-metadata
/// address, written as an IP literal (in any form the URL parser accepts: decimal, IPv4-mapped
/// or NAT64 IPv6) or as a well-known metadata host name.
fn refused_host(host: &url::Host<&str>) -> Option<&'static str> {
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn v4(ip: Ipv4Addr) -> Option<&'static str> {
        // Alibaba Cloud's and Oracle Cloud's metadata services sit outside 169.254.0.0/16.
        if ip == Ipv4Addr::new(100, 100, 100, 200) || ip == Ipv4Addr::new(192, 0, 0, 192) {
            Some("a cloud metadata address")
        } else if ip.is_link_local() {
            Some("a link-local address (169.254.0.0/16, where cloud metadata services answer)")
        } else {
            None
        }
    }
    fn v6(ip: Ipv6Addr) -> Option<&'static str> {
        let segments = ip.segments();
        if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
            Some("a cloud metadata address (fd00:ec2::254)")
        } else if segments[0] & 0xffc0 == 0xfe80 {
            Some("a link-local address (fe80::/10)")
        } else if let Some(embedded) = ip.to_ipv4_mapped() {
            v4(embedded)
        } else if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
            // NAT64 (RFC 6052): the last 32 bits are an IPv4 address.
            let [.., a, b, c, d] = ip.octets();
            v4(Ipv4Addr::new(a, b, c, d))
        } else {
            None
        }
    }

    match host {
        url::Host::Ipv4(ip) => v4(*ip),
        url::Host::Ipv6(ip) => v6(*ip),
        url::Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            if let Ok(ip) = name.parse::<Ipv4Addr>() {
                return v4(ip);
            }
            matches!(
                name.as_str(),
                "metadata.google.internal"
                    | "metadata.goog"
                    | "metadata"
                    | "instance-data"
                    | "instance-data.ec2.internal"
            )
            .then_some("a cloud metadata host name")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(url: &str) -> Option<&'static str> {
        refused_host(&Url::parse(url).unwrap().host().unwrap())
    }

    #[test]
    fn link_local_and_metadata_hosts_in_every_spelling() {
        for url in [
            "http://169.254.169.254/latest",
            "http://2852039166/",
            "http://0xa9.254.169.254/",
            "http://[fd00:ec2::254]/",
            "http://[fe80::1]/",
            "http://[febf::1]/",
            "http://[::ffff:169.254.169.254]/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://100.100.100.200/",
            "http://metadata.google.internal./computeMetadata/v1",
            "http://METADATA.GOOG/",
        ] {
            assert!(refused(url).is_some(), "{url}");
        }
        for url in [
            "http://127.0.0.1:8080/",
            "https://api.example.com/",
            "http://[::1]/",
            "http://[fec0::1]/",
            "http://169.253.0.1/",
            "http://10.0.0.1/",
        ] {
            assert_eq!(refused(url), None, "{url}");
        }
    }
}
