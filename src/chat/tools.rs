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

/// The native tools for `skills` (one per script) and the map from tool name to script.
pub fn tool_defs(skills: &SkillSet) -> (Vec<ToolDef>, ToolMap) {
    let mut defs = Vec::new();
    let mut map = ToolMap::new();
    for skill in skills.iter() {
        for script in skill.scripts() {
            let name = tool_name(&skill.name, &script.id);
            if map.contains_key(&name) {
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

/// A refusal as a tool result: short, and without the paths of the user's machine.
pub fn error_json(reason: &str) -> String {
    let reason = super::result::short_reason(reason);
    json!({"success": false, "error": format!("not run: {reason}")}).to_string()
}

/// The `tool` message content for an outcome: DESIGN §3's result object without the script's
/// absolute path (the model has no use for it and would repeat it).
pub fn result_json(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Ran(ran) => {
            let mut v = crate::dispatch::result_json(ran);
            if let Some(obj) = v.as_object_mut() {
                obj.remove("script_path");
            }
            v.to_string()
        }
        Outcome::Blocked { reason, .. } => error_json(reason),
    }
}

/// What the user is told, once, when a server takes `tools` but its model writes the call as text.
pub const IGNORED_TOOLS: &str = "the model wrote a tool call as text instead of calling the tool \
     (this server or model does not do native tool calls); using directives instead of --tools \
     for the rest of this session";

/// An answer to a request with tools that holds no tool call but text shaped like one: JSON
/// with a function name and its arguments, or a `<tool_call>` tag (Qwen, Hermes templates).
pub fn looks_like_tool_call(text: &str) -> bool {
    if text.contains("<tool_call>") || text.contains("<|tool_call") {
        return true;
    }
    let Some(open) = text.find('{') else {
        return false;
    };
    let json = &text[open..];
    json.contains("\"name\"") && (json.contains("\"arguments\"") || json.contains("\"parameters\""))
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
    fn tool_call_text_is_recognised() {
        assert!(looks_like_tool_call(
            "Sure. {\"name\": \"calc__calc\", \"arguments\": {\"args\": [\"1+1\"]}}"
        ));
        assert!(looks_like_tool_call("<tool_call>\n{}\n</tool_call>"));
        assert!(looks_like_tool_call(
            "```json\n{\"name\": \"lookup\", \"parameters\": {}}\n```"
        ));
        assert!(!looks_like_tool_call("The answer is 42."));
        assert!(!looks_like_tool_call("Use {\"name\": \"x\"} as the key."));
        assert!(!looks_like_tool_call(
            "\"name\" and \"arguments\" without JSON"
        ));
    }

    #[test]
    fn results_for_the_model_carry_no_absolute_paths() {
        use crate::dispatch::Ran;
        let ran = Outcome::Ran(Ran {
            result: Default::default(),
            skill: Some("calc".into()),
            script_path: Some("/home/ann/skills/calc/scripts/calc.py".into()),
        });
        assert!(
            !result_json(&ran).contains("/home/ann"),
            "{}",
            result_json(&ran)
        );
        let blocked = Outcome::Blocked {
            decision: crate::audit::Decision::Denied,
            reason: "/home/ann/bin/tool is not allowed".into(),
        };
        assert_eq!(
            result_json(&blocked),
            r#"{"error":"not run: tool is not allowed","success":false}"#
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
