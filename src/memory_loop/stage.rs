//! The memory_loop stage as the pipeline sees it: its domain through the kinds it was handed
//! ([`super::kinds`]: options with their defaults for the key, checks when the pipeline is
//! planned), its inputs and outputs.

use std::collections::BTreeMap;

use arrow::array::RecordBatch;

use super::MemoryLoopStage;
use super::arms::arm_spec;
use super::kinds::LoopKind;
use super::prompts::Prompts;
use crate::error::{Error, Result};
use crate::pipeline::stage::{Inputs, Misplanned, Planned, Stage, StageContext};

impl MemoryLoopStage {
    /// The domain's entry and its options with their defaults (the options it takes at the top
    /// of the config folded in), checked: `at` is what an error points at.
    fn domain(&self) -> std::result::Result<(LoopKind, serde_json::Value), Misplanned> {
        let entry = (self.kinds.kind(self.domain.kind.as_deref()))
            .map_err(|e| Misplanned::new(self.domain.kind.as_deref().unwrap_or("kind"), e.0))?;
        let mut options = self.domain.options.clone();
        let defaults = (entry.options)(&serde_json::Map::new()).unwrap_or_default();
        for (key, value) in &self.top_level {
            if !entry.top_level_options.contains(&key.as_str()) {
                let owner = self.kinds.owner_of(key);
                let why = match owner {
                    Some(o) => format!(
                        "`{key}` is a {} option; the {} domain takes its options under `domain:`",
                        o.name, entry.name
                    ),
                    None => format!(
                        "unknown field `{key}`: not a memory_loop key, nor an option the {} domain takes here (its options go under `domain:`; `lucid domains` lists them)",
                        entry.name
                    ),
                };
                return Err(Misplanned::new(key, why));
            }
            // An option written both at the top and under `domain:` (away from its default) is ambiguous.
            if options.get(key).is_some_and(|under| Some(under) != defaults.get(key)) {
                return Err(Misplanned::new(
                    key,
                    format!("`{key}` is set both at the top of the config and under `domain:`: keep one"),
                ));
            }
            options.insert(key.to_string(), value.clone());
        }
        let full = (entry.options)(&options).map_err(|e| {
            let unknown = crate::pipeline::spec::unknown_field(&e.0);
            Misplanned::new(unknown.unwrap_or("domain"), format!("domain ({}): {}", entry.name, e.0))
        })?;
        Ok((entry, full))
    }

    /// [`Self::domain`] for a running stage.
    fn domain_config(&self, ctx: &StageContext) -> Result<(LoopKind, serde_json::Value)> {
        self.domain().map_err(|e| Error::stage(&ctx.stage_id, e.message))
    }
}

impl Stage for MemoryLoopStage {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn version(&self) -> u32 {
        // 2: SQL extraction keeps quoted identifiers whole; a verdict's first word decides.
        // 3: domains; episodes gain `channels`.
        // 4 (score-ranked policies only, so similarity loops keep their keys): `draws.draw_order`.
        if self.writes_draws() { 4 } else { 3 }
    }

    fn required_inputs(&self) -> &'static [&'static str] {
        &["tasks", "order"]
    }

    fn optional_inputs(&self) -> &'static [&'static str] {
        &["retrieval", "gold"]
    }

    fn reads_gold(&self) -> bool {
        self.read_gold
    }

    fn outputs(&self, _: &str) -> Vec<String> {
        let mut names = vec!["episodes".to_string(), "calls".into()];
        if self.writes_draws() {
            names.push("draws".into());
        }
        names
    }

    /// The config without its operational fields (they are never serialized), the top-level
    /// text-to-SQL options folded into `domain`.
    fn config_json(&self) -> serde_json::Value {
        let mut json = serde_json::to_value(self).expect("config serializes");
        if let Ok((entry, serde_json::Value::Object(mut full))) = self.domain() {
            json = with_prompts(json, self.prompts_dir(entry.prompts));
            let mut domain = serde_json::Map::new();
            domain.insert("kind".into(), entry.name.into());
            domain.append(&mut full);
            json["domain"] = domain.into();
        }
        // Only the knobs a policy reads enter the key (a temperature sweep under hybrid reuses).
        if !self.retrieval.is_similarity() {
            json["retrieval"] = self.retrieval.keyed();
        }
        for (name, arm) in &self.arms {
            if let Some(r) = arm.retrieval {
                json["arms"][name]["retrieval"] = r.keyed();
            }
        }
        json
    }

    fn fingerprint(&self, ctx: &StageContext) -> Result<BTreeMap<String, String>> {
        // A misconfigured domain or arm (or one naming channels its domain lacks) fails before
        // any file is read.
        let (entry, options) = self.domain_config(ctx)?;
        let arm = self.arm(ctx)?;
        self.policy(&arm).check(self.k).map_err(|e| Error::stage(&ctx.stage_id, e))?;
        if let Some(names) = arm.channels {
            crate::seam::check_channel_names(entry.name, entry.channels, &names, "the arm's channels")
                .map_err(|e| Error::stage(&ctx.stage_id, e))?;
        }
        let mut fp = Prompts::fingerprint(&ctx.resolve(self.prompts_dir(entry.prompts)))?;
        // The agent program's identity: the content of the files it names.
        for f in self.agent.iter().flat_map(|a| &a.files) {
            fp.insert(format!("agent/{f}"), crate::fingerprint::file_fingerprint(&ctx.resolve(f))?);
        }
        fp.extend((entry.fingerprint)(&options, ctx)?);
        fp.extend(crate::pipeline::models::model_fingerprint(&self.model, ctx)?);
        Ok(fp)
    }

    fn data(&self) -> Vec<crate::datasets::wheels::DataPackage> {
        self.domain().map(|(e, _)| e.packages.to_vec()).unwrap_or_default()
    }

    fn run(&self, ctx: &StageContext, inputs: &Inputs) -> Result<Vec<(String, RecordBatch)>> {
        let (entry, options) = self.domain_config(ctx)?;
        (entry.run_loop)(self, &options, ctx, inputs)
    }

    /// The domain and its options, every arm the stage runs and its channels, the prompts and
    /// the variables they use: all known before anything runs.
    fn check(&self, planned: &Planned<'_>) -> std::result::Result<(), Misplanned> {
        let (entry, _) = self.domain()?;
        for name in planned.arms {
            let Some(arm) = arm_spec(&self.arms, name) else {
                return Err(Misplanned::new(
                    name.as_str(),
                    format!(
                        "unknown arm '{name}': use no-memory, memento, lucid or oracle, or map it under `arms:` to a mode"
                    ),
                ));
            };
            if let Some(why) = self.gold_refusal(name, &arm) {
                return Err(Misplanned::new(name.as_str(), why));
            }
            if let Some(names) = &arm.channels {
                let what = format!("arm '{name}' channels");
                crate::seam::check_channel_names(entry.name, entry.channels, names, &what).map_err(|e| {
                    // Point at the first name that is not a channel.
                    let bad = names.iter().find(|n| !entry.channels.contains(&n.as_str()));
                    Misplanned::new(bad.cloned().unwrap_or_default(), e.0)
                })?;
            }
        }
        // A prompts folder that depends on the instance (`{seed}`, `{arm}`) is checked when it runs.
        let folder = self.prompts_dir(entry.prompts);
        if folder.contains('{') {
            return Ok(());
        }
        let dir = planned.resolve(folder);
        let prompts = Prompts::load(&dir).map_err(|e| Misplanned::new(folder, e.to_string()))?;
        if let Some(a) = &self.agent {
            if a.command.is_empty() {
                return Err(Misplanned::new("command", "agent.command is empty: name the program and its arguments"));
            }
            if let Some(f) = a.files.iter().find(|f| !planned.resolve(f).is_file()) {
                return Err(Misplanned::new(
                    f.as_str(),
                    format!("agent.files: {} is not a file", planned.resolve(f).display()),
                ));
            }
        }
        if !entry.planner_optional && !prompts.has_planner() && self.agent.is_none() {
            return Err(Misplanned::new(
                folder,
                format!(
                    "the {} domain's prompts need a planner template ({} has no planner.txt)",
                    entry.name,
                    dir.display()
                ),
            ));
        }
        let mut given: Vec<&str> = Prompts::COMMON.to_vec();
        given.push(entry.artifact);
        given.extend(entry.variables);
        if let Some((file, var)) = prompts.unknown_variables(&given).into_iter().next() {
            return Err(Misplanned::new(
                folder,
                format!(
                    "{}: the template uses `{var}`, which the {} domain does not give (variables: {})",
                    dir.join(file).display(),
                    entry.name,
                    given.join(", ")
                ),
            ));
        }
        Ok(())
    }
}

/// `json` with `prompts` (the folder the loop reads) back in its place, after `model`: the key of
/// a config that leaves the folder to its domain is the key of one that names it.
fn with_prompts(json: serde_json::Value, folder: &str) -> serde_json::Value {
    let serde_json::Value::Object(map) = json else { return json };
    let mut out = serde_json::Map::new();
    for (k, v) in map {
        let after_model = k == "model";
        out.insert(k, v);
        if after_model {
            out.insert("prompts".into(), folder.into());
        }
    }
    out.into()
}
