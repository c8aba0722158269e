-- Trusted-bank corruption as the bank grows, per arm x seed, at about 50 points of the stream:
--   corruption_r = share of the memories the grader passed (r = 1) whose episode was wrong (U = 0)
--     -- the paper's observed trusted-bank corruption;
--   corruption_q = the same over stored label Q = 1 -- what each arm's planner is shown as trusted.
-- bank = memories stored so far. Reads the view trusted_bank (views/trusted_bank.sql).
-- Paper (BIRD): about 0.42, rising then settling.
SELECT arm, seed, bank, round(corruption_r, 4) AS corruption_r, round(corruption_q, 4) AS corruption_q
FROM trusted_bank
WHERE bank % greatest(1, total / 50) = 0 OR bank = total
ORDER BY arm, seed, bank
