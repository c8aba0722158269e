-- The self-grader against execution truth U, over graded episodes only (r is 0 or 1), as in every
-- report and in `lucid audit RUN`'s self-grade row: leniency l = P(r=1 | U=0), sensitivity
-- s = P(r=1 | U=1), with 95 % intervals. Episodes that were not graded are counted beside them:
-- unparseable (no valid VERDICT line), failed (the grader call failed), skipped (no query ran).
-- Per arm x seed (Wilson intervals), per arm pooled over seeds (seed NULL), and pooled over the
-- memory arms (arm 'all': every arm but no-memory, which retrieves nothing, and oracle, whose
-- stored label is the truth, not the grade). Pooled rows cluster on the question (one question
-- under two seeds or two arms is not two independent trials): cluster_wilson_lo/hi.
-- Paper (BIRD): l = 0.76, s = 0.90.
-- Reads the view episode_outcomes (views/episode_outcomes.sql).
WITH g AS (
  SELECT arm, seed, question_id, grade, r,
         CASE WHEN r IS NOT NULL AND u = 0 THEN CAST(r AS DOUBLE) END AS lenient,
         CASE WHEN r IS NOT NULL AND u = 1 THEN CAST(r AS DOUBLE) END AS sensitive
  FROM episode_outcomes
),
pooled AS (
  SELECT arm, question_id, grade, r, lenient, sensitive FROM g
  UNION ALL
  SELECT 'all' AS arm, question_id, grade, r, lenient, sensitive FROM g WHERE arm NOT IN ('no-memory', 'oracle')
)
SELECT arm, seed, count(*) AS n,
       sum(CASE WHEN r IS NOT NULL THEN 1 ELSE 0 END) AS graded,
       sum(CASE WHEN grade = 'unparseable' THEN 1 ELSE 0 END) AS unparseable,
       sum(CASE WHEN grade = 'failed' THEN 1 ELSE 0 END) AS failed,
       sum(CASE WHEN grade = 'skipped' THEN 1 ELSE 0 END) AS skipped,
       count(lenient) AS graded_wrong,
       round(avg(lenient), 4) AS leniency,
       round(wilson_lo(sum(lenient), count(lenient)), 4) AS leniency_lo,
       round(wilson_hi(sum(lenient), count(lenient)), 4) AS leniency_hi,
       count(sensitive) AS graded_right,
       round(avg(sensitive), 4) AS sensitivity,
       round(wilson_lo(sum(sensitive), count(sensitive)), 4) AS sensitivity_lo,
       round(wilson_hi(sum(sensitive), count(sensitive)), 4) AS sensitivity_hi
FROM g
GROUP BY arm, seed
UNION ALL
SELECT arm, NULL AS seed, count(*) AS n,
       sum(CASE WHEN r IS NOT NULL THEN 1 ELSE 0 END) AS graded,
       sum(CASE WHEN grade = 'unparseable' THEN 1 ELSE 0 END) AS unparseable,
       sum(CASE WHEN grade = 'failed' THEN 1 ELSE 0 END) AS failed,
       sum(CASE WHEN grade = 'skipped' THEN 1 ELSE 0 END) AS skipped,
       count(lenient) AS graded_wrong,
       round(avg(lenient), 4) AS leniency,
       round(cluster_wilson_lo(lenient, question_id), 4) AS leniency_lo,
       round(cluster_wilson_hi(lenient, question_id), 4) AS leniency_hi,
       count(sensitive) AS graded_right,
       round(avg(sensitive), 4) AS sensitivity,
       round(cluster_wilson_lo(sensitive, question_id), 4) AS sensitivity_lo,
       round(cluster_wilson_hi(sensitive, question_id), 4) AS sensitivity_hi
FROM pooled
GROUP BY arm
ORDER BY arm_order(arm), arm, seed NULLS LAST
