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

    fn spec(net: bool, fs: bool, required: bool) -> SandboxSpec {
        SandboxSpec {
            isolate_network: net,
            restrict_filesystem: fs,
            required,
            ..SandboxSpec::default()
        }
    }

    #[test]
    fn containment_alone_uses_a_pid_namespace_when_there_is_one() {
        let mut s = spec(false, false, true);
        s.contain_processes = true;
        let p = plan(&s, &Capabilities::all()).unwrap();
        assert_eq!(
            p.enforce,
            Enforced {
                network: false,
                filesystem: false,
                pids: true,
                ..Enforced::default()
            }
        );
        assert!(p.uses_launcher() && p.user_namespace && p.warnings.is_empty());
        // Without one: the plain spawn, quietly.
        let p = plan(&s, &Capabilities::none("x")).unwrap();
        assert!(!p.uses_launcher() && p.warnings.is_empty());
    }

    #[test]
    fn nothing_requested_is_the_fast_path() {
        let p = plan(&spec(false, false, true), &Capabilities::none("x")).unwrap();
        assert!(!p.uses_launcher());
        assert!(p.warnings.is_empty());
    }

    #[test]
    fn everything_available_is_enforced() {
        let p = plan(&spec(true, true, true), &Capabilities::all()).unwrap();
        assert_eq!(
            p.enforce,
            Enforced {
                network: true,
                filesystem: true,
                pids: true,
                ..Enforced::default()
            }
        );
        assert!(p.user_namespace);
        assert!(p.warnings.is_empty());
    }

    #[test]
    fn required_refuses_naming_what_is_missing() {
        let mut caps = Capabilities::all();
        caps.network_namespace =
            Support::No("user namespaces are disabled (kernel.unprivileged_userns_clone=0)".into());
        let err = plan(&spec(true, true, true), &caps)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "network isolation: user namespaces are disabled (kernel.unprivileged_userns_clone=0)"
        );
        // Not requested → not needed.
        assert!(plan(&spec(false, true, true), &caps).is_ok());
    }

    #[test]
    fn best_effort_runs_with_warnings() {
        let mut caps = Capabilities::all();
        caps.landlock = Support::No("no Landlock".into());
        let p = plan(&spec(true, true, false), &caps).unwrap();
        assert!(p.enforce.network && !p.enforce.filesystem && p.enforce.pids);
        assert_eq!(
            p.warnings,
            ["sandbox not enforced: filesystem restriction: no Landlock"]
        );
    }

    #[test]
    fn missing_pid_namespace_is_only_a_warning() {
        let mut caps = Capabilities::all();
        caps.pid_namespace = Support::No("nope".into());
        let p = plan(&spec(true, false, true), &caps).unwrap();
        assert!(p.enforce.network && !p.enforce.pids);
        assert!(p.warnings[0].contains("setsid"));
    }

    #[test]
    fn privileged_processes_skip_the_user_namespace() {
        let mut caps = Capabilities::all();
        caps.use_user_namespace = false;
        let p = plan(&spec(true, true, true), &caps).unwrap();
        assert!(!p.user_namespace);
    }

    #[test]
    fn private_mounts_and_limits_go_through_the_launcher() {
        let mut s = spec(true, false, true);
        s.private_mounts = true;
        let p = plan(&s, &Capabilities::all()).unwrap();
        assert!(p.enforce.mounts && p.enforce.pids && p.user_namespace);
        let mut caps = Capabilities::all();
        caps.mount_namespace = Support::No("nope".into());
        assert!(
            plan(&s, &caps)
                .unwrap_err()
                .to_string()
                .contains("hidden secrets: nope")
        );
        // With network and writes allowed they are extras: used where there, else skipped.
        let mut s = spec(false, false, true);
        s.private_mounts = true;
        s.contain_processes = true;
        assert!(plan(&s, &Capabilities::all()).unwrap().enforce.mounts);
        let p = plan(&s, &caps).unwrap();
        assert!(!p.enforce.mounts && p.enforce.pids && p.warnings.is_empty());
        let mut s = spec(false, false, true);
        s.limits.cpu_seconds = Some(1);
        let p = plan(&s, &Capabilities::none("x")).unwrap();
        assert!(p.uses_launcher() && p.enforce.limits && !p.user_namespace);
    }

    #[test]
    fn keeping_the_policy_files_read_only_needs_the_mounts_when_writes_are_allowed() {
        let mut s = spec(false, false, true);
        s.private_mounts = true;
        s.contain_processes = true;
        s.protect = vec!["/h/.config/skillpipe".into()];
        assert!(plan(&s, &Capabilities::all()).unwrap().enforce.mounts);
        let mut caps = Capabilities::all();
        caps.mount_namespace = Support::No("nope".into());
        let err = plan(&s, &caps).unwrap_err().to_string();
        assert!(
            err.contains("skillpipe's config kept read-only: nope"),
            "{err}"
        );
        s.required = false;
        let p = plan(&s, &caps).unwrap();
        assert!(
            !p.enforce.mounts && p.warnings[0].contains("kept read-only"),
            "{p:?}"
        );
        // Positive control: with writes restricted Landlock keeps them, the mounts are as asked.
        let mut s = spec(true, true, true);
        s.protect = vec!["/h/.config/skillpipe".into()];
        assert!(!plan(&s, &caps).unwrap().enforce.mounts);
    }

    #[test]
    fn summary_lists_what_is_on() {
        assert_eq!(Enforced::default().summary(), "none");
        let e = Enforced {
            network: true,
            filesystem: false,
            pids: true,
            ..Enforced::default()
        };
        assert_eq!(e.summary(), "network,pids");
    }
}
