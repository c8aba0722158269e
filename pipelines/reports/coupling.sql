-- The coupling between retrieved corruption and agent error, per memory arm and seed.
-- Retrieved corruption of an episode = share of its retrieved memories shown as trusted (Q = 1)
-- whose own episode was wrong (U = 0). kappa = OLS slope of error (1 - U) on it; e0 = intercept
-- (error at clean retrieval). Paper (BIRD): kappa 0.38, e0 0.32.
WITH shown AS (
  SELECT arm, seed, step, unnest(retrieved) AS m FROM episodes WHERE arm <> 'no-memory'
), corruption AS (
  SELECT s.arm, s.seed, s.step,
         avg(CASE WHEN get_field(s.m, 'shown_label') = 1 AND v.u = 0 THEN 1.0 ELSE 0.0 END) AS corruption
  FROM shown s JOIN evaluation v ON v.arm = s.arm AND v.seed = s.seed AND v.step = get_field(s.m, 'step')
  GROUP BY s.arm, s.seed, s.step
)
SELECT c.arm, c.seed, count(*) AS n,
       round(avg(c.corruption), 3) AS mean_corruption,
       round(regr_slope(1.0 - v.u, c.corruption), 3) AS kappa,
       round(regr_intercept(1.0 - v.u, c.corruption), 3) AS e0
FROM corruption c JOIN evaluation v ON v.arm = c.arm AND v.seed = c.seed AND v.step = c.step
GROUP BY c.arm, c.seed
ORDER BY c.arm, c.seed
