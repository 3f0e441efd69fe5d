//! TOML errors in skillpipe's words, for every file it reads (config.toml, agent files): the
//! line, the key path, and serde's "field"/"sequence"/"map" said as TOML says them ("key",
//! "array", "table"), with the table an unknown key sits in. Pure.

use toml::de::{DeTable, DeValue};

/// 1-based line of a byte offset.
pub(crate) fn line_of(src: &str, offset: usize) -> usize {
    memchr::memchr_iter(b'\n', &src.as_bytes()[..offset.min(src.len())]).count() + 1
}

/// A TOML or serde error located: the line (when the error has a place), the key path
/// (`script_policy.allowed_comands`) and the message in skillpipe's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Located {
    pub line: Option<usize>,
    pub key: Option<String>,
    pub message: String,
}

/// Where `err` (from parsing `src`) is and what it says, with serde's words replaced.
pub(crate) fn locate(src: &str, err: &toml::de::Error) -> Located {
    let raw = err.message().trim().replace('\n', "; ");
    let Some(span) = err.span() else {
        return Located {
            line: None,
            key: None,
            message: raw,
        };
    };
    let path = DeTable::parse(src)
        .map(|doc| {
            let mut path = Vec::new();
            table_path(doc.get_ref(), span.start, &mut path);
            path
        })
        .unwrap_or_default();
    Located {
        line: Some(line_of(src, span.start)),
        key: (!path.is_empty()).then(|| path.join(".")),
        message: describe(&raw, &path),
    }
}

/// Reword serde's messages: "field" → "key", "sequence" → "array", and say which key or table.
fn describe(raw: &str, path: &[String]) -> String {
    let table = |p: &[String]| {
        if p.is_empty() {
            String::new()
        } else {
            format!(" in [{}]", p.join("."))
        }
    };
    if let Some(rest) = raw.strip_prefix("unknown field `") {
        let (key, tail) = rest.split_once('`').unwrap_or((rest, ""));
        // The error points at the unknown key itself, so the path ends with it.
        let parent = match path.last() {
            Some(last) if last == key => &path[..path.len() - 1],
            _ => path,
        };
        let expected = tail
            .trim_start_matches(", ")
            .strip_prefix("expected ")
            .map(|e| {
                let list = e.trim_start_matches("one of ").replace("` or `", ", ");
                format!(" (expected one of {})", list.replace('`', ""))
            });
        return format!(
            "unknown key `{key}`{}{}",
            table(parent),
            expected.unwrap_or_default()
        );
    }
    if let Some(rest) = raw.strip_prefix("missing field `") {
        let key = rest.split_once('`').map(|(k, _)| k).unwrap_or(rest);
        return format!("missing key `{key}`{}", table(path));
    }
    let msg = raw
        .replace("a sequence", "an array")
        .replace("a map", "a table");
    if path.is_empty() {
        msg
    } else {
        format!("key `{}`: {msg}", path.join("."))
    }
}

fn covers(span: &std::ops::Range<usize>, pos: usize) -> bool {
    span.start <= pos && pos < span.end.max(span.start + 1)
}

/// The key path (outermost first) of the key or value at byte offset `pos`. Header tables
/// (`[script_policy]`) span only their header line, so children are searched even when the
/// table's own span does not cover `pos`.
fn table_path(table: &DeTable, pos: usize, path: &mut Vec<String>) -> bool {
    for (k, v) in table.iter() {
        path.push(k.get_ref().to_string());
        if covers(&k.span(), pos) || value_path(v.get_ref(), pos, path) || covers(&v.span(), pos) {
            return true;
        }
        path.pop();
    }
    false
}

fn value_path(v: &DeValue, pos: usize, path: &mut Vec<String>) -> bool {
    match v {
        DeValue::Table(t) => table_path(t, pos, path),
        DeValue::Array(a) => a
            .iter()
            .any(|item| value_path(item.get_ref(), pos, path) || covers(&item.span(), pos)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_of_counts_newlines() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 99), 3);
    }

    #[test]
    fn an_unknown_key_names_its_table_and_the_keys_it_may_be() {
        let src = "[providers.local]\nbase_url = \"u\"\nmodle = \"x\"\n";
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct P {
            base_url: String,
            model: Option<String>,
        }
        #[derive(serde::Deserialize)]
        #[allow(dead_code)]
        struct F {
            providers: std::collections::BTreeMap<String, P>,
        }
        let err = toml::from_str::<F>(src).err().unwrap();
        let found = locate(src, &err);
        assert_eq!(found.line, Some(3));
        assert_eq!(
            found.message,
            "unknown key `modle` in [providers.local] (expected one of base_url, model)"
        );
    }
}
