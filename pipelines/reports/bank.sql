-- The memory bank of one arm of an agent run, as `lucid audit RUN --arm ARM` reads it: every
-- episode of the arm with its self-grade r as the bank stores it (an unparseable, failed or
-- skipped grade is stored untrusted: r = 0); graded = whether the self-grade parsed (r is 0 or 1
-- in `episodes`), so the audit gives the grader's leniency and sensitivity over graded episodes,
-- as every report does, and the bank's over every stored label; the truth u from `evaluation`;
-- the answer-free channels by name (`lucid audit` turns each into a verifier v_<name> =
-- 1 - fired: a flag says the memory is wrong); the detector as a whole (v_detector); and n, how
-- many later episodes of the same arm and seed were shown it. `lucid query RUN
-- pipelines/reports/bank.sql` shows every arm's bank; the audit keeps the rows of its arm.
WITH reuse AS (
  SELECT arm, seed, get_field(m, 'step') AS step, count(*) AS n
  FROM (SELECT arm, seed, unnest(retrieved) AS m FROM episodes)
  GROUP BY arm, seed, get_field(m, 'step')
)
SELECT e.arm, CAST(e.seed AS BIGINT) AS seed, CAST(e.step AS BIGINT) AS id, e.question_id,
       CAST(COALESCE(e.r, 0) AS DOUBLE) AS r,
       e.r IS NOT NULL AS graded,
       CAST(v.u AS DOUBLE) AS u,
       e.channels,
       CASE WHEN e.flagged THEN 0.0 ELSE 1.0 END AS v_detector,
       CAST(COALESCE(x.n, 0) AS DOUBLE) AS n
FROM episodes e
JOIN evaluation v ON v.arm = e.arm AND v.seed = e.seed AND v.step = e.step
LEFT JOIN reuse x ON x.arm = e.arm AND x.seed = e.seed AND x.step = e.step
ORDER BY e.arm, seed, id
