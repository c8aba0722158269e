-- View `trusted_bank`: per memory arm, seed and step, the bank as it stands after the step:
-- bank = memories stored, total = the stream's length, corruption_r = share of r = 1 memories
-- that are wrong (the paper's observed trusted-bank corruption), corruption_q = share of stored
-- Q = 1 memories that are wrong (what the arm's planner is shown as trusted).
WITH ev AS (
  SELECT e.arm, e.seed, e.step, e.r, e.stored_q, CAST(v.u AS DOUBLE) AS u
  FROM evaluation v JOIN episodes e ON e.arm = v.arm AND e.seed = v.seed AND e.step = v.step
  WHERE e.arm <> 'no-memory'
)
SELECT arm, seed, step, CAST(step AS BIGINT) + 1 AS bank,
       count(*) OVER (PARTITION BY arm, seed) AS total,
       sum(CASE WHEN r = 1 AND u = 0 THEN 1.0 ELSE 0.0 END) OVER (PARTITION BY arm, seed ORDER BY step ROWS UNBOUNDED PRECEDING)
         / nullif(sum(CASE WHEN r = 1 THEN 1.0 ELSE 0.0 END) OVER (PARTITION BY arm, seed ORDER BY step ROWS UNBOUNDED PRECEDING), 0) AS corruption_r,
       sum(CASE WHEN stored_q = 1 AND u = 0 THEN 1.0 ELSE 0.0 END) OVER (PARTITION BY arm, seed ORDER BY step ROWS UNBOUNDED PRECEDING)
         / nullif(sum(CASE WHEN stored_q = 1 THEN 1.0 ELSE 0.0 END) OVER (PARTITION BY arm, seed ORDER BY step ROWS UNBOUNDED PRECEDING), 0) AS corruption_q
FROM ev
