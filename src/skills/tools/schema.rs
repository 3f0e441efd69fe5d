//! A tool's `schema.json` (or a script's `x.schema.json`): read, checked to describe an object,
//! compiled, and each problem placed at its file and line.

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

/// Why a tool's `schema.json` (or a script's `x.schema.json`) is not usable. Each message starts
/// `file:line:` so an editor jumps to the spot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The file exists but cannot be read (permissions, not UTF-8).
    #[error("{}:1: cannot read: {reason}", path.display())]
    Unreadable { path: PathBuf, reason: String },
    /// The file is not JSON.
    #[error("{}:{line}: not valid JSON: {reason}", path.display())]
    NotJson {
        path: PathBuf,
        /// The line the parser stopped at.
        line: usize,
        reason: String,
    },
    /// The JSON is not an object, so it cannot be a JSON Schema.
    #[error(
        "{}:1: a JSON Schema must be an object, such as {{\"type\": \"object\", \"properties\": {{…}}}}",
        path.display()
    )]
    NotAnObject { path: PathBuf },
    /// Key `type` is something other than `"object"`: a tool's input is one JSON object.
    #[error(
        "{}:{line}: key `type`: a tool's input is one JSON object, so the schema's type must be \"object\"",
        path.display()
    )]
    NotObjectType { path: PathBuf, line: usize },
    /// The schema does not compile against its meta-schema.
    #[error("{}:{line}: not a valid JSON Schema: {at}{reason}", path.display())]
    Invalid {
        path: PathBuf,
        /// The line of the offending key (1 when not found).
        line: usize,
        /// `at `a.b`: ` naming the offending key, or empty at the top level.
        at: String,
        reason: String,
    },
}

/// `schema.json`, parsed and compiled (which checks it against its meta-schema). `Ok(None)`
/// when there is no such file. A schema for tool input must describe an object.
pub(super) fn load_schema(
    path: &Path,
) -> Result<Option<(Value, jsonschema::Validator)>, SchemaError> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(SchemaError::Unreadable {
                path: path.to_owned(),
                reason: e.to_string(),
            });
        }
    };
    let schema: Value = serde_json::from_str(&text).map_err(|e| SchemaError::NotJson {
        path: path.to_owned(),
        line: e.line(),
        reason: e.to_string(),
    })?;
    let Value::Object(obj) = &schema else {
        return Err(SchemaError::NotAnObject {
            path: path.to_owned(),
        });
    };
    if obj.get("type").is_some_and(|t| t != "object") {
        return Err(SchemaError::NotObjectType {
            path: path.to_owned(),
            line: pointer_line(&text, "type"),
        });
    }
    let validator = jsonschema::validator_for(&schema).map_err(|e| {
        let at = e.instance_path().as_str().trim_start_matches('/');
        let line = pointer_line(&text, at);
        let at = if at.is_empty() {
            String::new()
        } else {
            format!("at `{}`: ", at.replace('/', "."))
        };
        // A `$ref` to another document the validator could not retrieve: skillpipe fetches
        // none (a run must not reach the network), which is the fact for the skill's author.
        use jsonschema::{ReferencingError, error::ValidationErrorKind};
        let elsewhere = matches!(
            e.kind(),
            ValidationErrorKind::Referencing(ReferencingError::Unretrievable { .. })
        );
        let reason = if elsewhere {
            "a `$ref` to another document (a URL or file) is not followed: skillpipe loads no \
             schema from elsewhere; put the definition in this file under `$defs` and refer \
             to it as `#/$defs/NAME`"
                .to_string()
        } else {
            e.to_string()
        };
        SchemaError::Invalid {
            path: path.to_owned(),
            line,
            at,
            reason,
        }
    })?;
    Ok(Some((schema, validator)))
}

/// The first line at or after `from` (0-based) where `"key"` is a key; 1-based.
fn key_line_from(text: &str, key: &str, from: usize) -> Option<usize> {
    let needle = format!("\"{key}\"");
    text.lines()
        .enumerate()
        .skip(from)
        .find(|(_, l)| {
            l.find(&needle)
                .is_some_and(|i| l[i + needle.len()..].trim_start().starts_with(':'))
        })
        .map(|(i, _)| i + 1)
}

/// The line of a JSON pointer's last key (`properties/n/type`), found by looking for each key
/// after the line of the one before it. Array indexes are skipped. 1 when not found.
fn pointer_line(text: &str, pointer: &str) -> usize {
    let mut line = 1;
    for seg in pointer.split('/').filter(|s| !s.is_empty()) {
        if seg.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        match key_line_from(text, seg, line - 1) {
            Some(l) => line = l,
            None => break,
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ref_to_another_document_is_told_as_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("schema.json");
        for reference in ["https://example.com/s.json", "other.json"] {
            std::fs::write(
                &path,
                format!(
                    r#"{{"type": "object", "properties": {{"a": {{"$ref": "{reference}"}}}}}}"#
                ),
            )
            .unwrap();
            let e = load_schema(&path).expect_err("refused").to_string();
            assert!(e.contains("is not followed") && e.contains("$defs"), "{e}");
            assert!(!e.contains("feature"), "{e}");
        }
        // Control: a local `$ref` loads.
        std::fs::write(
            &path,
            r##"{"type": "object", "$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}"##,
        )
        .unwrap();
        assert!(load_schema(&path).is_ok());
        // A local `$ref` that leads nowhere is its own mistake, not another document.
        std::fs::write(
            &path,
            r##"{"properties": {"a": {"$ref": "#/$defs/gone"}}}"##,
        )
        .unwrap();
        let e = load_schema(&path).expect_err("refused").to_string();
        assert!(!e.contains("is not followed"), "{e}");
    }

    #[test]
    fn each_schema_problem_is_its_own_error_naming_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.schema.json");
        assert_eq!(load_schema(&path).unwrap().map(|(v, _)| v), None);
        let err = |text: &str| {
            std::fs::write(&path, text).unwrap();
            load_schema(&path).err()
        };
        let shown = path.display().to_string();
        match err("{\n  \"type\": \"object\",\n  oops\n}") {
            Some(e @ SchemaError::NotJson { line: 3, .. }) => {
                assert!(
                    e.to_string()
                        .starts_with(&format!("{shown}:3: not valid JSON"))
                )
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            err("[1]"),
            Some(SchemaError::NotAnObject { path: path.clone() })
        );
        assert_eq!(
            err("{\n  \"type\": \"string\"\n}"),
            Some(SchemaError::NotObjectType {
                path: path.clone(),
                line: 2
            })
        );
        match err("{\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"strng\"}}}") {
            Some(SchemaError::Invalid { line: 1, at, .. }) => {
                assert_eq!(at, "at `properties.n.type`: ")
            }
            other => panic!("{other:?}"),
        }
        // Positive control: a schema for an object loads.
        assert_eq!(err("{\"type\": \"object\"}"), None);
    }

    #[test]
    fn key_lines_are_found() {
        let text = "{\n  \"type\": \"object\",\n  \"properties\": {\"a\": {\"type\": 3}}\n}";
        assert_eq!(pointer_line(text, "type"), 2);
        assert_eq!(pointer_line(text, "properties"), 3);
        assert_eq!(pointer_line(text, "nope"), 1);
        let text = "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"n\": {\"type\": \"strng\"}\n  }\n}";
        assert_eq!(pointer_line(text, "properties/n/type"), 4);
    }
}
