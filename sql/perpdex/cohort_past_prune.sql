-- Drops the on-demand labels computed from snapshot $1 (the least recently used one,
-- query/perpdex_cohorts_at.go keeps a few).
DELETE FROM perpdex_cohorts_past_mem WHERE computed_at = $1::TIMESTAMP;
