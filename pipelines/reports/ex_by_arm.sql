-- Execution accuracy (EX, percent) per arm and seed. The oracle arm is a ceiling (it reads gold).
-- Rerun by hand: lucid query runs/<name> pipelines/reports/ex_by_arm.sql
SELECT arm, seed, count(*) AS n, round(100.0 * avg(u), 2) AS ex
FROM evaluation
GROUP BY arm, seed
ORDER BY arm_order(arm), arm, seed
