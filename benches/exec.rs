//! Overhead of the sandbox: median wall time of `true` run through the executor directly (the
//! fast path) and through the launcher with the layers added one by one (user + network + PID
//! namespaces, Landlock and PID-1 init; then the private mounts — the read view built from
//! grants, every mount read-only but `$TMPDIR`, `/dev/shm` and the writable paths — hidden
//! files and limits),
//! interleaved in the same process; and every layer with one named Unix socket (whose connects
//! the run's init makes); and every layer with `--writable` on a folder of 10,000 files, whose
//! folders the change report lists and watches. Run with `cargo bench --bench exec`.

use skillpipe::exec::{RunSpec, run};
use skillpipe::sandbox::{self, SandboxSpec};
use std::time::{Duration, Instant};

const ROUNDS: usize = 200;

fn spec(sandbox: SandboxSpec) -> RunSpec {
    let mut spec = RunSpec::new("true", Vec::<String>::new());
    spec.cwd = std::env::temp_dir();
    spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    spec.timeout = Duration::from_secs(10);
    spec.max_output_bytes = 1 << 20;
    spec.sandbox = sandbox;
    spec
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    sandbox::set_launcher(env!("CARGO_BIN_EXE_skillpipe"));
    let caps = sandbox::probe();
    println!("capabilities: {caps:?}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    // What stays hidden inside the view: the system's shadow files (the rest is out of view).
    let hide = sandbox::existing(sandbox::deny_list(
        None,
        &[],
        &["/etc/shadow".into(), "/etc/gshadow".into()],
        &[],
    ));
    let mut layers = SandboxSpec::default();
    layers.isolate_network = true;
    layers.restrict_filesystem = true;
    layers.required = true;
    let mut mounts = layers.clone();
    mounts.private_mounts = true;
    let mut hidden = mounts.clone();
    hidden.hide = hide.clone();
    let mut all = hidden.clone();
    all.limits = skillpipe::policy::ScriptPolicy::default().limits();
    let hidden_name = format!("  + {} secrets hidden", hide.len());
    let socket_path =
        std::env::temp_dir().join(format!("skillpipe-bench-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&socket_path);
    let _listener = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
    let mut with_socket = all.clone();
    with_socket.sockets = vec![socket_path.clone()];
    // A project of 10,000 files in 100 folders, writable: the change report watches it.
    let project = tempfile::tempdir().unwrap();
    for d in 0..100 {
        let dir = project.path().join(format!("d{d}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(dir.join(format!("f{f}.txt")), "x").unwrap();
        }
    }
    let mut with_writable = all.clone();
    with_writable.writable = vec![project.path().to_path_buf()];
    let mut fs_only = SandboxSpec::default();
    fs_only.restrict_filesystem = true;
    fs_only.required = true;
    let cases: Vec<(&str, SandboxSpec)> = vec![
        ("unsandboxed", SandboxSpec::default()),
        ("filesystem only (Landlock + PID ns)", fs_only),
        ("net + fs + pid (the earlier layers)", layers),
        ("  + mount/IPC/UTS ns, the read view", mounts),
        (&hidden_name, hidden),
        ("  + limits = every layer (default)", all),
        ("  + 1 named Unix socket (broker)", with_socket),
        ("every layer, --writable 10,000 files", with_writable),
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    rt.block_on(async {
        // Warm up (probe, page cache).
        for (_, s) in &cases {
            run(spec(s.clone())).await.unwrap();
        }
        for _ in 0..ROUNDS {
            for (i, (_, s)) in cases.iter().enumerate() {
                let t = Instant::now();
                let r = run(spec(s.clone())).await.unwrap();
                times[i].push(t.elapsed());
                assert!(r.success(), "{r:?}");
            }
        }
    });
    let _ = std::fs::remove_file(&socket_path);
    let base = median(times[0].clone());
    for ((name, _), t) in cases.iter().zip(times) {
        let m = median(t);
        println!(
            "{name:<38} median {:7.3} ms   overhead {:+7.3} ms",
            ms(m),
            ms(m) - ms(base)
        );
    }
}
