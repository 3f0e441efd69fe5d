//! `/info`, `/agent`, `/skills` and `/copy`: what the session is and holds, shown to the user.

use super::ink::{Tone, paint};
use super::{Repl, clipboard, commands, info};

impl Repl<'_> {
    pub(super) fn show_info(&self) {
        // Measured as sent, as `chat -v` does: the body the provider would send next.
        let request = self.session.request();
        let request_bytes = crate::model::request_body(self.settings.provider, &request)
            .to_string()
            .len();
        let facts = info::Facts {
            model: &self.settings.label(),
            endpoint: &self.settings.base_url,
            agent: self
                .setup
                .agent
                .as_ref()
                .map(|a| (a.name.as_str(), a.source.display().to_string())),
            skills: self.skill_names(),
            policy: self.setup.dispatcher.policy(),
            tools: self.session.options().tools,
            system_prompt_bytes: self.session.system_prompt().map_or(0, str::len),
            few_shot: self.session.few_shot_len(),
            messages: self.session.history.len(),
            request_bytes,
        };
        self.ui.print(&crate::term::sanitize(&info::text(&facts)));
    }

    pub(super) fn show_agents(&self) {
        let mut out = String::new();
        match &self.setup.agent {
            Some(a) => {
                out.push_str(&format!("agent: {} — {}\n", a.name, a.description));
                out.push_str(&format!("  from {}\n", a.source.display()));
            }
            None => out.push_str("agent: none\n"),
        }
        let listing = crate::agents::list();
        if listing.agents.is_empty() {
            out.push_str("no agents found on the search path (skillpipe doctor shows where)\n");
        } else {
            out.push_str("available:\n");
            for a in &listing.agents {
                let mark = if Some(a.name.as_str()) == self.agent_name() {
                    "*"
                } else {
                    " "
                };
                out.push_str(&format!(" {mark} {:<20} {}\n", a.name, a.description));
            }
            out.push_str("/agent NAME switches (the conversation is kept; /clear forgets it)\n");
        }
        // Names, descriptions and paths come from agent files: inert before printing.
        self.ui.print(&crate::term::sanitize(&out));
    }

    /// `/skills`: every active skill; `/skills NAME`: that one in detail.
    pub(super) fn show_skills(&self, name: Option<&str>) {
        let skills = self.setup.dispatcher.skills();
        if skills.is_empty() {
            self.ui.info(
                "no skills are active (skillpipe skills list shows what is on the search path)",
            );
            return;
        }
        let width = self.ui.width();
        let mut out = String::new();
        match name {
            None => {
                out.push_str(&crate::render::wrap_text(
                    commands::DISCLOSURE_LEGEND,
                    width,
                ));
                for s in skills.iter() {
                    out.push_str(&self.skill_block(s, width, false));
                }
            }
            Some(name) => match skills.iter().find(|s| s.name == name) {
                Some(s) => out.push_str(&self.skill_block(s, width, true)),
                None => {
                    let names = self.skill_names();
                    return self.ui.warn(&format!(
                        "no active skill `{}`; active: {} (/skills lists them)",
                        crate::command::escape_controls(name),
                        names.join(", ")
                    ));
                }
            },
        }
        if !self.setup.dispatcher.policy().allow_scripts {
            let line = "directives do not run in this session: start with --allow-scripts";
            out.push_str(&crate::render::wrap_text(line, width));
        }
        self.ui.print_styled(&out);
    }

    /// One skill as `/skills` shows it: its name, how the model sees it, its description, tools
    /// and scripts with how a directive calls them; `detail` adds where it lives and how the
    /// model reads it. Names and descriptions come from skill files: inert before painting.
    /// Wrapped at words to `width`, continuation lines indented.
    fn skill_block(&self, s: &crate::skills::Skill, width: usize, detail: bool) -> String {
        use crate::term::sanitize;
        let wrap = |text: &str, first: &str, rest: &str| {
            crate::render::wrap_plain(text, width, first, rest)
        };
        let mut out = String::new();
        let name = sanitize(&s.name);
        let line = format!(
            "{name} [{}] — {}",
            commands::disclosure(&self.setup.named_skills, &s.name),
            sanitize(&s.description.replace('\n', " "))
        );
        let wrapped = wrap(&line, "", "    ");
        let rest = wrapped.strip_prefix(&*name).unwrap_or(&wrapped);
        out.push_str(&paint(&name, Tone::Bold, self.ui.color()));
        out.push_str(rest);
        if detail {
            let folder = format!("folder: {}", s.dir.display());
            out.push_str(&wrap(&sanitize(&folder), "  ", "    "));
            if let Some(c) = &s.compatibility {
                out.push_str(&wrap(&sanitize(&format!("needs: {c}")), "  ", "    "));
            }
            let read = format!(
                "the model reads its SKILL.md with !{{skill {name}}}, a file of it with !{{skill {name} FILE}}"
            );
            out.push_str(&wrap(&read, "  ", "    "));
        }
        if !s.allows_scripts() {
            let why = "(its allowed-tools has no Bash entry: its scripts may not run)";
            out.push_str(&wrap(why, "  ", "    "));
        }
        if s.scripts().is_empty() && s.tools().next().is_none() {
            out.push_str("  no scripts\n");
        }
        for t in s.tools() {
            // A tool folder: how a directive calls it, typed by its schema.
            let usage = t.flag_usage();
            let sep = if usage.is_empty() { "" } else { " " };
            let call = format!("!{{{}:{}{sep}{usage}}}", s.name, t.id);
            let mut line = sanitize(&call).into_owned();
            if !t.description.is_empty() {
                let about = t.description.replace('\n', " ");
                line = format!("{line} — {}", sanitize(&about));
            }
            out.push_str(&wrap(&line, "  ", "      "));
        }
        for sc in s.scripts() {
            let name = (self.setup.dispatcher.skills()).listed_name(&s.name, &sc.rel_path);
            let path = sanitize(&name);
            let line = match sc.description.is_empty() {
                true => path.to_string(),
                false => format!("{path:<28} {}", sanitize(&sc.description)),
            };
            out.push_str(&wrap(&line, "  ", "      "));
            // A script with a schema beside it takes typed flags, as a tool does.
            let typed = crate::skills::tools::script_tool(sc).ok().flatten();
            if let Some(t) = &typed {
                let usage = format!("JSON on stdin: {}", t.flag_usage());
                out.push_str(&wrap(&sanitize(&usage), "      ", "      "));
            }
            if detail && typed.is_none() {
                let usage = format!(
                    "!{{{path} ARGS}} (output back to the model), %{{{path} ARGS}} (output not shown)"
                );
                out.push_str(&wrap(&usage, "      ", "      "));
            }
        }
        out
    }

    pub(super) fn copy(&self) {
        let last = self
            .session
            .transcript
            .iter()
            .rev()
            .find(|(role, text)| role == "assistant" && !text.trim().is_empty());
        let Some((_, text)) = last else {
            return self.ui.info("no answer to copy yet");
        };
        match clipboard::copy(text) {
            Ok(how) => self.ui.info(&how),
            Err(why) => self.ui.warn(&why.to_string()),
        }
    }
}
