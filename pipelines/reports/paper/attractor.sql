-- Theorem 2 fed with the run's own measurements, per memory arm x seed: kappa and e0 (the
-- paper's single-slope fit, as in coupling.sql), leniency l and sensitivity s (graded episodes,
-- as in grader.sql) give the predicted corrupted fixed point p* and the one-shot value p0
-- (attractor_p_star, attractor_p0; q'(p*) < 1 means stable); beside them the observed
-- trusted-bank corruption (share of r = 1 memories that are wrong) at the end of the stream and
-- settled = its mean over the second half of the stream. Paper (BIRD): p* 0.45 (0.448 in closed
-- form), p0 0.28, observed 0.42.
WITH ev AS (
  SELECT e.arm, e.seed, e.step, e.r, e.retrieved, CAST(v.u AS DOUBLE) AS u
  FROM episodes e JOIN evaluation v ON v.arm = e.arm AND v.seed = e.seed AND v.step = e.step
  WHERE e.arm <> 'no-memory'
),
shown AS (SELECT arm, seed, step, unnest(retrieved) AS m FROM ev),
sets AS (
  SELECT s.arm, s.seed, s.step,
         avg(CASE WHEN get_field(s.m, 'shown_label') = 1 AND q.u = 0 THEN 1.0 ELSE 0.0 END) AS c_bad
  FROM shown s JOIN ev q ON q.arm = s.arm AND q.seed = s.seed AND q.step = get_field(s.m, 'step')
  GROUP BY s.arm, s.seed, s.step
),
fit AS (
  SELECT c.arm, c.seed, regr_slope(1.0 - q.u, c.c_bad) AS kappa, regr_intercept(1.0 - q.u, c.c_bad) AS e0
  FROM sets c JOIN ev q ON q.arm = c.arm AND q.seed = c.seed AND q.step = c.step
  GROUP BY c.arm, c.seed
),
grades AS (
  SELECT arm, seed,
         sum(CASE WHEN r = 1 AND u = 0 THEN 1.0 ELSE 0.0 END) / nullif(sum(CASE WHEN r IS NOT NULL AND u = 0 THEN 1.0 ELSE 0.0 END), 0) AS l,
         sum(CASE WHEN r = 1 AND u = 1 THEN 1.0 ELSE 0.0 END) / nullif(sum(CASE WHEN r IS NOT NULL AND u = 1 THEN 1.0 ELSE 0.0 END), 0) AS s
  FROM ev GROUP BY arm, seed
),
traj AS (
  SELECT arm, seed, step, count(*) OVER (PARTITION BY arm, seed) AS total,
         sum(CASE WHEN r = 1 AND u = 0 THEN 1.0 ELSE 0.0 END) OVER (PARTITION BY arm, seed ORDER BY step ROWS UNBOUNDED PRECEDING)
           / nullif(sum(CASE WHEN r = 1 THEN 1.0 ELSE 0.0 END) OVER (PARTITION BY arm, seed ORDER BY step ROWS UNBOUNDED PRECEDING), 0) AS corruption
  FROM ev
),
observed AS (
  SELECT arm, seed,
         avg(CASE WHEN 2 * (CAST(step AS BIGINT) + 1) > total THEN corruption END) AS settled,
         max(CASE WHEN CAST(step AS BIGINT) + 1 = total THEN corruption END) AS final
  FROM traj GROUP BY arm, seed
)
SELECT f.arm, f.seed,
       round(f.kappa, 4) AS kappa, round(g.l, 4) AS leniency, round(g.s, 4) AS sensitivity, round(f.e0, 4) AS e0,
       round(attractor_p_star(f.kappa, g.l, g.s, f.e0), 4) AS p_star,
       round(attractor_p0(f.kappa, g.l, g.s, f.e0), 4) AS p0,
       round(attractor_slope(f.kappa, g.l, g.s, f.e0), 4) AS slope,
       round(o.settled, 4) AS observed_settled,
       round(o.final, 4) AS observed_final
FROM fit f
JOIN grades g ON g.arm = f.arm AND g.seed = f.seed
JOIN observed o ON o.arm = f.arm AND o.seed = f.seed
ORDER BY CASE f.arm WHEN 'memento' THEN 0 WHEN 'lucid' THEN 1 ELSE 2 END, f.arm, f.seed
