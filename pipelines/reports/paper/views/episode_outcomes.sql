-- View `episode_outcomes`: every episode beside its execution truth (episodes joined with
-- evaluation), the columns the reports read. lucid defines it in every session over one run that
-- has both tables (`lucid query`, and `lucid report`, which computes it once). `channels` holds
-- every answer-free channel by name (unnest it to group by channel), in any domain.
SELECT e.arm, e.seed, e.step, e.question_id, v.difficulty, CAST(v.u AS DOUBLE) AS u,
       e.r, e.grade, e.stored_q, e.channels, e.flagged
FROM evaluation v JOIN episodes e ON e.arm = v.arm AND e.seed = v.seed AND e.step = v.step
