//! Transforms against a GitHub-like "list pull requests" tool: the served definition, the map
//! back, and every configuration mistake named.

use otc_mappings::otc::{Schema, ToolDefinition, ToolVersion};
use otc_shape::transform::{FixedSource, MapBackError, Transform, TransformError};
use serde_json::{Map, Value, json};

fn upstream() -> ToolDefinition {
    ToolDefinition {
        id: "Github.PullsList@1.0.0".parse().unwrap(),
        name: "Github_PullsList".to_owned(),
        description: "List pull requests.".to_owned(),
        version: ToolVersion::new(1, 0, 0),
        input_schema: Schema::from(json!({
            "type": "object",
            "properties": {
                "owner": {"type": "string"},
                "repo": {"type": "string", "description": "The repository."},
                "state": {"type": "string", "enum": ["open", "closed", "all"]},
                "per_page": {"type": "integer", "minimum": 1, "maximum": 100},
                "limit": {"type": "integer", "maximum": 100},
                "user": {"type": "string"},
                "sort": {"type": "string"}
            },
            "required": ["owner", "repo", "per_page"],
            "additionalProperties": false
        })),
        output_schema: None,
        requirements: None,
    }
}

const EXAMPLE: &str = r#"
name: list_pulls
description_append: "Only this organisation's repositories."
arguments:
  per_page: {fixed: 100}
  owner: {fixed: {env: GITHUB_OWNER}}
  user: {fixed: {caller: name}}
  state: {enum: [open, closed], default: open, description: "Open or closed."}
  repo: {rename: repository}
  limit: {maximum: 50, minimum: 1}
"#;

fn transform(yaml: &str) -> Transform {
    serde_yaml::from_str(yaml).unwrap()
}

fn apply_err(yaml: &str) -> TransformError {
    transform(yaml).apply(&upstream()).unwrap_err()
}

fn resolve(source: &FixedSource) -> Option<Value> {
    match source {
        FixedSource::Env(name) if name == "GITHUB_OWNER" => Some(json!("acme")),
        FixedSource::Caller(key) if key == "name" => Some(json!("alice")),
        _ => None,
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(members) => members,
        other => panic!("not an object: {other}"),
    }
}

#[test]
fn the_example_serves_the_transformed_definition() {
    let t = transform(EXAMPLE).apply(&upstream()).unwrap();
    let d = &t.definition;
    assert_eq!(d.name, "list_pulls");
    assert_eq!(
        d.description,
        "List pull requests.\n\nOnly this organisation's repositories."
    );
    assert_eq!(d.id, upstream().id, "the id is the catalog's to choose");
    assert_eq!(
        d.input_schema.to_value(),
        json!({
            "type": "object",
            "properties": {
                "repository": {"type": "string", "description": "The repository."},
                "state": {"type": "string", "enum": ["open", "closed"],
                          "description": "Open or closed.", "default": "open"},
                "limit": {"type": "integer", "maximum": 50, "minimum": 1},
                "sort": {"type": "string"}
            },
            "required": ["repository"],
            "additionalProperties": false
        })
    );
}

#[test]
fn calls_are_mapped_back_with_fixed_values_defaults_and_upstream_names() {
    let t = transform(EXAMPLE).apply(&upstream()).unwrap();
    let input = object(json!({"repository": "widgets", "limit": 5}));
    let back = t.arguments.map_back(input, &resolve).unwrap();
    assert_eq!(
        Value::Object(back),
        json!({"repo": "widgets", "limit": 5, "state": "open",
               "per_page": 100, "owner": "acme", "user": "alice"})
    );
    // A value the caller gives wins over the default.
    let input = object(json!({"repository": "w", "state": "closed"}));
    let back = t.arguments.map_back(input, &resolve).unwrap();
    assert_eq!(back["state"], json!("closed"));
}

#[test]
fn a_fixed_argument_passed_by_the_caller_is_ignored_and_the_fixed_value_sent() {
    let t = transform(EXAMPLE).apply(&upstream()).unwrap();
    let hidden: Vec<&str> = t.arguments.hidden().collect();
    for argument in ["per_page", "owner", "user"] {
        assert!(hidden.contains(&argument), "{hidden:?}");
        let mut input = object(json!({"repository": "w", argument: "from the caller"}));
        let fixed = t
            .arguments
            .map_back(object(json!({"repository": "w"})), &resolve)
            .unwrap();
        // Over a value the caller sent, the fixed one is sent.
        let back = t.arguments.map_back(input.clone(), &resolve).unwrap();
        assert_eq!(back, fixed, "{argument}");
        // And before validation the caller's value is taken out.
        t.arguments.drop_hidden(&mut input);
        assert_eq!(Value::Object(input), json!({"repository": "w"}));
    }
    // A renamed argument's upstream name is still refused: it is not the served one.
    let input = object(json!({"repository": "w", "repo": 1}));
    assert_eq!(
        t.arguments.map_back(input, &resolve),
        Err(MapBackError::UnknownArgument {
            argument: "repo".to_owned()
        })
    );
}

#[test]
fn an_unresolved_fixed_value_names_its_origin_not_a_value() {
    let t = transform(EXAMPLE).apply(&upstream()).unwrap();
    let err = t
        .arguments
        .map_back(object(json!({"repository": "w"})), &|_| None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "argument `owner`: no value for environment variable `GITHUB_OWNER`"
    );
}

#[test]
fn no_arguments_means_an_identity_map() {
    let t = transform("name: other").apply(&upstream()).unwrap();
    assert!(t.arguments.is_identity());
    assert_eq!(t.definition.input_schema, upstream().input_schema);
    let input = object(json!({"anything": 1}));
    assert_eq!(
        t.arguments.map_back(input.clone(), &resolve).unwrap(),
        input
    );
}

#[test]
fn fixed_forms_read_from_yaml() {
    let t = transform(
        "arguments: {a: {fixed: {env: X}}, b: {fixed: {caller: team}}, c: {fixed: {value: {env: Y}}}, d: {fixed: [1]}}",
    );
    assert_eq!(
        t.arguments["a"].fixed,
        Some(FixedSource::Env("X".to_owned()))
    );
    assert_eq!(
        t.arguments["b"].fixed,
        Some(FixedSource::Caller("team".to_owned()))
    );
    assert_eq!(
        t.arguments["c"].fixed,
        Some(FixedSource::Value(json!({"env": "Y"})))
    );
    assert_eq!(t.arguments["d"].fixed, Some(FixedSource::Value(json!([1]))));
}

#[test]
fn unknown_configuration_keys_are_refused() {
    assert!(serde_yaml::from_str::<Transform>("nam: x").is_err());
    assert!(serde_yaml::from_str::<Transform>("arguments: {a: {renam: b}}").is_err());
}

#[test]
fn configuration_mistakes_are_named() {
    let cases: &[(&str, &str)] = &[
        ("name: 'list pulls'", "tool name `list pulls` must match"),
        ("description: a\ndescription_append: b", "set one of them"),
        (
            "arguments: {nope: {description: x}}",
            "argument `nope`: the upstream tool has no such argument",
        ),
        (
            "arguments: {repo: {rename: owner}}",
            "argument `repo`: new name `owner` is already taken by `owner`",
        ),
        (
            "arguments: {repo: {rename: x}, user: {rename: x}}",
            "new name `x` is already taken by `repo`",
        ),
        (
            "arguments: {repo: {rename: 'a b'}}",
            "argument `repo`: new name `a b` must match",
        ),
        (
            "arguments: {state: {enum: [open, merged]}}",
            "argument `state`: enum value \"merged\" is not allowed upstream",
        ),
        (
            "arguments: {sort: {enum: [1]}}",
            "argument `sort`: enum value 1 is not allowed upstream: it is not of type \"string\"",
        ),
        (
            "arguments: {state: {enum: []}}",
            "argument `state`: enum must list at least one value",
        ),
        (
            "arguments: {limit: {maximum: 500}}",
            "argument `limit`: maximum 500 is above the upstream's maximum 100",
        ),
        (
            "arguments: {per_page: {minimum: 0}}",
            "argument `per_page`: minimum 0 is below the upstream's minimum 1",
        ),
        (
            "arguments: {sort: {maximum: 3}}",
            "argument `sort`: minimum and maximum apply to numbers",
        ),
        (
            "arguments: {limit: {minimum: 10, maximum: 5}}",
            "minimum 10 is above maximum 5",
        ),
        (
            "arguments: {state: {enum: [open], default: closed}}",
            "argument `state`: value \"closed\" is not valid for it",
        ),
        (
            "arguments: {limit: {maximum: 50, default: 60}}",
            "argument `limit`: value 60 is not valid for it: it is above the maximum 50",
        ),
        (
            "arguments: {per_page: {fixed: 1000}}",
            "argument `per_page`: value 1000 is not valid",
        ),
        (
            "arguments: {repo: {fixed: x, rename: y}}",
            "argument `repo`: a fixed argument is hidden",
        ),
        (
            "arguments: {state: {fixed: open, enum: [open]}}",
            "argument `state`: a fixed argument is hidden",
        ),
    ];
    for (yaml, expected) in cases {
        let err = apply_err(yaml).to_string();
        assert!(err.contains(expected), "{yaml}: {err}");
    }
}

/// The bridge fingerprints the served definition and classifies changes with its own code
/// (otc_mappings::change); this documents what a transform changes in the served schema, which
/// is what that classification sees.
#[test]
fn hiding_a_required_argument_and_renaming_change_the_served_schema_as_expected() {
    let before = upstream().input_schema.to_value();
    assert!(
        before["required"]
            .as_array()
            .unwrap()
            .contains(&json!("per_page"))
    );
    let t = transform("arguments: {per_page: {fixed: 30}, repo: {rename: repository}}")
        .apply(&upstream())
        .unwrap();
    let after = t.definition.input_schema.to_value();
    // Hidden with a fixed value: out of `properties` and out of `required`.
    assert!(after["properties"].get("per_page").is_none());
    assert!(
        !after["required"]
            .as_array()
            .unwrap()
            .contains(&json!("per_page"))
    );
    // Renamed: the property (and its `required` entry) has the new name, same schema.
    assert!(after["properties"].get("repo").is_none());
    assert_eq!(
        after["properties"]["repository"],
        before["properties"]["repo"]
    );
    assert_eq!(after["required"], json!(["owner", "repository"]));
    assert_ne!(t.definition.input_schema, upstream().input_schema);
}
