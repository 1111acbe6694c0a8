//! Tool ids and versions: the grammar of CHECKLIST §4a and the resolution rules of §5.3.
//!
//! A `ToolId` is `Toolkit.Tool`, optionally followed by `@x` or `@x.y.z`. Each segment is
//! `[A-Za-z0-9_]+`. Parsing never panics and says exactly what is wrong, because the message
//! reaches a person (or a model) who typed the id.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A tool version: simple semantic versioning `x.y.z`, ordered numerically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolVersion {
    /// Incremented on breaking changes.
    pub major: u64,
    /// Incremented on backward-compatible additions.
    pub minor: u64,
    /// Incremented on fixes.
    pub patch: u64,
}

impl ToolVersion {
    /// Builds a version from its three numbers.
    pub const fn new(major: u64, minor: u64, patch: u64) -> Self {
        Self {
            major,
            minor,
            patch,
        }
    }
}

impl fmt::Display for ToolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Why a tool id or version could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolIdError {
    /// The id has no `.` between toolkit and tool.
    #[error("'{0}' is not a tool id: expected 'Toolkit.Tool' or 'Toolkit.Tool@1.2.3'")]
    MissingDot(String),
    /// A segment is empty or holds a character outside `[A-Za-z0-9_]`.
    #[error(
        "'{id}' is not a tool id: the {part} '{segment}' may only contain letters, digits and '_'"
    )]
    BadSegment {
        /// The whole id as given.
        id: String,
        /// `toolkit` or `tool name`.
        part: &'static str,
        /// The offending segment.
        segment: String,
    },
    /// The part after `@` is neither `x` nor `x.y.z`.
    #[error(
        "'{id}' has an invalid version '{version}': expected 'x' or 'x.y.z' with numbers only, like '1' or '1.2.0'"
    )]
    BadVersion {
        /// The whole id (or version) as given.
        id: String,
        /// The version part.
        version: String,
    },
}

/// The version part of a tool id, as the caller wrote it (CHECKLIST §5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VersionSelector {
    /// No `@`: the highest version served.
    Latest,
    /// `@x`: exactly `x.0.0` (literally, not "the latest 1.x").
    Major(u64),
    /// `@x.y.z`: exactly that version.
    Exact(ToolVersion),
}

impl VersionSelector {
    /// Whether `version` is the one this selector names. `Latest` matches nothing by itself:
    /// it needs the list of versions, see [`VersionSelector::select`].
    pub fn matches(&self, version: ToolVersion) -> bool {
        match *self {
            Self::Latest => false,
            Self::Major(major) => version == ToolVersion::new(major, 0, 0),
            Self::Exact(exact) => version == exact,
        }
    }

    /// Picks the version this selector names out of the versions served.
    pub fn select<I: IntoIterator<Item = ToolVersion>>(&self, served: I) -> Option<ToolVersion> {
        match self {
            Self::Latest => served.into_iter().max(),
            _ => served.into_iter().find(|v| self.matches(*v)),
        }
    }
}

impl FromStr for ToolVersion {
    type Err = ToolIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut parts = s.split('.');
        let (Some(a), Some(b), Some(c), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad_version(s, s));
        };
        Ok(Self::new(number(a, s)?, number(b, s)?, number(c, s)?))
    }
}

fn number(part: &str, whole: &str) -> Result<u64, ToolIdError> {
    if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad_version(whole, whole));
    }
    part.parse().map_err(|_| bad_version(whole, whole))
}

fn bad_version(id: &str, version: &str) -> ToolIdError {
    ToolIdError::BadVersion {
        id: id.to_owned(),
        version: version.to_owned(),
    }
}

impl Serialize for ToolVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ToolVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A parsed tool id: `Toolkit.Tool` plus a version selector.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolId {
    /// The toolkit segment.
    pub toolkit: String,
    /// The tool segment.
    pub tool: String,
    /// What the `@…` suffix asked for.
    pub version: VersionSelector,
}

impl ToolId {
    /// `Toolkit.Tool`: the id without its version, which names a tool across its versions.
    pub fn name(&self) -> String {
        format!("{}.{}", self.toolkit, self.tool)
    }

    /// The id of one exact version, as written in a `ToolDefinition`.
    pub fn exact(
        toolkit: impl Into<String>,
        tool: impl Into<String>,
        version: ToolVersion,
    ) -> Self {
        Self {
            toolkit: toolkit.into(),
            tool: tool.into(),
            version: VersionSelector::Exact(version),
        }
    }
}

/// Whether `s` is a valid id segment (`[A-Za-z0-9_]+`).
pub fn is_segment(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl FromStr for ToolId {
    type Err = ToolIdError;

    fn from_str(id: &str) -> Result<Self, Self::Err> {
        let (name, version) = match id.split_once('@') {
            Some((name, version)) => (name, Some(version)),
            None => (id, None),
        };
        let Some((toolkit, tool)) = name.split_once('.') else {
            return Err(ToolIdError::MissingDot(id.to_owned()));
        };
        for (part, segment) in [("toolkit", toolkit), ("tool name", tool)] {
            if !is_segment(segment) {
                return Err(ToolIdError::BadSegment {
                    id: id.to_owned(),
                    part,
                    segment: segment.to_owned(),
                });
            }
        }
        let version = match version {
            None => VersionSelector::Latest,
            Some(v) if !v.contains('.') => {
                VersionSelector::Major(number(v, v).map_err(|_| bad_version(id, v))?)
            }
            Some(v) => VersionSelector::Exact(v.parse().map_err(|_| bad_version(id, v))?),
        };
        Ok(Self {
            toolkit: toolkit.to_owned(),
            tool: tool.to_owned(),
            version,
        })
    }
}

impl fmt::Display for ToolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.toolkit, self.tool)?;
        match self.version {
            VersionSelector::Latest => Ok(()),
            VersionSelector::Major(major) => write!(f, "@{major}"),
            VersionSelector::Exact(version) => write!(f, "@{version}"),
        }
    }
}

impl Serialize for ToolId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ToolId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_forms() {
        let id: ToolId = "Calculator.Add".parse().unwrap();
        assert_eq!(id.version, VersionSelector::Latest);
        let id: ToolId = "Calculator.Add@2".parse().unwrap();
        assert_eq!(id.version, VersionSelector::Major(2));
        let id: ToolId = "Calculator.Add@1.2.3".parse().unwrap();
        assert_eq!(
            id.version,
            VersionSelector::Exact(ToolVersion::new(1, 2, 3))
        );
        assert_eq!(id.to_string(), "Calculator.Add@1.2.3");
    }

    #[test]
    fn rejects_everything_else_with_a_reason() {
        for bad in [
            "Calculator",
            "Calculator.",
            ".Add",
            "Calc-ulator.Add",
            "Calculator.Add@",
            "Calculator.Add@1.0",
            "Calculator.Add@latest",
            "Calculator.Add@1.2.3.4",
            "Calculator.Add@v1",
            "A.B.C",
            "Calculator.Add@1.x.0",
            "Calculator.Add@-1",
            "",
        ] {
            let err = bad.parse::<ToolId>().unwrap_err();
            assert!(err.to_string().contains('\''), "{bad}: {err}");
        }
    }

    #[test]
    fn major_means_exactly_x_0_0() {
        let served = [
            ToolVersion::new(1, 0, 0),
            ToolVersion::new(1, 5, 0),
            ToolVersion::new(2, 0, 1),
        ];
        assert_eq!(
            VersionSelector::Major(1).select(served),
            Some(ToolVersion::new(1, 0, 0))
        );
        assert_eq!(VersionSelector::Major(2).select(served), None);
        assert_eq!(
            VersionSelector::Latest.select(served),
            Some(ToolVersion::new(2, 0, 1))
        );
        assert_eq!(
            VersionSelector::Exact(ToolVersion::new(1, 5, 0)).select(served),
            Some(ToolVersion::new(1, 5, 0))
        );
        assert_eq!(VersionSelector::Latest.select([]), None);
    }

    #[test]
    fn versions_order_numerically() {
        let a: ToolVersion = "1.10.0".parse().unwrap();
        let b: ToolVersion = "1.9.9".parse().unwrap();
        assert!(a > b);
    }
}
