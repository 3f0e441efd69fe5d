//! `$XDG_CONFIG_HOME/skillpipe/config.toml`, one model for the whole file: read and parsed once
//! per process ([`ConfigFile::global`]), every part (model settings, skills) reads its section
//! from it, and an unknown key anywhere (`[skils]`) is an error naming the file and line.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The whole config file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Where it was read from (empty when parsed from text alone).
    #[serde(skip)]
    pub path: PathBuf,
    /// The provider used when none is named.
    pub default_provider: Option<String>,
    /// A model, or `provider:model`.
    pub model: Option<String>,
    /// Coaching for every chat (a provider entry's or an agent's own wins; `--coach` over all).
    pub coach: Option<CoachMode>,
    /// `[providers.NAME]`: named endpoints.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    /// `[skills]`: how skills are read.
    #[serde(default)]
    pub skills: SkillsConfig,
}

/// Which wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ProviderKind {
    /// OpenAI-compatible `/chat/completions`.
    OpenAi,
    /// The Anthropic Messages API.
    Anthropic,
    /// Recorded answers from a JSONL file.
    Replay,
}

/// `[providers.NAME]`: a named endpoint. A name equal to a built-in one refines it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// Wire protocol; `openai` unless the name is a built-in of another kind.
    pub kind: Option<ProviderKind>,
    /// The endpoint.
    pub base_url: Option<String>,
    /// The environment variable that holds this endpoint's key.
    pub api_key_env: Option<String>,
    /// The model to use with it.
    pub model: Option<String>,
    /// Coaching for chats with this provider (`coach = "small-model"`), over the file's own.
    pub coach: Option<CoachMode>,
    /// Request fields for every request to this provider (the agent's `[params]` win).
    #[serde(default)]
    pub params: serde_json::Map<String, serde_json::Value>,
    /// `false`: never ask a streamed answer for its token counts (`stream_options`), for
    /// servers that refuse that field.
    pub stream_usage: Option<bool>,
    /// The name the token limit goes under (`max_tokens`, or `max_completion_tokens` for
    /// servers that refuse the first).
    pub max_tokens_param: Option<MaxTokensParam>,
    /// Parameters of an agent's `[params]` never sent to this provider.
    #[serde(default)]
    pub drop_params: Vec<String>,
}

/// `max_tokens_param`: the token limit's name on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensParam {
    MaxTokens,
    MaxCompletionTokens,
}

/// `[skills]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillsConfig {
    /// Interpreter for `.ts` scripts without a shebang (default `node`).
    pub ts_interpreter: Option<String>,
}

/// A config file that cannot be used: the file, the line when known, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", .file.display(), .line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ConfigError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line of the problem, when known.
    pub line: Option<usize>,
    /// What is wrong (names the key).
    pub message: String,
}

impl ConfigError {
    fn at(file: &Path, line: Option<usize>, message: impl Into<String>) -> ConfigError {
        let (file, message) = (file.to_path_buf(), message.into());
        ConfigError {
            file,
            line,
            message,
        }
    }
}

impl ConfigFile {
    /// Parses config text; errors name `path` and the line.
    pub fn parse(text: &str, path: &Path) -> Result<ConfigFile, ConfigError> {
        let mut config: ConfigFile = toml::from_str(text).map_err(|e| {
            let found = crate::toml_words::locate(text, &e);
            ConfigError::at(path, found.line, found.message)
        })?;
        if let Some(ts) = &config.skills.ts_interpreter
            && ts.trim().is_empty()
        {
            let line = text
                .lines()
                .position(|l| l.trim_start().starts_with("ts_interpreter"));
            let message = "[skills] ts_interpreter must be a program name";
            return Err(ConfigError::at(path, line.map(|i| i + 1), message));
        }
        config.path = path.to_path_buf();
        Ok(config)
    }

    /// Reads and parses `path`; a missing file is no config.
    pub fn load(path: &Path) -> Result<Option<ConfigFile>, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => ConfigFile::parse(&text, path).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ConfigError::at(path, None, format!("cannot read it: {e}"))),
        }
    }

    /// This process's config file (`$XDG_CONFIG_HOME/skillpipe/config.toml`), read once.
    pub fn global() -> Result<Option<&'static ConfigFile>, ConfigError> {
        static FILE: OnceLock<Result<Option<ConfigFile>, ConfigError>> = OnceLock::new();
        FILE.get_or_init(|| match crate::paths::config_file() {
            // It names the endpoint the API key goes to: one another user could change is
            // refused, as ssh refuses such a key file.
            Some(path) => match crate::paths::writable_by_others(&path) {
                Some(open) => {
                    let (who, file) = match open == path {
                        true => ("it".to_string(), "it"),
                        false => (open.display().to_string(), "this file"),
                    };
                    let why = format!(
                        "{who} could be changed by another user, and {file} names where your API \
                         key is sent: make it yours and `chmod o-w` it"
                    );
                    Err(ConfigError::at(&path, None, why))
                }
                None => ConfigFile::load(&path),
            },
            None => Ok(None),
        })
        .as_ref()
        .map(Option::as_ref)
        .map_err(Clone::clone)
    }
}

/// Which coaching a chat gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CoachMode {
    /// None: the request is the system prompt, the conversation and the user's message.
    #[default]
    Off,
    /// Worked exchanges before the conversation, for a small local model.
    SmallModel,
}

impl CoachMode {
    /// Every mode, as written in a setting, in the order of the variants.
    pub const NAMES: [&'static str; 2] = ["off", "small-model"];

    /// The mode a setting names.
    pub fn parse(name: &str) -> Result<CoachMode, String> {
        let names = Self::NAMES.join(", ");
        [CoachMode::Off, CoachMode::SmallModel]
            .into_iter()
            .find(|m| m.name() == name.trim())
            .ok_or_else(|| format!("`{name}` is no coaching mode; one of: {names}"))
    }

    /// The mode as a setting writes it.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// True unless off.
    pub fn is_on(self) -> bool {
        self != CoachMode::Off
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ConfigFile, String> {
        ConfigFile::parse(text, Path::new("/c.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn one_file_holds_every_section() {
        let c = parse(
            "model = \"m\"\n[providers.local]\nbase_url = \"http://x\"\n[skills]\nts_interpreter = \"deno\"\n",
        )
        .unwrap();
        assert_eq!(c.model.as_deref(), Some("m"));
        assert_eq!(c.providers["local"].base_url.as_deref(), Some("http://x"));
        assert_eq!(c.skills.ts_interpreter.as_deref(), Some("deno"));
    }

    #[test]
    fn unknown_keys_are_errors_with_file_and_line() {
        let e = parse("[skills]\nts_interpreterr = \"deno\"\n").unwrap_err();
        assert!(
            e.starts_with("/c.toml:2: ") && e.contains("ts_interpreterr"),
            "{e}"
        );
        let e = parse("[skills]\nts_interpreter = \" \"\n").unwrap_err();
        assert_eq!(
            e,
            "/c.toml:2: [skills] ts_interpreter must be a program name"
        );
        let e = parse("[skills]\nts_interpreter = 3\n").unwrap_err();
        assert!(e.starts_with("/c.toml:2: "), "{e}");
        // TOML that does not parse.
        let e = parse("model = \n").unwrap_err();
        assert!(e.starts_with("/c.toml:1: "), "{e}");
    }

    #[test]
    fn modes_parse_from_their_names_only() {
        for name in CoachMode::NAMES {
            assert_eq!(CoachMode::parse(name).map(CoachMode::name), Ok(name));
        }
        assert!(CoachMode::parse("qwen").is_err());
        assert!(!CoachMode::default().is_on());
    }
}
