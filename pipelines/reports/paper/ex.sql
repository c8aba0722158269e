-- EX (BIRD execution accuracy, %) per arm x seed x difficulty, per arm x seed (difficulty 'all'),
-- and pooled over seeds (seed NULL), with 95 % Wilson score intervals (lo, hi, in EX points).
-- Paper (BIRD dev): no-memory 52.4, memento 53.8 / 54.2, LUCID 55.7 / 58.1 (seeds 0 / 1).
-- Rerun: lucid query RUN pipelines/reports/paper/ex.sql
SELECT arm, seed, coalesce(difficulty, 'all') AS difficulty,
       count(*) AS n,
       CAST(sum(u) AS BIGINT) AS correct,
       round(100 * avg(u), 2) AS ex,
       round(100 * wilson_lo(sum(u), count(*)), 2) AS lo,
       round(100 * wilson_hi(sum(u), count(*)), 2) AS hi
FROM (SELECT arm, seed, difficulty, CAST(u AS DOUBLE) AS u FROM evaluation)
GROUP BY GROUPING SETS ((arm, seed, difficulty), (arm, seed), (arm, difficulty), (arm))
ORDER BY arm_order(arm), arm,
         seed NULLS LAST,
         CASE coalesce(difficulty, 'all') WHEN 'all' THEN 0 WHEN 'simple' THEN 1 WHEN 'moderate' THEN 2 WHEN 'challenging' THEN 3 ELSE 4 END
