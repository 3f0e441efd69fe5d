//! The first sandboxed run of a process skips the namespace probe; when the launcher then
//! refuses during set-up, the run is decided again after a real probe, and the command never
//! starts twice. A fake launcher stands in for a machine whose set-up fails. (Its own test
//! binary: the launcher path and the probe cache are per process.)

use skillpipe::exec::{self, ExecError, RunSpec};
use skillpipe::sandbox::{self, SandboxSpec};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

#[tokio::test]
async fn setup_failure_is_decided_again_after_a_probe() {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls");
    let ran = dir.path().join("ran");
    let launcher = dir.path().join("fake-launcher");
    // Records the call, reports a set-up error on --report-fd, never starts the command.
    let script = format!(
        "#!/bin/bash\necho call >> '{}'\nfd=\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = --report-fd ]; then fd=$2; fi\n  if [ \"$1\" = -- ]; then break; fi\n  shift\ndone\n[ -n \"$fd\" ] && echo 'error simulated set-up failure' >&\"$fd\"\nexit 125\n",
        calls.display()
    );
    std::fs::write(&launcher, script).unwrap();
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).unwrap();
    sandbox::set_launcher(&launcher);
    assert!(!sandbox::probed());

    let mut spec = RunSpec::new(
        "sh",
        ["-c".to_string(), format!("touch '{}'", ran.display())],
    );
    spec.cwd = dir.path().to_path_buf();
    spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    spec.timeout = Duration::from_secs(10);
    spec.max_output_bytes = 1 << 20;
    spec.sandbox = SandboxSpec::default();
    spec.sandbox.isolate_network = true;
    spec.sandbox.restrict_filesystem = true;
    spec.sandbox.required = true;
    spec.sandbox.contain_processes = true;
    let err = exec::run(spec.clone()).await.unwrap_err();
    assert!(
        matches!(err, ExecError::Sandbox(ref m) if m.to_string().contains("simulated")),
        "{err}"
    );
    assert!(!ran.exists(), "the command started");
    let n = std::fs::read_to_string(&calls).unwrap().lines().count();
    // (With SKILLPIPE_SANDBOX_UNAVAILABLE set, runs are decided on the probe from the start.)
    let optimistic = std::env::var_os(sandbox::UNAVAILABLE_ENV).is_none();
    if optimistic
        && sandbox::probe().network_namespace.is_yes()
        && sandbox::probe().landlock.is_yes()
    {
        // Optimistic try, then the decided one.
        assert_eq!(n, 2);
    }
    assert!(sandbox::probed());
    // Once probed, a run goes straight to the decided launch.
    let _ = exec::run(spec).await;
    let m = std::fs::read_to_string(&calls).unwrap().lines().count();
    assert!(m <= n + 1, "{n} then {m}");
    assert!(!ran.exists());
}
