//! Call-path costs of shaping: mapping a call's arguments back, projecting a 30-item "list pull
//! requests" result with jq, and cutting a 5 MB value to 64 KiB (parsed, and from its text).
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use otc_mappings::otc::{Schema, ToolDefinition, ToolVersion};
use otc_shape::budget::{cut, cut_json, serialized_len};
use otc_shape::project::{Limits, Projection};
use otc_shape::transform::{FixedSource, Transform};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

fn pull(i: usize) -> Value {
    json!({
        "url": format!("https://api.github.com/repos/acme/widgets/pulls/{i}"),
        "id": 1_000_000 + i, "number": i, "state": "open", "locked": false,
        "title": format!("Fix the widget frobnicator, part {i}"),
        "user": {"login": format!("user{i}"), "id": i, "type": "User", "site_admin": false,
                 "avatar_url": "https://avatars.githubusercontent.com/u/1?v=4"},
        "body": "This pull request fixes the frobnicator. ".repeat(10),
        "labels": [{"id": 1, "name": "bug", "color": "d73a4a", "default": true}],
        "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-02T00:00:00Z",
        "head": {"ref": "fix", "sha": "0123456789abcdef0123456789abcdef01234567"},
        "base": {"ref": "main", "sha": "89abcdef0123456789abcdef0123456789abcdef"},
        "draft": false, "merged_at": null, "assignees": [], "requested_reviewers": []
    })
}

fn upstream() -> ToolDefinition {
    ToolDefinition {
        id: "Github.PullsList@1.0.0".parse().expect("a valid id"),
        name: "Github_PullsList".to_owned(),
        description: "List pull requests.".to_owned(),
        version: ToolVersion::new(1, 0, 0),
        input_schema: Schema::from(json!({"type": "object", "properties": {
            "owner": {"type": "string"}, "repo": {"type": "string"},
            "state": {"type": "string", "enum": ["open", "closed", "all"]},
            "per_page": {"type": "integer", "maximum": 100}, "page": {"type": "integer"},
            "user": {"type": "string"}},
            "required": ["owner", "repo"]})),
        output_schema: None,
        requirements: None,
    }
}

fn map_back(c: &mut Criterion) {
    let transform: Transform = serde_json::from_value(json!({
        "name": "list_pulls",
        "arguments": {
            "per_page": {"fixed": 100},
            "owner": {"fixed": {"env": "GITHUB_OWNER"}},
            "user": {"fixed": {"caller": "name"}},
            "state": {"enum": ["open", "closed"], "default": "open"},
            "repo": {"rename": "repository"}
        }
    }))
    .expect("a valid transform");
    let transformed = transform.apply(&upstream()).expect("it applies");
    let resolve = |source: &FixedSource| match source {
        FixedSource::Env(_) => Some(json!("acme")),
        FixedSource::Caller(_) => Some(json!("alice")),
        FixedSource::Value(v) => Some(v.clone()),
    };
    let mut input = Map::new();
    input.insert("repository".to_owned(), json!("widgets"));
    input.insert("page".to_owned(), json!(2));
    c.bench_function("transform/map_back", |b| {
        b.iter(|| {
            transformed
                .arguments
                .map_back(black_box(input.clone()), &resolve)
        });
    });
}

fn project(c: &mut Criterion) {
    let projection = Projection::compile(
        ".[] | {number, title, user: .user.login}",
        Limits::default(),
    )
    .expect("it compiles");
    let pulls = Value::Array((0..30).map(pull).collect());
    c.bench_function("project/run_30_pulls", |b| {
        b.iter(|| projection.run(black_box(pulls.clone())));
    });
    c.bench_function("project/clone_30_pulls_baseline", |b| {
        b.iter(|| black_box(pulls.clone()));
    });
}

fn budget(c: &mut Criterion) {
    let mut items = Vec::new();
    let mut i = 0;
    let mut value = Value::Array(Vec::new());
    while serialized_len(&value) < 5_000_000 {
        items.extend((i..i + 500).map(pull));
        i += 500;
        value = Value::Array(items.clone());
    }
    let size = serialized_len(&value);
    c.bench_function(&format!("budget/cut_{size}_bytes_to_64KiB"), |b| {
        b.iter(|| cut(black_box(&value), 64 * 1024));
    });
    // The same, cut from its text (an MCP call with a budget); and inside an object, the shape
    // of an MCP server's `structuredContent` (`{"items": […]}`).
    let text = RawValue::from_string(value.to_string()).expect("serde_json writes JSON");
    c.bench_function(&format!("budget/cut_json_{size}_bytes_to_64KiB"), |b| {
        b.iter(|| cut_json(black_box(&text), 64 * 1024));
    });
    let wrapped = RawValue::from_string(format!("{{\"items\":{}}}", text.get()))
        .expect("an object around JSON is JSON");
    c.bench_function(
        &format!("budget/cut_json_{size}_bytes_in_an_object_to_64KiB"),
        |b| {
            b.iter(|| cut_json(black_box(&wrapped), 64 * 1024));
        },
    );
}

criterion_group!(benches, map_back, project, budget);
criterion_main!(benches);
