//! Which provider, base URL, model and API key to use (DESIGN §6).
//!
//! `resolve` is a pure function of a [`SettingsInput`] (flags, an environment map, the agent's
//! fields, the parsed config file), so every precedence rule is unit-testable without touching the
//! real environment. [`Settings::from_process`] gathers the real inputs.
//!
//! Precedence, field by field:
//! - provider: a `provider:` prefix on `--model`, on `$SKILLPIPE_MODEL`, the agent's `provider` (or a
//!   prefix on its `model`), the config's `default_provider` (or a prefix on its `model`), then
//!   `r9s` if `$R9S_BASE_URL` is set without `$OPENAI_BASE_URL`, else `openai`.
//! - model: `--model`, `$SKILLPIPE_MODEL` (or `$R9S_MODEL` for r9s), the agent's `model`, the config's
//!   `model`, `[providers.P].model`, the provider's default. A model without a prefix keeps the
//!   provider chosen elsewhere; a model from a level below the one that named the provider is used
//!   only if that level meant the same provider.
//! - base URL: `--base-url`, `$SKILLPIPE_BASE_URL` (ignored when `--model` names the provider), the
//!   provider's own variable (`$OPENAI_BASE_URL`, `$R9S_BASE_URL`, `$ANTHROPIC_BASE_URL`),
//!   `[providers.P].base_url`, the provider's default.
//! - API key: the variable `[providers.P].api_key_env` names, else the provider's own
//!   (`$OPENAI_API_KEY`, `$R9S_API_KEY`, `$ANTHROPIC_API_KEY`). A key is only ever read from the
//!   variable that belongs to the chosen provider. The provider's own variable is an ambient
//!   key, set for its hosted service: it is not sent to an address on this machine or the local
//!   network (servers there need none) unless `[providers.P].api_key_env` names it.
//!
//! Every base URL comes from the user: a flag, the environment or the user's config file; an
//! agent chooses a provider and a model, never where the key goes.

use super::retry::RetryPolicy;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

pub(crate) use crate::config::ConfigFile as Config;
pub use crate::config::{ConfigError, ProviderKind};

/// Network behaviour; the defaults suit interactive use, tests shorten them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientOptions {
    /// Longest wait for the TCP and TLS handshake; a dead host fails fast instead of hanging.
    pub connect_timeout: Duration,
    /// Longest silence allowed while waiting for the response or between chunks. Generous,
    /// because a local model may think about a long prompt for minutes before the first token.
    pub idle_timeout: Duration,
    /// How often, and after what waits, a request answered 429 or 5xx is sent again.
    pub retry: RetryPolicy,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            retry: RetryPolicy::default(),
        }
    }
}

/// The resolved model settings.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct Settings {
    /// The wire format to speak (OpenAI-compatible, Anthropic, replay).
    pub provider: ProviderKind,
    /// The provider's name (`openai`, `ollama`, a `[providers.NAME]` from the config, …).
    pub provider_name: String,
    /// Empty for replay.
    pub base_url: String,
    /// For replay: the JSONL file.
    pub model: String,
    /// The key sent to the server; `None` for servers on this machine that need none.
    pub api_key: Option<String>,
    /// The variable the key came from, or the one that should hold it when there is no key.
    pub api_key_var: Option<String>,
    /// `api_key_var` holds an ambient key that is not sent: the endpoint is on this machine or
    /// the local network and no `api_key_env` names the variable.
    pub api_key_withheld: bool,
    /// Extra request fields (the agent's `[params]`).
    pub params: Map<String, Value>,
    /// Timeouts and retries of the HTTP client.
    pub options: ClientOptions,
    /// What the provider's settings leave out of or rename in every request.
    pub adapt: super::adapt::Adaptations,
    /// Parameters the user set for this provider in the config (`params`): never dropped.
    pub explicit: Vec<String>,
    /// No model was named and `model` is only a guess for this server: the provider's built-in
    /// default while the base URL is the user's, Ollama's default (it serves what its user
    /// pulled), or empty for a configured provider with no model. The caller asks the server for
    /// its models instead.
    pub ask_endpoint_for_model: bool,
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("provider", &self.provider)
            .field("provider_name", &self.provider_name)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("api_key_var", &self.api_key_var)
            .field("api_key_withheld", &self.api_key_withheld)
            .field("params", &self.params)
            .field("options", &self.options)
            .finish()
    }
}

impl Settings {
    /// Settings for a given endpoint with no key and default options (handy in tests).
    pub fn new(
        provider: ProviderKind,
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        // The first built-in provider of that kind: `openai`, `anthropic`, `replay`.
        let builtin = BUILTINS.iter().find(|b| b.kind == provider);
        Settings {
            provider,
            provider_name: builtin.map_or("", |b| b.name).into(),
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            api_key_var: None,
            api_key_withheld: false,
            params: Map::new(),
            options: ClientOptions::default(),
            adapt: Default::default(),
            explicit: Vec::new(),
            ask_endpoint_for_model: false,
        }
    }

    /// Resolve from the real flags, environment and `$XDG_CONFIG_HOME/skillpipe/config.toml`
    /// (if it exists).
    pub(crate) fn from_process(
        flag_model: Option<&str>,
        flag_base_url: Option<&str>,
        agent: AgentModel,
    ) -> Result<Self, SettingsError> {
        let config = Config::global()?.cloned();
        // Besides skillpipe's own: each built-in provider's base URL and key variables.
        let mut names = vec!["SKILLPIPE_BASE_URL", "SKILLPIPE_MODEL", "R9S_MODEL"];
        names.extend(
            BUILTINS
                .iter()
                .flat_map(|b| [b.base_url_env, b.key_env])
                .flatten(),
        );
        if let Some(c) = &config {
            names.extend(
                c.providers
                    .values()
                    .filter_map(|p| p.api_key_env.as_deref()),
            );
        }
        let env = names
            .into_iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect();
        resolve(&SettingsInput {
            flag_model: flag_model.map(str::to_string),
            flag_base_url: flag_base_url.map(str::to_string),
            env,
            agent,
            config,
        })
    }

    /// The variable a refusal advises setting: not one whose key was withheld (the advice is
    /// then to name one with `api_key_env`).
    pub(crate) fn key_var_to_set(&self) -> Option<String> {
        self.api_key_var.clone().filter(|_| !self.api_key_withheld)
    }

    /// `provider:model`, as `--model` would take it.
    pub fn label(&self) -> String {
        format!("{}:{}", self.provider_name, self.model)
    }

    /// A remote endpoint needs a key; one on this machine (loopback) may do without.
    pub fn check_api_key(&self) -> Result<(), SettingsError> {
        if self.provider == ProviderKind::Replay || self.api_key.is_some() {
            return Ok(());
        }
        if is_loopback(&self.base_url) || self.api_key_withheld {
            return Ok(());
        }
        Err(SettingsError::MissingKey {
            url: self.base_url.clone(),
            provider: self.provider_name.clone(),
            var: self.api_key_var.clone(),
        })
    }
}

/// The URL's host, lower case, without an IPv6 address's brackets.
fn host_of(url: &str) -> Option<String> {
    let u = reqwest::Url::parse(url).ok()?;
    let host = u.host_str()?.trim_start_matches('[').trim_end_matches(']');
    Some(host.to_ascii_lowercase())
}

/// Whether the URL's host is this machine.
pub(crate) fn is_loopback(url: &str) -> bool {
    host_of(url).is_some_and(|host| {
        host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    })
}

/// Whether the URL's host is on this machine or the local network: a loopback, private,
/// link-local, shared (CGNAT) or unique-local address, `localhost` or a name under it, or a
/// name of one label (which only a local resolver can answer).
pub(crate) fn is_local_network(url: &str) -> bool {
    let Some(host) = host_of(url) else {
        return false;
    };
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => local_v4(ip),
        Ok(std::net::IpAddr::V6(ip)) => {
            ip.is_loopback()
                || ip.is_unspecified()
                || (ip.segments()[0] & 0xfe00) == 0xfc00
                || (ip.segments()[0] & 0xffc0) == 0xfe80
                || ip.to_ipv4_mapped().is_some_and(local_v4)
        }
        Err(_) => {
            let name = host.trim_end_matches('.');
            name == "localhost" || name.ends_with(".localhost") || !name.contains('.')
        }
    }
}

fn local_v4(ip: std::net::Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || (a == 100 && b & 0xc0 == 64)
}

/// The agent's say in the matter (DESIGN §5: `model`, `provider`, `[params]`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct AgentModel {
    /// The agent's `model` (`model` or `provider:model`).
    pub model: Option<String>,
    /// The agent's `provider`.
    pub provider: Option<String>,
    /// The agent's `[params]`, sent as extra request fields.
    pub params: Map<String, Value>,
    /// Where these came from, for error messages (e.g. "agent file agents/tutor.toml").
    pub origin: String,
}

/// Everything `resolve` looks at.
#[derive(Debug, Clone, Default)]
pub(crate) struct SettingsInput {
    /// `--model` (`model` or `provider:model`); wins over everything else.
    pub flag_model: Option<String>,
    /// `--base-url`; like `flag_model`, wins over everything else.
    pub flag_base_url: Option<String>,
    /// Environment variables (the providers' own, skillpipe's and `api_key_env`s matter).
    pub env: BTreeMap<String, String>,
    /// What the agent asks for, below flags and environment.
    pub agent: AgentModel,
    /// The config file, if there is one; lowest before the built-in defaults.
    pub config: Option<Config>,
}

/// A configuration problem (exit code 2). Messages name the flag, variable, file or line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// The config file is unreadable or wrong.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A provider name that is neither built in nor a `[providers.NAME]` of the config.
    #[error("unknown provider `{}` (from {origin}); known providers: {known}", crate::command::escape_controls(.name))]
    UnknownProvider {
        /// The name as written.
        name: String,
        /// Where it was written (flag, variable, agent file, config).
        origin: String,
        /// The names that would have worked, comma-separated.
        known: String,
    },
    /// A base URL that does not parse, is not `http`/`https`, or has no host.
    #[error("invalid base URL `{}` (from {origin}): {reason}", crate::command::escape_controls(.url))]
    BadBaseUrl {
        /// The URL as written.
        url: String,
        /// Where it was written.
        origin: String,
        /// Why it was refused.
        reason: String,
    },
    /// A config provider without `base_url`, and nothing else gave one.
    #[error("provider `{}` has no base URL: {hint}", crate::command::escape_controls(.provider))]
    NoBaseUrl {
        /// The provider's name.
        provider: String,
        /// Where to set one.
        hint: String,
    },
    /// The provider has no default model and none was given.
    #[error("no model chosen for provider `{}`: {hint}", crate::command::escape_controls(.provider))]
    NoModel {
        /// The provider's name.
        provider: String,
        /// Where to set one.
        hint: String,
    },
    /// A remote server needs a key and none was found.
    #[error("no API key for {provider} at {url}: {}", missing_key_hint(.var))]
    MissingKey {
        /// The server's base URL.
        url: String,
        /// The provider's name.
        provider: String,
        /// The environment variable that should hold the key, when one is known.
        var: Option<String>,
    },
    /// The replay file is unreadable or not valid JSONL answers.
    #[error("replay file {}: {message}", .file.display())]
    Replay {
        /// The replay file.
        file: PathBuf,
        /// What was wrong, with its line where known.
        message: String,
    },
    /// The HTTP client could not be built; the error and its causes.
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
}

fn missing_key_hint(var: &Option<String>) -> String {
    match var {
        Some(v) => format!(
            "set ${v} (or api_key_env in [providers.NAME] of the config file); servers on this machine need none"
        ),
        None => {
            "set api_key_env in [providers.NAME] of the config file and that variable".to_string()
        }
    }
}

/// A provider skillpipe knows without configuration.
struct Builtin {
    name: &'static str,
    kind: ProviderKind,
    base_url: Option<&'static str>,
    base_url_env: Option<&'static str>,
    key_env: Option<&'static str>,
    model: Option<&'static str>,
    /// Its default model is a guess even at its default URL (a local server serves what its
    /// user installed): ask the server when no model is named.
    model_is_guess: bool,
}

const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "openai",
        kind: ProviderKind::OpenAi,
        base_url: Some("https://api.openai.com/v1"),
        base_url_env: Some("OPENAI_BASE_URL"),
        key_env: Some("OPENAI_API_KEY"),
        model: Some("gpt-4o-mini"),
        model_is_guess: false,
    },
    Builtin {
        name: "anthropic",
        kind: ProviderKind::Anthropic,
        base_url: Some("https://api.anthropic.com"),
        base_url_env: Some("ANTHROPIC_BASE_URL"),
        key_env: Some("ANTHROPIC_API_KEY"),
        model: Some("claude-haiku-4-5"),
        model_is_guess: false,
    },
    Builtin {
        name: "ollama",
        kind: ProviderKind::OpenAi,
        base_url: Some("http://127.0.0.1:11434/v1"),
        base_url_env: None,
        key_env: None,
        model: Some("llama3.2"),
        model_is_guess: true,
    },
    Builtin {
        name: "r9s",
        kind: ProviderKind::OpenAi,
        base_url: None,
        base_url_env: Some("R9S_BASE_URL"),
        key_env: Some("R9S_API_KEY"),
        model: None,
        model_is_guess: false,
    },
    Builtin {
        name: "replay",
        kind: ProviderKind::Replay,
        base_url: None,
        base_url_env: None,
        key_env: None,
        model: None,
        model_is_guess: false,
    },
];

fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// One level of the precedence order: what it says about provider and model.
#[derive(Default)]
struct Level {
    provider: Option<String>,
    model: Option<String>,
}

/// Split `provider:model` when the prefix names a known provider; otherwise the whole text is a
/// model (Ollama models look like `llama3:8b`).
fn split_spec(spec: Option<&str>, known: &[String]) -> Level {
    let Some(spec) = spec.map(str::trim) else {
        return Level::default();
    };
    let (provider, model) = match spec.split_once(':') {
        Some((prefix, rest)) if known.iter().any(|k| k == prefix) => (Some(prefix), rest.trim()),
        _ => (None, spec),
    };
    Level {
        provider: provider.map(str::to_string),
        model: (!model.is_empty()).then(|| model.to_string()),
    }
}

/// True when `a` and `b` differ by one inserted, deleted or replaced character, and are long
/// enough (5+) that this is unlikely by chance: `anthropc`/`anthropic`, not `llama3`/`ollama`.
fn one_edit_apart(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a == b || a.len().min(b.len()) < 5 || a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (ra, rb) = (&a[prefix..], &b[prefix..]);
    match ra.len().cmp(&rb.len()) {
        std::cmp::Ordering::Equal => ra[1..] == rb[1..],
        std::cmp::Ordering::Greater => ra[1..] == *rb,
        std::cmp::Ordering::Less => *ra == rb[1..],
    }
}

fn non_empty(v: Option<&String>) -> Option<&str> {
    v.map(|s| s.trim()).filter(|s| !s.is_empty())
}

/// Resolve the settings (see the module docs for the rules).
pub(crate) fn resolve(input: &SettingsInput) -> Result<Settings, SettingsError> {
    let env = |k: &str| non_empty(input.env.get(k));
    let mut levels = levels(input)?;
    let p = choose_provider(input, &levels);
    let (model, model_is_default) = choose_model(input, &mut levels, &p)?;
    let (base_url, url_is_default) = choose_base_url(input, &p)?;
    let (builtin, custom, kind) = (p.builtin, p.custom, p.kind);

    let named = custom.and_then(|c| non_empty(c.api_key_env.as_ref()));
    let api_key_var = (named.or(builtin.and_then(|b| b.key_env)))
        .filter(|_| kind != ProviderKind::Replay)
        .map(str::to_string);
    let mut api_key = api_key_var.as_deref().and_then(env).map(str::to_string);
    // An ambient key (the provider's own variable, not one the user's config names) stays off
    // local servers: they need none, and whatever listens there is not the service it is for.
    let api_key_withheld = api_key.is_some() && named.is_none() && is_local_network(&base_url);
    if api_key_withheld {
        api_key = None;
    }

    let mut params = custom.map(|c| c.params.clone()).unwrap_or_default();
    let explicit = params.keys().cloned().collect();
    params.extend(input.agent.params.clone());
    let adapt = custom.map(adaptations).unwrap_or_default();

    Ok(Settings {
        provider_name: p.name,
        api_key,
        api_key_var,
        api_key_withheld,
        params,
        adapt,
        explicit,
        ask_endpoint_for_model: model_is_default
            && (!url_is_default || builtin.is_none_or(|b| b.model_is_guess)),
        ..Settings::new(kind, base_url, model)
    })
}

fn config_origin(config: Option<&Config>, what: &str) -> String {
    match config {
        Some(c) => format!("{what} in {}", c.path.display()),
        None => what.to_string(),
    }
}

/// A step of `resolve`: the four levels, highest first, each provider they name known.
fn levels(input: &SettingsInput) -> Result<Vec<Level>, SettingsError> {
    let env = |k: &str| non_empty(input.env.get(k));
    let config = input.config.as_ref();
    let mut known: Vec<String> = BUILTINS.iter().map(|b| b.name.to_string()).collect();
    for name in config.into_iter().flat_map(|c| c.providers.keys()) {
        if !known.contains(name) {
            known.push(name.clone());
        }
    }
    let unknown = |name: &str, origin: String| SettingsError::UnknownProvider {
        name: name.to_string(),
        origin,
        known: known.join(", "),
    };

    // A prefix one letter away from a provider's name is a typo, not part of a model name
    // (`anthropc:claude-x` would otherwise go to the default provider as a model).
    for (spec, origin) in [
        (input.flag_model.as_deref(), "--model".to_string()),
        (env("SKILLPIPE_MODEL"), "SKILLPIPE_MODEL".to_string()),
    ] {
        if let Some((prefix, _)) = spec.and_then(|s| s.trim().split_once(':'))
            && !known.iter().any(|k| k == prefix)
            && known.iter().any(|k| one_edit_apart(k, prefix))
        {
            return Err(unknown(prefix, origin));
        }
    }

    let flag = split_spec(input.flag_model.as_deref(), &known);
    let from_env = split_spec(env("SKILLPIPE_MODEL"), &known);
    let mut agent = split_spec(input.agent.model.as_deref(), &known);
    agent.provider =
        (agent.provider).or_else(|| non_empty(input.agent.provider.as_ref()).map(str::to_string));
    let mut conf = split_spec(config.and_then(|c| c.model.as_deref()), &known);
    conf.provider = config
        .and_then(|c| non_empty(c.default_provider.as_ref()))
        .map(str::to_string)
        .or(conf.provider);
    let agent_origin = match input.agent.origin.as_str() {
        "" => "the agent",
        o => o,
    };
    for (level, origin) in [
        (&agent, format!("provider in {agent_origin}")),
        (&conf, config_origin(config, "default_provider")),
    ] {
        if let Some(p) = level.provider.as_ref().filter(|p| !known.contains(p)) {
            return Err(unknown(p, origin));
        }
    }
    Ok(vec![flag, from_env, agent, conf])
}

/// The provider `resolve` chose: its name, the level that named it (`levels.len()` for the
/// fallback), and what skillpipe and the config file say about it.
struct Chosen<'a> {
    name: String,
    level: usize,
    fallback: &'static str,
    builtin: Option<&'static Builtin>,
    custom: Option<&'a crate::config::ProviderConfig>,
    kind: ProviderKind,
}

/// A step of `resolve`: the highest level that names a provider, else the fallback.
fn choose_provider<'a>(input: &'a SettingsInput, levels: &[Level]) -> Chosen<'a> {
    let env = |k: &str| non_empty(input.env.get(k));
    let fallback = if env("OPENAI_BASE_URL").is_none() && env("R9S_BASE_URL").is_some() {
        "r9s"
    } else {
        "openai"
    };
    let (level, name) = levels
        .iter()
        .enumerate()
        .find_map(|(i, l)| l.provider.clone().map(|p| (i, p)))
        .unwrap_or((levels.len(), fallback.to_string()));
    let builtin = builtin(&name);
    let custom = input.config.as_ref().and_then(|c| c.providers.get(&name));
    let kind = custom
        .and_then(|c| c.kind)
        .or(builtin.map(|b| b.kind))
        .unwrap_or(ProviderKind::OpenAi);
    Chosen {
        name,
        level,
        fallback,
        builtin,
        custom,
        kind,
    }
}

/// A step of `resolve`: the model, and whether it is the provider's default. Levels above the
/// provider's level override it; its own level gives it; lower levels count only if they meant
/// the same provider.
fn choose_model(
    input: &SettingsInput,
    levels: &mut [Level],
    p: &Chosen,
) -> Result<(String, bool), SettingsError> {
    let (name, builtin, custom, kind) = (&p.name, p.builtin, p.custom, p.kind);
    if name == "r9s"
        && levels[1].model.is_none()
        && levels[1].provider.is_none()
        && let Some(m) = non_empty(input.env.get("R9S_MODEL"))
    {
        levels[1].model = Some(m.to_string());
    }
    let mut chosen_level = None;
    let chosen = levels
        .iter()
        .enumerate()
        .find_map(|(i, l)| {
            let same = i <= p.level || l.provider.as_deref().unwrap_or(p.fallback) == name;
            let m = l.model.clone().filter(|_| same);
            chosen_level = m.as_ref().map(|_| i);
            m
        })
        .or_else(|| {
            custom
                .and_then(|c| non_empty(c.model.as_ref()))
                .map(str::to_string)
        });
    // A model an agent, the environment or the config file names for a hosted provider
    // (`openai:gpt-4o-mini`) is that service's: with `--base-url` pointing elsewhere it is not
    // sent there, and the server is asked for its models as if none were named.
    let hosted_elsewhere = chosen_level.is_some_and(|i| {
        i > 0
            && levels[i]
                .provider
                .as_deref()
                .and_then(self::builtin)
                .is_some_and(|b| b.base_url.is_some())
            && non_empty(input.flag_base_url.as_ref())
                .is_some_and(|u| Some(u.trim_end_matches('/')) != builtin.and_then(|b| b.base_url))
    });
    let chosen = chosen.filter(|_| !hosted_elsewhere);
    let model_is_default = chosen.is_none();
    let model = chosen.or_else(|| builtin.and_then(|b| b.model).map(str::to_string));
    // A configured server with no model named: it is asked for its models.
    let model = model.or_else(|| {
        (custom.is_some() && builtin.is_none() && kind != ProviderKind::Replay).then(String::new)
    });
    let Some(model) = model else {
        let hint = match kind {
            ProviderKind::Replay => "write --model replay:FILE".to_string(),
            _ if name == "r9s" => "set $R9S_MODEL or pass --model r9s:MODEL".to_string(),
            _ => format!("pass --model {name}:MODEL or set model in [providers.{name}]"),
        };
        let provider = name.clone();
        return Err(SettingsError::NoModel { provider, hint });
    };
    Ok((model, model_is_default))
}

/// A step of `resolve`: the base URL, checked, and whether it is the provider's default.
fn choose_base_url(input: &SettingsInput, p: &Chosen) -> Result<(String, bool), SettingsError> {
    let env = |k: &str| non_empty(input.env.get(k));
    let (name, builtin, custom) = (&p.name, p.builtin, p.custom);
    if p.kind == ProviderKind::Replay {
        return Ok((String::new(), true));
    }
    let provider_env = builtin.and_then(|b| b.base_url_env);
    let named_by_flag = p.level == 0;
    let candidates: [(Option<&str>, String); 5] = [
        (non_empty(input.flag_base_url.as_ref()), "--base-url".into()),
        (
            env("SKILLPIPE_BASE_URL").filter(|_| !named_by_flag),
            "$SKILLPIPE_BASE_URL".into(),
        ),
        (
            provider_env.and_then(env),
            format!("${}", provider_env.unwrap_or_default()),
        ),
        (
            custom.and_then(|c| non_empty(c.base_url.as_ref())),
            config_origin(input.config.as_ref(), &format!("[providers.{name}]")),
        ),
        (
            builtin.and_then(|b| b.base_url),
            format!("the {name} default"),
        ),
    ];
    let Some((url, origin)) = candidates.into_iter().find_map(|(u, o)| u.map(|u| (u, o))) else {
        let hint = match provider_env {
            Some(v) => format!("set ${v} or pass --base-url"),
            None => format!("set base_url in [providers.{name}] or pass --base-url"),
        };
        let provider = name.clone();
        return Err(SettingsError::NoBaseUrl { provider, hint });
    };
    check_url(url, &origin)?;
    let url = url.trim_end_matches('/').to_string();
    let url_is_default = builtin.and_then(|b| b.base_url) == Some(url.as_str());
    Ok((url, url_is_default))
}

/// What a provider's settings change in every request ahead of time.
fn adaptations(c: &crate::config::ProviderConfig) -> super::adapt::Adaptations {
    super::adapt::Adaptations {
        no_stream_usage: c.stream_usage == Some(false),
        max_completion_tokens: c.max_tokens_param
            == Some(crate::config::MaxTokensParam::MaxCompletionTokens),
        dropped: c.drop_params.iter().cloned().collect(),
    }
}

fn check_url(url: &str, origin: &str) -> Result<(), SettingsError> {
    let bad = |reason: String| SettingsError::BadBaseUrl {
        url: url.to_string(),
        origin: origin.to_string(),
        reason,
    };
    let parsed = reqwest::Url::parse(url).map_err(|e| bad(e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(bad("the scheme must be http or https".into()));
    }
    if parsed.host().is_none() {
        return Err(bad("it has no host".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {

    #[test]
    fn one_edit_apart_is_a_typo_only_for_long_enough_names() {
        assert!(one_edit_apart("anthropic", "anthropc"));
        assert!(one_edit_apart("openai", "opena1"));
        assert!(one_edit_apart("ollama", "olama"));
        assert!(
            !one_edit_apart("ollama", "llama3"),
            "an Ollama model, two edits away"
        );
        assert!(!one_edit_apart("ollama", "ollama"));
        assert!(!one_edit_apart("replay", "qwen2.5"));
        assert!(!one_edit_apart("groq", "grok"), "too short to tell");
    }
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn config(text: &str) -> Config {
        Config::parse(text, Path::new("/cfg/config.toml")).unwrap()
    }

    fn input() -> SettingsInput {
        SettingsInput::default()
    }

    /// `provider base_url model key_variable key`, `-` for no key variable, no key.
    fn summary(s: &Settings) -> String {
        let var = s.api_key_var.as_deref().unwrap_or("-");
        let key = if s.api_key.is_some() { "key" } else { "-" };
        format!("{} {} {} {var} {key}", s.provider_name, s.base_url, s.model)
    }

    #[test]
    fn defaults() {
        let s = resolve(&input()).unwrap();
        assert_eq!(s.provider, ProviderKind::OpenAi);
        let expected = "openai https://api.openai.com/v1 gpt-4o-mini OPENAI_API_KEY -";
        assert_eq!(summary(&s), expected);
        assert!(s.check_api_key().is_err());
    }

    #[test]
    fn precedence_table() {
        // One row per precedence case, read as a table.
        let cfg = config(
            "default_provider = \"local\"\nmodel = \"qwen\"\n[providers.local]\nbase_url = \"http://127.0.0.1:8080/v1\"\napi_key_env = \"LOCAL_KEY\"\nmodel = \"local-default\"\n",
        );
        let agent = AgentModel {
            model: Some("agent-model".into()),
            ..Default::default()
        };
        let full_env = env(&[
            ("SKILLPIPE_MODEL", "env-model"),
            ("SKILLPIPE_BASE_URL", "http://10.0.0.1/v1"),
            ("LOCAL_KEY", "k"),
        ]);
        let (none, local) = (env(&[]), "http://127.0.0.1:8080/v1");
        let openai_local = env(&[
            ("OPENAI_BASE_URL", "http://localhost:1234/v1/"),
            ("OPENAI_API_KEY", "sk"),
        ]);
        let r9s = env(&[
            ("R9S_BASE_URL", "https://gw.example/v1"),
            ("R9S_API_KEY", "r"),
            ("R9S_MODEL", "r-model"),
            ("OPENAI_API_KEY", "sk"),
        ]);
        let anthropic = env(&[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "sk")]);
        let ollama = "ollama http://127.0.0.1:11434/v1";
        // (flag model, flag url, env, agent?, config?) → summary
        type Row<'a> = (
            Option<&'a str>,
            Option<&'a str>,
            &'a BTreeMap<String, String>,
            bool,
            bool,
            String,
        );
        let rows: Vec<Row> = vec![
            // config alone: its default provider and model
            (
                None,
                None,
                &none,
                false,
                true,
                format!("local {local} qwen LOCAL_KEY -"),
            ),
            // agent model beats config model, keeps the config's provider
            (
                None,
                None,
                &none,
                true,
                true,
                format!("local {local} agent-model LOCAL_KEY -"),
            ),
            // env beats agent and config
            (
                None,
                None,
                &full_env,
                true,
                true,
                "local http://10.0.0.1/v1 env-model LOCAL_KEY key".into(),
            ),
            // flags beat everything
            (
                Some("flag-model"),
                Some("http://127.0.0.2:1/v1"),
                &full_env,
                true,
                true,
                "local http://127.0.0.2:1/v1 flag-model LOCAL_KEY key".into(),
            ),
            // a provider named by --model ignores SKILLPIPE_BASE_URL and lower-level models
            (
                Some("ollama:"),
                None,
                &full_env,
                true,
                true,
                format!("{ollama} llama3.2 - -"),
            ),
            (
                Some("ollama:llama3:8b"),
                None,
                &none,
                false,
                false,
                format!("{ollama} llama3:8b - -"),
            ),
            // no provider prefix: a colon inside a model name is kept
            (
                Some("llama3:8b"),
                None,
                &none,
                false,
                false,
                "openai https://api.openai.com/v1 llama3:8b OPENAI_API_KEY -".into(),
            ),
            // OPENAI_* env (a server on this machine: the ambient key is not sent)
            (
                None,
                None,
                &openai_local,
                false,
                false,
                "openai http://localhost:1234/v1 gpt-4o-mini OPENAI_API_KEY -".into(),
            ),
            // R9S_* env makes r9s the default provider, with its own key and model
            (
                None,
                None,
                &r9s,
                false,
                false,
                "r9s https://gw.example/v1 r-model R9S_API_KEY key".into(),
            ),
            // anthropic by prefix
            (
                Some("anthropic:claude-x"),
                None,
                &anthropic,
                false,
                false,
                "anthropic https://api.anthropic.com claude-x ANTHROPIC_API_KEY key".into(),
            ),
        ];
        for (i, (fm, fu, e, with_agent, with_config, expected)) in rows.into_iter().enumerate() {
            let inp = SettingsInput {
                flag_model: fm.map(Into::into),
                flag_base_url: fu.map(Into::into),
                env: e.clone(),
                agent: if with_agent {
                    agent.clone()
                } else {
                    AgentModel::default()
                },
                config: with_config.then(|| cfg.clone()),
            };
            let s = resolve(&inp).unwrap_or_else(|e| panic!("row {i}: {e}"));
            assert_eq!(summary(&s), expected, "row {i}");
        }
    }

    #[test]
    fn agent_provider_and_params() {
        let cfg = config("[providers.openai]\nparams = { temperature = 1.0, top_p = 0.5 }\n");
        let mut params = Map::new();
        params.insert("temperature".into(), json!(0.3));
        let mut inp = SettingsInput {
            agent: AgentModel {
                provider: Some("anthropic".into()),
                params,
                ..Default::default()
            },
            config: Some(cfg),
            ..Default::default()
        };
        let s = resolve(&inp).unwrap();
        assert_eq!(s.provider, ProviderKind::Anthropic);
        assert_eq!(s.model, "claude-haiku-4-5");
        assert_eq!(s.params.get("temperature"), Some(&json!(0.3)));
        assert_eq!(s.params.get("top_p"), None);

        inp.agent.provider = None;
        let s = resolve(&inp).unwrap();
        assert_eq!(s.params.get("temperature"), Some(&json!(0.3)));
        assert_eq!(s.params.get("top_p"), Some(&json!(0.5)));
    }

    #[test]
    fn replay_spec() {
        let inp = SettingsInput {
            flag_model: Some("replay:answers.jsonl".into()),
            ..Default::default()
        };
        let s = resolve(&inp).unwrap();
        assert_eq!(s.provider, ProviderKind::Replay);
        assert_eq!(s.model, "answers.jsonl");
        assert_eq!(s.base_url, "");
        assert!(s.check_api_key().is_ok());
        assert_eq!(s.label(), "replay:answers.jsonl");
    }

    #[test]
    fn unknown_provider_lists_known_ones() {
        let inp = SettingsInput {
            agent: AgentModel {
                provider: Some("openia".into()),
                origin: "agents/x.toml".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        let e = resolve(&inp).unwrap_err().to_string();
        assert!(e.contains("`openia`"), "{e}");
        assert!(e.contains("agents/x.toml"), "{e}");
        assert!(e.contains("openai, anthropic, ollama, r9s, replay"), "{e}");

        let inp = SettingsInput {
            config: Some(config(
                "default_provider = \"nope\"\n[providers.mine]\nbase_url = \"http://h/v1\"\n",
            )),
            ..Default::default()
        };
        let e = resolve(&inp).unwrap_err().to_string();
        assert!(e.contains("/cfg/config.toml"), "{e}");
        assert!(e.contains("mine"), "{e}");
    }

    #[test]
    fn bad_urls_and_missing_pieces() {
        let check = |model: Option<&str>, url: Option<&str>, vars, want: &str| {
            let i = SettingsInput {
                flag_model: model.map(Into::into),
                flag_base_url: url.map(Into::into),
                env: env(vars),
                ..input()
            };
            let e = resolve(&i).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        };
        check(None, Some("localhost:8080"), &[], "--base-url");
        check(Some("r9s:m"), None, &[], "R9S_BASE_URL");
        check(
            Some("r9s:"),
            None,
            &[("R9S_BASE_URL", "https://gw/v1")],
            "R9S_MODEL",
        );
    }

    /// An agent's model for a hosted service is that service's: `--base-url` elsewhere asks
    /// the server instead of sending it the hosted name; at the service's own URL it stands.
    #[test]
    fn a_hosted_model_of_an_agent_is_not_sent_to_another_server() {
        let mut i = input();
        i.agent.model = Some("openai:gpt-4.1".into());
        i.flag_base_url = Some("http://127.0.0.1:8080/v1".into());
        let s = resolve(&i).unwrap();
        assert_ne!(s.model, "gpt-4.1");
        assert!(s.ask_endpoint_for_model);
        i.flag_base_url = Some("https://api.openai.com/v1".into());
        let s = resolve(&i).unwrap();
        assert_eq!(
            (s.model.as_str(), s.ask_endpoint_for_model),
            ("gpt-4.1", false)
        );
        // Named on the command line, it is the user's choice for that server.
        let mut i = input();
        i.flag_model = Some("openai:gpt-4.1".into());
        i.flag_base_url = Some("http://127.0.0.1:8080/v1".into());
        assert_eq!(resolve(&i).unwrap().model, "gpt-4.1");
    }

    #[test]
    fn an_ambient_key_is_not_sent_to_a_local_server_unless_the_config_names_it() {
        let with = |url: &str, cfg: Option<&str>| {
            let mut i = input();
            i.env = env(&[("OPENAI_API_KEY", "sk"), ("OPENAI_BASE_URL", url)]);
            i.config = cfg.map(config);
            resolve(&i).unwrap()
        };
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:1234/v1",
            "http://10.1.2.3/v1",
            "http://192.168.1.5:11434/v1",
            "http://172.20.0.2/v1",
            "http://169.254.1.1/v1",
            "http://100.64.0.9/v1",
            "http://[::1]:8080/v1",
            "http://[fd00::5]/v1",
            "http://[::ffff:10.0.0.1]/v1",
            "http://gpu-box:8000/v1",
            "http://api.localhost/v1",
        ] {
            let s = with(url, None);
            assert!(s.api_key.is_none() && s.api_key_withheld, "{url}");
            assert!(s.check_api_key().is_ok(), "{url}");
            // Named by the user's own config: sent.
            let s = with(
                url,
                Some("[providers.openai]\napi_key_env = \"OPENAI_API_KEY\"\n"),
            );
            assert_eq!(s.api_key.as_deref(), Some("sk"), "{url}");
            assert!(!s.api_key_withheld);
        }
        // A hosted gateway (the usual OPENAI_BASE_URL + OPENAI_API_KEY pair) keeps its key.
        for url in [
            "https://gateway.example.com/v1",
            "https://8.8.8.8/v1",
            "http://172.32.0.1/v1",
        ] {
            let s = with(url, None);
            assert_eq!(s.api_key.as_deref(), Some("sk"), "{url}");
        }
    }

    #[test]
    fn a_default_model_is_marked_when_the_url_is_the_users() {
        // (--model, --base-url) → the model, and whether the server is asked for its models.
        // Ollama serves what its user pulled: its default is a guess even at its own URL.
        let (mini, llama, local) = ("gpt-4o-mini", "llama3.2", "http://localhost:11434/v1");
        for (model, url, want) in [
            (None, Some(local), (mini, true)),
            (Some(llama), Some(local), (llama, false)),
            (None, None, (mini, false)),
            (None, Some("https://api.openai.com/v1/"), (mini, false)),
            (
                Some("ollama:"),
                Some("http://gpu-box:11434/v1"),
                (llama, true),
            ),
            (Some("ollama:"), None, (llama, true)),
            (Some("ollama:qwen2.5:1.5b"), None, ("qwen2.5:1.5b", false)),
        ] {
            let mut i = input();
            (i.flag_model, i.flag_base_url) = (model.map(Into::into), url.map(Into::into));
            let s = resolve(&i).unwrap();
            let got = (s.model.as_str(), s.ask_endpoint_for_model);
            assert_eq!(got, want, "{model:?} {url:?}");
        }
        // A configured server with no model is asked, not refused.
        let i = SettingsInput {
            config: Some(config(
                "default_provider = \"local\"\n[providers.local]\nbase_url = \"http://h/v1\"\n",
            )),
            ..Default::default()
        };
        let s = resolve(&i).unwrap();
        assert_eq!((s.model.as_str(), s.ask_endpoint_for_model), ("", true));
    }

    #[test]
    fn keys_are_needed_only_off_this_machine() {
        let mut s = Settings::new(ProviderKind::OpenAi, "", "m");
        for url in [
            "http://127.0.0.1:9/v1",
            "http://localhost:9/v1",
            "http://[::1]:9/v1",
        ] {
            s.base_url = url.into();
            assert!(s.check_api_key().is_ok(), "{url}");
        }
        s.base_url = "https://api.example.com/v1".into();
        s.api_key_var = Some("OPENAI_API_KEY".into());
        let e = s.check_api_key().unwrap_err().to_string();
        assert!(e.contains("$OPENAI_API_KEY"), "{e}");
        s.api_key = Some("k".into());
        assert!(s.check_api_key().is_ok());
        assert!(!format!("{s:?}").contains("\"k\""));
    }
}
