-- EX (BIRD execution accuracy, %) per arm x seed x difficulty, per arm x seed (difficulty 'all'),
-- and pooled over seeds (seed NULL), with 95 % intervals (lo, hi, in EX points). Per seed every
-- question is asked once: Wilson score intervals. Pooled over seeds the same question asked under
-- two seeds is one cluster, not two independent trials (the no-memory arm answers it identically
-- under every seed): cluster_wilson_lo/hi, Wilson at the effective sample size n / deff with deff
-- the design effect of clustering on question_id (1 when every seed answers independently, the
-- number of seeds when they all agree).
-- Paper (BIRD dev): no-memory 52.4, memento 53.8 / 54.2, LUCID 55.7 / 58.1 (seeds 0 / 1).
-- Rerun: lucid query RUN pipelines/reports/paper/ex.sql
WITH ev AS (SELECT arm, seed, difficulty, question_id, CAST(u AS DOUBLE) AS u FROM evaluation)
SELECT arm, seed, coalesce(difficulty, 'all') AS difficulty,
       count(*) AS n,
       CAST(sum(u) AS BIGINT) AS correct,
       round(100 * avg(u), 2) AS ex,
       round(100 * wilson_lo(sum(u), count(*)), 2) AS lo,
       round(100 * wilson_hi(sum(u), count(*)), 2) AS hi
FROM ev
GROUP BY GROUPING SETS ((arm, seed, difficulty), (arm, seed))
UNION ALL
SELECT arm, NULL AS seed, coalesce(difficulty, 'all') AS difficulty,
       count(*) AS n,
       CAST(sum(u) AS BIGINT) AS correct,
       round(100 * avg(u), 2) AS ex,
       round(100 * cluster_wilson_lo(u, question_id), 2) AS lo,
       round(100 * cluster_wilson_hi(u, question_id), 2) AS hi
FROM ev
GROUP BY GROUPING SETS ((arm, difficulty), (arm))
ORDER BY arm_order(arm), arm,
         seed NULLS LAST,
         CASE difficulty WHEN 'all' THEN 0 WHEN 'simple' THEN 1 WHEN 'moderate' THEN 2 WHEN 'challenging' THEN 3 ELSE 4 END,
         difficulty
