//! What Tab completes in the REPL, from the session it runs.

use super::editor::{self, lock};
use super::session_file;
use crate::app::Setup;
use crate::model::Settings;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// The names Tab completes: the endpoint's models (asked once per endpoint, on the first Tab
/// after `/model `), the agents and saved sessions (read at each Tab).
#[derive(Default)]
pub(super) struct ReplNames {
    /// None until the session is built (a `--resume` pick comes first).
    settings: Mutex<Option<Settings>>,
    models: Mutex<Option<Vec<String>>>,
    /// The active skills' names (set at each build).
    skills: Mutex<Vec<String>>,
    pub(super) picking: AtomicBool,
}

impl ReplNames {
    pub(super) fn set_skills(&self, setup: &Setup) {
        let names = setup.dispatcher.skills().iter().map(|s| s.name.clone());
        *lock(&self.skills) = names.collect();
    }

    pub(super) fn set_settings(&self, settings: &Settings) {
        let mut current = lock(&self.settings);
        let same = current
            .as_ref()
            .is_some_and(|c| c.base_url == settings.base_url && c.provider == settings.provider);
        if !same {
            *lock(&self.models) = None;
        }
        *current = Some(settings.clone());
    }
}

impl editor::NameSource for ReplNames {
    fn names(&self, which: editor::Names) -> Vec<String> {
        match which {
            editor::Names::Models => {
                let mut cache = lock(&self.models);
                let settings = lock(&self.settings);
                let Some(settings) = settings.as_ref() else {
                    return Vec::new();
                };
                cache
                    .get_or_insert_with(|| {
                        // No list (replay, an endpoint without /models): nothing to offer.
                        crate::model::models::list(settings, std::time::Duration::from_secs(3))
                            .unwrap_or_default()
                    })
                    .clone()
            }
            editor::Names::Agents => crate::agents::list()
                .agents
                .into_iter()
                .map(|a| a.name)
                .collect(),
            editor::Names::Skills => lock(&self.skills).clone(),
            editor::Names::Sessions => session_file::sessions_dir()
                .map(|d| session_file::list(&d).into_iter().map(|l| l.name).collect())
                .unwrap_or_default(),
        }
    }

    fn picking_session(&self) -> bool {
        self.picking.load(Ordering::Relaxed)
    }
}
