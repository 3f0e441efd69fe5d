//! Script tools: a folder `tools/{id}/` (in a skill, or in any folder with the same layout)
//! holding `tool.yaml`, an optional `schema.json` (JSON Schema of the input object) and an
//! optional `description.md`. A tool is a script with typed input: its arguments arrive as one
//! JSON object on stdin, built from a directive's `--flags` or taken from a native tool call,
//! and validated against the schema before anything runs.
//!
//! Loading is strict per tool: a tool with any problem is left out (a typo such as
//! `enabeld: false` must not leave a tool enabled), with a `file:line: message` for each problem.

mod flags;
mod load;
mod schema;

use flags::type_of;
use schema::load_schema;

pub use flags::flags_to_json;
pub use load::{load_tools, tool_dirs};
pub use schema::SchemaError;

use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// Schema violations listed in one refusal.
const MAX_REPORTED: usize = 5;

/// How a tool receives its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolInput {
    /// One JSON object on stdin (`input: json`, the default).
    #[default]
    StdinJson,
    /// The directive's arguments as argv, stdin empty (`input: args`).
    Argv,
}

/// One loaded tool.
#[derive(Debug, Clone, Default)]
pub struct Tool {
    /// The folder name; `SKILL:ID` in a directive.
    pub id: String,
    /// Display name (`name:` in tool.yaml, else the id).
    pub name: String,
    /// `description.md` (trimmed), else tool.yaml's `description`, else "".
    pub description: String,
    /// `schema.json`, checked to be a valid JSON Schema for an object.
    pub schema: Option<Value>,
    /// Interpreter named by `runtime:`; `None` means by extension or shebang, as for scripts.
    pub runtime: Option<String>,
    /// The script, relative to the owning folder: `tools/ID/run.py`.
    pub script: String,
    /// `timeout:` (seconds, or milliseconds from 1000 up); it can only shorten the policy's
    /// `timeout_seconds`.
    pub timeout: Option<Duration>,
    /// `execution.confirm: true` (or `execution.mode: confirm`): each run is asked about, as
    /// under `confirm = "ask"`, whatever the policy's `confirm` (a tool can only add a question).
    pub confirm: bool,
    /// `env:` added to the command's environment, in file order.
    pub env: Vec<(String, String)>,
    /// The tool.yaml setting that disabled it, as written there (`enabled: false`,
    /// `execution.trigger: never`), for saying why; None when it is enabled. A disabled tool is
    /// hidden from directives, the prompt and native tools.
    pub disabled_by: Option<&'static str>,
    /// How the input reaches the script (`input:` in tool.yaml).
    pub input: ToolInput,
    validator: Option<Arc<jsonschema::Validator>>,
}

/// Why a tool's input was refused. `field` is where (`threshold`, `items.2`), when known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid input for tool `{tool}`: {}{message}", field_prefix(.field))]
pub struct InputError {
    /// The tool's id.
    pub tool: String,
    /// The JSON path of the bad value, when the schema names one.
    pub field: Option<String>,
    /// What the schema or the argument mapping refused.
    pub message: String,
}

fn field_prefix(field: &Option<String>) -> String {
    match field {
        Some(f) => format!("field `{f}`: "),
        None => String::new(),
    }
}

impl Tool {
    /// Checks `input` against the schema (any JSON object passes when there is none).
    pub fn validate(&self, input: &Value) -> Result<(), InputError> {
        let err = |field: Option<String>, message: String| InputError {
            tool: self.id.clone(),
            field,
            message,
        };
        if !input.is_object() {
            return Err(err(None, "the input must be a JSON object".into()));
        }
        let Some(validator) = &self.validator else {
            return Ok(());
        };
        // The first problem names the field; the others follow in the message, so a model can
        // fix them all at once.
        let mut problems = validator.iter_errors(input).take(MAX_REPORTED).map(|e| {
            use jsonschema::error::ValidationErrorKind::Required;
            let pointer = e.instance_path().as_str();
            let field = match (pointer, e.kind()) {
                ("", Required { property }) => property.as_str().map(str::to_owned),
                ("", _) => None,
                (p, _) => Some(p.trim_start_matches('/').replace('/', ".")),
            };
            // The field is already named; the schema library's own text would quote it again.
            let message = match e.kind() {
                Required { .. } if field.is_some() => "required, and missing".to_string(),
                _ => e.to_string(),
            };
            (field, message)
        });
        let Some((field, mut message)) = problems.next() else {
            return Ok(());
        };
        for (f, m) in problems {
            message.push_str(&format!("; {}{m}", field_prefix(&f)));
        }
        Err(err(field, message))
    }

    /// A directive's arguments (`--input-path data.csv --threshold 0.9`) as the validated JSON
    /// object (`{"input_path": "data.csv", "threshold": 0.9}`). See `flags_to_json`.
    pub fn input_from_flags(&self, args: &[String]) -> Result<Value, InputError> {
        let map =
            flags_to_json(self.schema.as_ref(), args).map_err(|(field, message)| InputError {
                tool: self.id.clone(),
                field,
                message,
            })?;
        let value = Value::Object(map);
        self.validate(&value)?;
        Ok(value)
    }

    /// The tool's parameters in flag form for the system prompt:
    /// `--input-path TEXT --threshold NUMBER [--verbose]` (optional ones in brackets). An array
    /// is its flag repeated, one value each: `[--tags VALUE]...` (`--tags a --tags b`).
    pub fn flag_usage(&self) -> String {
        let Some(props) = self.properties() else {
            return if self.input == ToolInput::StdinJson {
                "[--KEY VALUE]...".into()
            } else {
                String::new()
            };
        };
        let required = self.required();
        props
            .iter()
            .map(|(key, prop)| {
                let flag = format!("--{}", key.replace('_', "-"));
                let text = match type_of(prop) {
                    Some("boolean") => flag,
                    Some("integer") => format!("{flag} INTEGER"),
                    Some("number") => format!("{flag} NUMBER"),
                    Some("array") => format!("{flag} VALUE"),
                    Some("object") => format!("{flag} JSON"),
                    _ => format!("{flag} TEXT"),
                };
                let repeated = type_of(prop) == Some("array");
                match (required.contains(&key.as_str()), repeated) {
                    (true, false) => text,
                    (true, true) => format!("{text} [{text}]..."),
                    (false, false) => format!("[{text}]"),
                    (false, true) => format!("[{text}]..."),
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn properties(&self) -> Option<&Map<String, Value>> {
        self.schema.as_ref()?.get("properties")?.as_object()
    }

    fn required(&self) -> Vec<&str> {
        self.schema
            .as_ref()
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

/// A plain script with a schema beside it (`scripts/x.py` + `scripts/x.schema.json`) as a tool
/// that reads that JSON on stdin: its flags are typed and validated like a tool folder's.
/// `Ok(None)` for a script without one; `Err` names the schema file and line.
pub fn script_tool(script: &super::Script) -> Result<Option<Tool>, SchemaError> {
    let Some(path) = &script.schema else {
        return Ok(None);
    };
    let Some((schema, validator)) = load_schema(path)? else {
        return Ok(None);
    };
    Ok(Some(Tool {
        id: script.id.clone(),
        name: script.id.clone(),
        description: script.description.clone(),
        schema: Some(schema),
        script: script.rel_path.clone(),
        validator: Some(Arc::new(validator)),
        ..Tool::default()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flags_are_listed_in_the_schemas_own_property_order() {
        let schema = json!({"type": "object", "properties": {"zeta": {"type": "string"},
                "alpha": {"type": "integer"}, "mid": {"type": "boolean"},
                "tags": {"type": "array"}, "ids": {"type": "array"}},
                "required": ["zeta", "ids"]});
        let tool = Tool {
            schema: Some(schema),
            ..Tool::default()
        };
        // An array is its flag repeated, as the parser reads it.
        assert_eq!(
            tool.flag_usage(),
            "--zeta TEXT [--alpha INTEGER] [--mid] [--tags VALUE]... --ids VALUE [--ids VALUE]..."
        );
    }
}
