-- The headline: one row per arm, seeds pooled. EX (%) with its 95 % interval; how many
-- self-grades parse (graded / episodes that ran a query); leniency l = P(r = 1 | U = 0) and
-- sensitivity s = P(r = 1 | U = 1) over graded episodes with their intervals; the trusted memories
-- the arm stored (Q = 1) and the trusted-bank corruption at the end of the stream (share of them
-- wrong); the detector's precision (share of flagged episodes that are wrong) with its interval;
-- and kappa, the slope of error on retrieved corruption, with its bootstrap interval (memory arms).
-- Seeds pooled, so every interval clusters on the question (the same question under two seeds is
-- not two independent trials): cluster_wilson_lo/hi for the shares (Wilson's interval with one
-- seed), cluster_slope_lo/hi for kappa (questions resampled, 2,000 resamples, seeded).
-- Rerun: lucid query RUN pipelines/reports/paper/headline.sql
WITH e AS (
  SELECT arm, question_id, u, grade, stored_q,
         CASE WHEN r IS NOT NULL AND u = 0 THEN CAST(r AS DOUBLE) END AS lenient,
         CASE WHEN r IS NOT NULL AND u = 1 THEN CAST(r AS DOUBLE) END AS sensitive,
         CASE WHEN flagged THEN 1.0 - u END AS flag_wrong
  FROM episode_outcomes
),
coupling AS (
  SELECT arm, regr_slope(err, c_bad) AS kappa, cluster_slope_lo(err, c_bad, question_id) AS kappa_lo,
         cluster_slope_hi(err, c_bad, question_id) AS kappa_hi
  FROM retrieved_sets GROUP BY arm
),
per_arm AS (
  SELECT arm, count(*) AS n,
         sum(u) AS correct,
         cluster_wilson_lo(u, question_id) AS ex_lo,
         cluster_wilson_hi(u, question_id) AS ex_hi,
         sum(CASE WHEN grade IN ('correct', 'incorrect') THEN 1.0 ELSE 0.0 END) AS graded,
         sum(CASE WHEN grade NOT IN ('skipped') THEN 1.0 ELSE 0.0 END) AS gradable,
         avg(lenient) AS leniency,
         cluster_wilson_lo(lenient, question_id) AS leniency_lo,
         cluster_wilson_hi(lenient, question_id) AS leniency_hi,
         avg(sensitive) AS sensitivity,
         cluster_wilson_lo(sensitive, question_id) AS sensitivity_lo,
         cluster_wilson_hi(sensitive, question_id) AS sensitivity_hi,
         sum(CASE WHEN stored_q = 1 THEN 1.0 ELSE 0.0 END) AS trusted,
         sum(CASE WHEN stored_q = 1 AND u = 0 THEN 1.0 ELSE 0.0 END) AS trusted_wrong,
         avg(flag_wrong) AS precision,
         cluster_wilson_lo(flag_wrong, question_id) AS precision_lo,
         cluster_wilson_hi(flag_wrong, question_id) AS precision_hi
  FROM e GROUP BY arm
)
SELECT p.arm, CAST(p.n AS BIGINT) AS episodes,
       round(100 * p.correct / p.n, 1) AS ex,
       round(100 * p.ex_lo, 1) AS ex_lo,
       round(100 * p.ex_hi, 1) AS ex_hi,
       round(p.graded / nullif(p.gradable, 0), 3) AS parsed,
       round(p.leniency, 3) AS leniency,
       round(p.leniency_lo, 3) AS leniency_lo,
       round(p.leniency_hi, 3) AS leniency_hi,
       round(p.sensitivity, 3) AS sensitivity,
       round(p.sensitivity_lo, 3) AS sensitivity_lo,
       round(p.sensitivity_hi, 3) AS sensitivity_hi,
       CAST(p.trusted AS BIGINT) AS trusted,
       round(p.trusted_wrong / nullif(p.trusted, 0), 3) AS trusted_corruption,
       round(p.precision, 3) AS detector_precision,
       round(p.precision_lo, 3) AS detector_lo,
       round(p.precision_hi, 3) AS detector_hi,
       round(c.kappa, 3) AS kappa, round(c.kappa_lo, 3) AS kappa_lo, round(c.kappa_hi, 3) AS kappa_hi
FROM per_arm p LEFT JOIN coupling c ON c.arm = p.arm
ORDER BY arm_order(p.arm), p.arm
