//! Fixture tools for the server tests, modelled on the spec's own examples.

use std::time::Duration;

use otc_adapters::AdapterError;
use otc_adapters::fake::FakeAdapter;
use otc_mappings::otc::{
    AuthorizationRequirement, OAuth2Requirement, SecretRequirement, ToolDefinition, ToolId,
    ToolRequirements, ToolVersion,
};
use serde_json::{Map, Value, json};

/// A definition with the given id parts and input schema.
pub fn definition(
    toolkit: &str,
    tool: &str,
    version: (u64, u64, u64),
    input_schema: Value,
) -> ToolDefinition {
    let version = ToolVersion::new(version.0, version.1, version.2);
    ToolDefinition {
        id: ToolId::exact(toolkit, tool, version),
        name: format!("{toolkit}_{tool}"),
        description: format!("{toolkit} {tool} for tests."),
        version,
        input_schema: input_schema.into(),
        output_schema: Some(json!({}).into()),
        requirements: None,
    }
}

fn add_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "a": {"type": "number", "description": "The first number."},
            "b": {"type": "number", "description": "The second number."}
        },
        "required": ["a", "b"]
    })
}

fn number(input: &Map<String, Value>, key: &str) -> f64 {
    input.get(key).and_then(Value::as_f64).unwrap_or_default()
}

/// The fixture toolkit: several versions of `Calculator.Add`, a failing doorbell, tools with
/// requirements, a slow tool and an unavailable-source toggle.
pub fn fixture_adapter() -> FakeAdapter {
    let mut gmail = definition(
        "Gmail",
        "GetEmails",
        (1, 2, 0),
        json!({"type": "object", "properties": {"query": {"type": "string", "description": "Search query."}}}),
    );
    gmail.requirements = Some(ToolRequirements {
        authorization: vec![AuthorizationRequirement {
            id: "google".to_owned(),
            oauth2: Some(OAuth2Requirement {
                scopes: vec!["https://www.googleapis.com/auth/gmail.readonly".to_owned()],
            }),
            extra: [(
                "authorization_url".to_owned(),
                json!("https://accounts.example.com/o/oauth2/auth"),
            )]
            .into_iter()
            .collect(),
        }],
        user_id: true,
        ..Default::default()
    });
    let mut sms = definition(
        "SMS",
        "Send",
        (1, 0, 0),
        json!({"type": "object", "properties": {"to": {"type": "string", "description": "Recipient."}}, "required": ["to"]}),
    );
    sms.requirements = Some(ToolRequirements {
        secrets: vec![SecretRequirement {
            id: "twilio_key".to_owned(),
        }],
        ..Default::default()
    });
    let mut ring = definition(
        "Doorbell",
        "Ring",
        (0, 1, 0),
        json!({"type": "object", "properties": {"doorbell_id": {"type": "string", "description": "Which doorbell."}}, "required": ["doorbell_id"]}),
    );
    ring.output_schema = None;

    FakeAdapter::new("fixtures")
        .tool(definition("Calculator", "Add", (1, 0, 0), add_schema()), |call| Ok(json!(number(&call.input, "a") + number(&call.input, "b"))))
        .tool(definition("Calculator", "Add", (1, 5, 0), add_schema()), |_| Ok(json!("1.5.0")))
        .tool(definition("Calculator", "Add", (2, 0, 1), add_schema()), |_| Ok(json!("2.0.1")))
        .tool(ring, |call| match call.input.get("doorbell_id").and_then(Value::as_str) {
            Some("doorbell1") => Ok(Value::Null),
            _ => Err(AdapterError::UpstreamStatus { status: 503, retry_after: Some(Duration::from_millis(1500)), body: Some("doorbell offline".to_owned()) }),
        })
        .tool(gmail, |call| Ok(json!({"emails": [], "user": call.context.user_id, "token_seen": call.context.token("google").is_some()})))
        .tool(sms, |call| Ok(json!({"sent_to": call.input.get("to"), "secret_seen": call.context.secret("twilio_key").is_some()})))
        .tool(definition("System", "Fail", (1, 0, 0), json!({"type": "object"})), |_| {
            Err(AdapterError::ToolFailed { message: "Doorbell ID not found".to_owned(), details: Some(json!({"code": 42})) })
        })
        .slow_tool(definition("System", "Sleep", (1, 0, 0), json!({"type": "object"})), Duration::from_secs(30), |_| Ok(json!("woke")))
        .tool(definition("System", "Echo", (1, 0, 0), json!({"type": "object"})), |call| Ok(Value::Object(call.input.clone())))
}
