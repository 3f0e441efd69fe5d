//! Script detection for a skill with 50 scripts (DESIGN §4: well under 10 ms; target < 1 ms),
//! and the catalog of 30 installed skills for the system prompt (target < 5 ms).

use criterion::{Criterion, criterion_group, criterion_main};
use skillpipe::skills::{LoadOptions, SkillSet, detect_scripts};
use std::fs;
use std::hint::black_box;

fn skill_with_50_scripts() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bench");
    for i in 0..50 {
        let (sub, ext, body) = match i % 5 {
            0 => (
                "",
                "py",
                "#!/usr/bin/env python3\n\"\"\"Do task {i}.\"\"\"\nimport sys\nprint(sys.argv)\n",
            ),
            1 => (
                "",
                "sh",
                "#!/usr/bin/env bash\n# Do task {i}\n# carefully.\nset -eu\n",
            ),
            2 => ("tools/", "js", "// Do task {i}.\nconsole.log(1)\n"),
            3 => ("tools/deep/", "rb", "# Do task {i}.\nputs 1\n"),
            _ => ("", "", "#!/bin/sh\n# Shebang-only task {i}.\n"),
        };
        let name = if ext.is_empty() {
            format!("task{i}")
        } else {
            format!("task{i}.{ext}")
        };
        let path = dir.join("scripts").join(sub).join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, body.replace("{i}", &i.to_string())).unwrap();
    }
    fs::write(dir.join("scripts/README.md"), "# Scripts\n").unwrap();
    fs::write(
        dir.join("SKILL.md"),
        "---\nname: bench\ndescription: Fifty scripts.\n---\n\n# Bench\n",
    )
    .unwrap();
    tmp
}

/// 30 installed skills with a long body each and up to four scripts, as in a user's
/// `~/.claude/skills`.
fn thirty_skills() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..30 {
        let dir = tmp.path().join(format!("skill-{i:02}"));
        fs::create_dir_all(dir.join("scripts")).unwrap();
        fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: skill-{i:02}\ndescription: Handles documents of kind {i}; use it for kind {i} files.\n---\n{}",
                "Guidance for this kind of document.\n".repeat(300)
            ),
        )
        .unwrap();
        for k in 0..(i % 5) {
            fs::write(
                dir.join(format!("scripts/tool_{k}.py")),
                format!("\"\"\"Tool {k}.\"\"\"\nimport sys\n\nif __name__ == \"__main__\":\n    print(sys.argv)\n"),
            )
            .unwrap();
        }
    }
    tmp
}

fn bench_catalog(c: &mut Criterion) {
    let tmp = thirty_skills();
    let dirs = [tmp.path().to_path_buf()];
    let prompt = || {
        let set = SkillSet::load(&dirs);
        let skills = skillpipe::agents::skill_prompts_of(&set, &[]);
        skillpipe::agents::system_prompt("", &skills)
    };
    let p = prompt();
    assert!(p.len() <= 12 * 1024, "catalog prompt is {} bytes", p.len());
    c.bench_function("load 30 skills + catalog prompt", |b| {
        b.iter(|| black_box(prompt().len()))
    });
}

fn bench(c: &mut Criterion) {
    let tmp = skill_with_50_scripts();
    let dir = fs::canonicalize(tmp.path().join("bench")).unwrap();
    let opts = LoadOptions::default();
    assert_eq!(detect_scripts(&dir, &opts).len(), 50);
    c.bench_function("detect 50 scripts", |b| {
        b.iter(|| black_box(detect_scripts(black_box(&dir), &opts)))
    });
    c.bench_function("load skill + detect 50 scripts", |b| {
        b.iter(|| {
            let set = SkillSet::load(&[tmp.path().to_path_buf()]);
            black_box(set.get("bench").unwrap().scripts().len())
        })
    });
}

criterion_group!(benches, bench, bench_catalog);
criterion_main!(benches);
