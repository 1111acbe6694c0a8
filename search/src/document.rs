//! What of a tool is searched, field by field. Fields differ in how much a match says: a word of
//! the tool's own name says more than one of its parameters' descriptions, so each field has its
//! weight (see [`Field::weight`]) and its own length normalisation.

use indexmap::IndexMap;
use otc_mappings::{MappedTool, Target};
use serde::Deserialize;
use serde_json::Value;

use super::action::{self, Actions};
use super::tokenize::split_identifier;

/// The searched fields of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    /// The toolkit segment of the id (`GitHubV3RestApi`): queries often name the product.
    Toolkit,
    /// The tool segment of the id (`ReposGet`), and the name where it says more.
    Name,
    /// The description.
    Description,
    /// Parameter names, nested ones included (`owner`, `repo`).
    ParamNames,
    /// Parameter descriptions.
    ParamDescriptions,
    /// The literal segments of an HTTP operation's path (`/repos/{owner}/{repo}/branches` →
    /// `repos branches`): what the operation acts on, in the API's own nouns, whatever the tool
    /// is named.
    Path,
    /// The property names of the output schema (`ports`, `selector`, `fullName`): people ask
    /// for a tool by what it answers ("the name and status of pet 7").
    Output,
}

/// The number of fields.
pub(crate) const FIELDS: usize = 7;

impl Field {
    /// Every field, in index order.
    pub(crate) const ALL: [Field; FIELDS] = [
        Field::Toolkit,
        Field::Name,
        Field::Description,
        Field::ParamNames,
        Field::ParamDescriptions,
        Field::Path,
        Field::Output,
    ];

    /// Whether a match in this field is about the tool itself (its name, toolkit or
    /// description) rather than about one of its inputs; only these fully count towards a
    /// query's coverage.
    pub(crate) fn is_strong(self) -> bool {
        matches!(
            self,
            Field::Toolkit | Field::Name | Field::Description | Field::Path
        )
    }

    /// How much one occurrence of a term counts, relative to the description's.
    pub(crate) fn weight(self) -> f32 {
        match self {
            Field::Toolkit => 1.5,
            Field::Name => 3.0,
            Field::Description => 1.0,
            Field::ParamNames => 0.5,
            Field::ParamDescriptions => 0.2,
            Field::Path => PATH_WEIGHT,
            Field::Output => 0.3,
        }
    }

    /// BM25's `b`: how much a longer field than usual dilutes a match. The id segments are short
    /// and uniform, descriptions vary from nothing to pages.
    pub(crate) fn length_norm(self) -> f32 {
        match self {
            Field::Toolkit => 0.0,
            Field::Name => 0.5,
            Field::Description => 0.75,
            Field::ParamNames => 0.5,
            // Some operations take pages of parameter documentation; a match there says little.
            Field::ParamDescriptions => 0.9,
            Field::Path => 0.5,
            Field::Output => 0.5,
        }
    }
}

/// How deep nested object properties are read, and how many properties at most: a tool with
/// a huge input schema is still indexed by its name and description first.
const MAX_DEPTH: usize = 2;
const MAX_PROPERTIES: usize = 64;

/// A tool's text, field by field, and what it does.
pub(crate) struct Document {
    pub(crate) texts: Vec<(Field, String)>,
    pub(crate) actions: Actions,
    /// Whether the tool says it is deprecated (see [`is_deprecated`]).
    pub(crate) deprecated: bool,
}

impl Document {
    /// Reads the searched text of `tool`.
    pub(crate) fn of(mapped: &MappedTool) -> Self {
        let tool = &mapped.definition;
        let mut texts = vec![
            (Field::Toolkit, tool.id.toolkit.clone()),
            (Field::Name, tool.id.tool.clone()),
            (Field::Description, tool.description.clone()),
        ];
        // The name is `Toolkit_Tool` unless it was cut to 64 characters; only then does it add
        // anything.
        if tool.name != format!("{}_{}", tool.id.toolkit, tool.id.tool) {
            texts.push((Field::Name, tool.name.clone()));
        }
        let (names, descriptions) = parameters(tool.input_schema.as_str());
        texts.push((Field::ParamNames, names));
        texts.push((Field::ParamDescriptions, descriptions));
        let operation = match &mapped.target {
            Target::Http(plan) => Some((plan.method.as_str(), plan.path.as_str())),
            Target::Named { .. } | Target::Mcp { .. } => None,
        };
        if let Some(output) = &tool.output_schema {
            texts.push((Field::Output, parameters(output.as_str()).0));
        }
        if let Some((_, path)) = operation {
            texts.push((Field::Path, path_literals(path)));
        }
        let actions = action::of_tool(operation, split_identifier(&tool.id.tool));
        let deprecated = is_deprecated(&tool.description);
        Self {
            texts,
            actions,
            deprecated,
        }
    }
}

/// Whether a description says its operation is deprecated: a sentence of it opens with
/// "deprecated" (the OpenAPI mapper writes "Deprecated." first for `deprecated: true`; others
/// write "deprecated: use … instead"). A parameter's deprecation, said inside a sentence, is not
/// the operation's.
pub(crate) fn is_deprecated(description: &str) -> bool {
    description
        .split(['.', '!', '?', '\n'])
        .map(|sentence| sentence.trim_start_matches(|c: char| !c.is_alphanumeric()))
        .any(|sentence| {
            sentence
                .get(..10)
                .is_some_and(|start| start.eq_ignore_ascii_case("deprecated"))
                && !sentence[10..].starts_with(|c: char| c.is_alphanumeric())
        })
}

/// The literal segments of a path template (`/tags/{tagId}.json` → `tags json`), parameters
/// left out.
pub(crate) fn path_literals(path: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for c in path.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(if c.is_alphanumeric() { c } else { ' ' }),
            _ => {}
        }
    }
    out
}

/// How much a path segment counts: as a description word. A path's nouns are often the name's
/// too, so more would count the same evidence twice; it matters where the name says little
/// (`GetInline`) or where the API's nouns differ from the operation id's.
const PATH_WEIGHT: f32 = 1.0;

/// The property names and descriptions of an input schema, two levels deep. Read into
/// [`Shape`] first, which skips everything else without building it (most of a catalog's bytes
/// are schemas, so this is most of the build time); a schema of another shape is read as a
/// whole value instead, and one that is not JSON (no mapper makes one) has no parameters.
fn parameters(schema: &str) -> (String, String) {
    let mut names = String::new();
    let mut descriptions = String::new();
    let mut budget = MAX_PROPERTIES;
    if let Ok(shape) = serde_json::from_str::<Shape>(schema) {
        shape.collect(0, &mut budget, &mut names, &mut descriptions);
    } else if let Ok(value) = serde_json::from_str::<Value>(schema) {
        properties(&value, 0, &mut budget, &mut names, &mut descriptions);
    }
    (names, descriptions)
}

/// The parts of a schema that are searched; the rest is skipped while parsing.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Shape {
    description: Option<String>,
    /// Allowed values say what a tool filters by (`status`: `pending`, `sold`).
    #[serde(rename = "enum")]
    allowed: Vec<Value>,
    properties: IndexMap<String, Shape>,
    items: Option<Box<Shape>>,
}

impl Shape {
    fn collect(
        &self,
        depth: usize,
        budget: &mut usize,
        names: &mut String,
        descriptions: &mut String,
    ) {
        if depth >= MAX_DEPTH {
            return;
        }
        for (name, prop) in &self.properties {
            if *budget == 0 {
                return;
            }
            *budget -= 1;
            names.push_str(name);
            names.push(' ');
            if let Some(text) = &prop.description {
                descriptions.push_str(text);
                descriptions.push('\n');
            }
            push_allowed(&prop.allowed, descriptions);
            prop.collect(depth + 1, budget, names, descriptions);
        }
        if let Some(items) = &self.items {
            items.collect(depth, budget, names, descriptions);
        }
    }
}

/// Appends the property names and descriptions of `schema` (objects, array items and
/// `allOf`/`anyOf`/`oneOf` branches), down to `MAX_DEPTH` levels of properties.
fn properties(
    schema: &Value,
    depth: usize,
    budget: &mut usize,
    names: &mut String,
    descriptions: &mut String,
) {
    if depth >= MAX_DEPTH || *budget == 0 {
        return;
    }
    let Some(object) = schema.as_object() else {
        return;
    };
    if let Some(Value::Object(props)) = object.get("properties") {
        for (name, prop) in props {
            if *budget == 0 {
                return;
            }
            *budget -= 1;
            names.push_str(name);
            names.push(' ');
            if let Some(Value::String(text)) = prop.get("description") {
                descriptions.push_str(text);
                descriptions.push('\n');
            }
            if let Some(Value::Array(allowed)) = prop.get("enum") {
                push_allowed(allowed, descriptions);
            }
            properties(prop, depth + 1, budget, names, descriptions);
        }
    }
    if let Some(items) = object.get("items") {
        properties(items, depth, budget, names, descriptions);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = object.get(key) {
            for branch in branches {
                properties(branch, depth, budget, names, descriptions);
            }
        }
    }
}

/// How many of a parameter's allowed values are read: a long enum (every country, every
/// currency) would drown the parameter's description.
const MAX_ALLOWED: usize = 12;

/// Appends a parameter's allowed string values to its description text.
fn push_allowed(allowed: &[Value], descriptions: &mut String) {
    if allowed.len() > MAX_ALLOWED {
        return;
    }
    for value in allowed {
        if let Value::String(text) = value {
            descriptions.push_str(text);
            descriptions.push(' ');
        }
    }
    if !allowed.is_empty() {
        descriptions.push('\n');
    }
}
