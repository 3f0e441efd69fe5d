//! `skillpipe doctor`: what this machine can enforce and where files live.

use super::SkillFlags;
use crate::paths;
use crate::sandbox::{self, Capabilities, Support};
use clap::Args;
use std::fmt::Write;
use std::path::Path;

#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub skill_flags: SkillFlags,
}

pub fn run(args: DoctorArgs) -> anyhow::Result<i32> {
    print!("{}", report(&sandbox::probe(), &args.skill_flags));
    Ok(super::EXIT_OK)
}

/// The whole report as text (separate from printing, for tests).
pub fn report(caps: &Capabilities, flags: &SkillFlags) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "skillpipe {}", env!("CARGO_PKG_VERSION"));
    s.push_str(&sandbox_section(caps));
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
    let seccomp = if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        "yes: no terminal input injection; no Unix sockets without network"
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
    for dir in paths::skill_search_path(&flags.skills_dirs) {
        let _ = writeln!(s, "    {}", describe(Some(&dir)));
    }
    s.push_str("  agents search path\n");
    for dir in paths::agent_search_path() {
        let _ = writeln!(s, "    {}", describe(Some(&dir)));
    }
    let project = if crate::trust::cwd_trusted() {
        "used (this directory is trusted)".to_string()
    } else {
        "ignored (not trusted: `skillpipe trust` uses them)".to_string()
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

    #[test]
    fn missing_restrictions_say_why() {
        let mut caps = Capabilities::all();
        caps.network_namespace =
            Support::No("user namespaces are disabled (kernel.unprivileged_userns_clone=0)".into());
        let text = report(&caps, &SkillFlags::default());
        assert!(text.contains(
            "network isolation      NO — user namespaces are disabled (kernel.unprivileged_userns_clone=0)"
        ));
        assert!(text.contains("filesystem (Landlock)  yes (Landlock ABI 3)"));
        assert!(text.contains("--sandbox best-effort"));
    }

    #[test]
    fn lists_the_search_paths() {
        let flags = SkillFlags {
            skills_dirs: vec!["/opt/my-skills".into()],
        };
        let text = report(&Capabilities::all(), &flags);
        assert!(text.contains("/opt/my-skills (does not exist)"));
        assert!(text.contains("audit log"));
        assert!(text.contains("agents search path"));
        assert!(!text.contains("--sandbox best-effort"));
    }
}
