-- Paired EX differences between every two (run, arm) cells of the runs given, per seed, paired on
-- the question (the same task in the same seed): n pairs, changed = questions whose U differs,
-- diff = mean of u_a - u_b in EX points, lo, hi = 95 % bootstrap interval (2,000 resamples of the
-- questions, seeded). Over several runs (the tables carry a `run` column):
--   lucid query runs/a runs/b pipelines/reports/compare_runs.sql
-- One run's arms against each other: paper/paired_difference.sql. `lucid view` shows these rows.
WITH cells AS (SELECT DISTINCT run, arm FROM evaluation),
pairs AS (
  SELECT a.run AS run_a, a.arm AS arm_a, b.run AS run_b, b.arm AS arm_b
  FROM cells a JOIN cells b ON a.run < b.run OR (a.run = b.run AND a.arm < b.arm)
),
d AS (
  SELECT p.run_a, p.arm_a, p.run_b, p.arm_b, x.seed, CAST(x.u AS DOUBLE) - CAST(y.u AS DOUBLE) AS d
  FROM pairs p
  JOIN evaluation x ON x.run = p.run_a AND x.arm = p.arm_a
  JOIN evaluation y ON y.run = p.run_b AND y.arm = p.arm_b AND y.seed = x.seed AND y.question_id = x.question_id
)
SELECT run_a, arm_a, run_b, arm_b, seed, count(*) AS n,
       sum(CASE WHEN d <> 0 THEN 1 ELSE 0 END) AS changed,
       round(100 * avg(d), 2) AS diff,
       round(100 * boot_lo(d), 2) AS lo,
       round(100 * boot_hi(d), 2) AS hi
FROM d
GROUP BY run_a, arm_a, run_b, arm_b, seed
ORDER BY run_a, arm_a, run_b, arm_b, seed
