//! Loading: a parsed document → one document model. This is the only module that knows OpenAPI
//! versions. (Turning text into a value is `text`, which the `$ref` bundler uses as well.)
//!
//! **The model.** The rest of the mapper reads an OpenAPI 3.x document held as a
//! `serde_json::Value`, through small accessors, rather than typed `openapiv3` structs. The
//! reasons: `openapiv3` models 3.0 only, and 3.1 schemas (type arrays, `$ref` with siblings,
//! `$defs`, `examples` arrays, boolean schemas) do not fit its `Schema` type; schemas have to end
//! up as JSON values anyway (they become JSON Schema in tool definitions); and real documents
//! break typed models in small ways (a `description` that is a number, `required: "true"`), which
//! with a typed model would reject a whole document instead of one keyword or one operation.
//! Reading `Value`s lets every oddity be handled where it matters, without a panic.
//!
//! What "3.x-shaped" means here, and what this module does per version:
//! - **Swagger 2.0** is converted ([`swagger2`]): `host`/`basePath`/`schemes` become `servers`,
//!   `securityDefinitions` become `components.securitySchemes`, `in: body` and `formData`
//!   parameters become `requestBody`, `consumes`/`produces` become `content` media types, and
//!   parameter `collectionFormat` becomes `style`/`explode`. `definitions` stay where they are,
//!   so `#/definitions/…` references keep resolving.
//! - **OpenAPI 3.0** is the model itself.
//! - **OpenAPI 3.1** differs from 3.0 in its schemas only as far as this mapper cares, and the
//!   schema conversion (`openapi::schema`) works by shape (a boolean `exclusiveMinimum` is
//!   converted, a numeric one kept; `nullable` is folded into `type`), so 3.1 needs no rewrite.

mod swagger2;

use serde_json::Value;

use crate::error::{Diagnostic, MappingError};

/// The versions this mapper reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpecVersion {
    /// Swagger 2.0.
    Swagger2,
    /// OpenAPI 3.0.x.
    OpenApi30,
    /// OpenAPI 3.1.x (and later 3.x, read as 3.1).
    OpenApi31,
}

/// Which version the document declares; an error when it is not a document we read.
pub(crate) fn detect(root: &Value) -> Result<SpecVersion, MappingError> {
    let Value::Object(map) = root else {
        return Err(MappingError::Invalid(
            "the document is not an object, so it is not an OpenAPI or Swagger document".into(),
        ));
    };
    if let Some(v) = map.get("swagger") {
        let v = version_text(v);
        return if v == "2.0" || v == "2" {
            Ok(SpecVersion::Swagger2)
        } else {
            Err(MappingError::UnsupportedVersion(format!("swagger {v}")))
        };
    }
    let Some(v) = map.get("openapi") else {
        return Err(MappingError::Invalid(
            "the document has neither an 'openapi' nor a 'swagger' field".into(),
        ));
    };
    let v = version_text(v);
    let mut parts = v.split('.');
    match (parts.next(), parts.next()) {
        (Some("3"), Some("0")) => Ok(SpecVersion::OpenApi30),
        (Some("3"), Some(minor)) if minor.parse::<u32>().is_ok_and(|m| m >= 1) => {
            Ok(SpecVersion::OpenApi31)
        }
        _ => Err(MappingError::UnsupportedVersion(format!("openapi {v}"))),
    }
}

/// `openapi: 3.0` unquoted in YAML is a number.
fn version_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.trim().to_owned(),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

/// Brings a parsed (and bundled) document into the 3.x shape the rest of the mapper reads.
pub(crate) fn normalize(
    root: Value,
    version: SpecVersion,
    base_uri: Option<&str>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Value {
    match version {
        SpecVersion::Swagger2 => swagger2::convert(root, base_uri, diagnostics),
        SpecVersion::OpenApi30 | SpecVersion::OpenApi31 => root,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse_text;

    #[test]
    fn yaml_integer_keys_become_strings() {
        let v = parse_text("openapi: 3.0.0\npaths:\n  /a:\n    get:\n      responses:\n        200:\n          description: ok\n").unwrap();
        assert!(v["paths"]["/a"]["get"]["responses"]["200"].is_object());
        assert_eq!(detect(&v).unwrap(), SpecVersion::OpenApi30);
    }

    #[test]
    fn versions_are_detected() {
        let d = |s: &str| detect(&parse_text(s).unwrap());
        assert_eq!(d("swagger: '2.0'").unwrap(), SpecVersion::Swagger2);
        assert_eq!(d("openapi: 3.1.0").unwrap(), SpecVersion::OpenApi31);
        assert_eq!(d("openapi: 3.0").unwrap(), SpecVersion::OpenApi30);
        assert!(matches!(
            d("openapi: 4.0.0"),
            Err(MappingError::UnsupportedVersion(_))
        ));
        assert!(matches!(
            d("swagger: '1.2'"),
            Err(MappingError::UnsupportedVersion(_))
        ));
        assert!(matches!(d("- a"), Err(MappingError::Invalid(_))));
        assert!(matches!(d("{}"), Err(MappingError::Invalid(_))));
    }
}
