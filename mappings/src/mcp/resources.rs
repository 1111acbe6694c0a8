//! An MCP server's resources as tools (`resources: tools` on the source; issue 27).
//!
//! OTC has tools only, so what an MCP host reads with `resources/list` and `resources/read` is
//! offered as up to three read-only tools in the server's toolkit:
//!
//! | tool | input | what a call does | value |
//! |---|---|---|---|
//! | `ListResources` | `{cursor?}` | `resources/list` (and, on the first page, `resources/templates/list`) | `{resources, templates, nextCursor?}` |
//! | `ReadResource` | `{uri}` | `resources/read` | `{contents: [{uri, mimeType?, text} or {uri, mimeType?, blob}]}` |
//! | `ReadResourceTemplate` | `{template, arguments?}` | expands the RFC 6570 `template` with `arguments`, then `resources/read` | as `ReadResource` |
//!
//! - Values keep MCP's own field names (`mimeType`, `uriTemplate`, `nextCursor`): a caller that
//!   knows MCP reads them as it knows them. Binary contents are MCP's `blob`, base64, with
//!   their `mimeType`; text is `text`.
//! - `ReadResource` passes any URI through: servers may read URIs they do not list, and the
//!   server decides.
//! - `ReadResourceTemplate` accepts only the templates the server listed: they are the `enum`
//!   of its `template` input (so the bridge's validator refuses another with a 422 naming the
//!   parameter), and its description lists each with its variables. A server with no templates
//!   gets no `ReadResourceTemplate`. At most [`MAX_TEMPLATES`] are taken, with a diagnostic.
//! - Names: a tool of the server whose segment is one of these (`ListResources`, …) wins, and
//!   the resource tool is skipped with a warning (see `super::may_add`).

use std::sync::Arc;

use iri_string::spec::UriSpec;
use iri_string::template::UriTemplateStr;
use iri_string::template::simple_context::{SimpleContext, Value as TemplateValue};
use rmcp::model as mcp;
use serde_json::{Map, Value, json};

use super::{McpSource, may_add, taken};
use crate::error::{Diagnostic, Mapped, Severity};
use crate::otc::Schema;
use crate::tool::{MappedTool, McpRequest};

/// The most resource templates taken from one server: each is a line of `ReadResourceTemplate`'s
/// description and a value of its `enum`, so a server listing thousands would bloat the catalog.
pub const MAX_TEMPLATES: usize = 200;

/// Adds the resource tools of one server to `mapped` (its tools, already mapped), given the
/// templates it listed. Never fails; a skipped tool or template is a diagnostic.
pub fn add_resource_tools(
    source: &McpSource<'_>,
    templates: &[mcp::ResourceTemplate],
    mapped: &mut Mapped<MappedTool>,
) {
    // The version was reported, if it had to be, when the server's tools were mapped.
    let identity = source.identity(&mut Vec::new());
    let taken = taken(&mapped.tools);
    let server = server_name(source);
    let mut templates: Vec<&mcp::ResourceTemplate> = templates.iter().collect();
    if templates.len() > MAX_TEMPLATES {
        mapped.diagnostics.push(Diagnostic::new(
            Severity::Warning,
            Some("ReadResourceTemplate"),
            None,
            format!(
                "the server lists {} resource templates; only the first {MAX_TEMPLATES} are served",
                templates.len()
            ),
        ));
        templates.truncate(MAX_TEMPLATES);
    }
    templates.retain(|t| {
        let usable = UriTemplateStr::new(&t.uri_template).is_ok();
        if !usable {
            mapped.diagnostics.push(Diagnostic::new(
                Severity::Warning,
                Some("ReadResourceTemplate"),
                None,
                format!(
                    "resource template `{}` is not an RFC 6570 URI template; it is not served",
                    t.uri_template
                ),
            ));
        }
        usable
    });
    let mut tools = vec![
        (
            "ListResources",
            list_description(&server),
            list_input(),
            list_output(),
            McpRequest::ListResources,
        ),
        (
            "ReadResource",
            read_description(&server),
            read_input(),
            contents_output(),
            McpRequest::ReadResource,
        ),
    ];
    if !templates.is_empty() {
        tools.push((
            "ReadResourceTemplate",
            template_description(&server, &templates),
            template_input(&templates),
            contents_output(),
            McpRequest::ReadResourceTemplate {
                templates: templates.iter().map(|t| t.uri_template.clone()).collect(),
            },
        ));
    }
    for (segment, description, input, output, request) in tools {
        if !may_add(&taken, segment, "resource", &mut mapped.diagnostics) {
            continue;
        }
        mapped.tools.push(identity.feature_tool(
            segment,
            description,
            Schema::new(&input),
            Schema::new(&output),
            request,
        ));
    }
}

/// How the server is named in descriptions: `serverInfo.name`, else the toolkit.
pub(crate) fn server_name(source: &McpSource<'_>) -> String {
    source
        .server_info
        .map(|info| info.name.trim())
        .filter(|name| !name.is_empty())
        .map_or_else(|| source.toolkit_segment(), str::to_owned)
}

fn list_description(server: &str) -> String {
    format!(
        "Lists the resources of the MCP server `{server}`: the documents, files and data it can \
         be asked to read, each with a `uri` for the ReadResource tool, and the URI templates \
         (`uriTemplate`) it can build resources from, for the ReadResourceTemplate tool. A long \
         list comes in pages: when the answer has `nextCursor`, call again with it as `cursor`.\n\n\
         Hints: [read-only]"
    )
}

fn read_description(server: &str) -> String {
    format!(
        "Reads one resource of the MCP server `{server}` by its URI (as ListResources gives it, \
         or any URI the server knows). Text comes as `text`; binary content as `blob`, base64, \
         with its `mimeType`.\n\nHints: [read-only]"
    )
}

fn template_description(server: &str, templates: &[&mcp::ResourceTemplate]) -> String {
    let mut text = format!(
        "Reads a resource of the MCP server `{server}` built from one of its URI templates \
         (RFC 6570): `template` is the template as listed below, `arguments` the values of its \
         variables. Text comes as `text`; binary content as `blob`, base64, with its \
         `mimeType`.\n\nTemplates:"
    );
    for template in templates {
        text.push_str(&format!("\n- `{}`", template.uri_template));
        let about = template
            .description
            .as_deref()
            .or(template.title.as_deref())
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .unwrap_or(template.name.as_str());
        text.push_str(&format!(": {about}"));
        let variables = variables(&template.uri_template);
        if !variables.is_empty() {
            text.push_str(&format!(" (variables: {})", variables.join(", ")));
        }
        if let Some(mime) = &template.mime_type {
            text.push_str(&format!(" [{mime}]"));
        }
    }
    text.push_str("\n\nHints: [read-only]");
    text
}

/// The variable names of a template, each once, in order.
fn variables(template: &str) -> Vec<String> {
    let Ok(template) = UriTemplateStr::new(template) else {
        return Vec::new();
    };
    let mut names: Vec<String> = Vec::new();
    for name in template.variables() {
        let name = name.as_str().to_owned();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

fn list_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "cursor": {
                "type": "string",
                "description": "The `nextCursor` of the previous page; omit it for the first page."
            }
        },
        "additionalProperties": false
    })
}

fn list_output() -> Value {
    let text = |description: &str| json!({"type": "string", "description": description});
    json!({
        "type": "object",
        "properties": {
            "resources": {
                "type": "array",
                "description": "The resources of this page.",
                "items": {
                    "type": "object",
                    "properties": {
                        "uri": text("The URI to read it by."),
                        "name": text("The server's name for it."),
                        "title": text("A name for people."),
                        "description": text("What it is."),
                        "mimeType": text("Its MIME type."),
                        "size": {"type": "integer", "description": "Its size in bytes, when known."}
                    },
                    "required": ["uri", "name"]
                }
            },
            "templates": {
                "type": "array",
                "description": "The URI templates resources can be built from (first page only).",
                "items": {
                    "type": "object",
                    "properties": {
                        "uriTemplate": text("The RFC 6570 template, for ReadResourceTemplate."),
                        "name": text("The server's name for it."),
                        "title": text("A name for people."),
                        "description": text("What it builds."),
                        "mimeType": text("The MIME type of what it builds, when uniform.")
                    },
                    "required": ["uriTemplate", "name"]
                }
            },
            "nextCursor": text("Present when there are more resources: pass it as `cursor`.")
        },
        "required": ["resources", "templates"]
    })
}

fn read_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "uri": {"type": "string", "description": "The URI of the resource to read."}
        },
        "required": ["uri"],
        "additionalProperties": false
    })
}

fn template_input(templates: &[&mcp::ResourceTemplate]) -> Value {
    let names: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    json!({
        "type": "object",
        "properties": {
            "template": {
                "type": "string",
                "enum": names,
                "description": "The URI template, exactly as listed in the tool's description."
            },
            "arguments": {
                "type": "object",
                "description": "The template's variables: a string (or number or boolean) each, or a list of strings for a list variable.",
                "additionalProperties": {
                    "type": ["string", "number", "boolean", "array"],
                    "items": {"type": "string"}
                }
            }
        },
        "required": ["template"],
        "additionalProperties": false
    })
}

/// The value of a read: `resources/read`'s `contents`.
fn contents_output() -> Value {
    let text = |description: &str| json!({"type": "string", "description": description});
    json!({
        "type": "object",
        "properties": {
            "contents": {
                "type": "array",
                "description": "The resource's contents (some URIs read as several parts).",
                "items": {
                    "type": "object",
                    "properties": {
                        "uri": text("The URI of this part."),
                        "mimeType": text("Its MIME type."),
                        "text": text("The content, when it is text."),
                        "blob": {
                            "type": "string",
                            "contentEncoding": "base64",
                            "description": "The content, base64, when it is binary."
                        }
                    },
                    "required": ["uri"]
                }
            }
        },
        "required": ["contents"]
    })
}

/// Why a template could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// The template is not one the server listed.
    #[error("`{template}` is not one of the server's resource templates")]
    NotListed {
        /// The template asked for.
        template: String,
    },
    /// The template is not RFC 6570.
    #[error("`{template}` is not an RFC 6570 URI template: {reason}")]
    Invalid {
        /// The template.
        template: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An argument names no variable of the template.
    #[error("`{name}` is not a variable of `{template}` (its variables: {variables})")]
    UnknownVariable {
        /// The argument.
        name: String,
        /// The template.
        template: String,
        /// The template's variables, comma-separated.
        variables: String,
    },
    /// An argument's value cannot be a template value (an object inside a list, say).
    #[error(
        "argument `{name}` must be a string, number, boolean, list of those, or an object of those"
    )]
    BadValue {
        /// The argument.
        name: String,
    },
}

/// Expands `template` (RFC 6570, up to level 4) with `arguments` into a URI. A string, number
/// or boolean is a value; a list of those a list; an object of those an associative array;
/// `null` (like a missing argument) is undefined, which RFC 6570 expands to nothing.
pub fn expand_template(
    template: &str,
    arguments: &Map<String, Value>,
) -> Result<String, TemplateError> {
    let parsed = UriTemplateStr::new(template).map_err(|e| TemplateError::Invalid {
        template: template.to_owned(),
        reason: e.to_string(),
    })?;
    let known = variables(template);
    let mut context = SimpleContext::new();
    for (name, value) in arguments {
        if !known.contains(name) {
            return Err(TemplateError::UnknownVariable {
                name: name.clone(),
                template: template.to_owned(),
                variables: known.join(", "),
            });
        }
        let bad = || TemplateError::BadValue { name: name.clone() };
        let value = match value {
            Value::Null => continue,
            Value::Array(items) => TemplateValue::List(
                items
                    .iter()
                    .map(|v| scalar(v).ok_or_else(bad))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(map) => TemplateValue::Assoc(
                map.iter()
                    .map(|(k, v)| Ok((k.clone(), scalar(v).ok_or_else(bad)?)))
                    .collect::<Result<_, TemplateError>>()?,
            ),
            other => TemplateValue::String(scalar(other).ok_or_else(bad)?),
        };
        context.insert(name.as_str(), value);
    }
    let expanded = parsed
        .expand::<UriSpec, _>(&context)
        .map_err(|e| TemplateError::Invalid {
            template: template.to_owned(),
            reason: e.to_string(),
        })?;
    Ok(expanded.to_string())
}

/// A string, number or boolean as template text.
fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The template of a `ReadResourceTemplate` call, checked against those the server listed.
pub fn listed_template<'a>(
    templates: &'a Arc<[String]>,
    asked: &str,
) -> Result<&'a str, TemplateError> {
    templates
        .iter()
        .find(|t| t.as_str() == asked)
        .map(String::as_str)
        .ok_or_else(|| TemplateError::NotListed {
            template: asked.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::Target;

    fn template(uri: &str, name: &str) -> mcp::ResourceTemplate {
        serde_json::from_value(json!({"uriTemplate": uri, "name": name})).unwrap()
    }

    fn args(value: Value) -> Map<String, Value> {
        let Value::Object(map) = value else { panic!() };
        map
    }

    #[test]
    fn templates_expand_at_every_level() {
        let expand = |t: &str, a: Value| expand_template(t, &args(a));
        assert_eq!(
            expand(
                "demo://resource/dynamic/text/{resourceId}",
                json!({"resourceId": 3})
            )
            .unwrap(),
            "demo://resource/dynamic/text/3"
        );
        // Level 1 escapes reserved characters; level 2 `+` keeps them.
        assert_eq!(
            expand("file:///{name}", json!({"name": "a b/c"})).unwrap(),
            "file:///a%20b%2Fc"
        );
        assert_eq!(
            expand("file:///{+path}", json!({"path": "a/b c"})).unwrap(),
            "file:///a/b%20c"
        );
        // Level 3: several variables, query expansion; undefined ones vanish.
        assert_eq!(
            expand(
                "x://s/search{?q,lang,page}",
                json!({"q": "rust", "page": null, "lang": "en"})
            )
            .unwrap(),
            "x://s/search?q=rust&lang=en"
        );
        // Level 4: explode and prefix modifiers, lists and maps.
        assert_eq!(
            expand(
                "x://t{/tags*}{?opts*}",
                json!({"tags": ["a", "b"], "opts": {"k": "v"}})
            )
            .unwrap(),
            "x://t/a/b?k=v"
        );
        assert_eq!(
            expand("x://{id:3}", json!({"id": "abcdef"})).unwrap(),
            "x://abc"
        );
        assert_eq!(
            expand("x://{flag}", json!({"flag": true})).unwrap(),
            "x://true"
        );
    }

    #[test]
    fn template_errors_say_what_is_wrong() {
        let err = expand_template("x://{id}", &args(json!({"ID": "1"}))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`ID` is not a variable of `x://{id}` (its variables: id)"
        );
        let err = expand_template("x://{id}", &args(json!({"id": [{"a": 1}]}))).unwrap_err();
        assert!(matches!(err, TemplateError::BadValue { name } if name == "id"));
        assert!(matches!(
            expand_template("x://{id", &Map::new()),
            Err(TemplateError::Invalid { .. })
        ));
        let listed: Arc<[String]> = vec!["x://{id}".to_owned()].into();
        assert_eq!(listed_template(&listed, "x://{id}").unwrap(), "x://{id}");
        assert!(matches!(
            listed_template(&listed, "x://{other}"),
            Err(TemplateError::NotListed { .. })
        ));
    }

    #[test]
    fn resource_tools_are_read_only_with_schemas_and_the_server_tool_wins() {
        let info = mcp::Implementation::new("mcp-servers/everything", "2.0.0");
        let source = McpSource {
            server_info: Some(&info),
            ..McpSource::default()
        };
        let server_tool = mcp::Tool::new_with_raw("list_resources", None, Arc::new(Map::new()));
        let mut mapped = super::super::map_tools(&source, &[server_tool]);
        let templates = [
            template(
                "demo://resource/dynamic/text/{resourceId}",
                "Dynamic Text Resource",
            ),
            template("demo://{broken", "Broken"),
        ];
        add_resource_tools(&source, &templates, &mut mapped);
        let ids: Vec<String> = mapped
            .tools
            .iter()
            .map(|t| t.definition.id.to_string())
            .collect();
        assert_eq!(
            ids,
            [
                "McpServersEverything.ListResources@2.0.0",
                "McpServersEverything.ReadResource@2.0.0",
                "McpServersEverything.ReadResourceTemplate@2.0.0"
            ]
        );
        // The server's own `list_resources` kept its id; the resource tool was skipped, and the
        // broken template was left out, each with a warning.
        assert!(
            matches!(&mapped.tools[0].target, Target::Named { name } if name == "list_resources")
        );
        assert_eq!(mapped.diagnostics.len(), 2, "{:?}", mapped.diagnostics);
        for added in &mapped.tools[1..] {
            assert!(!added.destructive);
            assert!(added.definition.output_schema.is_some());
        }
        let read_template = &mapped.tools[2];
        let input = read_template.definition.input_schema.to_value();
        assert_eq!(
            input["properties"]["template"]["enum"],
            json!(["demo://resource/dynamic/text/{resourceId}"])
        );
        assert!(
            read_template
                .definition
                .description
                .contains("(variables: resourceId)")
        );
        let Target::Mcp {
            request: McpRequest::ReadResourceTemplate { templates },
        } = &read_template.target
        else {
            panic!("not a template read")
        };
        assert_eq!(templates.len(), 1);
    }

    #[test]
    fn no_templates_no_template_tool() {
        let mut mapped = Mapped {
            tools: Vec::new(),
            diagnostics: Vec::new(),
        };
        add_resource_tools(&McpSource::default(), &[], &mut mapped);
        let ids: Vec<String> = mapped
            .tools
            .iter()
            .map(|t| t.definition.id.to_string())
            .collect();
        assert_eq!(ids, ["Mcp.ListResources@1.0.0", "Mcp.ReadResource@1.0.0"]);
    }
}
