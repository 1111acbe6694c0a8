//! [`assert_adapter_conforms`]: the one check every adapter must pass (STYLE.md §2.7; vector's
//! `run_and_assert_sink_compliance` is the model), whatever protocol it speaks.
//!
//! An adapter is driven through the [`Adapter`] trait alone, against a real upstream, in one
//! order: list; one successful call; each failure class ([`Exercise`] names the calls that
//! produce them, since only the caller knows its upstream's tools); a call dropped mid-flight
//! (the adapter stays usable, other calls are not held up behind it, and the upstream is not
//! stuck); the upstream lost with a call in flight; close. Every step has a deadline, so a hang
//! fails the test instead of holding it.
//!
//! Whether a failure is worth retrying is not decided here: it is read from the bridge's retry
//! table ([`otc_bridge::tool_error`]), so this checks that each failure is classified so
//! that the table gives the answer the caller expects.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use otc_adapters::{Adapter, AdapterError, ToolCall};
use otc_mappings::otc::{CallContext, Dialect, SchemaForm, WireTool};
use otc_mappings::{Mapped, MappedTool, Target};
use serde_json::Value;

use crate::spec::SpecDocument;

/// Upper bound for any one step; never a synchronisation delay.
const WAIT: Duration = Duration::from_secs(20);

/// How long a call must stay unanswered before the harness drops it (the bridge's per-call
/// timeout, as the bridge applies it: the call's future is dropped).
const ABANDON_AFTER: Duration = Duration::from_millis(300);

/// One call of the exercise: a listed tool (its MCP name, or its OpenAPI operation such as
/// `GET /text`), its input and what must come of it.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The tool: [`Target::Named`]'s name or [`otc_mappings::openapi::RequestPlan`]'s operation.
    pub tool: String,
    /// The input (an object, keyed by the tool's input names).
    pub input: Value,
    /// The call's context (credentials), when the tool needs one.
    pub context: CallContext,
    /// What must come of the call.
    pub expect: Expect,
}

impl Probe {
    /// A call of `tool` with `input` and no context, expecting `expect`.
    pub fn new(tool: &str, input: Value, expect: Expect) -> Self {
        Self {
            tool: tool.to_owned(),
            input,
            context: CallContext::default(),
            expect,
        }
    }

    /// The same call with `context`.
    #[must_use]
    pub fn with_context(mut self, context: CallContext) -> Self {
        self.context = context;
        self
    }
}

/// What a call must come to.
#[derive(Debug, Clone)]
pub enum Expect {
    /// A value containing this one (objects: these keys with these values; anything else:
    /// equal).
    Value(Value),
    /// A failure of this class, which the bridge's retry table answers with this `can_retry`.
    Failure {
        /// The class.
        class: Class,
        /// Whether the caller is told to retry.
        can_retry: bool,
    },
}

impl Expect {
    /// A failure of `class` that is worth retrying.
    pub fn retryable(class: Class) -> Self {
        Self::Failure {
            class,
            can_retry: true,
        }
    }

    /// A failure of `class` that is not worth retrying.
    pub fn final_failure(class: Class) -> Self {
        Self::Failure {
            class,
            can_retry: false,
        }
    }
}

/// The classes of [`AdapterError`], without their data (an HTTP status is kept: it decides the
/// retry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// [`AdapterError::Unavailable`].
    Unavailable,
    /// [`AdapterError::Unreachable`].
    Unreachable,
    /// [`AdapterError::Timeout`].
    Timeout,
    /// [`AdapterError::ConnectionLost`].
    ConnectionLost,
    /// [`AdapterError::ChildExited`].
    ChildExited,
    /// [`AdapterError::UpstreamStatus`] with this status.
    UpstreamStatus(u16),
    /// [`AdapterError::ToolFailed`].
    ToolFailed,
    /// [`AdapterError::InvalidArguments`].
    InvalidArguments,
    /// [`AdapterError::BadInput`].
    BadInput,
    /// [`AdapterError::ResponseTooLarge`].
    ResponseTooLarge,
    /// [`AdapterError::Protocol`].
    Protocol,
    /// [`AdapterError::AuthorizationRequired`].
    AuthorizationRequired,
    /// [`AdapterError::Setup`].
    Setup,
    /// A variant added since this list was written.
    Other,
}

impl Class {
    /// The class of `err`.
    pub fn of(err: &AdapterError) -> Self {
        match err {
            AdapterError::Unavailable { .. } => Self::Unavailable,
            AdapterError::Unreachable { .. } => Self::Unreachable,
            AdapterError::Timeout { .. } => Self::Timeout,
            AdapterError::ConnectionLost { .. } => Self::ConnectionLost,
            AdapterError::ChildExited { .. } => Self::ChildExited,
            AdapterError::UpstreamStatus { status, .. } => Self::UpstreamStatus(*status),
            AdapterError::ToolFailed { .. } => Self::ToolFailed,
            AdapterError::InvalidArguments { .. } => Self::InvalidArguments,
            AdapterError::BadInput { .. } => Self::BadInput,
            AdapterError::ResponseTooLarge { .. } => Self::ResponseTooLarge,
            AdapterError::Protocol { .. } => Self::Protocol,
            AdapterError::AuthorizationRequired { .. } => Self::AuthorizationRequired,
            AdapterError::Setup { .. } => Self::Setup,
            _ => Self::Other,
        }
    }
}

/// Makes the upstream go away for good (kills its process, stops its server).
pub type LoseUpstream = Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>;

/// The calls that exercise one adapter, and how to take its upstream away.
pub struct Exercise {
    /// A call that succeeds.
    pub success: Probe,
    /// A call the upstream receives and refuses (an MCP tool error, an HTTP error status).
    pub refused: Probe,
    /// A call whose input the upstream (or the adapter) cannot take.
    pub bad_input: Probe,
    /// What becomes of a call to a tool the upstream does not have (the harness makes one from
    /// [`Exercise::success`]'s tool: another name, or another path).
    pub unknown_tool: Expect,
    /// The adapter's other failure classes (timeouts, oversized or malformed answers, …).
    pub more_failures: Vec<Probe>,
    /// A call that does not answer (its `expect` is not read): it is dropped mid-flight, and
    /// later in flight when the upstream is lost.
    pub slow: Probe,
    /// A call, made after the slow call was dropped, whose answer shows that the upstream saw
    /// the cancellation (MCP `notifications/cancelled`); `None` when the protocol has no way to
    /// say.
    pub saw_cancellation: Option<Probe>,
    /// Takes the upstream away.
    pub lose_upstream: LoseUpstream,
}

impl fmt::Debug for Exercise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exercise")
            .field("success", &self.success)
            .field("refused", &self.refused)
            .field("bad_input", &self.bad_input)
            .field("unknown_tool", &self.unknown_tool)
            .field("more_failures", &self.more_failures)
            .field("slow", &self.slow)
            .field("saw_cancellation", &self.saw_cancellation)
            .finish_non_exhaustive()
    }
}

/// Runs `exercise` against `adapter` and panics, naming the step, at the first thing that does
/// not conform. Consumes the adapter's upstream (it is lost on purpose) and shuts the adapter
/// down.
pub async fn assert_adapter_conforms(adapter: Arc<dyn Adapter>, exercise: Exercise) {
    let name = adapter.name().to_owned();
    let at = |step: &str| format!("{name}: {step}");

    // Listing: valid, stable, holding every tool the exercise calls.
    let listed = within(&at("list_tools"), adapter.list_tools())
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", at("list_tools")));
    assert_listing_conforms(&at("list_tools"), &listed);
    let again = within(&at("second list_tools"), adapter.list_tools())
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", at("second list_tools")));
    assert_eq!(
        ids(&again),
        ids(&listed),
        "{}: listing twice gave other tools",
        at("list_tools")
    );
    let run = Runner {
        adapter: Arc::clone(&adapter),
        listed,
        name: name.clone(),
    };

    // A successful call, then each failure class.
    run.probe("success", &exercise.success).await;
    run.probe("refused", &exercise.refused).await;
    run.probe("bad input", &exercise.bad_input).await;
    let unknown = Probe {
        tool: exercise.success.tool.clone(),
        input: exercise.success.input.clone(),
        context: exercise.success.context.clone(),
        expect: exercise.unknown_tool.clone(),
    };
    let outcome = within(
        &at("unknown tool"),
        adapter.call(run.call_of(unknown_tool(&run.tool(&unknown.tool)), &unknown)),
    )
    .await;
    run.check(&at("unknown tool"), &unknown, outcome);
    for (i, probe) in exercise.more_failures.iter().enumerate() {
        run.probe(&format!("more_failures[{i}] ({})", probe.tool), probe)
            .await;
    }
    // A failure did not break the adapter.
    run.probe("success after the failures", &exercise.success)
        .await;

    // Cancellation: while a call hangs, others go through; dropped, it leaves nothing stuck.
    let mut slow = Box::pin(adapter.call(run.call(&exercise.slow)));
    tokio::select! {
        outcome = &mut slow => panic!("{}: the slow call answered: {outcome:?}", at("cancellation")),
        () = run.probe("success while a call hangs", &exercise.success) => {}
    }
    if let Ok(outcome) = tokio::time::timeout(ABANDON_AFTER, &mut slow).await {
        panic!(
            "{}: the slow call answered: {outcome:?}",
            at("cancellation")
        );
    }
    drop(slow);
    run.probe("success after a dropped call", &exercise.success)
        .await;
    if let Some(probe) = &exercise.saw_cancellation {
        run.probe("the upstream saw the cancellation", probe).await;
    }

    // The upstream lost with a call in flight: that call fails, retryably, in bounded time.
    let mut in_flight = Box::pin(adapter.call(run.call(&exercise.slow)));
    if let Ok(outcome) = tokio::time::timeout(ABANDON_AFTER, &mut in_flight).await {
        panic!(
            "{}: the slow call answered: {outcome:?}",
            at("upstream lost")
        );
    }
    within(&at("losing the upstream"), (exercise.lose_upstream)()).await;
    let outcome = within(
        &at("the call in flight when the upstream was lost"),
        in_flight,
    )
    .await;
    run.check_lost(
        &at("the call in flight when the upstream was lost"),
        &exercise.slow,
        outcome,
    );
    // The next call fails the same way, or succeeds when the adapter brought the upstream back
    // (an MCP stdio child is restarted); it does not hang.
    let outcome = within(
        &at("a call after the upstream was lost"),
        adapter.call(run.call(&exercise.success)),
    )
    .await;
    if outcome.is_err() {
        run.check_lost(
            &at("a call after the upstream was lost"),
            &exercise.success,
            outcome,
        );
    }

    // Close: in bounded time, more than once; nothing answers afterwards.
    within(&at("shutdown"), adapter.shutdown()).await;
    within(&at("second shutdown"), adapter.shutdown()).await;
    let outcome = within(
        &at("a call after shutdown"),
        adapter.call(run.call(&exercise.success)),
    )
    .await;
    assert!(
        outcome.is_err(),
        "{}: answered {outcome:?}",
        at("a call after shutdown")
    );
}

/// Every definition of `listed` is valid: ids unique, no translation diagnostics, and (when
/// `OTC_SPEC_DIR` is set) each a `ToolDefinition` of OTC 1.0 (wrapped input schema) and OXP 1.0
/// (flat).
pub fn assert_listing_conforms(at: &str, listed: &Mapped<MappedTool>) {
    assert!(!listed.tools.is_empty(), "{at}: no tools");
    assert!(
        listed.diagnostics.is_empty(),
        "{at}: {:?}",
        listed.diagnostics
    );
    assert_eq!(
        ids(listed).len(),
        listed.tools.len(),
        "{at}: duplicate tool ids"
    );
    assert_definitions_conform_to_the_spec(listed);
}

/// Validates every definition against the `ToolDefinition` schema of OTC 1.0 (wrapped input
/// schema) and OXP 1.0 (flat), when the spec is available (`OTC_SPEC_DIR`).
pub fn assert_definitions_conform_to_the_spec(tools: &Mapped<MappedTool>) {
    for (dialect, form) in [
        (Dialect::Otc, SchemaForm::Wrapped),
        (Dialect::OxpMain, SchemaForm::Flat),
    ] {
        let Some(spec) = SpecDocument::load(dialect) else {
            return;
        };
        let validator = spec.component("ToolDefinition");
        for t in &tools.tools {
            let wire = serde_json::to_value(WireTool {
                tool: &t.definition,
                form,
            })
            .unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&wire)
                .map(|e| e.to_string())
                .collect();
            assert!(
                errors.is_empty(),
                "{} ({dialect:?}): {errors:?}",
                t.definition.id
            );
        }
    }
}

fn ids(listed: &Mapped<MappedTool>) -> BTreeSet<String> {
    listed
        .tools
        .iter()
        .map(|t| t.definition.id.to_string())
        .collect()
}

/// `tool` pointed at something its upstream does not have.
fn unknown_tool(tool: &MappedTool) -> MappedTool {
    let mut unknown = tool.clone();
    match &mut unknown.target {
        Target::Named { name }
        | Target::Mcp {
            request: otc_mappings::McpRequest::GetPrompt { name },
        } => *name = format!("{name}_that_is_not_there"),
        Target::Mcp { .. } => {}
        Target::Http(plan) => {
            let mut plan = (**plan).clone();
            plan.path = "/no-such-operation".to_owned();
            plan.params
                .retain(|p| !matches!(p.location, otc_mappings::openapi::ParamLocation::Path));
            unknown.target = Target::Http(Arc::new(plan));
        }
    }
    unknown
}

/// Whether the bridge tells a caller to retry after `err`: the retry table, and for the two
/// failures refused before anything is sent (the bridge's `rescue`), a source known to
/// be down is worth retrying shortly and a configuration that cannot work is not.
fn can_retry(err: &AdapterError, tool: &MappedTool) -> bool {
    match err {
        AdapterError::Unavailable { .. } => true,
        AdapterError::Setup { .. } => false,
        _ => otc_bridge::tool_error(err, &tool.definition).can_retry,
    }
}

/// Whether `actual` contains `expected` (objects: every key of `expected`, recursively).
fn contains(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(actual), Value::Object(expected)) => expected
            .iter()
            .all(|(k, v)| actual.get(k).is_some_and(|a| contains(a, v))),
        _ => actual == expected,
    }
}

async fn within<T>(step: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, future)
        .await
        .unwrap_or_else(|_| panic!("{step}: no answer within {WAIT:?}"))
}

struct Runner {
    adapter: Arc<dyn Adapter>,
    listed: Mapped<MappedTool>,
    name: String,
}

impl Runner {
    fn tool(&self, key: &str) -> Arc<MappedTool> {
        let found = self.listed.tools.iter().find(|t| match &t.target {
            Target::Named { name } => name == key,
            Target::Mcp { request } => request.handle() == key,
            Target::Http(plan) => plan.operation == key,
        });
        Arc::new(
            found
                .unwrap_or_else(|| panic!("{}: no tool {key} listed", self.name))
                .clone(),
        )
    }

    fn call(&self, probe: &Probe) -> ToolCall {
        self.call_of(self.tool(&probe.tool), probe)
    }

    fn call_of(&self, tool: impl Into<Arc<MappedTool>>, probe: &Probe) -> ToolCall {
        // Each call its own id, as the bridge gives them.
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let Value::Object(input) = probe.input.clone() else {
            panic!(
                "{}: the input of {} is not an object",
                self.name, probe.tool
            )
        };
        ToolCall {
            tool: tool.into(),
            input,
            context: probe.context.clone(),
            call_id: format!("conformance-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
            trace_id: None,
            trace_context: None,
        }
    }

    async fn probe(&self, step: &str, probe: &Probe) {
        let at = format!("{}: {step}", self.name);
        let outcome = within(&at, self.adapter.call(self.call(probe))).await;
        self.check(&at, probe, outcome);
    }

    fn check(&self, at: &str, probe: &Probe, outcome: Result<Value, AdapterError>) {
        match (&probe.expect, outcome) {
            (Expect::Value(expected), Ok(value)) => {
                assert!(
                    contains(&value, expected),
                    "{at}: {value} does not hold {expected}"
                );
            }
            (Expect::Failure { class, can_retry }, Err(err)) => {
                assert_eq!(Class::of(&err), *class, "{at}: {err:?}");
                assert_eq!(
                    self::can_retry(&err, &self.tool(&probe.tool)),
                    *can_retry,
                    "{at}: can_retry for {err:?}"
                );
            }
            (expect, outcome) => panic!("{at}: expected {expect:?}, got {outcome:?}"),
        }
    }

    /// A failure because the upstream is gone: a class that says so, worth retrying.
    fn check_lost(&self, at: &str, probe: &Probe, outcome: Result<Value, AdapterError>) {
        let err = match outcome {
            Ok(value) => panic!("{at}: answered {value}"),
            Err(err) => err,
        };
        assert!(
            matches!(
                Class::of(&err),
                Class::Unavailable
                    | Class::Unreachable
                    | Class::Timeout
                    | Class::ConnectionLost
                    | Class::ChildExited
            ),
            "{at}: {err:?}"
        );
        assert!(
            can_retry(&err, &self.tool(&probe.tool)),
            "{at}: not retryable: {err:?}"
        );
    }
}
