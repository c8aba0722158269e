-- Per arm and seed: EX, leniency l = P(r=1 | U=0), sensitivity s = P(r=1 | U=1), error rate e,
-- detector flags and precision rho = P(U=0 | flagged), share of stored labels trusted, and model
-- calls served by the response cache. Episodes with an unparseable or failed self-grade count
-- as r = 0 here; `unparseable` shows how many there were. trusted_wrong = observed trusted-bank
-- corruption (share of stored Q = 1 memories with U = 0; paper: 0.42).
SELECT e.arm, e.seed, count(*) AS n,
       round(avg(v.u), 3) AS ex,
       round(sum(CASE WHEN v.u = 0 AND e.r = 1 THEN 1 ELSE 0 END) * 1.0 / nullif(sum(CASE WHEN v.u = 0 THEN 1 ELSE 0 END), 0), 3) AS leniency,
       round(sum(CASE WHEN v.u = 1 AND e.r = 1 THEN 1 ELSE 0 END) * 1.0 / nullif(sum(v.u), 0), 3) AS sensitivity,
       sum(CASE WHEN e.r IS NULL THEN 1 ELSE 0 END) AS unparseable,
       sum(CASE WHEN e.flagged THEN 1 ELSE 0 END) AS flagged,
       round(sum(CASE WHEN e.flagged AND v.u = 0 THEN 1 ELSE 0 END) * 1.0 / nullif(sum(CASE WHEN e.flagged THEN 1 ELSE 0 END), 0), 3) AS precision,
       round(avg(e.stored_q), 3) AS trusted_share,
       round(sum(CASE WHEN e.stored_q = 1 AND v.u = 0 THEN 1 ELSE 0 END) * 1.0 / nullif(sum(e.stored_q), 0), 3) AS trusted_wrong,
       sum(e.calls) AS calls,
       sum(e.cache_hits) AS cache_hits
FROM episodes e JOIN evaluation v ON e.seed = v.seed AND e.arm = v.arm AND e.step = v.step
GROUP BY e.arm, e.seed
ORDER BY CASE e.arm WHEN 'no-memory' THEN 0 WHEN 'memento' THEN 1 WHEN 'lucid' THEN 2 ELSE 3 END, e.arm, e.seed
