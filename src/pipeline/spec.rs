//! The pipeline YAML: parsed strictly (unknown keys, wrong types and missing fields are errors
//! with file, line and column), each stage's `config:` deserialized straight into its kind's
//! typed config so its errors carry positions too. `--set` overrides apply to the YAML tree.

use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};

use super::registry::Registry;
use super::stage::Stage;
use crate::error::{Error, Result};

/// A whole pipeline file (`S`: how a stage entry is read; parsing reads [`StageEntry`]s of a
/// [`Registry`] and keeps their [`StageSpec`]s).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, bound(deserialize = "S: Deserialize<'de>"))]
pub struct PipelineSpec<S = StageSpec> {
    /// Run name: results go to `<runs_dir>/<name>/`.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: String,
    /// Seeds of the matrix (stages with `matrix: [seed]` expand over them).
    #[serde(default = "default_seeds")]
    pub seeds: Vec<u64>,
    /// Arms of the matrix (stages with `matrix: [arm]` expand over them).
    #[serde(default)]
    pub arms: Vec<String>,
    /// Where runs and the stage store live.
    #[serde(default = "default_runs_dir")]
    pub runs_dir: PathBuf,
    /// Stage instances that may run at once (default: cores).
    #[serde(default)]
    pub max_parallel: Option<usize>,
    /// Write the study's report (`lucid report`) into `<run>/report/` when the run succeeds.
    #[serde(default)]
    pub report: bool,
    /// The stages; order does not matter (the DAG comes from inputs and outputs).
    pub stages: Vec<S>,
}

impl<S> PipelineSpec<S> {
    fn map_stages<T>(self, f: impl FnMut(S) -> T) -> PipelineSpec<T> {
        let PipelineSpec { name, description, seeds, arms, runs_dir, max_parallel, report, stages } = self;
        PipelineSpec {
            name,
            description,
            seeds,
            arms,
            runs_dir,
            max_parallel,
            report,
            stages: stages.into_iter().map(f).collect(),
        }
    }
}

fn default_seeds() -> Vec<u64> {
    vec![0]
}

fn default_runs_dir() -> PathBuf {
    PathBuf::from("runs")
}

/// A matrix axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Axis {
    /// Expand over `seeds`.
    Seed,
    /// Expand over `arms`.
    Arm,
}

impl Axis {
    /// The axis name: the name of the matrix column it adds to every table.
    pub fn as_str(self) -> &'static str {
        match self {
            Axis::Seed => crate::columns::SEED.name,
            Axis::Arm => crate::columns::ARM.name,
        }
    }
}

/// One stage of the pipeline.
#[derive(Debug)]
pub struct StageSpec {
    /// Unique id.
    pub id: String,
    /// Tables it reads (each produced by exactly one stage).
    pub inputs: Vec<String>,
    /// Axes it expands over.
    pub matrix: Vec<Axis>,
    /// The arms this stage runs (a subset of the pipeline's; default all). Two stages may write
    /// the same table for disjoint arms, e.g. an oracle arm that alone may read `gold`.
    pub arms: Option<Vec<String>>,
    /// The typed stage (kind + config).
    pub stage: Arc<dyn Stage>,
}

const STAGE_FIELDS: &[&str] = &["id", "kind", "description", "inputs", "matrix", "arms", "config"];

/// A stage entry read with the kinds of `R`.
pub struct StageEntry<R>(StageSpec, PhantomData<R>);

impl<'de, R: Registry> Deserialize<'de> for StageEntry<R> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_map(StageVisitor::<R>(PhantomData)).map(|s| StageEntry(s, PhantomData))
    }
}

struct StageVisitor<R>(PhantomData<R>);

impl<'de, R: Registry> Visitor<'de> for StageVisitor<R> {
    type Value = StageSpec;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a stage: {id, kind, inputs, matrix, arms, config}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<StageSpec, A::Error> {
        let (mut id, mut kind, mut inputs, mut matrix, mut arms, mut stage) =
            (None, None::<String>, None, None, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "id" => id = Some(map.next_value::<String>()?),
                "kind" => {
                    let k: String = map.next_value()?;
                    if !R::KINDS.contains(&k.as_str()) {
                        return Err(de::Error::custom(format!(
                            "unknown stage kind `{k}`, expected one of: {}",
                            R::KINDS.join(", ")
                        )));
                    }
                    kind = Some(k);
                }
                "description" => {
                    map.next_value::<IgnoredAny>()?;
                }
                "inputs" => inputs = Some(map.next_value::<Vec<String>>()?),
                "matrix" => matrix = Some(map.next_value::<Vec<Axis>>()?),
                "arms" => arms = Some(map.next_value::<Vec<String>>()?),
                "config" => {
                    let Some(k) = &kind else {
                        return Err(de::Error::custom("`kind` must come before `config` in a stage"));
                    };
                    stage = Some(map.next_value_seed(ConfigSeed::<R>(k, PhantomData))?);
                }
                other => return Err(de::Error::unknown_field(other, STAGE_FIELDS)),
            }
        }
        let id = id.ok_or_else(|| de::Error::missing_field("id"))?;
        let kind = kind.ok_or_else(|| de::Error::missing_field("kind"))?;
        let stage = match stage {
            Some(s) => s,
            None => R::default_config(&kind).map_err(de::Error::custom)?,
        };
        Ok(StageSpec { id, inputs: inputs.unwrap_or_default(), matrix: matrix.unwrap_or_default(), arms, stage })
    }
}

struct ConfigSeed<'a, R>(&'a str, PhantomData<R>);

impl<'de, R: Registry> DeserializeSeed<'de> for ConfigSeed<'_, R> {
    type Value = Arc<dyn Stage>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        R::deserialize_config(self.0, d)
    }
}

/// Parse `text` (from `path`) with `overrides` (`key.path=yaml-value`) applied, reading stage
/// kinds with `R`.
pub fn parse<R: Registry>(path: &Path, text: &str, overrides: &[String]) -> Result<PipelineSpec> {
    parse_entries::<R>(path, text, overrides).map(|spec| spec.map_stages(|e| e.0))
}

fn parse_entries<R: Registry>(path: &Path, text: &str, overrides: &[String]) -> Result<PipelineSpec<StageEntry<R>>> {
    let spec: PipelineSpec<StageEntry<R>> = serde_norway::from_str(text).map_err(|e| yaml_error(path, text, &e))?;
    if overrides.is_empty() {
        return Ok(spec);
    }
    let mut tree: serde_norway::Value = serde_norway::from_str(text).map_err(|e| yaml_error(path, text, &e))?;
    for o in overrides {
        super::overrides::apply(&mut tree, o).map_err(|m| Error::usage(format!("--set {o}: {m}")))?;
    }
    let rendered = serde_norway::to_string(&tree).map_err(|e| Error::usage_from("--set", e))?;
    serde_norway::from_str(&rendered).map_err(|e| {
        Error::usage(format!("{}: after --set {}: {}", path.display(), overrides.join(" --set "), strip_location(&e)))
    })
}

fn strip_location(e: &serde_norway::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The key a serde error refuses as unknown (`unknown field `x`, expected ...` -> `x`).
pub fn unknown_field(message: &str) -> Option<&str> {
    message.split("unknown field `").nth(1).and_then(|r| r.split('`').next())
}

/// `file:line:column: message` for a YAML error. An unknown key is pointed at where it is written.
fn yaml_error(path: &Path, text: &str, e: &serde_norway::Error) -> Error {
    let msg = strip_location(e);
    let Some(loc) = e.location() else { return Error::input(path, e.to_string()) };
    let (mut line, mut col) = (loc.line(), loc.column());
    if let Some(field) = unknown_field(&msg) {
        let key = format!("{field}:");
        if let Some((n, l)) = text.lines().enumerate().skip(line.saturating_sub(1)).find(|(_, l)| {
            let t = l.trim_start().trim_start_matches("- ");
            t.starts_with(&key)
        }) {
            (line, col) = (n + 1, l.find(&key).unwrap_or(0) + 1);
        }
    }
    let shape =
        if msg.contains(".config") { String::new() } else { format!("\n  expected: {}", super::registry::SHAPE) };
    Error::input(format!("{}:{line}:{col}", path.display()), format!("{msg}{shape}"))
}

/// Where `needle` first appears on a line at or after the line that declares stage `id` —
/// for errors found after parsing (cycles, dangling inputs). 1-based (line, column).
pub fn locate(text: &str, stage_id: &str, needle: &str) -> Option<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| {
        let t = l.trim_start().trim_start_matches("- ").trim_start();
        t.strip_prefix("id:").is_some_and(|rest| rest.trim().trim_matches(['"', '\'']) == stage_id)
    })?;
    for (n, l) in lines.iter().enumerate().skip(start) {
        if let Some(c) = l.find(needle) {
            return Some((n + 1, c + 1));
        }
    }
    Some((start + 1, 1))
}
