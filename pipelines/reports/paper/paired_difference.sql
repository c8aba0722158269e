-- Paired EX differences a - b per seed, paired on question (the same task in the same seed), in
-- EX points: diff = mean of u_a - u_b; lo, hi = 95 % bootstrap interval (2,000 resamples of the
-- questions, seeded); p_gt_0 = share of resamples with a positive difference.
-- Paper (BIRD dev): LUCID - memento +1.9 [+0.2, +3.6] (seed 0), +3.9 [+2.1, +5.6] (seed 1).
WITH pairs(a, b) AS (VALUES ('lucid', 'memento'), ('memento', 'no-memory'), ('oracle', 'lucid')),
d AS (
  SELECT x.seed, p.a, p.b, CAST(x.u AS DOUBLE) - CAST(y.u AS DOUBLE) AS d
  FROM pairs p
  JOIN evaluation x ON x.arm = p.a
  JOIN evaluation y ON y.arm = p.b AND y.seed = x.seed AND y.question_id = x.question_id
)
SELECT seed, a, b, count(*) AS n,
       round(100 * avg(d), 2) AS diff,
       round(100 * boot_lo(d), 2) AS lo,
       round(100 * boot_hi(d), 2) AS hi,
       round(boot_p_gt_0(d), 4) AS p_gt_0
FROM d
GROUP BY seed, a, b
ORDER BY CASE a WHEN 'lucid' THEN 0 WHEN 'memento' THEN 1 ELSE 2 END, seed
