//! The demo MCP server: its tool logic directly, then a real rmcp client talking to it over an
//! in-memory duplex, with the listed tools run through the bridge's own MCP mapper.

use otc_mappings::mcp::{McpSource, map_tools};
use otc_mappings::{MappedTool, Severity};
use rmcp::model as mcp;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use super::*;

#[test]
fn counts_words_characters_and_lines() {
    let count = count_words("The cat saw the dog.\nThe END");
    assert_eq!(
        (
            count.words,
            count.unique_words,
            count.characters,
            count.lines
        ),
        (7, 5, 28, 2)
    );
    let empty = count_words("");
    assert_eq!(
        (
            empty.words,
            empty.unique_words,
            empty.characters,
            empty.lines
        ),
        (0, 0, 0, 0)
    );
    let spaced = count_words("  héllo   wörld \n");
    assert_eq!((spaced.words, spaced.characters, spaced.lines), (2, 17, 1));
}

#[test]
fn dice_stay_in_range_and_repeat_with_a_seed() {
    let args = |sides, count, seed| RollDiceArgs { sides, count, seed };
    let roll = roll_dice(&args(6, 20, Some(7))).unwrap();
    assert_eq!(roll.rolls.len(), 20);
    assert!(
        roll.rolls.iter().all(|r| (1..=6).contains(r)),
        "{:?}",
        roll.rolls
    );
    assert_eq!(
        roll.total,
        roll.rolls.iter().map(|&r| u64::from(r)).sum::<u64>()
    );
    assert_eq!(roll_dice(&args(6, 20, Some(7))).unwrap().rolls, roll.rolls);
    // 20 dice alike by chance has odds 6^-19: a generator stuck on one value fails here.
    assert!(
        roll.rolls.iter().any(|&r| r != roll.rolls[0]),
        "{:?}",
        roll.rolls
    );
    let two_sided = roll_dice(&args(2, 20, None)).unwrap();
    assert!(two_sided.rolls.iter().all(|r| (1..=2).contains(r)));
    for (sides, count) in [(1, 1), (101, 1), (6, 0), (6, 21)] {
        let err = roll_dice(&args(sides, count, None)).unwrap_err();
        assert_eq!(err.code, mcp::ErrorCode::INVALID_PARAMS, "{sides} {count}");
    }
}

#[test]
fn divide_reports_zero_and_overflow_as_tool_errors() {
    let args = |dividend, divisor| DivideArgs { dividend, divisor };
    assert_eq!(divide(&args(7.0, 2.0)).unwrap().quotient, 3.5);
    assert!(divide(&args(1.0, 0.0)).unwrap_err().contains("zero"));
    assert!(divide(&args(1e308, 1e-308)).is_err());
}

async fn connected() -> RunningService<RoleClient, ()> {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let server = DemoTools::new().serve(server_io).await?;
        server.waiting().await?;
        anyhow::Ok(())
    });
    ().serve(client_io).await.unwrap()
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    name: &'static str,
    args: Value,
) -> mcp::CallToolResult {
    let arguments = args.as_object().unwrap().clone();
    client
        .call_tool(mcp::CallToolRequestParams::new(name).with_arguments(arguments))
        .await
        .unwrap()
}

fn text(result: &mcp::CallToolResult) -> &str {
    result.content[0].as_text().unwrap().text.as_str()
}

#[tokio::test]
async fn introduces_itself_and_lists_four_tools() {
    let client = connected().await;
    let info = client.peer_info().unwrap();
    let server = info.server_info.as_ref().unwrap();
    assert_eq!(
        (server.name.as_str(), server.version.as_str()),
        (SERVER_NAME, SERVER_VERSION)
    );
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(names, ["divide", "echo", "roll_dice", "word_count"]);
    for tool in &tools {
        assert!(
            tool.description.as_deref().is_some_and(|d| !d.is_empty()),
            "{}",
            tool.name
        );
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn answers_calls_over_the_protocol() {
    let client = connected().await;

    let counted = call(&client, "word_count", json!({"text": "one two two"})).await;
    assert_eq!(counted.is_error, Some(false));
    assert_eq!(
        counted.structured_content,
        Some(json!({"words": 3, "unique_words": 2, "characters": 11, "lines": 1}))
    );

    let rolled = call(&client, "roll_dice", json!({"count": 3, "seed": 42})).await;
    let value = rolled.structured_content.unwrap();
    assert_eq!(
        value["rolls"].as_array().unwrap().len(),
        3,
        "sides defaults to 6"
    );

    let echoed = call(&client, "echo", json!({"message": "hello"})).await;
    assert_eq!(text(&echoed), "hello");

    let failed = call(&client, "divide", json!({"dividend": 1, "divisor": 0})).await;
    assert_eq!(failed.is_error, Some(true));
    assert!(text(&failed).contains("zero"), "{failed:?}");

    let wrong = client
        .call_tool(
            mcp::CallToolRequestParams::new("roll_dice")
                .with_arguments(json!({"sides": 1000}).as_object().unwrap().clone()),
        )
        .await
        .unwrap_err();
    assert!(wrong.to_string().contains("sides"), "{wrong}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn maps_to_described_tools_without_warnings() {
    let client = connected().await;
    let info = client.peer_info().unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let source = McpSource {
        server_info: info.server_info.as_ref(),
        ..McpSource::default()
    };
    let mapped = map_tools(&source, &tools);
    let complaints: Vec<_> = mapped
        .diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Info)
        .collect();
    assert!(complaints.is_empty(), "{complaints:#?}");
    let find = |name: &str| -> &MappedTool {
        mapped
            .tools
            .iter()
            .find(|t| t.definition.name == name)
            .unwrap()
    };
    let dice = &find("DemoTools_RollDice").definition;
    assert_eq!(dice.id.to_string(), "DemoTools.RollDice@1.0.0");
    let input = dice.input_schema.to_value();
    let sides = &input["properties"]["sides"];
    assert_eq!(
        (&sides["minimum"], &sides["maximum"], &sides["default"]),
        (&json!(2), &json!(100), &json!(6))
    );
    let words = &find("DemoTools_WordCount").definition;
    let output = words.output_schema.as_ref().unwrap().to_value();
    assert_eq!(output["properties"]["words"]["type"], "integer");
    for tool in &mapped.tools {
        let schema = tool.definition.input_schema.to_string();
        assert!(
            !schema.contains("$ref") && !schema.contains("$defs"),
            "{schema}"
        );
    }
    client.cancel().await.unwrap();
}
