//! Each episode's own memory in the episodes that came after it: how many later episodes of its
//! run, seed and arm were shown it (`shown_later`), and how many of those went right
//! (`later_right`: U = 1 in `evaluation`). What makes a wrong memory costly is how often it is
//! shown, so the table sorts by these.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// Add `shown_later` and `later_right` to every table row. Rows hold `run`, `seed`, `arm`,
/// `step`, `u` and `retrieved` (the memories shown, each `[step, label shown, similarity]`).
/// `later_right` is null where no episode of the row's (run, seed, arm) was evaluated.
pub fn count(rows: &mut [Value]) {
    let cell = |r: &Value| {
        format!("{}|{}|{}", r["run"].as_str().unwrap_or_default(), r["seed"], r["arm"].as_str().unwrap_or_default())
    };
    let at: HashMap<String, usize> = rows.iter().enumerate().map(|(i, r)| (super::row_key(r), i)).collect();
    let mut shown = vec![0u64; rows.len()];
    let mut right = vec![0u64; rows.len()];
    let mut evaluated = HashSet::new();
    for r in rows.iter() {
        if !r["u"].is_null() {
            evaluated.insert(cell(r));
        }
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
                if r["u"].as_u64() == Some(1) {
                    right[i] += 1;
                }
            }
        }
    }
    for (i, r) in rows.iter_mut().enumerate() {
        let later_right = if evaluated.contains(&cell(&*r)) { Value::from(right[i]) } else { Value::Null };
        r["shown_later"] = Value::from(shown[i]);
        r["later_right"] = later_right;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    fn row(arm: &str, step: u64, u: Value, shown: &[u64]) -> Value {
        let retrieved: Vec<Value> = shown.iter().map(|s| json!([s, 1, 0.5])).collect();
        json!({"run": "a", "seed": 0, "arm": arm, "step": step, "u": u, "retrieved": retrieved})
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
