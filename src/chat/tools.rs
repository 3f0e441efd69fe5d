//! Native tool calling (DESIGN §6): each skill tool offered as a function `SKILL__ID` whose
//! parameters are its own `schema.json` (a free-form object when it has none), and each skill
//! script as `SKILL__STEM` with arguments `{args: [string], input: object}` → argv and stdin.

use crate::dispatch::Outcome;
use crate::model::{Message, ToolDef};
use crate::skills::{ResolvedScript, SkillSet, ToolInput};
use serde_json::{Value, json};
use std::collections::HashMap;

/// What a function name stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolTarget {
    /// The skill it belongs to.
    pub skill: String,
    /// The reference a directive would use: `SKILL:ID` for a tool, `SKILL/scripts/x.py`.
    pub reference: String,
    /// The arguments object is the JSON input itself (a tool that reads JSON on stdin).
    pub json_input: bool,
    /// The schema names a property `input` (then an `input` key is never a wrapper).
    pub has_input_property: bool,
}

impl ToolTarget {
    /// A plain script of `skill` (or one it may not run): its parameters are `{args, input}`.
    fn script(skill: String, reference: String) -> ToolTarget {
        ToolTarget {
            skill,
            reference,
            json_input: false,
            has_input_property: true,
        }
    }
}

/// Function name → what to run.
pub type ToolMap = HashMap<String, ToolTarget>;

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
    load_skill_args(&v)
}

/// [`load_skill_argv`] for arguments already parsed (MCP's `load_skill`).
pub fn load_skill_args(v: &Value) -> Result<Vec<String>, String> {
    let field = |k: &str| match v.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("`{k}` must be a string")),
    };
    let name = field("name")?.ok_or("`name` is required: the skill to load")?;
    let mut argv = vec![crate::scan::SKILL_READ.to_string(), name];
    argv.extend(field("file")?);
    Ok(argv)
}

/// The skill a capture body loads: `skill NAME [FILE]` (what the catalog tells the model to
/// write), as the `load_skill` tool does.
pub fn skill_loaded_by(body: &str) -> Option<String> {
    let argv = crate::command::parse_argv(body).ok()?;
    match argv.as_slice() {
        [builtin, name, ..] if builtin == crate::scan::SKILL_READ => Some(name.clone()),
        _ => None,
    }
}

/// The capture an answer ends with (the history keeps an answer cut at the capture that
/// ran), when it loads a skill.
fn skill_loaded_at_end(answer: &str) -> Option<String> {
    answer
        .rmatch_indices('!')
        .find_map(|(i, _)| crate::scan::parse_directive(&answer.as_bytes()[i..]))
        .filter(|d| d.kind == crate::scan::Kind::Capture)
        .and_then(|d| skill_loaded_by(&d.body))
}

/// The skills a conversation loaded, in order: with successful `load_skill` calls, or with a
/// `!{skill NAME}` capture whose result (the next message) was its output. A resumed
/// conversation offers their tools again, as the live one did.
pub fn loaded_skills(history: &[Message]) -> Vec<String> {
    let mut asked: Vec<(&str, String)> = Vec::new();
    let mut loaded: Vec<String> = Vec::new();
    let mut capture: Option<String> = None;
    for m in history {
        let found = match m {
            Message::Assistant {
                tool_calls,
                content,
            } => {
                for c in tool_calls.iter().filter(|c| c.name == LOAD_SKILL) {
                    if let Some(skill) = load_skill_argv(&c.arguments)
                        .ok()
                        .and_then(|argv| argv.into_iter().nth(1))
                    {
                        asked.push((c.id.as_str(), skill));
                    }
                }
                capture = skill_loaded_at_end(content);
                continue;
            }
            Message::Tool {
                call_id,
                is_error: false,
                ..
            } => asked
                .iter()
                .find(|(id, _)| id == call_id)
                .map(|(_, skill)| skill.clone()),
            // A capture's result: `Output:` is a success (see `result::capture_message`).
            Message::User(text) if text.starts_with("Output:") => capture.take(),
            _ => None,
        };
        capture = None;
        if let Some(skill) = found
            && !loaded.contains(&skill)
        {
            loaded.push(skill);
        }
    }
    loaded
}

/// The `{args, input}` parameters of a plain script. Every object in an offered schema has
/// properties (some function-calling APIs refuse one without), so `input` is text: a string
/// goes to stdin as written (JSON text for a script that reads JSON).
fn script_parameters() -> Value {
    json!({
        "type": "object",
        "description": "How the script is run: `args` become its command-line arguments, \
            `input` is given to it on stdin.",
        "properties": {
            "args": {"type": "array", "items": {"type": "string"},
                     "description": "command-line arguments, one string each"},
            "input": {"type": "string",
                      "description": "text given to the script on stdin (JSON text for a \
                          script that reads JSON)"}
        }
    })
}

/// The parameters of a tool that reads JSON on stdin and declares no schema: that JSON, as
/// text (an object with no properties is refused by some function-calling APIs).
fn json_text_parameters() -> Value {
    json!({
        "type": "object",
        "description": "How the tool is run: `input`, JSON text, is given to it on stdin.",
        "properties": {
            "input": {"type": "string",
                      "description": "the JSON text the tool reads on stdin"}
        },
        "required": ["input"]
    })
}

/// The parameters name a property `input`: then an `input` key is a field, never a wrapper.
fn declares_input(parameters: &Value) -> bool {
    parameters
        .get("properties")
        .is_some_and(|p| p.get("input").is_some())
}

/// The target of a script or tool resolved by name (`run SKILL SCRIPT`), so that its
/// `--input` is read exactly as a native call's arguments are (see [`parse_arguments`]).
pub fn target_of(resolved: &ResolvedScript) -> ToolTarget {
    let skill = resolved.skill.clone();
    match &resolved.tool {
        Some(t) if t.input == ToolInput::StdinJson => ToolTarget {
            reference: format!("{skill}:{}", t.id),
            skill,
            json_input: true,
            has_input_property: t.schema.as_ref().is_some_and(declares_input),
        },
        Some(t) => {
            let reference = format!("{skill}:{}", t.id);
            ToolTarget::script(skill, reference)
        }
        None => {
            let reference = crate::skills::script_reference(&skill, &resolved.rel_path);
            ToolTarget::script(skill, reference)
        }
    }
}

/// The functions to offer: each enabled tool and script of the skills that may run scripts,
/// under the unique names of [`crate::skills::functions`], then `load_skill`.
pub fn tool_defs(skills: &SkillSet) -> (Vec<ToolDef>, ToolMap) {
    let mut defs = Vec::new();
    let mut map = ToolMap::new();
    for f in crate::skills::functions(skills) {
        let description = match (&f.tool, f.description.is_empty()) {
            (Some(id), _) => format!("{} (tool {id} of skill {})", f.description, f.skill),
            (None, true) => {
                let about = skills.get(&f.skill).map_or("", |s| &s.description);
                format!("Run {} of skill {}: {about}", f.shown, f.skill)
            }
            (None, false) => format!("{} ({} of skill {})", f.description, f.shown, f.skill),
        };
        // A script with a schema beside it reads that JSON on stdin, like a tool: offer the schema.
        let (parameters, json_input) = match f.typed {
            Some(t) => {
                let json_input = t.input == ToolInput::StdinJson;
                let parameters = match (t.schema, json_input) {
                    (Some(schema), _) => schema,
                    (None, true) => json_text_parameters(),
                    (None, false) => script_parameters(),
                };
                (parameters, json_input)
            }
            None => (script_parameters(), false),
        };
        // `input` of the JSON-text parameters is the wrapper, not a field of the tool's own.
        let has_input_property =
            declares_input(&parameters) && parameters != json_text_parameters();
        defs.push(ToolDef {
            name: f.name.clone(),
            description,
            parameters,
        });
        map.insert(
            f.name,
            ToolTarget {
                skill: f.skill,
                reference: f.reference,
                json_input,
                has_input_property,
            },
        );
    }
    if !skills.is_empty() {
        defs.push(load_skill_def());
    }
    (defs, map)
}

/// Every function name of the skills whose `allowed-tools` forbid their scripts (never
/// offered), with its target: a call to one goes to the dispatcher like any other, whose
/// refusal names the tools the skill allows.
pub fn locked_targets(skills: &SkillSet) -> Vec<(String, ToolTarget)> {
    crate::skills::functions::locked(skills)
        .into_iter()
        .map(|f| (f.name, ToolTarget::script(f.skill, f.reference)))
        .collect()
}

/// The call's arguments → (argv after the script, stdin bytes). Models send the input both
/// bare (`{"path": "x"}`) and wrapped (`{"input": {"path": "x"}}`): both are accepted.
/// For a JSON tool the (unwrapped) object is the input; for a script, `args` are its argv and
/// `input`, or else the keys other than `args`, its stdin — in the order the caller wrote them.
pub fn parse_arguments(
    text: &str,
    target: &ToolTarget,
) -> Result<(Vec<String>, Option<Vec<u8>>), String> {
    let text = if text.trim().is_empty() { "{}" } else { text };
    let v: Value =
        serde_json::from_str(text).map_err(|e| format!("arguments are not valid JSON: {e}"))?;
    let Value::Object(mut obj) = v else {
        return Err("arguments must be a JSON object".into());
    };
    let to_bytes = |v: &Value| serde_json::to_vec(v).map_err(|e| e.to_string());
    if target.json_input {
        let input = match obj.shift_remove("input") {
            Some(inner @ Value::Object(_)) if obj.is_empty() && !target.has_input_property => inner,
            // JSON text for a tool without a schema (see `json_text_parameters`).
            Some(Value::String(text)) if obj.is_empty() && !target.has_input_property => {
                serde_json::from_str(&text)
                    .map_err(|e| format!("`input` must be JSON text: {e}"))?
            }
            Some(other) => {
                obj.insert("input".into(), other);
                Value::Object(obj)
            }
            None => Value::Object(obj),
        };
        return Ok((Vec::new(), Some(to_bytes(&input)?)));
    }
    let args = match obj.shift_remove("args") {
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
    let input = match obj.shift_remove("input") {
        Some(Value::Null) => None,
        // Text goes to stdin as written; any other value as JSON.
        Some(Value::String(text)) => return Ok((args, Some(text.into_bytes()))),
        Some(v) => Some(v),
        None if obj.is_empty() => None,
        None => Some(Value::Object(obj)),
    };
    Ok((args, input.as_ref().map(to_bytes).transpose()?))
}

/// A refusal as a tool result: short, without the paths of the user's machine, marked as an
/// error.
pub fn error_json(reason: &str) -> String {
    let reason = super::result::short_reason(reason);
    json!({"success": false, "is_error": true, "error": format!("not run: {reason}")}).to_string()
}

/// The tool message for an outcome: its content (DESIGN §3's result object without the script's
/// absolute path, which the model has no use for and would repeat; marked `"is_error": true` when
/// the command failed) and whether it is an error.
pub fn result_json(outcome: &Outcome) -> (String, bool) {
    match outcome {
        Outcome::Ran(ran) => {
            let mut v = crate::dispatch::result_json(ran);
            let failed = !ran.result.success();
            if let Some(obj) = v.as_object_mut() {
                obj.remove("script_path");
                // The model hears of the memory bound only when the run ran into it.
                if !ran.result.memory.oom_killed {
                    obj.remove("memory");
                }
                if failed {
                    obj.insert("is_error".into(), Value::Bool(true));
                }
                // The advice in the model's words: the user's names flags it cannot pass.
                if let Some(advice) = &ran.result.advice {
                    let hint = super::result::path_free(&advice.for_model, "");
                    obj.insert("hint".into(), Value::String(hint));
                }
            }
            (v.to_string(), failed)
        }
        Outcome::Blocked { for_model, .. } => {
            (error_json(super::result::first_line(for_model)), true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skills_loaded_by_tool_or_directive() {
        let ran = Outcome::Ran(crate::dispatch::Ran {
            result: crate::exec::RunResult {
                stdout: b"body".to_vec(),
                ..Default::default()
            },
            skill: None,
            script_path: None,
            cut: Box::default(),
        });
        // The message a successful capture gives the model, as the chat loop writes it.
        let success = crate::chat::result::capture_message(&ran, 1000, "");
        let history = vec![
            Message::user("use pdf"),
            Message::assistant("First the skill. !{skill pdf}"),
            Message::user(success.clone()),
            // Refused: not loaded.
            Message::assistant("!{skill nope}"),
            Message::user("Not run: no skill `nope`. — continue your answer."),
            // Not at the end of the answer: no capture that ran.
            Message::assistant("!{skill early} and more"),
            Message::user(success.clone()),
            Message::assistant("!{skill xlsx references/a.md}"),
            Message::user(success),
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![crate::model::ToolCall {
                    id: "c1".into(),
                    name: LOAD_SKILL.into(),
                    arguments: r#"{"name":"docx"}"#.into(),
                }],
            },
            Message::tool_result("c1", "{}", false),
        ];
        assert_eq!(loaded_skills(&history), ["pdf", "xlsx", "docx"]);
    }

    fn script() -> ToolTarget {
        ToolTarget::script("s".into(), "s/scripts/x.py".into())
    }

    fn json_tool(has_input_property: bool) -> ToolTarget {
        ToolTarget {
            skill: "s".into(),
            reference: "s:t".into(),
            json_input: true,
            has_input_property,
        }
    }

    fn stdin_of(text: &str, t: &ToolTarget) -> Value {
        serde_json::from_slice(&parse_arguments(text, t).unwrap().1.unwrap()).unwrap()
    }

    #[test]
    fn results_for_the_model_carry_no_absolute_paths() {
        use crate::dispatch::Ran;
        let ran = Outcome::Ran(Ran {
            result: Default::default(),
            skill: Some("calc".into()),
            script_path: Some("/home/ann/skills/calc/scripts/calc.py".into()),
            cut: Box::default(),
        });
        let (text, _) = result_json(&ran);
        assert!(!text.contains("/home/ann"), "{text}");
        let blocked = Outcome::Blocked {
            decision: crate::audit::Decision::Denied,
            reason: "/home/ann/bin/tool is not allowed".into(),
            for_model: "/home/ann/bin/tool is not allowed".into(),
            denied: None,
        };
        let (text, is_error) = result_json(&blocked);
        assert!(is_error);
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({"error": "not run: tool is not allowed", "is_error": true, "success": false})
        );
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
        for (text, why) in [("{}", "`name` is required"), (r#"{"name":1}"#, "string")] {
            let e = load_skill_argv(text).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
    }

    #[test]
    fn arguments_map_to_argv_and_stdin() {
        let (args, input) =
            parse_arguments(r#"{"args":["ephemeral", 3],"input":{"a":1}}"#, &script()).unwrap();
        assert_eq!(args, vec!["ephemeral", "3"]);
        assert_eq!(input.unwrap(), br#"{"a":1}"#.to_vec());
        assert_eq!(parse_arguments("", &script()).unwrap(), (vec![], None));
        for (text, why) in [
            ("[1]", "object"),
            (r#"{"args":[{}]}"#, "list of strings"),
            ("{", "not valid JSON"),
        ] {
            let e = parse_arguments(text, &script()).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
        // A script's input without the wrapper is not dropped.
        assert_eq!(stdin_of(r#"{"word":"x"}"#, &script()), json!({"word": "x"}));
    }

    #[test]
    fn a_scripts_keys_keep_their_order_on_stdin() {
        let (args, input) =
            parse_arguments(r#"{"args":["x"],"zeta":1,"alpha":2,"mid":3}"#, &script()).unwrap();
        assert_eq!(args, ["x"]);
        assert_eq!(input.unwrap(), br#"{"zeta":1,"alpha":2,"mid":3}"#.to_vec());
    }

    #[test]
    fn tool_input_with_or_without_the_wrapper() {
        let t = json_tool(false);
        assert_eq!(stdin_of(r#"{"a":1}"#, &t), json!({"a": 1}));
        assert_eq!(stdin_of(r#"{"input":{"a":1}}"#, &t), json!({"a": 1}));
        assert_eq!(stdin_of("", &t), json!({}));
        // `input` next to other keys, or declared by the schema, is a field.
        assert_eq!(
            stdin_of(r#"{"input":{"a":1},"b":2}"#, &t),
            json!({"input": {"a": 1}, "b": 2})
        );
        assert_eq!(
            stdin_of(r#"{"input":{"a":1}}"#, &json_tool(true)),
            json!({"input": {"a": 1}})
        );
    }
}
