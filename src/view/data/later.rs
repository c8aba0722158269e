//! Each episode's own memory in the episodes that came after it: how many later episodes of its
//! run, seed and arm were shown it (`shown_later`), how many of those went right
//! (`later_right`: U = 1 in `evaluation`) and wrong (`later_wrong`: U = 0), and of the wrong
//! ones how many the no-memory arm ([`NO_MEMORY`]) got right on the same task in the same run
//! and seed (`harm`: the memory's counterfactual harm, wrong with it where the arm without
//! memories was right). Exposure is not harm: a memory shown often to tasks nobody gets right
//! did less harm than one shown to a few the no-memory arm solved. The table sorts by these;
//! `pipelines/reports/harm.sql` ([`HARM_SQL`]) computes the same from the tables.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// The arm that is shown no memories: the counterfactual of every memory.
pub const NO_MEMORY: &str = "no-memory";

/// Harm per memory from the tables, inflated memories (stored as trusted, U = 0) first by harm:
/// the report a user reruns with `lucid query RUN pipelines/reports/harm.sql`.
pub const HARM_SQL: &str = include_str!("../../../pipelines/reports/harm.sql");

/// Add `shown_later`, `later_right`, `later_wrong` and `harm` to every table row. Rows hold
/// `run`, `seed`, `arm`, `step`, `question_id`, `u` and `retrieved` (the memories shown, each
/// `[step, label shown, similarity]`). `later_right` and `later_wrong` are null where no episode
/// of the row's (run, seed, arm) was evaluated, `harm` also where the run's seed has no evaluated
/// [`NO_MEMORY`] episode.
pub fn count(rows: &mut [Value]) {
    let cell = |r: &Value| {
        format!("{}|{}|{}", r["run"].as_str().unwrap_or_default(), r["seed"], r["arm"].as_str().unwrap_or_default())
    };
    let at: HashMap<String, usize> = rows.iter().enumerate().map(|(i, r)| (super::row_key(r), i)).collect();
    let task = |r: &Value| {
        format!(
            "{}|{}|{}",
            r["run"].as_str().unwrap_or_default(),
            r["seed"],
            r["question_id"].as_str().unwrap_or_default()
        )
    };
    // The no-memory arm's U on each task of a run and seed (right if any of its episodes of the
    // task was), and the (run, seed) cells it was evaluated in.
    let mut counterfactual: HashMap<String, bool> = HashMap::new();
    let mut compared = HashSet::new();
    for r in rows.iter().filter(|r| r["arm"] == NO_MEMORY) {
        if let Some(u) = r["u"].as_u64() {
            *counterfactual.entry(task(r)).or_default() |= u == 1;
            compared.insert(format!("{}|{}", r["run"].as_str().unwrap_or_default(), r["seed"]));
        }
    }
    let mut shown = vec![0u64; rows.len()];
    let mut right = vec![0u64; rows.len()];
    let mut wrong = vec![0u64; rows.len()];
    let mut harm = vec![0u64; rows.len()];
    let mut evaluated = HashSet::new();
    for r in rows.iter() {
        if !r["u"].is_null() {
            evaluated.insert(cell(r));
        }
        let without = counterfactual.get(&task(r)).copied().unwrap_or(false);
        let (run, seed, arm) = (
            r["run"].as_str().unwrap_or_default(),
            r["seed"].as_u64().unwrap_or_default(),
            r["arm"].as_str().unwrap_or_default(),
        );
        let step = r["step"].as_u64().unwrap_or_default();
        for m in r["retrieved"].as_array().into_iter().flatten() {
            let Some(memory) = m[0].as_u64().filter(|&s| s < step) else { continue };
            if let Some(&i) = at.get(&super::key(run, seed, arm, memory)) {
                shown[i] += 1;
                match r["u"].as_u64() {
                    Some(1) => right[i] += 1,
                    Some(0) => {
                        wrong[i] += 1;
                        harm[i] += u64::from(without);
                    }
                    _ => {}
                }
            }
        }
    }
    for (i, r) in rows.iter_mut().enumerate() {
        let known = evaluated.contains(&cell(&*r));
        let against = known && compared.contains(&format!("{}|{}", r["run"].as_str().unwrap_or_default(), r["seed"]));
        let or_null = |known: bool, n: u64| if known { Value::from(n) } else { Value::Null };
        r["shown_later"] = Value::from(shown[i]);
        r["later_right"] = or_null(known, right[i]);
        r["later_wrong"] = or_null(known, wrong[i]);
        r["harm"] = or_null(against, harm[i]);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    fn row(arm: &str, step: u64, u: Value, shown: &[u64]) -> Value {
        let retrieved: Vec<Value> = shown.iter().map(|s| json!([s, 1, 0.5])).collect();
        let question = format!("q{step}");
        json!({"run": "a", "seed": 0, "arm": arm, "step": step, "question_id": question, "u": u, "retrieved": retrieved})
    }

    #[test]
    fn harm_counts_the_wrong_later_episodes_whose_task_the_no_memory_arm_got_right() {
        let mut rows = vec![
            row("m", 0, json!(0), &[]),
            row("m", 1, json!(0), &[0]),
            row("m", 2, json!(0), &[0, 1]),
            row("m", 3, json!(1), &[0]),
            row("no-memory", 1, json!(1), &[]),
            row("no-memory", 2, json!(0), &[]),
            row("no-memory", 3, json!(1), &[]),
        ];
        super::count(&mut rows);
        let got: Vec<(Value, Value, Value)> =
            rows[..3].iter().map(|r| (r["shown_later"].clone(), r["later_wrong"].clone(), r["harm"].clone())).collect();
        // Memory 0: shown to 1, 2 (wrong) and 3 (right); no-memory was right on task 1 only.
        assert_eq!(
            got,
            vec![(json!(3), json!(2), json!(1)), (json!(1), json!(1), json!(0)), (json!(0), json!(0), json!(0))]
        );
    }

    #[test]
    fn a_memory_counts_the_later_episodes_of_its_cell_shown_it_and_those_that_went_right() {
        let mut rows = vec![
            row("m", 0, json!(0), &[]),
            row("m", 1, json!(1), &[0]),
            row("m", 2, json!(0), &[0, 1]),
            row("m", 3, json!(1), &[0, 1, 2]),
            // Another arm: its step 0 is another memory.
            row("x", 0, Value::Null, &[]),
            row("x", 1, Value::Null, &[0]),
        ];
        super::count(&mut rows);
        let got: Vec<(Value, Value)> =
            rows.iter().map(|r| (r["shown_later"].clone(), r["later_right"].clone())).collect();
        assert_eq!(
            got,
            vec![
                (json!(3), json!(2)),
                (json!(2), json!(1)),
                (json!(1), json!(1)),
                (json!(0), json!(0)),
                (json!(1), Value::Null),
                (json!(0), Value::Null),
            ]
        );
    }
}
