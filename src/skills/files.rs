//! Reading a loaded skill's own files for the model (`!{skill NAME}`, `!{skill NAME FILE}`,
//! the `load_skill` tool): the SKILL.md body, or a file of the skill folder such as
//! `references/x.md`. FILE is untrusted model output: it is checked lexically, then its
//! canonical path must lie inside the canonical skill folder, as for scripts.

use super::resolve::{check_file, check_lexically};
use super::{ResolveError, SkillSet};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

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

/// Most candidates a "no such file" answer lists.
const MAX_CANDIDATES: usize = 12;

impl SkillSet {
    /// The body of skill `name` (no `file`), or the file `file` inside its folder. `hidden` are
    /// the paths the sandbox hides from scripts (its read-deny list): what a skill's own
    /// scripts cannot read is not handed to the model either (see [`readable`]).
    pub(crate) fn read_skill_text(
        &self,
        name: &str,
        file: Option<&str>,
        max_bytes: usize,
        hidden: &[PathBuf],
    ) -> Result<SkillText, ResolveError> {
        let skill = self.skill(name)?;
        // An agent's or prompt's folder with tools only: no SKILL.md, no files to hand out.
        if !skill.source.ends_with("SKILL.md") {
            let tools: Vec<String> = skill.tools().map(|t| format!("{name}:{}", t.id)).collect();
            return Err(ResolveError::NotFound(format!(
                "`{name}` is an agent's tool folder, not a skill: there is nothing to read; its \
                 tools are {}",
                super::or_none(&tools)
            )));
        }
        // At most `max_bytes` of `bytes`, saying whether there were more.
        let text = |mut bytes: Vec<u8>| {
            let truncated = bytes.len() > max_bytes;
            bytes.truncate(max_bytes);
            Ok(SkillText {
                skill: skill.name.clone(),
                bytes,
                truncated,
            })
        };
        let Some(file) = file.filter(|f| *f != "SKILL.md") else {
            return text(skill.body.as_bytes().to_vec());
        };
        // As written, for a refusal: the file alone (the skill is named by the directive).
        let written = file.to_owned();
        // An absolute path inside the skill folder (as listed, or where it really is) is
        // read as the path below it; any other absolute path is refused below.
        let inside = below_skill(skill, file);
        if inside.as_deref() == Some("") {
            let files = listed_files(&skill.dir, hidden);
            return Err(ResolveError::NotFound(format!(
                "`{file}` is the folder of skill `{name}` itself, not a file: name a file in it \
                 (!{{skill {name} FILE}}; its files: {}), or write !{{skill {name}}} for its SKILL.md",
                list(files.iter())
            )));
        }
        let file = inside.as_deref().unwrap_or(file);
        check_lexically(&written, file, Some(&skill.dir))?;
        let rel = match std::fs::symlink_metadata(skill.dir.join(file)) {
            Ok(_) => file.to_owned(),
            Err(_) => same_but_case(&skill.dir, file, hidden)?,
        };
        let path = check_file(&skill.dir, &skill.dir.join(&rel), &rel)?;
        readable(&skill.dir, &rel, &path, hidden).map_err(|why| {
            ResolveError::NotFound(format!("{rel} of skill `{}`: {why}", skill.name))
        })?;
        let mut bytes = Vec::new();
        std::fs::File::open(&path)
            .and_then(|f| f.take(max_bytes as u64 + 1).read_to_end(&mut bytes))
            .map_err(|e| ResolveError::NotFound(format!("{rel}: {e}")))?;
        if is_binary(&bytes) {
            // Bytes that are no text would reach the model as NULs and replacement
            // characters (pages of them): a note says what the file is instead.
            let size = std::fs::metadata(&path).map_or(bytes.len() as u64, |m| m.len());
            return Ok(SkillText {
                skill: skill.name.clone(),
                bytes: binary_note(&rel, &skill.name, size, &bytes).into_bytes(),
                truncated: false,
            });
        }
        text(bytes)
    }
}

/// Whether `bytes` (a file's start) is not text: a NUL byte, or more than one byte in twenty
/// that is no UTF-8 (a character cut at the end does not count). Pure.
pub(crate) fn is_binary(bytes: &[u8]) -> bool {
    if bytes.contains(&0) {
        return true;
    }
    let mut invalid = 0;
    let mut chunks = bytes.utf8_chunks().peekable();
    while let Some(chunk) = chunks.next() {
        // The last chunk's invalid tail may be a character cut by the read limit.
        if chunks.peek().is_some() || chunk.invalid().len() > 3 {
            invalid += chunk.invalid().len();
        }
    }
    invalid * 20 > bytes.len()
}

/// What a binary file probably is, from its first bytes, else its extension. Pure.
fn kind_of(rel: &str, head: &[u8]) -> &'static str {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x89PNG", "PNG image"),
        (b"\xff\xd8\xff", "JPEG image"),
        (b"GIF8", "GIF image"),
        (b"%PDF", "PDF document"),
        (b"\x00\x01\x00\x00", "TrueType font"),
        (b"true", "TrueType font"),
        (b"OTTO", "OpenType font"),
        (b"wOFF", "WOFF font"),
        (b"wOF2", "WOFF2 font"),
        (b"\x1f\x8b", "gzip archive"),
        (b"\x7fELF", "ELF executable"),
        (b"BZh", "bzip2 archive"),
        (b"\xfd7zXZ", "xz archive"),
        (b"7z\xbc\xaf", "7-Zip archive"),
        (b"SQLite format 3", "SQLite database"),
    ];
    let ext = rel
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    if head.starts_with(b"PK\x03\x04") {
        return match ext.as_str() {
            "docx" => "Word document (zip)",
            "xlsx" => "Excel workbook (zip)",
            "pptx" => "PowerPoint presentation (zip)",
            "jar" => "Java archive (zip)",
            _ => "zip archive",
        };
    }
    if head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP") {
        return "WebP image";
    }
    if let Some((_, kind)) = MAGIC.iter().find(|(m, _)| head.starts_with(m)) {
        return kind;
    }
    match ext.as_str() {
        "ttf" => "TrueType font",
        "otf" => "OpenType font",
        "ico" => "icon",
        "bmp" => "BMP image",
        "mp3" | "wav" | "ogg" | "flac" => "audio",
        "mp4" | "mov" | "webm" => "video",
        "pyc" => "compiled Python",
        "so" | "dylib" | "dll" | "exe" => "compiled program",
        _ => "unknown type",
    }
}

/// The short note the model gets for a binary file instead of its bytes. Pure.
fn binary_note(rel: &str, skill: &str, size: u64, head: &[u8]) -> String {
    format!(
        "[{rel} of skill `{skill}` is a binary file ({}, {size} bytes), not text: it cannot be \
         read here. A script of the skill can use it by that path.]\n",
        kind_of(rel, head)
    )
}

/// `file` relative to the skill folder when it is an absolute path in the folder, as
/// canonical or as found on the search path (`~/.claude/skills/x` may be a link); "" when it
/// names the folder itself (also as `.`); else `None`. Lexical: the relative rest is checked
/// (no `..`, no link out) like any path the model writes.
fn below_skill(skill: &super::Skill, file: &str) -> Option<String> {
    let path = Path::new(file);
    if !path.is_absolute() {
        return path
            .components()
            .all(|c| c == Component::CurDir)
            .then(String::new);
    }
    [Some(skill.dir.as_path()), skill.source.parent()]
        .into_iter()
        .flatten()
        .find_map(|root| path.strip_prefix(root).ok())
        .map(|rest| rest.to_string_lossy().into_owned())
}

/// Whether a skill's file may be handed to the model (chat's `!{skill NAME FILE}`, MCP's
/// `load_skill` and resources — one rule): not a hidden file or folder (`.env`, `.git/…`), as
/// written or where it really is, and not a path the sandbox hides from scripts. `Err` says why.
pub(crate) fn readable(
    skill_dir: &Path,
    rel: &str,
    real: &Path,
    hidden: &[PathBuf],
) -> Result<(), &'static str> {
    let dotted = |p: &Path| {
        p.components()
            .any(|c| matches!(c, Component::Normal(n) if n.to_string_lossy().starts_with('.')))
    };
    if dotted(Path::new(rel)) || real.strip_prefix(skill_dir).is_ok_and(dotted) {
        return Err("a hidden file (its name or a folder's starts with a dot): not shown");
    }
    if hidden.iter().any(|h| real.starts_with(h)) {
        return Err("hidden from scripts by the sandbox (deny_read): not shown");
    }
    Ok(())
}

/// The one file of `dir` whose path (or, failing that, whose name) is `written` but for
/// letter case (`FORMS.md` for `forms.md`); else the error lists the candidates.
fn same_but_case(dir: &Path, written: &str, hidden: &[PathBuf]) -> Result<String, ResolveError> {
    let files = listed_files(dir, hidden);
    let name_of = |p: &str| p.rsplit('/').next().unwrap_or(p).to_lowercase();
    let wanted = written.to_lowercase();
    let mut found: Vec<&String> = files
        .iter()
        .filter(|f| f.to_lowercase() == wanted)
        .collect();
    if found.is_empty() {
        let name = name_of(written);
        found = files.iter().filter(|f| name_of(f) == name).collect();
    }
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(ResolveError::NotFound(format!(
            "`{written}`: no such file in the skill; its files: {}",
            list(files.iter())
        ))),
        many => Err(ResolveError::NotFound(format!(
            "`{written}`: no such file in the skill; write one of {}",
            list(many.iter().copied())
        ))),
    }
}

fn list<'a>(files: impl ExactSizeIterator<Item = &'a String>) -> String {
    let n = files.len();
    let mut shown: Vec<&str> = files.take(MAX_CANDIDATES).map(String::as_str).collect();
    if shown.is_empty() {
        return "none".into();
    }
    if n > MAX_CANDIDATES {
        shown.push("…");
    }
    shown.join(", ")
}

/// The files of a skill folder the model may read, relative and sorted (a few levels deep).
fn listed_files(dir: &Path, hidden: &[PathBuf]) -> Vec<String> {
    fn walk(dir: &Path, rel: &str, depth: usize, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || out.len() > 1000 {
                continue;
            }
            let path = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            match e.file_type() {
                Ok(t) if t.is_dir() && depth < 4 => walk(&e.path(), &path, depth + 1, out),
                Ok(t) if t.is_file() => out.push(path),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, "", 0, &mut out);
    out.retain(|f| f != "SKILL.md" && readable(dir, f, &dir.join(f), hidden).is_ok());
    out.sort();
    out
}

/// Page `n` (from 1) of `text` cut into pages of at most `size` bytes at line ends (a line
/// longer than a page is cut at a character boundary), and how many pages there are; `None`
/// when there is no page `n`. A text that fits is one page. Pure.
pub(crate) fn page(text: &[u8], size: usize, n: usize) -> Option<(&[u8], usize)> {
    let size = size.max(1);
    let mut starts = vec![0];
    let mut at = 0;
    while text.len() - at > size {
        let window = &text[at..at + size];
        let mut end = match window.iter().rposition(|&b| b == b'\n') {
            Some(i) if i > 0 => at + i + 1,
            _ => at + size,
        };
        // Never inside a UTF-8 character (a continuation byte is 0b10xxxxxx): back off at
        // most a character's length; text that is no UTF-8 there is cut where it is.
        let cut = end;
        while end > at + 1 && cut - end < 4 && end < text.len() && text[end] & 0xC0 == 0x80 {
            end -= 1;
        }
        if end < text.len() && text[end] & 0xC0 == 0x80 {
            end = cut;
        }
        at = end;
        starts.push(at);
    }
    let count = starts.len();
    let start = *starts.get(n.checked_sub(1)?)?;
    let end = starts.get(n).copied().unwrap_or(text.len());
    Some((&text[start..end], count))
}

#[cfg(test)]
mod tests {
    use super::page;
    use crate::skills::SkillSet;
    use std::fs;

    #[test]
    fn pages_end_at_lines_and_cover_the_text() {
        let text = "one\ntwo\nthree\nfour\n".as_bytes();
        assert_eq!(page(text, 100, 1), Some((text, 1)));
        assert_eq!(page(text, 100, 2), None);
        assert_eq!(page(text, 100, 0), None);
        let (p1, n) = page(text, 9, 1).unwrap();
        assert_eq!((p1, n), ("one\ntwo\n".as_bytes(), 3));
        let all: Vec<u8> = (1..=n)
            .flat_map(|i| page(text, 9, i).unwrap().0.to_vec())
            .collect();
        assert_eq!(all, text);
        // A long line is cut, never inside a character.
        let wide = "ééééé".as_bytes();
        let (p, n) = page(wide, 3, 1).unwrap();
        assert_eq!((std::str::from_utf8(p).unwrap(), n), ("é", 5));
        // Bytes that are no UTF-8 are cut at the page size, not a byte at a time.
        let junk = vec![0x80u8; 10_000];
        assert_eq!(
            page(&junk, 1000, 1).map(|(p, n)| (p.len(), n)),
            Some((1000, 10))
        );
    }

    fn set() -> (tempfile::TempDir, SkillSet) {
        let root = tempfile::tempdir().unwrap();
        let md = "---\nname: notes\ndescription: Keep notes.\n---\n# Notes\nBody text.\n";
        let files = [("SKILL.md", md), ("references/more.md", "more detail")];
        crate::skills::write_test_skill(root.path(), "notes", &files);
        let dir = root.path().join("notes");
        fs::write(root.path().join("secret.txt"), "outside").unwrap();
        std::os::unix::fs::symlink(root.path().join("secret.txt"), dir.join("link.txt")).unwrap();
        let set = SkillSet::load(&[root.path().to_path_buf()]);
        (root, set)
    }

    #[test]
    fn body_and_files_inside_only() {
        let (_root, set) = set();
        let body = set.read_skill_text("notes", None, 1000, &[]).unwrap();
        assert_eq!(body.bytes, b"# Notes\nBody text.");
        let f = set
            .read_skill_text("notes", Some("references/more.md"), 1000, &[])
            .unwrap();
        assert_eq!(f.bytes, b"more detail");
        let cut = set
            .read_skill_text("notes", Some("references/more.md"), 4, &[])
            .unwrap();
        assert_eq!((cut.bytes.as_slice(), cut.truncated), (&b"more"[..], true));
        for bad in ["../secret.txt", "/etc/passwd", "link.txt", "references"] {
            assert!(
                set.read_skill_text("notes", Some(bad), 1000, &[]).is_err(),
                "{bad} was read"
            );
        }
        // An absolute path inside the skill is that file; `..` still may not lead out.
        let dir = set.get("notes").unwrap().dir.clone();
        let abs = dir.join("references/more.md");
        let f = set
            .read_skill_text("notes", Some(abs.to_str().unwrap()), 1000, &[])
            .unwrap();
        assert_eq!(f.bytes, b"more detail");
        let out = format!("{}/../secret.txt", dir.display());
        let e = set
            .read_skill_text("notes", Some(&out), 1000, &[])
            .unwrap_err();
        assert!(e.to_string().contains("outside the skill folder"), "{e}");
        // The refusal quotes the file as written, not glued to the skill's name.
        let e = set
            .read_skill_text("notes", Some("../.."), 1000, &[])
            .unwrap_err();
        assert!(e.to_string().starts_with("`../..` is outside"), "{e}");
        // The skill folder itself: said so, with how to name a file in it or the body.
        for folder in [
            dir.display().to_string(),
            format!("{}/", dir.display()),
            ".".into(),
        ] {
            let e = set
                .read_skill_text("notes", Some(&folder), 1000, &[])
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("is the folder of skill `notes` itself, not a file")
                    && e.contains("references/more.md")
                    && e.contains("write !{skill notes} for its SKILL.md")
                    && !e.contains("outside"),
                "{e}"
            );
        }
        let e = set.read_skill_text("nope", None, 10, &[]).unwrap_err();
        assert!(e.to_string().contains("no loaded skill is named `nope`"));
    }

    #[test]
    fn hidden_files_and_what_the_sandbox_hides_are_not_read() {
        let (root, set) = set();
        let dir = root.path().join("notes");
        fs::write(dir.join(".env"), "TOKEN=x").unwrap();
        fs::create_dir_all(dir.join(".git")).unwrap();
        fs::write(dir.join(".git/config"), "x").unwrap();
        std::os::unix::fs::symlink(".env", dir.join("env.txt")).unwrap();
        fs::write(dir.join("secret.key"), "k").unwrap();
        let read = |f: &str, hidden: &[std::path::PathBuf]| {
            set.read_skill_text("notes", Some(f), 100, hidden)
        };
        for f in [".env", ".git/config", "env.txt", "./.env"] {
            let e = read(f, &[]).unwrap_err().to_string();
            assert!(e.contains("a hidden file"), "{f}: {e}");
        }
        // Positive control: the same kind of file without a dot is read...
        assert_eq!(read("secret.key", &[]).unwrap().bytes, b"k");
        // ...unless the sandbox hides it from scripts.
        let hidden = [dir.canonicalize().unwrap().join("secret.key")];
        let e = read("secret.key", &hidden).unwrap_err().to_string();
        assert!(e.contains("deny_read"), "{e}");
        assert!(
            !read("SECRET.KEY", &hidden)
                .unwrap_err()
                .to_string()
                .contains("secret.key")
        );
    }

    #[test]
    fn a_binary_file_is_a_note_not_its_bytes() {
        let (root, set) = set();
        let dir = root.path().join("notes");
        let mut font = vec![0u8, 1, 0, 0];
        font.extend(std::iter::repeat_n(0u8, 12_000));
        fs::write(dir.join("font.ttf"), &font).unwrap();
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.extend((0..2000u32).map(|i| (i * 7 + 128) as u8 | 0x80));
        fs::write(dir.join("img.dat"), &png).unwrap();
        let read = |f: &str, max| {
            let t = set.read_skill_text("notes", Some(f), max, &[]).unwrap();
            (String::from_utf8(t.bytes).unwrap(), t.truncated)
        };
        let (text, truncated) = read("font.ttf", 100_000);
        assert_eq!(
            text,
            "[font.ttf of skill `notes` is a binary file (TrueType font, 12004 bytes), not \
             text: it cannot be read here. A script of the skill can use it by that path.]\n"
        );
        assert!(!truncated);
        // Seen in the first bytes read, with no NUL: the magic names it, the size is the file's.
        let (text, _) = read("img.dat", 100);
        assert!(text.contains("(PNG image, 2008 bytes)"), "{text}");
        // Positive control: text, even cut inside a character, is text.
        fs::write(dir.join("t.md"), "é".repeat(100)).unwrap();
        let t = set
            .read_skill_text("notes", Some("t.md"), 101, &[])
            .unwrap();
        assert!(t.truncated && t.bytes.len() == 101);
        assert!(!super::is_binary("é".repeat(50).as_bytes().split_at(99).0));
        assert!(super::is_binary(b"abc\0def"));
    }

    #[test]
    fn a_name_in_another_case_is_found_when_unique() {
        let (root, set) = set();
        let dir = root.path().join("notes");
        fs::write(dir.join("forms.md"), "forms").unwrap();
        fs::write(dir.join("references/Guide.md"), "g1").unwrap();
        fs::create_dir_all(dir.join("other")).unwrap();
        fs::write(dir.join("other/guide.md"), "g2").unwrap();
        let read = |f: &str| set.read_skill_text("notes", Some(f), 100, &[]);
        assert_eq!(read("FORMS.md").unwrap().bytes, b"forms");
        assert_eq!(read("references/FORMS.md").unwrap().bytes, b"forms");
        let e = read("GUIDE.md").unwrap_err().to_string();
        assert!(
            e.contains("write one of other/guide.md, references/Guide.md"),
            "{e}"
        );
        let e = read("nothing.md").unwrap_err().to_string();
        assert!(e.contains("its files: forms.md, other/guide.md"), "{e}");
        assert!(!e.contains("SKILL.md"), "{e}");
    }
}
