//! The native tool calls of an answer: each run through the dispatcher, or refused, and reported
//! through the pipeline's one wording.

use super::stream::side_channel;
use super::{Busy, Session, Ui, tools};
use crate::audit::Decision;
use crate::dispatch::{Origin, Outcome};
use crate::model::ToolCall;
use crate::pipeline::{Driver, Event};

impl Session {
    /// Runs one native tool call; returns the tool message's content and whether it is an error,
    /// and the outcome of a command that ran (the turn shows it if the model then says nothing).
    pub(super) async fn run_tool(
        &mut self,
        call: &ToolCall,
        ui: &mut dyn Ui,
        driver: &Driver,
    ) -> ((String, bool), Option<Outcome>) {
        if call.name == tools::LOAD_SKILL && !self.tool_defs.is_empty() {
            return (self.load_skill_tool(call, ui, driver).await, None);
        }
        let Some(target) = self.tool_map.get(&call.name) else {
            let why = format!("unknown tool `{}`", call.name);
            return (
                self.invalid_tool_call(call, &call.name, why, ui, driver),
                None,
            );
        };
        let script = &target.reference;
        let (args, input) = match tools::parse_arguments(&call.arguments, target) {
            Ok(v) => v,
            Err(e) => {
                return (self.invalid_tool_call(call, script, e, ui, driver), None);
            }
        };
        let mut argv = vec![script.clone()];
        argv.extend(args);
        ui.busy(Some(Busy::Running(script)));
        // A signal's exit waits for the report as well as for the run.
        let _reporting = crate::dispatch::InFlight::enter();
        let outcome = self.dispatcher.run_argv(Origin::Tool, argv, input).await;
        ui.busy(None);
        self.tool_report(call, &outcome, ui, driver);
        (tools::result_json(&outcome), Some(outcome))
    }

    /// A tool call's reports, through the pipeline's one wording (`tool NAME`).
    fn tool_report(&self, call: &ToolCall, outcome: &Outcome, ui: &mut dyn Ui, driver: &Driver) {
        let show_side = self.opts.show_side_effects;
        let what = format!("tool {}", call.name);
        driver.report(what.as_bytes(), outcome, &mut |ev: Event<'_>| {
            side_channel(show_side, ui, ev)
        });
    }

    /// A tool call that cannot become a run (unknown tool, bad arguments): audited as invalid,
    /// reported, and answered to the model as an error.
    fn invalid_tool_call(
        &self,
        call: &ToolCall,
        argv0: &String,
        why: String,
        ui: &mut dyn Ui,
        driver: &Driver,
    ) -> (String, bool) {
        let argv = std::slice::from_ref(argv0);
        let outcome = driver.refuse(Origin::Tool, argv, Decision::Invalid, why.clone());
        self.tool_report(call, &outcome, ui, driver);
        (tools::error_json(&why), true)
    }

    /// The `load_skill` tool: the built-in `skill NAME [FILE]`, through the dispatcher (audited).
    async fn load_skill_tool(
        &mut self,
        call: &ToolCall,
        ui: &mut dyn Ui,
        driver: &Driver,
    ) -> (String, bool) {
        let argv = match tools::load_skill_argv(&call.arguments) {
            Ok(argv) => argv,
            Err(e) => {
                return self.invalid_tool_call(call, &call.name, e, ui, driver);
            }
        };
        let skill = argv.get(1).cloned();
        let outcome = self.dispatcher.run_argv(Origin::Tool, argv, None).await;
        self.tool_report(call, &outcome, ui, driver);
        if let (true, Some(skill)) = (outcome.succeeded(), skill) {
            self.offer_skill(skill);
        }
        tools::result_json(&outcome)
    }
}
