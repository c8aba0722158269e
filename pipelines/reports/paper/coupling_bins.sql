-- Observed error by retrieved corruption, the points behind the coupling plot: per memory arm
-- and difficulty ('all' too), pooled over seeds, episodes binned by c_bad to the nearest 0.25
-- (with k = 4 memories retrieved, c_bad takes exactly these values once the bank holds 4).
-- Reads the view retrieved_sets (views/retrieved_sets.sql).
WITH pts AS (SELECT arm, difficulty, round(c_bad * 4) / 4 AS corruption, err FROM retrieved_sets)
SELECT arm, coalesce(difficulty, 'all') AS difficulty, corruption, count(*) AS n, round(avg(err), 4) AS err
FROM pts
GROUP BY GROUPING SETS ((arm, difficulty, corruption), (arm, corruption))
ORDER BY arm, CASE coalesce(difficulty, 'all') WHEN 'all' THEN 0 WHEN 'simple' THEN 1 WHEN 'moderate' THEN 2 WHEN 'challenging' THEN 3 ELSE 4 END,
         coalesce(difficulty, 'all'), corruption
