-- Theorem 1's retrieval channel measured on the loop (memory arms with a softmax policy; reads
-- `draws` and `evaluation`). Per step, the policy drew among its candidates with probability
-- proportional to exp(Q/T), Q the labels the run had stored. The measured wrong mass is how many
-- first draws (draw_order = 0; with k = 1 the only one) landed on a wrong memory (U = 0): counted
-- from the draws, not computed. The honest mass is the first draw's probability of a wrong memory
-- when every label is the truth (Q = U): W / (W + R e^{1/T}) per step, exact. measured_a = wrong
-- first draws / honest mass is the amplification the run showed;
-- exact_a uses the run's own draw probabilities instead of the draws (no sampling error): it is
-- the amplification. mean_b_bound is not a check of it: Theorem 1's A_ret(b, T, W, R) per step,
-- weighted by the honest mass, with b the MEAN stored label of the step's wrong candidates and
-- every right one taken at 1. By Jensen (e^{q/T} is convex: W e^{mean q / T} <= sum e^{q/T}), and
-- as a right memory stored below 1 draws less and leaves more to the wrong ones, it is a lower
-- bound of exact_a,
-- equal to it only where every wrong candidate of a step has one label and every right one is
-- stored at 1 (a grader that passes everything); with mixed labels it understates the mass.
-- Per arm x seed and pooled (seed NULL); `lucid theory amplification` gives A_ret for any W, R, b, T.
WITH c AS (
  SELECT d.arm, d.seed, d.step, d.temperature AS t, coalesce(d.draw_order = 0, false) AS drawn, d.p_first, CAST(d.label AS DOUBLE) AS q,
         CAST(v.u AS DOUBLE) AS u, exp((CAST(v.u AS DOUBLE) - 1.0) / d.temperature) AS w_honest
  FROM draws d
  JOIN evaluation v ON v.arm = d.arm AND v.seed = d.seed AND v.step = d.candidate_step
  WHERE d.policy = 'softmax'
),
s AS (
  SELECT arm, seed, step, max(t) AS t,
         sum(CASE WHEN drawn THEN 1.0 ELSE 0.0 END) AS draws,
         sum(CASE WHEN drawn AND u = 0 THEN 1.0 ELSE 0.0 END) AS wrong_draws,
         sum(CASE WHEN u = 0 THEN p_first ELSE 0.0 END) AS run_mass,
         sum((1.0 - u) * w_honest) / sum(w_honest) AS honest_mass,
         sum(1.0 - u) AS w, sum(u) AS r,
         avg(CASE WHEN u = 0 THEN q END) AS b
  FROM c
  GROUP BY arm, seed, step
),
f AS (
  SELECT arm, seed, t, draws, wrong_draws, run_mass, honest_mass,
         CASE WHEN w > 0 THEN a_ret(b, t, w, r) * honest_mass ELSE 0.0 END AS closed_mass
  FROM s
)
SELECT arm, seed, max(t) AS temperature, count(*) AS steps, CAST(sum(draws) AS BIGINT) AS draws,
       CAST(sum(wrong_draws) AS BIGINT) AS wrong_draws,
       round(sum(wrong_draws) / sum(draws), 4) AS wrong_share,
       round(sum(honest_mass) / count(*), 4) AS honest_share,
       round(sum(wrong_draws) / sum(draws) / (sum(honest_mass) / count(*)), 4) AS measured_a,
       round(sum(run_mass) / sum(honest_mass), 4) AS exact_a,
       round(sum(closed_mass) / sum(honest_mass), 4) AS mean_b_bound
FROM f
GROUP BY GROUPING SETS ((arm, seed), (arm))
ORDER BY arm, seed NULLS LAST
