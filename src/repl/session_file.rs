//! Saved conversations (`/save`, `chat --resume`): one JSON file each.
//!
//! A bare name (no `/` and no `.`) means `$XDG_STATE_HOME/skillpipe/sessions/NAME.json`, so
//! `/save work` and `chat --resume work` meet; anything else is a file path.

use crate::model::Message;
use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Bumped when the layout changes incompatibly.
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionFile {
    /// The file format version ([`FORMAT`]).
    pub skillpipe_session: u32,
    /// RFC 3339, UTC.
    pub saved_at: String,
    /// `provider:model` at the time of saving.
    pub model: String,
    /// The endpoint it talked to (none for a replay); older files have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    pub agent: Option<String>,
    /// How to load it all again from any folder (see [`Reload`]); older files have none.
    #[serde(default, skip_serializing_if = "Reload::is_empty")]
    pub reload: Reload,
    /// What the model saw (raw text, directives included), without the system prompt.
    pub history: Vec<Message>,
    /// What the user saw (processed text), for showing on resume and for `/copy`.
    pub transcript: Vec<Entry>,
}

/// What a resumed session needs to be built as it was, from whatever folder it is resumed in:
/// paths are absolute. The policy is not among them: what may run is the user's choice at each
/// start (DESIGN §8), so the flags that grant it are given again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reload {
    /// The `--agent` argument: a name, or an agent file's absolute path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The `--skills-dir` folders, absolute.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills_dirs: Vec<PathBuf>,
    /// The `--skill` names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<String>,
    /// The `--var K=V` values for the agent's instructions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vars: Vec<String>,
    /// Scripts were allowed when it was saved (said on resume when they no longer are).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub scripts_allowed: bool,
}

impl Reload {
    fn is_empty(&self) -> bool {
        *self == Reload::default()
    }

    /// From the session's configuration, paths made absolute against `cwd` (where skillpipe
    /// was started, which the REPL never changes).
    pub fn of(config: &crate::app::ChatConfig, scripts_allowed: bool, cwd: &Path) -> Reload {
        let app = &config.app;
        Reload {
            agent: app
                .agent
                .as_deref()
                .map(|a| match crate::paths::agent_dir(a) {
                    // Given by path: absolute, so another folder finds the same file.
                    Some(_) => absolute(cwd, Path::new(a)).display().to_string(),
                    None => agent_by_name(a, cwd),
                }),
            skills_dirs: app.skills_dirs.iter().map(|d| absolute(cwd, d)).collect(),
            skills: app.only_skills.clone(),
            vars: app.vars.clone(),
            scripts_allowed,
        }
    }
}

/// How to find agent `name` again from any folder: a trusted project's agent (found in
/// `./agents` here, and nowhere from another folder) by its absolute path; the user's own
/// agent stays a name. A file saved by path loads as any agent file outside the user's config
/// does (it grants nothing), and only from the user's own saved sessions.
fn agent_by_name(name: &str, cwd: &Path) -> String {
    match crate::agents::find(name, &crate::trust::agent_search_path()) {
        Ok(file) if !crate::paths::in_user_config(&file.agent.source) => {
            absolute(cwd, &file.agent.source).display().to_string()
        }
        _ => name.to_string(),
    }
}

/// `path` against `cwd` when relative, with `.` components dropped (no file system access:
/// the path may be gone by the time it is read back).
fn absolute(cwd: &Path, path: &Path) -> PathBuf {
    let joined = cwd.join(path);
    joined
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// A `replay:FILE` model with FILE absolute; other models as they are.
pub fn absolute_model(label: &str, cwd: &Path) -> String {
    match label.strip_prefix("replay:") {
        Some(file) if !file.is_empty() => {
            format!("replay:{}", absolute(cwd, Path::new(file)).display())
        }
        _ => label.to_string(),
    }
}

/// What resuming brought back from the file, for the REPL to say.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// The agent came from the file (none was given on the command line).
    pub agent: bool,
    /// Saved skill folders that are gone (left out, so the rest still loads).
    pub missing_dirs: Vec<PathBuf>,
    /// The file is not one of the user's saved sessions: the agent file, skill folders and
    /// model endpoint it names were left out.
    pub paths_left_out: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub role: String,
    pub text: String,
}

impl SessionFile {
    pub fn new(
        model: &str,
        agent: Option<&str>,
        history: &[Message],
        transcript: &[(String, String)],
        now: SystemTime,
    ) -> SessionFile {
        SessionFile {
            skillpipe_session: FORMAT,
            saved_at: crate::audit::timestamp(now),
            model: model.to_string(),
            base_url: None,
            agent: agent.map(str::to_string),
            reload: Reload::default(),
            history: history.to_vec(),
            transcript: transcript
                .iter()
                .map(|(role, text)| Entry {
                    role: role.clone(),
                    text: text.clone(),
                })
                .collect(),
        }
    }

    /// Resuming goes on with the model and endpoint the session was held with, unless the
    /// command line names others; likewise with its agent (and its `--var`s), its skill folders
    /// and its `--skill` names. Policy flags are never taken from the file. A file that is not
    /// `kept` (one of the user's saved sessions, in [`sessions_dir`]) may have come with a
    /// project: the agent file and skill folders it names are not loaded from it (fail closed),
    /// only an agent by name.
    pub fn apply_to(&self, config: &mut crate::app::ChatConfig, kept: bool) -> Applied {
        let mut applied = Applied::default();
        // A flag that repeats the saved value names nothing new: `--base-url` the session was
        // saved with still goes on with its model, `--model` it was saved with at its endpoint.
        let model_repeated = config
            .model
            .as_deref()
            .is_some_and(|m| same_model(m, &self.model));
        let url_repeated = config
            .base_url
            .as_deref()
            .is_some_and(|u| self.base_url.as_deref().is_some_and(|s| same_url(u, s)));
        // The endpoint too: the user's API key would go to a server the file names.
        let endpoint_open = config.model.is_none() && config.base_url.is_none();
        let endpoint_kept = (config.model.is_none() || model_repeated)
            && (config.base_url.is_none() || url_repeated);
        if endpoint_kept && kept {
            config.model = Some(self.model.clone());
            config.base_url = self.base_url.clone();
        }
        // Another model alone (no provider in its name, no `--base-url`) is asked of the same
        // endpoint: the conversation must not go to another server because a model was named.
        let other_model_only = config.base_url.is_none()
            && !model_repeated
            && config.model.as_deref().is_some_and(|m| !m.contains(':'));
        if other_model_only && kept {
            if let (Some((provider, _)), Some(model)) =
                (self.model.split_once(':'), config.model.as_deref())
            {
                config.model = Some(format!("{provider}:{model}"));
            }
            config.base_url = self.base_url.clone();
        }
        let app = &mut config.app;
        // Older files have only the agent's name.
        let agent = self.reload.agent.as_ref().or(self.agent.as_ref());
        // `--agent` naming the saved agent again keeps its `--var`s unless others are given.
        let agent_repeated = app.agent.as_ref().is_some_and(|given| {
            Some(given) == self.reload.agent.as_ref() || Some(given) == self.agent.as_ref()
        });
        if agent_repeated && app.vars.is_empty() {
            app.vars = self.reload.vars.clone();
        }
        let by_path = agent.is_some_and(|a| crate::paths::agent_dir(a).is_some());
        let agent = agent.filter(|_| kept || !by_path);
        applied.paths_left_out = !kept
            && ((by_path && app.agent.is_none())
                || (!self.reload.skills_dirs.is_empty() && app.skills_dirs.is_empty())
                || endpoint_open);
        if let (None, Some(agent)) = (&app.agent, agent) {
            app.agent = Some(agent.clone());
            if app.vars.is_empty() {
                app.vars = self.reload.vars.clone();
            }
            applied.agent = true;
        }
        if app.skills_dirs.is_empty() && kept {
            let (here, gone): (Vec<PathBuf>, Vec<PathBuf>) = self
                .reload
                .skills_dirs
                .iter()
                .cloned()
                .partition(|d| d.is_dir());
            app.skills_dirs = here;
            applied.missing_dirs = gone;
        }
        if app.only_skills.is_empty() {
            app.only_skills = self.reload.skills.clone();
        }
        applied
    }

    /// The transcript as the session keeps it.
    pub fn transcript_pairs(&self) -> Vec<(String, String)> {
        self.transcript
            .iter()
            .map(|e| (e.role.clone(), e.text.clone()))
            .collect()
    }

    /// The first thing the user said, on one line, for listings.
    pub fn first_prompt(&self) -> String {
        let text = self
            .transcript
            .iter()
            .find(|e| e.role == "user")
            .map(|e| e.text.as_str())
            .unwrap_or("");
        let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
        crate::command::cut_chars(&line, 60)
    }
}

/// Whether the `--model` argument `given` names the saved `provider:model` (`saved`): the same
/// text, or the same model without its provider.
fn same_model(given: &str, saved: &str) -> bool {
    given == saved
        || saved
            .split_once(':')
            .is_some_and(|(_, model)| model == given)
}

/// Whether two endpoint URLs are the same one (a trailing `/` aside, as requests are built).
fn same_url(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// Where named sessions live.
pub fn sessions_dir() -> Option<PathBuf> {
    crate::paths::state_dir().map(|d| d.join("sessions"))
}

/// Whether `path` is one of the user's saved sessions (directly in [`sessions_dir`]).
pub fn is_kept(path: &Path) -> bool {
    let canon = |p: &Path| p.canonicalize().ok();
    let folder = sessions_dir().as_deref().and_then(canon);
    folder.is_some() && path.parent().and_then(canon) == folder
}

/// A bare name lives in the sessions folder; anything with `/` or `.` is a path.
pub fn is_bare_name(arg: &str) -> bool {
    !arg.is_empty() && !arg.contains(['/', '.']) && !arg.starts_with('~')
}

/// Where `/save ARG` writes: a path as given, a bare name in `dir`, or (no argument) the file
/// the session came from, else a new name from the time.
pub fn save_target(
    arg: Option<&str>,
    current: Option<&Path>,
    dir: Option<&Path>,
    now: SystemTime,
) -> Result<PathBuf, SessionPathError> {
    let named = |name: &str| match dir {
        Some(d) => Ok(d.join(format!("{name}.json"))),
        None => Err(SessionPathError::NoSessionsFolder),
    };
    match arg {
        Some(a) if is_bare_name(a) => named(a),
        Some(a) => Ok(PathBuf::from(a)),
        None => match current {
            Some(p) => Ok(p.to_path_buf()),
            None => named(&time_name(now)),
        },
    }
}

/// `2025-01-31-142501` (UTC) from a time.
pub fn time_name(now: SystemTime) -> String {
    let ts = crate::audit::timestamp(now); // 2025-01-31T14:25:01.123Z
    let date = &ts[..10];
    let time: String = ts[11..19].chars().filter(|c| *c != ':').collect();
    format!("{date}-{time}")
}

/// Why a session name does not lead to a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionPathError {
    /// A bare name, and no folder to keep sessions in.
    #[error("no sessions folder: neither $XDG_STATE_HOME nor $HOME is set; give a file path")]
    NoSessionsFolder,
    /// `--resume NAME` found nothing.
    #[error(
        "no saved session `{name}` (looked for {looked}); `skillpipe chat --resume` lists them"
    )]
    NotFound {
        /// The name or path given.
        name: String,
        /// Where it looked.
        looked: String,
    },
}

/// Finds a session for `--resume ARG`: an existing file, else a name in `dir`.
pub fn resolve(arg: &str, dir: Option<&Path>) -> Result<PathBuf, SessionPathError> {
    let in_dir = dir
        .into_iter()
        .flat_map(|d| [d.join(format!("{arg}.json")), d.join(arg)]);
    if let Some(found) = std::iter::once(PathBuf::from(arg))
        .chain(in_dir)
        .find(|p| p.is_file())
    {
        return Ok(found);
    }
    let looked = match dir {
        Some(d) => format!("{arg} or {}", d.join(format!("{arg}.json")).display()),
        None => arg.to_string(),
    };
    Err(SessionPathError::NotFound {
        name: arg.to_string(),
        looked,
    })
}

/// Writes a session file. Conversations are private: folders it creates are 0700, a new file
/// is 0600 (like the history).
pub fn save(path: &Path, file: &SessionFile) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        crate::paths::create_private_dirs(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let mut text = serde_json::to_string_pretty(file)?;
    text.push('\n');
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))
}

pub fn load(path: &Path) -> anyhow::Result<SessionFile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read session {}", path.display()))?;
    let file: SessionFile = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a skillpipe session file", path.display()))?;
    if file.skillpipe_session > FORMAT {
        anyhow::bail!(
            "{}: session format {} is newer than this skillpipe understands ({FORMAT})",
            path.display(),
            file.skillpipe_session
        );
    }
    Ok(file)
}

/// A saved session, for the `--resume` listing.
#[derive(Debug, Clone)]
pub struct Listed {
    pub name: String,
    pub path: PathBuf,
    pub file: SessionFile,
}

/// The sessions in `dir`, newest first. Files that do not parse are skipped.
pub fn list(dir: &Path) -> Vec<Listed> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<Listed> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|path| {
            let file = load(&path).ok()?;
            let name = path.file_stem()?.to_string_lossy().into_owned();
            Some(Listed { name, path, file })
        })
        .collect();
    found.sort_by(|a, b| {
        b.file
            .saved_at
            .cmp(&a.file.saved_at)
            .then_with(|| a.name.cmp(&b.name))
    });
    found
}

/// Picks from a listing by number (1 = first) or by name.
pub fn pick<'a>(listed: &'a [Listed], answer: &str) -> Option<&'a Listed> {
    let answer = answer.trim();
    if let Ok(n) = answer.parse::<usize>() {
        return n.checked_sub(1).and_then(|i| listed.get(i));
    }
    listed.iter().find(|l| l.name == answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn sample(saved: u64) -> SessionFile {
        SessionFile::new(
            "openai:m",
            Some("tutor"),
            &[Message::user("hi"), Message::assistant("Hello !{echo x}")],
            &[
                ("user".into(), "hi   there\nyou".into()),
                ("assistant".into(), "Hello".into()),
            ],
            UNIX_EPOCH + Duration::from_secs(saved),
        )
    }

    #[test]
    fn bare_names_go_to_the_sessions_folder() {
        let dir = Path::new("/state/sessions");
        let now = UNIX_EPOCH + Duration::from_secs(1_738_333_501);
        let t = |a: Option<&str>, cur: Option<&Path>| save_target(a, cur, Some(dir), now).unwrap();
        assert_eq!(t(Some("work"), None), dir.join("work.json"));
        assert_eq!(t(Some("notes.json"), None), PathBuf::from("notes.json"));
        assert_eq!(t(Some("out/s"), None), PathBuf::from("out/s"));
        assert_eq!(
            t(None, Some(Path::new("/x/y.json"))),
            PathBuf::from("/x/y.json")
        );
        assert_eq!(t(None, None), dir.join("2025-01-31-142501.json"));
        assert_eq!(
            save_target(Some("work"), None, None, now),
            Err(SessionPathError::NoSessionsFolder)
        );
    }

    #[test]
    fn round_trip_list_and_pick() {
        let tmp = tempfile::tempdir().unwrap();
        let older = tmp.path().join("older.json");
        let newer = tmp.path().join("newer.json");
        save(&older, &sample(100)).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&older).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        save(&newer, &sample(200)).unwrap();
        std::fs::write(tmp.path().join("junk.json"), "{").unwrap();
        assert_eq!(load(&older).unwrap(), sample(100));
        let listed = list(tmp.path());
        let names: Vec<&str> = listed.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["newer", "older"]);
        assert_eq!(pick(&listed, "2").unwrap().name, "older");
        assert_eq!(pick(&listed, "newer").unwrap().name, "newer");
        assert!(pick(&listed, "0").is_none());
        assert!(pick(&listed, "3").is_none());
        assert_eq!(listed[0].file.first_prompt(), "hi there you");
        assert_eq!(resolve("older", Some(tmp.path())).unwrap(), older);
        let missing = resolve("gone", Some(tmp.path())).unwrap_err();
        assert!(missing.to_string().contains("gone.json"), "{missing}");
    }

    #[test]
    fn paths_are_saved_absolute_and_brought_back_unless_given_again() {
        use crate::app::ChatConfig;
        let cwd = Path::new("/work/project");
        let mut started = ChatConfig::default();
        started.app.agent = Some("./agents/tutor.toml".into());
        started.app.skills_dirs = vec![PathBuf::from("skills"), PathBuf::from("/gone")];
        started.app.only_skills = vec!["say".into()];
        started.app.vars = vec!["lang=French".into()];
        let reload = Reload::of(&started, true, cwd);
        assert_eq!(
            reload.agent.as_deref(),
            Some("/work/project/agents/tutor.toml")
        );
        assert_eq!(reload.skills_dirs[0], PathBuf::from("/work/project/skills"));
        assert_eq!(
            absolute_model("replay:t/a.jsonl", cwd),
            "replay:/work/project/t/a.jsonl"
        );
        assert_eq!(absolute_model("openai:gpt-4o", cwd), "openai:gpt-4o");
        // An agent found by name stays a name.
        started.app.agent = Some("tutor".into());
        assert_eq!(
            Reload::of(&started, false, cwd).agent.as_deref(),
            Some("tutor")
        );

        let tmp = tempfile::tempdir().unwrap();
        let mut file = sample(1);
        file.reload = Reload {
            agent: Some("/a/tutor.toml".into()),
            skills_dirs: vec![tmp.path().to_path_buf(), PathBuf::from("/no/such/dir")],
            skills: vec!["say".into()],
            vars: vec!["lang=French".into()],
            scripts_allowed: true,
        };
        let mut resumed = ChatConfig::default();
        let applied = file.apply_to(&mut resumed, true);
        assert!(applied.agent);
        assert_eq!(applied.missing_dirs, [PathBuf::from("/no/such/dir")]);
        assert_eq!(resumed.app.agent.as_deref(), Some("/a/tutor.toml"));
        assert_eq!(resumed.app.skills_dirs, [tmp.path().to_path_buf()]);
        assert_eq!(resumed.app.vars, ["lang=French"]);
        assert_eq!(resumed.app.only_skills, ["say"]);
        // No policy comes back.
        assert!(!resumed.app.overrides.allow_scripts && !resumed.app.overrides.confirm_never);
        // What the command line names wins.
        let mut given = ChatConfig::default();
        given.app.agent = Some("other".into());
        given.app.skills_dirs = vec![PathBuf::from("mine")];
        let applied = file.apply_to(&mut given, true);
        assert!(!applied.agent);
        assert_eq!(given.app.agent.as_deref(), Some("other"));
        assert_eq!(given.app.skills_dirs, [PathBuf::from("mine")]);
        assert!(given.app.vars.is_empty());
        // A file from elsewhere (a project's) brings no agent file and no skill folder.
        let mut elsewhere = ChatConfig::default();
        let applied = file.apply_to(&mut elsewhere, false);
        assert!(applied.paths_left_out && !applied.agent);
        assert!(elsewhere.app.agent.is_none() && elsewhere.app.skills_dirs.is_empty());
        assert_eq!(elsewhere.model, None, "nor the endpoint it names");
        file.reload.agent = Some("tutor".into());
        file.reload.skills_dirs.clear();
        let mut by_name = ChatConfig {
            model: Some("m".into()),
            ..ChatConfig::default()
        };
        let applied = file.apply_to(&mut by_name, false);
        assert!(applied.agent && !applied.paths_left_out);
        assert_eq!(by_name.app.agent.as_deref(), Some("tutor"));
    }

    /// A flag that repeats what the session was saved with names nothing new: the saved model
    /// stays with its endpoint, the saved agent with its `--var`s.
    #[test]
    fn a_flag_repeating_the_saved_value_keeps_the_rest() {
        use crate::app::ChatConfig;
        let mut file = sample(1);
        file.model = "openai:m2".into();
        file.base_url = Some("http://127.0.0.1:9/v1".into());
        file.reload.agent = Some("tutor".into());
        file.reload.vars = vec!["lang=French".into()];
        let resume = |model: Option<&str>, url: Option<&str>| {
            let mut c = ChatConfig {
                model: model.map(str::to_string),
                base_url: url.map(str::to_string),
                ..ChatConfig::default()
            };
            file.apply_to(&mut c, true);
            (c.model, c.base_url)
        };
        let (m2, url9, url8) = (
            "openai:m2",
            "http://127.0.0.1:9/v1",
            "http://127.0.0.1:8/v1",
        );
        // (--model, --base-url) given, and the model and endpoint resumed with.
        for (model, url, resumed) in [
            (None, Some("http://127.0.0.1:9/v1/"), (Some(m2), Some(url9))),
            (Some("m2"), None, (Some(m2), Some(url9))),
            (Some(m2), Some(url9), (Some(m2), Some(url9))),
            // Controls: a flag that names another model or endpoint wins, and alone.
            (None, Some(url8), (None, Some(url8))),
            (Some("m2"), Some(url8), (Some("m2"), Some(url8))),
            // Another model alone is asked of the saved endpoint (the conversation stays
            // there); one naming its provider goes where that provider is.
            (Some("m1"), None, (Some("openai:m1"), Some(url9))),
            (Some("anthropic:c"), None, (Some("anthropic:c"), None)),
        ] {
            let owned = |s: Option<&str>| s.map(str::to_string);
            let want = (owned(resumed.0), owned(resumed.1));
            assert_eq!(resume(model, url), want, "{model:?} {url:?}");
        }
        // The saved agent named again keeps its variables; another agent does not get them.
        let mut again = ChatConfig::default();
        again.app.agent = Some("tutor".into());
        file.apply_to(&mut again, true);
        assert_eq!(again.app.vars, ["lang=French"]);
        let mut other = ChatConfig::default();
        other.app.agent = Some("other".into());
        file.apply_to(&mut other, true);
        assert!(other.app.vars.is_empty());
    }

    #[test]
    fn newer_formats_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("s.json");
        let mut s = sample(1);
        s.skillpipe_session = FORMAT + 1;
        save(&p, &s).unwrap();
        assert!(load(&p).unwrap_err().to_string().contains("newer"));
    }
}
