//! Reading a loaded skill's own files for the model (`!{skill NAME}`, `!{skill NAME FILE}`,
//! the `load_skill` tool): the SKILL.md body, or a file of the skill folder such as
//! `references/x.md`. FILE is untrusted model output: it is checked lexically, then its
//! canonical path must lie inside the canonical skill folder, as for scripts.

use super::resolve::{check_file, check_lexically};
use super::{ResolveError, SkillSet};
use std::io::Read;

/// The text `!{skill NAME [FILE]}` returns, at most `max_bytes` of it (the rest is reported as
/// cut by the caller's capture limit, like any output).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillText {
    /// The skill it is from.
    pub skill: String,
    /// The text (at most `max_bytes`).
    pub bytes: Vec<u8>,
    /// The file was longer than `max_bytes`.
    pub truncated: bool,
}

impl SkillSet {
    /// The body of skill `name` (no `file`), or the file `file` inside its folder.
    pub(crate) fn read_skill_text(
        &self,
        name: &str,
        file: Option<&str>,
        max_bytes: usize,
    ) -> Result<SkillText, ResolveError> {
        let skill = self.get(name).ok_or_else(|| ResolveError::UnknownSkill {
            name: name.to_owned(),
            available: self.names_list(),
        })?;
        let Some(file) = file.filter(|f| *f != "SKILL.md") else {
            let mut bytes = skill.body.as_bytes().to_vec();
            let truncated = bytes.len() > max_bytes;
            bytes.truncate(max_bytes);
            return Ok(SkillText {
                skill: skill.name.clone(),
                bytes,
                truncated,
            });
        };
        let written = format!("{name} {file}");
        check_lexically(&written, file, Some(&skill.dir))?;
        let path = check_file(&skill.dir, &skill.dir.join(file), file)?;
        let mut bytes = Vec::new();
        std::fs::File::open(&path)
            .and_then(|f| f.take(max_bytes as u64 + 1).read_to_end(&mut bytes))
            .map_err(|e| ResolveError::NotFound(format!("{file}: {e}")))?;
        let truncated = bytes.len() > max_bytes;
        bytes.truncate(max_bytes);
        Ok(SkillText {
            skill: skill.name.clone(),
            bytes,
            truncated,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::skills::SkillSet;
    use std::fs;

    fn set() -> (tempfile::TempDir, SkillSet) {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("notes");
        fs::create_dir_all(dir.join("references")).unwrap();
        fs::write(
            dir.join("SKILL.md"),
            "---\nname: notes\ndescription: Keep notes.\n---\n# Notes\nBody text.\n",
        )
        .unwrap();
        fs::write(dir.join("references/more.md"), "more detail").unwrap();
        fs::write(root.path().join("secret.txt"), "outside").unwrap();
        std::os::unix::fs::symlink(root.path().join("secret.txt"), dir.join("link.txt")).unwrap();
        let set = SkillSet::load(&[root.path().to_path_buf()]);
        (root, set)
    }

    #[test]
    fn body_and_files_inside_only() {
        let (_root, set) = set();
        let body = set.read_skill_text("notes", None, 1000).unwrap();
        assert_eq!(body.bytes, b"# Notes\nBody text.");
        let f = set
            .read_skill_text("notes", Some("references/more.md"), 1000)
            .unwrap();
        assert_eq!(f.bytes, b"more detail");
        let cut = set
            .read_skill_text("notes", Some("references/more.md"), 4)
            .unwrap();
        assert_eq!((cut.bytes.as_slice(), cut.truncated), (&b"more"[..], true));
        for bad in ["../secret.txt", "/etc/passwd", "link.txt", "references"] {
            assert!(
                set.read_skill_text("notes", Some(bad), 1000).is_err(),
                "{bad} was read"
            );
        }
        let e = set.read_skill_text("nope", None, 10).unwrap_err();
        assert!(e.to_string().contains("no loaded skill is named `nope`"));
    }
}
