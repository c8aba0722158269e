-- Harm per memory: for every memory (arm, seed, step) of a memory arm, the later episodes of its
-- arm and seed that were shown it (shown_later), how many of those went wrong (later_wrong,
-- U = 0), and of those how many tasks the no-memory arm got right in the same seed (harm: the
-- memory's counterfactual harm — wrong with it where the arm without memories was right).
-- Inflated memories only (stored as trusted, stored_q = 1, but wrong, U = 0), most harmful
-- first; ties in the viewer's table order (arm, seed, step). The same columns, and this order,
-- are `lucid view`'s preset "inflated memories by harm" (src/view/data/later.rs).
WITH shown AS (
  SELECT arm, seed, step AS later, question_id, get_field(m, 'step') AS memory
  FROM (SELECT arm, seed, step, question_id, unnest(retrieved) AS m FROM episodes)
  WHERE get_field(m, 'step') < step
),
without AS (
  SELECT e.seed, e.question_id, max(CAST(v.u AS BIGINT)) AS u
  FROM episodes e JOIN evaluation v ON v.arm = e.arm AND v.seed = e.seed AND v.step = e.step
  WHERE e.arm = 'no-memory'
  GROUP BY e.seed, e.question_id
),
life AS (
  SELECT s.arm, s.seed, s.memory AS step, count(*) AS shown_later,
         sum(CASE WHEN v.u = 0 THEN 1 ELSE 0 END) AS later_wrong,
         sum(CASE WHEN v.u = 0 AND w.u = 1 THEN 1 ELSE 0 END) AS harm
  FROM shown s
  JOIN evaluation v ON v.arm = s.arm AND v.seed = s.seed AND v.step = s.later
  LEFT JOIN without w ON w.seed = s.seed AND w.question_id = s.question_id
  GROUP BY s.arm, s.seed, s.memory
)
SELECT e.arm, e.seed, e.step, e.question_id, e.r, e.stored_q, CAST(v.u AS BIGINT) AS u,
       CAST(COALESCE(l.shown_later, 0) AS BIGINT) AS shown_later,
       CAST(COALESCE(l.later_wrong, 0) AS BIGINT) AS later_wrong,
       CAST(COALESCE(l.harm, 0) AS BIGINT) AS harm
FROM episodes e
JOIN evaluation v ON v.arm = e.arm AND v.seed = e.seed AND v.step = e.step
LEFT JOIN life l ON l.arm = e.arm AND l.seed = e.seed AND l.step = e.step
WHERE e.arm <> 'no-memory' AND e.stored_q = 1 AND v.u = 0
ORDER BY harm DESC, e.arm, e.seed, e.step
