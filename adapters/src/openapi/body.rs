//! Request bodies: the input properties a [`BodyPlan`] names become JSON, a URL-encoded form, a
//! multipart form (with file parts), text or raw bytes.
//!
//! Files and binary bodies arrive in the input as text: either plain base64 (standard or
//! URL-safe alphabet, padding optional) or a data URL `data:<type>[;name=<file>];base64,<data>`,
//! whose type becomes the part's `Content-Type`. Anything that does not decode is `BadInput`,
//! which tells the model what to fix.

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use otc_mappings::openapi::{BodyKind, BodyPlan, BodySource};
use reqwest::RequestBuilder;
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use reqwest::multipart::{Form, Part};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::compile::CompiledPlan;
use super::style::scalar;
use crate::AdapterError;

const LENIENT: GeneralPurposeConfig =
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
const STANDARD: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, LENIENT);
const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, LENIENT);

/// The body's input: one property, or the spread properties that are present.
enum Source<'a> {
    One(&'a Value),
    Spread(&'a [String], &'a Map<String, Value>),
}

impl Source<'_> {
    /// `(name, value)` of each field, for forms.
    fn fields(&self) -> Vec<(&str, &Value)> {
        match self {
            Source::One(Value::Object(map)) => map.iter().map(|(k, v)| (k.as_str(), v)).collect(),
            Source::One(_) => Vec::new(),
            Source::Spread(names, input) => names
                .iter()
                .filter_map(|n| input.get(n).map(|v| (n.as_str(), v)))
                .collect(),
        }
    }
}

impl Serialize for Source<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Source::One(value) => value.serialize(serializer),
            Source::Spread(names, input) => {
                let mut map = serializer.serialize_map(None)?;
                for name in names.iter() {
                    if let Some(value) = input.get(name) {
                        map.serialize_entry(name, value)?;
                    }
                }
                map.end()
            }
        }
    }
}

/// Attaches the body, if the plan has one and the input (or `required`) calls for it.
pub(crate) fn attach(
    mut request: RequestBuilder,
    compiled: &CompiledPlan,
    input: &Map<String, Value>,
) -> Result<RequestBuilder, AdapterError> {
    let Some(plan) = &compiled.plan.body else {
        return Ok(request);
    };
    let source = match &plan.source {
        BodySource::Property(name) => match input.get(name) {
            Some(value) => Source::One(value),
            None if plan.required => {
                return Err(bad_input(format!("the request body '{name}' is required")));
            }
            None => return Ok(request),
        },
        BodySource::Spread(names) => {
            if !plan.required && !names.iter().any(|n| input.contains_key(n)) {
                return Ok(request);
            }
            Source::Spread(names, input)
        }
    };
    if let (Some(content_type), false) = (
        &compiled.content_type,
        matches!(plan.kind, BodyKind::Multipart | BodyKind::Binary),
    ) {
        request = request.header(CONTENT_TYPE, content_type.clone());
    }
    Ok(match plan.kind {
        BodyKind::Json => {
            request.body(
                serde_json::to_vec(&source).map_err(|e| AdapterError::BadInput {
                    message: format!("the request body cannot be written as JSON: {e}"),
                })?,
            )
        }
        BodyKind::Form => request.body(form_urlencoded(&source)),
        BodyKind::Multipart => request.multipart(multipart(plan, &source)?),
        BodyKind::Text => request.body(match source {
            Source::One(value) => scalar(value).into_owned(),
            Source::Spread(..) => serde_json::to_string(&source).unwrap_or_default(),
        }),
        BodyKind::Binary => {
            let Source::One(Value::String(text)) = source else {
                return Err(bad_input(
                    "the request body must be a base64 string or a data URL".to_owned(),
                ));
            };
            let file = decode_file(text, "the request body")?;
            let content_type = match (&compiled.content_type, &file.media_type) {
                (Some(declared), _) if !plan.media_type.contains('*') => declared.clone(),
                (_, Some(given)) => HeaderValue::from_str(given)
                    .map_err(|_| bad_input(format!("'{given}' is not a valid media type")))?,
                _ => HeaderValue::from_static("application/octet-stream"),
            };
            request.header(CONTENT_TYPE, content_type).body(file.bytes)
        }
    })
}

fn bad_input(message: String) -> AdapterError {
    AdapterError::BadInput { message }
}

/// `application/x-www-form-urlencoded`: arrays repeat the name, objects are JSON text.
fn form_urlencoded(source: &Source<'_>) -> String {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in source.fields() {
        match value {
            Value::Array(items) => {
                for item in items {
                    form.append_pair(name, &scalar(item));
                }
            }
            Value::Null => {}
            _ => {
                form.append_pair(name, &scalar(value));
            }
        }
    }
    form.finish()
}

/// `multipart/form-data`: file fields become file parts, objects JSON parts, the rest text.
fn multipart(plan: &BodyPlan, source: &Source<'_>) -> Result<Form, AdapterError> {
    let mut form = Form::new();
    for (name, value) in source.fields() {
        let is_file = plan.file_fields.iter().any(|f| f == name);
        match value {
            Value::Null => {}
            Value::String(text) if is_file => {
                form = form.part(name.to_owned(), file_part(name, text)?)
            }
            Value::Array(items) if is_file => {
                for item in items {
                    let Value::String(text) = item else {
                        return Err(bad_input(format!(
                            "file field '{name}' must hold base64 strings or data URLs"
                        )));
                    };
                    form = form.part(name.to_owned(), file_part(name, text)?);
                }
            }
            Value::Array(_) | Value::Object(_) => {
                let part = Part::text(value.to_string())
                    .mime_str("application/json")
                    .map_err(|e| bad_input(format!("field '{name}': {e}")))?;
                form = form.part(name.to_owned(), part);
            }
            _ => form = form.text(name.to_owned(), scalar(value).into_owned()),
        }
    }
    Ok(form)
}

fn file_part(field: &str, text: &str) -> Result<Part, AdapterError> {
    let file = decode_file(text, &format!("file field '{field}'"))?;
    let part =
        Part::bytes(file.bytes).file_name(file.file_name.unwrap_or_else(|| field.to_owned()));
    match file.media_type {
        Some(media_type) => part
            .mime_str(&media_type)
            .map_err(|_| bad_input(format!("'{media_type}' is not a valid media type"))),
        None => Ok(part),
    }
}

/// A file given in the input.
#[derive(Debug, PartialEq)]
pub(crate) struct FileData {
    pub(crate) bytes: Vec<u8>,
    pub(crate) media_type: Option<String>,
    pub(crate) file_name: Option<String>,
}

/// Decodes base64 or a data URL. `what` names the input for the error message.
pub(crate) fn decode_file(text: &str, what: &str) -> Result<FileData, AdapterError> {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix("data:") {
        let Some((header, data)) = rest.split_once(',') else {
            return Err(bad_input(format!(
                "{what}: a data URL needs a ',' before its data"
            )));
        };
        let mut params = header.split(';');
        let media_type = params.next().filter(|t| !t.is_empty()).map(str::to_owned);
        let mut is_base64 = false;
        let mut file_name = None;
        for param in params {
            match param.split_once('=') {
                Some(("name" | "filename", v)) => {
                    file_name = Some(
                        percent_encoding::percent_decode_str(v)
                            .decode_utf8_lossy()
                            .into_owned(),
                    );
                }
                None if param.eq_ignore_ascii_case("base64") => is_base64 = true,
                _ => {}
            }
        }
        let bytes = if is_base64 {
            decode_base64(data, what)?
        } else {
            percent_encoding::percent_decode_str(data).collect()
        };
        return Ok(FileData {
            bytes,
            media_type,
            file_name,
        });
    }
    Ok(FileData {
        bytes: decode_base64(text, what)?,
        media_type: None,
        file_name: None,
    })
}

fn decode_base64(text: &str, what: &str) -> Result<Vec<u8>, AdapterError> {
    let compact: std::borrow::Cow<'_, str> = if text.bytes().any(|b| b.is_ascii_whitespace()) {
        text.chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect::<String>()
            .into()
    } else {
        text.into()
    };
    STANDARD
        .decode(compact.as_bytes())
        .or_else(|_| URL_SAFE.decode(compact.as_bytes()))
        .map_err(|e| bad_input(format!("{what} is neither base64 nor a data URL: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_in_both_alphabets_with_or_without_padding() {
        for text in ["aGk/Pz4+", "aGk_Pz4-", "aGk", "aGk=", "aG\nk="] {
            let file = decode_file(text, "x").unwrap();
            assert!(file.bytes.starts_with(b"hi"), "{text}");
        }
    }

    #[test]
    fn data_urls_carry_type_and_name() {
        let file = decode_file("data:image/png;name=cat%201.png;base64,iVBO", "x").unwrap();
        assert_eq!(file.media_type.as_deref(), Some("image/png"));
        assert_eq!(file.file_name.as_deref(), Some("cat 1.png"));
        assert_eq!(file.bytes, [0x89, 0x50, 0x4e]);
        let plain = decode_file("data:text/plain,a%20b", "x").unwrap();
        assert_eq!(plain.bytes, b"a b");
    }

    #[test]
    fn garbage_is_bad_input() {
        let err = decode_file("not base64!", "file field 'f'").unwrap_err();
        assert!(matches!(err, AdapterError::BadInput { .. }), "{err}");
        assert!(err.to_string().contains("file field 'f'"), "{err}");
    }
}
