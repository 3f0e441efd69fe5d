//! Script detection for a skill with 50 scripts (DESIGN §4: well under 10 ms; target < 1 ms).

use criterion::{Criterion, criterion_group, criterion_main};
use skillpipe::skills::{LoadOptions, SkillSet, discover::detect_scripts};
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
                "#!/usr/bin/env python3\n\"\"\"Do task {i}.\"\"\"\nimport sys\n",
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

criterion_group!(benches, bench);
criterion_main!(benches);
