//! What a tool's configured shaping needs on each call (DESIGN.md §15): how the call's
//! arguments go back to the upstream's shape, the upstream's own input schema they are checked
//! against then, the projection of the tool's results, and how its answers are kept.
//!
//! Built by [`crate::catalog::policy::SourcePolicy::apply`] when a source's tools are listed;
//! the served (transformed) definition itself is the entry's, so that it is what is listed,
//! fingerprinted, locked and diffed.

use std::sync::Arc;

use otc_mappings::otc::Schema;
use otc_shape::project::{Projection, ProjectionError};
use otc_shape::transform::{ArgumentMap, FixedSource, MapBackError};
use serde_json::{Map, Value};

use crate::result_cache::CacheRule;

/// One tool's shaping; absent from an entry whose tool is served as the upstream describes it.
#[derive(Debug)]
pub struct Shaping {
    /// How a call's arguments go back to the upstream's (identity when only results are
    /// projected).
    pub(crate) arguments: ArgumentMap,
    /// The upstream's input schema and its key in the validator cache, when the arguments are
    /// transformed: a mapped-back input is validated against it before it is sent.
    pub(crate) upstream_input: Option<(Schema, u64)>,
    /// The values of the environment variables fixed arguments name.
    pub(crate) env: Arc<FixedEnv>,
    /// How results are projected.
    pub(crate) projection: Option<Arc<Projection>>,
    /// How answers are kept, when they are.
    pub(crate) cache: Option<CacheRule>,
}

/// The values of the environment variables fixed arguments name, read once when the source's
/// options are compiled. Its `Debug` names the variables, never their values: a fixed value may
/// be a secret, and policies and entries are printed in debug logs.
#[derive(Default)]
pub(crate) struct FixedEnv(pub(crate) std::collections::BTreeMap<String, Value>);

impl std::fmt::Debug for FixedEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

impl Shaping {
    /// The call's validated `input` in the upstream's shape: renamed arguments under their
    /// upstream names, defaults filled in, fixed values added (from the configuration, the
    /// environment or the caller, whose values `caller` gives by key).
    pub(crate) fn map_back(
        &self,
        input: Map<String, Value>,
        caller: &dyn Fn(&str) -> Option<Value>,
    ) -> Result<Map<String, Value>, MapBackError> {
        self.arguments.map_back(input, &|source| match source {
            FixedSource::Value(value) => Some(value.clone()),
            FixedSource::Env(variable) => self.env.0.get(variable).cloned(),
            FixedSource::Caller(key) => caller(key),
        })
    }

    /// The upstream's `value` as served: projected when the tool has a projection. A small
    /// value is projected in place (a few microseconds; handing it to a blocking thread cost
    /// about a hundred); a large one on a blocking thread, as the run may take up to its time
    /// budget.
    pub(crate) async fn project(&self, value: Value) -> Result<Value, ProjectionError> {
        let Some(projection) = &self.projection else {
            return Ok(value);
        };
        if is_small(&value) {
            return projection.run(value);
        }
        let projection = Arc::clone(projection);
        tokio::task::spawn_blocking(move || projection.run(value))
            .await
            .unwrap_or_else(|join| {
                Err(ProjectionError::Runtime {
                    message: format!("the projection stopped: {join}"),
                })
            })
    }
}

/// Values up to this many nodes (and string bytes) are projected in place.
const SMALL: usize = 4096;

/// Whether `value` has at most [`SMALL`] nodes and string bytes, counted only that far.
fn is_small(value: &Value) -> bool {
    let mut budget = SMALL;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        let cost = match value {
            Value::String(s) => s.len(),
            Value::Array(items) => {
                pending.extend(items);
                1
            }
            Value::Object(members) => {
                pending.extend(members.values());
                members.len()
            }
            _ => 1,
        };
        let Some(left) = budget.checked_sub(cost) else {
            return false;
        };
        budget = left;
    }
    true
}
