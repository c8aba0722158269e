-- Self-grade leniency and sensitivity per arm and topic (factual QA: the paper stresses that
-- leniency differs across kinds of question): l = P(r = 1 | U = 0), s = P(r = 1 | U = 1) over
-- graded episodes (r is 0 or 1), as in every report and in `lucid audit`'s self-grade row, with
-- ungraded = the episodes whose grade did not parse (unparseable, failed, skipped: stored
-- untrusted) counted beside them; accuracy and wrong count every episode. Seeds pooled; the group
-- column of the run's episodes (factual: topic). Rerun by hand:
--   lucid query runs/factual pipelines/reports/leniency_by_topic.sql
SELECT e.arm, e.topic, count(*) AS n,
       round(avg(CAST(v.u AS DOUBLE)), 4) AS accuracy,
       sum(CASE WHEN v.u = 0 THEN 1 ELSE 0 END) AS wrong,
       sum(CASE WHEN e.r IS NULL THEN 1 ELSE 0 END) AS ungraded,
       round(avg(CASE WHEN v.u = 0 THEN CAST(e.r AS DOUBLE) END), 4) AS leniency,
       round(avg(CASE WHEN v.u = 1 THEN CAST(e.r AS DOUBLE) END), 4) AS sensitivity,
       round(avg(CASE WHEN v.gold_in_evidence IS NOT NULL THEN CAST(v.gold_in_evidence AS DOUBLE) END), 4) AS evidence_agrees
FROM episodes e JOIN evaluation v ON v.arm = e.arm AND v.seed = e.seed AND v.step = e.step
GROUP BY e.arm, e.topic
ORDER BY arm_order(e.arm), e.arm, e.topic
