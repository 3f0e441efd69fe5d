//! Native tool calling (DESIGN §6): each skill script offered as a function tool
//! `SKILL__STEM`, arguments `{args: [string], input: object}` → argv and stdin.

use crate::dispatch::Outcome;
use crate::model::ToolDef;
use crate::skills::SkillSet;
use serde_json::{Value, json};
use std::collections::HashMap;

/// Tool name → the script reference a directive would use (`SKILL/scripts/x.py`).
pub type ToolMap = HashMap<String, String>;

/// Function names allow `[A-Za-z0-9_-]{1,64}`.
fn tool_name(skill: &str, id: &str) -> String {
    let mut name: String = format!("{skill}__{id}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    name.truncate(64);
    name
}

/// The native form of `!{skill NAME [FILE]}`: a loaded skill's instructions or one of its files.
pub const LOAD_SKILL: &str = "load_skill";

fn load_skill_def() -> ToolDef {
    ToolDef {
        name: LOAD_SKILL.into(),
        description: "Load a skill's instructions (its SKILL.md) before using it, or with `file` \
                      a file of that skill such as references/x.md."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "the skill's name"},
                "file": {"type": "string", "description": "a file path relative to the skill folder"}
            },
            "required": ["name"]
        }),
    }
}

/// `load_skill` arguments → the argv of the built-in `skill NAME [FILE]`.
pub fn load_skill_argv(text: &str) -> Result<Vec<String>, String> {
    let v: Value = serde_json::from_str(if text.trim().is_empty() { "{}" } else { text })
        .map_err(|e| format!("arguments are not valid JSON: {e}"))?;
    let field = |k: &str| match v.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("`{k}` must be a string")),
    };
    let name = field("name")?.ok_or("`name` is required: the skill to load")?;
    let mut argv = vec![crate::dispatch::BUILTIN_SKILL.to_string(), name];
    argv.extend(field("file")?);
    Ok(argv)
}

pub fn tool_defs(skills: &SkillSet) -> (Vec<ToolDef>, ToolMap) {
    let mut defs = Vec::new();
    let mut map = ToolMap::new();
    if !skills.is_empty() {
        defs.push(load_skill_def());
    }
    for skill in skills.iter() {
        for script in skill.scripts() {
            let name = tool_name(&skill.name, &script.id);
            if map.contains_key(&name) || name == LOAD_SKILL {
                continue;
            }
            let description = if script.description.is_empty() {
                format!(
                    "Run {} of skill {}: {}",
                    script.rel_path, skill.name, skill.description
                )
            } else {
                format!(
                    "{} ({} of skill {})",
                    script.description, script.rel_path, skill.name
                )
            };
            defs.push(ToolDef {
                name: name.clone(),
                description,
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "args": {"type": "array", "items": {"type": "string"},
                                 "description": "command-line arguments"},
                        "input": {"type": "object", "description": "JSON given on stdin"}
                    }
                }),
            });
            map.insert(name, format!("{}/{}", skill.name, script.rel_path));
        }
    }
    (defs, map)
}

/// The call's arguments → (argv after the script, stdin bytes).
pub fn parse_arguments(text: &str) -> Result<(Vec<String>, Option<Vec<u8>>), String> {
    let text = if text.trim().is_empty() { "{}" } else { text };
    let v: Value =
        serde_json::from_str(text).map_err(|e| format!("arguments are not valid JSON: {e}"))?;
    let Value::Object(obj) = v else {
        return Err("arguments must be a JSON object".into());
    };
    let args = match obj.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                Value::Bool(b) => Ok(b.to_string()),
                _ => Err("`args` must be a list of strings".to_string()),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("`args` must be a list of strings".into()),
    };
    let input = match obj.get("input") {
        None | Some(Value::Null) => None,
        Some(v) => Some(serde_json::to_vec(v).map_err(|e| e.to_string())?),
    };
    Ok((args, input))
}

pub fn error_json(reason: &str) -> String {
    json!({"success": false, "error": format!("not run: {reason}")}).to_string()
}

/// The `tool` message content for an outcome.
pub fn result_json(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Ran(ran) => crate::dispatch::result_json(ran).to_string(),
        Outcome::Blocked { reason, .. } => error_json(reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_sanitised() {
        assert_eq!(tool_name("lookup", "lookup"), "lookup__lookup");
        assert_eq!(tool_name("a", "x.y z"), "a__x_y_z");
        assert_eq!(tool_name(&"s".repeat(70), "x").len(), 64);
    }

    #[test]
    fn load_skill_arguments() {
        assert_eq!(
            load_skill_argv(r#"{"name":"pdf"}"#).unwrap(),
            ["skill", "pdf"]
        );
        assert_eq!(
            load_skill_argv(r#"{"name":"pdf","file":"references/forms.md"}"#).unwrap(),
            ["skill", "pdf", "references/forms.md"]
        );
        assert!(
            load_skill_argv("{}")
                .unwrap_err()
                .contains("`name` is required")
        );
        assert!(
            load_skill_argv(r#"{"name":1}"#)
                .unwrap_err()
                .contains("string")
        );
    }

    #[test]
    fn arguments_map_to_argv_and_stdin() {
        let (args, input) =
            parse_arguments(r#"{"args":["ephemeral", 3],"input":{"a":1}}"#).unwrap();
        assert_eq!(args, vec!["ephemeral", "3"]);
        assert_eq!(input.unwrap(), br#"{"a":1}"#.to_vec());
        assert_eq!(parse_arguments("").unwrap(), (vec![], None));
        assert!(parse_arguments("[1]").unwrap_err().contains("object"));
        assert!(
            parse_arguments(r#"{"args":[{}]}"#)
                .unwrap_err()
                .contains("list of strings")
        );
        assert!(parse_arguments("{").unwrap_err().contains("not valid JSON"));
    }
}
