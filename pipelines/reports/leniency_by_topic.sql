-- Self-grade leniency and sensitivity per arm and topic (factual QA: the paper stresses that
-- leniency differs across kinds of question): l = P(r = 1 | U = 0), s = P(r = 1 | U = 1), with
-- the group column of the run's episodes (factual: topic). Rerun by hand:
--   lucid query runs/factual pipelines/reports/leniency_by_topic.sql
SELECT e.arm, e.topic, count(*) AS n,
       round(avg(CAST(v.u AS DOUBLE)), 4) AS accuracy,
       sum(CASE WHEN v.u = 0 THEN 1 ELSE 0 END) AS wrong,
       round(avg(CASE WHEN v.u = 0 THEN CAST(COALESCE(e.r, 0) AS DOUBLE) END), 4) AS leniency,
       round(avg(CASE WHEN v.u = 1 THEN CAST(COALESCE(e.r, 0) AS DOUBLE) END), 4) AS sensitivity,
       round(avg(CASE WHEN v.gold_in_evidence IS NOT NULL THEN CAST(v.gold_in_evidence AS DOUBLE) END), 4) AS evidence_agrees
FROM episodes e JOIN evaluation v ON v.arm = e.arm AND v.seed = e.seed AND v.step = e.step
GROUP BY e.arm, e.topic
ORDER BY arm_order(e.arm), e.arm, e.topic
