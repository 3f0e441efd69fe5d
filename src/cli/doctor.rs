//! `skillpipe doctor`: what this machine can enforce, where files live, and the mistakes a new
//! user makes first — a config or agent file that does not parse, the wrong endpoint or model,
//! a missing API key — found before `chat` trips over them.

use super::{AgentFlag, ModelFlags, SkillFlags};
use crate::paths;
use crate::policy::ScriptPolicy;
use crate::sandbox::{self, Capabilities, Support};
use clap::Args;
use std::fmt::Write;
use std::io::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// Also ask the endpoint for its model list (checks the URL and the key).
    #[arg(long)]
    pub online: bool,
    // The settings `chat` would use with these flags.
    #[command(flatten)]
    pub model: ModelFlags,
    #[command(flatten)]
    pub agent: AgentFlag,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
}

pub fn run(args: DoctorArgs) -> anyhow::Result<i32> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let (hidden, notice) = sandbox::secrets::hidden_and_notice(&cwd, &[], &[], None);
    // The report quotes config and agent files and skill folders: foreign text.
    let mut out = crate::term::Guarded::listing();
    write!(
        out,
        "{}",
        report(
            &sandbox::probe(),
            &args.skill_flags,
            &hidden,
            notice.as_deref()
        )
    )?;
    let model = model_section(&args);
    write!(out, "\n{}", model.text)?;
    drop(out);
    for w in &model.warnings {
        eprintln!("skillpipe: warning: {}", crate::term::sanitize(w));
    }
    for e in model.errors.iter().chain(&model.online_errors) {
        eprintln!("skillpipe: {}", crate::term::sanitize(e));
    }
    Ok(if !model.errors.is_empty() {
        super::EXIT_USAGE
    } else if model.online_failure || !model.online_errors.is_empty() {
        super::EXIT_RUNTIME
    } else {
        super::EXIT_OK
    })
}

/// The model part of the report and what it found wrong.
#[derive(Debug, Default)]
pub struct ModelReport {
    pub text: String,
    /// Configuration errors (file and line named): exit 2.
    pub errors: Vec<String>,
    /// What a first chat would trip over but the set-up does not need (a missing API key
    /// without `--online`): said, exit 0.
    pub warnings: Vec<String>,
    /// `--online` could not get the model list: exit 1.
    pub online_failure: bool,
    /// What `--online` found the endpoint cannot do (a model named that it does not serve):
    /// exit 1, as the endpoint not answering.
    pub online_errors: Vec<String>,
}

fn model_section(args: &DoctorArgs) -> ModelReport {
    let mut r = ModelReport {
        text: String::from("Model\n"),
        ..ModelReport::default()
    };
    config_row(&mut r);
    agent_rows(&mut r);
    // Checked for what doctor reports (policy, model, skills): a variable of the instructions
    // has no value here, and needs none.
    let found = |a: &str| {
        crate::agents::find(a, &crate::trust::agent_search_path())
            .map(|f| f.resolve_policy_only(&[]))
    };
    // A broken agent file elsewhere is reported above and fails doctor, but the endpoint is
    // still checked; only the agent asked for, when it cannot be read, stops here.
    let agent = match args.agent.agent.as_deref().map(found) {
        None => None,
        Some(Ok(a)) => Some(a),
        Some(Err(e)) => {
            row(&mut r.text, "agent", &format!("ERROR {e}"));
            r.errors.push(e.to_string());
            return r;
        }
    };
    let settings = match crate::model::Settings::from_process(
        args.model.model.as_deref(),
        args.model.base_url.as_deref(),
        crate::app::agent_model(agent.as_ref()),
    ) {
        Ok(s) => s,
        Err(e) => {
            // The config file's own error, already on its row: said once.
            let e = e.to_string();
            if r.errors.contains(&e) {
                row(
                    &mut r.text,
                    "settings",
                    "not resolved (the config file above)",
                );
            } else {
                row(&mut r.text, "settings", &format!("ERROR {e}"));
                r.errors.push(e);
            }
            return r;
        }
    };
    r.text.push_str(&settings_rows(&settings));
    // A key is needed only to reach the endpoint: a fresh install without one is fine (filter,
    // run, skills and the offline examples work), so it is a warning — unless `--online` was
    // asked to reach it, which chat would refuse to do.
    let key_missing = settings.check_api_key().err();
    if let Some(e) = &key_missing {
        match args.online {
            true => r.errors.push(e.to_string()),
            false => r.warnings.push(e.to_string()),
        }
    }
    // A replay file chat could not read or parse.
    if settings.provider == crate::model::ProviderKind::Replay
        && let Err(e) = crate::model::provider_for(&settings)
    {
        r.errors.push(e.to_string());
    }
    if args.online && key_missing.is_some() {
        // The endpoint would refuse a request without its key: not asked.
        row(&mut r.text, "online", "not asked: its API key is not set");
    } else if args.online && settings.base_url.is_empty() {
        // A replay file answers from the file: there is nothing to reach.
        row(&mut r.text, "online", "nothing to reach (a replay file)");
    } else if args.online {
        online_check(&mut r, &settings);
    }
    r
}

/// A step of `model_section`: the config file, whether it parses.
fn config_row(r: &mut ModelReport) {
    let value = match paths::config_file() {
        Some(path) => match crate::model::Config::load(&path) {
            Ok(Some(_)) => format!("{} (parses)", path.display()),
            Ok(None) => format!("{} (not there: the defaults apply)", path.display()),
            Err(e) => {
                r.errors.push(e.to_string());
                format!("ERROR {e}")
            }
        },
        None => "unknown (no $HOME or $XDG_CONFIG_HOME)".to_string(),
    };
    row(&mut r.text, "config", &value);
}

/// A step of `model_section`: the agent files found, and those broken or with a policy chat
/// would refuse.
fn agent_rows(r: &mut ModelReport) {
    let listing = crate::agents::list();
    row(
        &mut r.text,
        "agents",
        &format!(
            "{} found{}",
            listing.agents.len(),
            match listing.errors.len() {
                0 => String::new(),
                n => format!(", {n} broken"),
            }
        ),
    );
    // A policy value chat would refuse (out of range) is as broken as a file that does not
    // parse.
    let policy_errors = listing.agents.iter().filter_map(|a| {
        let path = a.source.to_string_lossy();
        let file = crate::agents::find(&path, &[]).ok()?;
        let agent = file.resolve_policy_only(&[]);
        let policy = agent.script_policy.as_ref()?;
        crate::app::check_policy(policy, &agent.source)
            .err()
            .map(|e| e.to_string())
    });
    for e in listing.errors.iter().cloned().chain(policy_errors) {
        row(&mut r.text, "", &format!("ERROR {e}"));
        r.errors.push(e);
    }
    for w in &listing.warnings {
        row(&mut r.text, "", &format!("warning: {w}"));
    }
}

/// A step of `model_section` (`--online`): the endpoint's models, whether it serves the one
/// named (or which chat would pick), and whether it returns structured tool calls.
fn online_check(r: &mut ModelReport, settings: &crate::model::Settings) {
    let listed = crate::model::models::list(settings, std::time::Duration::from_secs(10));
    match &listed {
        Ok(models) => {
            let n = models.len();
            let url = crate::model::models::list_url(settings);
            let s = if n == 1 { "" } else { "s" };
            row(
                &mut r.text,
                "online",
                &format!("{url} answers: {n} model{s}"),
            );
            for m in models {
                row(&mut r.text, "", &crate::term::sanitize(m));
            }
        }
        Err(e) => {
            let fix = e.fix(settings).map(|fix| format!("; {fix}"));
            let failed = format!("FAILED — {e}{}", fix.unwrap_or_default());
            row(&mut r.text, "online", &failed);
        }
    }
    r.online_failure = listed.is_err();
    if let Some(e) = listed
        .as_ref()
        .ok()
        .and_then(|m| model_not_served(settings, m))
    {
        row(&mut r.text, "", &format!("ERROR {e}"));
        r.online_errors.push(e);
    }
    // No model named: what chat would pick from that list, or why it would stop.
    let mut model = (!settings.ask_endpoint_for_model).then(|| settings.model.clone());
    if let (true, Ok(models)) = (settings.ask_endpoint_for_model, &listed) {
        match crate::app::model_from_list(&settings.model, models) {
            Ok(chosen) => {
                row(
                    &mut r.text,
                    "",
                    &format!("chat would use {}", crate::term::sanitize(&chosen.name)),
                );
                model = Some(chosen.name.clone());
            }
            Err(why) => {
                let e = format!(
                    "no model named, and {} {}",
                    settings.base_url,
                    crate::term::sanitize(&why)
                );
                row(&mut r.text, "", &format!("ERROR {e}"));
                r.errors.push(e);
            }
        }
    }
    if let (Some(model), true) = (model, listed.is_ok() && r.errors.is_empty()) {
        row(&mut r.text, "tools", &tool_calls_row(settings, &model));
    }
}

/// Whether the endpoint returns structured tool calls (what `chat --tools` needs); a warning,
/// not an error: chat falls back to directives.
fn tool_calls_row(s: &crate::model::Settings, model: &str) -> String {
    use crate::model::probe::{ToolCalls, probe};
    match probe(s, model, std::time::Duration::from_secs(60)) {
        Ok(ToolCalls::Structured) => "returns structured tool calls (--tools works)".into(),
        Ok(ToolCalls::Text(t)) => {
            let t: String = crate::term::sanitize(t.trim()).chars().take(80).collect();
            format!(
                "WARNING no structured tool call came back ({}): chat --tools falls back to \
                 directives with this endpoint and model",
                if t.is_empty() {
                    "an empty answer".to_string()
                } else {
                    format!("text: {t}")
                }
            )
        }
        Err(e) => format!(
            "could not ask for a tool call: {}",
            crate::term::sanitize(&e.to_string())
        ),
    }
}

/// Provider, endpoint, model and key variable (never the key).
pub fn settings_rows(s: &crate::model::Settings) -> String {
    let mut t = String::new();
    row(&mut t, "provider", &s.provider_name);
    let endpoint = match s.base_url.is_empty() {
        true => "none (replay file)",
        false => &s.base_url,
    };
    row(&mut t, "endpoint", endpoint);
    let model = match s.ask_endpoint_for_model {
        true => "none named: chat asks the endpoint and uses its only model (--model chooses)",
        false => &s.model,
    };
    row(&mut t, "model", model);
    let local = crate::model::settings::is_loopback(&s.base_url);
    let key = match (&s.api_key_var, s.api_key.is_some()) {
        // Which key goes where: the endpoint above, or nowhere.
        (Some(v), true) => format!("${v} (set), sent to {}", s.base_url),
        (Some(v), false) if s.api_key_withheld => format!(
            "${v} is set but not sent: {} is on this machine or the local network, and that \
             key is for the provider's service (api_key_env = \"{v}\" in \
             [providers.{}] of the config file sends it)",
            s.base_url, s.provider_name
        ),
        (Some(v), false) if local => format!("${v} not set; none needed on this machine"),
        (Some(v), false) => format!("${v} NOT SET — the endpoint will refuse requests"),
        (None, _) if s.base_url.is_empty() => "none needed".to_string(),
        (None, _) => "none configured (api_key_env in [providers.NAME] names one)".to_string(),
    };
    row(&mut t, "API key", &key);
    t
}

/// The model named (flag, environment, agent or config) when the endpoint's non-empty list
/// does not have it: chat would ask for a model the server does not serve.
fn model_not_served(s: &crate::model::Settings, models: &[String]) -> Option<String> {
    // Ollama serves `qwen2.5` as `qwen2.5:latest`: a name without a tag is the latest one.
    let listed = |m: &String| *m == s.model || *m == format!("{}:latest", s.model);
    let missing = !s.ask_endpoint_for_model && !models.is_empty() && !models.iter().any(listed);
    missing.then(|| {
        format!(
            "{} does not serve model {}: name one it lists with --model (or the config's or agent's `model`)",
            s.base_url,
            crate::term::sanitize(&s.model)
        )
    })
}

/// The whole report as text (separate from printing, for tests). `hidden`: what the default
/// policy hides from scripts run here.
pub fn report(
    caps: &Capabilities,
    flags: &SkillFlags,
    hidden: &[PathBuf],
    notice: Option<&str>,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "skillpipe {}", env!("CARGO_PKG_VERSION"));
    s.push_str(&sandbox_section(caps));
    s.push('\n');
    s.push_str(&view_section(caps));
    s.push_str(&hidden_section(caps, hidden, notice));
    s.push('\n');
    s.push_str(&files_section(flags));
    s
}

fn row(s: &mut String, label: &str, value: &str) {
    let _ = writeln!(s, "  {label:<22} {value}");
}

fn support_row(s: &mut String, label: &str, support: &Support, detail: &str) {
    let value = match support {
        Support::Yes if detail.is_empty() => "yes".to_string(),
        Support::Yes => format!("yes ({detail})"),
        Support::No(reason) => format!("NO — {reason}"),
    };
    row(s, label, &value);
}

fn sandbox_section(caps: &Capabilities) -> String {
    let mut s = String::from("\nSandbox (what this machine can enforce)\n");
    support_row(&mut s, "user namespaces", &caps.user_namespace, "");
    let how = if caps.use_user_namespace {
        "network namespace inside a user namespace"
    } else {
        "network namespace, created directly (privileged)"
    };
    support_row(&mut s, "network isolation", &caps.network_namespace, how);
    support_row(
        &mut s,
        "PID namespace",
        &caps.pid_namespace,
        "command runs under skillpipe's init; its whole tree dies with it",
    );
    let abi = caps
        .landlock_abi
        .map_or(String::new(), |v| format!("Landlock ABI {v}"));
    support_row(&mut s, "filesystem (Landlock)", &caps.landlock, &abi);
    if let (Support::No(_), Some(v)) = (&caps.landlock, caps.landlock_abi) {
        row(&mut s, "", &format!("(kernel has Landlock ABI {v})"));
    }
    support_row(
        &mut s,
        "private mounts",
        &caps.mount_namespace,
        "own /dev, /proc and $TMPDIR tmpfs; IPC and UTS namespaces; secrets hidden; \
         other mounts read-only unless writes are allowed",
    );
    let limits = ScriptPolicy::default().limits();
    let max = limits.processes.unwrap_or(0);
    let nproc = match sandbox::limits::process_limit_support() {
        Ok(how) => format!("yes ({how}; max_processes {max})"),
        Err(p) => format!("NO — {p}"),
    };
    row(
        &mut s,
        "resource limits",
        &format!(
            "yes (defaults: max_memory_mb {}, max_file_size_mb {}, max_tmp_mb {}, max_cpu_seconds {})",
            limits.memory_mb.unwrap_or(0),
            limits.file_size_mb.unwrap_or(0),
            limits.tmp_mb.unwrap_or(0),
            limits.cpu_seconds.unwrap_or(0),
        ),
    );
    row(&mut s, "process limit", &nproc);
    let memory = match sandbox::limits::memory_limit_support() {
        Ok(how) => format!(
            "yes ({how}; max_memory_mb {})",
            limits.memory_mb.unwrap_or(0)
        ),
        Err(e) => format!(
            "per process only (RLIMIT_DATA): {e}; a run's processes together may use \
             max_processes × max_memory_mb"
        ),
    };
    row(&mut s, "memory limit", &memory);
    let seccomp = if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        "yes: no terminal input injection, no keyring, no new namespaces, no setuid/setgid bits or \
         extended attributes, no userfaultfd, perf_event_open, bpf, mounts or modules; sockets \
         only Unix (none unless named), IPv4, IPv6 and routing netlink"
    } else {
        "NO — no filter for this CPU architecture"
    };
    row(&mut s, "seccomp filter", seccomp);
    let missing = [&caps.network_namespace, &caps.landlock]
        .iter()
        .any(|x| !x.is_yes());
    if missing {
        s.push_str(
            "  With sandbox = \"required\" (the default), commands that need a missing restriction\n  \
             are refused; allow it (--allow-network / --allow-filesystem) or use --sandbox best-effort.\n",
        );
    }
    match sandbox::launcher_path() {
        Ok(p) => row(&mut s, "launcher", &p.display().to_string()),
        Err(e) => row(&mut s, "launcher", &format!("NOT FOUND — {e}")),
    }
    s
}

/// What a script run from here sees of the file system (its read view), each path with why.
/// Shown for a Python script, the common case: its interpreter's installation is part of it.
fn view_section(caps: &Capabilities) -> String {
    use sandbox::view;
    let mut s = String::from(
        "Read view of a script run from here (nothing else is mounted; --allow-read adds)\n",
    );
    if let Support::No(reason) = &caps.mount_namespace {
        let _ = writeln!(s, "  NOT ENFORCED — {reason}");
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    let program = view::on_path("python3", &view::path_entries(&path_var))
        .unwrap_or_else(|| PathBuf::from("/bin/sh"));
    let facts = view::facts(&program, &path_var, &[], &cwd, &[], &[], false);
    for g in view::grants(&facts) {
        if g.path.symlink_metadata().is_ok() {
            let _ = writeln!(s, "  {:<40} {}", g.path.display(), g.why.describe());
        }
    }
    s
}

/// `notice`: what the look for them left out (see [`sandbox::secrets::hidden_and_notice`]).
fn hidden_section(caps: &Capabilities, hidden: &[PathBuf], notice: Option<&str>) -> String {
    let mut s = String::from(
        "Hidden from scripts (default policy, run from here; deny_read adds, --allow-read lifts)\n",
    );
    if let Support::No(reason) = &caps.mount_namespace {
        let _ = writeln!(s, "  NOT ENFORCED — {reason}");
    }
    if hidden.is_empty() {
        s.push_str("  (none of the listed secrets exist here)\n");
    }
    for p in hidden {
        // A link covers its target: say which file that is.
        let _ = match std::fs::read_link(p)
            .ok()
            .and(std::fs::canonicalize(p).ok())
        {
            Some(target) => writeln!(s, "  {} -> {} (hidden)", p.display(), target.display()),
            None => writeln!(s, "  {}", p.display()),
        };
    }
    // The `.env*` links whose target is not a secrets file the user keeps stay as they are.
    let cwd = std::env::current_dir().unwrap_or_default();
    for (link, v) in sandbox::secrets::dotenv_links(&cwd) {
        if let Some(why) = v.shown_because {
            let target = v
                .target
                .map_or("nowhere".to_string(), |t| t.display().to_string());
            let _ = writeln!(s, "  {} -> {} (not hidden: {why})", link.display(), target);
        }
    }
    if let Some(n) = notice {
        let _ = writeln!(s, "  NOTE — {n}");
    }
    s
}

/// "26 loaded; 1 with spec warnings, 1 skipped (`skillpipe skills list` says why)".
fn skills_summary(set: &crate::skills::SkillSet) -> String {
    let mut s = format!("{} loaded", set.len());
    let notes: Vec<String> = [
        (set.linted(&[]), "with spec warnings"),
        (set.skipped_count(), "skipped"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if !notes.is_empty() {
        s.push_str(&format!(
            "; {} (`skillpipe skills list` says why)",
            notes.join(", ")
        ));
    }
    s
}

fn describe(path: Option<&Path>) -> String {
    match path {
        None => "unknown (neither $HOME nor the XDG variable is set)".into(),
        Some(p) if p.exists() => p.display().to_string(),
        Some(p) => format!("{} (does not exist)", p.display()),
    }
}

fn files_section(flags: &SkillFlags) -> String {
    let mut s = String::from("Files\n");
    row(&mut s, "config", &describe(paths::config_file().as_deref()));
    row(&mut s, "state", &describe(paths::state_dir().as_deref()));
    row(
        &mut s,
        "audit log",
        &describe(paths::audit_log().as_deref()),
    );
    s.push_str("  skills search path (first match by name wins)\n");
    let dirs = crate::trust::skill_search_path(&flags.skills_dirs);
    for dir in &dirs {
        let _ = writeln!(s, "    {}", describe(Some(dir)));
    }
    // What a command with no agent or --skill loads; the spec warnings are said here, not on
    // every run (installed skills the user did not write would repeat them each time).
    if let Ok(opts) = crate::app::load_options() {
        let set = crate::skills::SkillSet::load_with(&dirs, &opts);
        row(&mut s, "skills", &skills_summary(&set));
    }
    s.push_str("  agents search path\n");
    for dir in crate::trust::agent_search_path() {
        let _ = writeln!(s, "    {}", describe(Some(&dir)));
    }
    let project = match crate::app::project_refusal("--skills-dir / --agent PATH") {
        None => "used (this directory is trusted)".to_string(),
        Some(why) => format!("ignored: {why}"),
    };
    row(&mut s, "project agents/skills", &project);
    row(
        &mut s,
        "trusted directories",
        &describe(crate::trust::store_path().as_deref()),
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A missing restriction says why and how to go on; with every one there (the control), the
    /// report lists what is hidden and where files are looked for.
    #[test]
    fn missing_restrictions_say_why_and_the_search_paths_are_listed() {
        let mut caps = Capabilities::all();
        caps.network_namespace =
            Support::No("user namespaces are disabled (kernel.unprivileged_userns_clone=0)".into());
        let text = report(&caps, &SkillFlags::default(), &[], None);
        assert!(text.contains(
            "network isolation      NO — user namespaces are disabled (kernel.unprivileged_userns_clone=0)"
        ));
        assert!(text.contains("filesystem (Landlock)  yes (Landlock ABI 3)"));
        assert!(text.contains("--sandbox best-effort"));
        let flags = SkillFlags {
            skills_dirs: vec!["/opt/my-skills".into()],
        };
        let text = report(
            &Capabilities::all(),
            &flags,
            &["/h/.ssh".into()],
            Some("looked for .env files in the first 4000 entries"),
        );
        assert!(text.contains("Hidden from scripts"));
        assert!(text.contains("\n  /h/.ssh\n"));
        assert!(text.contains("\n  NOTE — looked for .env files in the first 4000 entries\n"));
        assert!(text.contains("/opt/my-skills (does not exist)"));
        assert!(text.contains("audit log"));
        assert!(text.contains("agents search path"));
        assert!(!text.contains("--sandbox best-effort"));
    }
}
