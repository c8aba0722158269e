-- The answer-free detector against execution truth U, per channel of the run's domain (text-to-SQL:
-- execution, degeneracy, literal; factual QA: no_answer, unsupported, format; in the domain's
-- order) and 'any' = the arm's flag, per arm and pooled (arm 'all'):
--   precision rho = P(U=0 | flagged) with a 95 % Wilson interval, recall = P(flagged | U=0),
--   base_rate = P(U=0). A flag helps (Proposition 1) iff rho > rho* = h / (g + h); the paper
--   takes g = h, rho* = 0.5 (edit rho_star here for another cost ratio).
-- Paper (BIRD, pooled): rho = 0.90 [0.875, 0.920] over 649 flags, base rate about 0.46.
-- Reads the view episode_outcomes (views/episode_outcomes.sql).
WITH ch AS (
  SELECT arm, get_field(c, 'name') AS channel, ord, u, get_field(c, 'fired') AS f
  FROM (SELECT arm, u, unnest(channels) AS c, unnest(range(CAST(array_length(channels) AS BIGINT))) AS ord
        FROM episode_outcomes)
  UNION ALL
  SELECT arm, 'any' AS channel, CAST(1000 AS BIGINT) AS ord, u, flagged AS f FROM episode_outcomes
)
SELECT coalesce(arm, 'all') AS arm, channel, count(*) AS n,
       sum(CASE WHEN f THEN 1 ELSE 0 END) AS flags,
       round(sum(CASE WHEN f AND u = 0 THEN 1.0 ELSE 0.0 END) / nullif(sum(CASE WHEN f THEN 1.0 ELSE 0.0 END), 0), 4) AS precision,
       round(wilson_lo(sum(CASE WHEN f AND u = 0 THEN 1.0 ELSE 0.0 END), sum(CASE WHEN f THEN 1.0 ELSE 0.0 END)), 4) AS precision_lo,
       round(wilson_hi(sum(CASE WHEN f AND u = 0 THEN 1.0 ELSE 0.0 END), sum(CASE WHEN f THEN 1.0 ELSE 0.0 END)), 4) AS precision_hi,
       round(sum(CASE WHEN f AND u = 0 THEN 1.0 ELSE 0.0 END) / nullif(sum(CASE WHEN u = 0 THEN 1.0 ELSE 0.0 END), 0), 4) AS recall,
       round(wilson_lo(sum(CASE WHEN f AND u = 0 THEN 1.0 ELSE 0.0 END), sum(CASE WHEN u = 0 THEN 1.0 ELSE 0.0 END)), 4) AS recall_lo,
       round(wilson_hi(sum(CASE WHEN f AND u = 0 THEN 1.0 ELSE 0.0 END), sum(CASE WHEN u = 0 THEN 1.0 ELSE 0.0 END)), 4) AS recall_hi,
       round(avg(1.0 - u), 4) AS base_rate,
       0.5 AS rho_star
FROM ch
GROUP BY GROUPING SETS ((arm, channel, ord), (channel, ord))
ORDER BY arm_order(arm), arm, ord
