//! Expansion bombs (issue 9, item 3): documents whose `$ref` DAG or YAML aliases expand far beyond
//! their text. Each must be refused or cut with a diagnostic, and what is produced must stay small.
//! Outcomes are asserted (diagnostics, errors, sizes), never time.

use otc_mappings::openapi::{MapOptions, NoFetch, map_document};
use otc_mappings::{MappingError, Severity};

/// An OpenAPI document with `ops` operations whose bodies all use `L0`, where each `Ln` holds two
/// references to `Ln+1`, `levels` deep: a tree form of 2^levels nodes per use.
fn ref_dag(levels: usize, ops: usize) -> String {
    let mut schemas = Vec::new();
    for n in 0..levels {
        schemas.push(format!(
            r##""L{n}":{{"type":"object","properties":{{"a":{{"$ref":"#/components/schemas/L{m}"}},"b":{{"$ref":"#/components/schemas/L{m}"}}}}}}"##,
            m = n + 1
        ));
    }
    schemas.push(format!(r#""L{levels}":{{"type":"string"}}"#));
    let paths: Vec<String> = (0..ops)
        .map(|i| {
            format!(
                r##""/p{i}":{{"post":{{"operationId":"op{i}","requestBody":{{"content":{{"application/json":{{"schema":{{"$ref":"#/components/schemas/L0"}}}}}}}},"responses":{{"200":{{"description":"ok","content":{{"application/json":{{"schema":{{"$ref":"#/components/schemas/L0"}}}}}}}}}}}}}}"##
            )
        })
        .collect();
    format!(
        r#"{{"openapi":"3.0.0","info":{{"title":"Bomb","version":"1"}},"servers":[{{"url":"https://example.com"}}],"paths":{{{}}},"components":{{"schemas":{{{}}}}}}}"#,
        paths.join(","),
        schemas.join(",")
    )
}

/// A YAML document with one `items`-long anchored list and `aliases` references to it.
fn yaml_aliases(items: usize, aliases: usize) -> String {
    let mut text =
        String::from("openapi: 3.0.0\ninfo: {title: Bomb, version: '1'}\npaths: {}\nx-a: &a [");
    text.push_str(&vec!["abcdefghij"; items].join(","));
    text.push_str("]\nx-b: [");
    text.push_str(&vec!["*a"; aliases].join(","));
    text.push_str("]\n");
    text
}

fn serialized_size(text: &str) -> (usize, Vec<String>) {
    let mapped = map_document(text, &MapOptions::default(), &NoFetch).unwrap();
    let size = mapped
        .tools
        .iter()
        .map(|t| serde_json::to_vec(&t.definition).unwrap().len())
        .sum();
    let diagnostics = mapped.diagnostics.iter().map(ToString::to_string).collect();
    (size, diagnostics)
}

#[test]
fn issue_9_ref_dag_bomb_is_cut_or_refused() {
    let text = ref_dag(20, 13);
    assert!(text.len() < 6_000, "{}", text.len());
    let (size, diagnostics) = serialized_size(&text);
    assert!(size < 64 * 1024 * 1024, "definitions are {size} bytes");
    assert!(
        diagnostics
            .iter()
            .any(|d| d.contains("too large") || d.contains("more than")),
        "{diagnostics:?}"
    );
}

#[test]
fn issue_9_ref_dag_bomb_at_20_kb_is_cut_or_refused_within_the_document_budget() {
    let text = ref_dag(20, 90);
    assert!(text.len() > 18_000 && text.len() < 26_000, "{}", text.len());
    let mapped = map_document(&text, &MapOptions::default(), &NoFetch).unwrap();
    // Operations are skipped naming the schema that ran the budget out, or served with their
    // schemas cut where they grew too large (later operations reuse the first one's cut
    // expansions), never expanded in full.
    let mut cut_or_skipped = false;
    for d in &mapped.diagnostics {
        if d.severity == Severity::Skipped {
            assert!(d.reason.contains("#/components/schemas/L"), "{d}");
            cut_or_skipped = true;
        } else if d.reason.contains("too large") {
            cut_or_skipped = true;
        }
    }
    assert!(cut_or_skipped, "{:?}", mapped.diagnostics);
    let skipped = mapped
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Skipped)
        .count();
    assert_eq!(
        mapped.tools.len() + skipped,
        90,
        "every operation is served or skipped"
    );
    let size: usize = mapped
        .tools
        .iter()
        .map(|t| serde_json::to_vec(&t.definition).unwrap().len())
        .sum();
    // The document budget (200,000 nodes for this text) bounds what all operations produce.
    assert!(size < 16 * 1024 * 1024, "definitions are {size} bytes");
}

#[test]
fn issue_9_yaml_alias_bomb_is_refused() {
    let text = yaml_aliases(20_000, 20_000);
    assert!(
        text.len() > 250_000 && text.len() < 320_000,
        "{}",
        text.len()
    );
    let err = map_document(&text, &MapOptions::default(), &NoFetch).unwrap_err();
    assert!(matches!(err, MappingError::Invalid(_)), "{err}");
    assert!(err.to_string().contains("aliases"), "{err}");
}

#[test]
fn issue_9_modest_yaml_aliases_still_load() {
    let text = yaml_aliases(100, 100);
    let mapped = map_document(&text, &MapOptions::default(), &NoFetch).unwrap();
    assert!(mapped.tools.is_empty());
}
