-- Coupling between retrieved corruption and agent error, memory arms, episodes with at least one
-- retrieved memory. Per episode: c_bad = share of its retrieved memories shown as trusted (Q=1)
-- whose own episode was wrong (U=0) -- the paper's retrieved-set corruption -- and c_good = share
-- shown as trusted that were right. err = 1 - U.
--   kappa, e0: the paper's fit, err = e0 + kappa c_bad (OLS), with 95 % bootstrap intervals
--     (2,000 resamples, seeded): per seed the episodes are resampled; pooled over seeds whole
--     questions are (cluster_slope_lo/hi, cluster_icept_lo/hi: a question's episodes under every
--     seed stay together, they are not independent trials). The fit also absorbs the help of
--     trusted-correct memories: its slope is kappa_two + gamma_two pg / (1 - pb) when c_good
--     moves with c_bad.
--   kappa_two, gamma_two, e0_two: the two-channel fit err = e0 + kappa c_bad - gamma c_good.
--   err_clean, err_full: observed error at c_bad = 0 and at c_bad = 1.
-- Per arm x seed x difficulty, per arm x seed (difficulty 'all'), and both pooled over seeds
-- (seed NULL). Reads the view retrieved_sets (views/retrieved_sets.sql).
-- Paper (BIRD): kappa 0.38 (simple 0.32, moderate 0.40, challenging 0.34), e0 0.32; error 0.32
-- at clean retrieval, 0.61 at fully corrupted.
SELECT arm, seed, coalesce(difficulty, 'all') AS difficulty, count(*) AS n,
       round(avg(c_bad), 4) AS mean_corruption,
       round(regr_slope(err, c_bad), 4) AS kappa,
       round(boot_slope_lo(err, c_bad), 4) AS kappa_lo,
       round(boot_slope_hi(err, c_bad), 4) AS kappa_hi,
       round(regr_intercept(err, c_bad), 4) AS e0,
       round(boot_icept_lo(err, c_bad), 4) AS e0_lo,
       round(boot_icept_hi(err, c_bad), 4) AS e0_hi,
       round(avg(CASE WHEN c_bad = 0 THEN err END), 4) AS err_clean,
       round(avg(CASE WHEN c_bad = 1 THEN err END), 4) AS err_full,
       round(ols2_b1(err, c_bad, c_good), 4) AS kappa_two,
       round(-ols2_b2(err, c_bad, c_good), 4) AS gamma_two,
       round(ols2_e0(err, c_bad, c_good), 4) AS e0_two
FROM retrieved_sets
GROUP BY GROUPING SETS ((arm, seed, difficulty), (arm, seed))
UNION ALL
SELECT arm, NULL AS seed, coalesce(difficulty, 'all') AS difficulty, count(*) AS n,
       round(avg(c_bad), 4) AS mean_corruption,
       round(regr_slope(err, c_bad), 4) AS kappa,
       round(cluster_slope_lo(err, c_bad, question_id), 4) AS kappa_lo,
       round(cluster_slope_hi(err, c_bad, question_id), 4) AS kappa_hi,
       round(regr_intercept(err, c_bad), 4) AS e0,
       round(cluster_icept_lo(err, c_bad, question_id), 4) AS e0_lo,
       round(cluster_icept_hi(err, c_bad, question_id), 4) AS e0_hi,
       round(avg(CASE WHEN c_bad = 0 THEN err END), 4) AS err_clean,
       round(avg(CASE WHEN c_bad = 1 THEN err END), 4) AS err_full,
       round(ols2_b1(err, c_bad, c_good), 4) AS kappa_two,
       round(-ols2_b2(err, c_bad, c_good), 4) AS gamma_two,
       round(ols2_e0(err, c_bad, c_good), 4) AS e0_two
FROM retrieved_sets
GROUP BY GROUPING SETS ((arm, difficulty), (arm))
ORDER BY arm, seed NULLS LAST,
         CASE difficulty WHEN 'all' THEN 0 WHEN 'simple' THEN 1 WHEN 'moderate' THEN 2 WHEN 'challenging' THEN 3 ELSE 4 END,
         difficulty
