//! `FakeAdapter`: an in-memory adapter for tests and benchmarks (feature `test-util`).
//!
//! Each tool has a behaviour: a function of the call, optionally delayed. It lets the bridge's
//! tests exercise every error class end to end without any upstream.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use otc_mappings::otc::ToolDefinition;
use otc_mappings::{Mapped, MappedTool, Target};
use serde_json::Value;

use crate::{Adapter, AdapterError, SourceState, ToolCall};

type Behaviour = Arc<dyn Fn(&ToolCall) -> Result<Value, AdapterError> + Send + Sync>;

/// An adapter whose tools are functions.
#[derive(Clone)]
pub struct FakeAdapter {
    name: String,
    tools: Vec<(MappedTool, Behaviour, Option<Duration>)>,
    state: Arc<Mutex<SourceState>>,
    /// Calls that reached a tool (shared by clones), so a test can wait for one to be in flight.
    started: Arc<AtomicUsize>,
}

impl fmt::Debug for FakeAdapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeAdapter")
            .field("name", &self.name)
            .field("tools", &self.tools.len())
            .finish()
    }
}

impl FakeAdapter {
    /// An adapter with no tools.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            tools: Vec::new(),
            state: Arc::new(Mutex::new(SourceState::Ready)),
            started: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Adds a tool whose call runs `behaviour`.
    pub fn tool(
        mut self,
        definition: ToolDefinition,
        behaviour: impl Fn(&ToolCall) -> Result<Value, AdapterError> + Send + Sync + 'static,
    ) -> Self {
        let name = definition.id.tool.clone();
        self.tools.push((
            MappedTool {
                definition: Arc::new(definition),
                target: Target::Named { name },
                // The fake stands for an MCP server without annotations: MCP's default.
                destructive: true,
                label: None,
                hidden_inputs: Vec::new(),
            },
            Arc::new(behaviour),
            None,
        ));
        self
    }

    /// Marks the tool added last read-only (not destructive), as an MCP server's
    /// `readOnlyHint` would.
    pub fn read_only(mut self) -> Self {
        if let Some(last) = self.tools.last_mut() {
            last.0.destructive = false;
        }
        self
    }

    /// Adds a tool that sleeps for `delay` before running `behaviour`.
    pub fn slow_tool(
        mut self,
        definition: ToolDefinition,
        delay: Duration,
        behaviour: impl Fn(&ToolCall) -> Result<Value, AdapterError> + Send + Sync + 'static,
    ) -> Self {
        self = self.tool(definition, behaviour);
        if let Some(last) = self.tools.last_mut() {
            last.2 = Some(delay);
        }
        self
    }

    /// How many calls have reached a tool so far (shared by clones).
    pub fn calls_started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }

    /// Sets the state `/health` reports (shared by clones).
    pub fn set_state(&self, state: SourceState) {
        if let Ok(mut guard) = self.state.lock() {
            *guard = state;
        }
    }
}

#[async_trait]
impl Adapter for FakeAdapter {
    fn name(&self) -> &str {
        &self.name
    }

    async fn list_tools(&self) -> Result<Mapped<MappedTool>, AdapterError> {
        Ok(Mapped {
            tools: self.tools.iter().map(|(t, _, _)| t.clone()).collect(),
            diagnostics: Vec::new(),
        })
    }

    async fn call(&self, call: ToolCall) -> Result<Value, AdapterError> {
        let state = self.state();
        if !state.is_ready() {
            return Err(AdapterError::Unavailable {
                source_name: self.name.clone(),
                reason: format!("{state:?}"),
            });
        }
        let Some((_, behaviour, delay)) = self
            .tools
            .iter()
            .find(|(t, _, _)| t.definition.id == call.tool.definition.id)
        else {
            return Err(AdapterError::Protocol {
                message: format!("no tool {}", call.tool.definition.id),
                source: None,
            });
        };
        self.started.fetch_add(1, Ordering::SeqCst);
        if let Some(delay) = delay {
            tokio::time::sleep(*delay).await;
        }
        behaviour(&call)
    }

    fn state(&self) -> SourceState {
        self.state
            .lock()
            .map(|s| s.clone())
            .unwrap_or(SourceState::Ready)
    }
}
