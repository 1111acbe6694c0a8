//! A tool's JSON Schema as people read it: a table of its parameters, nested objects and arrays
//! indented under their parent, with types, whether each is required, enums, defaults,
//! descriptions and constraints; and the try-it form's fields, one per top-level parameter.
//!
//! Schemas are catalog text, so untrusted: every value goes through maud's escaping, and the walk
//! is bounded in depth and rows, so a hostile or huge schema makes a long table, not a hang.

use maud::{Markup, html};
use serde_json::{Map, Value};

/// How deep nested objects and arrays are shown.
const MAX_DEPTH: usize = 8;
/// How many rows a table shows at most.
const MAX_ROWS: usize = 500;

/// One line of the table.
struct Row {
    depth: usize,
    name: String,
    kind: String,
    required: bool,
    description: Option<String>,
    details: Vec<(&'static str, String)>,
}

/// The table of a schema's parameters (the properties of an object schema, nested ones under
/// their parent); a schema that is not an object is one row.
pub(super) fn table(schema: &Value, caption: &str) -> Markup {
    if schema
        .as_object()
        .is_some_and(|o| o.keys().all(|k| k.starts_with('$')))
    {
        return html! { p { "Any JSON value: the schema says nothing more." } };
    }
    let mut rows = Vec::new();
    match properties(schema) {
        Some(props) => {
            let required = required_of(schema);
            for (name, sub) in props {
                walk(sub, name, required.contains(&name.as_str()), 0, &mut rows);
            }
        }
        None => walk(schema, "(value)", false, 0, &mut rows),
    }
    let cut = rows.len() >= MAX_ROWS;
    if rows.is_empty() {
        return html! { p { "No parameters." } };
    }
    html! {
        table.schema {
            caption { (caption) }
            thead { tr {
                th scope="col" { "Name" }
                th scope="col" { "Type" }
                th scope="col" { "Required" }
                th scope="col" { "Description" }
            } }
            tbody {
                @for row in &rows {
                    tr {
                        th scope="row" class={ "depth-" (row.depth.min(MAX_DEPTH)) } {
                            code { (row.name) }
                        }
                        td { (row.kind) }
                        td { @if row.required { strong { "required" } } @else { "optional" } }
                        td {
                            @if let Some(description) = &row.description { div.description { (description) } }
                            @if !row.details.is_empty() {
                                dl.details {
                                    @for (label, value) in &row.details {
                                        dt { (label) } dd { code { (value) } }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if cut { p { "Only the first " (MAX_ROWS) " rows are shown." } }
    }
}

fn properties(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties")?.as_object()
}

fn required_of(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The type a schema declares, as a word: `string`, `integer | null`, `array of string`, …
fn kind(schema: &Value) -> String {
    let declared = match schema.get("type") {
        Some(Value::String(t)) => Some(t.clone()),
        Some(Value::Array(types)) => Some(
            types
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" | "),
        ),
        _ => None,
    };
    let word = declared.unwrap_or_else(|| {
        let inferred = if schema.get("properties").is_some() {
            "object"
        } else if schema.get("items").is_some() {
            "array"
        } else if schema.get("enum").is_some() {
            "enum"
        } else if schema.get("const").is_some() {
            "const"
        } else if schema.get("oneOf").is_some() || schema.get("anyOf").is_some() {
            "one of"
        } else if schema.get("allOf").is_some() {
            "all of"
        } else if schema.get("$ref").is_some() {
            "reference"
        } else {
            "any"
        };
        inferred.to_owned()
    });
    match schema.get("items") {
        Some(items) if word.contains("array") => {
            word.replacen("array", &format!("array of {}", kind(items)), 1)
        }
        _ => word,
    }
}

/// Keys shown as constraints, with their labels.
const CONSTRAINTS: &[(&str, &str)] = &[
    ("enum", "one of"),
    ("const", "exactly"),
    ("default", "default"),
    ("format", "format"),
    ("pattern", "pattern"),
    ("minimum", "minimum"),
    ("maximum", "maximum"),
    ("exclusiveMinimum", "more than"),
    ("exclusiveMaximum", "less than"),
    ("multipleOf", "multiple of"),
    ("minLength", "min length"),
    ("maxLength", "max length"),
    ("minItems", "min items"),
    ("maxItems", "max items"),
    ("uniqueItems", "unique items"),
    ("minProperties", "min properties"),
    ("maxProperties", "max properties"),
    ("examples", "examples"),
    ("$ref", "reference"),
];

fn walk(schema: &Value, name: &str, required: bool, depth: usize, rows: &mut Vec<Row>) {
    if rows.len() >= MAX_ROWS {
        return;
    }
    let mut details: Vec<(&'static str, String)> = CONSTRAINTS
        .iter()
        .filter_map(|(key, label)| Some((*label, shown(schema.get(*key)?))))
        .collect();
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        details.push(("other properties", "not allowed".to_owned()));
    }
    let description = schema
        .get("description")
        .or_else(|| schema.get("title"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    rows.push(Row {
        depth,
        name: name.to_owned(),
        kind: kind(schema),
        required,
        description,
        details,
    });
    if depth >= MAX_DEPTH {
        return;
    }
    if let Some(props) = properties(schema) {
        let required = required_of(schema);
        for (child, sub) in props {
            walk(
                sub,
                &format!("{name}.{child}"),
                required.contains(&child.as_str()),
                depth + 1,
                rows,
            );
        }
    }
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        // An array of scalars says so in its type; its items get a row only when they have
        // something more to say.
        if properties(items).is_some() || has_variants(items) {
            walk(items, &format!("{name}[]"), false, depth + 1, rows);
        }
    }
    if let Some(extra) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        walk(extra, &format!("{name}.*"), false, depth + 1, rows);
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(Value::Array(variants)) = schema.get(key) {
            for (i, variant) in variants.iter().enumerate() {
                walk(
                    variant,
                    &format!("{name} ({key} {})", i + 1),
                    false,
                    depth + 1,
                    rows,
                );
            }
        }
    }
}

fn has_variants(schema: &Value) -> bool {
    ["oneOf", "anyOf", "allOf"]
        .iter()
        .any(|k| schema.get(*k).is_some())
}

/// A schema value as text: strings as they are, anything else as JSON.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(values) => values
            .iter()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

/// How the try-it form asks for a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    /// A `<select>` of the schema's values (JSON text).
    Choice,
    /// A `<select>`: unset, true, false.
    Boolean,
    /// A text box read as an integer.
    Integer,
    /// A text box read as a number.
    Number,
    /// A text box read as a string.
    Text,
    /// A text area read as JSON (objects, arrays, anything else).
    Json,
}

impl Field {
    fn of(schema: &Value) -> Self {
        if schema.get("enum").is_some_and(Value::is_array) {
            return Self::Choice;
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("boolean") => Self::Boolean,
            Some("integer") => Self::Integer,
            Some("number") => Self::Number,
            Some("string") => Self::Text,
            _ => Self::Json,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Self::Choice => "choice",
            Self::Boolean => "boolean",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Text => "string",
            Self::Json => "json",
        }
    }
}

/// The try-it form's fields: one per top-level parameter. Each carries its name and how to read
/// it (`data-name`, `data-kind`); the script builds the input from them.
pub(super) fn fields(schema: &Value) -> Markup {
    let Some(props) = properties(schema) else {
        return html! {};
    };
    let required = required_of(schema);
    html! {
        fieldset.fields {
            legend { "Parameters" }
            @if props.is_empty() { p { "This tool takes no parameters." } }
            @for (i, (name, sub)) in props.iter().enumerate() {
                @let id = format!("f-{i}");
                @let help = format!("f-{i}-help");
                @let error = format!("f-{i}-error");
                @let field = Field::of(sub);
                @let is_required = required.contains(&name.as_str());
                @let placeholder = sub.get("default").map(|d| match d { Value::String(s) => s.clone(), other => other.to_string() });
                @let description = sub.get("description").and_then(Value::as_str);
                div.field {
                    label for=(id) {
                        code { (name) }
                        " " span.type { (kind(sub)) }
                        @if is_required { " " strong.req { "required" } }
                    }
                    @match field {
                        Field::Choice | Field::Boolean => {
                            select id=(id) data-name=(name) data-kind=(field.word())
                                data-required=(is_required) aria-describedby={ (help) " " (error) } {
                                option value="" { "(not set)" }
                                @if field == Field::Boolean {
                                    option value="true" { "true" }
                                    option value="false" { "false" }
                                } @else {
                                    @for value in sub.get("enum").and_then(Value::as_array).into_iter().flatten() {
                                        option value=(value.to_string()) { (shown(value)) }
                                    }
                                }
                            }
                        }
                        Field::Json => {
                            textarea id=(id) rows="3" spellcheck="false" data-name=(name)
                                data-kind=(field.word()) data-required=(is_required)
                                placeholder=[placeholder] aria-describedby={ (help) " " (error) } {}
                        }
                        _ => {
                            input id=(id) type="text" data-name=(name) data-kind=(field.word())
                                data-required=(is_required) placeholder=[placeholder]
                                aria-describedby={ (help) " " (error) };
                        }
                    }
                    p.help id=(help) { @if let Some(d) = description { (crate::catalog::summary(d)) } }
                    p.field-error id=(error) {}
                }
            }
        }
    }
}
