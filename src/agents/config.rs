//! Agent config files (DESIGN §5): skillpipe's own format and r9s's versioned layout, parsed from
//! text into [`AgentFile`], then filled with `--var` values into [`AgentConfig`]. Pure: the caller
//! reads the files (see `search`).

use super::AgentError;
use super::template;
use crate::policy::ScriptPolicy;
use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::de::DeTable;

/// An agent ready to use: instructions filled, policy parsed. An [`AgentFile`] holds one whose
/// instructions are still the template and whose `variables` are still empty.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AgentConfig {
    /// What `--agent NAME` finds it by; also the name in the audit log.
    pub name: String,
    /// One line for `agents list`.
    pub description: String,
    /// `model` or `provider:model`, as written.
    pub model: Option<String>,
    /// A provider name that overrides the config's default (`openai`, a `[providers.NAME]`, …).
    pub provider: Option<String>,
    /// Skill names, in the order given.
    pub skills: Vec<String>,
    /// Instructions, every `{{var}}` filled.
    pub instructions: String,
    /// The values used, in first-use order (given by `--var` or a default); a given variable
    /// the agent does not use is not here.
    pub variables: Vec<(String, String)>,
    /// `[params]` as JSON request parameters (temperature, top_p, max_tokens, ...).
    pub params: serde_json::Map<String, Value>,
    /// `[script_policy]`, defaults filled in. The integrator applies CLI flags on top.
    pub script_policy: Option<ScriptPolicy>,
    /// `[script_policy]` as written: only the keys the agent set, for layering over other config.
    pub script_policy_table: Option<toml::Table>,
    /// `tool_calls = true`: offer the enabled tools as native tool calls, like `--tools`.
    pub tool_calls: bool,
    /// `coach = "small-model"`: coaching for the agent's chats (`--coach` wins).
    pub coach: Option<crate::config::CoachMode>,
    /// The file the config came from (the version file for r9s's layout).
    pub source: PathBuf,
    /// Which layout `source` is in; decides where the agent's own folder is.
    pub format: AgentFormat,
    /// Things worth telling the user that do not stop the agent (keys ignored).
    pub warnings: Vec<String>,
}

/// A parsed agent file: the agent, its instructions a template, and the variables it declares.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentFile {
    /// Everything but the variables' values, which [`Self::resolve`] fills in.
    pub agent: AgentConfig,
    /// `[instructions] variables`, each with its default if one was given.
    pub declared: Vec<(String, Option<String>)>,
}

impl AgentConfig {
    /// The agent's own folder, which may hold tools (`tools/ID/`, as in a skill):
    /// `agents/NAME/` beside `agents/NAME.toml`, or r9s's `agents/NAME/`.
    pub fn folder(&self) -> Option<PathBuf> {
        match self.format {
            AgentFormat::Skillpipe => Some(self.source.with_extension("")),
            AgentFormat::R9s => {
                let versions = self.source.parent()?;
                Some(versions.parent()?.to_path_buf())
            }
        }
    }
}

/// The on-disk layout an agent was read from; shown by `agents list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentFormat {
    /// `NAME.toml`, strict: unknown keys are errors.
    #[default]
    Skillpipe,
    /// `NAME/agent.toml` + `versions/X.Y.Z.toml`: r9s's bookkeeping keys are accepted and ignored.
    R9s,
}

impl AgentFile {
    /// Names of every variable the instructions need: declared ones first, then ones only used.
    pub fn variable_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.declared.iter().map(|(n, _)| n.clone()).collect();
        for n in template::placeholders(&self.agent.instructions) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        names
    }

    /// Fill the instructions from `vars` (later pairs win) and defaults. Needed variables with
    /// neither are an error naming them all; one nobody uses is left out of `variables`.
    pub fn resolve(self, vars: &[(String, String)]) -> Result<AgentConfig, AgentError> {
        self.fill(vars, true)
    }

    /// [`Self::resolve`] for a command that never shows the instructions to a model (`filter`,
    /// `mcp`, `doctor`): a needed variable without a value stays `{{NAME}}` instead of being
    /// an error, so such an agent's policy and skills can still be used.
    pub fn resolve_policy_only(self, vars: &[(String, String)]) -> AgentConfig {
        self.fill(vars, false)
            .expect("without strict filling nothing is missing")
    }

    fn fill(self, vars: &[(String, String)], strict: bool) -> Result<AgentConfig, AgentError> {
        let given = |k: &str| vars.iter().rev().find(|(n, _)| n == k).map(|(_, v)| v);
        let mut values: Vec<(String, String)> = Vec::new();
        let mut missing: Vec<String> = Vec::new();
        for name in self.variable_names() {
            let default = self
                .declared
                .iter()
                .find(|(n, _)| *n == name)
                .and_then(|(_, d)| d.as_ref());
            match given(&name).or(default) {
                Some(v) => values.push((name, v.clone())),
                None if !strict => {}
                None => missing.push(name),
            }
        }
        if !missing.is_empty() {
            return Err(AgentError::MissingVariable {
                file: self.agent.source,
                names: missing,
            });
        }
        let mut agent = self.agent;
        agent.instructions = template::fill(&agent.instructions, |k| {
            values.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        });
        agent.variables = values;
        Ok(agent)
    }
}

/// r9s bookkeeping keys, accepted and ignored in r9s's layout only.
pub const R9S_BOOKKEEPING_KEYS: &[&str] = &[
    "id",
    "version",
    "content_hash",
    "parent_version",
    "created_at",
    "updated_at",
    "created_by",
    "change_reason",
    "status",
    "tools",
    "files",
    "current_version",
    "variables",
];

/// Declares [`OwnFile`] and [`AGENT_KEYS`] from one list, so a key is written once.
macro_rules! own_file {
    ($($(#[$attr:meta])* $key:ident: $ty:ty,)*) => {
        /// skillpipe's own format; also the keys read from an r9s version file.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct OwnFile {
            $($(#[$attr])* $key: $ty,)*
        }

        /// The keys of skillpipe's own format (and the ones read from an r9s version file).
        pub const AGENT_KEYS: &[&str] = &[$(stringify!($key)),*];
    };
}

own_file! {
    name: Option<String>,
    description: Option<String>,
    model: Option<String>,
    provider: Option<String>,
    #[serde(default)]
    skills: Vec<String>,
    instructions: Option<Instructions>,
    #[serde(default)]
    params: toml::Table,
    script_policy: Option<ScriptPolicy>,
    #[serde(default)]
    tool_calls: bool,
    coach: Option<crate::config::CoachMode>,
}

/// `~/.r9s/agents/NAME/agent.toml`: the manifest that points at the current version.
#[derive(Deserialize)]
struct R9sManifest {
    name: Option<String>,
    description: Option<String>,
    current_version: Option<String>,
}

/// What is kept as written: `[script_policy]` as a raw table (what the agent set, before
/// defaults) and the top-level `variables` r9s also writes ([`OwnFile`] rejects it).
#[derive(Deserialize)]
struct AsWritten {
    script_policy: Option<toml::Table>,
    variables: Option<Variables>,
}

/// `instructions = "…"` or `[instructions] value = "…", variables = [...]`.
enum Instructions {
    Text(String),
    Table(InstructionsTable),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InstructionsTable {
    value: String,
    variables: Option<Variables>,
}

/// `variables = ["lang"]` (each must be given) or `variables = { lang = "Spanish" }` (defaults).
struct Variables(Vec<(String, Option<String>)>);

impl<'de> Deserialize<'de> for Instructions {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Instructions;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a table with `value` and optional `variables`")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Instructions, E> {
                Ok(Instructions::Text(s.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Instructions, A::Error> {
                InstructionsTable::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(Instructions::Table)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Variables {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Variables;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of names or a table of name = default")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Variables, A::Error> {
                let mut out = Vec::new();
                while let Some(name) = seq.next_element::<String>()? {
                    out.push((name, None));
                }
                Ok(Variables(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Variables, A::Error> {
                let mut out = Vec::new();
                while let Some((name, default)) = map.next_entry::<String, String>()? {
                    out.push((name, Some(default)));
                }
                Ok(Variables(out))
            }
        }
        d.deserialize_any(V)
    }
}

fn split_instructions(i: Option<Instructions>) -> (String, Vec<(String, Option<String>)>) {
    match i {
        None => (String::new(), Vec::new()),
        Some(Instructions::Text(s)) => (s, Vec::new()),
        Some(Instructions::Table(t)) => (t.value, t.variables.map(|v| v.0).unwrap_or_default()),
    }
}

/// r9s writes an unset provider as `provider = "None"`.
fn provider_of(s: Option<String>) -> Option<String> {
    non_empty(s).filter(|p| !p.eq_ignore_ascii_case("none"))
}

/// Skill names without remote references (`github:owner/repo/skill`, URLs), which r9s fetches
/// and skillpipe does not: each is skipped with a warning instead of making the agent unusable.
fn local_skills(skills: Vec<String>, file: &Path, warnings: &mut Vec<String>) -> Vec<String> {
    skills
        .into_iter()
        .filter(|s| {
            let remote = s.contains(':');
            if remote {
                warnings.push(format!(
                    "{}: skill `{s}` is a remote reference; skillpipe loads installed skills only, \
                     so it is skipped (install it under a skills folder and name it by its name)",
                    file.display()
                ));
            }
            !remote
        })
        .collect()
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// Parse a file in skillpipe's own format. `file` names it in errors; its stem is the default name.
pub fn parse_skillpipe(src: &str, file: &Path) -> Result<AgentFile, AgentError> {
    let own: OwnFile = toml::from_str(src).map_err(|e| toml_error(file, src, e))?;
    agent_file(
        own,
        src,
        file,
        AgentFormat::Skillpipe,
        file_stem(file),
        Vec::new(),
    )
}

/// The version a manifest (`agent.toml` in r9s's layout) points at.
pub fn r9s_current_version(src: &str, manifest: &Path) -> Result<String, AgentError> {
    let m: R9sManifest = toml::from_str(src).map_err(|e| toml_error(manifest, src, e))?;
    non_empty(m.current_version)
        .ok_or_else(|| AgentError::file(manifest, "missing key `current_version`"))
}

/// Parse r9s's layout: the manifest (name, description) and the current version file (the rest).
/// `dir_name` is the agent's folder name, used when the manifest has no name.
pub fn parse_r9s(
    manifest_src: &str,
    manifest: &Path,
    version_src: &str,
    version: &Path,
    dir_name: &str,
) -> Result<AgentFile, AgentError> {
    let m: R9sManifest =
        toml::from_str(manifest_src).map_err(|e| toml_error(manifest, manifest_src, e))?;
    let mut own = own_keys(version_src, version)?;
    let mut warnings = ignored_keys(manifest_src, manifest, &["name", "description"]);
    warnings.extend(ignored_keys(version_src, version, AGENT_KEYS));
    own.name = non_empty(m.name).or(own.name);
    own.description = m.description.or(own.description);
    let name = dir_name.to_string();
    agent_file(own, version_src, version, AgentFormat::R9s, name, warnings)
}

/// The keys of an r9s version file that are [`AGENT_KEYS`], parsed as skillpipe's own format;
/// the others are dropped from the parsed document first, so errors keep their lines.
fn own_keys(src: &str, file: &Path) -> Result<OwnFile, AgentError> {
    let doc = DeTable::parse(src).map_err(|e| toml_error(file, src, e))?;
    let span = doc.span();
    let ours: DeTable = (doc.into_inner().into_iter())
        .filter(|(k, _)| AGENT_KEYS.contains(&k.get_ref().as_ref()))
        .collect();
    let de = toml::de::Deserializer::from(toml::Spanned::new(span, ours));
    OwnFile::deserialize(de).map_err(|e| toml_error(file, src, e))
}

/// The [`AgentFile`] of a parsed file `file` (text `src`), named `default_name` if it names
/// no agent.
fn agent_file(
    own: OwnFile,
    src: &str,
    file: &Path,
    format: AgentFormat,
    default_name: String,
    mut warnings: Vec<String>,
) -> Result<AgentFile, AgentError> {
    let written: AsWritten = toml::from_str(src).map_err(|e| toml_error(file, src, e))?;
    let (instructions, mut declared) = split_instructions(own.instructions);
    if declared.is_empty() {
        declared = written.variables.map(|v| v.0).unwrap_or_default();
    }
    let agent = AgentConfig {
        name: non_empty(own.name).unwrap_or(default_name),
        description: own.description.unwrap_or_default(),
        model: non_empty(own.model),
        provider: provider_of(own.provider),
        skills: local_skills(own.skills, file, &mut warnings),
        instructions,
        variables: Vec::new(),
        params: toml_table_to_json(own.params),
        script_policy: own.script_policy,
        script_policy_table: written.script_policy,
        tool_calls: own.tool_calls,
        coach: own.coach,
        source: file.to_path_buf(),
        format,
        warnings,
    };
    Ok(AgentFile { agent, declared })
}

/// Warnings for top-level keys in an r9s file that are neither ours nor r9s's known bookkeeping.
fn ignored_keys(src: &str, file: &Path, ours: &[&str]) -> Vec<String> {
    let Ok(doc) = DeTable::parse(src) else {
        return Vec::new();
    };
    doc.get_ref()
        .iter()
        .filter(|(k, _)| {
            let k = k.get_ref().as_ref();
            !ours.contains(&k) && !R9S_BOOKKEEPING_KEYS.contains(&k)
        })
        .map(|(k, _)| {
            format!(
                "{}:{}: ignoring unknown key `{}`",
                file.display(),
                crate::toml_words::line_of(src, k.span().start),
                k.get_ref()
            )
        })
        .collect()
}

fn file_stem(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// TOML values as JSON request parameters. Datetimes become strings; NaN/inf become null.
pub fn toml_to_json(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.into_iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => Value::Object(toml_table_to_json(t)),
    }
}

fn toml_table_to_json(t: toml::Table) -> serde_json::Map<String, Value> {
    t.into_iter().map(|(k, v)| (k, toml_to_json(v))).collect()
}

/// Turn a toml/serde error into one naming file, line and key, in skillpipe's words.
fn toml_error(file: &Path, src: &str, err: toml::de::Error) -> AgentError {
    let found = crate::toml_words::locate(src, &err);
    match found.line {
        None => AgentError::file(file, found.message),
        Some(line) => AgentError::At {
            file: file.to_path_buf(),
            line,
            key: found.key,
            message: found.message,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own(src: &str) -> Result<AgentFile, AgentError> {
        parse_skillpipe(src, Path::new("agents/x.toml"))
    }

    fn err(src: &str) -> String {
        own(src).unwrap_err().to_string()
    }

    /// `version` as the current version of an r9s agent `m` whose manifest names only it.
    fn r9s(version: &str) -> Result<AgentFile, AgentError> {
        parse_r9s(
            "current_version = '1.0.0'",
            Path::new("m/agent.toml"),
            version,
            Path::new("m/versions/1.0.0.toml"),
            "m",
        )
    }

    #[test]
    fn full_file() {
        let a = own(r#"
name = "vocab-tutor"
description = "Tutor"
model = "openai:gpt-4o-mini"
provider = "openai"
skills = ["say", "lookup"]
instructions = "You teach {{lang}}."
tool_calls = true
[params]
temperature = 0.3
max_tokens = 200
stop = ["END"]
[script_policy]
allow_scripts = true
allowed_commands = ["say", "scripts/*"]
"#)
        .unwrap();
        assert_eq!(a.agent.name, "vocab-tutor");
        assert_eq!(a.agent.model.as_deref(), Some("openai:gpt-4o-mini"));
        assert_eq!(a.agent.skills, vec!["say", "lookup"]);
        assert!(a.agent.tool_calls);
        assert_eq!(
            Value::Object(a.agent.params.clone()),
            serde_json::json!({"temperature": 0.3, "max_tokens": 200, "stop": ["END"]})
        );
        let p = a.agent.script_policy.clone().unwrap();
        assert!(p.allow_scripts);
        assert_eq!(p.allowed_commands, vec!["say", "scripts/*"]);
        assert_eq!(p.timeout_seconds, 30, "defaults fill the rest");
        let t = a.agent.script_policy_table.clone().unwrap();
        assert_eq!(t.len(), 2, "raw table holds only what was written");
        let c = a.resolve(&[("lang".into(), "Spanish".into())]).unwrap();
        assert_eq!(c.instructions, "You teach Spanish.");
        assert_eq!(c.variables, vec![("lang".into(), "Spanish".into())]);
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn name_defaults_to_file_stem() {
        let a = own("instructions = 'hi'").unwrap();
        assert_eq!(a.agent.name, "x");
        assert_eq!(a.agent.description, "");
        assert!(a.agent.script_policy.is_none());
    }

    /// Each mistake is named by file, line and key, in skillpipe's words.
    #[test]
    fn mistakes_name_file_line_and_key() {
        for (src, want) in [
            (
                "name = \"x\"\n\nmodle = \"m\"\n",
                "agents/x.toml:3: unknown key `modle` (expected one of name, description, model,",
            ),
            (
                "name = \"x\"\nskills = \"say\"\n",
                "agents/x.toml:2: key `skills`: invalid type: string \"say\", expected an array",
            ),
            (
                "model = 3\n",
                "agents/x.toml:1: key `model`: invalid type: integer `3`, expected a string",
            ),
            (
                "name = 'x'\n[script_policy]\nallow_scripts = true\nallow_scriptz = true\n",
                "agents/x.toml:4: unknown key `allow_scriptz` in [script_policy] (expected one of \
                 allow_scripts,",
            ),
            (
                "[script_policy]\nsandbox = \"maybe\"\n",
                "agents/x.toml:2: key `script_policy.sandbox`: unknown variant `maybe`",
            ),
            (
                "[script_policy]\n\ntimeout_seconds = \"10\"\n",
                "agents/x.toml:3: key `script_policy.timeout_seconds`: invalid type",
            ),
            ("name = \"x\"\ndescription = \n", "agents/x.toml:2: "),
            (
                "[instructions]\nvalue = 'x'\nvars = []\n",
                "agents/x.toml:3: unknown key `vars` in [instructions] (expected one of value, \
                 variables)",
            ),
            // The own format rejects r9s's bookkeeping.
            (
                "name = 'x'\ncontent_hash = 'sha256:1'\n",
                "agents/x.toml:2: unknown key `content_hash`",
            ),
        ] {
            let e = err(src);
            assert!(e.starts_with(want), "{src}: {e}");
        }
        for (src, want) in [
            (
                "[instructions]\nvariables = []\n",
                "missing key `value` in [instructions]",
            ),
            (
                "instructions = 5\n",
                "key `instructions`: invalid type: integer `5`, expected a string or a table",
            ),
        ] {
            let e = err(src);
            assert!(e.contains(want), "{src}: {e}");
        }
        match own("name = \"x\"\nmodle = 1").unwrap_err() {
            AgentError::At { line, key, .. } => {
                assert_eq!(line, 2);
                assert_eq!(key.as_deref(), Some("modle"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn instructions_table_with_variables() {
        let a = own(
            "[instructions]\nvalue = '''\nTeach {{lang}} at {{level}} level.'''\nvariables = [\"lang\", \"level\", \"extra\"]\n",
        )
        .unwrap();
        assert_eq!(a.variable_names(), vec!["lang", "level", "extra"]);
        let e = a
            .clone()
            .resolve(&[
                ("lang".into(), "Spanish".into()),
                ("level".into(), "A1".into()),
            ])
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "agents/x.toml: missing variable `extra`: give it a value"
        );
        let c = a
            .resolve(&[
                ("lang".into(), "Spanish".into()),
                ("level".into(), "A1".into()),
                ("extra".into(), "".into()),
                ("lang".into(), "French".into()),
                ("unused".into(), "1".into()),
            ])
            .unwrap();
        assert_eq!(c.instructions, "Teach French at A1 level.");
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert!(!c.variables.iter().any(|(n, _)| n == "unused"));
    }

    #[test]
    fn every_missing_variable_is_named_at_once() {
        for (src, want) in [
            (
                "instructions = 'For {{user}} on {{project}} ({{user}}).'",
                "agents/x.toml: missing variables `user`, `project`: give each a value",
            ),
            (
                "instructions = 'A {{lang}} tutor'",
                "agents/x.toml: missing variable `lang`: give it a value",
            ),
        ] {
            let e = own(src).unwrap().resolve(&[]).unwrap_err();
            assert_eq!(e.to_string(), want, "{src}");
        }
    }

    #[test]
    fn r9s_layout_accepts_bookkeeping() {
        let manifest = "id = \"agt_1\"\nname = \"support\"\ndescription = \"Support agent\"\ncurrent_version = \"1.0.1\"\ncreated_at = \"2025-01-01T00:00:00+00:00\"\nupdated_at = \"2025-01-02T00:00:00+00:00\"\n";
        let version = r#"version = "1.0.1"
content_hash = "sha256:abc"
parent_version = "1.0.0"
created_at = "2025-01-02T00:00:00+00:00"
created_by = "me"
change_reason = "clarity"
status = "draft"
model = "gpt-5-mini"
provider = "r9s"
mystery = 1

[params]
temperature = 0.2

[instructions]
value = '''
You support {{company}}.'''
variables = ["company"]

[[tools]]
type = "function"
"#;
        let a = parse_r9s(
            manifest,
            Path::new("r9s/support/agent.toml"),
            version,
            Path::new("r9s/support/versions/1.0.1.toml"),
            "support",
        )
        .unwrap();
        assert_eq!(a.agent.name, "support");
        assert_eq!(a.agent.description, "Support agent");
        assert_eq!(a.agent.model.as_deref(), Some("gpt-5-mini"));
        assert_eq!(a.agent.format, AgentFormat::R9s);
        assert_eq!(
            a.agent.warnings,
            vec!["r9s/support/versions/1.0.1.toml:10: ignoring unknown key `mystery`"]
        );
        let c = a.resolve(&[("company".into(), "Acme".into())]).unwrap();
        assert_eq!(c.instructions, "You support Acme.");
        assert_eq!(c.params["temperature"], serde_json::json!(0.2));
    }

    #[test]
    fn r9s_as_r9s_writes_it() {
        let version = "provider = \"None\"\nmodel = \"m\"\nskills = [\"notes\", \"github:acme/skills/pdf\"]\n\
                       variables = { who = \"me\" }\n\
                       [script_policy]\nallow_scripts = true\nallow_env_vars = [\"PATH\", \"API_TOKEN\"]\n";
        let a = r9s(version).unwrap();
        assert_eq!(a.agent.provider, None);
        assert_eq!(a.agent.skills, vec!["notes"]);
        assert_eq!(a.agent.warnings.len(), 1, "{:?}", a.agent.warnings);
        assert!(
            a.agent.warnings[0].starts_with(
                "m/versions/1.0.0.toml: skill `github:acme/skills/pdf` is a remote reference"
            ),
            "{:?}",
            a.agent.warnings
        );
        assert_eq!(a.declared, [("who".into(), Some("me".into()))]);
        let policy = a.agent.script_policy.unwrap();
        assert_eq!(policy.env_passthrough, vec!["PATH", "API_TOKEN"]);
    }

    /// r9s's boolean `allow_env_vars`: `false` inherits none of the user's variables, `true`
    /// the default list; the array form stays.
    #[test]
    fn r9s_allow_env_vars_as_a_boolean() {
        let policy = |v: &str| {
            let version = format!(
                "model = \"m\"\n[script_policy]\nallow_scripts = true\nallow_env_vars = {v}\n"
            );
            let a = r9s(&version).unwrap_or_else(|e| panic!("{v}: {e}"));
            a.agent.script_policy.unwrap().env_passthrough
        };
        assert_eq!(policy("false"), Vec::<String>::new());
        assert_eq!(
            policy("true"),
            crate::policy::ScriptPolicy::default().env_passthrough
        );
        assert_eq!(policy("[\"PATH\"]"), ["PATH"]);
    }

    #[test]
    fn r9s_layout_still_checks_our_keys() {
        let e = r9s("status = 'draft'\n[script_policy]\nallow = true\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("m/versions/1.0.0.toml:3: unknown key `allow` in [script_policy]"),
            "{e}"
        );
    }

    #[test]
    fn r9s_manifest_needs_current_version() {
        let e = r9s_current_version("name = 'x'", Path::new("m/agent.toml")).unwrap_err();
        assert_eq!(e.to_string(), "m/agent.toml: missing key `current_version`");
        assert_eq!(
            r9s_current_version("current_version = '2.0.0'", Path::new("m")).unwrap(),
            "2.0.0"
        );
    }
}
