-- PredmktOrderbook (indexed): one row of one archive book_events file by its row
-- number, with its key so the caller can check the row is the snapshot it indexed.
-- $1 the file's path, $2 file_row_number.
SELECT token_id, event_type, ts, local_ts, seq, bids, asks
FROM read_parquet($1, file_row_number = true)
WHERE file_row_number = $2;
