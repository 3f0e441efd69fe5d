//! Configuration given to every system command skillpipe runs, through the environment, so
//! that an allowed `git` does not start the programs a repository's own config names: git
//! reads `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` as command-line settings,
//! above every config file (the repository's included). Other programs ignore them. Pure.

/// Settings that start no program of the repository's: the file-system monitor and hooks
/// off, the plain `ssh`, no proxy command, `cat` as pager, no editor, no `ext::` transport.
const FIXED: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.sshCommand", "ssh"),
    ("core.gitProxy", "none"),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("sequence.editor", "true"),
    ("protocol.ext.allow", "never"),
];

/// An external diff command that shows the change with the system's `diff -u` (git has no
/// value that turns one off; an empty one fails every diff). Given only where the
/// repository's config sets one, so that a plain `git diff` keeps git's own output.
const PLAIN_DIFF: &str = "f() { diff -u \"$2\" \"$5\"; true; }; f";

/// Keys of a driver section (`[diff "NAME"]` …) that name a program, and the value that
/// runs nothing of the repository's (`cat` passes the content through; a process filter that
/// does not start is skipped, as it is not required).
const DRIVER_KEYS: &[(&str, &[(&str, &str)])] = &[
    ("diff", &[("command", PLAIN_DIFF), ("textconv", "cat")]),
    (
        "filter",
        &[
            ("clean", "cat"),
            ("smudge", "cat"),
            ("process", "false"),
            ("required", "false"),
        ],
    ),
    ("merge", &[("driver", "false")]),
];

/// The environment for one run: `inherited` is what the command gets already (a
/// `GIT_CONFIG_COUNT` there is kept and added to); `repo_config` is the text of the config
/// file of the repository the command runs in, if any, whose driver sections are neutralised
/// by name (drivers are named by its attributes, so no fixed key covers them).
pub(crate) fn env(
    inherited: &[(std::ffi::OsString, std::ffi::OsString)],
    repo_config: Option<&str>,
) -> Vec<(String, String)> {
    let count = super::env_value(inherited, "GIT_CONFIG_COUNT")
        .and_then(|v| v.to_str()?.parse::<usize>().ok())
        .unwrap_or(0);
    let mut pairs: Vec<(String, String)> = FIXED
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if repo_config.is_some_and(|c| c.to_ascii_lowercase().contains("external")) {
        pairs.push(("diff.external".into(), PLAIN_DIFF.into()));
    }
    for (section, name) in repo_config.map(driver_sections).unwrap_or_default() {
        if let Some((_, keys)) = DRIVER_KEYS.iter().find(|(s, _)| *s == section) {
            for (key, value) in *keys {
                pairs.push((format!("{section}.{name}.{key}"), value.to_string()));
            }
        }
    }
    let mut out = vec![
        (
            "GIT_CONFIG_COUNT".to_string(),
            (count + pairs.len()).to_string(),
        ),
        ("GIT_PAGER".to_string(), "cat".to_string()),
    ];
    for (i, (k, v)) in pairs.into_iter().enumerate() {
        out.push((format!("GIT_CONFIG_KEY_{}", count + i), k));
        out.push((format!("GIT_CONFIG_VALUE_{}", count + i), v));
    }
    out
}

/// `(section, name)` of each `[section "name"]` header in a git config text.
fn driver_sections(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix('[')?;
            let (section, rest) = l.split_once(char::is_whitespace)?;
            let name = rest.trim_start().strip_prefix('"')?;
            let (name, _) = name.split_once("\"]")?;
            Some((section.to_ascii_lowercase(), name.replace("\\\"", "\"")))
        })
        .collect()
}

/// The config file of the repository `dir` is in: `.git/config` of the nearest folder with a
/// `.git` (a `gitdir:` file followed), read; `None` outside a repository.
pub(crate) fn repo_config(dir: &std::path::Path) -> Option<String> {
    for d in dir.ancestors() {
        let dot = d.join(".git");
        if dot.is_dir() {
            return std::fs::read_to_string(dot.join("config")).ok();
        }
        if let Ok(text) = std::fs::read_to_string(&dot)
            && let Some(git_dir) = text.trim().strip_prefix("gitdir:")
        {
            let git_dir = d.join(git_dir.trim());
            let common = std::fs::read_to_string(git_dir.join("commondir"))
                .map(|c| git_dir.join(c.trim()))
                .unwrap_or(git_dir);
            return std::fs::read_to_string(common.join("config")).ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(env: &'a [(String, String)], key: &str) -> Option<&'a str> {
        env.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    #[test]
    fn settings_follow_those_already_given_and_drivers_are_named() {
        let inherited = [("GIT_CONFIG_COUNT".into(), "2".into())];
        let config =
            "[core]\n\tfsmonitor = ./x\n[filter \"lfs\"]\n\tclean = evil\n[diff \"pdf\"]\n";
        let env = env(&inherited, Some(config));
        let n: usize = get(&env, "GIT_CONFIG_COUNT").unwrap().parse().unwrap();
        assert_eq!(n, 2 + FIXED.len() + 4 + 2);
        assert_eq!(get(&env, "GIT_CONFIG_KEY_2"), Some("core.fsmonitor"));
        assert_eq!(get(&env, "GIT_CONFIG_VALUE_2"), Some("false"));
        assert!(
            get(&env, "GIT_CONFIG_KEY_0").is_none(),
            "the user's own stay"
        );
        let keys: Vec<&str> = env
            .iter()
            .filter(|(k, _)| k.starts_with("GIT_CONFIG_KEY_"))
            .map(|(_, v)| v.as_str())
            .collect();
        assert!(keys.contains(&"filter.lfs.clean") && keys.contains(&"diff.pdf.textconv"));
        assert_eq!(
            driver_sections("[core]\n[merge \"a b\"]\n"),
            [("merge".into(), "a b".into())]
        );
    }
}
