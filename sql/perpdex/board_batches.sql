-- PerpdexBoardBatches: the position batches a window's uPnL delta compares
-- (sql/perpdex/board.sql $6, $7): the newest snapshot at or before the window start ($1)
-- and at or before the board hour ($2), over every wallet; NULL when there is none.
SELECT (SELECT max(snapshot_ts) FROM perpdex_positions WHERE snapshot_ts <= $1::TIMESTAMP) AS b_start,
       (SELECT max(snapshot_ts) FROM perpdex_positions WHERE snapshot_ts <= $2::TIMESTAMP) AS b_end;
