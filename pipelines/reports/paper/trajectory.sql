-- Trusted-bank corruption as the bank grows, per arm x seed, at about 50 points of the stream:
--   corruption_r = share of the memories the grader passed (r = 1) whose episode was wrong (U = 0)
--     -- the paper's observed trusted-bank corruption;
--   corruption_q = the same over stored label Q = 1 -- what each arm's planner is shown as trusted.
-- bank = memories stored so far. Paper (BIRD): about 0.42, rising then settling.
WITH ev AS (
  SELECT e.arm, e.seed, e.step, e.r, e.stored_q, CAST(v.u AS DOUBLE) AS u
  FROM episodes e JOIN evaluation v ON v.arm = e.arm AND v.seed = e.seed AND v.step = e.step
  WHERE e.arm <> 'no-memory'
),
cum AS (
  SELECT arm, seed, step,
         count(*) OVER (PARTITION BY arm, seed) AS total,
         sum(CASE WHEN r = 1 THEN 1.0 ELSE 0.0 END) OVER (PARTITION BY arm, seed ORDER BY step ROWS UNBOUNDED PRECEDING) AS trusted_r,
         sum(CASE WHEN r = 1 AND u = 0 THEN 1.0 ELSE 0.0 END) OVER (PARTITION BY arm, seed ORDER BY step ROWS UNBOUNDED PRECEDING) AS wrong_r,
         sum(CASE WHEN stored_q = 1 THEN 1.0 ELSE 0.0 END) OVER (PARTITION BY arm, seed ORDER BY step ROWS UNBOUNDED PRECEDING) AS trusted_q,
         sum(CASE WHEN stored_q = 1 AND u = 0 THEN 1.0 ELSE 0.0 END) OVER (PARTITION BY arm, seed ORDER BY step ROWS UNBOUNDED PRECEDING) AS wrong_q
  FROM ev
)
SELECT arm, seed, CAST(step AS BIGINT) + 1 AS bank,
       round(wrong_r / nullif(trusted_r, 0), 4) AS corruption_r,
       round(wrong_q / nullif(trusted_q, 0), 4) AS corruption_q
FROM cum
WHERE (CAST(step AS BIGINT) + 1) % greatest(1, total / 50) = 0 OR CAST(step AS BIGINT) + 1 = total
ORDER BY arm, seed, bank
