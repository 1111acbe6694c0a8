//! OpenAPI → OTC: documents (Swagger 2.0, OpenAPI 3.0, 3.1) become tools and request plans.
//!
//! The pipeline of [`map_document`], one module per step:
//! 1. `crate::text`: parse JSON or YAML; `load`: detect the version (the only module that knows versions);
//! 2. `refs`: bundle external `$ref`s into the document through the caller's [`RefFetcher`], so
//!    everything after this step resolves local references only;
//! 3. `load`: bring Swagger 2.0 into the OpenAPI 3.x shape;
//! 4. `operation` (with `params`, `body`, `response`, `security`, `servers`, `schema`): each
//!    operation becomes a [`MappedTool`] with its [`RequestPlan`], or a `Skipped` diagnostic.
//!
//! All schemas of a document are inlined by one `crate::schema::Inliner`, whose memo makes a type
//! used a thousand times (GitHub's `simple-user`) cost one expansion plus copies.

mod body;
mod load;
mod operation;
mod params;
mod refs;
mod response;
mod schema;
mod security;
mod servers;

use std::collections::BTreeSet;

use serde_json::Value;

pub use crate::plan::{
    BodyKind, BodyPlan, BodySource, CredentialPlacement, CredentialSource, CredentialUse,
    ParamLocation, ParamPlan, ParamStyle, RequestPlan,
};
pub use operation::is_destructive;
pub use refs::{FetchError, NoFetch, RefFetcher};

use crate::error::{Diagnostic, Mapped, MappingError, Severity};
use crate::naming::{UniqueNames, normalize_version, segment, version_or_default};
use crate::otc::{Interner, ToolDefinition};
use crate::pointer;
use crate::schema::{Inliner, document_budget};
use crate::tool::MappedTool;
use operation::{DocContext, Operation, map_operation};

/// How a document is translated.
#[derive(Debug, Clone, Default)]
pub struct MapOptions {
    /// Configured toolkit name (else `info.title`).
    pub toolkit: Option<String>,
    /// Configured version (else `info.version`), normalised with `naming::normalize_version`.
    pub version: Option<String>,
    /// Where the document came from (an absolute file path, or a URL): relative `$ref`s and
    /// relative server URLs resolve against it. A relative path cannot be resolved against (the
    /// mapper does no I/O, so it does not know the working directory); its relative `$ref`s are
    /// reported and left unbundled.
    pub base_uri: Option<String>,
    /// Follow http(s) `$ref`s only when true (default off: no surprise network access).
    pub allow_remote_refs: bool,
    /// `securitySchemes` names the bridge supplies itself: left out of `requirements`, and marked
    /// [`CredentialSource::Bridge`] in the plan.
    pub bridge_credentials: BTreeSet<String>,
}

const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Translates an OpenAPI document into tools. `Err` only when the document is unusable as a
/// whole; a bad operation is skipped with a diagnostic, and the rest is served.
pub fn map_document(
    text: &str,
    options: &MapOptions,
    fetcher: &dyn RefFetcher,
) -> Result<Mapped<MappedTool>, MappingError> {
    map_parsed(parse_document(text)?, options, fetcher)
}

/// A document parsed and not yet translated. Parsing is a step of its own so that whoever holds
/// the text can drop it before translating: the text of GitHub's description is 13 MB, and the
/// translation's peak (tree, inliner memo, definitions) comes after it is no longer needed.
#[derive(Debug)]
pub struct ParsedDocument {
    root: Value,
    text_len: usize,
    /// The text shows every `$ref` is local ([`refs::refs_are_local`]).
    refs_are_local: bool,
}

/// Parses a document's text (JSON or YAML, aliases bounded) for [`map_parsed`]. What translation
/// never reads is dropped here: the Example Objects of `components.examples` (a fifth of GitHub's
/// tree; schema `example`s are kept, they are part of the schemas).
pub fn parse_document(text: &str) -> Result<ParsedDocument, MappingError> {
    let mut root = crate::text::parse_text(text)?;
    if let Some(Value::Object(components)) = root.get_mut("components") {
        components.shift_remove("examples");
    }
    Ok(ParsedDocument {
        root,
        text_len: text.len(),
        refs_are_local: refs::refs_are_local(text),
    })
}

/// [`map_document`] from a parsed document.
pub fn map_parsed(
    parsed: ParsedDocument,
    options: &MapOptions,
    fetcher: &dyn RefFetcher,
) -> Result<Mapped<MappedTool>, MappingError> {
    let ParsedDocument {
        mut root,
        text_len,
        refs_are_local,
    } = parsed;
    let mut diagnostics = Vec::new();
    let version = load::detect(&root)?;
    let base_uri = options.base_uri.as_deref();
    // A text that shows every reference is local has nothing to bundle.
    if !refs_are_local {
        refs::bundle(
            &mut root,
            base_uri,
            options.allow_remote_refs,
            fetcher,
            &mut diagnostics,
        );
    }
    let root = load::normalize(root, version, base_uri, &mut diagnostics);

    let cx = DocContext {
        root: &root,
        toolkit: toolkit_name(&root, options),
        version: tool_version(&root, options, &mut diagnostics),
        label: version_label(&root, options).map(Into::into),
        base_uri,
        bridge_credentials: &options.bridge_credentials,
    };
    let mut inliner = Inliner::with_budget(&root, document_budget(text_len));
    let mut names = UniqueNames::default();
    let mut schemas = Interner::default();
    let mut tools = Vec::new();

    let paths = match root.get("paths") {
        Some(Value::Object(paths)) => Some(paths),
        None | Some(Value::Null) => None,
        Some(_) => {
            return Err(MappingError::Invalid("'paths' is not an object".to_owned()));
        }
    };
    for (path, raw_item) in paths.into_iter().flatten() {
        let item_pointer = format!("/paths/{}", pointer::escape(path));
        let item = match refs::chase(&root, raw_item) {
            Ok(item) if item.is_object() => item,
            Ok(_) => {
                skip(
                    &mut diagnostics,
                    path,
                    &item_pointer,
                    "the path item is not an object",
                );
                continue;
            }
            Err(e) => {
                skip(
                    &mut diagnostics,
                    path,
                    &item_pointer,
                    &format!("path item: {e}"),
                );
                continue;
            }
        };
        for method in METHODS {
            let Some(op) = item.get(*method) else {
                continue;
            };
            let operation = Operation {
                method,
                path,
                item,
                op,
                label: format!("{} {path}", method.to_ascii_uppercase()),
                pointer: format!("{item_pointer}/{method}"),
            };
            let mut op_diagnostics = Vec::new();
            match map_operation(
                &cx,
                &operation,
                &mut inliner,
                &mut names,
                &mut op_diagnostics,
            ) {
                Ok(mut tool) => {
                    diagnostics.append(&mut op_diagnostics);
                    share_schemas(std::sync::Arc::make_mut(&mut tool.definition), &mut schemas);
                    tools.push(tool);
                }
                Err(reason) => diagnostics.push(Diagnostic::new(
                    Severity::Skipped,
                    Some(&operation.label),
                    Some(operation.pointer.clone()),
                    reason.to_string(),
                )),
            }
        }
    }
    if tools.is_empty() {
        let reason = if root.get("webhooks").is_some() {
            "the document describes webhooks only; there are no operations to serve"
        } else {
            "the document has no operations"
        };
        diagnostics.push(Diagnostic::new(Severity::Warning, None, None, reason));
    }
    Ok(Mapped { tools, diagnostics })
}

fn skip(diagnostics: &mut Vec<Diagnostic>, path: &str, pointer: &str, reason: &str) {
    diagnostics.push(Diagnostic::new(
        Severity::Skipped,
        Some(path),
        Some(pointer.to_owned()),
        reason,
    ));
}

fn info_str<'a>(root: &'a Value, key: &str) -> Option<&'a str> {
    root.get("info")?.get(key)?.as_str()
}

fn toolkit_name(root: &Value, options: &MapOptions) -> String {
    let raw = options
        .toolkit
        .as_deref()
        .or_else(|| info_str(root, "title"))
        .unwrap_or("Api");
    segment(raw, "Api")
}

/// The version label as written: configured, else `info.version` (a YAML number as written).
fn version_label(root: &Value, options: &MapOptions) -> Option<String> {
    if let Some(v) = &options.version {
        return Some(v.clone());
    }
    match root.get("info")?.get("version")? {
        Value::String(s) => Some(s.clone()),
        n @ Value::Number(_) => Some(n.to_string()),
        _ => None,
    }
}

fn tool_version(
    root: &Value,
    options: &MapOptions,
    diagnostics: &mut Vec<Diagnostic>,
) -> crate::otc::ToolVersion {
    if let Some(v) = options.version.as_deref().and_then(normalize_version) {
        return v;
    }
    let declared = options.version.as_deref().or_else(|| {
        root.get("info")?.get("version").and_then(|v| match v {
            Value::String(s) => Some(s.as_str()),
            _ => None,
        })
    });
    // A YAML `version: 1.2` is a number; read it as written.
    let number = root
        .get("info")
        .and_then(|i| i.get("version"))
        .filter(|v| v.is_number())
        .map(Value::to_string);
    version_or_default(declared.or(number.as_deref()), diagnostics)
}

/// Keeps one copy of schemas that several operations share (many operations of one API return
/// the same object), so the catalog holds each distinct schema once.
fn share_schemas(definition: &mut ToolDefinition, schemas: &mut Interner) {
    definition.input_schema = schemas.intern(definition.input_schema.clone());
    if let Some(output) = definition.output_schema.take() {
        definition.output_schema = Some(schemas.intern(output));
    }
}
