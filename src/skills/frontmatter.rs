//! SKILL.md frontmatter: split the file, parse the YAML keeping line numbers.
//! Pure: no I/O. Checking against the spec lives in `check`.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use std::fmt;

/// A YAML value, kept close to what was written so strict validation can name wrong types.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    /// Entries in file order; `line` is the line of the value within the YAML text (1-based, 0 unknown).
    Map(Vec<Entry>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub line: usize,
    pub value: Node,
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Int(v.into()))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Node, E> {
        Ok(Node::Int(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<String>>()? {
            let value: Node = map.next_value()?;
            entries.push(Entry {
                key: key.value,
                line: key.referenced.line() as usize,
                value,
            });
        }
        Ok(Node::Map(entries))
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

impl Node {
    /// The text of a scalar (numbers and booleans as YAML would print them); `None` for collections.
    pub fn scalar_text(&self) -> Option<String> {
        match self {
            Node::Null => Some(String::new()),
            Node::Bool(b) => Some(b.to_string()),
            Node::Int(i) => Some(i.to_string()),
            Node::Float(f) => Some(format!("{f:?}")),
            Node::Str(s) => Some(s.clone()),
            Node::Seq(_) | Node::Map(_) => None,
        }
    }

    /// The value as JSON: numbers stay numbers, unknown keys stay (MCP publishes a skill's
    /// frontmatter verbatim). An integer JSON cannot hold, or a float that is no number, becomes
    /// its text; the YAML reader already gives an integer past 64 bits as a float.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Int(i) => i64::try_from(*i)
                .map(Value::from)
                .or_else(|_| u64::try_from(*i).map(Value::from))
                .unwrap_or_else(|_| Value::String(i.to_string())),
            Node::Float(f) => serde_json::Number::from_f64(*f)
                .map_or_else(|| Value::String(format!("{f:?}")), Value::Number),
            Node::Str(s) => Value::String(s.clone()),
            Node::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            Node::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), e.value.to_json()))
                    .collect(),
            ),
        }
    }

    /// A short name of the value's type for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Node::Null => "empty",
            Node::Bool(_) => "a boolean",
            Node::Int(_) | Node::Float(_) => "a number",
            Node::Str(_) => "a string",
            Node::Seq(_) => "a list",
            Node::Map(_) => "a mapping",
        }
    }
}

/// A SKILL.md split into its parts. Lines are 1-based lines of the whole file.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// Top-level frontmatter entries in file order, lines already file-relative.
    pub entries: Vec<Entry>,
    pub body: String,
}

/// Why a SKILL.md could not be read at all (the skill is skipped).
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

/// Split off the `---` frontmatter and parse it. The YAML must be a mapping.
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err(ParseError {
            line: 1,
            message: "no frontmatter: SKILL.md must start with a `---` line".into(),
        });
    }
    let yaml_start = first.len();
    let mut offset = yaml_start;
    let mut close = None;
    for line in lines {
        let t = line.trim_end();
        if t == "---" || t == "..." {
            close = Some((offset, offset + line.len()));
            break;
        }
        offset += line.len();
    }
    let Some((yaml_end, body_start)) = close else {
        return Err(ParseError {
            line: 1,
            message: "frontmatter is not closed: no `---` line after it".into(),
        });
    };
    let yaml = &text[yaml_start..yaml_end];
    let body = text[body_start..]
        .trim_start_matches(['\n', '\r'])
        .trim_end()
        .to_owned();
    let entries = mapping(yaml, 1, "invalid YAML frontmatter", "frontmatter must")?;
    Ok(Parsed { entries, body })
}

/// A whole YAML file (e.g. a tool's `tool.yaml`) that must be a mapping; lines are the file's.
pub fn parse_mapping(text: &str) -> Result<Vec<Entry>, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    mapping(text, 0, "invalid YAML", "must")
}

/// `yaml`, which starts `by` lines into its file, as a mapping with file lines; `invalid` and
/// `must` start the messages for YAML that does not parse and for one that is no mapping.
fn mapping(yaml: &str, by: usize, invalid: &str, must: &str) -> Result<Vec<Entry>, ParseError> {
    if yaml.trim().is_empty() {
        return Ok(Vec::new());
    }
    let node: Node =
        serde_saphyr::from_str_with_options(yaml, yaml_options()).map_err(|e| ParseError {
            line: e.location().map_or(1, |l| l.line() as usize + by),
            message: format!("{invalid}: {}", yaml_message(&e)),
        })?;
    match node {
        Node::Map(mut entries) => {
            shift_lines_by(&mut entries, by, 1);
            Ok(entries)
        }
        Node::Null => Ok(Vec::new()),
        other => Err(ParseError {
            line: 1 + by,
            message: format!("{must} be a mapping of keys, found {}", other.kind()),
        }),
    }
}

/// Entries carry YAML-relative lines; make them file-relative (`unknown` for one without, the
/// line of the key it is under).
fn shift_lines_by(entries: &mut [Entry], by: usize, unknown: usize) {
    for e in entries {
        e.line = if e.line == 0 { unknown } else { e.line + by };
        if let Node::Map(inner) = &mut e.value {
            shift_lines_by(inner, by, e.line);
        }
    }
}

/// YAML 1.2 booleans (`n`, `yes`, `off` stay strings), bounded alias expansion (library defaults).
fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! { strict_booleans: true }
}

/// The library's message without its YAML-relative position (we report the file line instead).
fn yaml_message(e: &serde_saphyr::Error) -> String {
    let text = e.without_snippet().to_string();
    let mut line = text.lines().next().unwrap_or("").trim();
    // Advice addressed to the programmer ("set DuplicateKeyPolicy in Options") is not for users.
    if let Some(i) = line.find(", set ").filter(|_| line.contains("Options")) {
        line = &line[..i];
    }
    let line = match line.rfind(" at line ") {
        Some(i) if line[i..].contains("column") => &line[..i],
        _ => line,
    };
    unescape_rust(line)
}

/// The parser writes an odd character as Rust source would (`\u{1b}`); shown the way every
/// other message shows one (`␛`, `<U+200B>`), so no message carries two styles.
fn unescape_rust(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find("\\u{") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 3..];
        let parsed = after.find('}').and_then(|end| {
            let c = u32::from_str_radix(&after[..end], 16)
                .ok()
                .and_then(char::from_u32)?;
            Some((c, end))
        });
        match parsed {
            Some((c, end)) => {
                out.push_str(&crate::command::escape_controls(&c.to_string()));
                rest = &after[end + 1..];
            }
            None => {
                out.push_str("\\u{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    crate::command::escape_controls(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_characters_in_parse_errors_are_shown_as_elsewhere() {
        assert_eq!(
            unescape_rust("unexpected character: `\\u{1b}' and \\u{200b}, \\u{zz}"),
            "unexpected character: `␛' and <U+200B>, \\u{zz}"
        );
        let p = parse("---\nname: x\ndescription: a\n\u{1b}: b\n---\n");
        let e = p.expect_err("ESC cannot start a key");
        assert!(!e.message.contains("\\u{"), "{}", e.message);
    }

    #[test]
    fn parses_entries_with_key_lines() {
        let p = parse(
            "---\nname: say\ndescription: >\n  Speak\n  aloud\nmetadata:\n  version: \"1.0\"\n  n: 2\n---\n\n# Body\n",
        )
        .unwrap();
        let keys: Vec<(&str, usize)> = p.entries.iter().map(|e| (e.key.as_str(), e.line)).collect();
        assert_eq!(keys, vec![("name", 2), ("description", 3), ("metadata", 6)]);
        assert_eq!(p.entries[1].value, Node::Str("Speak aloud\n".into()));
        let Node::Map(meta) = &p.entries[2].value else {
            panic!("metadata is not a map")
        };
        // YAML 1.2 booleans: `n` stays a key named "n".
        assert_eq!((meta[1].key.as_str(), meta[1].line), ("n", 8));
        assert_eq!(meta[1].value, Node::Int(2));
        assert_eq!(p.body, "# Body");
    }

    #[test]
    fn bad_yaml_names_the_file_line() {
        let e = parse("---\nname: x\ndescription: [unclosed\nfoo: bar\n---\n").unwrap_err();
        assert_eq!(e.line, 4);
        assert!(
            e.message.starts_with("invalid YAML frontmatter"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("line 3"), "{}", e.message);
    }

    #[test]
    fn crlf_and_bom() {
        let p = parse("\u{feff}---\r\nname: x\r\ndescription: d\r\n---\r\nBody\r\n").unwrap();
        assert_eq!(p.entries[1].value, Node::Str("d".into()));
        assert_eq!(p.body, "Body");
    }

    #[test]
    fn missing_or_unclosed_frontmatter() {
        assert_eq!(parse("# Title\n").unwrap_err().line, 1);
        assert!(
            parse("---\nname: x\n")
                .unwrap_err()
                .message
                .contains("not closed")
        );
        assert!(
            parse("---\n- a\n---\n")
                .unwrap_err()
                .message
                .contains("mapping")
        );
        assert_eq!(parse("---\n---\nbody").unwrap().entries, vec![]);
    }

    #[test]
    fn duplicate_keys_are_an_error() {
        let e = parse("---\nname: a\nname: b\n---\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert_eq!(
            e.message,
            "invalid YAML frontmatter: duplicate mapping key: name"
        );
    }
}
