//! What the server offers, built once at start: the tools (each tool folder and skill script as
//! the native tool calls offer them — its own schema where it has one —, plus `load_skill`) and
//! the skills as resources in the layout of the MCP Skills
//! extension (`skill://NAME/PATH`, `skills/list` manifests with sha256 digests).
//!
//! Loading reads the skill folders ([`Catalog::load`]); everything after is lookups on data.

use crate::chat::tools::ToolTarget;
use crate::skills::{Skill, SkillSet};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::chat::tools::LOAD_SKILL;
/// Deepest folder level of a skill that is published.
const MAX_DEPTH: usize = 5;
/// Files per skill that are published; the rest are left out with a warning.
const MAX_FILES: usize = 500;
/// Largest file that is published (skills are instructions and scripts, not data sets).
const MAX_FILE_BYTES: u64 = 4 << 20;
/// Bytes per skill that are published (they are held in memory).
const MAX_SKILL_BYTES: usize = 32 << 20;

/// What a tool runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A tool folder or script of a skill, as a native tool call would run it.
    Run(ToolTarget),
    LoadSkill,
}

/// One tool, serialized as `tools/list` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Tool {
    pub name: String,
    pub description: String,
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
    #[serde(skip)]
    pub target: Target,
}

/// One published file of a skill.
#[derive(Debug, Clone, PartialEq)]
pub struct File {
    /// Path inside the skill folder, `/`-separated.
    pub rel: String,
    pub uri: String,
    pub mime: &'static str,
    pub bytes: Arc<[u8]>,
    pub digest: String,
}

#[derive(Debug, Clone)]
pub struct SkillEntry {
    pub name: String,
    pub description: String,
    pub frontmatter: Map<String, Value>,
    /// SKILL.md first.
    pub files: Vec<File>,
    /// The names of this skill's tools.
    pub tools: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub tools: Vec<Tool>,
    /// Tools that are not listed because every call would be refused — a skill's whose
    /// `allowed-tools` forbid its scripts, and what the policy's patterns never allow
    /// ([`Catalog::offer_only`]) —: a call to one is refused with that reason rather than as an
    /// unknown tool.
    pub locked: Vec<(String, crate::chat::tools::ToolTarget)>,
    pub skills: Vec<SkillEntry>,
    /// Tool folders of loaded skills that are not offered (disabled, or skipped at load for a
    /// problem in them), by the name they would have, with why: a call says so, not "unknown".
    pub unavailable: Vec<(String, String)>,
    /// Files left out, for stderr.
    pub warnings: Vec<String>,
}

impl Catalog {
    /// Reads every loaded skill's folder. `hidden`: what the sandbox hides from scripts; such a
    /// file, like a hidden (dot) file, is not published ([`crate::skills::files::readable`]).
    pub fn load(skills: &SkillSet, hidden: &[PathBuf]) -> Catalog {
        let mut cat = Catalog::default();
        let (defs, map) = crate::chat::tools::tool_defs(skills);
        for def in defs {
            let Some(target) = map.get(&def.name) else {
                continue;
            };
            cat.tools.push(Tool {
                name: def.name,
                description: def.description,
                input_schema: object_schema(def.parameters),
                target: Target::Run(target.clone()),
            });
        }
        for skill in skills.iter() {
            for dir in crate::skills::tools::tool_dirs(&skill.dir) {
                let id = dir.file_name().unwrap_or_default().to_string_lossy();
                if skill.tool(&id).is_none()
                    && let Err(e) = skills.resolve_in(&skill.name, &format!("{}:{id}", skill.name))
                {
                    let name = crate::skills::functions::compose(&skill.name, &id);
                    cat.unavailable.push((name, e.to_string()));
                }
            }
            // An agent's or prompt's folder with tools only: its tools are offered, but it is no
            // skill to publish (its other files are the agent's own, not a skill's resources).
            if !skill.source.ends_with("SKILL.md") {
                continue;
            }
            let tools = cat
                .tools
                .iter()
                .filter(|t| matches!(&t.target, Target::Run(r) if r.skill == skill.name))
                .map(|t| t.name.clone())
                .collect();
            let files = skill_files(skill, hidden, &mut cat.warnings);
            let skill_md = files.first().filter(|f| f.uri.ends_with("/SKILL.md"));
            cat.skills.push(SkillEntry {
                name: skill.name.clone(),
                description: skill.description.clone(),
                frontmatter: frontmatter(skill, skill_md.map(|f| &f.bytes[..])),
                files,
                tools,
            });
        }
        if !cat.skills.is_empty() {
            cat.tools.push(load_skill_tool(&cat.skills));
        }
        cat.locked = crate::chat::tools::locked_targets(skills);
        cat
    }

    /// Keeps listed only the tools whose reference `could_run` (the policy could allow some call
    /// of it): a client should not offer its model tools that are always refused. The others
    /// move to [`Catalog::locked`], so a call still gets the policy's reason.
    pub fn offer_only(&mut self, could_run: impl Fn(&str) -> bool) {
        let (kept, hidden): (Vec<Tool>, Vec<Tool>) = std::mem::take(&mut self.tools)
            .into_iter()
            .partition(|t| match &t.target {
                Target::Run(r) => could_run(&r.reference),
                Target::LoadSkill => true,
            });
        self.tools = kept;
        for tool in hidden {
            if let Target::Run(r) = tool.target {
                for skill in &mut self.skills {
                    skill.tools.retain(|n| *n != tool.name);
                }
                self.locked.push((tool.name, r));
            }
        }
    }

    /// Why the tool `name` is not offered, when it is a tool folder of a loaded skill.
    pub fn unavailable(&self, name: &str) -> Option<&str> {
        self.unavailable
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, why)| why.as_str())
    }

    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Whether a script or tool folder is offered (not only `load_skill`, which asks no one).
    pub fn offers_runs(&self) -> bool {
        self.tools.iter().any(|t| t.name != LOAD_SKILL)
    }

    /// What a call to `name` runs: a listed tool's target, or a locked skill's script (which
    /// the dispatcher then refuses, naming the skill's allowed tools).
    pub fn target(&self, name: &str) -> Option<Target> {
        self.tool(name).map(|t| t.target.clone()).or_else(|| {
            self.locked
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, t)| Target::Run(t.clone()))
        })
    }

    pub fn skill(&self, name: &str) -> Option<&SkillEntry> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// `tools/list` result.
    pub fn tools_json(&self) -> Value {
        json!({ "tools": self.tools })
    }

    /// `resources/list` result: one entry per skill, its SKILL.md, named and described as the
    /// skill is (the files are in the skill's manifest, `skills/list`).
    pub fn resources_json(&self) -> Value {
        let resources: Vec<Value> = self
            .skills
            .iter()
            .filter_map(|s| {
                let md = s.files.first()?;
                Some(json!({
                    "uri": md.uri,
                    "name": s.name,
                    "description": s.description,
                    "mimeType": md.mime,
                    "size": md.bytes.len(),
                }))
            })
            .collect();
        json!({ "resources": resources })
    }

    /// `resources/templates/list` result: any file of a skill by its path.
    pub fn templates_json(&self) -> Value {
        json!({"resourceTemplates": [{
            "uriTemplate": "skill://{skill}/{+path}",
            "name": "skill-file",
            "description": "A file of a skill, by its path inside the skill folder (SKILL.md, references/…, scripts/…)",
        }]})
    }

    /// The skill and the file at `uri`, matched after percent-encoding normalisation.
    pub fn file_of(&self, uri: &str) -> Option<(&str, &File)> {
        let (name, rel) = split_uri(uri)?;
        let s = self.skill(&name)?;
        Some((s.name.as_str(), s.files.iter().find(|f| f.rel == rel)?))
    }

    /// `resources/read` contents for a file: text when it is UTF-8, else base64.
    pub fn read_json(file: &File) -> Value {
        use base64::Engine;
        let mut c = json!({"uri": file.uri, "mimeType": file.mime});
        match std::str::from_utf8(&file.bytes) {
            Ok(text) if !text.contains('\0') => c["text"] = json!(text),
            _ => c["blob"] = json!(base64::engine::general_purpose::STANDARD.encode(&file.bytes)),
        }
        json!({ "contents": [c] })
    }

    /// `skills/list` result (MCP Skills extension).
    pub fn skills_json(&self) -> Value {
        let skills: Vec<Value> = self.skills.iter().map(skill_json).collect();
        json!({ "skills": skills })
    }

    /// `skills/get` result for the skill whose SKILL.md is at `uri`.
    pub fn skill_by_uri(&self, uri: &str) -> Option<Value> {
        let (name, rel) = split_uri(uri)?;
        let s = self.skill(&name).filter(|_| rel == "SKILL.md")?;
        Some(json!({ "skill": skill_json(s) }))
    }

    /// What follows a skill's instructions in the `load_skill` answer: its tools (by their MCP
    /// names) and its files (by URI), so that a client without resources gets the same
    /// progressive disclosure as a chat.
    pub fn load_skill_tail(&self, name: &str) -> Option<String> {
        let s = self.skill(name)?;
        let mut out = format!("\n\n---\nTools of skill {}:", s.name);
        if s.tools.is_empty() {
            out.push_str(" none (its instructions only)\n");
        } else {
            out.push('\n');
            for t in &s.tools {
                out.push_str(&format!("- {t}\n"));
            }
        }
        out.push_str("Files (load_skill with `file`, or read them as resources by URI):\n");
        for f in s.files.iter().skip(1) {
            out.push_str(&format!("- {} ({} bytes)\n", f.uri, f.bytes.len()));
        }
        Some(out)
    }
}

/// MCP requires an input schema of `"type": "object"`; a tool's own schema that leaves the
/// type out gets it (one of another type is offered as written: the validator still applies).
fn object_schema(mut schema: Value) -> Value {
    if let Some(obj) = schema.as_object_mut()
        && !obj.contains_key("type")
    {
        obj.insert("type".into(), "object".into());
    }
    schema
}

fn skill_json(s: &SkillEntry) -> Value {
    let uri = s.files.first().map(|f| f.uri.clone()).unwrap_or_default();
    let resources: Vec<Value> = s
        .files
        .iter()
        .map(|f| json!({"uri": f.uri, "digest": f.digest, "size": f.bytes.len()}))
        .collect();
    json!({"uri": uri, "frontmatter": s.frontmatter, "resources": resources})
}

/// The most the skill list in `load_skill`'s description may take: clients put every tool
/// description in their model's context, as chat does its catalog (which has the same budget).
const LOAD_SKILL_LIST_BYTES: usize = crate::agents::catalog::CATALOG_BUDGET_BYTES;

fn load_skill_tool(skills: &[SkillEntry]) -> Tool {
    let listed: Vec<(&str, &str)> = skills
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str()))
        .collect();
    let description = format!(
        "Load a skill: returns its instructions (SKILL.md), its tools and its files; with `file`, \
         one of its files. Load a skill before using its tools. Skills:\n{}",
        crate::agents::catalog::described_within(&listed, LOAD_SKILL_LIST_BYTES).trim_end()
    );
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    Tool {
        name: LOAD_SKILL.into(),
        description,
        input_schema: json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": names, "description": "the skill's name"},
                "file": {"type": "string", "description": "a file of that skill, by its path in the skill folder (references/x.md); without it, the skill's instructions"}
            },
            "required": ["name"],
        }),
        target: Target::LoadSkill,
    }
}

/// The skill's frontmatter as its SKILL.md has it (`skill_md`: the file's bytes), every key and
/// type kept as the MCP Skills extension asks; the name and description skillpipe loaded it by
/// are added only where the file has none (a layout that takes them from elsewhere). Without
/// the file, the fields skillpipe keeps.
fn frontmatter(skill: &Skill, skill_md: Option<&[u8]>) -> Map<String, Value> {
    let parsed = skill_md
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|t| crate::skills::frontmatter::parse(t).ok());
    if let Some(parsed) = parsed {
        let mut m: Map<String, Value> = parsed
            .entries
            .iter()
            .map(|e| (e.key.clone(), e.value.to_json()))
            .collect();
        m.entry("name").or_insert_with(|| skill.name.clone().into());
        m.entry("description")
            .or_insert_with(|| skill.description.clone().into());
        return m;
    }
    let mut m = Map::new();
    m.insert("name".into(), skill.name.clone().into());
    m.insert("description".into(), skill.description.clone().into());
    if let Some(l) = &skill.license {
        m.insert("license".into(), l.clone().into());
    }
    if let Some(c) = &skill.compatibility {
        m.insert("compatibility".into(), c.clone().into());
    }
    if !skill.metadata.is_empty() {
        m.insert("metadata".into(), json!(skill.metadata));
    }
    if let Some(t) = &skill.allowed_tools {
        m.insert("allowed-tools".into(), t.join(" ").into());
    }
    m
}

/// SKILL.md first, then every other regular file up to [`MAX_DEPTH`], sorted; hidden entries
/// and anything that leads outside the skill folder are left out.
fn skill_files(skill: &Skill, hidden: &[PathBuf], warnings: &mut Vec<String>) -> Vec<File> {
    let mut found = BTreeMap::new();
    walk(&skill.dir, &skill.dir, 0, &mut found, warnings);
    found.retain(|rel, _| {
        let real = skill.dir.join(rel).canonicalize().unwrap_or_default();
        crate::skills::files::readable(&skill.dir, rel, &real, hidden).is_ok()
    });
    let mut files = Vec::new();
    if let Some(bytes) = found.remove("SKILL.md") {
        files.push(file(&skill.name, "SKILL.md", bytes));
    }
    let mut total: usize = files.iter().map(|f| f.bytes.len()).sum();
    for (rel, bytes) in found {
        total += bytes.len();
        if files.len() >= MAX_FILES || total > MAX_SKILL_BYTES {
            warnings.push(format!(
                "skill {}: only the first {} files are published (at most {MAX_FILES} files, \
                 {MAX_SKILL_BYTES} bytes)",
                skill.name,
                files.len()
            ));
            break;
        }
        files.push(file(&skill.name, &rel, bytes));
    }
    files
}

fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    found: &mut BTreeMap<String, Vec<u8>>,
    warnings: &mut Vec<String>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') || found.len() > MAX_FILES {
            continue;
        }
        let path = entry.path();
        // Symlinks are followed only where they stay inside the skill.
        let Ok(real) = path.canonicalize() else {
            continue;
        };
        if !real.starts_with(root) {
            continue;
        }
        let Ok(meta) = real.metadata() else { continue };
        if meta.is_dir() {
            if depth < MAX_DEPTH {
                walk(root, &path, depth + 1, found, warnings);
            }
        } else if meta.is_file() {
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if meta.len() > MAX_FILE_BYTES {
                warnings.push(format!(
                    "{}: {} bytes, over the {MAX_FILE_BYTES}-byte limit; not published",
                    path.display(),
                    meta.len()
                ));
                continue;
            }
            if let Ok(bytes) = std::fs::read(&real) {
                found.insert(rel, bytes);
            }
        }
    }
}

fn file(skill: &str, rel: &str, bytes: Vec<u8>) -> File {
    File {
        rel: rel.to_string(),
        uri: format!("skill://{}/{}", encode_path(skill), encode_path(rel)),
        mime: mime_of(rel, &bytes),
        digest: format!("sha256:{}", sha256_hex(&bytes)),
        bytes: bytes.into(),
    }
}

/// The SHA-256 of `bytes` in lowercase hex.
pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

fn mime_of(rel: &str, bytes: &[u8]) -> &'static str {
    let ext = rel.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md") => "text/markdown",
        Some("py") => "text/x-python",
        Some("sh" | "bash") => "text/x-shellscript",
        Some("js" | "mjs") => "text/javascript",
        Some("ts") => "text/x-typescript",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("toml") => "application/toml",
        Some("csv") => "text/csv",
        Some("html" | "htm") => "text/html",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("pdf") => "application/pdf",
        _ if std::str::from_utf8(bytes).is_ok_and(|t| !t.contains('\0')) => "text/plain",
        _ => "application/octet-stream",
    }
}

/// What a path keeps unencoded: RFC 3986's unreserved characters and `/`.
const PATH_KEEPS: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

fn encode_path(p: &str) -> String {
    utf8_percent_encode(p, PATH_KEEPS).to_string()
}

/// `None` when an escape is not `%` and two hex digits (the crate would keep it as written) or
/// the bytes are not UTF-8.
fn decode_path(p: &str) -> Option<String> {
    let hex = |e: &str| e.len() >= 2 && e.bytes().take(2).all(|b| b.is_ascii_hexdigit());
    p.split('%').skip(1).all(hex).then_some(())?;
    Some(percent_decode_str(p).decode_utf8().ok()?.into_owned())
}

/// `skill://NAME/REL` → (NAME, REL), decoded.
fn split_uri(uri: &str) -> Option<(String, String)> {
    let rest = uri.strip_prefix("skill://")?;
    let (name, rel) = rest.split_once('/')?;
    Some((decode_path(name)?, decode_path(rel)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill_dir(root: &Path) -> std::path::PathBuf {
        let dir = root.join("lookup");
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::create_dir_all(dir.join("references")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            "---\nname: lookup\ndescription: Look words up\n---\nUse the tool.\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("scripts/define.py"),
            "# Define a word.\nprint('x')\n",
        )
        .unwrap();
        std::fs::write(dir.join("references/a b.md"), "notes").unwrap();
        std::fs::write(dir.join(".secret"), "hidden").unwrap();
        dir
    }

    #[test]
    fn skills_become_tools_and_resources() {
        let tmp = tempfile::tempdir().unwrap();
        skill_dir(tmp.path());
        let set = SkillSet::load(&[tmp.path().to_path_buf()]);
        let cat = Catalog::load(&set, &[]);
        let names: Vec<&str> = cat.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["lookup__define", LOAD_SKILL]);
        let Target::Run(t) = &cat.tool("lookup__define").unwrap().target else {
            panic!("not a script")
        };
        assert_eq!(t.reference, "lookup/scripts/define.py");
        assert!(
            cat.tool(LOAD_SKILL)
                .unwrap()
                .description
                .contains("- lookup: Look words up")
        );

        let s = cat.skill("lookup").unwrap();
        let rels: Vec<&str> = s.files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(rels, ["SKILL.md", "references/a b.md", "scripts/define.py"]);
        assert_eq!(s.files[1].uri, "skill://lookup/references/a%20b.md");
        assert!(s.files[0].digest.starts_with("sha256:") && s.files[0].digest.len() == 71);

        let res = cat.resources_json();
        assert_eq!(res["resources"][0]["uri"], "skill://lookup/SKILL.md");
        assert_eq!(res["resources"][0]["description"], "Look words up");
        let (_, f) = cat.file_of("skill://lookup/references/a%20b.md").unwrap();
        assert_eq!(Catalog::read_json(f)["contents"][0]["text"], "notes");
        assert!(cat.file_of("skill://lookup/.secret").is_none());
        assert!(cat.file_of("skill://lookup/../lookup/SKILL.md").is_none());

        let listed = cat.skills_json();
        assert_eq!(listed["skills"][0]["frontmatter"]["name"], "lookup");
        assert_eq!(
            listed["skills"][0]["resources"].as_array().unwrap().len(),
            3
        );
        assert!(cat.skill_by_uri("skill://lookup/SKILL.md").is_some());
        assert!(
            cat.skill_by_uri("skill://lookup/scripts/define.py")
                .is_none()
        );

        let text = cat.load_skill_tail("lookup").unwrap();
        assert!(text.contains("- lookup__define"), "{text}");
        assert!(text.contains("skill://lookup/scripts/define.py"), "{text}");
    }

    #[test]
    fn links_out_of_the_skill_are_not_published() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = skill_dir(tmp.path());
        std::fs::write(tmp.path().join("outside.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(tmp.path().join("outside.txt"), dir.join("leak.txt")).unwrap();
        let set = SkillSet::load(&[tmp.path().to_path_buf()]);
        let cat = Catalog::load(&set, &[]);
        assert!(cat.file_of("skill://lookup/leak.txt").is_none());
        assert!(cat.file_of("skill://lookup/SKILL.md").is_some());
    }

    #[test]
    fn uri_paths_round_trip_and_malformed_escapes_match_nothing() {
        assert_eq!(encode_path("a b/ü%~"), "a%20b/%C3%BC%25~");
        assert_eq!(decode_path("a%20b/%C3%BC%25~").as_deref(), Some("a b/ü%~"));
        for bad in ["a%zz", "a%2", "%", "%ff"] {
            assert_eq!(decode_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn binary_files_are_base64() {
        let f = file("s", "x.bin", vec![0, 1, 2, 255]);
        assert_eq!(f.mime, "application/octet-stream");
        assert_eq!(Catalog::read_json(&f)["contents"][0]["blob"], "AAEC/w==");
    }
}
