-- View `retrieved_sets`: per episode of a memory arm that retrieved at least one memory, what the
-- planner was shown against the truth of those memories: c_bad = share shown trusted (Q = 1)
-- whose own episode was wrong (U = 0) -- the paper's retrieved-set corruption; c_good = share
-- shown trusted that were right; err = 1 - U of the episode itself; question_id, the cluster of
-- intervals pooled over seeds.
WITH u AS (SELECT arm, seed, step, CAST(u AS DOUBLE) AS u FROM evaluation WHERE arm <> 'no-memory'),
shown AS (
  SELECT e.arm, e.seed, e.step, e.question_id, v.difficulty, 1.0 - CAST(v.u AS DOUBLE) AS err, unnest(e.retrieved) AS m
  FROM evaluation v JOIN episodes e ON e.arm = v.arm AND e.seed = v.seed AND e.step = v.step
  WHERE e.arm <> 'no-memory'
)
SELECT s.arm, s.seed, s.step, s.difficulty, count(*) AS n_shown,
       avg(CASE WHEN get_field(s.m, 'shown_label') = 1 AND u.u = 0 THEN 1.0 ELSE 0.0 END) AS c_bad,
       avg(CASE WHEN get_field(s.m, 'shown_label') = 1 AND u.u = 1 THEN 1.0 ELSE 0.0 END) AS c_good,
       s.err, s.question_id
FROM u JOIN shown s ON u.arm = s.arm AND u.seed = s.seed AND u.step = get_field(s.m, 'step')
GROUP BY s.arm, s.seed, s.step, s.difficulty, s.err, s.question_id
