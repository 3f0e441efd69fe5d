//! Load: many side effects in one stream through `skillpipe filter` — all run, in order, all
//! audited, nothing left running afterwards, and the filter's memory stays bounded (its peak
//! resident size, VmHWM, read from /proc while it runs).

use crate::common;

use common::procs::processes_named;

use common::TestHome;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

fn filter(home: &TestHome, args: &[&str]) -> Child {
    common::spawn::skillpipe()
        .arg("filter")
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("LANG", "C.UTF-8")
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .envs(
            std::env::var_os("SKILLPIPE_SANDBOX_UNAVAILABLE")
                .map(|v| ("SKILLPIPE_SANDBOX_UNAVAILABLE", v)),
        )
        .current_dir(home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn skillpipe")
}

fn script(home: &TestHome, rel: &str, text: &str) {
    let p = home.write(rel, text);
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn load_skill(home: &TestHome) {
    home.write(
        "skills/load/SKILL.md",
        "---\nname: load\ndescription: appends its index\n---\nLoad.\n",
    );
    // Appends the index, and leaves a background process behind (named by the marker) that
    // must not outlive the run.
    script(
        home,
        "skills/load/scripts/append.sh",
        "#!/bin/bash\necho \"$2\" >> \"$1\"\n(exec -a \"$3\" sleep 30 &)\n",
    );
    script(home, "skills/load/scripts/slow.sh", "#!/bin/sh\nsleep 5\n");
    script(home, "skills/load/scripts/noop.sh", "#!/bin/sh\n");
}

/// `args`, plus `--allow-network --allow-filesystem` if this machine cannot sandbox (said loudly).
fn sandbox_or_open<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let out = common::spawn::skillpipe().arg("doctor").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let yes = |label: &str| {
        text.lines()
            .any(|l| l.trim_start().starts_with(label) && l.contains(" yes"))
    };
    let mut v = args.to_vec();
    // A sandboxed run also needs the private mounts.
    if !(yes("network isolation") && yes("filesystem (Landlock)") && yes("private mounts")) {
        eprintln!(
            "\n!!!!! this machine cannot sandbox: the load runs WITHOUT the sandbox !!!!!\n{text}"
        );
        for flag in ["--allow-network", "--allow-filesystem"] {
            if !v.contains(&flag) {
                v.push(flag);
            }
        }
    }
    v
}

/// Peak resident size of a running process in kB, if it can be read.
fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Polls VmHWM until the process exits; returns the last value read (the peak, as it only grows).
fn watch_memory(pid: u32, done: &std::sync::atomic::AtomicBool) -> u64 {
    let mut peak = 0;
    while !done.load(std::sync::atomic::Ordering::Relaxed) {
        if let Some(kb) = vm_hwm_kb(pid) {
            peak = peak.max(kb);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    peak
}

const COUNT: usize = 200;
/// Generous: a debug build of the filter peaks around 13 MB.
const MEMORY_BOUND_KB: u64 = 64 * 1024;

#[test]
fn two_hundred_side_effects_run_in_order() {
    let home = TestHome::new();
    load_skill(&home);
    let log = home.path().join("order.log");
    let marker = format!("skillpipe-load-{}", std::process::id());
    let input: String = (0..COUNT)
        .map(|i| {
            format!(
                "line {i} %{{scripts/append.sh {} {i} {marker}}}\n",
                log.display()
            )
        })
        .collect();
    let start = Instant::now();
    // The network stays isolated where this machine can do it: the sandbox path under load.
    let mut child = filter(
        &home,
        &sandbox_or_open(&[
            "--skills-dir",
            "skills",
            "--allow-scripts",
            "--allow-filesystem",
            "-y",
        ]),
    );
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let done = std::sync::atomic::AtomicBool::new(false);
    let (out, peak) = std::thread::scope(|s| {
        let watcher = s.spawn(|| watch_memory(pid, &done));
        let out = child.wait_with_output().unwrap();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        (out, watcher.join().unwrap())
    });
    writer.join().unwrap();
    let elapsed = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let want: String = (0..COUNT).map(|i| format!("line {i} \n")).collect();
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);

    let order = std::fs::read_to_string(&log).unwrap();
    let got: Vec<usize> = order.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(
        got,
        (0..COUNT).collect::<Vec<_>>(),
        "side effects ran out of order"
    );

    let audit = home.audit();
    assert_eq!(audit.len(), COUNT, "one audit line per directive");
    for (i, rec) in audit.iter().enumerate() {
        assert_eq!(rec["decision"], "ran", "{rec}");
        assert_eq!(rec["exit_code"], 0, "{rec}");
        assert_eq!(rec["argv"][2], i.to_string(), "audit out of order: {rec}");
    }

    let left = processes_named(&marker);
    assert!(left.is_empty(), "processes outlived the filter: {left:?}");
    assert!(peak > 0, "could not read VmHWM of the filter");
    assert!(peak < MEMORY_BOUND_KB, "filter peaked at {peak} kB");
    eprintln!("{COUNT} side effects in {elapsed:?}, filter peak {peak} kB");
}

/// A slow side effect at the head of the queue, then a flood of large ones: the queue is
/// bounded, so the filter stops reading instead of holding the whole flood in memory.
#[test]
fn a_flood_of_side_effects_behind_a_slow_one_stays_bounded() {
    let home = TestHome::new();
    load_skill(&home);
    let body = "a".repeat(4000);
    let mut input = String::from("%{scripts/slow.sh}");
    for _ in 0..8000 {
        input.push_str(&format!("%{{scripts/noop.sh {body}}}"));
    }
    let total = input.len();
    let mut child = filter(
        &home,
        &sandbox_or_open(&["--skills-dir", "skills", "--allow-scripts", "-y"]),
    );
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let writer_done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = writer_done.clone();
    let writer = std::thread::spawn(move || {
        let ok = stdin.write_all(input.as_bytes()).is_ok();
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
        ok
    });
    // Until the whole flood is written (it would be, were the queue unbounded) or long enough
    // for a debug build to have read it all; then the peak so far.
    let start = Instant::now();
    let mut peak = 0;
    while !writer_done.load(std::sync::atomic::Ordering::Relaxed)
        && start.elapsed() < Duration::from_millis(1500)
    {
        if let Some(kb) = vm_hwm_kb(pid) {
            peak = peak.max(kb);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    if let Some(kb) = vm_hwm_kb(pid) {
        peak = peak.max(kb);
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = writer.join();
    assert!(peak > 0, "could not read VmHWM of the filter");
    assert!(
        peak < 48 * 1024,
        "the filter held a {total}-byte flood of side effects in memory: peak {peak} kB"
    );
}

#[test]
fn no_leftovers_in_tmp() {
    // Each run's TMPDIR is removed afterwards: nothing stays behind in skillpipe's own TMPDIR.
    let home = TestHome::new();
    load_skill(&home);
    let tmp = home.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let input: String = (0..20)
        .map(|i| {
            format!(
                "%{{scripts/append.sh {} {i} x}}",
                home.path().join("l").display()
            )
        })
        .collect();
    let mut child = common::spawn::skillpipe();
    child
        .arg("filter")
        .args(sandbox_or_open(&[
            "--skills-dir",
            "skills",
            "--allow-scripts",
            "--allow-filesystem",
            "-y",
        ]))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("TMPDIR", &tmp)
        .env("XDG_STATE_HOME", home.path().join("state"))
        .envs(
            std::env::var_os("SKILLPIPE_SANDBOX_UNAVAILABLE")
                .map(|v| ("SKILLPIPE_SANDBOX_UNAVAILABLE", v)),
        )
        .current_dir(home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = child.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(home.path().join("l"))
            .unwrap()
            .lines()
            .count(),
        20
    );
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "per-run TMPDIRs left behind: {left:?}");
}
