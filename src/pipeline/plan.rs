//! From a parsed pipeline to a validated plan: unique ids, every input produced by exactly one
//! stage, no cycle, gold readable only by stages allowed to read it, and the matrix expanded into
//! stage instances bound to the producer instances they read (matching on shared axes, all of
//! them on axes the consumer does not have).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::spec::{Axis, PipelineSpec, locate};
use super::stage::AxisValue;
use crate::error::{Error, Result};

/// One stage instance.
#[derive(Clone, Debug)]
pub struct Instance {
    /// Index of its stage in `spec.stages`.
    pub stage: usize,
    /// Matrix values by axis name.
    pub matrix: BTreeMap<String, AxisValue>,
    /// `seed-0_arm-lucid`, or `all`.
    pub label: String,
    /// Input table -> producer instance indices, in matrix order.
    pub inputs: BTreeMap<String, Vec<usize>>,
}

/// A validated, expanded pipeline.
#[derive(Debug)]
pub struct Plan {
    /// The spec.
    pub spec: PipelineSpec,
    /// Every instance, producers before consumers.
    pub instances: Vec<Instance>,
    /// Input tables of each stage (the YAML list, or the kind's required inputs).
    pub stage_inputs: Vec<Vec<String>>,
}

fn located(path: &Path, text: &str, stage: &str, needle: &str, msg: String) -> Error {
    match locate(text, stage, needle) {
        Some((l, c)) => Error::input(format!("{}:{l}:{c}", path.display()), msg),
        None => Error::input(path, msg),
    }
}

/// Validate `spec` (parsed from `text` at `path`) and expand it.
pub fn build(path: &Path, text: &str, spec: PipelineSpec) -> Result<Plan> {
    let err = |stage: &str, needle: &str, msg: String| located(path, text, stage, needle, msg);
    if spec.stages.is_empty() {
        return Err(Error::input(path, "no stages"));
    }
    let producer = producers(path, &spec, &err)?;
    let stage_inputs = stage_inputs(&spec, &producer, &err)?;
    let order = topological_order(&spec, &producer, &stage_inputs, &err)?;
    let instances = expand(&spec, &producer, &stage_inputs, &order);
    check_gold_taint(&spec, &instances, &err)?;
    Ok(Plan { spec, instances, stage_inputs })
}

/// Every stage's own check ([`super::stage::Stage::check`]) against the arms it runs and the
/// folder its paths resolve in: an error names the file, line and column of what it is about.
pub fn check_stages(path: &Path, text: &str, plan: &Plan, base_dir: &Path) -> Result<()> {
    for s in &plan.spec.stages {
        let arms = s.arms.as_deref().unwrap_or(&plan.spec.arms);
        let planned = super::stage::Planned { arms, base_dir };
        if let Err(e) = s.stage.check(&planned) {
            return Err(located(path, text, &s.id, &e.at, format!("stage '{}': {}", s.id, e.message)));
        }
    }
    Ok(())
}

/// Which stages write each table, after checking unique ids, `arms:`, matrix axes and distinct seeds.
fn producers(
    path: &Path,
    spec: &PipelineSpec,
    err: &dyn Fn(&str, &str, String) -> Error,
) -> Result<HashMap<String, Vec<usize>>> {
    let mut producer: HashMap<String, Vec<usize>> = HashMap::new();
    let mut seen_ids: HashMap<&str, usize> = HashMap::new();
    for (i, s) in spec.stages.iter().enumerate() {
        if seen_ids.insert(&s.id, i).is_some() {
            return Err(err(&s.id, &s.id, format!("duplicate stage id '{}'", s.id)));
        }
        if let Some(arms) = &s.arms {
            if !s.matrix.contains(&Axis::Arm) {
                return Err(err(&s.id, "arms", format!("stage '{}' lists arms but does not expand over arm", s.id)));
            }
            if let Some(a) = arms.iter().find(|a| !spec.arms.contains(a)) {
                return Err(err(
                    &s.id,
                    "arms",
                    format!("stage '{}' runs arm '{a}', which the pipeline's arms do not list", s.id),
                ));
            }
        }
        for out in s.stage.outputs(&s.id) {
            let writers = producer.entry(out.clone()).or_default();
            // Two stages may write one table only for disjoint arms.
            if let Some(&other) = writers.iter().find(|&&o| !disjoint_arms(spec, &spec.stages[o], s)) {
                return Err(err(
                    &s.id,
                    "kind",
                    format!(
                        "table '{out}' is written by both '{}' and '{}' (allowed only for disjoint `arms:`)",
                        spec.stages[other].id, s.id
                    ),
                ));
            }
            writers.push(i);
        }
        for axis in &s.matrix {
            let empty = match axis {
                Axis::Seed => spec.seeds.is_empty(),
                Axis::Arm => spec.arms.is_empty(),
            };
            if empty {
                return Err(err(
                    &s.id,
                    "matrix",
                    format!("stage '{}' expands over {}s but none are listed", s.id, axis.as_str()),
                ));
            }
        }
    }
    let mut dup = spec.seeds.clone();
    dup.sort();
    dup.dedup();
    if dup.len() != spec.seeds.len() {
        return Err(Error::input(path, "seeds must be distinct"));
    }
    Ok(producer)
}

/// The input tables of each stage, checked against its kind and against what some stage produces.
fn stage_inputs(
    spec: &PipelineSpec,
    producer: &HashMap<String, Vec<usize>>,
    err: &dyn Fn(&str, &str, String) -> Error,
) -> Result<Vec<Vec<String>>> {
    let mut stage_inputs = Vec::new();
    for s in &spec.stages {
        let required = s.stage.required_inputs();
        let inputs: Vec<String> =
            if s.inputs.is_empty() { required.iter().map(|r| r.to_string()).collect() } else { s.inputs.clone() };
        for r in required {
            if !inputs.iter().any(|i| i == r) {
                return Err(err(
                    &s.id,
                    "inputs",
                    format!("stage '{}' ({}) needs input table '{r}'", s.id, s.stage.kind()),
                ));
            }
        }
        for i in &inputs {
            if i == "gold" && !s.stage.reads_gold() {
                return Err(err(
                    &s.id,
                    "gold",
                    format!(
                        "stage '{}' ({}) may not read 'gold': agent stages never see reference answers",
                        s.id,
                        s.stage.kind()
                    ),
                ));
            }
            let allowed = s.stage.accepts_any_inputs()
                || required.contains(&i.as_str())
                || s.stage.optional_inputs().contains(&i.as_str());
            if !allowed {
                return Err(err(
                    &s.id,
                    i,
                    format!("stage '{}' ({}) does not read a table '{i}'", s.id, s.stage.kind()),
                ));
            }
            if !producer.contains_key(i) {
                let known: Vec<&str> = producer.keys().map(String::as_str).collect();
                return Err(err(
                    &s.id,
                    i,
                    format!(
                        "input table '{i}' of stage '{}' is produced by no stage (tables: {})",
                        s.id,
                        known.join(", ")
                    ),
                ));
            }
        }
        stage_inputs.push(inputs);
    }
    Ok(stage_inputs)
}

/// Stage indices in topological order (Kahn); what remains is a cycle, an error.
fn topological_order(
    spec: &PipelineSpec,
    producer: &HashMap<String, Vec<usize>>,
    stage_inputs: &[Vec<String>],
    err: &dyn Fn(&str, &str, String) -> Error,
) -> Result<Vec<usize>> {
    let n = spec.stages.len();
    let deps: Vec<Vec<usize>> =
        stage_inputs.iter().map(|ins| ins.iter().flat_map(|t| producer[t].iter().copied()).collect()).collect();
    let mut indegree: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut order = Vec::with_capacity(n);
    let mut ready: Vec<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
    while let Some(i) = ready.pop() {
        order.push(i);
        for (j, d) in deps.iter().enumerate() {
            for &p in d {
                if p == i {
                    indegree[j] -= 1;
                    if indegree[j] == 0 {
                        ready.push(j);
                    }
                }
            }
        }
    }
    if order.len() < n {
        let cyc: Vec<&str> = (0..n).filter(|i| !order.contains(i)).map(|i| spec.stages[i].id.as_str()).collect();
        return Err(err(cyc[0], "inputs", format!("stages form a cycle: {}", cyc.join(" -> "))));
    }
    Ok(order)
}

/// The matrix expanded into instances in `order`, each bound to the producer instances it reads.
fn expand(
    spec: &PipelineSpec,
    producer: &HashMap<String, Vec<usize>>,
    stage_inputs: &[Vec<String>],
    order: &[usize],
) -> Vec<Instance> {
    let mut instances: Vec<Instance> = Vec::new();
    let mut of_stage: Vec<Vec<usize>> = vec![Vec::new(); spec.stages.len()];
    for &si in order {
        let s = &spec.stages[si];
        let mut combos: Vec<BTreeMap<String, AxisValue>> = vec![BTreeMap::new()];
        let mut axes = s.matrix.clone();
        axes.sort();
        axes.dedup();
        for axis in axes {
            let values: Vec<AxisValue> = match axis {
                Axis::Seed => spec.seeds.iter().map(|&x| AxisValue::Seed(x)).collect(),
                Axis::Arm => spec
                    .arms
                    .iter()
                    .filter(|a| stage_arms(s).is_none_or(|sub| sub.contains(a)))
                    .map(|a| AxisValue::Arm(a.clone()))
                    .collect(),
            };
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.insert(axis.as_str().to_string(), v.clone());
                        c
                    })
                })
                .collect();
        }
        for matrix in combos {
            let mut inputs = BTreeMap::new();
            for t in &stage_inputs[si] {
                let bound: Vec<usize> = producer[t]
                    .iter()
                    .flat_map(|&p| of_stage[p].iter().copied())
                    .filter(|&pi| instances[pi].matrix.iter().all(|(k, v)| matrix.get(k).is_none_or(|mv| mv == v)))
                    .collect();
                inputs.insert(t.clone(), bound);
            }
            let label = if matrix.is_empty() {
                "all".to_string()
            } else {
                [Axis::Seed, Axis::Arm]
                    .iter()
                    .filter_map(|a| matrix.get(a.as_str()).map(|v| format!("{}-{v}", a.as_str())))
                    .collect::<Vec<_>>()
                    .join("_")
            };
            of_stage[si].push(instances.len());
            instances.push(Instance { stage: si, matrix, label, inputs });
        }
    }
    instances
}

/// Gold taint, instance by instance (producers come first): an instance that reads `gold`, or
/// any table an instance computed from gold, is gold-derived, whatever its tables are named. A
/// stage that may not read gold (and is not post-hoc analysis) refuses gold-derived inputs.
fn check_gold_taint(
    spec: &PipelineSpec,
    instances: &[Instance],
    err: &dyn Fn(&str, &str, String) -> Error,
) -> Result<()> {
    let mut tainted = vec![false; instances.len()];
    for (i, inst) in instances.iter().enumerate() {
        let s = &spec.stages[inst.stage];
        let source = inst.inputs.iter().find_map(|(t, bound)| bound.iter().find(|&&b| tainted[b]).map(|&b| (t, b)));
        if let Some((table, b)) = source.filter(|_| !s.stage.reads_gold() && !s.stage.post_hoc()) {
            let by = &instances[b];
            let producer = &spec.stages[by.stage];
            return Err(err(
                &s.id,
                table,
                format!(
                    "stage '{}' ({}) may not read '{table}': instance {} of stage '{}' ({}) computed it from gold, \
                     and agent stages never see reference answers",
                    s.id,
                    s.stage.kind(),
                    by.label,
                    producer.id,
                    producer.stage.kind()
                ),
            ));
        }
        tainted[i] = source.is_some() || inst.inputs.contains_key("gold");
    }
    Ok(())
}

fn stage_arms(s: &super::spec::StageSpec) -> Option<&Vec<String>> {
    s.arms.as_ref().filter(|_| s.matrix.contains(&Axis::Arm))
}

/// Whether two stages expand over arm with no arm in common.
fn disjoint_arms(spec: &PipelineSpec, a: &super::spec::StageSpec, b: &super::spec::StageSpec) -> bool {
    if !a.matrix.contains(&Axis::Arm) || !b.matrix.contains(&Axis::Arm) {
        return false;
    }
    let arms = |s: &super::spec::StageSpec| stage_arms(s).cloned().unwrap_or_else(|| spec.arms.clone());
    let (x, y) = (arms(a), arms(b));
    !x.iter().any(|v| y.contains(v))
}
