//! Projections: a tool's result reshaped by a jq program, run by jaq, bounded in time and size.
//!
//! A [`Projection`] is compiled once, at configuration load ([`Projection::compile`]), and run on
//! each result ([`Projection::run`]). A program's outputs become one value: **one output is that
//! value, several outputs are an array of them in order, no output is `null`**. A program that
//! should always give an array says so with `[…]` (`[.[] | {number}]` rather than
//! `.[] | {number}`, which gives a bare object when the result holds one item).
//!
//! [`Projection::output_schema`] derives the served output schema from the upstream's where the
//! program is in a small subset (see `schema.rs`), and drops it otherwise.
//!
//! # Hostile programs
//!
//! A projection's program comes from configuration, and the bridge runs it on the call path with
//! secrets in its environment, so every program is refused or bounded, and none can leave a thread
//! or a CPU spinning. Nothing runs on another thread: [`Projection::run`] returns within its
//! budget because the evaluation itself stops. What is done, and how:
//!
//! **Refused at compile time** (by `check.rs`, a walk over the parsed program, before jaq
//! compiles it):
//! - reading the environment (`env`, `$ENV`), further inputs (`input`, `inputs`), stopping the
//!   process (`halt`, `halt_error`) or writing to its log (`debug`, `stderr`): the bridge's
//!   environment holds secrets, and its process and log are not the program's; the natives behind
//!   `env`, `halt` and the log are also left out of the compiled program, so no definition of the
//!   standard library reaches them either;
//! - recursion: a call from a definition's body to itself (directly or through a definition
//!   nested in it); jq's only way to loop without end, and a non-tail recursion would overflow the
//!   stack;
//! - the standard library's unbounded generators `repeat`, `while`, `until`, `recurse(f)` and
//!   `recurse(f; cond)` (`..` and `recurse` walk a value and end);
//! - names starting with `__otc` (reserved for what the rewrite below inserts);
//! - programs longer than [`MAX_PROGRAM_BYTES`] or nested deeper than [`MAX_PROGRAM_NESTING`]
//!   brackets (jaq's parser is recursive).
//!
//! **Bounded at run time**, by a meter (fuel, a deadline and a size limit, [`Limits`]) carried in
//! jaq's global data and read by two natives the program is rewritten to call:
//! - every output of every compound term of the program that can build a value (calls, arrays,
//!   objects, operators, interpolated strings, `reduce`/`foreach`) passes through `__otc_tick`,
//!   which charges one unit of fuel plus the size of the value (its nodes and string bytes,
//!   walked only as far as the fuel left and never deeper than [`MAX_VALUE_DEPTH`]) and checks
//!   the deadline; every output of a path or `..`, which only picks parts of values already
//!   charged (or of the result), passes through `__otc_step`, which charges one unit. The
//!   standard library's definitions are rewritten the same way for what they build and for each
//!   step of their `reduce`/`foreach` (not for their calls, which jaq runs as tail calls).
//!   So a generator that runs on (`range(1e18)`, `last(range(1e18))`,
//!   `reduce range(1e12) as $x (0; .+1)`) stops at the deadline; a value that doubles
//!   (`[.,.] | [.[],.[]] | …`) stops when its size passes the fuel, so no value the program
//!   builds is ever larger than the fuel, and the operations that walk a value (comparison,
//!   `tostring`, `sort`) are bounded by that;
//! - `a * b` (and `*=`) goes through `__otc_mul`, which refuses a repeated string longer than
//!   the output budget before building it (`"x" * 1e9`);
//! - outputs are converted to JSON as they come, their sizes added up against the output budget.
//!
//! When the meter runs out it answers with a `halt` exception, the one kind `try`/`catch` and
//! `?` cannot catch, and stays out, so the whole evaluation unwinds and [`Projection::run`]
//! returns [`ProjectionError::Exhausted`].
//!
//! **Residual risk.** One native call of jaq's standard library is not interrupted: its cost is
//! bounded by the size of its input (at most the fuel for values the program built, the size of
//! the result for the result itself), not by the deadline. Sorting or printing a value near the
//! fuel limit may take a few times the time budget.

mod check;
mod meter;
pub mod schema;
mod value;

use std::time::Duration;

use jaq_core::load::{Arena, File, Loader, lex, parse};
use jaq_core::{Ctx, Vars};
use serde_json::Value;
use thiserror::Error;

pub use meter::Exhaustion;
pub use schema::SchemaOutcome;

use meter::{Meter, Run, RunData};

/// The longest program accepted, in bytes.
pub const MAX_PROGRAM_BYTES: usize = 16 * 1024;
/// The deepest bracket nesting accepted in a program.
pub const MAX_PROGRAM_NESTING: usize = 64;
/// The deepest nesting of a value a program may build (or a result may hold).
pub const MAX_VALUE_DEPTH: usize = 256;

/// How far one run of a projection may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time for one run.
    pub time: Duration,
    /// The size of the outputs, in bytes of their compact JSON, added up; also the longest
    /// string `*` may build.
    pub output_bytes: usize,
    /// Fuel: units of work for one run (one per output of a term, plus the size of each value
    /// it produced, in nodes and string bytes).
    pub fuel: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            time: Duration::from_millis(100),
            output_bytes: 16 * 1024 * 1024,
            fuel: 64 * 1024 * 1024,
        }
    }
}

/// Why a program cannot be compiled or run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ProjectionError {
    /// The program does not parse.
    #[error("jq syntax error at {at}: expected {expected}, found `{found}`")]
    Syntax {
        /// Where, as `line L, column C (byte B)`.
        at: Position,
        /// What the parser expected.
        expected: String,
        /// What it found (empty at the end of the program).
        found: String,
    },
    /// The program uses a name that is not defined.
    #[error("jq compile error at {at}: undefined {kind} `{name}`")]
    Undefined {
        /// Where.
        at: Position,
        /// `filter`, `variable`, …
        kind: String,
        /// The name, with its arity for filters (`name/1`).
        name: String,
    },
    /// The program uses something projections refuse.
    #[error("jq program refused at {at}: {reason}")]
    Refused {
        /// Where.
        at: Position,
        /// What and why.
        reason: String,
    },
    /// The program raised an error while running.
    #[error("jq error: {message}")]
    Runtime {
        /// The error, as jq writes it.
        message: String,
    },
    /// The run went past one of its [`Limits`].
    #[error("jq program stopped: {0}")]
    Exhausted(Exhaustion),
}

/// A place in a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// Byte offset.
    pub byte: usize,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

impl Position {
    /// The position of byte `byte` of `code`.
    fn of(code: &str, byte: usize) -> Self {
        let before = code.get(..byte).unwrap_or(code);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Self { byte, line, column }
    }

    /// The position of `part`, a slice of `code` (or the end of `code` when it is not one).
    fn of_slice(code: &str, part: &str) -> Self {
        let start = code.as_ptr() as usize;
        let at = part.as_ptr() as usize;
        let byte = if at >= start && at <= start + code.len() {
            at - start
        } else {
            code.len()
        };
        Self::of(code, byte)
    }
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}, column {} (byte {})",
            self.line, self.column, self.byte
        )
    }
}

/// A compiled projection.
pub struct Projection {
    filter: jaq_core::Filter<Run>,
    limits: Limits,
    shape: Result<schema::Shape, String>,
    program: String,
}

impl std::fmt::Debug for Projection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Projection")
            .field("program", &self.program)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// The name the rewritten program is defined under in the prelude.
const MAIN: &str = "__otc_main";

impl Projection {
    /// Parses, checks, rewrites and compiles `program`.
    pub fn compile(program: &str, limits: Limits) -> Result<Self, ProjectionError> {
        check::size(program)?;
        let tokens = lex::Lexer::new(program).lex().map_err(|errors| {
            let (expected, found) = match errors.into_iter().next() {
                Some((expected, found)) => (expected.as_str().to_owned(), found),
                None => ("a token".to_owned(), &program[program.len()..]),
            };
            ProjectionError::Syntax {
                at: Position::of_slice(program, found),
                expected,
                found: found.chars().take(20).collect(),
            }
        })?;
        let term = parse::Parser::new(&tokens)
            .parse(|p| p.term())
            .map_err(|errors| {
                let first = errors.into_iter().next();
                let (expected, found) = match first {
                    Some((expected, token)) => (
                        expected.as_str().to_owned(),
                        lex::Token::opt_as_str(token, program),
                    ),
                    None => ("a term".to_owned(), &program[program.len()..]),
                };
                ProjectionError::Syntax {
                    at: Position::of_slice(program, found),
                    expected,
                    found: found.chars().take(20).collect(),
                }
            })?;
        check::program(&term).map_err(|refusal| ProjectionError::Refused {
            at: Position::of_slice(program, refusal.at),
            reason: refusal.reason,
        })?;
        let shape = schema::Shape::of(&term);
        let body = check::rewrite(term);

        let main = parse::Def {
            name: MAIN,
            args: Vec::new(),
            body,
        };
        let prelude = meter::defs().chain([main]);
        let arena = Arena::default();
        let modules = Loader::new(prelude)
            .load(
                &arena,
                File {
                    code: MAIN,
                    path: (),
                },
            )
            .map_err(|_| ProjectionError::Runtime {
                message: "the program could not be loaded".to_owned(),
            })?;
        let filter = jaq_core::Compiler::default()
            .with_funs(meter::funs())
            .compile(modules)
            .map_err(|errors| {
                let first = errors.into_iter().flat_map(|(_file, errs)| errs).next();
                match first {
                    Some((name, undefined)) => {
                        let name_arity = match undefined {
                            jaq_core::compile::Undefined::Filter(arity) => {
                                format!("{name}/{arity}")
                            }
                            _ => name.to_owned(),
                        };
                        ProjectionError::Undefined {
                            at: Position::of_slice(program, name),
                            kind: undefined.as_str().to_owned(),
                            name: name_arity,
                        }
                    }
                    None => ProjectionError::Runtime {
                        message: "the program could not be compiled".to_owned(),
                    },
                }
            })?;
        Ok(Self {
            filter,
            limits,
            shape,
            program: program.to_owned(),
        })
    }

    /// The program's text.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The limits each run has.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Runs the program on `value`: one output is returned as it is, several as an array of
    /// them, none as `null`.
    pub fn run(&self, value: Value) -> Result<Value, ProjectionError> {
        let meter = Meter::new(self.limits);
        let input = value::to_jaq(value);
        let data = RunData {
            lut: &self.filter.lut,
            meter: &meter,
        };
        let ctx = Ctx::<Run>::new(data, Vars::new([]));
        let mut outputs = Vec::new();
        let mut written = 0usize;
        for output in self.filter.id.run((ctx, input)) {
            if let Some(exhaustion) = meter.exhausted() {
                return Err(ProjectionError::Exhausted(exhaustion));
            }
            match output {
                Ok(v) => {
                    let room = self.limits.output_bytes.saturating_sub(written);
                    let (json, size) =
                        value::from_jaq(&v, room, &meter).map_err(ProjectionError::Exhausted)?;
                    written += size;
                    outputs.push(json);
                }
                Err(exn) => {
                    return Err(match exn.get_err() {
                        Ok(error) => ProjectionError::Runtime {
                            message: error.to_string(),
                        },
                        // Only the meter halts: `halt` is refused and its native left out.
                        Err(_) => ProjectionError::Exhausted(
                            meter.exhausted().unwrap_or(Exhaustion::Fuel),
                        ),
                    });
                }
            }
        }
        Ok(match outputs.len() {
            0 => Value::Null,
            1 => outputs.pop().unwrap_or_default(),
            _ => Value::Array(outputs),
        })
    }

    /// The served output schema: derived from `upstream_output` where the program is in the
    /// subset `schema.rs` documents, else dropped with the reason.
    pub fn output_schema(&self, upstream_output: Option<&Value>) -> SchemaOutcome {
        match &self.shape {
            Err(reason) => SchemaOutcome::Dropped {
                reason: reason.clone(),
            },
            Ok(shape) => match upstream_output {
                None => SchemaOutcome::Dropped {
                    reason: "the upstream declares no output schema".to_owned(),
                },
                Some(upstream) => shape.schema(upstream),
            },
        }
    }
}
