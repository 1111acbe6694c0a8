//! Naming rules (DESIGN.md §4): id segments, `name`s of at most 64 characters, versions, and
//! deterministic collision handling.

use std::collections::HashMap;

use heck::ToUpperCamelCase;

use crate::error::{Diagnostic, Severity};
use crate::otc::ToolVersion;

/// The longest `name` the standard allows.
pub const MAX_NAME_LEN: usize = 64;

/// Turns any upstream name into an id segment in UpperCamelCase (`get-user_by.id` → `GetUserById`).
///
/// Characters outside `[A-Za-z0-9_]` separate words; a segment that would be empty (a name in
/// another script, say) becomes `fallback`.
pub fn segment(raw: &str, fallback: &str) -> String {
    let spaced: String = raw
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect();
    let camel = spaced.to_upper_camel_case();
    let cleaned: String = camel
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if cleaned.is_empty() {
        fallback.to_owned()
    } else {
        cleaned
    }
}

/// A tool segment from an HTTP method and path: `GET /pets/{id}` → `GetPetsById`.
pub fn segment_from_route(method: &str, path: &str) -> String {
    let mut words = vec![method.to_ascii_lowercase()];
    for part in path.split('/').filter(|p| !p.is_empty()) {
        if let Some(param) = part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
            words.push("by".to_owned());
            words.push(param.to_owned());
        } else {
            words.push(part.to_owned());
        }
    }
    segment(&words.join(" "), "Operation")
}

/// A 32-bit FNV-1a hash as 8 hex digits: stable across runs, platforms and releases.
pub fn stable_hash(s: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

/// `Toolkit_Tool`, cut to 64 characters with a stable hash of the full name when longer.
pub fn tool_name(toolkit: &str, tool: &str) -> String {
    let full = format!("{toolkit}_{tool}");
    shorten(&full, MAX_NAME_LEN)
}

/// Cuts `s` (ASCII) to `max` characters, ending in `_` and a stable hash of the whole when cut.
pub fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let hash = stable_hash(s);
    let keep = max.saturating_sub(hash.len() + 1);
    format!("{}_{hash}", &s[..keep])
}

/// Normalises a declared version to `x.y.z` (DESIGN.md §4). `None` means it could not be read
/// (the caller then uses `1.0.0` and reports it).
///
/// `v2` → `2.0.0`, `2.1` → `2.1.0`, `2024-06-20` → `2024.6.20`, `1.2.3-beta+5` → `1.2.3`.
pub fn normalize_version(raw: &str) -> Option<ToolVersion> {
    let trimmed = raw.trim();
    let trimmed = trimmed.strip_prefix(['v', 'V']).unwrap_or(trimmed);
    let core = trimmed.split(['+', ' ']).next().unwrap_or_default();
    // A pre-release suffix (`-beta`) is dropped, but a date (`2024-06-20`) is the version itself.
    let is_date = core.split('-').count() == 3
        && core
            .split('-')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let core = if is_date {
        core.replace('-', ".")
    } else {
        core.split('-').next().unwrap_or_default().to_owned()
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty()
        || parts.len() > 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let mut numbers = [0u64; 3];
    for (slot, part) in numbers.iter_mut().zip(&parts) {
        *slot = part.parse().ok()?;
    }
    Some(ToolVersion::new(numbers[0], numbers[1], numbers[2]))
}

/// Normalises a version or falls back to `1.0.0` with a diagnostic.
pub fn version_or_default(raw: Option<&str>, diagnostics: &mut Vec<Diagnostic>) -> ToolVersion {
    match raw {
        Some(raw) => normalize_version(raw).unwrap_or_else(|| {
            diagnostics.push(Diagnostic::new(
                Severity::Warning,
                None,
                None,
                format!("version '{raw}' is not x.y.z or a form that converts to it; using 1.0.0"),
            ));
            ToolVersion::new(1, 0, 0)
        }),
        None => ToolVersion::new(1, 0, 0),
    }
}

/// Hands out unique tool segments within one toolkit, deterministically: the first claimant of a
/// name keeps it, later ones get `_2`, `_3`, … in the order they are claimed (document order).
#[derive(Debug, Default)]
pub struct UniqueNames {
    seen: HashMap<String, usize>,
}

impl UniqueNames {
    /// Claims `wanted` (compared case-insensitively, since names often are); returns the segment
    /// to use and records a diagnostic when it had to change.
    pub fn claim(
        &mut self,
        wanted: &str,
        operation: &str,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> String {
        let mut candidate = wanted.to_owned();
        let mut n = 1;
        while self.seen.contains_key(&candidate.to_ascii_lowercase()) {
            n += 1;
            candidate = format!("{wanted}_{n}");
        }
        if n > 1 {
            diagnostics.push(Diagnostic::new(
                Severity::Warning,
                Some(operation),
                None,
                format!("tool name '{wanted}' is already taken; this one is '{candidate}'"),
            ));
        }
        self.seen.insert(candidate.to_ascii_lowercase(), n);
        candidate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_upper_camel_case() {
        assert_eq!(segment("get-user_by.id", "X"), "GetUserById");
        assert_eq!(segment("listPets", "X"), "ListPets");
        assert_eq!(segment("ユーザー", "Tool"), "Tool");
        assert_eq!(segment_from_route("GET", "/pets/{id}"), "GetPetsById");
        assert_eq!(segment_from_route("post", "/"), "Post");
    }

    #[test]
    fn long_names_are_cut_with_a_stable_hash() {
        let long = "A".repeat(100);
        let name = tool_name("Kit", &long);
        assert_eq!(name.len(), 64);
        assert_eq!(name, tool_name("Kit", &long));
        assert_ne!(name, tool_name("Kit", &format!("{long}B")));
        assert_eq!(tool_name("Calculator", "Add"), "Calculator_Add");
    }

    #[test]
    fn versions_normalise() {
        let v = |s| normalize_version(s).map(|v| v.to_string());
        assert_eq!(v("v2").as_deref(), Some("2.0.0"));
        assert_eq!(v("2.1").as_deref(), Some("2.1.0"));
        assert_eq!(v("2024-06-20").as_deref(), Some("2024.6.20"));
        assert_eq!(v("1.2.3-beta.1+build").as_deref(), Some("1.2.3"));
        assert_eq!(v("latest"), None);
        assert_eq!(v(""), None);
    }

    #[test]
    fn collisions_are_numbered_in_order() {
        let mut names = UniqueNames::default();
        let mut d = Vec::new();
        assert_eq!(names.claim("Get", "a", &mut d), "Get");
        assert_eq!(names.claim("Get", "b", &mut d), "Get_2");
        assert_eq!(names.claim("get", "c", &mut d), "get_3");
        assert_eq!(d.len(), 2);
    }
}
