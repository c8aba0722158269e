-- Observed error by retrieved corruption, the points behind the coupling plot: per memory arm
-- and difficulty ('all' too), pooled over seeds, episodes binned by c_bad to the nearest 0.25
-- (with k = 4 memories retrieved, c_bad takes exactly these values once the bank holds 4).
WITH u AS (SELECT arm, seed, step, CAST(u AS DOUBLE) AS u FROM evaluation),
shown AS (SELECT arm, seed, step, unnest(retrieved) AS m FROM episodes WHERE arm <> 'no-memory'),
sets AS (
  SELECT s.arm, s.seed, s.step,
         avg(CASE WHEN get_field(s.m, 'shown_label') = 1 AND u.u = 0 THEN 1.0 ELSE 0.0 END) AS c_bad
  FROM shown s JOIN u ON u.arm = s.arm AND u.seed = s.seed AND u.step = get_field(s.m, 'step')
  GROUP BY s.arm, s.seed, s.step
),
pts AS (
  SELECT c.arm, v.difficulty, round(c.c_bad * 4) / 4 AS corruption, 1.0 - CAST(v.u AS DOUBLE) AS err
  FROM sets c JOIN evaluation v ON v.arm = c.arm AND v.seed = c.seed AND v.step = c.step
)
SELECT arm, coalesce(difficulty, 'all') AS difficulty, corruption, count(*) AS n, round(avg(err), 4) AS err
FROM pts
GROUP BY GROUPING SETS ((arm, difficulty, corruption), (arm, corruption))
ORDER BY arm, CASE coalesce(difficulty, 'all') WHEN 'all' THEN 0 WHEN 'simple' THEN 1 WHEN 'moderate' THEN 2 WHEN 'challenging' THEN 3 ELSE 4 END, corruption
