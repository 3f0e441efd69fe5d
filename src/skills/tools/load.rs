//! A tool folder's `tool.yaml`, each key read and checked on its own; a tool with any problem
//! is left out, with a `file:line: message` for each.

use super::schema::load_schema;
use super::{Tool, ToolInput};
use crate::skills::TOOLS_DIR;
use crate::skills::frontmatter::{self, Entry, Node};
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Longest `timeout` a tool may ask for, as for `timeout_seconds`.
const MAX_TIMEOUT: u64 = 600;
/// A `timeout` from this value up is milliseconds (claude-prompts-mcp's unit; its default is
/// 30000): below it, seconds (skillpipe's own, 1..=600).
const MILLIS_FROM: u64 = 1000;

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
    // What skillpipe sets for every script, and the per-run TMPDIR the executor owns.
    if crate::skills::SCRIPT_ENV.contains(&name) || name == "TMPDIR" {
        Some("skillpipe sets this variable")
    } else if EXACT.contains(&name) || LOADER.iter().any(|p| name.starts_with(p)) {
        Some("it would act outside the sandbox or the policy; set it in the script instead")
    } else {
        None
    }
}

/// The tool folders under `owner/tools/` (hidden ones left out), sorted: loaded or not.
pub fn tool_dirs(owner: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(owner.join(TOOLS_DIR)) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Loads every tool folder under `owner/tools/`, sorted by id. Returns the tools (disabled ones
/// included, marked) and the problems, `file:line: message`, of the tools left out.
pub fn load_tools(owner: &Path) -> (Vec<Tool>, Vec<String>) {
    let mut tools = Vec::new();
    let mut problems = Vec::new();
    for dir in tool_dirs(owner) {
        match load_tool(&dir) {
            Ok(t) => tools.push(t),
            Err(mut p) => problems.append(&mut p),
        }
    }
    (tools, problems)
}

/// Loads one tool folder, or says everything that is wrong with it.
pub(super) fn load_tool(dir: &Path) -> Result<Tool, Vec<String>> {
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
    let line_of = |key: &str| entries.iter().find(|e| e.key == key).map(|e| e.line);
    if k.id.is_none() && line_of("id").is_none() {
        p(1, format!("missing key `id` (the folder name, `{folder}`)"));
    }
    // Without a runtime (or `auto`) the interpreter comes from the script itself; one that
    // names none could never run, so it is refused here, where `skills validate` reports it.
    if let (Some(file), None) = (&k.script, &k.runtime)
        && crate::skills::scripts::interpreter_for(file, &dir.join(file), "node").is_none()
    {
        p(
            line_of("script").unwrap_or(1),
            format!(
                "key `script`: no interpreter for `{file}`: give it a known extension ({}) or a \
                 #! line, or name one in `runtime`",
                crate::skills::scripts::known_extensions()
            ),
        );
    }
    if k.script.is_none() && line_of("script").is_none() {
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
            line_of("input").unwrap_or(1)
        ));
    }
    let description = match fs::read_to_string(dir.join("description.md")) {
        Ok(text) => text.trim().to_owned(),
        Err(_) => k.description.unwrap_or_default(),
    };
    // With neither, the script's own doc comment says what it does, as for a plain script.
    let description = match (&k.script, description.is_empty()) {
        (Some(file), true) => crate::skills::scripts::describe_file(&dir.join(file)),
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

/// The interpreter a `runtime:` names. claude-prompts-mcp's `python` is `python3` (the name
/// `allowed_interpreters` knows) and its `shell` is `bash`, which its runner starts for it.
fn runtime_interpreter(name: &str) -> String {
    match name {
        "shell" => "bash".to_owned(),
        other => crate::skills::scripts::interpreter_name(other),
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A tool folder `t` holding `run.sh`, `run.py` and `files`, with `yaml` as its tool.yaml.
    fn tool_in(
        yaml: &str,
        files: &[(&str, &str)],
    ) -> (tempfile::TempDir, Result<Tool, Vec<String>>) {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("t");
        std::fs::create_dir(&t).unwrap();
        std::fs::write(t.join("run.sh"), "echo hi\n").unwrap();
        std::fs::write(t.join("run.py"), "print(1)\n").unwrap();
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
    }

    #[test]
    fn the_execution_block_of_claude_prompts_mcp_is_read() {
        let (_d, t) = tool_with(
            "id: t\nscript: run.py\nexecution:\n  trigger: schema_match\n  confirm: true\n  \
             strict: false\n  autoApproveOnValid: true\n  confirmMessage: Sure?\n",
        );
        let t = t.unwrap();
        assert!(t.confirm && t.disabled_by.is_none());
        // The older `mode: confirm` asks too; `confirm: false` asks for nothing.
        let (_d, t) = tool_with("id: t\nscript: run.py\nexecution:\n  mode: confirm\n");
        assert!(t.unwrap().confirm);
        let (_d, t) = tool_with("id: t\nscript: run.py\nexecution:\n  confirm: false\n");
        assert!(!t.unwrap().confirm);
        // `trigger: never` disables it, whatever `enabled` says after it.
        let (_d, t) =
            tool_with("id: t\nscript: run.py\nexecution:\n  trigger: never\nenabled: true\n");
        assert_eq!(t.unwrap().disabled_by, Some("execution.trigger: never"));
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
}
