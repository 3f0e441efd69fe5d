//! The decision, per run, of which restrictions to apply: what was requested, against what the
//! machine can enforce, under `required` or best-effort. Pure.

use super::SandboxSpec;
use super::caps::{Capabilities, Support};
use serde::Serialize;

/// The restrictions actually in force for a run (reported in `RunResult` and the audit log).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Enforced {
    /// Fresh network namespace: no network.
    pub network: bool,
    /// Landlock: writes only to the per-run TMPDIR and the writable paths.
    pub filesystem: bool,
    /// Fresh PID namespace: the whole tree dies with the command.
    pub pids: bool,
    /// Private mount, IPC and UTS namespaces: minimal /dev, own /proc, $TMPDIR on a capped
    /// tmpfs, secrets hidden.
    pub mounts: bool,
    /// Resource limits (rlimits).
    pub limits: bool,
}

impl Enforced {
    /// Each restriction with its name in logs and the launcher's report.
    fn named(&mut self) -> [(&'static str, &mut bool); 5] {
        [
            ("network", &mut self.network),
            ("filesystem", &mut self.filesystem),
            ("pids", &mut self.pids),
            ("mounts", &mut self.mounts),
            ("limits", &mut self.limits),
        ]
    }

    /// Short form for logs: "network,filesystem,pids", or "none".
    pub fn summary(&self) -> String {
        let mut copy = *self;
        let names: Vec<&str> = (copy.named().into_iter())
            .filter_map(|(name, on)| on.then_some(name))
            .collect();
        match names.is_empty() {
            true => "none".into(),
            false => names.join(","),
        }
    }

    /// The restrictions a [`Self::summary`] names.
    pub fn from_summary(summary: &str) -> Enforced {
        let mut e = Enforced::default();
        for (name, on) in e.named() {
            *on = summary.split(',').any(|n| n == name);
        }
        e
    }
}

/// How to start one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// What the launcher is to set up (all false: spawn directly, the fast path).
    pub enforce: Enforced,
    /// Create the namespaces inside a fresh user namespace.
    pub user_namespace: bool,
    /// Requested restrictions that will not be in force (best-effort only).
    pub warnings: Vec<String>,
}

impl Plan {
    /// Whether the run goes through the `__launch` re-exec (else a plain spawn).
    pub fn uses_launcher(&self) -> bool {
        self.enforce != Enforced::default()
    }
}

/// A required restriction this machine cannot enforce.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join("; "))]
pub struct PlanError(
    /// One entry per missing restriction: "what: why", e.g. "network isolation: user
    /// namespaces are disabled (kernel.unprivileged_userns_clone=0)".
    pub Vec<String>,
);

/// Decide what to enforce. `Err` names what is missing when `spec.required` and a requested
/// restriction cannot be enforced.
pub fn plan(spec: &SandboxSpec, caps: &Capabilities) -> Result<Plan, PlanError> {
    let mut plan = Plan::default();
    plan.enforce.limits = spec.limits.any();
    // Writes allowed: skillpipe's own policy files are kept read-only by mounts alone (not
    // Landlock), which are then no extra but a restriction like the others.
    let protecting = !spec.restrict_filesystem && !spec.protect.is_empty();
    if !spec.isolate_network && !spec.restrict_filesystem && !protecting {
        // Network and writes both allowed: containment and the private mounts (secrets hidden)
        // where the machine has them, else the plain spawn as before (no warning: the user
        // lifted the sandbox's restrictions, and these are extras on top of it).
        if spec.contain_processes && caps.pid_namespace.is_yes() {
            plan.enforce.pids = true;
            plan.enforce.mounts = spec.private_mounts && caps.mount_namespace.is_yes();
            plan.user_namespace = caps.use_user_namespace;
        }
        return Ok(plan);
    }
    let mut missing = Vec::new();
    let mut check = |wanted: bool, support: &Support, what: &str| match support {
        _ if !wanted => false,
        Support::Yes => true,
        Support::No(reason) => {
            missing.push(format!("{what}: {reason}"));
            false
        }
    };
    plan.enforce.network = check(
        spec.isolate_network,
        &caps.network_namespace,
        "network isolation",
    );
    plan.enforce.filesystem = check(
        spec.restrict_filesystem,
        &caps.landlock,
        "filesystem restriction",
    );
    plan.enforce.mounts = check(
        spec.private_mounts || protecting,
        &caps.mount_namespace,
        match protecting {
            true => {
                "private /dev, /proc and $TMPDIR, hidden secrets, skillpipe's config kept read-only"
            }
            false => "private /dev, /proc and $TMPDIR, hidden secrets",
        },
    );
    if !missing.is_empty() {
        if spec.required {
            return Err(PlanError(missing));
        }
        plan.warnings
            .extend(missing.iter().map(|m| format!("sandbox not enforced: {m}")));
    }
    match &caps.pid_namespace {
        Support::Yes => plan.enforce.pids = true,
        Support::No(reason) => plan.warnings.push(format!(
            "no PID namespace ({reason}): background processes that call setsid may outlive the command"
        )),
    }
    let e = &plan.enforce;
    plan.user_namespace = caps.use_user_namespace && (e.network || e.pids || e.mounts);
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row: what is asked (`n` network isolation, `f` writes restricted, `r` required,
    /// `m` private mounts, `c` containment, `p` a protected folder, `l` a CPU limit), what
    /// the machine lacks, and the plan (what is enforced, in a user namespace, the warnings)
    /// or the error.
    #[test]
    fn what_is_enforced_for_each_request_and_machine() {
        const MOUNTS: &str = "private /dev, /proc and $TMPDIR, hidden secrets";
        const PROTECTED: &str =
            "private /dev, /proc and $TMPDIR, hidden secrets, skillpipe's config kept read-only";
        let no_userns = "user namespaces are disabled (kernel.unprivileged_userns_clone=0)";
        let net_err = format!("network isolation: {no_userns}");
        let mounts_err = format!("{MOUNTS}: nope");
        let protected_err = format!("{PROTECTED}: nope");
        let protected_warning = format!("sandbox not enforced: {protected_err}");
        // What is enforced (`Enforced::summary`), in a user namespace, the warnings; or the error.
        type Want<'a> = Result<(&'a str, bool, &'a str), &'a str>;
        let rows: Vec<(&str, &str, Want)> = vec![
            ("c r", "", Ok(("pids", true, ""))),
            // Containment without a PID namespace: the plain spawn, quietly.
            ("c r", "all", Ok(("none", false, ""))),
            ("r", "all", Ok(("none", false, ""))),
            ("n f r", "", Ok(("network,filesystem,pids", true, ""))),
            ("n f r", "network", Err(&net_err)),
            // Not requested, not needed.
            ("f r", "network", Ok(("filesystem,pids", true, ""))),
            (
                "n f",
                "landlock",
                Ok((
                    "network,pids",
                    true,
                    "sandbox not enforced: filesystem restriction: no Landlock",
                )),
            ),
            (
                "n r",
                "pid",
                Ok((
                    "network",
                    true,
                    "no PID namespace (nope): background processes that call setsid may \
                     outlive the command",
                )),
            ),
            // A privileged process needs no user namespace.
            (
                "n f r",
                "userns",
                Ok(("network,filesystem,pids", false, "")),
            ),
            ("n r m", "", Ok(("network,pids,mounts", true, ""))),
            ("n r m", "mount", Err(&mounts_err)),
            // With network and writes allowed the mounts are extras: used where there.
            ("r m c", "", Ok(("pids,mounts", true, ""))),
            ("r m c", "mount", Ok(("pids", true, ""))),
            ("r l", "all", Ok(("limits", false, ""))),
            // Writes allowed: skillpipe's own files are kept read-only by the mounts alone.
            ("r m c p", "", Ok(("pids,mounts", true, ""))),
            ("r m c p", "mount", Err(&protected_err)),
            ("m c p", "mount", Ok(("pids", true, &protected_warning))),
            // Positive control: with writes restricted Landlock keeps them.
            (
                "n f r p",
                "mount",
                Ok(("network,filesystem,pids", true, "")),
            ),
        ];
        for (asked, lacks, want) in rows {
            let on = |c: &str| asked.split(' ').any(|a| a == c);
            let spec = SandboxSpec {
                isolate_network: on("n"),
                restrict_filesystem: on("f"),
                required: on("r"),
                private_mounts: on("m"),
                contain_processes: on("c"),
                protect: match on("p") {
                    true => vec!["/h/.config/skillpipe".into()],
                    false => vec![],
                },
                limits: super::super::Limits {
                    cpu_seconds: on("l").then_some(1),
                    ..Default::default()
                },
                ..SandboxSpec::default()
            };
            let mut caps = Capabilities::all();
            let nope = || Support::No("nope".into());
            match lacks {
                "all" => caps = Capabilities::none("x"),
                "network" => caps.network_namespace = Support::No(no_userns.into()),
                "landlock" => caps.landlock = Support::No("no Landlock".into()),
                "pid" => caps.pid_namespace = nope(),
                "mount" => caps.mount_namespace = nope(),
                "userns" => caps.use_user_namespace = false,
                _ => {}
            }
            let got = plan(&spec, &caps).map_err(|e| e.to_string());
            let got = got.map(|p| {
                assert_eq!(p.uses_launcher(), p.enforce.summary() != "none");
                (p.enforce.summary(), p.user_namespace, p.warnings.join("; "))
            });
            let want = want
                .map(|(e, u, w)| (e.to_string(), u, w.to_string()))
                .map_err(str::to_string);
            assert_eq!(got, want, "{asked} lacking {lacks:?}");
        }
    }
}
