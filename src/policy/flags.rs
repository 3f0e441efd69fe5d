//! The command-line flag that sets each policy key: one table for every sentence of the binary
//! that names a flag (the advice after a run, what an agent that may only narrow asked for).
//! A closed list: the policy's own keys; a key without a flag is set in a file only.

/// `(policy key, flag)`; `PATH`, `DIR` and the like are filled in where the value is known.
const FLAGS: [(&str, &str); 18] = [
    ("allow_scripts", "--allow-scripts"),
    ("confirm", "-y"),
    ("allowed_commands", "--allow PATTERN"),
    ("allow_network", "--allow-network"),
    ("allow_filesystem", "--allow-filesystem"),
    ("writable_paths", "--writable DIR"),
    ("sandbox", "--sandbox best-effort"),
    ("allow_read", "--allow-read PATH"),
    ("allowed_sockets", "--allow-socket PATH"),
    ("timeout_seconds", "--timeout SECS"),
    ("workdir", "--workdir caller"),
    ("max_captures_per_turn", "--max-captures N"),
    ("max_side_effects_per_turn", "--max-side-effects N"),
    ("max_cpu_seconds", "--max-cpu SECS"),
    ("max_file_size_mb", "--max-file-size MB"),
    ("max_tmp_mb", "--max-tmp MB"),
    ("max_processes", "--max-processes N"),
    ("max_memory_mb", "--max-memory MB"),
];

/// The flag that sets `key`, if one does.
pub fn flag(key: &str) -> Option<&'static str> {
    FLAGS.iter().find(|(k, _)| *k == key).map(|(_, f)| *f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_a_policy_key_and_every_flag_a_flag() {
        let policy = toml::to_string(&crate::ScriptPolicy::default()).unwrap();
        for (key, f) in FLAGS {
            assert!(
                policy.contains(&format!("{key} =")),
                "{key} is no policy key"
            );
            assert!(f.starts_with('-'), "{f}");
        }
        assert_eq!(flag("allow_read"), Some("--allow-read PATH"));
        assert_eq!(flag("env_passthrough"), None);
        assert_eq!(flag("no_such_key"), None);
    }
}
