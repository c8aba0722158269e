-- The headline: one row per arm, seeds pooled. EX (%) with its 95 % Wilson interval; how many
-- self-grades parse (graded / episodes that ran a query); leniency l = P(r = 1 | U = 0) and
-- sensitivity s = P(r = 1 | U = 1) with Wilson intervals; the trusted memories the arm stored
-- (Q = 1) and the trusted-bank corruption at the end of the stream (share of them wrong); the
-- detector's precision (share of flagged episodes that are wrong) with its Wilson interval; and
-- kappa, the slope of error on retrieved corruption, with its bootstrap interval (memory arms).
-- Rerun: lucid query RUN pipelines/reports/paper/headline.sql
WITH e AS (SELECT * FROM episode_outcomes),
coupling AS (
  SELECT arm, regr_slope(err, c_bad) AS kappa, boot_slope_lo(err, c_bad) AS kappa_lo,
         boot_slope_hi(err, c_bad) AS kappa_hi
  FROM retrieved_sets GROUP BY arm
),
per_arm AS (
  SELECT arm, count(*) AS n,
         sum(u) AS correct,
         sum(CASE WHEN grade IN ('correct', 'incorrect') THEN 1.0 ELSE 0.0 END) AS graded,
         sum(CASE WHEN grade NOT IN ('skipped') THEN 1.0 ELSE 0.0 END) AS gradable,
         sum(CASE WHEN r = 1 AND u = 0 THEN 1.0 ELSE 0.0 END) AS lenient,
         sum(CASE WHEN r IS NOT NULL AND u = 0 THEN 1.0 ELSE 0.0 END) AS graded_wrong,
         sum(CASE WHEN r = 1 AND u = 1 THEN 1.0 ELSE 0.0 END) AS sensitive,
         sum(CASE WHEN r IS NOT NULL AND u = 1 THEN 1.0 ELSE 0.0 END) AS graded_right,
         sum(CASE WHEN stored_q = 1 THEN 1.0 ELSE 0.0 END) AS trusted,
         sum(CASE WHEN stored_q = 1 AND u = 0 THEN 1.0 ELSE 0.0 END) AS trusted_wrong,
         sum(CASE WHEN flagged THEN 1.0 ELSE 0.0 END) AS flags,
         sum(CASE WHEN flagged AND u = 0 THEN 1.0 ELSE 0.0 END) AS flags_wrong
  FROM e GROUP BY arm
)
SELECT p.arm, CAST(p.n AS BIGINT) AS episodes,
       round(100 * p.correct / p.n, 1) AS ex,
       round(100 * wilson_lo(p.correct, p.n), 1) AS ex_lo,
       round(100 * wilson_hi(p.correct, p.n), 1) AS ex_hi,
       round(p.graded / nullif(p.gradable, 0), 3) AS parsed,
       round(p.lenient / nullif(p.graded_wrong, 0), 3) AS leniency,
       round(wilson_lo(p.lenient, p.graded_wrong), 3) AS leniency_lo,
       round(wilson_hi(p.lenient, p.graded_wrong), 3) AS leniency_hi,
       round(p.sensitive / nullif(p.graded_right, 0), 3) AS sensitivity,
       round(wilson_lo(p.sensitive, p.graded_right), 3) AS sensitivity_lo,
       round(wilson_hi(p.sensitive, p.graded_right), 3) AS sensitivity_hi,
       CAST(p.trusted AS BIGINT) AS trusted,
       round(p.trusted_wrong / nullif(p.trusted, 0), 3) AS trusted_corruption,
       round(p.flags_wrong / nullif(p.flags, 0), 3) AS detector_precision,
       round(wilson_lo(p.flags_wrong, p.flags), 3) AS detector_lo,
       round(wilson_hi(p.flags_wrong, p.flags), 3) AS detector_hi,
       round(c.kappa, 3) AS kappa, round(c.kappa_lo, 3) AS kappa_lo, round(c.kappa_hi, 3) AS kappa_hi
FROM per_arm p LEFT JOIN coupling c ON c.arm = p.arm
ORDER BY arm_order(p.arm), p.arm
