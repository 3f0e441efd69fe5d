//! Overhead of the sandbox: median wall time of `true` run through the executor directly (the
//! fast path) and through the launcher with the layers added one by one (user + network + PID
//! namespaces, Landlock and PID-1 init; then the private mounts, hidden secrets and limits),
//! interleaved in the same process; and every layer with one named Unix socket (whose connects
//! the run's init makes). Run with `cargo bench --bench exec`.

use skillpipe::exec::{RunSpec, run};
use skillpipe::sandbox::{self, SandboxSpec};
use std::time::{Duration, Instant};

const ROUNDS: usize = 200;

fn spec(sandbox: SandboxSpec) -> RunSpec {
    RunSpec {
        program: "true".into(),
        args: vec![],
        cwd: std::env::temp_dir(),
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        stdin: None,
        timeout: Duration::from_secs(10),
        max_output_bytes: 1 << 20,
        sandbox,
    }
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
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let hide = sandbox::existing(sandbox::deny_list(
        home.as_deref(),
        &std::env::temp_dir(),
        &[],
        &[],
        &[],
    ));
    let layers = SandboxSpec {
        isolate_network: true,
        restrict_filesystem: true,
        required: true,
        ..SandboxSpec::default()
    };
    let mounts = SandboxSpec {
        private_mounts: true,
        ..layers.clone()
    };
    let hidden = SandboxSpec {
        hide: hide.clone(),
        ..mounts.clone()
    };
    let all = SandboxSpec {
        limits: skillpipe::policy::ScriptPolicy::default().limits(),
        ..hidden.clone()
    };
    let hidden_name = format!("  + {} secrets hidden", hide.len());
    let socket_path =
        std::env::temp_dir().join(format!("skillpipe-bench-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&socket_path);
    let _listener = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
    let with_socket = SandboxSpec {
        sockets: vec![socket_path.clone()],
        ..all.clone()
    };
    let cases: Vec<(&str, SandboxSpec)> = vec![
        ("unsandboxed", SandboxSpec::default()),
        (
            "filesystem only (Landlock + PID ns)",
            SandboxSpec {
                restrict_filesystem: true,
                required: true,
                ..SandboxSpec::default()
            },
        ),
        ("net + fs + pid (the earlier layers)", layers),
        ("  + mount/IPC/UTS ns, /dev /proc tmpfs", mounts),
        (&hidden_name, hidden),
        ("  + limits = every layer (default)", all),
        ("  + 1 named Unix socket (broker)", with_socket),
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
