//! A Python script that failed on an import: the module, the package that provides it, and
//! what of skillpipe's own making (a hidden folder, a variable not passed) may keep an installed
//! one out of reach, as a typed [`Hint::MissingModule`] (worded in policy keys by the library,
//! with flags by the binary). Pure; real skill collections import pypdf, openpyxl, docx…
//! without saying so.

use crate::sandbox::Hint;
use crate::sandbox::hint::MissingModule;
use std::path::{Path, PathBuf};

/// Import names whose package on PyPI has another name.
const PACKAGES: &[(&str, &str)] = &[
    ("PIL", "Pillow"),
    ("bs4", "beautifulsoup4"),
    ("cv2", "opencv-python"),
    ("dateutil", "python-dateutil"),
    ("docx", "python-docx"),
    ("dotenv", "python-dotenv"),
    ("fitz", "PyMuPDF"),
    ("pptx", "python-pptx"),
    ("sklearn", "scikit-learn"),
    ("yaml", "PyYAML"),
];

/// Variables that point Python at installed packages. (Not `VIRTUAL_ENV`: an active venv is
/// found through `PATH`, which is passed, and its python needs no variable.)
pub const PYTHON_VARS: &[&str] = &["PYTHONPATH", "PYTHONUSERBASE"];

/// What is known about the failed run besides its output.
#[derive(Debug, Clone, Copy)]
pub struct Reach<'a> {
    /// The user's home, where `pip install --user` puts packages (`~/.local/lib`).
    pub home: Option<&'a Path>,
    /// The paths hidden from the run (only when they were hidden).
    pub hidden: &'a [PathBuf],
    /// Of [`PYTHON_VARS`], those set for skillpipe but not passed to the run.
    pub dropped: &'a [&'static str],
    /// The run's `PYTHONPATH` entries (the skill folder first, for a skill's Python script).
    pub python_path: &'a [PathBuf],
    /// The folder of the skill whose script ran (`SKILL_BASE_DIR`), if it was one.
    pub skill_dir: Option<&'a Path>,
}

/// Of [`PYTHON_VARS`], those set here (`ours`) whose entries the run's `env` lacks: not passed
/// through, as a Python script's `PYTHONPATH` always exists (the skill folder) but then holds
/// only that.
pub fn dropped(
    env: &[(std::ffi::OsString, std::ffi::OsString)],
    ours: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Vec<&'static str> {
    let entries = |v: &std::ffi::OsStr| {
        v.to_string_lossy()
            .split(':')
            .filter(|e| !e.is_empty())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    PYTHON_VARS
        .iter()
        .copied()
        .filter(|var| {
            let Some(ours) = ours(var).filter(|v| !v.is_empty()) else {
                return false;
            };
            // The last setting wins, as in the child.
            let theirs = env
                .iter()
                .rev()
                .find(|(k, _)| k == var)
                .map(|(_, v)| entries(v));
            let theirs = theirs.unwrap_or_default();
            !entries(&ours).iter().all(|e| theirs.contains(e))
        })
        .collect()
}

/// The hint for a run whose stderr (or end of stdout) says a module is missing; `None` else.
pub fn explain(said: &str, reach: &Reach) -> Option<Hint> {
    let module = missing(said)?;
    // Only the top package can be installed: `No module named 'google.protobuf'` is `google`'s.
    let top = module.split('.').next().unwrap_or(module);
    // The skill's own package (`scripts`), there on PYTHONPATH: no install would help. It is
    // missing because the interpreter ignored PYTHONPATH (`-I`, `-E`); the error says enough.
    let own = |dir: &PathBuf| dir.join(top).is_dir() || dir.join(format!("{top}.py")).is_file();
    if reach.python_path.iter().any(own) {
        return None;
    }
    // Bundled anywhere in the skill (xlsx's `scripts/office/`, imported by `scripts/recalc.py`
    // as `office`): the script was run so that its own folder is not on the path; pip's
    // `office` would be another package altogether.
    if reach.skill_dir.is_some_and(|dir| bundles(dir, top)) {
        return None;
    }
    let package = PACKAGES
        .iter()
        .find(|(import, _)| *import == top)
        .map_or(top, |(_, package)| *package);
    let user_site = reach.home.map(|h| h.join(".local/lib"));
    let hidden = user_site.as_ref().and_then(|site| {
        reach
            .hidden
            .iter()
            .find(|p| site.starts_with(p) || p.starts_with(site))
    });
    Some(Hint::MissingModule(Box::new(MissingModule {
        module: crate::command::escape_controls(module),
        package: crate::command::escape_controls(package),
        renamed: (package != top).then(|| top.to_string()),
        hidden: hidden.cloned(),
        dropped: reach.dropped.to_vec(),
    })))
}

/// How deep below a skill folder [`bundles`] looks, and at most how many entries it reads:
/// a bound for a folder that holds more than a skill should.
const BUNDLE_DEPTH: usize = 6;
const BUNDLE_ENTRIES: usize = 20_000;

/// Whether the skill folder holds the module `top` anywhere below it: a folder `top/` or a
/// file `top.py` (dot folders and `__pycache__` skipped, links not followed).
fn bundles(dir: &Path, top: &str) -> bool {
    let file = format!("{top}.py");
    let mut stack = vec![(dir.to_path_buf(), 0)];
    let mut seen = 0;
    while let Some((d, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > BUNDLE_ENTRIES {
                return false;
            }
            let name = e.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                if name == top {
                    return true;
                }
                if depth + 1 < BUNDLE_DEPTH && !name.starts_with('.') && name != "__pycache__" {
                    stack.push((e.path(), depth + 1));
                }
            } else if kind.is_file() && name == file {
                return true;
            }
        }
    }
    false
}

/// The module a Python traceback says is missing: its last `No module named` line.
fn missing(said: &str) -> Option<&str> {
    let line = said
        .lines()
        .rev()
        .find(|l| l.contains("ModuleNotFoundError") || l.contains("ImportError"))?;
    let rest = line.split_once("No module named ")?.1.trim();
    let name = rest
        .strip_prefix('\'')
        .and_then(|r| r.split_once('\''))
        .map_or(rest, |(name, _)| name);
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    valid.then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "Traceback (most recent call last):\n  File \"/s/pdf/scripts/x.py\", \
                         line 2, in <module>\n    from pypdf import PdfReader\n\
                         ModuleNotFoundError: No module named 'pypdf'\n";

    fn reach<'a>(hidden: &'a [PathBuf], dropped: &'a [&'static str]) -> Reach<'a> {
        Reach {
            home: Some(Path::new("/home/u")),
            hidden,
            dropped,
            python_path: &[],
            skill_dir: None,
        }
    }

    #[test]
    fn the_skills_own_package_gets_no_install_hint() {
        let skill = tempfile::tempdir().unwrap();
        std::fs::create_dir(skill.path().join("scripts")).unwrap();
        let path = [skill.path().to_path_buf()];
        let said = "ModuleNotFoundError: No module named 'scripts.utils'";
        let r = Reach {
            python_path: &path,
            ..reach(&[], &[])
        };
        assert_eq!(explain(said, &r), None);
        // Control: not the skill's, it is a package to install.
        assert!(explain(said, &reach(&[], &[])).is_some());
    }

    #[test]
    fn a_module_the_skill_bundles_anywhere_gets_no_install_hint() {
        let skill = tempfile::tempdir().unwrap();
        let office = skill.path().join("scripts/office/helpers");
        std::fs::create_dir_all(&office).unwrap();
        std::fs::write(skill.path().join("scripts/helpers_mod.py"), "").unwrap();
        let r = Reach {
            skill_dir: Some(skill.path()),
            ..reach(&[], &[])
        };
        for said in [
            "ModuleNotFoundError: No module named 'office'",
            "ModuleNotFoundError: No module named 'office.soffice'",
            "ModuleNotFoundError: No module named 'helpers_mod'",
        ] {
            assert_eq!(explain(said, &r), None, "{said}");
        }
        // Control: a module the skill does not have is still one to install.
        let h = explain("ModuleNotFoundError: No module named 'openpyxl'", &r).unwrap();
        assert!(h.to_string().contains("pip install openpyxl"), "{h}");
    }

    #[test]
    fn names_the_module_and_the_package() {
        let h = explain(TRACE, &reach(&[], &[])).unwrap().to_string();
        assert_eq!(
            h,
            "python: the module `pypdf` is missing; install it with `pip install pypdf`"
        );
        let h = explain(
            "ModuleNotFoundError: No module named 'docx'",
            &reach(&[], &[]),
        )
        .unwrap()
        .to_string();
        assert!(h.contains("`pip install python-docx`"), "{h}");
        assert!(h.contains("not the module's `docx`"), "{h}");
        let h = explain(
            "ModuleNotFoundError: No module named 'PIL.Image'",
            &reach(&[], &[]),
        )
        .unwrap()
        .to_string();
        assert!(
            h.contains("`PIL.Image`") && h.contains("pip install Pillow"),
            "{h}"
        );
        // Python 2's wording.
        let h = explain("ImportError: No module named yaml", &reach(&[], &[]))
            .unwrap()
            .to_string();
        assert!(h.contains("pip install PyYAML"), "{h}");
    }

    #[test]
    fn says_what_keeps_an_installed_one_out_of_reach() {
        let hidden = [PathBuf::from("/home/u/.local")];
        let h = explain(TRACE, &reach(&hidden, &["PYTHONPATH"]))
            .unwrap()
            .to_string();
        assert!(
            h.contains("the sandbox hides /home/u/.local (deny_read)")
                && h.contains("listing it in allow_read shows it"),
            "{h}"
        );
        assert!(!h.contains("--allow"), "no flags in the library: {h}");
        assert!(
            h.contains("PYTHONPATH is set here but not passed to scripts"),
            "{h}"
        );
        // A hidden folder elsewhere is not named.
        let hidden = [PathBuf::from("/home/u/.ssh")];
        assert!(
            !explain(TRACE, &reach(&hidden, &[]))
                .unwrap()
                .to_string()
                .contains("hides")
        );
    }

    #[test]
    fn a_variable_is_dropped_unless_its_entries_reach_the_run() {
        let ours = |v: &str| (v == "PYTHONPATH").then(|| "/vendor:/lib".into());
        let env = |v: &str| vec![("PYTHONPATH".into(), v.into())];
        // A Python script's own PYTHONPATH (the skill folder) does not carry the user's.
        assert_eq!(dropped(&env("/skill"), ours), ["PYTHONPATH"]);
        assert_eq!(dropped(&[], ours), ["PYTHONPATH"]);
        assert!(dropped(&env("/skill:/vendor:/lib"), ours).is_empty());
        assert!(dropped(&env("/skill"), |_| None).is_empty());
    }

    #[test]
    fn other_failures_and_odd_names_get_none() {
        assert_eq!(explain("ValueError: bad", &reach(&[], &[])), None);
        assert_eq!(
            explain(
                "ModuleNotFoundError: No module named '\u{1b}[2J'",
                &reach(&[], &[])
            ),
            None
        );
        assert_eq!(
            explain("error: No module named 'x'", &reach(&[], &[])),
            None
        );
    }
}
