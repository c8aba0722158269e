-- Execution accuracy (EX, percent) per seed, arm and difficulty, with a 'total' row per seed x arm.
-- Rerun by hand: lucid query runs/<name> pipelines/reports/ex.sql
SELECT seed, arm, difficulty, count(*) AS n, round(100.0 * avg(u), 2) AS ex
FROM evaluation
GROUP BY seed, arm, difficulty
UNION ALL
SELECT seed, arm, 'total' AS difficulty, count(*) AS n, round(100.0 * avg(u), 2) AS ex
FROM evaluation
GROUP BY seed, arm
ORDER BY seed, arm, difficulty
