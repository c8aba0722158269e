//! Table-driven rules of the agent: the self-grade parser (status line only), SQL extraction, the
//! detector's three channels on real bundled questions and SQL run in the sandbox, and the arms'
//! labelling (demotion) rule.

use std::path::PathBuf;

use lucid::domains::sql::detector::{Channel, DetectorConfig, Observed};
use lucid::domains::sql::extract::extract_sql;
use lucid::memory_loop::arms::{Mode, arm_spec, stored_q};
use lucid::memory_loop::parse::{Verdict, parse_verdict};
use lucid::sql::sandbox::{Limits, OpenOptions, Sandbox};

#[test]
fn verdict_comes_from_the_status_line_only() {
    use Verdict::*;
    let cases: &[(&str, Verdict)] = &[
        ("VERDICT: CORRECT", Correct),
        ("VERDICT: INCORRECT", Incorrect),
        ("verdict: correct", Correct),
        ("The query counts the right rows.\nVERDICT: CORRECT", Correct),
        ("VERDICT: CORRECT\nThe count matches the question.", Correct),
        ("**VERDICT: INCORRECT**", Incorrect),
        ("**Verdict:** Correct.", Correct),
        ("  VERDICT :  INCORRECT  ", Incorrect),
        ("VERDICT: NOT CORRECT", Unparseable),
        ("VERDICT: PARTIALLY CORRECT", Unparseable),
        ("VERDICT: CORRECT?", Unparseable),
        ("The answer is not correct.", Unparseable),
        ("This is correct.", Unparseable),
        ("The query is CORRECT", Unparseable),
        ("", Unparseable),
        ("VERDICT: CORRECT\nOn reflection the filter is wrong.\nVERDICT: INCORRECT", Incorrect),
        ("VERDICT: INCORRECT\nVERDICT: maybe", Unparseable),
        ("My verdict: correct", Unparseable),
        // The first word after `VERDICT:` decides, whatever follows it on the line.
        ("VERDICT: CORRECT. The query counts the rows the question asks for.", Correct),
        ("VERDICT: INCORRECT - wrong table", Incorrect),
        ("VERDICT: INCORRECT — it ignores the year filter.", Incorrect),
        ("VERDICT: Correct, because the count matches.", Correct),
        ("VERDICT: **CORRECT** (the filter is right)", Correct),
        ("VERDICT: `INCORRECT`: no rows", Incorrect),
        ("VERDICT: correct\n", Correct),
        ("VERDICT: CORRECT/INCORRECT", Unparseable),
        ("VERDICT: CORRECT or INCORRECT", Unparseable),
        ("VERDICT: CORRECT (or INCORRECT)", Unparseable),
        ("VERDICT: CORRECTLY ANSWERED", Unparseable),
        ("VERDICT: NOT CORRECT - it counts the wrong table", Unparseable),
        ("VERDICT: INCORRECT? maybe", Unparseable),
        ("VERDICT: CORRECT / INCORRECT", Unparseable),
        ("VERDICT: CORRECT ?", Unparseable),
    ];
    for (text, want) in cases {
        assert_eq!(parse_verdict(text), *want, "{text:?}");
    }
    assert_eq!(Verdict::Correct.r(), Some(1));
    assert_eq!(Verdict::Incorrect.r(), Some(0));
    assert_eq!(Verdict::Unparseable.r(), None);
}

#[test]
fn sql_is_taken_from_the_first_fence_or_the_first_select() {
    let cases: &[(&str, Option<&str>)] = &[
        ("```sql\nSELECT COUNT(*) FROM books\n```", Some("SELECT COUNT(*) FROM books")),
        ("```sqlite\nSELECT 1;\n```\nThis counts.", Some("SELECT 1")),
        ("Here it is:\n```\nSELECT name FROM t\n```", Some("SELECT name FROM t")),
        (
            "```sql\nSELECT title FROM books WHERE genre = 'Romance'",
            Some("SELECT title FROM books WHERE genre = 'Romance'"),
        ),
        ("The query is: SELECT a FROM b;", Some("SELECT a FROM b")),
        ("with x as (select 1) select * from x", Some("with x as (select 1) select * from x")),
        ("I cannot answer that.", None),
        ("```sql\n```", None),
        ("Selection of rows is not possible.", None),
        ("```\n\n```sql\nSELECT * FROM flights\n```", Some("SELECT * FROM flights")),
        ("```sql\nCREATE TABLE t (a INT)\n\nSELECT a FROM t\n```", Some("SELECT a FROM t")),
        ("```sql\nCREATE TABLE t (a INT)\n```", None),
        (
            "SELECT COUNT(*) FROM books WHERE genre = 'Romance'\n```\n\nExample\nTables: t(a)",
            Some("SELECT COUNT(*) FROM books WHERE genre = 'Romance'"),
        ),
        ("SELECT a FROM t\n\nThis returns every a.", Some("SELECT a FROM t")),
        // Quoted identifiers of every style end the query intact, fenced or not.
        ("```sql\nSELECT COUNT(*) FROM `countries`\n```", Some("SELECT COUNT(*) FROM `countries`")),
        ("SELECT COUNT(*) FROM `countries`", Some("SELECT COUNT(*) FROM `countries`")),
        ("SELECT COUNT(*) FROM `countries`;", Some("SELECT COUNT(*) FROM `countries`")),
        ("SELECT COUNT(*) FROM `countries`\n```", Some("SELECT COUNT(*) FROM `countries`")),
        ("```sql\nSELECT \"First Name\" FROM \"people\"\n```", Some("SELECT \"First Name\" FROM \"people\"")),
        ("```sql\nSELECT [Full Name] FROM [my table];\n```", Some("SELECT [Full Name] FROM [my table]")),
        ("SELECT a FROM t WHERE b = 'x;y' ;", Some("SELECT a FROM t WHERE b = 'x;y'")),
        ("SELECT a FROM t WHERE b = 'it''s'", Some("SELECT a FROM t WHERE b = 'it''s'")),
        ("```sql\nSELECT a FROM t WHERE b = '```'\n```", Some("SELECT a FROM t WHERE b = '```'")),
        ("```sql\nSELECT a FROM t WHERE b = 'x\n\ny'\n```", Some("SELECT a FROM t WHERE b = 'x\n\ny'")),
        ("```sql\nSELECT a -- the name\nFROM t -- done\n```", Some("SELECT a -- the name\nFROM t")),
        ("```sql\nSELECT a /* ; */ FROM t;;\n```", Some("SELECT a /* ; */ FROM t")),
        ("```sql\nSELECT a FROM t\n\nWHERE a > 1\n```", Some("SELECT a FROM t\n\nWHERE a > 1")),
        ("```sql\nSELECT a FROM t WHERE b = 'open\n```\nThat is all.", Some("SELECT a FROM t WHERE b = 'open")),
        ("```sql\nSELECT T1.`name` FROM `a b` AS T1```", Some("SELECT T1.`name` FROM `a b` AS T1")),
        ("```sql\n-- select the top 5 customers\nSELECT name FROM c LIMIT 5\n```", Some("SELECT name FROM c LIMIT 5")),
        ("```sql\nSELECT a FROM t WHERE n = 'O\n```\nNote: it's one query; ok", Some("SELECT a FROM t WHERE n = 'O")),
        ("Here's the query: SELECT a FROM t", Some("SELECT a FROM t")),
    ];
    for (text, want) in cases {
        assert_eq!(extract_sql(text).as_deref(), *want, "{text:?}");
    }
}

fn bundled_db(cache: &std::path::Path, db: &str) -> PathBuf {
    let b = lucid::datasets::bundled::load(&lucid::datasets::bundled::default_dir(), cache).unwrap();
    b.tasks.iter().find(|t| t.db_id == db).unwrap().db_path.clone()
}

#[test]
fn detector_channels_on_real_questions_and_sql() {
    let cache = tempfile::tempdir().unwrap();
    let db = bundled_db(cache.path(), "library");
    let sandbox = Sandbox::open(&db, &OpenOptions::default()).unwrap();
    let limits = Limits { run_twice: true, ..Limits::default() };
    let q = "How many books in the catalogue belong to the Romance genre?";
    // (sql, exec, degenerate, literal)
    let cases: &[(Option<&str>, bool, bool, bool)] = &[
        (Some("SELECT COUNT(*) FROM books WHERE genre = 'Romance'"), false, false, false),
        (Some("SELECT COUNT(*) FROM books WHERE genre = 'Science Fiction'"), false, false, true),
        (Some("SELECT title FROM books WHERE genre = 'Romance' AND 1 = 0"), false, true, false),
        (Some("SELECT NULL FROM books LIMIT 2"), false, true, false),
        (Some("SELECT COUNT(*) FROM no_such_table"), true, false, false),
        (Some("SELECT COUNT(*) FROM books; DROP TABLE books"), true, false, false),
        (Some("SELECT random() FROM books LIMIT 1"), true, false, false),
        (None, true, false, false),
    ];
    let det = DetectorConfig::default();
    for (sql, exec, degenerate, literal) in cases {
        let (status, n_rows, all_null) = match sql {
            Some(s) => {
                let e = sandbox.execute(s, &limits);
                let rows = e.outcome.rows().cloned();
                (e.outcome.status().as_str(), rows.as_ref().map(|r| r.n_rows), rows.is_some_and(|r| r.all_null))
            }
            None => ("error", None, false),
        };
        let f = det.detect(q, "", &Observed { sql: *sql, status, n_rows, all_null });
        assert_eq!((f.exec, f.degenerate, f.literal), (*exec, *degenerate, *literal), "{sql:?}");
        assert_eq!(f.flagged(&det.channels), *exec || *degenerate || *literal, "{sql:?}");
    }
    // Channel subsets and thresholds.
    let poetry = Observed {
        sql: Some("SELECT 1 FROM books WHERE genre = 'Poetry'"),
        status: "ok",
        n_rows: Some(0),
        all_null: false,
    };
    let f = det.detect(q, "", &poetry);
    assert!(f.degenerate && f.literal && !f.exec);
    assert!(!f.flagged(&[Channel::Execution]));
    assert!(f.flagged(&[Channel::Literal]));
    let lax = DetectorConfig { empty_rows: false, min_literal_chars: 7, ..DetectorConfig::default() };
    let f = lax.detect(q, "", &poetry);
    assert!(!f.degenerate && !f.literal, "{f:?}");
    // Evidence grounds a literal.
    let f = det.detect(
        "How many books are in the genre named in the hint?",
        "genre refers to 'Science Fiction'",
        &Observed {
            sql: Some("SELECT COUNT(*) FROM books WHERE genre = 'Science Fiction'"),
            status: "ok",
            n_rows: Some(1),
            all_null: false,
        },
    );
    assert!(!f.literal);
}

#[test]
fn stored_label_follows_the_arm_rule() {
    use Mode::*;
    // (mode, r, flagged, u, stored q)
    type Case = (Mode, Option<u8>, bool, Option<u8>, u8);
    let cases: &[Case] = &[
        (Memento, Some(1), false, None, 1),
        (Memento, Some(1), true, None, 1), // memento ignores the detector
        (Memento, Some(0), false, None, 0),
        (Memento, None, false, None, 0), // unparseable self-grade: untrusted
        (Lucid, Some(1), false, None, 1),
        (Lucid, Some(1), true, None, 0), // demotion
        (Lucid, Some(0), true, None, 0),
        (Lucid, Some(0), false, None, 0), // never promotes
        (Lucid, None, false, None, 0),
        (Oracle, Some(1), false, Some(0), 0),
        (Oracle, Some(0), true, Some(1), 1),
        (NoMemory, Some(1), true, None, 1),
    ];
    for (mode, r, flagged, u, want) in cases {
        assert_eq!(stored_q(*mode, *r, *flagged, *u), *want, "{mode:?} r={r:?} flagged={flagged} u={u:?}");
    }
    let none = Default::default();
    assert_eq!(arm_spec(&none, "lucid").unwrap().mode, Lucid);
    assert_eq!(arm_spec(&none, "no-memory").unwrap().mode, NoMemory);
    assert!(arm_spec(&none, "my-arm").is_none());
}

/// `lucid exec` shows the detector's channels by the detector's own rules (one implementation
/// per channel): for each query, its printed flags equal `DetectorConfig::default().detect` on
/// the same execution, including a query whose result is empty (degenerate) and one that fails.
#[test]
fn lucid_exec_shows_what_the_detector_records() {
    use crate::support::{DbRoot, PEOPLE, lucid, stderr, stdout};
    let root = DbRoot::new();
    let db = root.add("people", PEOPLE);
    let question = "Which people are in group a?";
    let cases = [
        "SELECT name FROM t WHERE grp = 'zzz'",
        "SELECT name FROM t WHERE name = 'ann'",
        "SELECT name FROM t WHERE grp = 'a'",
        "SELECT score FROM t WHERE id = 4",
        "SELECT nope FROM t",
    ];
    let sandbox = Sandbox::open(&db, &OpenOptions::default()).unwrap();
    let limits = Limits { run_twice: true, ..Limits::default() };
    let mut fired = 0;
    for sql in cases {
        let exec = sandbox.execute(sql, &limits);
        let detector = DetectorConfig::default();
        let f = detector.detect(question, "", &Observed::of(sql, &exec));
        let want = format!(
            "flag_exec: {}\nflag_degenerate: {}\nflag_literal: {}\nliterals: {}\nflagged: {}\n",
            f.exec,
            f.degenerate,
            f.literal,
            f.literals_json().unwrap_or_else(|| "[]".into()),
            f.flagged(&detector.channels)
        );
        fired += usize::from(f.exec) + usize::from(f.degenerate) + usize::from(f.literal);
        let o =
            lucid(root.path()).args(["exec", "--db"]).arg(&db).args(["--question", question, sql]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).ends_with(&want), "{sql}: lucid exec printed\n{}\nthe detector records\n{want}", stdout(&o));
    }
    assert!(fired >= 4, "the cases exercise every channel");
}
