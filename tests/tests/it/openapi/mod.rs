//! The OpenAPI adapter against a real upstream over loopback: `tests/fixtures/openapi/upstream.yaml`
//! is mapped by `otc-mappings`, and every call goes through the `Adapter` trait to the axum
//! server of `otc_tests::upstream_http`, whose echo routes report what arrived on the wire.
//!
//! Parameter locations and styles, body types, security schemes, response kinds and failure
//! classes each have a test; retry hints are checked through the bridge's `rescue` table, the
//! one place that decides them.

mod failures;
mod loading;
mod refusals;
mod requests;
mod scrubbing;
mod shared_stack;

use std::sync::Arc;

use otc_adapters::openapi::{CredentialConfig, OpenApiAdapter, OpenApiConfig};
use otc_adapters::{Adapter, AdapterError, BuildContext, ToolCall};
use otc_mappings::openapi::{CredentialSource, RequestPlan};
use otc_mappings::otc::{AuthorizationToken, CallContext, ToolSecret};
use otc_mappings::{Mapped, MappedTool, Severity, Target};
use otc_tests::upstream_http::{self, BINARY_BODY, Upstream};
use serde_json::{Map, Value, json};

struct Fixture {
    upstream: Upstream,
    adapter: OpenApiAdapter,
    listed: Mapped<MappedTool>,
}

async fn fixture() -> Fixture {
    fixture_with(|_| {}).await
}

async fn fixture_with(edit: impl FnOnce(&mut OpenApiConfig)) -> Fixture {
    fixture_in(&BuildContext::default(), edit).await
}

/// A fixture whose adapter is built with `cx`, so it shares the HTTP stack of the other adapters
/// built with it.
async fn fixture_in(cx: &BuildContext, edit: impl FnOnce(&mut OpenApiConfig)) -> Fixture {
    let upstream = Upstream::start().await;
    let mut config = OpenApiConfig::new(upstream_http::document_path().display().to_string());
    config.base_url = Some(upstream.url());
    edit(&mut config);
    let adapter = OpenApiAdapter::build("upstream", &config, cx)
        .await
        .unwrap();
    let listed = adapter.list_tools().await.unwrap();
    Fixture {
        upstream,
        adapter,
        listed,
    }
}

fn plan_of(tool: &MappedTool) -> &RequestPlan {
    match &tool.target {
        Target::Http(plan) => plan,
        Target::Named { .. } | Target::Mcp { .. } => panic!("not an HTTP tool"),
    }
}

impl Fixture {
    /// The tool of `operation` (`GET /echo/query`).
    fn tool(&self, operation: &str) -> Arc<MappedTool> {
        let tool = self
            .listed
            .tools
            .iter()
            .find(|t| plan_of(t).operation == operation)
            .unwrap_or_else(|| panic!("no tool for {operation}"));
        Arc::new(tool.clone())
    }

    /// Calls `operation` with arguments keyed by their wire names (translated to the tool's
    /// input names through the plan, so the test does not depend on renaming rules).
    async fn call(&self, operation: &str, args: Value) -> Result<Value, AdapterError> {
        self.call_with(operation, args, CallContext::default(), None)
            .await
    }

    async fn call_with(
        &self,
        operation: &str,
        args: Value,
        context: CallContext,
        trace_id: Option<&str>,
    ) -> Result<Value, AdapterError> {
        let tool = self.tool(operation);
        let plan = plan_of(&tool);
        let mut input = Map::new();
        for (key, value) in args.as_object().unwrap() {
            let name = plan
                .params
                .iter()
                .find(|p| &p.name == key)
                .map_or(key.clone(), |p| p.input.clone());
            input.insert(name, value.clone());
        }
        self.adapter
            .call(ToolCall {
                tool,
                input,
                context,
                call_id: "call-1".into(),
                trace_id: trace_id.map(str::to_owned),
                trace_context: None,
            })
            .await
    }

    /// A context that gives `value` for every credential the operation's first alternative uses.
    fn context_for(&self, operation: &str, value: &str) -> CallContext {
        let tool = self.tool(operation);
        let mut context = CallContext::default();
        for usage in &plan_of(&tool).security[0] {
            match usage.source {
                CredentialSource::Authorization => context.authorization.push(AuthorizationToken {
                    id: usage.requirement_id.clone(),
                    token: value.into(),
                    extra: Map::new(),
                }),
                CredentialSource::Secret => context.secrets.push(ToolSecret {
                    id: usage.requirement_id.clone(),
                    value: value.into(),
                    extra: Map::new(),
                }),
                CredentialSource::Bridge => {}
            }
        }
        context
    }

    /// The bridge's verdict on a failure (can_retry, retry_after_ms, messages).
    fn tool_error(&self, operation: &str, err: &AdapterError) -> otc_mappings::otc::ToolError {
        otc_bridge::tool_error(err, &self.tool(operation).definition)
    }
}
