//! An MCP server's prompts as tools (`prompts: tools` on the source; issue 27).
//!
//! Each prompt the server lists becomes one read-only tool, `Prompt<Name>`, whose call is
//! `prompts/get`:
//!
//! - **Id.** `Prompt` followed by the prompt's name through [`naming::segment`], the rule tool
//!   names follow (`args-prompt` → `PromptArgsPrompt`). Two prompts that give one segment are
//!   numbered in list order ([`UniqueNames`]); a prompt whose segment is a tool of the server's
//!   is skipped with a warning (the server's tool wins, see `super::may_add`).
//! - **Input.** One string property per argument (MCP prompt arguments are strings), described
//!   by the argument's description, else its title, else its name; `required` lists the
//!   arguments the server marks required. No other property is accepted.
//! - **Output.** `prompts/get`'s result: `{description?, messages: [{role, content}]}`, each
//!   `content` an MCP content block as MCP writes it (text, image, audio, resource, link).
//! - **Description.** The prompt's description (else its title, else a sentence naming it),
//!   then what the tool returns, and `Title:` when there is a title not already said.

use rmcp::model as mcp;
use serde_json::{Map, Value, json};

use super::{McpSource, may_add, taken};
use crate::error::Mapped;
use crate::naming::{self, UniqueNames};
use crate::otc::Schema;
use crate::tool::{MappedTool, McpRequest};

/// Adds one tool per prompt of the server to `mapped` (its tools, already mapped). Never fails.
pub fn add_prompt_tools(
    source: &McpSource<'_>,
    prompts: &[mcp::Prompt],
    mapped: &mut Mapped<MappedTool>,
) {
    let identity = source.identity(&mut Vec::new());
    let taken = taken(&mapped.tools);
    let server = super::resources::server_name(source);
    let output = Schema::new(&output_schema());
    let mut names = UniqueNames::default();
    for prompt in prompts {
        let wanted = format!("Prompt{}", naming::segment(&prompt.name, ""));
        let segment = names.claim(&wanted, &prompt.name, &mut mapped.diagnostics);
        if !may_add(&taken, &segment, "prompt", &mut mapped.diagnostics) {
            continue;
        }
        mapped.tools.push(identity.feature_tool(
            &segment,
            describe(&server, prompt),
            Schema::new(&input_schema(prompt)),
            output.clone(),
            McpRequest::GetPrompt {
                name: prompt.name.clone(),
            },
        ));
    }
}

/// The description in the documented form (see the module docs).
fn describe(server: &str, prompt: &mcp::Prompt) -> String {
    let trimmed = |s: &Option<String>| {
        s.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let description = trimmed(&prompt.description);
    let title = trimmed(&prompt.title);
    let body = description
        .clone()
        .or(title.clone())
        .unwrap_or_else(|| format!("The prompt `{}`.", prompt.name));
    let mut text = format!(
        "{body}\n\nGets the prompt `{}` of the MCP server `{server}`: the messages it makes from \
         the arguments, each with its role and content.",
        prompt.name
    );
    if let Some(title) = title.filter(|t| *t != body) {
        text.push_str(&format!("\n\nTitle: {title}"));
    }
    text.push_str("\nHints: [read-only]");
    text
}

/// One string property per argument; `required` from the arguments' own flag.
fn input_schema(prompt: &mcp::Prompt) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for argument in prompt.arguments.iter().flatten() {
        let description = [&argument.description, &argument.title]
            .into_iter()
            .flatten()
            .map(|s| s.trim())
            .find(|s| !s.is_empty())
            .map_or_else(
                || format!("The argument `{}`.", argument.name),
                str::to_owned,
            );
        properties.insert(
            argument.name.clone(),
            json!({"type": "string", "description": description}),
        );
        if argument.required == Some(true) {
            required.push(Value::String(argument.name.clone()));
        }
    }
    let mut schema = json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false
    });
    if !required.is_empty() {
        schema["required"] = Value::Array(required);
    }
    schema
}

/// `prompts/get`'s result.
fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "What the prompt is for."},
            "messages": {
                "type": "array",
                "description": "The prompt's messages, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "role": {
                            "type": "string",
                            "enum": ["user", "assistant"],
                            "description": "Who says it."
                        },
                        "content": {
                            "type": "object",
                            "description": "An MCP content block: `{type: \"text\", text}`, an image or audio (`data` base64 with `mimeType`), an embedded `resource`, or a `resource_link`.",
                            "properties": {
                                "type": {
                                    "type": "string",
                                    "description": "text, image, audio, resource or resource_link."
                                }
                            },
                            "required": ["type"]
                        }
                    },
                    "required": ["role", "content"]
                }
            }
        },
        "required": ["messages"]
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::tool::Target;

    fn prompt(value: Value) -> mcp::Prompt {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn prompts_become_prompt_tools_with_string_arguments() {
        let info = mcp::Implementation::new("mcp-servers/everything", "2.0.0");
        let source = McpSource {
            server_info: Some(&info),
            ..McpSource::default()
        };
        let mut mapped = Mapped {
            tools: Vec::new(),
            diagnostics: Vec::new(),
        };
        let prompts = [
            prompt(json!({
                "name": "args-prompt",
                "title": "Arguments Prompt",
                "description": "A prompt with two arguments, one required and one optional",
                "arguments": [
                    {"name": "city", "description": "Name of the city", "required": true},
                    {"name": "state", "description": "Name of the state", "required": false}
                ]
            })),
            prompt(json!({"name": "simple-prompt"})),
            prompt(json!({"name": "simple_prompt"})),
        ];
        add_prompt_tools(&source, &prompts, &mut mapped);
        let ids: Vec<String> = mapped
            .tools
            .iter()
            .map(|t| t.definition.id.to_string())
            .collect();
        assert_eq!(
            ids,
            [
                "McpServersEverything.PromptArgsPrompt@2.0.0",
                "McpServersEverything.PromptSimplePrompt@2.0.0",
                "McpServersEverything.PromptSimplePrompt_2@2.0.0"
            ]
        );
        assert_eq!(mapped.diagnostics.len(), 1, "the numbered one is reported");
        let args = &mapped.tools[0];
        assert!(!args.destructive);
        assert_eq!(
            args.definition.input_schema.to_value(),
            json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "Name of the city"},
                    "state": {"type": "string", "description": "Name of the state"}
                },
                "additionalProperties": false,
                "required": ["city"]
            })
        );
        assert!(
            args.definition
                .description
                .starts_with("A prompt with two arguments")
        );
        assert!(
            args.definition
                .description
                .contains("Title: Arguments Prompt")
        );
        assert!(matches!(
            &args.target,
            Target::Mcp { request: McpRequest::GetPrompt { name } } if name == "args-prompt"
        ));
        let simple = mapped.tools[1].definition.input_schema.to_value();
        assert_eq!(
            simple,
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
        assert!(
            mapped.tools[1]
                .definition
                .description
                .starts_with("The prompt `simple-prompt`.")
        );
    }

    #[test]
    fn a_server_tool_named_like_a_prompt_tool_wins() {
        let tool = mcp::Tool::new_with_raw("prompt_greet", None, Arc::new(Map::new()));
        let mut mapped = super::super::map_tools(&McpSource::default(), &[tool]);
        add_prompt_tools(
            &McpSource::default(),
            &[prompt(json!({"name": "greet"}))],
            &mut mapped,
        );
        assert_eq!(mapped.tools.len(), 1);
        assert!(matches!(&mapped.tools[0].target, Target::Named { .. }));
        assert!(
            mapped.diagnostics[0]
                .reason
                .contains("the server's tool is served")
        );
    }
}
