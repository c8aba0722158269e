-- The Echo Gap conditions over wrong memories (U = 0) that were graded, memory arms: bias
-- b = r - U (so b = r here), reuse n = how many later episodes of the arm and seed retrieved the
-- memory (reads the view episode_outcomes). The gap opens when E[b | U=0] > 0 and Cov(b, n | U=0) > 0 (wrong memories the grader
-- passed are retrieved more). Per arm x seed and pooled over seeds (seed NULL).
WITH reuse AS (
  SELECT arm, seed, get_field(m, 'step') AS step, count(*) AS n
  FROM (SELECT arm, seed, unnest(retrieved) AS m FROM episodes)
  GROUP BY arm, seed, get_field(m, 'step')
),
w AS (
  SELECT e.arm, e.seed, CAST(e.r AS DOUBLE) - e.u AS b, CAST(coalesce(reuse.n, 0) AS DOUBLE) AS n
  FROM episode_outcomes e
  LEFT JOIN reuse ON reuse.arm = e.arm AND reuse.seed = e.seed AND reuse.step = e.step
  WHERE e.u = 0 AND e.r IS NOT NULL AND e.arm <> 'no-memory'
)
SELECT arm, seed, count(*) AS n_wrong,
       round(avg(b), 4) AS mean_b,
       round(avg(n), 4) AS mean_reuse,
       round(covar_pop(b, n), 4) AS cov_b_n,
       round(corr(b, n), 4) AS corr_b_n,
       avg(b) > 0 AND covar_pop(b, n) > 0 AS gap
FROM w
GROUP BY GROUPING SETS ((arm, seed), (arm))
ORDER BY arm, seed NULLS LAST
