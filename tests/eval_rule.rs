//! BIRD's EX rule, case by case. Expected scores come from the rule as BIRD states it
//! (`set(pred_rows) == set(gold_rows)` under Python equality; any error or timeout is 0), not
//! from lucid's output.

use std::time::Duration;

use lucid::eval::{EvalOptions, ExVerdict, Pair, evaluate};

use crate::support::{DbRoot, PEOPLE};

/// (case, gold, prediction, expected score)
type Case = (&'static str, &'static str, &'static str, u8);

const CASES: &[Case] = &[
    ("identical", "SELECT name FROM t", "SELECT name FROM t", 1),
    ("order ignored", "SELECT name FROM t", "SELECT name FROM t ORDER BY name DESC", 1),
    ("distinct ignored", "SELECT grp FROM t", "SELECT DISTINCT grp FROM t", 1),
    ("union all duplicates ignored", "SELECT name FROM t", "SELECT name FROM t UNION ALL SELECT name FROM t", 1),
    ("int equals integral float", "SELECT COUNT(*) FROM t", "SELECT 4.0", 1),
    ("int differs from non-integral float", "SELECT COUNT(*) FROM t", "SELECT 4.5", 0),
    ("int differs from text", "SELECT COUNT(*) FROM t", "SELECT '4'", 0),
    ("float equals float", "SELECT score FROM t WHERE id = 2", "SELECT 2.5", 1),
    ("negative zero equals zero", "SELECT 0", "SELECT -0.0", 1),
    ("text differs from blob", "SELECT name FROM t WHERE id = 1", "SELECT x'616e6e'", 0),
    ("NULL equals NULL", "SELECT score FROM t WHERE id = 4", "SELECT NULL", 1),
    ("column order matters", "SELECT id, name FROM t", "SELECT name, id FROM t", 0),
    ("extra column", "SELECT name FROM t", "SELECT name, id FROM t", 0),
    ("LIMIT drops rows", "SELECT name FROM t ORDER BY id", "SELECT name FROM t ORDER BY id LIMIT 3", 0),
    ("wrong question", "SELECT name FROM t", "SELECT grp FROM t", 0),
    ("syntax error", "SELECT name FROM t", "SELEC name FROM t", 0),
    ("missing table", "SELECT name FROM t", "SELECT name FROM nope", 0),
    ("empty filter vs rows", "SELECT name FROM t", "SELECT name FROM t WHERE grp = 'zz'", 0),
    ("empty equals empty", "SELECT name FROM t WHERE id > 10", "SELECT id, grp FROM t WHERE grp = 'zz'", 1),
    ("trailing semicolon", "SELECT name FROM t", "SELECT name FROM t;", 1),
    ("trailing comment", "SELECT name FROM t", "SELECT name FROM t; -- done", 1),
    ("two statements", "SELECT name FROM t", "SELECT name FROM t; SELECT 1", 0),
    ("double semicolon", "SELECT name FROM t", "SELECT name FROM t;;", 0),
    ("write refused", "SELECT name FROM t", "DELETE FROM t", 0),
    (
        "runaway recursive CTE",
        "SELECT name FROM t",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
        0,
    ),
    ("gold error scores 0", "SELECT nope FROM t", "SELECT nope FROM t", 0),
    ("case matters in text", "SELECT name FROM t WHERE id = 1", "SELECT 'ANN'", 0),
];

#[test]
fn ex_rule_cases() {
    let root = DbRoot::new();
    let db = root.add("people", PEOPLE);
    let verdicts = |cases: &[&Case], timeout: Duration| -> Vec<ExVerdict> {
        let pairs: Vec<Pair<'_>> = cases.iter().map(|(_, g, p, _)| Pair { pred: Some(p), gold: g, db: &db }).collect();
        let opts = EvalOptions { timeout, jobs: 2, ..EvalOptions::default() };
        evaluate(&pairs, &opts).unwrap().0.into_iter().map(|r| r.verdict).collect()
    };
    // The runaway query can only end by its deadline, so a short one decides it whatever the
    // machine's load; every other case runs under BIRD's 30 s, which no load comes near.
    let (runaway, rest): (Vec<&Case>, Vec<&Case>) = CASES.iter().partition(|c| c.0 == "runaway recursive CTE");
    assert_eq!(verdicts(&runaway, Duration::from_millis(100)), [ExVerdict::PredTimeout]);
    let mut wrong = Vec::new();
    for ((name, _, _, want), got) in rest.iter().zip(verdicts(&rest, EvalOptions::default().timeout)) {
        if got.res() != *want {
            wrong.push(format!("{name}: expected {want}, got {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn not_a_string_scores_zero_and_pair_timeout_counts_both_queries() {
    let root = DbRoot::new();
    let db = root.add("people", PEOPLE);
    let pairs = [Pair { pred: None, gold: "SELECT 1", db: &db }];
    let (r, _) = evaluate(&pairs, &EvalOptions::default()).unwrap();
    assert_eq!(r[0].verdict, ExVerdict::PredNotString);

    // The pair's timeout is checked on the sum of the two run times: each alone fits, together
    // they do not. The times are set, not measured, so the machine's load cannot change the case.
    let (r, _) =
        evaluate(&[Pair { pred: Some("SELECT COUNT(*) FROM t"), gold: "SELECT 4", db: &db }], &EvalOptions::default())
            .unwrap();
    assert_eq!(r[0].verdict, ExVerdict::Match);
    let (mut pred, mut gold) = (r[0].pred.clone().unwrap(), r[0].gold.clone());
    (pred.elapsed, gold.elapsed) = (Duration::from_millis(600), Duration::from_millis(500));
    let ms = Duration::from_millis;
    assert_eq!(lucid::eval::engine::verdict(Some(&pred), &gold, ms(1000)), ExVerdict::PairTimeout);
    assert_eq!(lucid::eval::engine::verdict(Some(&pred), &gold, ms(1100)), ExVerdict::Match);
}

#[test]
fn gold_cache_serves_second_prediction_set_with_identical_scores() {
    let root = DbRoot::new();
    let db = root.add("people", PEOPLE);
    let cache = tempfile::tempdir().unwrap();
    let opts = EvalOptions { cache: Some(cache.path().join("gold.sqlite")), ..EvalOptions::default() };
    let golds = ["SELECT name FROM t", "SELECT COUNT(*) FROM t", "SELECT nope FROM t"];
    let set_a = ["SELECT name FROM t", "SELECT 4", "SELECT 1"];
    let set_b = ["SELECT grp FROM t", "SELECT 4.0", "SELECT nope FROM t"];
    let pairs = |preds: &[&'static str; 3]| -> Vec<(&'static str, &'static str)> {
        preds.iter().copied().zip(golds.iter().copied()).collect()
    };
    let run = |ps: Vec<(&str, &str)>| {
        let pairs: Vec<Pair<'_>> = ps.iter().map(|(p, g)| Pair { pred: Some(p), gold: g, db: &db }).collect();
        evaluate(&pairs, &opts).unwrap()
    };
    let (a, sa) = run(pairs(&set_a));
    assert_eq!(sa.gold_cached, 0);
    let (b, sb) = run(pairs(&set_b));
    assert_eq!(sb.gold_cached, 3, "every gold result comes from the cache");
    // The third prediction is the gold text itself: one job, already cached.
    assert_eq!(sb.executed, 2, "only the two new prediction texts run");
    let scores = |r: &[lucid::eval::PairResult]| r.iter().map(|x| x.verdict.res()).collect::<Vec<_>>();
    assert_eq!(scores(&a), vec![1, 1, 0]);
    assert_eq!(scores(&b), vec![0, 1, 0]);
    // A fresh, uncached run of set B agrees.
    let (b2, _) = evaluate(
        &pairs(&set_b).iter().map(|(p, g)| Pair { pred: Some(p), gold: g, db: &db }).collect::<Vec<_>>(),
        &EvalOptions::default(),
    )
    .unwrap();
    assert_eq!(scores(&b), scores(&b2));
}
