//! The lockfile: what each served tool id promised when it was reviewed (DESIGN.md §9), and
//! what the bridge does when an upstream's tool no longer keeps that promise.
//!
//! The file is JSON, sorted by id, one entry per served tool id:
//!
//! ```json
//! {"lockfile": 1, "tools": {"Github.ReposGet@3.1.0": {
//!     "upstream": "3.1.0", "label": "v3.1", "fingerprint": "sha256:…",
//!     "definition": {…canonical…}}}}
//! ```
//!
//! `label` is the upstream's own version label as written; `upstream` is the version it gives
//! (what the tool would be served at without a lock); the key's version is the one served, which
//! a lock moves on (`bump`) when the upstream changes a tool without changing its label. A tool listed by a source is matched to
//! its entry by `Toolkit.Tool` and `upstream`; when the fingerprints differ, the change is
//! classified ([`otc_mappings::change`]) and the source's [`OnChange`] policy decides.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use otc_mappings::MappedTool;
use otc_mappings::change::{self, Change, Class};
use otc_mappings::otc::{ToolId, ToolVersion, VersionSelector};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::{RawValue, to_raw_value};

/// The format version written in the file's `lockfile` key.
const FORMAT: u32 = 1;

/// What a changed upstream tool does to what is served (`on_change`, `--on-change`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnChange {
    /// Serve the changed tool at the next version of its change's class.
    #[default]
    Bump,
    /// Serve it under its locked version, with a warning in the log and in `/health`.
    Warn,
    /// Do not serve it (nor any tool the lock lacks) until the lock is updated.
    Refuse,
}

impl fmt::Display for OnChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Bump => "bump",
            Self::Warn => "warn",
            Self::Refuse => "refuse",
        })
    }
}

/// One locked tool id.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LockedTool {
    /// The version the upstream's label gives the tool.
    pub upstream: ToolVersion,
    /// The upstream's own version label as written (`2023-07-01-preview`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// `sha256:…` of `definition`.
    pub fingerprint: String,
    /// The canonical definition, so that a later change can be explained. Held as compact
    /// text and read only when a tool no longer matches its fingerprint: as a tree it would
    /// take several times the catalog's own memory (GitHub's lock: 62 MB as values, 6.6 MB
    /// as text).
    pub definition: Box<RawValue>,
}

impl LockedTool {
    /// The canonical definition as a value.
    pub(crate) fn definition(&self) -> Value {
        // Written by this module from a value, or checked as JSON when the file was read.
        serde_json::from_str(self.definition.get()).unwrap_or(Value::Null)
    }
}

impl PartialEq for LockedTool {
    fn eq(&self, other: &Self) -> bool {
        self.upstream == other.upstream
            && self.label == other.label
            && self.fingerprint == other.fingerprint
            && self.definition.get() == other.definition.get()
    }
}

/// The file as read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    lockfile: u32,
    tools: BTreeMap<String, LockedTool>,
}

/// The file as written: definitions as values, so they are pretty-printed for review.
#[derive(Serialize)]
struct Written<'a> {
    lockfile: u32,
    tools: BTreeMap<&'a str, WrittenTool<'a>>,
}

#[derive(Serialize)]
struct WrittenTool<'a> {
    upstream: ToolVersion,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<&'a str>,
    fingerprint: &'a str,
    definition: Value,
}

/// A lockfile, read.
#[derive(Debug, Default, PartialEq)]
pub struct Lockfile {
    /// Id (`Toolkit.Tool@x.y.z`) → entry, sorted.
    tools: BTreeMap<String, LockedTool>,
    /// (`Toolkit.Tool`, upstream version) → the served version, for matching listed tools.
    by_upstream: HashMap<(String, ToolVersion), ToolVersion>,
}

/// Why a lockfile could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The file could not be read.
    #[error("cannot read the lockfile {path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// Why: said in the message, so not also a `source` (an error chain printed it twice).
        reason: otc_adapters::file::FileError,
    },
    /// The file is not a lockfile.
    #[error("{path} is not an otc-bridge lockfile: {detail}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong: said in the message, so not also a `source`.
        detail: InvalidLock,
    },
}

/// What makes a text no lockfile. Each cause is in its variant's message, so none is also a
/// `source` (an error chain would print it twice).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidLock {
    /// The text is not JSON of a lockfile's shape (or past the bounds of any text).
    #[error("{0}")]
    Text(otc_mappings::text::TextError),
    /// A lockfile format this bridge does not read.
    #[error("format {0} is not supported (this bridge writes {FORMAT})", FORMAT = FORMAT)]
    Format(u32),
    /// A tool's definition is not JSON that can be kept.
    #[error("'{key}': {error}")]
    Definition {
        /// The tool's id as locked.
        key: String,
        /// Why.
        error: serde_json::Error,
    },
    /// A key is not a tool id.
    #[error("'{key}': {error}")]
    Id {
        /// The key.
        key: String,
        /// Why.
        error: otc_mappings::otc::ToolIdError,
    },
    /// A key has no full version.
    #[error("'{key}': a locked id needs its full version")]
    Unversioned {
        /// The key.
        key: String,
    },
    /// Two locked versions name one upstream version of a tool.
    #[error("'{key}' and version {other} lock the same upstream version {upstream}")]
    SameUpstream {
        /// The key.
        key: String,
        /// The other locked version.
        other: ToolVersion,
        /// The upstream version both name.
        upstream: ToolVersion,
    },
}

impl Lockfile {
    /// Reads `path` with the one file reader (a regular file; a whole catalog's definitions at
    /// most).
    pub fn load(path: &Path) -> Result<Self, LockError> {
        let text = otc_adapters::file::read_text(path, otc_adapters::file::MAX_CATALOG_BYTES)
            .map_err(|reason| LockError::Read {
                path: path.display().to_string(),
                reason,
            })?;
        Self::parse(&text).map_err(|detail| LockError::Invalid {
            path: path.display().to_string(),
            detail,
        })
    }

    /// Parses a lockfile's text.
    pub fn parse(text: &str) -> Result<Self, InvalidLock> {
        let mut file: File = otc_mappings::text::parse_json(text).map_err(InvalidLock::Text)?;
        if file.lockfile != FORMAT {
            return Err(InvalidLock::Format(file.lockfile));
        }
        let mut by_upstream = HashMap::new();
        for (key, locked) in &mut file.tools {
            // The file is pretty-printed; what is kept is compact.
            let definition = |error| InvalidLock::Definition {
                key: key.clone(),
                error,
            };
            let value: Value = serde_json::from_str(locked.definition.get()).map_err(definition)?;
            locked.definition = to_raw_value(&value).map_err(definition)?;
            let id: ToolId = key.parse().map_err(|error| InvalidLock::Id {
                key: key.clone(),
                error,
            })?;
            let VersionSelector::Exact(version) = id.version else {
                return Err(InvalidLock::Unversioned { key: key.clone() });
            };
            let name = id.name();
            if let Some(other) = by_upstream.insert((name, locked.upstream), version) {
                return Err(InvalidLock::SameUpstream {
                    key: key.clone(),
                    other,
                    upstream: locked.upstream,
                });
            }
        }
        Ok(Self {
            tools: file.tools,
            by_upstream,
        })
    }

    /// The lock of what is served: each tool at its served version, with the version its
    /// upstream gives it.
    pub fn of<'a>(served: impl IntoIterator<Item = (&'a MappedTool, ToolVersion)>) -> Self {
        let mut tools = BTreeMap::new();
        let mut by_upstream = HashMap::new();
        for (tool, upstream) in served {
            let definition = change::canonical(tool);
            let id = &tool.definition.id;
            by_upstream.insert((id.name(), upstream), tool.definition.version);
            // Serialising a value cannot fail.
            let Ok(raw) = to_raw_value(&definition) else {
                continue;
            };
            tools.insert(
                id.to_string(),
                LockedTool {
                    upstream,
                    label: tool.label.as_deref().map(str::to_owned),
                    fingerprint: change::fingerprint(&definition),
                    definition: raw,
                },
            );
        }
        Self { tools, by_upstream }
    }

    /// The file's text: pretty JSON, sorted, ending in a newline.
    pub fn to_text(&self) -> String {
        let file = Written {
            lockfile: FORMAT,
            tools: self
                .tools
                .iter()
                .map(|(id, locked)| {
                    let tool = WrittenTool {
                        upstream: locked.upstream,
                        label: locked.label.as_deref(),
                        fingerprint: &locked.fingerprint,
                        definition: locked.definition(),
                    };
                    (id.as_str(), tool)
                })
                .collect(),
        };
        // Serialising plain values cannot fail.
        let mut text = serde_json::to_string_pretty(&file).unwrap_or_default();
        text.push('\n');
        text
    }

    /// The number of locked ids.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether nothing is locked.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The locked ids and their canonical definitions, keyed `Toolkit.Tool@x.y.z`.
    pub fn definitions(&self) -> BTreeMap<String, Value> {
        self.tools
            .iter()
            .map(|(k, v)| (k.clone(), v.definition()))
            .collect()
    }

    /// The locked ids whose tool `now` no longer serves at all (by name and upstream version):
    /// removed upstream, or relabelled by it.
    pub fn removed_in<'a>(&'a self, now: &'a Lockfile) -> impl Iterator<Item = &'a str> + 'a {
        self.tools.iter().filter_map(move |(id, locked)| {
            let name = id.rsplit_once('@').map_or(id.as_str(), |(name, _)| name);
            let kept = now
                .by_upstream
                .contains_key(&(name.to_owned(), locked.upstream));
            (!kept).then_some(id.as_str())
        })
    }

    /// The locked entry of `name` (`Toolkit.Tool`) for the upstream version `upstream`.
    fn find(&self, name: &str, upstream: ToolVersion) -> Option<(ToolVersion, &LockedTool)> {
        let version = *self.by_upstream.get(&(name.to_owned(), upstream))?;
        let key = format!("{name}@{version}");
        self.tools.get(&key).map(|locked| (version, locked))
    }
}

/// A source's lock and policy, set on its [`crate::catalog::policy::SourcePolicy`] when the bridge runs
/// with a lockfile.
#[derive(Debug, Clone)]
pub struct Pins {
    /// The lockfile.
    pub lock: Arc<Lockfile>,
    /// What a change does.
    pub on_change: OnChange,
}

/// A listed tool that does not match its lock: changed, or new.
#[derive(Debug, Clone)]
pub struct Drift {
    /// `Toolkit.Tool`.
    pub name: String,
    /// The locked version; `None` for a tool the lock lacks.
    pub locked: Option<ToolVersion>,
    /// The version it is served at; `None` when it is not served (`refuse`).
    pub served: Option<ToolVersion>,
    /// How it changed since it was locked (empty for a new tool).
    pub change: Change,
    /// The policy that applied.
    pub on_change: OnChange,
}

impl Drift {
    /// The class of the change, `None` for a new tool.
    pub fn class(&self) -> Option<Class> {
        self.change.class()
    }

    /// For people: what changed, and what was done about it.
    pub fn message(&self) -> String {
        let Some(locked) = self.locked else {
            return match self.served {
                Some(v) => format!("`{}@{v}` is new since the lock was written", self.name),
                None => format!(
                    "`{}` is new upstream and not in the lock; run `otc-bridge lock --update` after review",
                    self.name
                ),
            };
        };
        let class = self.class().map_or("no", Class::as_str);
        let what = self.change.summary(Class::Patch);
        match self.served {
            None => format!(
                "`{}@{locked}` changed upstream since it was locked ({class} change: {what}); run `otc-bridge lock --update` after review",
                self.name
            ),
            Some(v) if v == locked => format!(
                "`{}@{locked}` changed upstream since it was locked ({class} change: {what}); still served as {locked}",
                self.name
            ),
            Some(v) => format!(
                "`{}@{locked}` changed upstream since it was locked ({class} change: {what}); served as {v}",
                self.name
            ),
        }
    }
}

/// Applies `pins` to one listed tool: the tool to serve (its version set by the lock), or
/// none, and the drift when it does not match its lock.
pub(crate) fn pin(pins: &Pins, mut tool: MappedTool) -> (Option<MappedTool>, Option<Drift>) {
    let id = &tool.definition.id;
    let name = id.name();
    let upstream = tool.definition.version;
    let Some((locked, entry)) = pins.lock.find(&name, upstream) else {
        let served = (pins.on_change != OnChange::Refuse).then_some(upstream);
        let drift = Drift {
            name,
            locked: None,
            served,
            change: Change::default(),
            on_change: pins.on_change,
        };
        return (served.map(|_| tool), Some(drift));
    };
    let definition = change::canonical(&tool);
    if change::fingerprint(&definition) == entry.fingerprint {
        set_version(&mut tool, locked);
        return (Some(tool), None);
    }
    let change = change::classify(&entry.definition(), &definition);
    let served = match (pins.on_change, change.class()) {
        (OnChange::Refuse, _) => None,
        (OnChange::Warn, _) | (OnChange::Bump, None) => Some(locked),
        (OnChange::Bump, Some(class)) => Some(change::next_version(locked, class)),
    };
    let drift = Drift {
        name,
        locked: Some(locked),
        served,
        change,
        on_change: pins.on_change,
    };
    let tool = served.map(|version| {
        set_version(&mut tool, version);
        tool
    });
    (tool, Some(drift))
}

fn set_version(tool: &mut MappedTool, version: ToolVersion) {
    let id = &tool.definition.id;
    let pinned = ToolId::exact(id.toolkit.clone(), id.tool.clone(), version);
    if tool.definition.version == version && *id == pinned {
        // The definition the adapter listed stays shared with it.
        return;
    }
    let definition = Arc::make_mut(&mut tool.definition);
    definition.id = pinned;
    definition.version = version;
}

#[cfg(test)]
mod tests {
    use otc_mappings::Target;
    use otc_mappings::otc::ToolDefinition;
    use serde_json::json;

    use super::*;

    fn tool(description: &str, version: ToolVersion) -> MappedTool {
        MappedTool {
            definition: Arc::new(ToolDefinition {
                id: ToolId::exact("Kit", "Echo", version),
                name: "Kit_Echo".to_owned(),
                description: description.to_owned(),
                version,
                input_schema: json!({"type": "object", "properties": {"m": {"type": "string"}}})
                    .into(),
                output_schema: None,
                requirements: None,
            }),
            target: Target::Named {
                name: "echo".to_owned(),
            },
            destructive: false,
            label: None,
            hidden_inputs: Vec::new(),
        }
    }

    fn pins(lock: Lockfile, on_change: OnChange) -> Pins {
        Pins {
            lock: Arc::new(lock),
            on_change,
        }
    }

    const V1: ToolVersion = ToolVersion::new(1, 0, 0);

    /// A lock of `Kit.Echo` served at 1.4.2 from upstream 1.0.0.
    fn locked() -> Lockfile {
        let mut served = tool("Echoes.", V1);
        set_version(&mut served, ToolVersion::new(1, 4, 2));
        Lockfile::of([(&served, V1)])
    }

    /// A tool served at the version it already has keeps the definition its adapter listed
    /// (one copy for both); one served at another version gets its own.
    #[test]
    fn pinning_copies_a_definition_only_when_its_version_changes() {
        let listed = tool("Echoes.", V1);
        let mut same = listed.clone();
        set_version(&mut same, V1);
        assert!(Arc::ptr_eq(&same.definition, &listed.definition));
        let mut other = listed.clone();
        set_version(&mut other, ToolVersion::new(1, 4, 2));
        assert!(!Arc::ptr_eq(&other.definition, &listed.definition));
        assert_eq!(other.definition.id.to_string(), "Kit.Echo@1.4.2");
        assert_eq!(listed.definition.version, V1);
    }

    #[test]
    fn the_text_round_trips_and_is_stable() {
        let lock = locked();
        let text = lock.to_text();
        let again = Lockfile::parse(&text).unwrap();
        assert_eq!(again, lock);
        assert_eq!(again.to_text(), text);
        assert!(text.contains("\"Kit.Echo@1.4.2\""), "{text}");
    }

    #[test]
    fn the_upstream_label_is_kept_as_written() {
        let mut labelled = tool("Echoes.", V1);
        labelled.label = Some("2023-07-01-preview".into());
        let lock = Lockfile::of([(&labelled, V1)]);
        let text = lock.to_text();
        assert!(text.contains("\"label\": \"2023-07-01-preview\""), "{text}");
        assert_eq!(Lockfile::parse(&text).unwrap(), lock);
    }

    #[test]
    fn a_bad_file_is_refused_with_a_reason() {
        for (text, reason) in [
            (r#"{"lockfile": 2, "tools": {}}"#, "format 2"),
            (
                r#"{"lockfile": 1, "tools": {"Kit.Echo@1": {"upstream": "1.0.0", "fingerprint": "x", "definition": {}}}}"#,
                "full version",
            ),
            (r#"{"lockfile": 1}"#, "tools"),
            (
                r#"{"lockfile": 1, "tools": {"Kit.Echo@1.0.0": {"upstream": "1.0.0", "fingerprint": "x", "definition": {}},
                 "Kit.Echo@2.0.0": {"upstream": "1.0.0", "fingerprint": "x", "definition": {}}}}"#,
                "same upstream",
            ),
        ] {
            let err = Lockfile::parse(text).unwrap_err().to_string();
            assert!(err.contains(reason), "{err}");
        }
    }

    #[test]
    fn an_unchanged_tool_is_served_at_its_locked_version() {
        for policy in [OnChange::Bump, OnChange::Warn, OnChange::Refuse] {
            let (served, drift) = pin(&pins(locked(), policy), tool("Echoes.", V1));
            assert_eq!(served.unwrap().definition.id.to_string(), "Kit.Echo@1.4.2");
            assert!(drift.is_none());
        }
    }

    #[test]
    fn a_changed_tool_follows_the_policy() {
        let changed = || tool("Echoes, and sends a copy elsewhere.", V1);
        let (served, drift) = pin(&pins(locked(), OnChange::Bump), changed());
        assert_eq!(
            served.unwrap().definition.version,
            ToolVersion::new(1, 4, 3)
        );
        assert_eq!(drift.unwrap().class(), Some(Class::Patch));

        let (served, drift) = pin(&pins(locked(), OnChange::Warn), changed());
        assert_eq!(
            served.unwrap().definition.version,
            ToolVersion::new(1, 4, 2)
        );
        assert!(drift.unwrap().message().contains("still served as 1.4.2"));

        let (served, drift) = pin(&pins(locked(), OnChange::Refuse), changed());
        assert!(served.is_none());
        let message = drift.unwrap().message();
        assert!(
            message.starts_with("`Kit.Echo@1.4.2` changed upstream since it was locked (patch change: description changed)"),
            "{message}"
        );
    }

    #[test]
    fn a_tool_the_lock_lacks_is_new() {
        let relabelled = tool("Echoes.", ToolVersion::new(2, 0, 0));
        let (served, drift) = pin(&pins(locked(), OnChange::Bump), relabelled.clone());
        assert_eq!(
            served.unwrap().definition.version,
            ToolVersion::new(2, 0, 0)
        );
        assert_eq!(drift.unwrap().locked, None);
        let (served, drift) = pin(&pins(locked(), OnChange::Refuse), relabelled);
        assert!(served.is_none());
        assert!(drift.unwrap().message().contains("not in the lock"));
    }

    #[test]
    fn removed_tools_are_named() {
        let now = Lockfile::default();
        assert_eq!(
            locked().removed_in(&now).collect::<Vec<_>>(),
            ["Kit.Echo@1.4.2"]
        );
        assert_eq!(locked().removed_in(&locked()).count(), 0);
    }
}
