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
/// Upstream labels are free text (`info.version`, `serverInfo.version`), and real ones are often
/// not semver; reading as many as can be read honestly keeps `@x` meaningful. The rules, in order:
///
/// 1. Surrounding space and a leading `v`/`V` (`v2`, `V 1.0.0`) are dropped.
/// 2. A date at the start is the version, as `YYYY.M.D`, whatever follows it:
///    `2024-06-20` → `2024.6.20`, `2023-07-01-preview` → `2023.7.1`. A date has a four-digit
///    year, a month 1–12 and a day 1–31; a label that starts like a date but is none
///    (`2024-13-01`) is not a version.
/// 3. Otherwise the label must start with dotted numbers, of which the first three are kept and
///    missing ones are 0: `2.1` → `2.1.0`, `9.66.02.1023` → `9.66.2`.
/// 4. What follows the numbers is dropped when it is a pre-release or build suffix, i.e. it
///    starts with `-`, `+`, `~`, `_`, `.`, a space or `(` (`1.2.3-beta+5`, `2.0 (v2)`, `3.x`), or
///    with a pre-release word (`v1beta1`, `2.0rc1`). Anything else (`9dcb0dc8`, a commit hash)
///    is not a version, and neither is a label that does not start with a number (`latest`).
pub fn normalize_version(raw: &str) -> Option<ToolVersion> {
    let trimmed = raw.trim();
    let label = trimmed
        .strip_prefix(['v', 'V'])
        .unwrap_or(trimmed)
        .trim_start();
    if let Some(date) = leading_date(label) {
        return date;
    }
    let digits_end = label
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(label.len());
    // The dotted numbers end at the first part that is not a number (`3.x`, `1..2`).
    let numeric: Vec<&str> = label[..digits_end]
        .split('.')
        .take_while(|p| !p.is_empty())
        .collect();
    let consumed = numeric
        .iter()
        .map(|p| p.len() + 1)
        .sum::<usize>()
        .saturating_sub(1);
    let rest = &label[consumed..];
    if numeric.is_empty() || !is_version_suffix(rest) {
        return None;
    }
    let mut numbers = [0u64; 3];
    for (slot, part) in numbers.iter_mut().zip(&numeric) {
        *slot = part.parse().ok()?;
    }
    Some(ToolVersion::new(numbers[0], numbers[1], numbers[2]))
}

/// Words that start a pre-release suffix written straight after the numbers (`v1beta1`,
/// `2.0rc1`); anything else glued to a number is not a version label (`9dcb0dc8`).
const PRE_RELEASE_WORDS: [&str; 7] = ["alpha", "beta", "preview", "rc", "pre", "dev", "snapshot"];

/// Whether `rest`, what follows a version's numbers, is a suffix that may be dropped.
fn is_version_suffix(rest: &str) -> bool {
    let Some(first) = rest.chars().next() else {
        return true;
    };
    if matches!(first, '-' | '+' | '~' | '_' | '.' | ' ' | '(') {
        return true;
    }
    let lower = rest.to_ascii_lowercase();
    PRE_RELEASE_WORDS.iter().any(|w| lower.starts_with(w))
}

/// A date at the start of `label` (`YYYY-MM-DD`, then anything not a digit): `None` when the
/// label does not start like a date, `Some(None)` when it does but is no calendar date
/// (`2024-13-01`), which is then no version at all rather than `2024.0.0`.
fn leading_date(label: &str) -> Option<Option<ToolVersion>> {
    let mut parts = label.splitn(3, '-');
    let year = parts.next()?;
    let month = parts.next()?;
    let tail = parts.next()?;
    let day_len = tail
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(tail.len());
    let day = &tail[..day_len];
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if year.len() != 4 || !digits(year) || !digits(month) || !digits(day) {
        return None;
    }
    let number = |s: &str| s.parse::<u64>().ok();
    Some(match (number(year), number(month), number(day)) {
        (Some(y), Some(m @ 1..=12), Some(d @ 1..=31)) if month.len() <= 2 && day.len() <= 2 => {
            Some(ToolVersion::new(y, m, d))
        }
        _ => None,
    })
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

    /// Labels seen in real documents (APIs.guru's directory, MCP servers), issue 11 item 7.
    #[test]
    fn issue_11_real_version_labels_normalise() {
        let v = |s| normalize_version(s).map(|v| v.to_string());
        let cases = [
            ("9.66.02.1023", Some("9.66.2")),
            ("23.24.2.136", Some("23.24.2")),
            ("1.4.0.0", Some("1.4.0")),
            ("2023-07-01-preview", Some("2023.7.1")),
            ("2019-05-06-Preview", Some("2019.5.6")),
            ("2018-06-01-privatepreview", Some("2018.6.1")),
            ("2020-08-10_6-22", Some("2020.8.10")),
            ("v2019-01-07", Some("2019.1.7")),
            ("2024-06-20", Some("2024.6.20")),
            ("V 1.0.0", Some("1.0.0")),
            (" v3 ", Some("3.0.0")),
            ("v1beta1", Some("1.0.0")),
            ("v2alpha", Some("2.0.0")),
            ("2.0rc1", Some("2.0.0")),
            ("1.0.0-oas3", Some("1.0.0")),
            ("1001.0.0-SNAPSHOT", Some("1001.0.0")),
            ("2.23.4+0.gb463b49.dirty", Some("2.23.4")),
            ("1.1.0~develop", Some("1.1.0")),
            ("2.0 (v2)", Some("2.0.0")),
            (
                "1.1.38 (2018-02-26 11:01:29 484103261f6ef681a05cf163)",
                Some("1.1.38"),
            ),
            ("1.3.8_2020-12-14 - Swiss edition", Some("1.3.8")),
            ("3.730.300-ref-1-39-0", Some("3.730.300")),
            ("v4 (Hunt Valley)", Some("4.0.0")),
            ("v3-reporting", Some("3.0.0")),
            ("3.x", Some("3.0.0")),
            ("2.4.x", Some("2.4.0")),
            ("0.6-99cfdac", Some("0.6.0")),
            // Not versions: the caller falls back to 1.0.0 with a diagnostic.
            ("9dcb0dc8", None),
            ("8234aab51481d37a30757d925b7f4221a659427e", None),
            (
                "Wed Oct 15 2025 13:50:19 GMT+0000 (Coordinated Universal Time)",
                None,
            ),
            ("api-v1", None),
            ("R4.2a", None),
            ("version unknown", None),
            ("v", None),
            (".1", None),
            ("2024-13-01", None),
            ("2024-06-201", None),
            ("99999999999999999999999.1", None),
        ];
        for (label, want) in cases {
            assert_eq!(v(label).as_deref(), want, "{label}");
        }
    }

    #[test]
    fn unreadable_version_falls_back_with_a_diagnostic() {
        let mut d = Vec::new();
        assert_eq!(
            version_or_default(Some("9dcb0dc8"), &mut d),
            ToolVersion::new(1, 0, 0)
        );
        assert_eq!(d.len(), 1);
        assert_eq!(
            version_or_default(Some("2023-07-01-preview"), &mut d),
            ToolVersion::new(2023, 7, 1)
        );
        assert_eq!(d.len(), 1, "a label that normalises is not reported");
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
