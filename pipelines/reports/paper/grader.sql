-- The self-grader against execution truth U, over graded episodes only (r is 0 or 1):
-- leniency l = P(r=1 | U=0), sensitivity s = P(r=1 | U=1), with 95 % Wilson intervals. Episodes
-- that were not graded are counted beside them: unparseable (no valid VERDICT line), failed (the
-- grader call failed), skipped (no query ran). Per arm x seed, per arm (seed NULL), and pooled
-- over every arm (arm 'all'). Paper (BIRD): l = 0.76, s = 0.90.
-- Reads the view episode_outcomes (views/episode_outcomes.sql).
SELECT coalesce(arm, 'all') AS arm, seed, count(*) AS n,
       sum(CASE WHEN r IS NOT NULL THEN 1 ELSE 0 END) AS graded,
       sum(CASE WHEN grade = 'unparseable' THEN 1 ELSE 0 END) AS unparseable,
       sum(CASE WHEN grade = 'failed' THEN 1 ELSE 0 END) AS failed,
       sum(CASE WHEN grade = 'skipped' THEN 1 ELSE 0 END) AS skipped,
       sum(CASE WHEN r IS NOT NULL AND u = 0 THEN 1 ELSE 0 END) AS graded_wrong,
       round(sum(CASE WHEN r = 1 AND u = 0 THEN 1.0 ELSE 0.0 END) / nullif(sum(CASE WHEN r IS NOT NULL AND u = 0 THEN 1.0 ELSE 0.0 END), 0), 4) AS leniency,
       round(wilson_lo(sum(CASE WHEN r = 1 AND u = 0 THEN 1.0 ELSE 0.0 END), sum(CASE WHEN r IS NOT NULL AND u = 0 THEN 1.0 ELSE 0.0 END)), 4) AS leniency_lo,
       round(wilson_hi(sum(CASE WHEN r = 1 AND u = 0 THEN 1.0 ELSE 0.0 END), sum(CASE WHEN r IS NOT NULL AND u = 0 THEN 1.0 ELSE 0.0 END)), 4) AS leniency_hi,
       sum(CASE WHEN r IS NOT NULL AND u = 1 THEN 1 ELSE 0 END) AS graded_right,
       round(sum(CASE WHEN r = 1 AND u = 1 THEN 1.0 ELSE 0.0 END) / nullif(sum(CASE WHEN r IS NOT NULL AND u = 1 THEN 1.0 ELSE 0.0 END), 0), 4) AS sensitivity,
       round(wilson_lo(sum(CASE WHEN r = 1 AND u = 1 THEN 1.0 ELSE 0.0 END), sum(CASE WHEN r IS NOT NULL AND u = 1 THEN 1.0 ELSE 0.0 END)), 4) AS sensitivity_lo,
       round(wilson_hi(sum(CASE WHEN r = 1 AND u = 1 THEN 1.0 ELSE 0.0 END), sum(CASE WHEN r IS NOT NULL AND u = 1 THEN 1.0 ELSE 0.0 END)), 4) AS sensitivity_hi
FROM episode_outcomes
GROUP BY GROUPING SETS ((arm, seed), (arm), ())
ORDER BY arm_order(arm), arm, seed NULLS LAST
