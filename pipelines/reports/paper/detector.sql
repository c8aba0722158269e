-- The answer-free detector against execution truth U, per channel of the run's domain (text-to-SQL:
-- execution, degeneracy, literal; factual QA: no_answer, unsupported, format; in the domain's
-- order) and 'any' = the arm's flag, per arm (seeds pooled) and pooled over the memory arms (arm
-- 'all': every arm but no-memory, which retrieves nothing, and oracle, whose stored label is the
-- truth, so a flag there demotes nothing):
--   precision rho = P(U=0 | flagged), recall = P(flagged | U=0), base_rate = P(U=0), with 95 %
--   intervals that cluster on the question (cluster_wilson_lo/hi: the same question flagged under
--   two seeds or two arms is not two independent trials; with one seed, Wilson's interval).
--   A flag helps (Proposition 1) iff rho > rho* = h / (g + h); the paper takes g = h,
--   rho* = 0.5 (edit rho_star here for another cost ratio).
-- Paper (BIRD, pooled): rho = 0.90 [0.875, 0.920] over 649 flags, base rate about 0.46.
-- A channel that cannot speak to a task is absent from its episode's `channels` (math): its n
-- counts the episodes it spoke to. Reads the view episode_outcomes (views/episode_outcomes.sql).
WITH ch AS (
  SELECT arm, question_id, get_field(c, 'name') AS channel, ord, u, get_field(c, 'fired') AS f
  FROM (SELECT arm, question_id, u, unnest(channels) AS c, unnest(range(CAST(array_length(channels) AS BIGINT))) AS ord
        FROM episode_outcomes)
  UNION ALL
  SELECT arm, question_id, 'any' AS channel, CAST(1000 AS BIGINT) AS ord, u, flagged AS f FROM episode_outcomes
),
obs AS (
  SELECT arm, question_id, channel, ord, u, f,
         CASE WHEN f THEN 1.0 - u END AS flag_wrong,
         CASE WHEN u = 0 THEN CASE WHEN f THEN 1.0 ELSE 0.0 END END AS caught
  FROM (SELECT * FROM ch
        UNION ALL
        SELECT 'all' AS arm, question_id, channel, ord, u, f FROM ch WHERE arm NOT IN ('no-memory', 'oracle'))
)
SELECT arm, channel, count(*) AS n,
       sum(CASE WHEN f THEN 1 ELSE 0 END) AS flags,
       round(avg(flag_wrong), 4) AS precision,
       round(cluster_wilson_lo(flag_wrong, question_id), 4) AS precision_lo,
       round(cluster_wilson_hi(flag_wrong, question_id), 4) AS precision_hi,
       round(avg(caught), 4) AS recall,
       round(cluster_wilson_lo(caught, question_id), 4) AS recall_lo,
       round(cluster_wilson_hi(caught, question_id), 4) AS recall_hi,
       round(avg(1.0 - u), 4) AS base_rate,
       0.5 AS rho_star
FROM obs
GROUP BY arm, channel
ORDER BY arm_order(arm), arm, min(ord), channel
