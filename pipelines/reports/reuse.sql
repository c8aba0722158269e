-- Reuse counts n_i: per memory of every memory arm (arm, seed, step), how many later episodes
-- of the same arm and seed were shown it, beside its self-grade r, stored label Q and truth U.
-- Under similarity retrieval n_i depends on the questions alone; under a score-ranked policy
-- (softmax, hybrid) it follows the stored label, which is the Echo Gap's second condition,
-- Cov(b, n | U = 0) > 0 (pipelines/reports/paper/echo_gap.sql, per arm: one arm per policy).
WITH reuse AS (
  SELECT arm, seed, get_field(m, 'step') AS step, count(*) AS n
  FROM (SELECT arm, seed, unnest(retrieved) AS m FROM episodes)
  GROUP BY arm, seed, get_field(m, 'step')
)
SELECT e.arm, e.seed, e.step, e.question_id, e.r, e.stored_q, CAST(v.u AS BIGINT) AS u,
       CAST(COALESCE(x.n, 0) AS BIGINT) AS n
FROM episodes e
JOIN evaluation v ON v.arm = e.arm AND v.seed = e.seed AND v.step = e.step
LEFT JOIN reuse x ON x.arm = e.arm AND x.seed = e.seed AND x.step = e.step
WHERE e.arm <> 'no-memory'
ORDER BY e.arm, e.seed, e.step
