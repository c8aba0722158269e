-- How often the LLM gold judge (evaluate's `judge:` option, factual QA) agrees with the
-- normalised match that defines u, per arm and pooled: the share of episodes where judge_u = u,
-- and the four cells. Rerun by hand: lucid query runs/<name> pipelines/reports/gold_judge.sql
SELECT coalesce(arm, 'all') AS arm, count(*) AS n,
       round(avg(CASE WHEN judge_u = u THEN 1.0 ELSE 0.0 END), 4) AS agreement,
       sum(CASE WHEN u = 1 AND judge_u = 1 THEN 1 ELSE 0 END) AS both_correct,
       sum(CASE WHEN u = 1 AND judge_u = 0 THEN 1 ELSE 0 END) AS match_only,
       sum(CASE WHEN u = 0 AND judge_u = 1 THEN 1 ELSE 0 END) AS judge_only,
       sum(CASE WHEN u = 0 AND judge_u = 0 THEN 1 ELSE 0 END) AS both_wrong,
       sum(CASE WHEN judge = 'not_attempted' THEN 1 ELSE 0 END) AS not_attempted
FROM evaluation
WHERE judge_u IS NOT NULL
GROUP BY GROUPING SETS ((arm), ())
ORDER BY arm_order(arm)
