-- Theorem 2 fed with the run's own measurements, per memory arm x seed: kappa and e0 (the
-- paper's single-slope fit, as in coupling.sql), leniency l and sensitivity s give the predicted
-- corrupted fixed point p* and the one-shot value p0 (attractor_p_star, attractor_p0; q'(p*) < 1
-- means stable); beside them the observed trusted-bank corruption at the end of the stream and
-- settled = its mean over the second half of the stream. Every input is of the one label the
-- planner is shown, the stored label Q, as kappa is (c_bad counts memories shown trusted):
-- l = P(Q = 1 | U = 0) and s = P(Q = 1 | U = 1) over graded episodes (as every report), and the
-- observed corruption is the share of Q = 1 memories that are wrong (trusted_bank.corruption_q).
-- For memento (Q = r) these are the grader's leniency and the paper's observed corruption; for
-- LUCID they are those of the label after the detector's demotions (not of r, which LUCID does
-- not show); for oracle (Q = U) l = 0.
-- Paper (BIRD): p* 0.45 (0.448 in closed form), p0 0.28, observed 0.42.
-- Reads the views retrieved_sets, episode_outcomes and trusted_bank (views/*.sql).
WITH fit AS (
  SELECT arm, seed, regr_slope(err, c_bad) AS kappa, regr_intercept(err, c_bad) AS e0
  FROM retrieved_sets GROUP BY arm, seed
),
grades AS (
  SELECT arm, seed,
         sum(CASE WHEN stored_q = 1 AND r IS NOT NULL AND u = 0 THEN 1.0 ELSE 0.0 END) / nullif(sum(CASE WHEN r IS NOT NULL AND u = 0 THEN 1.0 ELSE 0.0 END), 0) AS l,
         sum(CASE WHEN stored_q = 1 AND r IS NOT NULL AND u = 1 THEN 1.0 ELSE 0.0 END) / nullif(sum(CASE WHEN r IS NOT NULL AND u = 1 THEN 1.0 ELSE 0.0 END), 0) AS s
  FROM episode_outcomes WHERE arm <> 'no-memory' GROUP BY arm, seed
),
observed AS (
  SELECT arm, seed,
         avg(CASE WHEN 2 * bank > total THEN corruption_q END) AS settled,
         max(CASE WHEN bank = total THEN corruption_q END) AS final
  FROM trusted_bank GROUP BY arm, seed
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
