-- Per arm and seed, the study at a glance: EX; leniency l = P(r=1 | U=0) and sensitivity
-- s = P(r=1 | U=1) over graded episodes (r is 0 or 1), with the episodes that were not graded
-- counted beside them (unparseable VERDICT, failed grader call, skipped: no query ran); detector
-- flags and precision rho = P(U=0 | flagged); the share of stored labels that are trusted;
-- trusted-bank corruption on the grader's label (trusted_wrong_r: share of r = 1 memories with
-- U = 0, the paper's 0.42) and on the stored label each arm's planner sees (trusted_wrong_q:
-- share of Q = 1 memories with U = 0); model calls and response-cache hits.
-- With intervals, per difficulty and the rest of the paper: pipelines/reports/paper/*.sql, or
-- `lucid report RUN`.
SELECT e.arm, e.seed, count(*) AS n,
       round(avg(v.u), 3) AS ex,
       round(sum(CASE WHEN v.u = 0 AND e.r = 1 THEN 1 ELSE 0 END) * 1.0 / nullif(sum(CASE WHEN v.u = 0 AND e.r IS NOT NULL THEN 1 ELSE 0 END), 0), 3) AS leniency,
       round(sum(CASE WHEN v.u = 1 AND e.r = 1 THEN 1 ELSE 0 END) * 1.0 / nullif(sum(CASE WHEN v.u = 1 AND e.r IS NOT NULL THEN 1 ELSE 0 END), 0), 3) AS sensitivity,
       sum(CASE WHEN e.grade = 'unparseable' THEN 1 ELSE 0 END) AS unparseable,
       sum(CASE WHEN e.grade IN ('failed', 'skipped') THEN 1 ELSE 0 END) AS not_graded,
       sum(CASE WHEN e.flagged THEN 1 ELSE 0 END) AS flagged,
       round(sum(CASE WHEN e.flagged AND v.u = 0 THEN 1 ELSE 0 END) * 1.0 / nullif(sum(CASE WHEN e.flagged THEN 1 ELSE 0 END), 0), 3) AS precision,
       round(avg(e.stored_q), 3) AS trusted_share,
       round(sum(CASE WHEN e.r = 1 AND v.u = 0 THEN 1 ELSE 0 END) * 1.0 / nullif(sum(CASE WHEN e.r = 1 THEN 1 ELSE 0 END), 0), 3) AS trusted_wrong_r,
       round(sum(CASE WHEN e.stored_q = 1 AND v.u = 0 THEN 1 ELSE 0 END) * 1.0 / nullif(sum(e.stored_q), 0), 3) AS trusted_wrong_q,
       sum(e.calls) AS calls,
       sum(e.cache_hits) AS cache_hits
FROM episodes e JOIN evaluation v ON e.seed = v.seed AND e.arm = v.arm AND e.step = v.step
GROUP BY e.arm, e.seed
ORDER BY arm_order(e.arm), e.arm, e.seed
