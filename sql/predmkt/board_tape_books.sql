-- Tape index (book snapshots): the key and row number of every book snapshot of one
-- archive book_events file, in (token_id, ts, local_ts, seq) order, so /orderbook
-- finds the snapshot in memory and reads just that row. $1 the file's path.
SELECT token_id, ts, local_ts, seq, file_row_number
FROM read_parquet($1, file_row_number = true)
WHERE event_type = 'book'
ORDER BY token_id, ts, local_ts, seq;
