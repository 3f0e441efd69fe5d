//! Script tools: a folder `tools/{id}/` (in a skill, or in any folder with the same layout)
//! holding `tool.yaml`, an optional `schema.json` (JSON Schema of the input object) and an
//! optional `description.md`. A tool is a script with typed input: its arguments arrive as one
//! JSON object on stdin, built from a directive's `--flags` or taken from a native tool call,
//! and validated against the schema before anything runs.
//!
//! Loading is strict per tool: a tool with any problem is left out (a typo such as
//! `enabeld: false` must not leave a tool enabled), with a `file:line: message` for each problem.

use super::TOOLS_DIR;
use super::frontmatter::{self, Entry, Node};
use serde_json::{Map, Value};
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Longest `timeout` a tool may ask for, as for `timeout_seconds`.
const MAX_TIMEOUT: u64 = 600;
/// A `timeout` from this value up is milliseconds (claude-prompts-mcp's unit; its default is
/// 30000): below it, seconds (skillpipe's own, 1..=600).
const MILLIS_FROM: u64 = 1000;
/// Schema violations listed in one refusal.
const MAX_REPORTED: usize = 5;
/// Variables a tool's `env` may not set: skillpipe owns them.
const RESERVED_ENV: &[&str] = &[
    "SKILL_NAME",
    "SKILL_BASE_DIR",
    "SKILL_VERSION",
    "SKILLPIPE_VERSION",
    "TMPDIR",
];

/// Why a tool's `env` may not set `name`, if it may not. The sandbox launcher is skillpipe itself
/// and runs with the command's environment before its restrictions apply, so variables the
/// dynamic loader, libc or skillpipe read would act outside the sandbox (`LD_PRELOAD` runs code
/// there); `PATH` is the policy's to set.
fn env_refusal(name: &str) -> Option<&'static str> {
    const LOADER: &[&str] = &["LD_", "GLIBC_", "MALLOC_", "SKILLPIPE_"];
    const EXACT: &[&str] = &[
        "PATH",
        "GCONV_PATH",
        "LOCPATH",
        "NLSPATH",
        "HOSTALIASES",
        "RESOLV_HOST_CONF",
    ];
    if RESERVED_ENV.contains(&name) {
        Some("skillpipe sets this variable")
    } else if EXACT.contains(&name) || LOADER.iter().any(|p| name.starts_with(p)) {
        Some("it would act outside the sandbox or the policy; set it in the script instead")
    } else {
        None
    }
}

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
    /// `enabled: false` hides the tool from directives, the prompt and native tools.
    pub enabled: bool,
    /// The tool.yaml setting that disabled it, as written there (`enabled: false`,
    /// `execution.trigger: never`), for saying why; None when it is enabled.
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

/// The `type` of a schema property, when it names one (`["number","null"]` → `number`).
fn type_of(prop: &Value) -> Option<&str> {
    match prop.get("type")? {
        Value::String(s) => Some(s),
        _ => types_of(Some(prop)).into_iter().find(|t| *t != "null"),
    }
}

/// Every `type` a schema property lists, in its order (`["integer","null"]`, or the one).
fn types_of(prop: Option<&Value>) -> Vec<&str> {
    match prop.and_then(|p| p.get("type")) {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Directive flags → a JSON object, typed by `schema`'s properties. Pure.
///
/// `--input-path x` and `--input-path=x` give `"input_path": "x"` (kebab-case to snake_case;
/// a property written with hyphens in the schema keeps them). Values become what the property's
/// `type` says: `integer`, `number`, `boolean` (a bare `--flag` is true, `--no-flag` false),
/// `array` (the flag repeated, one value each, items typed by `items`: `--tags a --tags b`; a
/// second word after one value is refused, saying so), `object` (JSON text); a list of types
/// (`["integer","null"]`) is tried in its order, the first that reads the value wins; without a
/// type (or without a schema) a bare flag is true, a number stays a number, anything else is text.
/// `Err((field, message))` names the flag that was wrong.
pub fn flags_to_json(
    schema: Option<&Value>,
    args: &[String],
) -> Result<Map<String, Value>, (Option<String>, String)> {
    let props = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let mut out = Map::new();
    let mut i = 0;
    // The array flag whose value came just before, as written (`tags`).
    let mut after_array: Option<(String, String)> = None;
    while i < args.len() {
        let word = &args[i];
        i += 1;
        let Some(flag) = word.strip_prefix("--").filter(|f| !f.is_empty()) else {
            if let Some((key, flag)) = after_array {
                return Err((
                    Some(key),
                    format!(
                        "unexpected argument `{word}`: `--{flag}` takes one value; give a list by repeating the flag: `--{flag} a --{flag} b`"
                    ),
                ));
            }
            return Err((
                None,
                format!(
                    "unexpected argument `{word}`: this tool takes --name value flags{}",
                    known_flags(props)
                ),
            ));
        };
        after_array = None;
        let (flag, inline) = match flag.split_once('=') {
            Some((f, v)) => (f, Some(v.to_owned())),
            None => (flag, None),
        };
        let (key, negated) = key_for(flag, props);
        let prop = props.and_then(|p| p.get(&key));
        if props.is_some() && prop.is_none() && schema_closed(schema) {
            return Err((
                Some(key),
                format!("unknown flag `--{flag}`{}", known_flags(props)),
            ));
        }
        let ty = prop.and_then(type_of);
        let next_is_value = args.get(i).is_some_and(|n| !n.starts_with("--"));
        let value = match ty {
            Some("boolean") => {
                // `["boolean","null"]`: `--flag null` is the other type's value.
                let others: Vec<&str> = types_of(prop)
                    .into_iter()
                    .filter(|t| *t != "boolean")
                    .collect();
                let other_value = |n: &String| {
                    !n.starts_with("--") && !others.is_empty() && typed_as(n, &others).is_ok()
                };
                let text = match inline {
                    Some(v) => Some(v),
                    None if args
                        .get(i)
                        .is_some_and(|n| n == "true" || n == "false" || other_value(n)) =>
                    {
                        i += 1;
                        Some(args[i - 1].clone())
                    }
                    None => None,
                };
                match text.as_deref() {
                    None => Value::Bool(!negated),
                    Some("true") => Value::Bool(!negated),
                    Some("false") => Value::Bool(negated),
                    Some(other) if !negated && !others.is_empty() => {
                        typed_as(other, &types_of(prop)).map_err(|m| (Some(key.clone()), m))?
                    }
                    Some(other) => {
                        return Err((Some(key), format!("`{other}` is not true or false")));
                    }
                }
            }
            _ => {
                let text = match inline {
                    Some(v) => v,
                    None if next_is_value => {
                        i += 1;
                        args[i - 1].clone()
                    }
                    None if ty.is_none() => {
                        out.insert(key, Value::Bool(true));
                        continue;
                    }
                    None => return Err((Some(key), format!("`--{flag}` needs a value"))),
                };
                let item_types = match ty {
                    Some("array") => types_of(prop.and_then(|p| p.get("items"))),
                    _ => types_of(prop),
                };
                let value = typed_as(&text, &item_types).map_err(|m| (Some(key.clone()), m))?;
                if ty == Some("array") {
                    after_array = Some((key.clone(), flag.to_owned()));
                    // Only arrays are ever stored under an array property's key.
                    if let Value::Array(items) = out
                        .entry(key.clone())
                        .or_insert_with(|| Value::Array(Vec::new()))
                    {
                        items.push(value);
                    }
                    continue;
                }
                value
            }
        };
        if out.contains_key(&key) {
            return Err((Some(key), format!("`--{flag}` is given twice")));
        }
        out.insert(key, value);
    }
    Ok(out)
}

/// The property key for a flag: the schema's own spelling if it has one, else snake_case.
/// `--no-x` means `x: false` when `x` is a boolean property. Returns (key, negated).
fn key_for(flag: &str, props: Option<&Map<String, Value>>) -> (String, bool) {
    let snake = flag.replace('-', "_");
    if let Some(props) = props {
        for candidate in [flag, snake.as_str()] {
            if props.contains_key(candidate) {
                return (candidate.to_owned(), false);
            }
        }
        if let Some(rest) = flag.strip_prefix("no-") {
            let base = rest.replace('-', "_");
            for candidate in [rest, base.as_str()] {
                if props
                    .get(candidate)
                    .is_some_and(|p| type_of(p) == Some("boolean"))
                {
                    return (candidate.to_owned(), true);
                }
            }
        }
    }
    (snake, false)
}

/// Whether the schema refuses keys it does not list (`additionalProperties: false`).
fn schema_closed(schema: Option<&Value>) -> bool {
    schema
        .and_then(|s| s.get("additionalProperties"))
        .is_some_and(|v| v == &Value::Bool(false))
}

fn known_flags(props: Option<&Map<String, Value>>) -> String {
    match props {
        Some(p) if !p.is_empty() => format!(
            " (its flags: {})",
            p.keys()
                .map(|k| format!("--{}", k.replace('_', "-")))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => String::new(),
    }
}

/// One flag value as the first of `types` that reads it (none: as [`typed`] without a type).
/// The refusal names every type tried: "`abc` is not an integer or null".
fn typed_as(text: &str, types: &[&str]) -> Result<Value, String> {
    match types {
        [] => typed(text, None),
        [one] => typed(text, Some(one)),
        many => many
            .iter()
            .find_map(|t| typed(text, Some(t)).ok())
            .ok_or_else(|| {
                let nouns: Vec<&str> = many.iter().map(|t| type_noun(t)).collect();
                format!("`{text}` is not {}", nouns.join(" or "))
            }),
    }
}

/// A JSON Schema type as a refusal names it.
fn type_noun(ty: &str) -> &str {
    match ty {
        "integer" => "an integer",
        "number" => "a number",
        "boolean" => "true or false",
        "object" => "a JSON object",
        "array" => "a JSON array",
        "string" => "text",
        other => other,
    }
}

/// One flag value as JSON of type `ty` (`None`: a number if it is one, else text).
fn typed(text: &str, ty: Option<&str>) -> Result<Value, String> {
    match ty {
        Some("integer") => text
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("`{text}` is not an integer")),
        Some("number") => match serde_json::from_str::<Value>(text.trim()) {
            Ok(v @ Value::Number(_)) => Ok(v),
            _ => Err(format!("`{text}` is not a number")),
        },
        Some("boolean") => match text {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(format!("`{text}` is not true or false")),
        },
        Some("object") | Some("array") => {
            serde_json::from_str(text).map_err(|e| format!("`{text}` is not JSON: {e}"))
        }
        Some("null") if text == "null" => Ok(Value::Null),
        Some("null") => Err(format!("`{text}` is not null")),
        Some("string") => Ok(Value::String(text.to_owned())),
        _ => match serde_json::from_str::<Value>(text.trim()) {
            Ok(v @ Value::Number(_)) if ty.is_none() => Ok(v),
            _ => Ok(Value::String(text.to_owned())),
        },
    }
}

/// Loads every tool folder under `owner/tools/`, sorted by id. Returns the tools (disabled ones
/// included, marked) and the problems, `file:line: message`, of the tools left out.
pub fn load_tools(owner: &Path) -> (Vec<Tool>, Vec<String>) {
    let root = owner.join(TOOLS_DIR);
    let Ok(entries) = fs::read_dir(&root) else {
        return (Vec::new(), Vec::new());
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut tools = Vec::new();
    let mut problems = Vec::new();
    for dir in dirs {
        match load_tool(&dir) {
            Ok(t) => tools.push(t),
            Err(mut p) => problems.append(&mut p),
        }
    }
    (tools, problems)
}

/// Loads one tool folder, or says everything that is wrong with it.
pub fn load_tool(dir: &Path) -> Result<Tool, Vec<String>> {
    let folder = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let yaml_path = dir.join("tool.yaml");
    let shown = yaml_path.display().to_string();
    let mut problems = Vec::new();
    let text = fs::read_to_string(&yaml_path).map_err(|e| {
        vec![format!(
            "{shown}:1: cannot read: {e}; a tool folder needs a tool.yaml (id, script, ...)"
        )]
    })?;
    let entries = frontmatter::parse_mapping(&text)
        .map_err(|e| vec![format!("{shown}:{}: {}", e.line, e.message)])?;
    let mut p = |line: usize, msg: String| problems.push(format!("{shown}:{line}: {msg}"));
    let k = tool_keys(dir, &folder, &entries, &mut p);
    if k.id.is_none() && !entries.iter().any(|e| e.key == "id") {
        p(1, format!("missing key `id` (the folder name, `{folder}`)"));
    }
    // Without a runtime (or `auto`) the interpreter comes from the script itself; one that
    // names none could never run, so it is refused here, where `skills validate` reports it.
    if let (Some(file), None) = (&k.script, &k.runtime)
        && super::scripts::interpreter_for(file, &dir.join(file), "node").is_none()
    {
        let line = entries
            .iter()
            .find(|e| e.key == "script")
            .map_or(1, |e| e.line);
        p(
            line,
            format!(
                "key `script`: no interpreter for `{file}`: give it a known extension (.py, .sh, \
                 .js, .ts, .rb, .pl) or a #! line, or name one in `runtime`"
            ),
        );
    }
    if k.script.is_none() && !entries.iter().any(|e| e.key == "script") {
        p(
            1,
            "missing key `script` (the file in this folder that runs)".into(),
        );
    }

    let (schema, validator) = match load_schema(&dir.join("schema.json")) {
        Ok(Some((s, v))) => (Some(s), Some(Arc::new(v))),
        Ok(None) => (None, None),
        Err(e) => {
            problems.push(e.to_string());
            (None, None)
        }
    };
    if schema.is_some() && k.input == ToolInput::Argv {
        problems.push(format!(
            "{shown}:{}: key `input`: a tool with a schema.json takes its input as JSON (`input: json`)",
            k.input_line.unwrap_or(1)
        ));
    }
    let description = match fs::read_to_string(dir.join("description.md")) {
        Ok(text) => text.trim().to_owned(),
        Err(_) => k.description.unwrap_or_default(),
    };
    // With neither, the script's own doc comment says what it does, as for a plain script.
    let description = match (&k.script, description.is_empty()) {
        (Some(file), true) => super::scripts::describe_file(&dir.join(file)),
        _ => description,
    };
    let disabled_by = match (k.off_by_key, k.off_by_trigger) {
        (false, false) => None,
        (true, false) => Some("enabled: false"),
        (false, true) => Some("execution.trigger: never"),
        (true, true) => Some("enabled: false and execution.trigger: never"),
    };
    match (k.id, k.script) {
        (Some(id), Some(script)) if problems.is_empty() => Ok(Tool {
            name: k.name.unwrap_or_else(|| id.clone()),
            script: format!("{TOOLS_DIR}/{id}/{script}"),
            id,
            description,
            schema,
            runtime: k.runtime,
            timeout: k.timeout,
            confirm: k.confirm,
            env: k.env,
            enabled: disabled_by.is_none(),
            disabled_by,
            input: k.input,
            validator,
        }),
        _ => Err(problems),
    }
}

/// What a tool.yaml's keys say, each checked on its own.
#[derive(Default)]
struct ToolKeys {
    id: Option<String>,
    name: Option<String>,
    description: Option<String>,
    runtime: Option<String>,
    script: Option<String>,
    timeout: Option<Duration>,
    env: Vec<(String, String)>,
    off_by_key: bool,
    off_by_trigger: bool,
    confirm: bool,
    input: ToolInput,
    /// Where `input` is written, for a problem that involves it.
    input_line: Option<usize>,
}

/// A step of `load_tool`: each key of tool.yaml read and checked alone (its problems to `p`).
/// Long on purpose: one match arm per key of tool.yaml, a closed set.
fn tool_keys(
    dir: &Path,
    folder: &str,
    entries: &[Entry],
    p: &mut impl FnMut(usize, String),
) -> ToolKeys {
    let mut k = ToolKeys::default();
    for Entry { key, line, value } in entries {
        let line = *line;
        if key == "input" {
            k.input_line = Some(line);
        }
        let not = |what: &str| format!("key `{key}` must be {what}, not {}", value.kind());
        match key.as_str() {
            "id" => match value {
                Node::Str(s) if *s == folder => k.id = Some(s.clone()),
                Node::Str(s) => p(
                    line,
                    format!("key `id`: `{s}` must equal the folder name `{folder}`"),
                ),
                _ => p(line, not("a string")),
            },
            "name" => match value.scalar_text() {
                Some(s) if !s.trim().is_empty() && !matches!(value, Node::Null) => {
                    k.name = Some(s.trim().to_owned())
                }
                _ => p(line, "key `name` must be a non-empty string".into()),
            },
            "description" => match value {
                Node::Str(s) => k.description = Some(s.trim().to_owned()),
                _ => p(line, not("a string")),
            },
            "runtime" => match value {
                // claude-prompts-mcp's default: the interpreter for the script's extension.
                Node::Str(s) if s == "auto" => k.runtime = None,
                Node::Str(s) if valid_program(s) => k.runtime = Some(runtime_interpreter(s)),
                _ => p(
                    line,
                    "key `runtime` must be an interpreter name such as python3, bash or node \
                     (or auto: by the script's extension or #! line)"
                        .into(),
                ),
            },
            "script" => match value {
                Node::Str(s) => match check_script(dir, s) {
                    Ok(()) => k.script = Some(s.clone()),
                    Err(why) => p(line, format!("key `script`: {why}")),
                },
                _ => p(line, not("a file name")),
            },
            "timeout" => match value {
                Node::Int(n) => match timeout_of(*n) {
                    Ok(d) => k.timeout = Some(d),
                    Err(why) => p(line, why),
                },
                _ => p(line, timeout_of(0).unwrap_err()),
            },
            "execution" => {
                let (asks, runs) = execution(value, line, p);
                k.confirm |= asks;
                k.off_by_trigger |= !runs;
            }
            "env" => match value {
                Node::Map(vars) => env_vars(vars, &mut k.env, p),
                _ => p(line, not("a mapping of NAME: value")),
            },
            "enabled" => match value {
                // Kept apart: `execution.trigger: never` stays off whatever the key order.
                Node::Bool(b) => k.off_by_key = !*b,
                _ => p(line, "key `enabled` must be true or false".into()),
            },
            "input" => match value {
                Node::Str(s) if s == "json" => k.input = ToolInput::StdinJson,
                Node::Str(s) if s == "args" => k.input = ToolInput::Argv,
                _ => p(
                    line,
                    "key `input` must be `json` (an object on stdin) or `args` (argv)".into(),
                ),
            },
            other => p(
                line,
                format!(
                    "unknown key `{other}` (known: id, name, description, runtime, script, timeout, env, enabled, input, execution)"
                ),
            ),
        }
    }
    k
}

/// A step of `tool_keys`: the `env` mapping's variables, each a name a tool may set.
fn env_vars(vars: &[Entry], env: &mut Vec<(String, String)>, p: &mut impl FnMut(usize, String)) {
    for v in vars {
        let ok_name = !v.key.is_empty()
            && !v.key.starts_with(|c: char| c.is_ascii_digit())
            && v.key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        match v.value.scalar_text() {
            _ if !ok_name => p(v.line, format!("key `env.{}`: not a variable name", v.key)),
            _ if let Some(why) = env_refusal(&v.key) => {
                p(v.line, format!("key `env.{}`: {why}", v.key))
            }
            Some(text) => env.push((v.key.clone(), text)),
            None => p(
                v.line,
                format!(
                    "key `env.{}` must be a string, not {}",
                    v.key,
                    v.value.kind()
                ),
            ),
        }
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
        enabled: true,
        validator: Some(Arc::new(validator)),
        ..Tool::default()
    }))
}

/// The interpreter a `runtime:` names. claude-prompts-mcp's `python` is `python3` (the name
/// `allowed_interpreters` knows) and its `shell` is `bash`, which its runner starts for it.
fn runtime_interpreter(name: &str) -> String {
    match name {
        "shell" => "bash".to_owned(),
        other => super::scripts::interpreter_name(other),
    }
}

/// A tool's `timeout:` — whole seconds (1..=600), or milliseconds from 1000 up (to 600000), the
/// unit of claude-prompts-mcp's tool.yaml; 601..=999 is neither, and refused.
fn timeout_of(n: i128) -> Result<Duration, String> {
    let max_ms = MAX_TIMEOUT * 1000;
    match u64::try_from(n) {
        Ok(s @ 1..=MAX_TIMEOUT) => Ok(Duration::from_secs(s)),
        Ok(ms) if (MILLIS_FROM..=max_ms).contains(&ms) => Ok(Duration::from_millis(ms)),
        _ => Err(format!(
            "key `timeout` must be whole seconds (1..={MAX_TIMEOUT}) or milliseconds \
             ({MILLIS_FROM}..={max_ms}, as claude-prompts-mcp writes it)"
        )),
    }
}

/// claude-prompts-mcp's `execution:` block → (asks for confirmation, may run). `confirm: true`
/// (or the older `mode: confirm`) asks before each run; `trigger: never` disables the tool.
/// What has no meaning here is accepted and does nothing: a tool runs only when it is called
/// by name (so `trigger` `schema_match`/`explicit`/`always` all mean that), its input is always
/// validated against the whole schema before it runs (`strict`), and nothing lifts the
/// confirmation (`autoApproveOnValid`, `confirm: false`). Problems go to `p` with their line.
fn execution(value: &Node, line: usize, p: &mut impl FnMut(usize, String)) -> (bool, bool) {
    let Node::Map(entries) = value else {
        p(
            line,
            format!(
                "key `execution` must be a mapping (trigger, confirm, strict, ...), not {}",
                value.kind()
            ),
        );
        return (false, true);
    };
    let (mut asks, mut runs) = (false, true);
    for e in entries {
        let key = format!("execution.{}", e.key);
        let line = if e.line == 0 { line } else { e.line };
        let is_bool = matches!(e.value, Node::Bool(_));
        match (e.key.as_str(), &e.value) {
            ("trigger", Node::Str(t)) => match t.as_str() {
                "schema_match" | "parameter_match" | "explicit" | "always" => {}
                "never" => runs = false,
                _ => p(
                    line,
                    format!(
                        "key `{key}` must be schema_match, explicit, always or never, not `{t}`"
                    ),
                ),
            },
            ("confirm", Node::Bool(b)) => asks |= *b,
            ("mode", Node::Str(m)) => match m.as_str() {
                "confirm" => asks = true,
                "auto" | "manual" => {}
                _ => p(
                    line,
                    format!("key `{key}` must be auto, manual or confirm, not `{m}`"),
                ),
            },
            ("strict" | "autoApproveOnValid", _) if is_bool => {}
            ("confirmMessage", Node::Str(_)) => {}
            ("confidence", Node::Int(_) | Node::Float(_)) => {}
            ("trigger" | "mode" | "confirmMessage", other) => p(
                line,
                format!("key `{key}` must be a string, not {}", other.kind()),
            ),
            ("confirm" | "strict" | "autoApproveOnValid", _) => {
                p(line, format!("key `{key}` must be true or false"))
            }
            ("confidence", _) => p(line, format!("key `{key}` must be a number")),
            (other, _) => p(
                line,
                format!(
                    "unknown key `execution.{other}` (known: trigger, confirm, strict, \
                     confirmMessage, autoApproveOnValid, mode, confidence)"
                ),
            ),
        }
    }
    (asks, runs)
}

fn valid_program(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The script must be a plain relative path inside the tool folder, and exist.
fn check_script(dir: &Path, rel: &str) -> Result<(), String> {
    let lexical_ok = !rel.is_empty()
        && Path::new(rel)
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    if !lexical_ok {
        return Err(format!("`{rel}` must be a path inside the tool folder"));
    }
    if !dir.join(rel).is_file() {
        return Err(format!("`{rel}` is not a file in {}", dir.display()));
    }
    Ok(())
}

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
fn load_schema(path: &Path) -> Result<Option<(Value, jsonschema::Validator)>, SchemaError> {
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
            line: key_line(&text, "type"),
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
        // The crate names its build option for a `$ref` to another document; for the skill's
        // author the fact is that skillpipe fetches none (a run must not reach the network).
        let reason = e.to_string();
        let elsewhere = [
            "resolve-http",
            "resolve-file",
            "is not present in a registry",
        ];
        let reason = if elsewhere.iter().any(|w| reason.contains(w)) {
            "a `$ref` to another document (a URL or file) is not followed: skillpipe loads no \
             schema from elsewhere; put the definition in this file under `$defs` and refer \
             to it as `#/$defs/NAME`"
                .to_string()
        } else {
            reason
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

/// The first line where `"key"` appears as a key (1 when not found).
fn key_line(text: &str, key: &str) -> usize {
    key_line_from(text, key, 0).unwrap_or(1)
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
    use serde_json::json;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "input_path": {"type": "string"},
                "threshold": {"type": "number"},
                "limit": {"type": "integer"},
                "verbose": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "opts": {"type": "object"}
            },
            "required": ["input_path"]
        })
    }

    #[test]
    fn flags_become_typed_snake_case_keys() {
        let s = schema();
        let m = flags_to_json(
            Some(&s),
            &args(&[
                "--input-path",
                "data.csv",
                "--threshold",
                "0.9",
                "--limit=3",
                "--verbose",
                "--tags",
                "a",
                "--tags",
                "b",
                "--opts",
                "{\"x\":1}",
            ]),
        )
        .unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"input_path": "data.csv", "threshold": 0.9, "limit": 3, "verbose": true,
                   "tags": ["a", "b"], "opts": {"x": 1}})
        );
        let m = flags_to_json(Some(&s), &args(&["--no-verbose", "--input-path", "-"])).unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"verbose": false, "input_path": "-"})
        );
    }

    #[test]
    fn a_list_of_types_is_tried_in_its_order() {
        let s = json!({"type": "object", "properties": {
            "v": {"type": ["number", "string"]},
            "n": {"type": ["integer", "null"]},
            "b": {"type": ["boolean", "null"]},
            "ids": {"type": "array", "items": {"type": ["integer", "string"]}}}});
        let m = flags_to_json(Some(&s), &args(&["--v", "abc", "--n", "null"])).unwrap();
        assert_eq!(Value::Object(m), json!({"v": "abc", "n": null}));
        let m = flags_to_json(Some(&s), &args(&["--v", "2.5", "--n", "7"])).unwrap();
        assert_eq!(Value::Object(m), json!({"v": 2.5, "n": 7}));
        let m = flags_to_json(
            Some(&s),
            &args(&["--b", "null", "--ids", "1", "--ids", "x"]),
        );
        assert_eq!(
            Value::Object(m.unwrap()),
            json!({"b": null, "ids": [1, "x"]})
        );
        let m = flags_to_json(Some(&s), &args(&["--b"])).unwrap();
        assert_eq!(Value::Object(m), json!({"b": true}));
        // Neither type reads it: both are named.
        let e = flags_to_json(Some(&s), &args(&["--n", "abc"])).unwrap_err();
        assert_eq!(
            e,
            (Some("n".into()), "`abc` is not an integer or null".into())
        );
    }

    #[test]
    fn without_a_schema_numbers_and_bare_flags_are_typed() {
        let m = flags_to_json(None, &args(&["--n", "2", "--name", "x y", "--dry-run"])).unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"n": 2, "name": "x y", "dry_run": true})
        );
    }

    #[test]
    fn bad_flags_name_the_field() {
        let s = schema();
        let e = flags_to_json(Some(&s), &args(&["--threshold", "high"])).unwrap_err();
        assert_eq!(
            e,
            (Some("threshold".into()), "`high` is not a number".into())
        );
        let e = flags_to_json(Some(&s), &args(&["--limit", "2.5"])).unwrap_err();
        assert_eq!(e.0.as_deref(), Some("limit"));
        let e = flags_to_json(Some(&s), &args(&["data.csv"])).unwrap_err();
        assert!(e.1.contains("unexpected argument `data.csv`"), "{e:?}");
        assert!(e.1.contains("--input-path"), "{e:?}");
        // A list is the flag repeated; a second value after one is refused, saying so.
        let e = flags_to_json(Some(&s), &args(&["--tags", "a", "b"])).unwrap_err();
        assert_eq!(e.0.as_deref(), Some("tags"));
        assert!(e.1.contains("`--tags a --tags b`"), "{e:?}");
        let m = flags_to_json(Some(&s), &args(&["--tags", "a", "--tags=b"])).unwrap();
        assert_eq!(m["tags"], json!(["a", "b"]));
        let e = flags_to_json(Some(&s), &args(&["--limit", "1", "--limit", "2"])).unwrap_err();
        assert!(e.1.contains("given twice"), "{e:?}");
        let mut closed = schema();
        closed["additionalProperties"] = json!(false);
        let e = flags_to_json(Some(&closed), &args(&["--colour", "red"])).unwrap_err();
        assert_eq!(e.0.as_deref(), Some("colour"));
    }

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
    }

    #[test]
    fn env_cannot_reach_the_loader_or_the_policy() {
        for name in [
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "GLIBC_TUNABLES",
            "PATH",
            "GCONV_PATH",
        ] {
            assert!(env_refusal(name).is_some(), "{name}");
        }
        assert!(env_refusal("SKILLPIPE_LAUNCHER_MARKER").is_some());
        assert_eq!(env_refusal("TMPDIR"), Some("skillpipe sets this variable"));
        // Positive control: an ordinary variable is allowed.
        assert_eq!(env_refusal("LANG"), None);
        assert_eq!(env_refusal("MY_PATH"), None);
    }

    #[test]
    fn flags_are_listed_in_the_schemas_own_property_order() {
        let schema = r#"{"type": "object", "properties": {"zeta": {"type": "string"},
                "alpha": {"type": "integer"}, "mid": {"type": "boolean"},
                "tags": {"type": "array"}, "ids": {"type": "array"}},
                "required": ["zeta", "ids"]}"#;
        let (_d, tool) = tool_in("id: t\nscript: run.sh\n", &[("schema.json", schema)]);
        // An array is its flag repeated, as the parser reads it.
        assert_eq!(
            tool.unwrap().flag_usage(),
            "--zeta TEXT [--alpha INTEGER] [--mid] [--tags VALUE]... --ids VALUE [--ids VALUE]..."
        );
    }

    #[test]
    fn a_tool_without_a_description_is_described_by_its_script() {
        let stats = (
            "stats.py",
            "#!/usr/bin/env python3\n\"\"\"Summarise a CSV column.\"\"\"\nimport sys\n",
        );
        let (_d, t) = tool_in("id: t\nscript: stats.py\n", &[stats]);
        assert_eq!(t.unwrap().description, "Summarise a CSV column.");
        // tool.yaml's own description wins over the comment.
        let yaml = "id: t\nscript: stats.py\ndescription: Column stats.\n";
        assert_eq!(
            tool_in(yaml, &[stats]).1.unwrap().description,
            "Column stats."
        );
    }

    #[test]
    fn input_args_with_a_schema_names_the_line_of_input() {
        let schema = [("schema.json", r#"{"type": "object"}"#)];
        let (_d, t) = tool_in("id: t\nscript: run.sh\ninput: args\n", &schema);
        let problems = t.unwrap_err();
        assert!(
            problems.iter().any(|p| p.ends_with(
                "tool.yaml:3: key `input`: a tool with a \
                 schema.json takes its input as JSON (`input: json`)"
            )),
            "{problems:?}"
        );
        // Positive control: `input: json` loads.
        assert!(
            tool_in("id: t\nscript: run.sh\ninput: json\n", &schema)
                .1
                .is_ok()
        );
    }

    #[test]
    fn a_tool_yaml_setting_ld_preload_is_refused_with_its_line() {
        let (_d, t) =
            tool_with("id: t\nscript: run.sh\nenv:\n  LANG: C\n  LD_PRELOAD: /tmp/x.so\n");
        let problems = t.unwrap_err();
        assert!(
            problems
                .iter()
                .any(|p| p.contains(":5: key `env.LD_PRELOAD`")),
            "{problems:?}"
        );
        // Positive control: without it the folder loads, with LANG set.
        let (_d, tool) = tool_with("id: t\nscript: run.sh\nenv:\n  LANG: C\n");
        assert_eq!(
            tool.unwrap().env,
            vec![("LANG".to_string(), "C".to_string())]
        );
    }

    /// A tool folder `t` holding `run.sh`, `run.py`, an extensionless `plain` and `files`, with
    /// `yaml` as its tool.yaml, loaded.
    fn tool_in(
        yaml: &str,
        files: &[(&str, &str)],
    ) -> (tempfile::TempDir, Result<Tool, Vec<String>>) {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("t");
        std::fs::create_dir(&t).unwrap();
        std::fs::write(t.join("run.sh"), "echo hi\n").unwrap();
        std::fs::write(t.join("run.py"), "print(1)\n").unwrap();
        std::fs::write(t.join("plain"), "echo plain\n").unwrap();
        for (name, text) in files {
            std::fs::write(t.join(name), text).unwrap();
        }
        std::fs::write(t.join("tool.yaml"), yaml).unwrap();
        let loaded = load_tool(&t);
        (dir, loaded)
    }

    fn tool_with(yaml: &str) -> (tempfile::TempDir, Result<Tool, Vec<String>>) {
        tool_in(yaml, &[])
    }

    #[test]
    fn a_timeout_is_seconds_below_1000_and_milliseconds_from_1000() {
        assert_eq!(timeout_of(10), Ok(Duration::from_secs(10)));
        assert_eq!(timeout_of(600), Ok(Duration::from_secs(600)));
        assert_eq!(timeout_of(5000), Ok(Duration::from_secs(5)));
        assert_eq!(timeout_of(1500), Ok(Duration::from_millis(1500)));
        assert_eq!(timeout_of(600_000), Ok(Duration::from_secs(600)));
        for bad in [0, -1, 601, 999, 600_001] {
            assert!(timeout_of(bad).is_err(), "{bad}");
        }
        let (_d, t) = tool_with("id: t\nscript: run.py\ntimeout: 30000\n");
        assert_eq!(t.unwrap().timeout, Some(Duration::from_secs(30)));
    }

    #[test]
    fn the_execution_block_of_claude_prompts_mcp_is_read() {
        let (_d, t) = tool_with(
            "id: t\nscript: run.py\nexecution:\n  trigger: schema_match\n  confirm: true\n  \
             strict: false\n  autoApproveOnValid: true\n  confirmMessage: Sure?\n",
        );
        let t = t.unwrap();
        assert!(t.confirm && t.enabled);
        // The older `mode: confirm` asks too; `confirm: false` asks for nothing.
        let (_d, t) = tool_with("id: t\nscript: run.py\nexecution:\n  mode: confirm\n");
        assert!(t.unwrap().confirm);
        let (_d, t) = tool_with("id: t\nscript: run.py\nexecution:\n  confirm: false\n");
        assert!(!t.unwrap().confirm);
        // `trigger: never` disables it, whatever `enabled` says after it.
        let (_d, t) =
            tool_with("id: t\nscript: run.py\nexecution:\n  trigger: never\nenabled: true\n");
        let t = t.unwrap();
        assert!(!t.enabled);
        assert_eq!(t.disabled_by, Some("execution.trigger: never"));
        let (_d, t) = tool_with("id: t\nscript: run.py\nenabled: false\n");
        assert_eq!(t.unwrap().disabled_by, Some("enabled: false"));
        let (_d, t) = tool_with("id: t\nscript: run.py\nenabled: true\n");
        assert_eq!(t.unwrap().disabled_by, None);
        // Each problem names its key and line.
        let (_d, t) = tool_with(
            "id: t\nscript: run.py\nexecution:\n  trigger: sometimes\n  confirm: yes please\n  \
             colour: red\n",
        );
        let problems = t.unwrap_err();
        for want in [
            ":4: key `execution.trigger` must be schema_match, explicit, always or never",
            ":5: key `execution.confirm` must be true or false",
            ":6: unknown key `execution.colour`",
        ] {
            assert!(
                problems.iter().any(|p| p.contains(want)),
                "{want}: {problems:?}"
            );
        }
        let (_d, t) = tool_with("id: t\nscript: run.py\nexecution: true\n");
        assert!(t.unwrap_err()[0].contains(":3: key `execution` must be a mapping"));
    }

    #[test]
    fn runtimes_auto_and_shell_name_interpreters_that_run() {
        let (_d, t) = tool_with("id: t\nscript: run.sh\nruntime: auto\n");
        assert_eq!(t.unwrap().runtime, None);
        let (_d, t) = tool_with("id: t\nscript: plain\nruntime: shell\n");
        assert_eq!(t.unwrap().runtime.as_deref(), Some("bash"));
        let (_d, t) = tool_with("id: t\nscript: run.py\nruntime: python\n");
        assert_eq!(t.unwrap().runtime.as_deref(), Some("python3"));
        // By extension or #! line, and here there is neither: refused at load (so by
        // `skills validate`), not at run time.
        let (_d, t) = tool_with("id: t\nscript: plain\nruntime: auto\n");
        let problems = t.unwrap_err();
        assert!(
            problems[0].contains(":2: key `script`: no interpreter for `plain`"),
            "{problems:?}"
        );
        let (_d, t) = tool_with("id: t\nscript: plain\n");
        assert!(t.is_err());
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
        assert_eq!(key_line(text, "type"), 2);
        assert_eq!(key_line(text, "properties"), 3);
        assert_eq!(key_line(text, "nope"), 1);
        let text = "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"n\": {\"type\": \"strng\"}\n  }\n}";
        assert_eq!(pointer_line(text, "properties/n/type"), 4);
    }
}
