//! One sentence per [`Hint`], written once, and the setting it names rendered for whom it is
//! for: the library's policy key, the command line's flag, or the model's plain name (it
//! cannot pass flags, and must not talk anyone into opening the sandbox).

use super::guess::Hint;
use crate::exec::Advice;
use std::path::Path;

/// Who reads the advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// A program using the library: policy keys.
    Library,
    /// A user of the `skillpipe` binary: its flags.
    Cli,
    /// The model: no flags, the user's setting by name.
    Model,
}

/// The setting `key`, for `to`, with `path` where it takes one.
pub fn setting(key: &str, path: Option<&Path>, to: Audience) -> String {
    let flag = crate::policy::flags::flag(key).unwrap_or(key);
    let shown = path.map(|p| crate::command::escape_controls(&p.display().to_string()));
    match to {
        Audience::Library if key == "workdir" => "workdir = \"caller\"".to_string(),
        Audience::Library => key.to_string(),
        Audience::Cli => match shown {
            Some(p) => flag.replace("PATH", &p),
            None => flag.to_string(),
        },
        Audience::Model => format!("the user's {key} setting"),
    }
}

impl Hint {
    /// The policy key that lifts it, if one does.
    pub fn key(&self) -> Option<&'static str> {
        Some(match self {
            Hint::Limit { key, .. } => key,
            Hint::OutsideView { .. } | Hint::Hidden { .. } => "allow_read",
            Hint::Sockets { .. } => "allowed_sockets",
            Hint::Writes {
                ran_in: Some(_), ..
            }
            | Hint::Workdir { .. } => "workdir",
            Hint::Writes { .. } => "writable_paths",
            Hint::Network { .. } => "allow_network",
            Hint::Timeout { tool: None, .. } => "timeout_seconds",
            Hint::MissingModule {
                hidden: Some(_), ..
            } => "allow_read",
            Hint::MissingModule { dropped, .. } if !dropped.is_empty() => "env_passthrough",
            _ => return None,
        })
    }

    /// Its kind, as `run --json` names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Hint::Limit { .. } => "limit",
            Hint::OutsideView { .. } => "outside_view",
            Hint::Hidden { .. } => "hidden",
            Hint::OwnPermissions { .. } => "own_permissions",
            Hint::Sockets { .. } => "sockets",
            Hint::Protected { .. } => "protected",
            Hint::Writes { .. } => "writes",
            Hint::Denied { .. } => "denied",
            Hint::VcsMetadata { .. } => "vcs_metadata",
            Hint::Namespaces => "namespaces",
            Hint::Network { .. } => "network",
            Hint::Timeout { .. } => "timeout",
            Hint::Workdir { .. } => "workdir",
            Hint::MissingModule { .. } => "missing_module",
        }
    }

    /// The path it concerns, if one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Hint::OutsideView { path } | Hint::Hidden { path } => Some(path),
            Hint::Sockets { path, .. } => path.as_deref(),
            Hint::OwnPermissions { path } | Hint::Protected { path, .. } => Some(Path::new(path)),
            Hint::Denied { path, .. } => path.as_deref().map(Path::new),
            Hint::MissingModule { hidden, .. } => hidden.as_deref(),
            _ => None,
        }
    }

    /// Typed, with its sentence for `to` and for the model.
    pub fn advice(&self, to: Audience) -> Advice {
        Advice {
            kind: self.kind(),
            setting: self.key(),
            path: self.path().map(Path::to_path_buf),
            hint: self.word(to),
            for_model: self.word(Audience::Model),
        }
    }

    /// Its one sentence, for `to`.
    pub fn word(&self, to: Audience) -> String {
        // Long on purpose: one match arm per hint kind, a closed set.
        let lift = || setting(self.key().unwrap_or(""), self.path(), to);
        let show = |p: &Path| crate::command::escape_controls(&p.display().to_string());
        match self {
            Hint::Limit { key, value } => {
                let unit = if key.ends_with("_mb") {
                    " MiB"
                } else if key.ends_with("seconds") {
                    " s"
                } else {
                    ""
                };
                let v = value.map_or(String::new(), |v| format!(" = {v}{unit}"));
                format!(
                    "sandbox: the run hit the limit {key}{v}; raise it with {}",
                    lift()
                )
            }
            Hint::OutsideView { path } => format!(
                "sandbox: {} is outside the run's view: {} shows it to scripts, {} lets them \
                 write there",
                show(path),
                lift(),
                setting("writable_paths", None, to)
            ),
            Hint::Hidden { path } if path.is_relative() => format!(
                "sandbox: a hidden {} (deny_read hides it from scripts; the one where it \
                 started, or another folder's if it changed folder); lift it with {} and its \
                 full path",
                show(path),
                setting("allow_read", None, to).trim_end_matches(" PATH")
            ),
            Hint::Hidden { path } => format!(
                "sandbox: {} is hidden from scripts (deny_read); lift it with {}",
                show(path),
                lift()
            ),
            Hint::OwnPermissions { path } => format!(
                "sandbox: {path} is in a writable path: the sandbox did not refuse the write, \
                 the file's or its folder's own permissions did; change them, or write elsewhere"
            ),
            Hint::Sockets {
                named, network_off, ..
            } => {
                let mut s = format!(
                    "sandbox: {}; allow one with {}",
                    match named {
                        true => "only the Unix sockets named in the policy are open",
                        false => "Unix sockets are closed",
                    },
                    lift()
                );
                if *network_off {
                    let kind = if to == Audience::Cli {
                        "flag"
                    } else {
                        "setting"
                    };
                    let net = setting("allow_network", None, to);
                    s += &format!(" (a separate {kind} from {net}, which opens only the network)");
                }
                s
            }
            Hint::Protected { path, why, ran_in } => {
                let mut s = format!(
                    "sandbox: {path} is protected ({why}): scripts may not write there; write \
                     in the project or $TMPDIR instead"
                );
                if let Some(dir) = ran_in {
                    let caller = setting("workdir", None, to);
                    s += &format!("; it ran in {}: {caller} runs it where you are", show(dir));
                }
                s
            }
            Hint::Writes { writable, ran_in } => {
                let shown: Vec<String> = writable.iter().map(|p| show(p)).collect();
                let and = match shown.is_empty() {
                    true => String::new(),
                    false => format!(" and {}", shown.join(", ")),
                };
                let fix = match ran_in {
                    Some(dir) => format!(
                        "it ran in {}, not where you work, so a relative path wrote there; {} \
                         runs it in your folder",
                        show(dir),
                        lift()
                    ),
                    None => format!("allow a directory with {}", lift()),
                };
                format!("sandbox: writes outside $TMPDIR{and} are refused; {fix}")
            }
            Hint::Denied { path, in_proc } => match (path, in_proc) {
                (Some(p), true) => format!(
                    "sandbox: reading {p} was denied: the run has a /proc of its own, where its init and \
                     the host's processes are out of reach; no setting lifts that"
                ),
                (Some(p), false) => format!("{p} was denied (not by a setting skillpipe has)"),
                (None, _) => "permission denied (not by a setting skillpipe has)".to_string(),
            },
            Hint::VcsMetadata { name } => format!(
                "sandbox: {name} stays read-only, inside writable paths too (its hooks and \
                 settings would run commands outside the sandbox); change it yourself"
            ),
            Hint::Namespaces => "sandbox: scripts cannot make namespaces of their own (unshare, \
                 a nested sandbox or container); no setting lifts that"
                .to_string(),
            Hint::Network { local } => format!(
                "sandbox: there is no network, and the run has a loopback of its own ({} is \
                 outside it); {} allows it",
                local.as_deref().unwrap_or("127.0.0.1:PORT"),
                lift()
            ),
            Hint::Timeout {
                after,
                network_off,
                tool,
            } => {
                let after = crate::term::duration::text(*after);
                let mut s = match tool {
                    Some((tool, policy)) => format!(
                        "stopped at the timeout of tool `{tool}` (its tool.yaml's timeout, \
                         {after}): a larger timeout there allows longer (up to the policy's \
                         {policy} s)"
                    ),
                    None => format!(
                        "stopped at the timeout (timeout_seconds = {after}): {} allows longer \
                         (at most 600)",
                        lift()
                    ),
                };
                if *network_off {
                    let net = setting("allow_network", None, to);
                    s += &format!(
                        "; with the network off, a script waiting on a download also ends here ({net})"
                    );
                }
                s
            }
            Hint::Workdir { arg } => {
                let story = match arg.as_str() {
                    "." | "./" => format!("so `{arg}` was that folder, not where you are"),
                    _ => format!("where `{arg}` does not exist (it does where you are)"),
                };
                format!(
                    "the script ran in its skill's folder, {story}: {} runs skill scripts where \
                     you are",
                    lift()
                )
            }
            Hint::MissingModule {
                module,
                hidden,
                dropped,
            } => {
                let top = module.split('.').next().unwrap_or(module);
                let mut s = format!(
                    "python: the module `{module}` is missing; install it with `pip install {top}`"
                );
                if let Some(h) = hidden {
                    let lift = setting("allow_read", Some(h), to);
                    s += &format!(
                        "; the sandbox hides {} (deny_read), where `pip install --user` puts \
                         packages: {lift} shows it",
                        show(h)
                    );
                }
                if !dropped.is_empty() {
                    let pass = setting("env_passthrough", None, to);
                    s += &format!(
                        "; {} is set here but not passed to scripts (add it to {pass})",
                        dropped.join(", ")
                    );
                }
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sentence_names_the_key_the_flag_or_neither() {
        let h = Hint::Hidden {
            path: "/h/.aws".into(),
        };
        assert!(
            h.word(Audience::Library)
                .ends_with("lift it with allow_read")
        );
        assert!(
            h.word(Audience::Cli)
                .ends_with("lift it with --allow-read /h/.aws")
        );
        let model = h.word(Audience::Model);
        assert!(
            !model.contains("--") && model.contains("allow_read"),
            "{model}"
        );
        assert_eq!(h.advice(Audience::Cli).setting, Some("allow_read"));
        let t = Hint::Timeout {
            after: std::time::Duration::from_secs(5),
            network_off: true,
            tool: None,
        };
        assert!(t.word(Audience::Cli).contains("--timeout SECS"));
        assert!(t.word(Audience::Cli).contains("--allow-network"));
        assert!(!t.word(Audience::Library).contains("--"));
        for h in [Hint::Namespaces, Hint::VcsMetadata { name: ".git" }] {
            assert_eq!(h.key(), None);
            assert_eq!(h.word(Audience::Cli), h.word(Audience::Library));
        }
    }
}
