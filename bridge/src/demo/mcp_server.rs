//! The demo's MCP upstream: "demo-tools" 1.0.0, a server built on rmcp's server role with four
//! small tools, served over stdio by the hidden `otc-bridge demo-mcp-server` command.
//!
//! | tool | shows |
//! |---|---|
//! | `word_count` | an `outputSchema`; the answer is `structuredContent` |
//! | `roll_dice` | integer bounds and defaults; an optional `seed` makes the rolls repeatable |
//! | `echo` | the simplest call: one text block, which the bridge returns as a string |
//! | `divide` | `isError: true` for a divisor of 0, which the bridge turns into a tool error |
//!
//! The schemas are derived with schemars from the argument types below, so the field docs are
//! what a model reads. In stdio mode stdout carries JSON-RPC only: nothing here prints, and the
//! caller must send logs to stderr.

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};

use anyhow::Context as _;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ErrorData, Json, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The server's `serverInfo.name`, which becomes the toolkit `DemoTools` in tool ids. (The
/// `#[tool_handler]` attribute below needs literals; the tests check they agree.)
#[cfg(test)]
pub(crate) const SERVER_NAME: &str = "demo-tools";
/// The server's `serverInfo.version`: the tools' version.
#[cfg(test)]
pub(crate) const SERVER_VERSION: &str = "1.0.0";

const MIN_SIDES: u32 = 2;
const MAX_SIDES: u32 = 100;
const MAX_DICE: u32 = 20;

/// Serves the demo tools on stdin/stdout until the client closes stdin.
pub(crate) async fn serve_stdio() -> anyhow::Result<()> {
    let service = DemoTools::new()
        .serve(rmcp::transport::stdio())
        .await
        .context("cannot start the demo MCP server on stdio")?;
    service
        .waiting()
        .await
        .context("the demo MCP server stopped abnormally")?;
    Ok(())
}

/// The demo server's handler, to serve over any rmcp transport (stdio in the demo, an in-memory
/// duplex in tests).
#[derive(Debug, Clone)]
pub(crate) struct DemoTools {
    tool_router: ToolRouter<Self>,
}

impl Default for DemoTools {
    fn default() -> Self {
        Self::new()
    }
}

/// Arguments of `word_count`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct WordCountArgs {
    /// The text to count.
    pub(crate) text: String,
}

/// Result of `word_count`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct WordCount {
    /// Words: runs of characters between whitespace.
    pub(crate) words: usize,
    /// Distinct words, ignoring case and surrounding punctuation.
    pub(crate) unique_words: usize,
    /// Characters (Unicode scalar values), whitespace included.
    pub(crate) characters: usize,
    /// Lines; an empty text has none.
    pub(crate) lines: usize,
}

/// Arguments of `roll_dice`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct RollDiceArgs {
    /// Faces on each die.
    #[serde(default = "default_sides")]
    #[schemars(range(min = 2, max = 100))]
    pub(crate) sides: u32,
    /// How many dice to roll.
    #[serde(default = "default_count")]
    #[schemars(range(min = 1, max = 20))]
    pub(crate) count: u32,
    /// Give the same seed to get the same rolls again; leave it out for fresh ones.
    #[serde(default)]
    pub(crate) seed: Option<u64>,
}

fn default_sides() -> u32 {
    6
}

fn default_count() -> u32 {
    1
}

/// Result of `roll_dice`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct DiceRoll {
    /// Each die's face, in the order rolled.
    pub(crate) rolls: Vec<u32>,
    /// The sum of the faces.
    pub(crate) total: u64,
}

/// Arguments of `echo`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct EchoArgs {
    /// What to send back.
    pub(crate) message: String,
}

/// Arguments of `divide`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct DivideArgs {
    /// The number to divide.
    pub(crate) dividend: f64,
    /// The number to divide by; must not be 0.
    pub(crate) divisor: f64,
}

/// Result of `divide`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Quotient {
    /// `dividend / divisor`.
    pub(crate) quotient: f64,
}

#[tool_router(router = tool_router)]
impl DemoTools {
    /// A server with the four demo tools.
    pub(crate) fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    /// Counts words, distinct words, characters and lines.
    #[tool(
        description = "Counts the words, distinct words, characters and lines of a text.",
        annotations(title = "Word count", read_only_hint = true, idempotent_hint = true)
    )]
    pub(crate) async fn word_count(
        &self,
        Parameters(args): Parameters<WordCountArgs>,
    ) -> Json<WordCount> {
        Json(count_words(&args.text))
    }

    /// Rolls dice; out-of-range arguments are invalid params (the schema says the bounds).
    #[tool(
        description = "Rolls `count` dice with `sides` faces each and adds them up.",
        annotations(title = "Roll dice", read_only_hint = true, open_world_hint = false)
    )]
    pub(crate) async fn roll_dice(
        &self,
        Parameters(args): Parameters<RollDiceArgs>,
    ) -> Result<Json<DiceRoll>, ErrorData> {
        roll_dice(&args).map(Json)
    }

    /// Sends the message back unchanged.
    #[tool(
        description = "Returns the message unchanged.",
        annotations(title = "Echo", read_only_hint = true, idempotent_hint = true)
    )]
    pub(crate) async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
        args.message
    }

    /// Divides; a zero divisor is a tool error (`isError: true`), not a protocol error, so the
    /// model sees why and can try again.
    #[tool(
        description = "Divides `dividend` by `divisor`. Dividing by 0 is reported as a tool error.",
        annotations(title = "Divide", read_only_hint = true, idempotent_hint = true)
    )]
    pub(crate) async fn divide(
        &self,
        Parameters(args): Parameters<DivideArgs>,
    ) -> Result<Json<Quotient>, String> {
        divide(&args).map(Json)
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "demo-tools",
    version = "1.0.0",
    instructions = "Small tools for trying otc-bridge: word_count, roll_dice, echo and divide."
)]
impl ServerHandler for DemoTools {}

fn count_words(text: &str) -> WordCount {
    let words: Vec<&str> = text.split_whitespace().collect();
    let unique: HashSet<String> = words
        .iter()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    WordCount {
        words: words.len(),
        unique_words: unique.len(),
        characters: text.chars().count(),
        lines: text.lines().count(),
    }
}

fn roll_dice(args: &RollDiceArgs) -> Result<DiceRoll, ErrorData> {
    if !(MIN_SIDES..=MAX_SIDES).contains(&args.sides) {
        return Err(ErrorData::invalid_params(
            format!(
                "sides must be between {MIN_SIDES} and {MAX_SIDES}, not {}",
                args.sides
            ),
            None,
        ));
    }
    if !(1..=MAX_DICE).contains(&args.count) {
        return Err(ErrorData::invalid_params(
            format!("count must be between 1 and {MAX_DICE}, not {}", args.count),
            None,
        ));
    }
    // std has no random numbers, but every RandomState is freshly keyed: hashing nothing with
    // one gives a seed that differs from call to call, with no extra dependency.
    let mut state = args.seed.unwrap_or_else(|| RandomState::new().hash_one(()));
    let rolls: Vec<u32> = (0..args.count)
        .map(|_| {
            // The modulo bias is below 1e-17 for at most 100 sides: irrelevant for dice.
            let face = splitmix64(&mut state) % u64::from(args.sides);
            u32::try_from(face).unwrap_or(0) + 1
        })
        .collect();
    let total = rolls.iter().map(|&r| u64::from(r)).sum();
    Ok(DiceRoll { rolls, total })
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, well-mixed generator, plenty for dice.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn divide(args: &DivideArgs) -> Result<Quotient, String> {
    if args.divisor == 0.0 {
        return Err("Cannot divide by zero: give a divisor other than 0.".to_owned());
    }
    let quotient = args.dividend / args.divisor;
    if !quotient.is_finite() {
        return Err(format!(
            "{} / {} is too large to represent as a number.",
            args.dividend, args.divisor
        ));
    }
    Ok(Quotient { quotient })
}

#[cfg(test)]
#[path = "mcp_server_tests.rs"]
mod tests;
