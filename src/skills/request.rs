//! Which skill script an argv runs, however it is written (DESIGN §2): a script reference
//! (`scripts/x.py`, `SKILL/scripts/x.py`, `SKILL:ID`), a tool's function name (`SKILL__ID`),
//! a path into a skill's folder or a root script's file name, or an interpreter in front of
//! any of these (`python3 -u scripts/x.py`, `python -m scripts.x`). The dispatcher runs what
//! this says and the chat's repeat key compares what it says, so the two cannot differ.

use super::invocation::Invocation;
use super::resolve::ResolvedScript;
use super::{ResolveError, SkillSet};
use crate::command;

/// An argv read for the skill script it runs.
#[derive(Debug, Clone)]
pub(crate) struct ScriptRequest {
    /// The argv with its first word as the policy reads it: a function name, a path into a
    /// skill's folder or a root script's name replaced by the script's reference.
    pub argv: Vec<String>,
    /// The script behind an interpreter (`python3 scripts/x.py`), already resolved.
    pub invocation: Option<Invocation>,
}

impl ScriptRequest {
    /// Whether a skill script runs (else a system command does).
    pub fn is_script(&self) -> bool {
        self.invocation.is_some()
            || self
                .argv
                .first()
                .is_some_and(|w| command::script_ref(w).is_some())
    }

    /// Where the script's own arguments start (1 when the script is the first word).
    pub fn args_from(&self) -> usize {
        self.invocation.as_ref().map_or(1, |i| i.args_from)
    }

    /// The script it runs; `None` for a system command, `Some(Err)` for a script reference
    /// no loaded skill resolves.
    pub fn script(self, skills: &SkillSet) -> Option<Result<ResolvedScript, ResolveError>> {
        if !self.is_script() {
            return None;
        }
        Some(match self.invocation {
            Some(i) => Ok(i.script),
            None => skills.resolve(&self.argv[0]),
        })
    }
}

impl SkillSet {
    /// `argv` read for the skill script it runs. `Err` when it names one in a way that cannot
    /// run (a root file name several skills have, an interpreter that does not fit the script,
    /// an unsafe path): said before anything else is looked at. A script reference is resolved
    /// only by [`ScriptRequest::script`], after the caller's own checks.
    pub(crate) fn script_request(&self, argv: &[String]) -> Result<ScriptRequest, ResolveError> {
        let mut argv = argv.to_vec();
        let Some(first) = argv.first_mut() else {
            return Ok(ScriptRequest {
                argv,
                invocation: None,
            });
        };
        if let Some(reference) = self.reference_for_function(first) {
            *first = reference;
        }
        if let Some(reference) = self.written_reference(first) {
            *first = reference?;
        }
        let invocation = self.invocation(&argv).transpose()?;
        Ok(ScriptRequest { argv, invocation })
    }

    /// `argv` named by what it runs, for comparing commands: a skill script as
    /// `SKILL/REL_PATH` then its own arguments, however it is written; anything else as written.
    pub(crate) fn canonical(&self, argv: &[String]) -> Vec<String> {
        if let Ok(request) = self.script_request(argv) {
            let args = request.argv[request.args_from()..].to_vec();
            if let Some(Ok(script)) = request.script(self) {
                let program = format!("{}/{}", script.skill, script.rel_path);
                return std::iter::once(program).chain(args).collect();
            }
        }
        argv.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::skills::{argv, write_test_skill as skill};

    /// The script (`skill/rel_path`) and its arguments, as the dispatcher would run them.
    fn runs(set: &SkillSet, words: &[&str]) -> Vec<String> {
        set.canonical(&argv(words))
    }

    #[test]
    fn every_way_of_writing_a_script_is_that_script() {
        let dir = tempfile::tempdir().unwrap();
        skill(
            dir.path(),
            "calc",
            &[
                ("scripts/calc.py", "#!/usr/bin/env python3\nprint(1)\n"),
                ("run.py", "#!/usr/bin/env python3\nprint(2)\n"),
            ],
        );
        let set = SkillSet::load(&[dir.path().to_path_buf()]);
        let abs = dir.path().join("calc/scripts/calc.py");
        let calc = argv(&["calc/scripts/calc.py", "2 + 2"]);
        for words in [
            vec!["scripts/calc.py", "2 + 2"],
            vec!["calc/scripts/calc.py", "2 + 2"],
            vec!["python3", "scripts/calc.py", "2 + 2"],
            vec!["python3", "-u", "scripts/calc.py", "2 + 2"],
            vec!["python", "calc/scripts/calc", "2 + 2"],
            vec!["python", "-m", "scripts.calc", "2 + 2"],
            vec!["python3", abs.to_str().unwrap(), "2 + 2"],
        ] {
            assert_eq!(runs(&set, &words), calc, "{words:?}");
        }
        // A root script by its file name, behind an interpreter or not.
        let root = argv(&["calc/run.py", "x"]);
        assert_eq!(runs(&set, &["calc:run.py", "x"]), root);
        assert_eq!(runs(&set, &["python3", "calc:run.py", "x"]), root);
        // Not a skill script: a system command, or code the interpreter is given.
        for words in [
            vec!["echo", "scripts/calc.py"],
            vec!["python3", "-c", "print(1)"],
            vec!["python3", "./mine.py"],
            vec!["env", "python3", "scripts/calc.py"],
        ] {
            let req = set.script_request(&argv(&words)).unwrap();
            assert!(!req.is_script(), "{words:?}");
            assert!(req.script(&set).is_none(), "{words:?}");
            assert_eq!(runs(&set, &words), argv(&words), "as written");
        }
        // Named as a skill's script but not runnable so: said, not run as the interpreter.
        assert!(
            set.script_request(&argv(&["bash", "scripts/calc.py"]))
                .is_err()
        );
        let missing = set.script_request(&argv(&["scripts/nope.py"])).unwrap();
        assert!(matches!(
            missing.script(&set),
            Some(Err(ResolveError::NotFound(_)))
        ));
    }
}
