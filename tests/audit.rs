//! `lucid audit` on synthetic banks with known properties: a decorrelated truthful verifier
//! passes EIA and its demotion pays; a verifier that echoes the grader and a noise verifier fail
//! for the reasons the table gives; label-blind calibration pays exactly nothing; the oracle is
//! the ceiling. Bad banks get errors naming the file and the column.

use std::fmt::Write;

use crate::common::{lucid, stderr, stdout};

/// A bank of `n` memories: U ~ Bernoulli(0.6); a lenient grader (r = 1 for 80 % of the wrong,
/// 95 % of the right); verifiers `truthful` (U flipped 10 % of the time, independently of r),
/// `echo` (= r) and `noise` (independent of everything).
fn bank_csv(n: usize) -> String {
    let mut rng = lucid::rng::SplitMix64(7);
    let mut unif = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut s = String::from("id,seed,r,u,v_truthful,v_echo,v_noise\n");
    for i in 0..n {
        let u = u8::from(unif() < 0.6);
        let r = u8::from(unif() < if u == 1 { 0.95 } else { 0.80 });
        let truthful = if unif() < 0.1 { 1 - u } else { u };
        let noise = u8::from(unif() < 0.5);
        let _ = writeln!(s, "{i},{},{r},{u},{truthful},{r},{noise}", i % 3);
    }
    s
}

#[test]
fn audit_recovers_the_planted_verifiers() {
    let dir = tempfile::tempdir().unwrap();
    let bank = dir.path().join("bank.csv");
    std::fs::write(&bank, bank_csv(3000)).unwrap();
    let o =
        lucid(dir.path()).arg("audit").arg(&bank).args(["--format", "json", "--bootstrap", "300"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let eia = |name: &str| v["eia"].as_array().unwrap().iter().find(|e| e["verifier"] == name).unwrap().clone();
    let (t, e, n) = (eia("truthful"), eia("echo"), eia("noise"));
    assert_eq!((t["pass"].as_bool(), e["pass"].as_bool(), n["pass"].as_bool()), (Some(true), Some(false), Some(false)));
    assert!(t["corr_nu_b"].as_f64().unwrap().abs() < 0.3 && t["corr_v_u"].as_f64().unwrap() > 0.7, "{t}");
    assert!((e["corr_nu_b"].as_f64().unwrap() - 1.0).abs() < 1e-9, "an echo's errors are the grader's: {e}");
    assert!(e["failure"].as_str().unwrap().contains("echoes"), "{e}");
    assert!(
        n["corr_v_u"].as_f64().unwrap().abs() < 0.1 && n["failure"].as_str().unwrap().contains("barely tracks U"),
        "{n}"
    );
    let pay = |name: &str| v["payoff"].as_array().unwrap().iter().find(|p| p["verifier"] == name).unwrap().clone();
    let (pt, pe, po, pc) = (pay("truthful"), pay("echo"), pay("oracle"), pay("calibration"));
    assert!(pt["delta"].as_f64().unwrap() > 0.2 && pt["p_gt_0"].as_f64().unwrap() > 0.99, "{pt}");
    assert!(pt["lo"].as_f64().unwrap() < pt["delta"].as_f64().unwrap(), "{pt}");
    assert_eq!(pe["demoted"], 0, "an echo flags nothing the grader trusted: {pe}");
    assert!(po["delta"].as_f64().unwrap() >= pt["delta"].as_f64().unwrap(), "the oracle is the ceiling");
    assert_eq!(po["demoted_correct"], 0);
    assert!(pc["delta"].as_f64().unwrap().abs() < 1e-12, "label-blind calibration pays nothing: {pc}");
    // Proposition 2: the closed form predicts exactly the variance the best pull removes.
    for p in v["proposition2"].as_array().unwrap() {
        let (pr, me) = (p["removed_predicted"].as_f64().unwrap(), p["removed_measured"].as_f64().unwrap());
        assert!((pr - me).abs() < 1e-9, "{p}");
    }
    let echo2 = v["proposition2"].as_array().unwrap().iter().find(|p| p["verifier"] == "echo").unwrap();
    assert!(
        (echo2["beta"].as_f64().unwrap() - 1.0).abs() < 1e-9 && echo2["alpha_star"] == 0.0,
        "beta 1: no step helps"
    );
    // Filtering controls at the truthful verifier's budget: random prunes of as many trusted
    // memories demote correct ones and pay far less.
    let c = &v["controls"];
    assert_eq!(c["verifier"], "truthful");
    assert_eq!(c["budget"], pt["demoted"]);
    assert!(c["random_delta"].as_f64().unwrap() < pt["delta"].as_f64().unwrap() / 2.0, "{c}");
    assert!(c["random_correct_demoted"].as_f64().unwrap() > pt["demoted_correct"].as_f64().unwrap(), "{c}");
    let sweep = c["sweep"].as_array().unwrap();
    assert_eq!(sweep.len(), 4);
    assert!(
        (sweep[3][2].as_f64().unwrap() - pt["delta"].as_f64().unwrap()).abs() < 1e-12,
        "100 % of K is the verifier"
    );
    // Lemma 1: every label-blind map leaves Spearman, AUC and the top-10 gold rate exactly as they
    // were; the oracle is the ceiling.
    let cal = v["calibration"].as_array().unwrap();
    let identity = &cal[0];
    assert_eq!(identity["map"], "identity");
    for c in cal.iter().filter(|c| c["reads_u"] == false) {
        for k in ["spearman", "auc", "top10"] {
            assert_eq!(c[k], identity[k], "{} changes {k}", c["map"]);
        }
    }
    // With two score levels a gold fit can only relabel the levels, never split a tie by U.
    let iso = cal.iter().find(|c| c["map"] == "isotonic (gold-fit)").unwrap();
    assert_eq!((&iso["spearman"], &iso["auc"]), (&identity["spearman"], &identity["auc"]), "{iso}");
    let oracle = cal.iter().find(|c| c["map"] == "oracle").unwrap();
    assert_eq!((oracle["spearman"].as_f64(), oracle["auc"].as_f64()), (Some(1.0), Some(1.0)));
    // Leave-one-seed-out: the truthful verifier is selected on every pair of seeds and pays on the
    // third; verifiers that pass EIA elsewhere pay more than those that fail.
    let folds = v["leave_one_seed_out"].as_array().unwrap();
    assert_eq!(folds.len(), 3);
    for f in folds {
        assert_eq!(f["selected"], "truthful", "{f}");
        assert!(f["held_out_delta"].as_f64().unwrap() > 0.3 && f["pass_minus_fail"].as_f64().unwrap() > 0.3, "{f}");
    }
    // The text table says the same in words.
    let o = lucid(dir.path()).arg("audit").arg(&bank).args(["--bootstrap", "50"]).output().unwrap();
    assert!(
        stdout(&o).contains("truthful") && stdout(&o).contains("PASS") && stdout(&o).contains("FAIL: echoes"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn bad_banks_name_the_file_and_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("nor.csv", "u,v_a\n1,1\n", "no column 'r'"),
        ("text.csv", "r,u,v_a\n1,1,yes\n", "row 0: column 'v_a' has no number"),
        ("empty.csv", "r,u,v_a\n", "empty"),
        ("noverifier.csv", "r,u\n1,1\n", "no verifier"),
        ("bank.txt", "r,u\n", ".parquet, .csv or .jsonl"),
    ];
    for (file, text, want) in cases {
        let p = dir.path().join(file);
        std::fs::write(&p, text).unwrap();
        let o = lucid(dir.path()).arg("audit").arg(&p).output().unwrap();
        assert!(!o.status.success(), "{file}");
        assert!(stderr(&o).contains(want) && stderr(&o).contains(file), "{file}: {}", stderr(&o));
    }
}
